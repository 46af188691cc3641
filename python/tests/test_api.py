"""The API end to end: every family, audits of arrays and files, import and repair,
privatize on every record type, user-level functions, errors, progress."""

import json
import math
import subprocess
import sys
import textwrap
from fractions import Fraction

import metricdp as md
import numpy as np
import pandas as pd
import pytest

PTS = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 2.0], [3.0, 1.0], [2.0, 2.5]])
LABELS = ["a", "b", "c", "d", "e"]


@pytest.fixture(scope="module")
def space():
    return md.space(PTS, "euclidean", labels=LABELS)


@pytest.fixture(scope="module")
def opt(space):
    return md.optimal(space, 0.5, progress=False)


@pytest.mark.parametrize(
    "build",
    [
        lambda s: md.exponential(s, 1, progress=False),
        lambda s: md.exponential(s, 1, weights=[1, 2, 3, 4, 5], progress=False),
        lambda s: md.optimal(s, Fraction(1, 2), progress=False),
        lambda s: md.optimal(s, 1, outputs=[0, 2, 4], progress=False),
        lambda s: md.optimal(s, 1, outputs="spread:3", progress=False),
        lambda s: md.pmo(s, 1, prior=[1, 2, 3, 4, 5], within=2.5, progress=False),
        lambda s: md.pmo(s, 1, outputs=[0, 3], cost=np.ones((5, 2)), progress=False),
        lambda s: md.benders(s, 1, within=3, partitions=2, progress=False),
        lambda s: md.spanner(s, 1, k=2, progress=False),
        lambda s: md.constopt(s, 1, r=2, progress=False),
        lambda s: md.tem(s, 1, beta=0.01, progress=False),
        lambda s: md.tem(s, 1, gamma="3/2", progress=False),
    ],
)
def test_every_family_is_certified(space, build, tmp_path):
    m = build(space)
    assert m.report.passed
    assert m.matrix.shape == (m.n, m.k) and not m.matrix.flags.writeable
    assert np.allclose(m.matrix.sum(axis=1), 1.0)
    # The file re-proves under the auditor, and loads back with the same matrix.
    m.save(tmp_path / "m.json")
    # A scoped mechanism (privacy within η) passes only a policy that accepts its scope.
    assert md.audit(tmp_path / "m.json", within=m.within).passed
    if m.within is not None:
        assert not md.audit(tmp_path / "m.json").passed
    back = md.load(tmp_path / "m.json", space=space, within=m.within)
    assert np.array_equal(back.matrix, m.matrix) and back.exact(0, 0) == m.exact(0, 0)


def test_spread_outputs_are_the_clis(space):
    """``outputs="spread:K"``: the farthest-first traversal of the CLI's ``--outputs
    spread:K``, from the input farthest from input 0 (PTS[4], then PTS[0], then PTS[2]),
    stated in the file's meta."""
    m = md.pmo(space, 1, within=3, outputs="spread:3", progress=False)
    doc = json.loads(m.to_json())
    assert doc["outputs"]["of_inputs"] == [4, 0, 2]
    assert doc["meta"]["outputs"] == {"rule": "farthest-first", "k": 3,
                                      "first": "the input farthest from input 0"}


def test_certificates_and_gap(opt):
    assert "lower_bound" in opt.certificate
    lo, hi = opt.loss
    assert lo <= hi and opt.report.lower_bound <= hi
    assert 0 <= opt.report.gap < 1e-6
    assert opt.summary["mechanism"] == "optimal"
    assert opt.epsilon == Fraction(1, 2) and opt.within is None


def test_audit_of_arrays_files_and_mechanisms(space, opt, tmp_path):
    assert md.audit(opt.matrix, space, 0.5).passed
    assert md.audit(opt, epsilon=0.5).passed
    r = md.audit(opt, epsilon=0.4)
    assert r.verdict == "fail" and r.epsilon_required == 0.4
    opt.save(tmp_path / "o.json")
    assert not md.audit(tmp_path / "o.json", epsilon=0.4).passed
    # libqif's conventions: ε folded into the metric.
    D = np.array([[space.distance(i, j) for j in range(5)] for i in range(5)])
    assert md.is_private(md.exponential(space, 1, progress=False).matrix, md.distances(D * 1.0), 1.0)
    eps = md.smallest_epsilon(opt.matrix, space)
    assert 0.5 - 1e-9 <= eps and md.is_private(opt.matrix, space, eps)
    assert md.smallest_epsilon(np.eye(5), space) == math.inf


def test_report_repr_and_html(opt):
    r = opt.report
    assert "PASS" in repr(r) and "tight ε" in repr(r)
    assert r._repr_html_().startswith("<div>") and "pass" in r._repr_html_().lower()
    assert r.to_dict()["verdict"] == "pass"


def test_import_and_repair(space):
    e = md.exponential(space, 1, progress=False).matrix
    assert md.import_matrix(e, space, 1).report.passed
    with pytest.raises(md.NotPrivate) as err:
        md.import_matrix(e, space, 0.1)
    assert err.value.report.verdict == "fail" and err.value.report.witness is not None
    negative = e.copy()
    negative[1, 2] = -1e-13
    with pytest.raises(md.InputError) as bad:
        md.import_matrix(negative, space, 1)
    assert bad.value.field == "matrix[1][2]"
    # OPTMech's matrix with one entry 1e-7 too large: a tight ratio broken, row 0 off 1.
    opt = md.optimal(space, 1, progress=False).matrix.copy()
    opt[0, 0] *= 1 + 1e-7
    assert not md.audit(opt, space, 1).passed
    fixed = md.repair(opt, space, 1)
    assert fixed.report.passed and 0 < fixed.summary["repair"]["uniform_mix"] < 1e-5
    with pytest.raises(md.NotPrivate):
        md.repair(np.eye(5), space, 1)


def test_privatize_every_record_type(opt):
    idx = md.privatize(opt, [0, 4, 4, 2], seed=3)
    assert len(idx) == 4 and all(0 <= j < 5 for j in idx)
    assert md.privatize(opt, [0, 4, 4, 2], seed=3) == idx  # seeded: reproducible
    labs = md.privatize(opt, ["a", "e"], seed=1)
    assert all(x in LABELS for x in labs)
    arr = md.privatize(opt, np.array([[0, 1], [2, 3]]), seed=1)
    assert arr.shape == (2, 2) and arr.dtype == np.int64
    s = pd.Series(["a", "b", "c"], index=[10, 20, 30], name="poi")
    out = md.privatize(opt, s, seed=2)
    assert list(out.index) == [10, 20, 30] and out.name == "poi_private"
    df = pd.DataFrame({"poi": ["a", "d"], "user": [7, 8]}, index=["r1", "r2"])
    got = md.privatize(opt, df, column="poi", seed=2)
    # The release replaces the secret column, as `mdp privatize --format csv` writes it.
    assert list(got.columns) == ["user", "poi_private"] and list(got.index) == ["r1", "r2"]
    kept = md.privatize(opt, df, column="poi", seed=2, keep_input=True)
    assert list(kept.columns) == ["poi", "user", "poi_private"]
    # The pipeline's policy gates the mechanism.
    with pytest.raises(md.NotPrivate):
        md.privatize(opt, [0], epsilon=0.4)
    with pytest.raises(md.InputError) as e:
        md.privatize(opt, ["zzz"])
    assert e.value.field == "records[0]"
    with pytest.raises(md.InputError):
        md.privatize(opt, [5])


def test_spaces_from_files_frames_and_haversine(tmp_path):
    rome = md.load_space("builtin:rome100")
    assert rome.n == 100 and rome.metric == "haversine" and rome.unit == "km"
    csv = tmp_path / "p.csv"
    csv.write_text("label,x,y\nhome,0,0\nwork,3,4\n")
    s = md.load_space(csv)
    assert s.labels == ["home", "work"] and s.distance(0, 1) == 5.0
    df = pd.DataFrame({"name": ["x", "y", "z"], "lat": [41.9, 41.91, 41.92], "lon": [12.5, 12.5, 12.51]})
    h = md.from_dataframe(df, ["lat", "lon"], label="name")
    assert h.metric == "haversine" and h.labels == ["x", "y", "z"]
    assert abs(h.distance(0, 1) - 1.112) < 0.01  # 0.01° of latitude ≈ 1.11 km
    assert md.space([0.0, 1.0, 3.0]).n == 3  # 1-D points


def test_user_level():
    s = md.distances(np.array([[0, 1, 2], [1, 0, 1], [2, 1, 0]], dtype=float), labels=["p", "q", "r"])
    e = md.emd(s, ["p", "p"], ["q", "r"], assignment=True)
    assert e.value == Fraction(3, 2) and e.lo <= 1.5 <= e.hi and e.assignment[0] == Fraction(3, 2)
    fwd = md.shuffle_account(10, 1, 1e-9, users=1_000_000)
    assert fwd["alpha_upper"] < fwd["composition_alpha"] and fwd["model"] == "central"
    inv = md.shuffle_inverse(10, fwd["alpha_upper"], 1e-6, users=1_000_000)
    assert Fraction(inv["alpha0"]) > 0 and inv["alpha_upper"] <= fwd["alpha_upper"]
    # The numerical accountant (one item, FMT's setting): tighter than the closed form,
    # both records present, and the choice respected.
    one = md.shuffle_account(1, 4, "1e-6", users=100_000)
    assert one["accountant"] == "numerical" and one["closed"]["accountant"] == "closed"
    assert one["fmt_group_epsilon_upper"] < 0.18 < 0.53 < one["closed"]["fmt_group_epsilon_upper"]
    closed = md.shuffle_account(1, 4, "1e-6", users=100_000, accountant="closed")
    assert closed["accountant"] == "closed" and closed["alpha_upper"] == one["closed"]["alpha_upper"]
    beyond = md.shuffle_account(1, 4, "1e-6", users=10_000)  # the closed form's precondition fails
    assert beyond["accountant"] == "numerical" and "error" in beyond["closed"]
    with pytest.raises(md.InputError):
        md.shuffle_account(1, 4, "1e-6", users=100_000, accountant="exact")


@pytest.mark.parametrize(
    "call, field",
    [
        (lambda s: md.optimal(s, -1), "epsilon"),
        (lambda s: md.optimal(s, float("nan")), "epsilon"),
        (lambda s: md.pmo(s, 1, prior=[1, 2]), "prior"),
        (lambda s: md.exponential(s, 1, weights=[1, 1, 1, 1, -1]), "weights[4]"),
        (lambda s: md.spanner(s, 1, k=0), "k"),
        (lambda s: md.pmo(s, 1, outputs="spread:9"), "outputs"),
        (lambda s: md.optimal(s, 1, outputs="nearest:2"), "outputs"),
        (lambda s: md.optimal(s, 1, solver="cplex"), "solver"),
        (lambda s: md.space(np.array([[0.0, np.inf]])), "points[0][1]"),
        (lambda s: md.space(np.zeros((2, 2)), "hyperbolic"), "metric"),
        (lambda s: md.space(np.zeros((2, 2)), labels=["x", "x"]), "labels[1]"),
        (lambda s: md.space(np.array([[91.0, 0.0]]), "haversine"), "points[0][0]"),
        (lambda s: md.audit(np.ones((3, 3)) / 3, s, 1), "matrix"),
        (lambda s: md.load_space("/nonexistent/x.csv"), "$"),
    ],
)
def test_errors_carry_field_paths(space, call, field):
    with pytest.raises(md.InputError) as e:
        call(space)
    assert e.value.field == field, str(e.value)
    assert isinstance(e.value, ValueError) and isinstance(e.value, md.MdpError)


def test_progress_callback_and_its_exceptions(space):
    events = []
    md.optimal(space, 0.5, progress=lambda ev, phase, v: events.append(ev))
    assert events and set(events) <= {"start", "advance", "finish", "round", "note"}

    class Stop(Exception):
        pass

    def stop(ev, phase, v):
        raise Stop()

    with pytest.raises(Stop):
        md.optimal(space, 0.5, progress=stop)
    # The library is usable after a stopped call.
    assert md.optimal(space, 0.5, progress=False).report.passed


def test_ctrl_c_stops_a_long_build(tmp_path):
    """SIGINT during a long OPTMech build raises KeyboardInterrupt promptly (the process
    ends well before the build would)."""
    script = textwrap.dedent(
        """
        import sys, time, numpy as np, metricdp as md
        rng = np.random.default_rng(1)
        s = md.space(rng.random((150, 2)))
        print("ready", flush=True)
        t = time.time()
        try:
            md.optimal(s, 2, progress=False)
            print("finished", flush=True)
        except KeyboardInterrupt:
            print(f"interrupted {time.time() - t:.1f}", flush=True)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        import signal
        import time

        time.sleep(2.0)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    assert out.startswith("interrupted"), out


def test_plots(opt, tmp_path):
    import metricdp.plot as mp

    ax = mp.outputs(opt, ["a", "d"])
    ax.figure.savefig(tmp_path / "o.png")
    ax = mp.matrix(opt)
    ax.figure.savefig(tmp_path / "m.png")
    fig = mp.report(opt.report)
    fig.savefig(tmp_path / "r.png")
    assert all((tmp_path / f).stat().st_size > 1000 for f in ["o.png", "m.png", "r.png"])
    with pytest.raises(md.InputError):
        mp.outputs(md.exponential(md.distances(np.array([[0.0, 1.0], [1.0, 0.0]])), 1, progress=False), [0])


def test_user_level_releases():
    rome = md.load_space("builtin:rome100")
    users = {"u1": ["1", "2", "3"], "u2": ["50", "51", "52"], "u3": ["7", "7", "9"]}
    lin = md.release_linear(rome, users, 0.5, seed=1)
    assert [r["user"] for r in lin.records] == ["u1", "u2", "u3"]
    assert set(lin.records[0]) == {"user", "lat_deg", "lon_deg"}
    assert lin.guarantee["mechanism"] == "PrivEMDLinear" and lin.guarantee["distance_unit"] == "km"
    central = md.release_linear(rome, list(users.values()), 0.5, model="central", seed=1)
    assert len(central.records) == 1 and central.records[0]["users"] == 3
    with pytest.raises(md.InputError) as e:
        md.release_linear(rome, users, -1)
    assert e.value.field == "alpha"
    mech = md.exponential(rome, 0.5, progress=False)
    local = md.release_item_wise(mech, pd.Series([["1", "2"], ["3", "4"]], index=["a", "b"]), model="local", seed=2)
    assert [r["user"] for r in local.records] == ["a", "b"]
    assert all(len(r["release"]) == 2 and set(r["release"]) <= set(mech.labels) for r in local.records)
    counts = md.release_item_wise(mech, [["1", "2"]] * 50, seed=2)
    assert sum(c["count"] for c in counts.records[0]["counts"]) == 100
    assert counts.guarantee["model"] == "central"
    with pytest.raises(md.NotPrivate):
        md.release_item_wise(mech, [["1"]], epsilon=0.1)
    users_f = [["c0-0", "c1-1"], ["c0-1", "c1-0"]] * 200
    f = md.release_freq(users_f, clusters=2, size=2, r="1/5", alpha=4, delta=1e-6, seed=3)
    assert len(f.records) == 4 and abs(sum(r["frequency"] for r in f.records) - 1) < 1e-9
    assert f.randomizer.report.passed and f.to_frame().shape == (4, 4)
