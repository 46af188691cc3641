"""Large-mechanism containers from Python: written after the structured audit, audited
again from their path, and audited block by block on a local two-worker Dask cluster
(loopback only, bounded in time, closed by its context manager)."""

from __future__ import annotations

import json
import os

import metricdp as md
import metricdp.distributed as mdd
import numpy as np
import pytest

distributed = pytest.importorskip("distributed")


def exponential(points: np.ndarray, eps: float) -> np.ndarray:
    d = np.sqrt(((points[:, None, :] - points[None, :, :]) ** 2).sum(-1))
    m = np.exp(-0.5 * eps * d)
    return m / m.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def city(tmp_path_factory):
    rng = np.random.default_rng(35)
    pts = np.round(rng.uniform(0, 10, (300, 2)), 3)
    space = md.space(pts, labels=[f"cell{i}" for i in range(300)])
    path = tmp_path_factory.mktemp("city") / "city.json"
    npy = md.save_container(exponential(pts, 1.0), space, 1, path)
    return path, npy, space


def test_written_container_audits_again(city):
    path, npy, _ = city
    assert os.path.exists(npy) and npy.endswith("city.npy")
    header = json.loads(path.read_text())
    assert header["matrix"] == {"npy": "city.npy"}
    r = md.audit(path)
    assert r.passed and r.epsilon_tight[1] <= 1.0
    assert r.to_dict()["stats"]["structured"]["method"] == "boxes"
    # At a smaller ε the same file fails, with a witness.
    r = md.audit(path, epsilon=0.5)
    assert r.verdict == "fail" and r.witness is not None


def test_not_private_is_not_written(tmp_path):
    pts = np.array([[0.0], [1.0], [2.0]])
    m = np.array([[0.98, 0.01, 0.01], [0.01, 0.98, 0.01], [0.01, 0.01, 0.98]])
    with pytest.raises(md.NotPrivate):
        md.save_container(m, md.space(pts), 1, tmp_path / "bad.json")
    assert not (tmp_path / "bad.json").exists() and not (tmp_path / "bad.npy").exists()


def test_blocks_here_agree_with_the_whole_audit(city):
    path, _, _ = city
    whole = md.audit(path)
    for blocks in (1, 3, 7):
        r = mdd.audit(path, blocks=blocks)
        assert r["verdict"] == "pass" and r["blocks"] == blocks
        lo, hi = r["epsilon_tight"]
        assert lo <= whole.epsilon_tight[1] and whole.epsilon_tight[0] <= hi
    # Shares of the pairs, alone and with blocks: every (block, share) one task.
    for blocks, shares in ((1, 2), (1, 5), (2, 3)):
        r = mdd.audit(path, blocks=blocks, shares=shares)
        assert r["verdict"] == "pass" and r["blocks"] == blocks and r["tasks"] == blocks * shares
        assert abs(r["epsilon_tight"][1] - whole.epsilon_tight[1]) <= 1e-9
        assert 0.0 < r["settled_fraction"] <= 1.0
    bad = mdd.audit(path, shares=3, epsilon="1/2")
    assert bad["verdict"] == "fail" and bad["witness"]["witness"]["lhs"][0] > bad["witness"]["witness"]["rhs"][1]


def test_two_worker_cluster(city):
    path, _, _ = city
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster, timeout=60) as client:
        r = mdd.audit(path, client=client, timeout=120)
        assert r["verdict"] == "pass" and r["blocks"] == 4
        whole = md.audit(path)
        assert abs(r["epsilon_tight"][1] - whole.epsilon_tight[1]) <= 1e-9
        r = mdd.audit(path, client=client, shares=4, timeout=120)
        assert r["verdict"] == "pass" and r["blocks"] == 1 and r["tasks"] == 4
        assert abs(r["epsilon_tight"][1] - whole.epsilon_tight[1]) <= 1e-9
        bad = mdd.audit(path, client=client, epsilon="1/2", timeout=120)
        assert bad["verdict"] == "fail"
        w = bad["witness"]["witness"]
        assert w["lhs"][0] > w["rhs"][1]  # a proven violation, global indices
        assert 0 <= w["w"] < 300 and w["w_label"] == f"cell{w['w']}"
        # An error on a worker comes back as the library's typed error.
        missing = path.with_name("gone.json")
        missing.write_text(path.read_text().replace("city.npy", "gone.npy"))
        with pytest.raises(md.InputError) as e:
            mdd.audit(missing, client=client, timeout=120)
        assert e.value.field == "matrix.npy"


def test_hostile_arguments(city):
    path, _, _ = city
    with pytest.raises(md.InputError):
        mdd.audit(path, blocks=0)
    for shares in (0, True, 2.5, 1 << 21):
        with pytest.raises(md.InputError):
            mdd.audit(path, shares=shares)
    for budget in (0, -1, True, 1 << 64):
        with pytest.raises(md.InputError):
            mdd.audit(path, max_exact_triples=budget)
    with pytest.raises(md.InputError):
        md._core.audit_block(str(path), 0, 10, ["1"] * 300, None, 2, 2)
    # A share missing (or given twice) from the combination is refused, not passed.
    sums = md._core.add_sums([md._core.block_sums(str(path), 0, 300)])
    one = md._core.audit_block(str(path), 0, 300, sums, None, 0, 2)
    for results in ([one], [one, one]):
        with pytest.raises(md.InputError):
            md._core.combine_blocks(results, sums, 300, 300, "1")
    with pytest.raises(md.InputError):
        md._core.audit_block(str(path), 5, 3, ["1"] * 300)
    with pytest.raises(md.InputError):
        md._core.audit_block(str(path), 0, 10, ["1"] * 299)
    with pytest.raises(md.InputError):
        md._core.audit_block(str(path), 0, 10, ["0"] * 300)
    with pytest.raises(md.InputError):
        md._core.combine_blocks([], [], 300, 300, "1")
    with pytest.raises(md.InputError):
        md.save_container(np.ones((3, 2)), md.space(np.zeros((3, 1))), 1, path.with_name("x.json"))


def test_privatize_a_frame_here_and_on_the_cluster(city):
    import pandas as pd

    path, _, _ = city
    df = pd.DataFrame({"id": [f"r{i}" for i in range(600)], "cell": [f"cell{i % 300}" for i in range(600)]})
    out = mdd.privatize(path, df, "cell", epsilon=1, seed=3, trust_file_metric=True, keep_input=True)
    assert list(out.columns) == ["id", "cell", "cell_private"] and list(out["id"]) == list(df["id"])
    released = mdd.privatize(path, df, "cell", epsilon=1, seed=3, trust_file_metric=True)
    assert list(released.columns) == ["id", "cell_private"]
    assert set(out["cell_private"]) <= {f"cell{i}" for i in range(300)}
    # Reproducible with a seed, and the release is not the identity.
    again = mdd.privatize(path, df, "cell", epsilon=1, seed=3, trust_file_metric=True, keep_input=True)
    assert list(again["cell_private"]) == list(out["cell_private"])
    assert (out["cell"] != out["cell_private"]).mean() > 0.5
    # The gate uses the pipeline's ε, not the file's claim: at 1/2 it refuses.
    with pytest.raises(md.NotPrivate):
        mdd.privatize(path, df, "cell", epsilon="1/2", trust_file_metric=True)
    with pytest.raises(md.InputError):
        mdd.privatize(path, df.assign(cell="nowhere"), "cell", epsilon=1, trust_file_metric=True)
    with pytest.raises(md.InputError):
        mdd.privatize(path, df, "missing", epsilon=1, trust_file_metric=True)

    import dask.dataframe as dd
    from dask.distributed import Client, LocalCluster

    ddf = dd.from_pandas(df, npartitions=4)
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster, timeout=60):
        res = mdd.privatize(path, ddf, "cell", epsilon=1, seed=5, trust_file_metric=True).compute(timeout=120)
        # The planar Laplace on coordinate records, partition by partition (issue 54).
        pts = pd.DataFrame({"id": [f"r{i}" for i in range(200)], "lat": np.linspace(41.85, 41.95, 200),
                            "lon": np.linspace(12.45, 12.55, 200)})
        pl = md.planar_laplace(1, region=(41.8, 12.4, 42.0, 12.6))
        geo = mdd.privatize(pl, dd.from_pandas(pts, npartitions=4), seed=5).compute(timeout=120)
    assert len(res) == 600 and list(res["id"]) == list(df["id"]) and "cell" not in res.columns
    assert set(res["cell_private"]) <= {f"cell{i}" for i in range(300)}
    assert list(geo.columns) == ["id", "lat_private", "lon_private"] and list(geo["id"]) == list(pts["id"])
    assert geo["lat_private"].between(41.8, 42.0).all() and (geo["lat_private"] != pts["lat"]).all()


def test_exact_sampling_follows_the_row(tmp_path):
    """Frequencies of one input's releases against its row (χ² at a 1e-4 level)."""
    pts = np.array([[0.0], [1.0], [2.0], [5.0]])
    m = exponential(pts, 1.0)
    path = tmp_path / "line.json"
    md.save_container(m, md.space(pts), 1, path)
    draws = md._core.privatize_container(str(path), [1] * 40000, epsilon="1", seed=11, by_index=True,
                                         trust_file_metric=True)
    counts = np.bincount([int(x) for x in draws], minlength=4)
    expected = m[1] * 40000
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 21.1, (counts, expected)  # χ²(3) upper 1e-4 quantile


def test_exact_budget(tmp_path):
    # Ratios fl(e) < e at d = 1, ε = 1: one ulp inside the bound, decided in rationals only.
    import math

    a, b = 0.25 * math.e, 0.25
    m = np.array([[a, b, 1 - a - b], [b, a, 1 - a - b], [b, b, 1 - 2 * b]])
    path = tmp_path / "tight.json"
    md.save_container(m, md.space(np.array([[0.0], [1.0], [10.0]])), 1, path)
    assert mdd.audit(path)["verdict"] == "pass"
    with pytest.raises(md.InputError) as e:
        mdd.audit(path, max_exact_triples=1)
    assert "exact triples" in str(e.value)


def test_benders_subproblems_on_a_two_worker_cluster():
    # Master here, subproblems as Dask tasks: the same certified file as without a client.
    from dask.distributed import Client, LocalCluster

    rng = np.random.default_rng(36)
    sp = md.space(np.round(rng.uniform(0, 4, (24, 2)), 3))
    here = mdd.benders(sp, 2, within=1, partitions=3, max_iter=6)
    assert here.report.passed and here.certificate["benders"]["lower"] <= here.certificate["benders"]["upper"]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                      dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0") as cluster, \
            Client(cluster, timeout=60) as client:
        there = mdd.benders(sp, 2, within=1, partitions=3, max_iter=6, client=client, timeout=120)
        assert there.to_json() == here.to_json()


def test_benders_subproblems_hostile():
    rng = np.random.default_rng(37)
    sp = md.space(np.round(rng.uniform(0, 4, (12, 2)), 3))
    for job in ("", "{}", '{"input": 3, "cuts": true}', "[" * 100000):
        with pytest.raises(md.InputError):
            md._core.benders_subproblem(job)
    with pytest.raises(md.InputError):
        md.benders(sp, 2, within=1, subproblems=5)

    def short(jobs):
        return [md._core.benders_subproblem(j) for j in jobs][:-1]

    def raising(jobs):
        raise RuntimeError("worker lost")

    def forged(jobs):
        out = [json.loads(md._core.benders_subproblem(j)) for j in jobs]
        out[0]["x"] = out[0]["x"][:-1]
        return [json.dumps(o) for o in out]

    for f, says in ((short, "results for"), (raising, "worker lost"), (forged, "malformed")):
        with pytest.raises(md.SolverError) as e:
            md.benders(sp, 2, within=1, partitions=3, max_iter=3, subproblems=f)
        assert says in str(e.value)
