#!/usr/bin/env python3
"""The localized PMO LP's Schur complement, dense against sparse (issue 56).

On the instances of `benders_growth.py` (N random Rome road nodes, haversine km, η = 2 km,
ε = 10 per km, K = 100 random outputs, cost = distance), `mdp build pmo --gap 1e-6` runs
twice per N, with the Schur complement Σ_k B_k⁻¹ factored dense (faer's dense Cholesky,
`MDP_SCHUR=dense`) and sparse (faer's supernodal Cholesky after AMD, `MDP_SCHUR=sparse`),
under /usr/bin/time -v. Reported per run: the Schur pattern's entries and the factor's
storage (from the build's note), interior-point iterations and seconds, whole-command wall
seconds and peak memory, the certified lower bound and the audited expected loss.

Usage:
  benches/.venv/bin/python benches/schur_sparse.py --sizes 1000 2000 5000
Writes benches/reports/schur_sparse.csv (the rows); the reading is in schur_sparse.md.
Run nothing else on the machine meanwhile (2 cores): the timings are wall clocks.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from benders_growth import instance  # noqa: E402

MDP = HERE.parent / "target" / "release" / "mdp"


def one(n: int, mode: str, work: Path, limit: float) -> dict:
    args = instance(n, work)
    out = work / f"pmo{n}_{mode}.json"
    cmd = ["/usr/bin/time", "-v", str(MDP), "build", "pmo", *args, "--gap", "1e-6",
           "--max-entries", str(max(n * n, 10**6)), "-o", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit,
                       env={**os.environ, "MDP_SCHUR": mode})
    err = p.stderr
    row: dict = {"n": n, "schur": mode, "exit": p.returncode}
    m = re.search(r"Schur complement \d+×\d+: (\d+) entries in its lower triangle \(([\d.]+) %\), "
                  r"its Cholesky factor after AMD stored in (\d+) \(([\d.]+) %", err)
    if m:
        row |= {"pattern_entries": int(m[1]), "pattern_share": float(m[2]),
                "factor_entries": int(m[3]), "factor_share": float(m[4])}
    m = re.search(r"converged: relative gap \S+ in (\d+) iterations \(([\d.]+) s\)", err)
    if m:
        row |= {"iterations": int(m[1]), "ipm_seconds": float(m[2]),
                "seconds_per_iteration": round(float(m[2]) / int(m[1]), 3)}
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", err)
    if m:
        parts = [float(x) for x in m[1].split(":")]
        row["wall_seconds"] = round(sum(x * 60 ** i for i, x in enumerate(reversed(parts))), 1)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    if m:
        row["peak_gb"] = round(int(m[1]) / 1e6, 2)
    stats = [l for l in err.splitlines() if l.startswith("stats: ")]
    if stats:
        s = json.loads(stats[-1][7:])
        row |= {"certified_lower_bound": s.get("certified_lower_bound"),
                "expected_loss_upper": (s.get("expected_loss") or [None, None])[1]}
    return row


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--work", default="/tmp/schur_sparse")
    ap.add_argument("--limit", type=float, default=1800.0)
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for n in a.sizes:
        for mode in ("sparse", "dense"):
            r = one(n, mode, work, a.limit)
            print(json.dumps(r), flush=True)
            rows.append(r)
    keys = sorted({k for r in rows for k in r}, key=lambda k: list(rows[0]).index(k) if k in rows[0] else 99)
    path = HERE / "reports" / "schur_sparse.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
