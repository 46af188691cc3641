#!/usr/bin/env python3
"""`is_private(C, D)` in libqif's own convention (issue 53 item 4), side by side, one run.

C: the exponential mechanism exp(−D/2) row-normalized on n random points of the unit square
(seed 1), float64; D: its numpy distance table (ε = 1 folded into the metric, as libqif's
users hold it). Per n, each call is timed inside this process (perf_counter) around the
whole user-visible call, alternating metricdp and libqif, R repetitions, median reported:
* metricdp: `md.is_private(C, D)`: D read as an exact table in O(n²) (`md.distances`),
  then the exact audit;
* libqif 1.6.0: `qif.measure.d_privacy.is_private(C, qif.metric.from_distance_matrix(D))`.
Both verdicts are printed (they must agree: True).

Usage: python benches/libqif_convention.py [--n 60,1000] [--reps 5,3]
Output: Markdown rows on standard output (benches/reports/libqif_convention.md).
"""

import argparse
import platform
import statistics
import time

import numpy as np
import qif

import metricdp as md


def instance(n: int):
    p = np.random.default_rng(1).random((n, 2))
    d = np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))
    c = np.exp(-d / 2)
    return c / c.sum(axis=1, keepdims=True), d


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", default="60,1000")
    ap.add_argument("--reps", default="9,3")
    a = ap.parse_args()
    ns = [int(x) for x in a.n.split(",")]
    reps = [int(x) for x in a.reps.split(",")]
    print(f"machine: {platform.machine()}, {platform.python_version()}, numpy {np.__version__}, qif 1.6.0")
    print("| n | metricdp is_private (s, median) | libqif is_private (s, median) | ratio metricdp/libqif | verdicts |")
    print("|---|---|---|---|---|")
    for n, r in zip(ns, reps):
        c, d = instance(n)
        ours, theirs, verdicts = [], [], set()
        for _ in range(r):
            t = time.perf_counter()
            v1 = md.is_private(c, d)
            ours.append(time.perf_counter() - t)
            t = time.perf_counter()
            v2 = bool(qif.measure.d_privacy.is_private(c, qif.metric.from_distance_matrix(d)))
            theirs.append(time.perf_counter() - t)
            verdicts.add((v1, v2))
        mo, mt = statistics.median(ours), statistics.median(theirs)
        print(f"| {n} | {mo:.4g} (min {min(ours):.4g}, max {max(ours):.4g}) | {mt:.4g} (min {min(theirs):.4g}, "
              f"max {max(theirs):.4g}) | {mo / mt:.3g} | {sorted(verdicts)} |", flush=True)


if __name__ == "__main__":
    main()
