#!/usr/bin/env python3
"""Benders with its subproblems on Dask workers (issue 36 part 3): the same build here and
on local clusters of 1 and 2 workers, with what travels per iteration.

Instance: N Rome road nodes (benders_growth.py's rule: N nodes drawn with seed 1, K = 100
outputs among them, haversine km, η = 2 km, ε = 10/km), `metricdp.benders` with
--partitions C and --max-iter iterations. First the localized LP of `metricdp.pmo`
(`gap=1e-6`) on the same instance, the route Benders has to overtake; then the runs:
  * here: subproblems in this process (rayon, 2 threads);
  * dask 1 / 2 workers: LocalCluster on 127.0.0.1, one thread per worker
    (RAYON_NUM_THREADS=1 in the workers), the master on the driver; the mapper is
    `metricdp.distributed.benders`'s, wrapped to count the job and result texts' bytes.
Every run must write the same certified file (asserted). Reports wall seconds, calls to
the workers, subproblems and bytes sent and returned per call.

Usage (a venv with python/requirements-ci.txt and the metricdp wheel, as .ci/run makes):
    VENV/bin/python benches/benders_dask.py --n 1000 --partitions 16 --max-iter 3
Writes benches/reports/benders_dask.md (or --out).
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
os.environ.setdefault("RAYON_NUM_THREADS", "2")


def instance(n: int, work: Path):
    from benders_growth import instance as growth_instance

    args = growth_instance(n, work)
    rows = list(csv.DictReader(open(args[1])))
    pts = np.array([[float(r["lat"]), float(r["lon"])] for r in rows])
    outs = json.loads(Path(args[-1]).read_text())
    return pts, outs


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--partitions", type=int, default=16)
    ap.add_argument("--max-iter", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "reports" / "benders_dask.md"))
    a = ap.parse_args()
    import metricdp as md
    from dask.distributed import Client, LocalCluster, wait

    pts, outs = instance(a.n, Path(tempfile.mkdtemp(prefix="benders-dask-")))
    sp = md.space(pts, "haversine")
    kw = dict(within=2, outputs=outs, partitions=a.partitions, max_iter=a.max_iter, method="km-dv")
    rows, files = [], []

    # The localized LP of `mdp build pmo` on the same instance, certified to 10⁻⁶: the route
    # Benders has to overtake (issue 36 part 3).
    t = time.perf_counter()
    p = md.pmo(sp, 10, within=2, outputs=outs, gap=1e-6)
    pmo_row = {"seconds": time.perf_counter() - t, "lower": p.report.lower_bound}

    t = time.perf_counter()
    m = md.benders(sp, 10, **kw)
    rows.append({"run": "here (rayon, 2 threads)", "seconds": time.perf_counter() - t})
    files.append(m.to_json())
    cert = m.certificate["benders"]

    for workers in (1, 2):
        counts = {"calls": 0, "jobs": 0, "sent": 0, "returned": 0}
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, host="127.0.0.1",
                          dashboard_address="127.0.0.1:0", worker_dashboard_address="127.0.0.1:0",
                          env={"RAYON_NUM_THREADS": "1"}) as cl, Client(cl) as c:

            def solve(jobs):
                counts["calls"] += 1
                counts["jobs"] += len(jobs)
                counts["sent"] += sum(len(j) for j in jobs)
                futures = c.map(md._core.benders_subproblem, jobs, pure=False)
                wait(futures, timeout=1800)
                got = c.gather(futures)
                counts["returned"] += sum(len(g) for g in got)
                return got

            t = time.perf_counter()
            m = md.benders(sp, 10, subproblems=solve, **kw)
            rows.append({"run": f"dask, {workers} worker{'s' if workers > 1 else ''}",
                         "seconds": time.perf_counter() - t, **counts})
            files.append(m.to_json())
    assert all(f == files[0] for f in files), "a run wrote a different file"

    lines = [
        "# Benders with its subproblems on Dask workers (issue 36 part 3)",
        "",
        f"Generated {dt.datetime.now().isoformat(timespec='seconds')} by `benches/benders_dask.py --n {a.n} "
        f"--partitions {a.partitions} --max-iter {a.max_iter}`; {os.cpu_count()} cores, local clusters on 127.0.0.1.",
        "",
        f"Instance: {a.n} Rome road nodes, K = 100, η = 2 km, ε = 10/km, km-dv, {a.partitions} partitions, "
        f"{a.max_iter} iterations. Every run wrote the same certified file (asserted): certified lower bound "
        f"{cert['lower']:.9g}, audited upper bound {cert['upper']:.9g}.",
        "",
        f"The localized LP (`metricdp.pmo(..., gap=1e-6)`, `mdp build pmo --gap 1e-6`) on the same instance, "
        f"same process, before the Benders runs: {pmo_row['seconds']:.1f} s, certified lower bound "
        f"{pmo_row['lower']:.9g} (Benders' certified gap after {a.max_iter} iterations: "
        f"{(cert['upper'] - cert['lower']) / cert['lower']:.2%} of its lower bound).",
        "",
        "| run | wall s | calls to the workers | subproblems | MB sent per call | MB returned per call |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "calls" in r:
            per = max(1, r["calls"])
            lines.append(f"| {r['run']} | {r['seconds']:.1f} | {r['calls']} | {r['jobs']} | "
                         f"{r['sent'] / per / 1e6:.2f} | {r['returned'] / per / 1e6:.2f} |")
        else:
            lines.append(f"| {r['run']} | {r['seconds']:.1f} | — | — | — | — |")
    Path(a.out).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
