#!/usr/bin/env python3
"""The Python package side by side with libqif, in one run, one process per measurement.

(1) Audit of the same matrices (n = 100, 1 000): the exponential mechanism on n random
    points of the unit square (Euclidean, seed 1), ε = 1, as a float64 numpy matrix C.
    * metricdp: `md.is_private(C, space, ε)` — exact verdict on the float64 matrix itself
      (space = the same points, exact); `md.smallest_epsilon(C, space)` (proven upper end);
    * libqif: `qif.measure.d_privacy.is_private(C, from_distance_matrix(ε·D))` and
      `smallest_epsilon(C, from_distance_matrix(D))` with D the float64 distance matrix
      (libqif compares floats; its D is computed by numpy, not timed).
(2) Optimal mechanism (n = 30, 50, 100; ε = 1): libqif's optimum is
    `min_loss_given_d(π uniform, n, ε·D, D)`, the least expected loss (PMO with all pairs,
    Qiu 2024 §2.2); metricdp: `md.pmo(space, ε)` (same LP, certified, exact repair and dual
    certificate) and `md.optimal(space, ε)` (OPTMech, the worst-case loss) for reference.
    The expected losses of both answers are computed by numpy on their float64 matrices.
(3) The binding's overhead against the Rust binary on the same work: `mdp build optimal`
    and `mdp-audit` as processes vs the same calls from Python (`md.optimal(md.load_space
    (FILE), ε).save(OUT)`, `md.audit(PATH)`), whole processes, 5 runs each alternating,
    minus the Python start-up (`import metricdp`, measured the same way).

Each measurement runs in a fresh worker process (`--worker`), timed inside around the call
only (perf_counter), 3 repetitions (libqif's optimum at n ≥ 100: 1), median reported; (3)
times whole processes.

Usage (after `bash benches/setup.sh`, which also builds and installs the wheel):
  benches/.venv/bin/python benches/python_bench.py
Output: benches/reports/python_vs_qif.md and .csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WORK = HERE / ".work" / "python_bench"
MDP = REPO / "target" / "release" / "mdp"
MDP_AUDIT = REPO / "target" / "release" / "mdp-audit"
RESUME = False


def points(n: int, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).random((n, 2))


def distances(p: np.ndarray) -> np.ndarray:
    return np.sqrt(((p[:, None, :] - p[None, :, :]) ** 2).sum(-1))


# ---------------------------------------------------------------- workers (one per process)


def worker(task: dict) -> dict:
    n, eps = task["n"], task["eps"]
    p = points(n)
    D = distances(p)
    what = task["what"]
    if what.startswith("qif"):
        import qif
    if what.startswith("md"):
        import metricdp as md

        space = md.space(p, "euclidean")
    if what in ("qif_audit", "md_audit"):
        C = np.load(task["matrix"])
    t = time.perf_counter()
    out: dict = {}
    if what == "md_audit":
        out["private"] = md.is_private(C, space, eps, progress=False)
        out["s_private"] = time.perf_counter() - t
        t = time.perf_counter()
        out["smallest_eps"] = md.smallest_epsilon(C, space, progress=False)
        out["s_smallest"] = time.perf_counter() - t
    elif what == "qif_audit":
        d = qif.metric.from_distance_matrix(eps * D)
        t = time.perf_counter()
        out["private"] = bool(qif.measure.d_privacy.is_private(C, d))
        out["s_private"] = time.perf_counter() - t
        d1 = qif.metric.from_distance_matrix(D)
        t = time.perf_counter()
        out["smallest_eps"] = float(qif.measure.d_privacy.smallest_epsilon(C, d1))
        out["s_smallest"] = time.perf_counter() - t
    elif what == "qif_opt":
        pi = np.full(n, 1.0 / n)
        C = qif.mechanism.d_privacy.min_loss_given_d(pi, n, qif.metric.from_distance_matrix(eps * D),
                                                      qif.metric.from_distance_matrix(D))
        out["s"] = time.perf_counter() - t
        out["expected_loss"] = float((C * D).sum() / n)
        out["qif_is_private"] = bool(qif.measure.d_privacy.is_private(C, qif.metric.from_distance_matrix(eps * D)))
    elif what in ("md_pmo", "md_optimal"):
        m = (md.pmo if what == "md_pmo" else md.optimal)(space, eps, progress=False)
        out["s"] = time.perf_counter() - t
        C = m.matrix
        out["expected_loss"] = float((C * D).sum() / n)
        out["gap"] = m.report.gap
        out["verdict"] = m.report.verdict
    return out


def run_worker(task: dict) -> dict:
    r = subprocess.run([sys.executable, __file__, "--worker", json.dumps(task)],
                       capture_output=True, text=True, timeout=3600)
    if r.returncode != 0:
        return {"error": r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"exit {r.returncode}"}
    return json.loads(r.stdout.strip().splitlines()[-1])


CACHE = WORK / "measurements.json"


def median_of(task: dict, reps: int, key: str) -> dict:
    """The median over `reps` worker runs; kept in CACHE (a re-run with --resume reuses
    finished measurements)."""
    cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    tag = json.dumps(task, sort_keys=True)
    if RESUME and tag in cache:
        return cache[tag]
    runs = [run_worker(task) for _ in range(reps)]
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return runs[0]
    best = dict(ok[0])
    for k in [k for k in ok[0] if k.startswith("s")]:
        best[k] = statistics.median(r[k] for r in ok)
    best["runs"] = len(ok)
    cache = json.loads(CACHE.read_text()) if CACHE.exists() else {}
    cache[tag] = best
    CACHE.write_text(json.dumps(cache, indent=1))
    return best


# ---------------------------------------------------------------- whole-process timing


def wall(cmd: list, reps: int) -> list:
    out = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        out.append(time.perf_counter() - t)
    return out


def overhead(n: int, eps: float, reps: int) -> dict:
    """Whole processes, alternating A/B: the CLI vs Python on the same work."""
    WORK.mkdir(parents=True, exist_ok=True)
    p = points(n)
    csv_path = WORK / f"pts{n}.csv"
    csv_path.write_text("label,x,y\n" + "".join(f"p{i},{float(x)!r},{float(y)!r}\n" for i, (x, y) in enumerate(p)))
    out_cli, out_py = WORK / f"cli{n}.json", WORK / f"py{n}.json"
    cli_build = [str(MDP), "build", "optimal", "--space", str(csv_path), "--epsilon", repr(eps), "-o", str(out_cli), "--quiet"]
    py_build = [sys.executable, "-c",
                f"import metricdp as md; md.optimal(md.load_space({str(csv_path)!r}), {eps!r}, progress=False).save({str(out_py)!r})"]
    cli_audit = [str(MDP_AUDIT), "--quiet", str(out_cli)]
    py_audit = [sys.executable, "-c", f"import metricdp as md; assert md.audit({str(out_cli)!r}, progress=False).passed"]
    py_import = [sys.executable, "-c", "import metricdp"]
    res = {"n": n}
    for name, a, b in [("build", cli_build, py_build), ("audit", cli_audit, py_audit)]:
        wall(a, 1), wall(b, 1)  # warm-up
        ta, tb = [], []
        for _ in range(reps):
            ta += wall(a, 1)
            tb += wall(b, 1)
        res[f"{name}_cli_s"] = statistics.median(ta)
        res[f"{name}_py_s"] = statistics.median(tb)
    res["import_s"] = statistics.median(wall(py_import, reps))
    for name in ("build", "audit"):
        res[f"{name}_overhead"] = (res[f"{name}_py_s"] - res["import_s"]) / res[f"{name}_cli_s"] - 1
        res[f"{name}_overhead_whole"] = res[f"{name}_py_s"] / res[f"{name}_cli_s"] - 1
    res["same_file"] = out_cli.read_bytes() == out_py.read_bytes()
    return res


# ---------------------------------------------------------------- main


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker")
    ap.add_argument("--audit-sizes", type=int, nargs="*", default=[100, 1000])
    ap.add_argument("--opt-sizes", type=int, nargs="*", default=[30, 50, 100])
    ap.add_argument("--overhead-sizes", type=int, nargs="*", default=[60, 100])
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out-prefix", default="python_vs_qif")
    ap.add_argument("--resume", action="store_true", help="reuse measurements of an earlier run (same tasks)")
    a = ap.parse_args()
    global RESUME
    RESUME = a.resume
    if a.worker:
        print(json.dumps(worker(json.loads(a.worker))))
        return
    import metricdp as md
    import qif

    WORK.mkdir(parents=True, exist_ok=True)
    eps = 1.0
    rows = []
    for n in a.audit_sizes:
        space = md.space(points(n), "euclidean")
        C = md.exponential(space, eps, progress=False).matrix
        path = WORK / f"exp{n}.npy"
        np.save(path, C)
        task = {"n": n, "eps": eps, "matrix": str(path)}
        m = median_of({**task, "what": "md_audit"}, a.reps, "s_private")
        q = median_of({**task, "what": "qif_audit"}, a.reps, "s_private")
        rows.append({"part": "audit", "n": n, "md_s": m.get("s_private"), "qif_s": q.get("s_private"),
                     "ratio_qif_over_md": q.get("s_private", float("nan")) / m.get("s_private", float("nan")),
                     "md_result": m.get("private"), "qif_result": q.get("private"),
                     "md_smallest_s": m.get("s_smallest"), "qif_smallest_s": q.get("s_smallest"),
                     "md_smallest": m.get("smallest_eps"), "qif_smallest": q.get("smallest_eps")})
        print(rows[-1], flush=True)
    for n in a.opt_sizes:
        task = {"n": n, "eps": eps}
        p_ = median_of({**task, "what": "md_pmo"}, a.reps, "s")
        o_ = median_of({**task, "what": "md_optimal"}, a.reps, "s")
        # libqif's LP at n ≥ 100 runs for minutes (one run is enough to rank it).
        q = median_of({**task, "what": "qif_opt"}, a.reps if n < 100 else 1, "s")
        rows.append({"part": "optimal", "n": n, "md_s": p_.get("s"), "qif_s": q.get("s"),
                     "ratio_qif_over_md": q.get("s", float("nan")) / p_.get("s", float("nan")),
                     "md_result": p_.get("expected_loss"), "qif_result": q.get("expected_loss"),
                     "md_gap": p_.get("gap"), "qif_is_private": q.get("qif_is_private"),
                     "md_optimal_s": o_.get("s"), "md_optimal_expected_loss": o_.get("expected_loss"),
                     "error": q.get("error") or p_.get("error")})
        print(rows[-1], flush=True)
    over = []
    for n in a.overhead_sizes:
        over.append(overhead(n, 2.0, 5))
        print(over[-1], flush=True)
    write(a.out_prefix, rows, over, md.__version__, qif)


def write(prefix: str, rows: list, over: list, md_version: str, qif) -> None:
    rep = HERE / "reports"
    with open(rep / f"{prefix}.csv", "w", newline="") as f:
        keys = sorted({k for r in rows for k in r})
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    L = ["# metricdp (Python) vs libqif, and the binding's overhead", ""]
    L.append(f"Machine: {os.cpu_count()} cores, {platform.platform()}, Python {platform.python_version()}, "
             f"numpy {np.__version__}, metricdp {md_version}, qif {getattr(qif, '__version__', '1.6.0')}. "
             "Generated by `benches/python_bench.py` (its docstring says what is timed).")
    L.append("")
    L.append("## Audit of the same float64 matrices (exponential mechanism, ε = 1)")
    L.append("")
    L.append("| n | metricdp is_private (s) | libqif is_private (s) | libqif / metricdp | verdicts | metricdp smallest_epsilon (s) | libqif smallest_epsilon (s) | smallest ε (metricdp, proven upper end / libqif) |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["part"] != "audit":
            continue
        L.append(f"| {r['n']} | {r['md_s']:.4f} | {r['qif_s']:.4f} | {r['ratio_qif_over_md']:.2f} | "
                 f"{r['md_result']} / {r['qif_result']} | {r['md_smallest_s']:.4f} | {r['qif_smallest_s']:.4f} | "
                 f"{r['md_smallest']:.12g} / {r['qif_smallest']:.12g} |")
    L.append("")
    L.append("## Optimal mechanism (least expected loss, uniform prior, all pairs, ε = 1)")
    L.append("")
    L.append("| n | metricdp pmo (s) | libqif min_loss_given_d (s) | libqif / metricdp | expected loss metricdp / libqif | metricdp certified gap (expected loss) | libqif's answer passes its own is_private | metricdp optimal (OPTMech, s) |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        if r["part"] != "optimal":
            continue
        if r.get("qif_s") is None:
            L.append(f"| {r['n']} | {r['md_s']:.3f} | failed: {r.get('error')} | | | {r['md_gap']:.2e} | | {r['md_optimal_s']:.3f} |")
            continue
        L.append(f"| {r['n']} | {r['md_s']:.3f} | {r['qif_s']:.3f} | {r['ratio_qif_over_md']:.1f} | "
                 f"{r['md_result']:.10f} / {r['qif_result']:.10f} | {r['md_gap']:.2e} | {r['qif_is_private']} | {r['md_optimal_s']:.3f} |")
    L.append("")
    L.append("## The binding's overhead against the Rust binary (whole processes, median of 5, alternating)")
    L.append("")
    L.append("Work: OPTMech on n random planar points at ε = 2 from a CSV file, written to a file "
             "(`mdp build optimal` vs `md.optimal(md.load_space(FILE)).save(OUT)`), then the audit of "
             "that file (`mdp-audit` vs `md.audit(PATH)`). Overhead = (Python process − `import metricdp` "
             "process) / CLI process − 1; 'whole' leaves the interpreter's start-up in.")
    L.append("")
    L.append("| n | build: CLI (s) | build: Python (s) | overhead | whole | audit: CLI (s) | audit: Python (s) | overhead | whole | `import metricdp` (s) | same file bytes |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for o in over:
        L.append(f"| {o['n']} | {o['build_cli_s']:.3f} | {o['build_py_s']:.3f} | {100 * o['build_overhead']:+.1f} % | "
                 f"{100 * o['build_overhead_whole']:+.1f} % | {o['audit_cli_s']:.3f} | {o['audit_py_s']:.3f} | "
                 f"{100 * o['audit_overhead']:+.1f} % | {100 * o['audit_overhead_whole']:+.1f} % | {o['import_s']:.3f} | {o['same_file']} |")
    (rep / f"{prefix}.md").write_text("\n".join(L) + "\n")
    print(f"wrote {rep / prefix}.md")


if __name__ == "__main__":
    main()
