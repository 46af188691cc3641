#!/usr/bin/env python3
"""The adversary's measures side by side with libqif's `qif.measure` (issue 54 part 3), one run.

Instances (built here with metricdp, float64 matrices handed to libqif as they are):
* rome100: the exponential mechanism on the embedded Rome data set (haversine km), ε = 1/km;
* grid100: the exponential mechanism on a 10 × 10 unit grid (euclidean), ε = 1;
each under the uniform prior and a skewed one (weights 1..n). For each measure the value
of both, their difference, and whether libqif's value lies in our rigorous enclosure
(exact values: compared to their nearest double). Timings: each call timed in this process
(perf_counter), median of 5.

Usage: python benches/measures_vs_qif.py (its tables are in benches/reports/geo.md)
"""

import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import qif

import metricdp as md


def timed(f, reps=5):
    ts, out = [], None
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return out, statistics.median(ts)


def main() -> None:
    tmp = Path(tempfile.mkdtemp())
    rome = md.load_space("builtin:rome100")
    g = np.array([[i, j] for i in range(10) for j in range(10)], dtype=float)
    grid = md.space(g, "euclidean")
    print("| instance | prior | measure | metricdp | libqif | libqif − metricdp | agree |")
    print("|---|---|---|---|---|---|---|")
    times = []
    for name, space in [("rome100", rome), ("grid100", grid)]:
        mech = md.exponential(space, 1, progress=False)
        path = tmp / f"{name}.json"
        mech.save(path)
        C = np.ascontiguousarray(mech.matrix, dtype=np.float64)
        n = C.shape[0]
        D = np.array([[space.distance(i, j) for j in range(n)] for i in range(n)])
        for pname, w in [("uniform", np.ones(n)), ("skewed 1..n", np.arange(1, n + 1, dtype=float))]:
            pi = w / w.sum()
            ours, t_ours = timed(lambda: md.measure(path, prior=w.astype(int).tolist()))
            theirs = {}
            (theirs["posterior Bayes vulnerability"], t1) = timed(lambda: qif.measure.bayes_vuln.posterior(pi, C))
            (theirs["min-entropy leakage (bits)"], t2) = timed(lambda: qif.measure.bayes_vuln.min_entropy_leakage(pi, C))
            (theirs["multiplicative capacity"], t3) = timed(lambda: qif.measure.bayes_vuln.mult_capacity(C))
            (theirs["adversary's error (l_risk, L = d)"], t4) = timed(lambda: qif.measure.l_risk.posterior(D, pi, C))
            (theirs["conditional entropy (bits)"], t5) = timed(lambda: qif.measure.shannon.posterior(pi, C))
            times.append((name, pname, t_ours, t1 + t2 + t3 + t4 + t5))
            mine = {
                "posterior Bayes vulnerability": ours["bayes_vulnerability"]["posterior"],
                "min-entropy leakage (bits)": ours["min_entropy_leakage_bits"],
                "multiplicative capacity": ours["multiplicative_capacity"],
                "adversary's error (l_risk, L = d)": ours["adversary_error"],
                "conditional entropy (bits)": ours["conditional_entropy_bits"],
            }
            for k, v in mine.items():
                t = float(theirs[k])
                if isinstance(v, list):
                    shown, mid, inside = f"[{v[0]:.12g}, {v[1]:.12g}]", (v[0] + v[1]) / 2, v[0] <= t <= v[1]
                else:
                    ulps = abs(t - v) / np.spacing(v)
                    shown, mid, inside = f"{v:.12g} (exact)", v, ulps <= 8
                agree = ("in our enclosure" if isinstance(v, list) else f"within {ulps:.0f} ulp of our exact value") \
                    if inside else "NO"
                print(f"| {name} | {pname} | {k} | {shown} | {t:.12g} | {t - mid:.2e} | {agree} |")
    print()
    print("| instance | prior | metricdp: all measures, one call (s, median of 5) | libqif: the five calls (s, sum of medians) |")
    print("|---|---|---|---|")
    for name, pname, a, b in times:
        print(f"| {name} | {pname} | {a:.4g} | {b:.4g} |")


if __name__ == "__main__":
    main()
