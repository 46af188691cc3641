#!/usr/bin/env python3
"""Dask or Ray for the distributed audit (issue 35, part 4): the measurement behind the
choice recorded in spec/crates.md, and the scaling of `metricdp.distributed.audit` with
workers.

On this machine (2 cores) both engines run a local cluster on loopback addresses:
  * start-up: seconds from nothing to a cluster that ran one task;
  * overhead: 200 empty tasks submitted and gathered (ms per task);
  * the block audit of one container (`mdp build exponential --container`, n planar
    points, ε = 1) with 1 and with 2 workers (each worker single-threaded: RAYON_NUM_THREADS=1),
    the same library calls in both engines, against the whole audit in one process
    (`mdp-audit`, 2 threads);
  * the installed size of each engine's packages.
Every run's verdict and tight ε must equal `mdp-audit`'s.

Usage (python/.venv has metricdp built by `maturin develop --release`):
  pip install "dask[distributed]==2026.8.0" "ray==2.60.0"   # both, for the comparison
  python benches/distributed_bench.py --n 10000
Writes benches/reports/distributed.md.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MDP = REPO / "target" / "release" / "mdp"
AUDIT = REPO / "target" / "release" / "mdp-audit"

os.environ["RAYON_NUM_THREADS"] = "1"  # inherited by every worker process


def container(n: int, work: Path) -> Path:
    import numpy as np

    rng = np.random.default_rng([35, n])
    pts = np.round(rng.uniform(0, 10, (n, 2)), 4)
    csv = work / f"pts{n}.csv"
    with open(csv, "w") as f:
        f.write("id,x,y\n")
        for i, (x, y) in enumerate(pts):
            f.write(f"p{i},{float(x)!r},{float(y)!r}\n")
    header = work / f"planar{n}.json"
    env = dict(os.environ)
    env.pop("RAYON_NUM_THREADS")
    subprocess.run([str(MDP), "build", "exponential", "--space", str(csv), "--epsilon", "1", "-o", str(header),
                    "--container", "--quiet"], check=True, env=env)
    return header


def rectangular(n: int, k: int, work: Path) -> Path:
    """n input points and k output points (uniform in a 10 × 10 square), the exponential
    mechanism e^(−d(u,w)/2) row-normalized in numpy (a third-party producer: the audit
    decides), written as a container with `outputs.points`."""
    import numpy as np

    rng = np.random.default_rng([35, n, k])
    pts = np.round(rng.uniform(0, 10, (n, 2)), 4)
    outs = np.round(rng.uniform(0, 10, (k, 2)), 4)
    m = np.empty((n, k))
    for a in range(0, n, 10000):
        d = np.sqrt(((pts[a:a + 10000, None, :] - outs[None, :, :]) ** 2).sum(-1))
        block = np.exp(-0.5 * 0.999 * d)
        m[a:a + 10000] = block / block.sum(axis=1, keepdims=True)
    np.save(work / f"rect{n}x{k}.npy", m)
    header = work / f"rect{n}x{k}.json"
    header.write_text(json.dumps({
        "format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "euclidean", "points": pts.tolist()},
        "outputs": {"points": outs.tolist()},
        "matrix": {"npy": f"rect{n}x{k}.npy"},
    }))
    return header


def whole(header: Path) -> tuple[float, dict]:
    env = dict(os.environ)
    env.pop("RAYON_NUM_THREADS")
    t = time.perf_counter()
    out = subprocess.run([str(AUDIT), "--json", str(header)], capture_output=True, text=True, env=env)
    return time.perf_counter() - t, json.loads(out.stdout)


def size_of(pkgs: list[str]) -> float:
    import importlib.util

    total = 0
    for p in pkgs:
        spec = importlib.util.find_spec(p)
        if spec and spec.submodule_search_locations:
            for root in spec.submodule_search_locations:
                for dp, _, fs in os.walk(root):
                    total += sum(os.path.getsize(os.path.join(dp, f)) for f in fs)
    return total / 1e6


def noop(x):
    return x


def dask_runs(header: Path, split: str = "blocks", per: int = 2) -> dict:
    """Dask with 1 and 2 workers, `per` tasks per worker: blocks of columns, or shares of
    the pairs (one block)."""
    from dask.distributed import Client, LocalCluster

    import metricdp.distributed as mdd

    engine = "dask" if split == "blocks" else "dask, shares of the pairs"
    out = {"engine": engine, "installed_mb": size_of(["dask", "distributed"])}
    for workers in (1, 2):
        t = time.perf_counter()
        with LocalCluster(n_workers=workers, threads_per_worker=1, host="127.0.0.1",
                          dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0", processes=True) as cl, Client(cl) as c:
            c.submit(noop, 1).result()
            if workers == 2:
                out["startup_s"] = time.perf_counter() - t
                t = time.perf_counter()
                c.gather(c.map(noop, range(200)))
                out["task_ms"] = 1000 * (time.perf_counter() - t) / 200
            t = time.perf_counter()
            if split == "blocks":
                r = mdd.audit(header, client=c, blocks=per * workers, shares=1)
            else:
                r = mdd.audit(header, client=c, blocks=1, shares=per * workers)
            out[f"audit_{workers}w_s"] = time.perf_counter() - t
            out[f"audit_{workers}w"] = {k: r[k] for k in ("verdict", "epsilon_tight", "blocks", "tasks", "seconds_blocks")}
    return out


def ray_runs(header: Path) -> dict:
    import ray

    from metricdp import _core

    out = {"engine": "ray", "installed_mb": size_of(["ray"])}

    @ray.remote(num_cpus=1)
    def sums(h, a, b):
        return _core.block_sums(h, a, b)

    @ray.remote(num_cpus=1)
    def block(h, a, b, s, e):
        return _core.audit_block(h, a, b, s, e)

    @ray.remote(num_cpus=1)
    def rnoop(x):
        return x

    from metricdp.distributed import _bounds

    for workers in (1, 2):
        t = time.perf_counter()
        ray.init(num_cpus=workers, include_dashboard=False, _node_ip_address="127.0.0.1",
                 runtime_env={"env_vars": {"RAYON_NUM_THREADS": "1"}}, log_to_driver=False)
        ray.get(rnoop.remote(1))
        if workers == 2:
            out["startup_s"] = time.perf_counter() - t
            t = time.perf_counter()
            ray.get([rnoop.remote(i) for i in range(200)])
            out["task_ms"] = 1000 * (time.perf_counter() - t) / 200
        t = time.perf_counter()
        n, k, eps = _core.container_shape(str(header))
        bounds = _bounds(k, 2 * workers)
        parts = ray.get([sums.remote(str(header), a, b) for a, b in bounds])
        s = _core.add_sums(parts)
        ref = ray.put(s)
        res = ray.get([block.remote(str(header), a, b, ref, eps) for a, b in bounds])
        r = json.loads(_core.combine_blocks(res, s, n, k, eps))
        out[f"audit_{workers}w_s"] = time.perf_counter() - t
        out[f"audit_{workers}w"] = {k2: r[k2] for k2 in ("verdict", "epsilon_tight", "blocks", "seconds_blocks")}
        ray.shutdown()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=10000)
    ap.add_argument("--outputs", type=int, default=0,
                    help="K output points (a rectangular n × K container made with numpy); 0: K = n by mdp build")
    ap.add_argument("--engines", nargs="+", default=["dask", "ray"],
                    help="dask (blocks of columns), dask-shares (shares of the pairs), ray")
    ap.add_argument("--per-worker", type=int, default=2, help="Dask tasks per worker")
    ap.add_argument("--out", default=str(HERE / "reports" / "distributed.md"))
    a = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="distributed-"))
    header = rectangular(a.n, a.outputs, work) if a.outputs else container(a.n, work)
    wall, rep = whole(header)
    runs = {"dask": lambda h: dask_runs(h, "blocks", a.per_worker),
            "dask-shares": lambda h: dask_runs(h, "shares", a.per_worker), "ray": ray_runs}
    rows = [runs[e](header) for e in a.engines]
    for r in rows:
        for w in (1, 2):
            got = r[f"audit_{w}w"]
            assert got["verdict"] == rep["verdict"], (r["engine"], w, got, rep["verdict"])
            assert abs(got["epsilon_tight"][1] - rep["epsilon_tight"][1]) <= 1e-9 * rep["epsilon_tight"][1], got
    lines = [
        "# Dask or Ray: the distributed block audit",
        "",
        f"Generated {dt.datetime.now().isoformat(timespec='seconds')} by `benches/distributed_bench.py --n {a.n}"
        f"{f' --outputs {a.outputs}' if a.outputs else ''} --engines {' '.join(a.engines)} --per-worker {a.per_worker}`; "
        f"{os.cpu_count()} cores, local clusters on 127.0.0.1, workers single-threaded (RAYON_NUM_THREADS=1).",
        "",
        f"Container: exponential mechanism on {a.n} planar points, K = {a.outputs or a.n}, ε = 1. The whole audit in one "
        f"process (`mdp-audit`, 2 threads): {wall:.1f} s, verdict {rep['verdict']}, tight ε ≤ {rep['epsilon_tight'][1]:.12g}.",
        "",
        f"| engine | installed MB | start-up s (2 workers) | ms per empty task | audit, 1 worker ({a.per_worker} tasks) s "
        f"| audit, 2 workers ({2 * a.per_worker} tasks) s | speed-up |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['engine']} | {r['installed_mb']:.0f} | {r['startup_s']:.2f} | {r['task_ms']:.2f} | "
            f"{r['audit_1w_s']:.1f} | {r['audit_2w_s']:.1f} | {r['audit_1w_s'] / r['audit_2w_s']:.2f} |"
        )
    lines += [
        "",
        "Per-block seconds (inside the library) are in the JSON below; every run's verdict and tight ε equal "
        "`mdp-audit`'s (asserted).",
        "",
        "```json",
        json.dumps(rows, indent=1),
        "```",
    ]
    out = Path(a.out)
    if out.exists() and a.outputs:  # a second size: appended to the report
        out.write_text(out.read_text() + "\n" + "\n".join(lines[2:]) + "\n")
    else:
        out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[:12]))


if __name__ == "__main__":
    main()
