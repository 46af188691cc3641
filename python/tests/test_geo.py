"""Geo-indistinguishability from Python (issue 54 part 1): the planar Laplace on arrays and
DataFrames, the CLI's defaults, exact releases on the grid, and its law's first moment."""

import math

import metricdp as md
import numpy as np
import pytest

ROME = (41.8, 12.4, 42.0, 12.6)


def test_dataframe_release_replaces_the_true_columns():
    pd = pytest.importorskip("pandas")
    pl = md.planar_laplace(1, region=ROME)
    df = pd.DataFrame({"id": ["a", "b", "c"], "lat": [41.9028, 41.89, 41.95], "lng": [12.4964, 12.49, 12.45]})
    out = md.privatize(pl, df, seed=3)
    assert list(out.columns) == ["id", "lat_private", "lng_private"]
    assert list(out["id"]) == ["a", "b", "c"]
    again = md.privatize(pl, df, seed=3)
    assert out.equals(again)
    kept = md.privatize(pl, df, seed=3, keep_input=True)
    assert list(kept.columns) == ["id", "lat", "lng", "lat_private", "lng_private"]
    # Clamped to the region; on the default grid (1e-9 degrees) exactly.
    assert out["lat_private"].between(41.8, 42.0).all() and out["lng_private"].between(12.4, 12.6).all()
    exact = pl.release([[41.9028, 12.4964]], seed=1, exact=True)
    lat = exact[0][0]
    assert len(lat.split(".")[1]) <= 9


def test_settings_are_the_command_lines():
    with pytest.raises(md.InputError, match="region"):
        md.planar_laplace(1)  # lat/lon needs a region: the projection's bound is the region's
    with pytest.raises(md.InputError, match="region"):
        md.planar_laplace(1, region=(10, -100, 20, 90))  # across more than 180° of longitude
    with pytest.raises(md.InputError):
        md.planar_laplace(-1, metric="euclidean")
    with pytest.raises(md.InputError, match="epsilon"):
        md.planar_laplace()
    pl = md.planar_laplace(1, region=ROME)
    with pytest.raises(md.InputError, match="outside"):
        pl.release([[45.0, 12.5]])
    # Location Guard's level within radius is ε = level / radius.
    lg = md.planar_laplace(level=2, radius=4, metric="euclidean")
    assert lg.summary()["epsilon"] == "0.5"
    pd = pytest.importorskip("pandas")
    with pytest.raises(md.InputError, match="column"):
        md.privatize(md.planar_laplace(1, metric="euclidean"), pd.DataFrame({"x": [0.0], "y": [1.0]}))


def test_summary_and_the_mean_displacement():
    pl = md.planar_laplace(2, metric="euclidean", granularity="1e-6")
    s = pl.summary(0.95)
    assert s["expected_error"] == pytest.approx(1.0) and s["unit"] == "unit"
    lo, hi = s["radius_at_confidence"]
    assert lo <= 4.7438645183905784 / 2 <= hi
    n = 4000
    out = pl.release(np.zeros((n, 2)), seed=7)
    r = np.hypot(out[:, 0], out[:, 1])
    # E‖Z‖ = 2/ε = 1, sd √2/ε: the mean of 4000 is within 6 standard errors.
    assert abs(r.mean() - 1.0) < 6 * math.sqrt(0.5) / math.sqrt(n)
    assert abs(np.mean(r <= hi) - 0.95) < 0.03


def test_grid_families_match_libqifs_formulas():
    line = md.load_space("line:6,0.5")
    g = md.geometric(line, 2, progress=False)
    assert g.report.passed
    a = math.exp(-2 * 0.5)
    expect = np.array([[(a ** i if j == 0 else a ** (5 - i) if j == 5 else (1 - a) * a ** abs(i - j)) / (1 + a)
                        for j in range(6)] for i in range(6)])
    assert np.abs(g.matrix - expect).max() < 1e-15
    rr = md.randomized_response(md.load_space("categories:4"), 1, progress=False)
    e = math.e
    assert rr.report.passed
    assert abs(rr.matrix[0, 0] - e / (e + 3)) < 1e-15 and abs(rr.matrix[0, 1] - 1 / (e + 3)) < 1e-15
    with pytest.raises(md.InputError, match="line"):
        md.geometric(md.load_space("categories:3"), 1, progress=False)


def test_planar_laplace_grid_is_certified_and_lumps_the_outside():
    grid = md.load_space("grid:3,3,1")
    m = md.planar_laplace_grid(grid, 1, progress=False)
    assert m.report.passed
    assert np.abs(m.matrix.sum(axis=1) - 1).max() < 1e-15
    # The centre's row is symmetric under the grid's mirror images, and each corner cell holds
    # the whole quadrant beyond it (about 0.15 of the mass at ε = 1 from the centre).
    row = m.matrix[4]
    assert abs(row[0] - row[8]) < 1e-15 and abs(row[1] - row[7]) < 1e-15
    assert row[0] > 0.05
    with pytest.raises(md.InputError, match="grid"):
        md.planar_laplace_grid(md.load_space("line:4"), 1, progress=False)


def test_a_space_as_the_region_snaps_releases_to_its_points():
    rome = md.load_space("builtin:rome100")
    pts = {(float(a), float(b)) for a, b in rome.points()}
    pl = md.planar_laplace(2, region="builtin:rome100")
    assert pl.summary()["region_points"] == 100
    released = pl.release([[41.9, 12.5]] * 50, seed=3)
    assert all((a, b) in pts for a, b in released.tolist())
    assert len({tuple(r) for r in released.tolist()}) > 1


def test_planar_geometric_grid_is_certified():
    m = md.planar_geometric_grid(md.load_space("grid:5,5,1"), 1, progress=False)
    assert m.report.passed
    assert np.abs(m.matrix.sum(axis=1) - 1).max() < 1e-15
    # Interior cells: P(centre → centre) / P(centre → its neighbour) = e^{ε·1} up to the
    # margin η ≤ 10⁻³ (a border cell would also hold the lattice points beyond it).
    assert abs(m.matrix[12, 12] / m.matrix[12, 13] - math.e) < 3e-3
