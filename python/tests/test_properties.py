"""Properties (hypothesis), as the Rust side's proptests: a certified matrix always audits
as pass; a planted violation always fails with a witness naming it; privatize never
emits an output outside the support; numpy and exact agree."""

import math
from fractions import Fraction

import metricdp as md
import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

# filter_too_much: a planted target above 1 cannot be reached by raising one entry (assume), and
# small spaces at large ε reach it often; the examples that run are what the test needs.
SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


@st.composite
def spaces(draw, min_n=2, max_n=7):
    n = draw(st.integers(min_n, max_n))
    coords = draw(st.lists(st.tuples(st.integers(-20, 20), st.integers(-20, 20)), min_size=n, max_size=n, unique=True))
    return md.space(np.array(coords, dtype=float) / 4.0)


EPS = st.sampled_from([Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(3, 2)])


@SETTINGS
@given(spaces(), EPS, st.sampled_from(["exponential", "optimal", "tem"]))
def test_certified_matrices_audit_as_pass(space, eps, family):
    m = getattr(md, family)(space, eps, progress=False)
    assert m.report.passed
    assert md.audit(m).passed
    # numpy and exact agree: each float64 entry is the nearest double to the exact one.
    for i in range(m.n):
        for j in range(m.k):
            assert m.matrix[i, j] == float(m.exact(i, j))


@SETTINGS
@given(spaces(min_n=3), EPS, st.data())
def test_planted_violations_fail_with_their_witness(space, eps, data):
    """Raise one entry H[u][w] so that H[u][w] = e^{ε·d(u,v)}·H[v][w]·(1 + r) after its row
    is renormalised, for r from 1e-9 to 10: the audit fails and names row u."""
    m = md.exponential(space, eps, progress=False).matrix.copy()
    n = m.shape[0]
    u = data.draw(st.integers(0, n - 1))
    v = data.draw(st.integers(0, n - 1).filter(lambda x: x != u))
    w = data.draw(st.integers(0, n - 1))
    r = data.draw(st.sampled_from([1e-9, 1e-6, 1e-3, 1.0, 10.0]))
    target = math.exp(float(eps) * space.distance(u, v)) * m[v, w] * (1 + r)
    p = m[u, w]
    # Scale entry (u, w) by f, then renormalise row u: the new H[u][w] = f·p/(1 + (f−1)p).
    t = target
    assume(t < 1)  # else not reachable by raising one entry of a stochastic row
    f = t * (1 - p) / (p * (1 - t))
    m[u, w] *= f
    m[u] /= m[u].sum()
    rep = md.audit(m, space, eps)
    assert rep.verdict == "fail", rep
    wit = rep.witness
    assert u in (wit["u"], wit["v"]), wit


@SETTINGS
@given(st.integers(2, 6), st.integers(1, 4), st.integers(0, 2**32), st.data())
def test_privatize_stays_in_the_support(n, extra, seed, data):
    """Columns of zeros are never drawn; every output is a column of the matrix."""
    xs = np.arange(n, dtype=float)
    ys = np.array(data.draw(st.lists(st.integers(0, 10), min_size=3, max_size=6)), dtype=float) / 2
    eps = 1.0
    m = np.exp(-eps * np.abs(xs[:, None] - ys[None, :]) / 2)
    m /= m.sum(axis=1, keepdims=True)
    zeros = np.zeros((n, extra))
    full = np.hstack([zeros[:, : extra // 2], m, zeros[:, extra // 2 :]])
    space = md.space(xs)
    # Claimed at 1.01·ε: the float matrix keeps a margin over its rounding.
    mech = md.import_matrix(full, space, 1.01, outputs_are_inputs=False)
    out = md.privatize(mech, list(np.repeat(np.arange(n), 40)), seed=seed)
    support = set(np.nonzero(full.sum(axis=0))[0])
    assert set(out) <= support
