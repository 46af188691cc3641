"""The pipeline's metric, pinned (issue 53): Python means what the command line means.
A file that forges its metric is refused by ``load`` unless the metric is pinned or trusted
explicitly, fails ``audit(path, space=...)``, and the digest every report carries pins it."""

import json

import metricdp as md
import numpy as np
import pytest

PTS = [[40.7128, -74.0060], [40.7306, -73.9866], [40.7580, -73.9855], [40.7061, -74.0087]]
LABELS = ["c0", "c1", "c2", "c3"]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pin")
    space = md.space(np.array(PTS), "haversine", labels=LABELS)
    mech = md.exponential(space, 1, progress=False)
    genuine = d / "genuine.json"
    mech.save(genuine)
    # Numbers kept as their literal text (mdp/1 reads strings exactly): a float round trip
    # would turn the float64 point 40.712799999999998… into 40.7128, another point.
    doc = json.loads(genuine.read_text(), parse_float=str)
    space_file = d / "space.json"
    space_file.write_text(json.dumps(doc["metric"]))
    doc["metric"]["radius"] = "6371008.8"  # every distance 1000× larger
    n = len(PTS)
    doc["matrix"] = [["99/100" if i == j else f"1/{100 * (n - 1)}" for j in range(n)] for i in range(n)]
    forged = d / "forged.json"
    forged.write_text(json.dumps(doc))
    return space, genuine, forged, space_file


def test_load_refuses_an_unpinned_file_as_the_cli_does(files):
    space, genuine, forged, space_file = files
    with pytest.raises(md.InputError) as e:
        md.load(forged)
    assert e.value.field == "space" and "trust_file_metric=True" in str(e.value)
    with pytest.raises(md.NotPrivate):
        md.load(forged, space=space)
    with pytest.raises(md.NotPrivate):
        md.load(forged, space=space_file)
    assert md.load(genuine, space=space).n == len(PTS)
    assert md.load(genuine, space=str(space_file)).n == len(PTS)
    # The forgery is private for its own metric: trusting it is the caller's explicit choice.
    assert md.load(forged, trust_file_metric=True).n == len(PTS)


def test_audit_pins_the_metric_by_space_or_digest(files):
    space, genuine, forged, space_file = files
    good = md.audit(genuine)
    assert good.passed and len(good.metric_digest) == 64 and "haversine" in good.metric
    assert md.audit(forged).passed  # the file's own claim: the hole the pin closes
    bad = md.audit(forged, space=space_file)
    assert not bad.passed
    check = next(c for c in bad.checks if c["name"] == "metric")
    assert check["verdict"] == "fail" and "radius" in check["detail"]
    assert not md.audit(forged, require_metric_digest=good.metric_digest).passed
    assert md.audit(genuine, require_metric_digest=good.metric_digest).passed
    assert md.load(genuine, require_metric_digest=good.metric_digest).n == len(PTS)
    with pytest.raises(md.InputError):
        md.audit(genuine, require_metric_digest="12ab")


def test_a_bad_record_is_named_where_it_stands(files):
    space, genuine, _, _ = files
    mech = md.load(genuine, space=space)
    with pytest.raises(md.InputError) as e:
        md.privatize(mech, ["c0", None])
    assert e.value.field == "records[1]"
    import pandas as pd

    with pytest.raises(md.InputError) as e:
        md.privatize(mech, pd.Series(["c0", "c1", np.nan]))
    assert e.value.field == "records[2]"


def test_from_dataframe_reads_latitude_and_longitude_by_name():
    import pandas as pd

    df = pd.DataFrame({"lng": [-74.0060, -73.9866], "lat": [40.7128, 40.7306]})
    s = md.from_dataframe(df, ["lat", "lng"])
    swapped = md.from_dataframe(df, ["lng", "lat"], metric="haversine")
    km = md.space(np.array([[40.7128, -74.0060], [40.7306, -73.9866]]), "haversine")
    for sp in (s, swapped):
        assert sp.distance(0, 1) == pytest.approx(km.distance(0, 1), rel=1e-12)
    assert 2 < s.distance(0, 1) < 3  # km, not degrees
    with pytest.warns(UserWarning, match="per degree"):
        md.from_dataframe(df, ["lat", "lng"], metric="euclidean")


def test_libqif_conventions_are_answered_plainly():
    d = np.abs(np.subtract.outer(np.arange(4.0), np.arange(4.0)))
    c = np.exp(-d / 2)
    c = c / c.sum(axis=1, keepdims=True)
    assert md.is_private(c, d)
    with pytest.raises(md.InputError) as e:
        md.is_private(c, lambda x, y: abs(x - y))
    assert e.value.field == "space"
    off = c.astype(np.float32)  # rows off 1 by ~1e-8 > 1e-9
    off[0] *= 1 + 3.3e-5
    with pytest.warns(UserWarning, match="stochastic"):
        assert not md.is_private(off, d)
    # A non-metric table is read in O(n²); its violation is searched when asked.
    bad = np.array([[0, 1, 5], [1, 0, 1], [5, 1, 0]], dtype=float)
    assert md.distances(bad).warnings == []
    assert any("triangle" in w for w in md.distances(bad, check_triangle=True).warnings)


def test_snap_and_a_prior_from_records_as_the_cli_does():
    import pandas as pd

    space = md.space(np.array(PTS), "haversine", labels=LABELS)
    recs = pd.DataFrame({"lng": [-74.006, -74.0061, -73.9855], "lat": [40.7128, 40.7130, 40.758]})
    idx, moved = md.snap(space, recs)
    assert idx.tolist() == [0, 0, 2] and moved.max() < 0.03  # km
    with pytest.raises(md.InputError) as e:
        md.snap(space, [[40.7128, -74.006], [48.85, 2.35]])  # Paris is beyond the limit
    assert e.value.field == "records[1]"
    assert md.prior_from(space, recs).tolist() == [2, 0, 1, 0]
    assert md.prior_from(space, ["c0", "c3", "c3"], pseudocount=0.5).tolist() == [1.5, 0.5, 0.5, 2.5]
    assert md.prior_from(space, [1, 1]).tolist() == [0, 2, 0, 0]
    with pytest.raises(md.InputError):
        md.prior_from(space, ["nowhere"])
    mech = md.pmo(space, 1, prior=md.prior_from(space, recs, pseudocount=1), progress=False)
    assert mech.report.passed


def test_the_adversarys_measures_as_the_cli_reports_them(tmp_path):
    pts = np.array([[0.0], [1.0], [3.0]])
    space = md.space(pts, "euclidean", labels=["a", "b", "c"])
    mech = md.exponential(space, 1, progress=False)
    m = md.measure(mech)
    assert m["bayes_vulnerability"]["prior"] == pytest.approx(1 / 3)
    assert m["bayes_vulnerability"]["posterior"] >= m["bayes_vulnerability"]["prior"]
    assert m["multiplicative_leakage"] == pytest.approx(m["multiplicative_capacity"])  # uniform prior
    lo, hi = m["adversary_error"]
    assert 0 <= lo <= hi and len(m["guesses"]) == 3 and set(m["guesses"]) <= {"a", "b", "c"}
    mech.save(tmp_path / "m.json")
    skewed = md.measure(tmp_path / "m.json", prior=[8, 1, 1], gain=np.eye(3))
    assert skewed["bayes_vulnerability"]["prior"] == pytest.approx(0.8)
    assert skewed["g_vulnerability"]["posterior"] == pytest.approx(skewed["bayes_vulnerability"]["posterior"])
    assert skewed["exact"]["bayes_vulnerability"]["prior"] == "0.8"
    with pytest.raises(md.InputError):
        md.measure(mech, prior=[1, 2])


def test_remap_lowers_the_expected_loss_and_stays_certified():
    pts = np.array([[0.0], [1.0], [3.0], [4.0]])
    space = md.space(pts, "euclidean", labels=["a", "b", "c", "d"])
    mech = md.exponential(space, 0.5, progress=False)
    remapped, info = md.remap(mech, prior=[5, 1, 1, 1])
    assert remapped.report.passed and remapped.epsilon == mech.epsilon
    assert info["expected_loss_after"][0] <= info["expected_loss_before"][1]
    assert len(info["map"]) == 4 and set(info["map"]) <= {"a", "b", "c", "d"}
    assert md.measure(remapped, prior=[5, 1, 1, 1])["expected_loss"][0] <= info["adversary_error"][1]


def test_the_accountant_returns_floats_with_the_exact_strings_on_request():
    from fractions import Fraction

    r = md.shuffle_account(10, 1, 1e-9, users=1_000_000)
    assert isinstance(r["alpha"], float) and r["alpha"] == r["alpha_upper"]
    assert isinstance(r["delta"], float) and r["delta"] >= Fraction(r["exact"]["delta"])
    assert Fraction(r["alpha"]) >= Fraction(r["exact"]["alpha"])
    assert isinstance(r["closed"]["alpha"], float)
    raw = md.shuffle_account(10, 1, 1e-9, users=1_000_000, exact=True)
    assert isinstance(raw["alpha"], str) and len(raw["alpha"]) > 20
    inv = md.shuffle_inverse(10, r["alpha_upper"], 1e-6, users=1_000_000)
    assert isinstance(inv["alpha0"], float) and Fraction(inv["alpha0"]) <= Fraction(inv["exact"]["alpha0"])
