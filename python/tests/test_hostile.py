"""Hostile arguments: whatever a caller passes, an exception the API documents comes back
(InputError, NotPrivate, Inconclusive, SolverError from a solver, TypeError or
OverflowError from PyO3's conversions), never a crash and never an "internal error" (a
panic caught at the boundary). A builder never raises NotPrivate: it found two producer
bugs (exponential at ε = 1000, extreme weights at ε = 10⁻⁹; tests/suite/mechanisms.rs)."""


import metricdp as md
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

EXPECTED = (md.InputError, md.NotPrivate, md.Inconclusive, TypeError, OverflowError)

numbers = st.one_of(
    st.integers(-10**30, 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.fractions(max_denominator=10**12),
    st.sampled_from(["0", "-1", "1/0", "1e999999", "abc", "", "1e-400", "  2 ", "3/4"]),
)
small = st.integers(-3, 12)


def call(f, *a, expected=EXPECTED, **kw):
    try:
        f(*a, **kw)
    except md.SolverError as e:
        assert "internal error" not in str(e), e
    except expected:
        pass


SET = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SPACE = md.space(np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 1.0]]), labels=["a", "b", "c", "d"])


@SET
@given(st.sampled_from(["exponential", "optimal", "pmo", "spanner", "constopt", "tem", "benders"]), numbers,
       st.fixed_dictionaries({}, optional={"k": small, "r": small, "beta": st.floats(), "gamma": numbers,
                                           "within": numbers, "prior": st.lists(numbers, max_size=5),
                                           "weights": st.lists(numbers, max_size=5), "gap": st.floats(),
                                           "partitions": small, "max_iter": small,
                                           "lambdas": st.lists(st.floats(), max_size=3)}))
def test_builders(family, eps, kw):
    f = getattr(md, family)
    allowed = f.__code__.co_varnames[: f.__code__.co_argcount + f.__code__.co_kwonlyargcount]
    kw = {k: v for k, v in kw.items() if k in allowed}
    if family == "benders" and "within" not in kw:
        kw["within"] = 2
    # A builder refuses bad parameters; it never builds a mechanism that fails its own
    # audit (NotPrivate from a builder would be a producer bug).
    call(f, SPACE, eps, progress=False, expected=(md.InputError, TypeError, OverflowError), **kw)


@SET
@given(st.lists(st.lists(st.floats(width=64), min_size=1, max_size=5), min_size=1, max_size=5), numbers,
       st.booleans())
def test_audit_import_repair(rows, eps, eim):
    width = max(len(r) for r in rows)
    m = np.array([r + [0.0] * (width - len(r)) for r in rows])
    for f in (md.audit, md.import_matrix, md.repair):
        call(f, m, SPACE, eps, eps_in_metric=eim)


@SET
@given(st.lists(st.one_of(small, st.sampled_from(["a", "z", ""])), max_size=6), st.integers(-5, 2**70))
def test_privatize(records, seed):
    mech = md.exponential(SPACE, 1, progress=False)
    call(md.privatize, mech, records, seed=seed)


@SET
@given(st.integers(-5, 2**66), numbers, numbers, st.one_of(st.none(), st.integers(-5, 2**66)),
       st.one_of(st.none(), numbers))
def test_accountant(items, a, delta, users, distance):
    call(md.shuffle_account, items, a, delta, users=users, distance=distance)
    call(md.shuffle_inverse, items, a, delta, users=users)


@SET
@given(st.lists(st.lists(st.one_of(small, st.sampled_from(["a", "zz"])), max_size=4), max_size=4), numbers,
       st.sampled_from(["average", "distance:a", "region:a:1:1", "similarity:1,2", "x:", "distance:99"]),
       st.sampled_from(["local", "central", "both"]))
def test_releases(users, alpha, query, model):
    call(md.release_linear, SPACE, users, alpha, query=query, model=model, seed=1)
    call(md.emd, SPACE, [u for us in users for u in us][:3], ["a"])
    mech = md.exponential(SPACE, 1, progress=False)
    call(md.release_item_wise, mech, users, delta=alpha, model=model, seed=1)
    call(md.release_freq, users, clusters=2, size=2, r=alpha, alpha=alpha, model=model, seed=1)


@SET
@given(st.lists(st.lists(st.floats(width=64), min_size=2, max_size=2), min_size=1, max_size=5),
       st.sampled_from(["euclidean", "haversine", "manhattan", "chebyshev", "explicit", ""]),
       st.one_of(st.none(), numbers))
def test_spaces(points, metric, radius):
    call(md.space, np.array(points), metric, radius=radius)
    n = len(points)
    call(md.distances, np.resize(np.array(points).ravel(), (n, n)))


def test_audit_max_entries_is_the_callers():
    m = np.full((5, 5), 0.2)
    sp = md.space(np.arange(5.0).reshape(5, 1))
    assert md.audit(m, sp, 1, max_entries=25).passed
    with pytest.raises(md.InputError) as e:
        md.audit(m, sp, 1, max_entries=24)
    assert e.value.field == "matrix" and "exceed the limit of 24" in str(e.value)
    for bad in (0, -3, True, 2.0, 1 << 64):
        with pytest.raises(md.InputError):
            md.audit(m, sp, 1, max_entries=bad)
