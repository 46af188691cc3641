#!/usr/bin/env python3
"""Benders convergence with and without the layer copies (issue 36, spec/benders.md §5).

Random planar points (uniform in [0, n/10]², or [0, 4]² for n = 40: issue 36's instance),
ε = 2, η = 1, three k-means subsets; `mdp build benders` with the default options and with
`--copies`, one run each, at most --max-iter iterations, gap 10⁻⁶. Reported: the
iterations, the status, the loop's relative gap (UB − LB)/UB, the certified lower bound and
the wall time.

Usage:
  python3 benches/benders_convergence.py --sizes 16 20 24 40 --max-iter 60
Outputs: benches/reports/benders_convergence.md and .csv (--out NAME for another name).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

from benders_bench import BIN, run as timed, stats, write_csv

HERE = Path(__file__).resolve().parent


def points(n: int) -> list[list[float]]:
    r = random.Random(7)
    side = 4.0 if n == 40 else n / 10
    return [[round(r.uniform(0, side), 4), round(r.uniform(0, side), 4)] for _ in range(n)]


def run(space: Path, copies: bool, max_iter: int, timeout: float) -> dict:
    cmd = [str(BIN / "mdp"), "build", "benders", "--space", str(space), "--epsilon", "2", "--within", "1",
           "--partitions", "3", "--gap", "1e-6", "--max-iter", str(max_iter), "-o", "-"]
    if copies:
        cmd.append("--copies")
    r = timed(cmd, timeout)
    seconds = round(r["seconds"], 2)
    if r["code"] is None:
        return {"status": f"timeout {timeout:.0f} s", "seconds": seconds}
    st = stats(r["err"])
    if r["code"] != 0 or not st:
        return {"status": f"exit {r['code']}", "seconds": seconds}
    b = st["benders"]
    ub, lb = b["ub_float"], b["lb_float"]
    return {"status": b["status"], "iterations": b["iterations"], "seconds": seconds,
            "gap": (ub - lb) / ub, "certified_lb": st["certified_lower_bound"],
            "master_records": b["shape"]["master_records"],
            "seconds_master": round(b["seconds_master"], 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[16, 20, 24, 40])
    ap.add_argument("--max-iter", type=int, default=60)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default="benders_convergence")
    a = ap.parse_args()
    work = HERE / ".work" / "benders_convergence"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in a.sizes:
        space = work / f"planar{n}.json"
        space.write_text(json.dumps({"kind": "euclidean", "points": points(n)}))
        for copies in (True, False):
            r = run(space, copies, a.max_iter, a.timeout)
            r.update({"n": n, "copies": copies})
            rows.append(r)
            print(json.dumps(r), file=sys.stderr, flush=True)
    rep = HERE / "reports"
    write_csv(rep / f"{a.out}.csv", rows)
    L = [f"# Benders with and without layer copies ({time.strftime('%Y-%m-%d')}, `benches/benders_convergence.py`)", "",
         f"One run each, this machine (2 cores). Random planar points, ε = 2, η = 1, 3 subsets, gap 10⁻⁶, "
         f"at most {a.max_iter} iterations. gap = the loop's (UB − LB)/UB.", "",
         "| n | copies | status | iterations | gap | certified LB | wall s | master s |",
         "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        g = r.get("gap")
        L.append(f"| {r['n']} | {'yes' if r['copies'] else 'no'} | {r['status']} | {r.get('iterations', '')} | "
                 f"{'' if g is None else f'{g:.2e}'} | {r.get('certified_lb', '')} | {r['seconds']} | {r.get('seconds_master', '')} |")
    (rep / f"{a.out}.md").write_text("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
