#!/usr/bin/env python3
"""Growth benchmark: `mdp-audit` (exact) vs libqif's `is_private` (float) vs plain numpy.

For each n: n random points in the unit square (Euclidean metric, fixed seed), the
exponential mechanism H[u][w] ∝ exp(−ε·d(u,w)/2) (float64, rows normalized), written as an
`mdp/1` file (every number is repr(float): the shortest decimal that round-trips to the
same double; `mdp-audit` reads that decimal exactly). Then, on that one file:

  (i)   `mdp-audit --json FILE`, timed end to end (process wall clock; the report's own
        stats.seconds_* are shown too);
  (ii)  qif.measure.d_privacy.is_private(C, d) with d = from_distance_matrix(ε·D), timed
        without the loading (JSON parse + distance matrix), which is reported separately;
        qif.measure.d_privacy.smallest_epsilon(C, D) is timed too (qif's tight ε);
  (iii) a vectorized numpy float check (max_w log H[u][w] − log H[v][w] − ε·d(u,v) over all
        pairs, strict, no tolerance), for reference.

Then one violation is planted: the tightest triple (u, v, w) of the clean matrix gets
H[u][w] := e^{ε·d(u,v)}·H[v][w]·(1 + rel) (rel = --plant-rel, default 1e-6), and the added
mass is taken from the other entries of row u, each within its own slack, so the row still
sums to 1 (to float rounding) and no other constraint is broken. The planted triple's
excess is re-derived exactly (fractions + 60-digit decimals) from the file's decimals, and
each tool is asked whether it sees a violation.

Usage:
  bash benches/setup.sh
  benches/.venv/bin/python benches/audit_bench.py --sizes 250 500
Outputs: benches/reports/audit_growth.md and .csv (name prefix: --out-prefix).
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import decimal
import json
import math
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

try:
    import qif  # libqif's Python bindings (PyPI: qif)
except Exception as e:  # pragma: no cover - reported, not fatal
    qif = None
    QIF_IMPORT_ERROR = f"{type(e).__name__}: {e}"
else:
    QIF_IMPORT_ERROR = None


# --------------------------------------------------------------------------- generation

def make_points(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, n])
    return rng.random((n, 2))


def euclid(points: np.ndarray) -> np.ndarray:
    diff = points[:, None, :] - points[None, :, :]
    return np.sqrt((diff * diff).sum(axis=-1))


def exponential_mechanism(D: np.ndarray, eps: float) -> np.ndarray:
    H = np.exp(-eps * D / 2.0)
    H /= H.sum(axis=1, keepdims=True)
    return H


def write_mdp(path: Path, eps: float, points: np.ndarray, H: np.ndarray, meta: dict) -> int:
    """Writes an mdp/1 file; floats go through repr (json's float formatting), so parsing
    the file back gives the very same doubles. Returns the file size in bytes."""
    doc = {
        "format": "mdp/1",
        "epsilon": float(eps),
        "metric": {"kind": "euclidean", "points": points.tolist()},
        "matrix": H.tolist(),
        "meta": meta,
    }
    with open(path, "w") as f:
        json.dump(doc, f, allow_nan=False, separators=(",", ":"))
        f.write("\n")
    return path.stat().st_size


def load_mdp(path: Path):
    """Loads an mdp/1 file as float64 arrays (euclidean metric only): (eps, points, C, D)."""
    with open(path) as f:
        doc = json.load(f)
    if doc.get("metric", {}).get("kind") != "euclidean":
        raise ValueError("this benchmark only loads euclidean mdp/1 files")
    points = np.asarray(doc["metric"]["points"], dtype=np.float64)
    C = np.asarray(doc["matrix"], dtype=np.float64)
    return float(doc["epsilon"]), points, C, euclid(points)


# --------------------------------------------------------------------------- numpy check

def numpy_check(C: np.ndarray, D: np.ndarray, eps: float, block_elems: int = 1 << 24) -> dict:
    """Plain float check of C[u][w] <= e^{eps d(u,v)} C[v][w] for all u != v, w, in log
    form: excess(u,v) = max_w (log C[u,w] - log C[v,w]) - eps d(u,v). Strict (> 0 is a
    violation), no tolerance. Also the float tight epsilon max_{u!=v} maxlog(u,v)/d(u,v)."""
    n, K = C.shape
    with np.errstate(divide="ignore"):
        L = np.log(C)
    b = max(1, block_elems // max(1, n * K))
    best = (-math.inf, -1, -1)
    n_viol_pairs = 0
    eps_tight = 0.0
    for s in range(0, n, b):
        e = min(n, s + b)
        with np.errstate(invalid="ignore"):
            m = (L[s:e, None, :] - L[None, :, :]).max(axis=2)  # (b, n)
        # both rows zero at w gives nan (-inf - -inf): such w constrain nothing
        m = np.where(np.isnan(m), -math.inf, m)
        idx = np.arange(s, e)
        m[idx - s, idx] = -math.inf  # u == v
        excess = m - eps * D[s:e]
        n_viol_pairs += int((excess > 0).sum())
        k = int(np.argmax(excess))
        bu, bv = divmod(k, n)
        if excess[bu, bv] > best[0]:
            best = (float(excess[bu, bv]), s + bu, bv)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.where(D[s:e] > 0, m / D[s:e], np.where(m > 0, math.inf, 0.0))
        eps_tight = max(eps_tight, float(np.max(r)))
    _, u, v = best
    w = int(np.argmax(L[u] - L[v])) if u >= 0 else -1
    return {"max_excess": best[0], "u": u, "v": v, "w": w,
            "violating_pairs": n_viol_pairs, "eps_tight": eps_tight}


# --------------------------------------------------------------------------- planting

def plant(H: np.ndarray, D: np.ndarray, eps: float, u: int, v: int, w: int, rel: float):
    """Raises H[u][w] to e^{eps d(u,v)} H[v][w] (1+rel); takes the added mass from the
    other entries of row u, each lowered by at most half of its own slack
    (H[u][w'] >= max_{v'} e^{-eps d(u,v')} H[v'][w'])."""
    P = H.copy()
    new = H[v, w] * math.exp(eps * D[u, v]) * (1.0 + rel)
    added = new - H[u, w]
    if added <= 0:
        raise RuntimeError("planting would not raise the entry")
    lower = (H * np.exp(-eps * D[u])[:, None])  # row v' -> e^{-eps d(u,v')} H[v'][.]
    lower[u] = 0.0
    floor = lower.max(axis=0)
    room = np.maximum(H[u] - floor, 0.0) * 0.5
    room[w] = 0.0
    total = float(room.sum())
    if total < added:
        raise RuntimeError(f"row {u} has too little slack ({total:.3g} < {added:.3g})")
    P[u] -= room * (added / total)
    P[u, w] = new
    return P, {"u": u, "v": v, "w": w, "rel": rel, "old": float(H[u, w]), "new": float(new),
               "added_mass": float(added), "row_sum_dev": float(abs(P[u].sum() - 1.0))}


def exact_excess(eps: float, points: np.ndarray, M: np.ndarray, u: int, v: int, w: int,
                 digits: int = 60) -> float:
    """Exact (fractions, then 60-digit decimals) value of
    (M[u][w]/S_u) / (e^{eps d(u,v)} M[v][w]/S_v) - 1 for the numbers *as written* in the
    file: json writes every float as float.__repr__, so Fraction(repr(x)) is exactly the
    decimal that mdp-audit reads; rows are normalized exactly, as mdp-audit does."""
    q = lambda x: Fraction(repr(float(x)))
    Su = sum((q(x) for x in M[u]), Fraction(0))
    Sv = sum((q(x) for x in M[v]), Fraction(0))
    d2 = sum((q(a) - q(b)) ** 2 for a, b in zip(points[u], points[v]))
    ctx = decimal.Context(prec=digits)
    dec = lambda r: ctx.divide(decimal.Decimal(r.numerator), decimal.Decimal(r.denominator))
    d = ctx.sqrt(dec(d2))
    bound = ctx.exp(ctx.multiply(dec(q(eps)), d))
    lhs = dec(q(M[u, w]) / Su)
    rhs = ctx.multiply(bound, dec(q(M[v, w]) / Sv))
    return float(ctx.subtract(ctx.divide(lhs, rhs), decimal.Decimal(1)))


# --------------------------------------------------------------------------- tools

def run_audit(bin_path: Path, file: Path, timeout: float, file_bytes: int, entries: int) -> dict:
    """Runs `mdp-audit --json FILE`; returns wall time, exit code, peak RSS and the parsed
    report (robust to missing fields and to non-JSON output)."""
    if not (bin_path.is_file() and os.access(bin_path, os.X_OK)):
        return {"status": "skipped", "note": f"binary not found: {bin_path}"}
    cmd = [str(bin_path), "--json"]
    # only pass the limits when the defaults (256 MiB, 16M entries) would refuse the file
    if file_bytes > (256 << 20):
        cmd += ["--max-bytes", str(file_bytes + 1)]
    if entries > 16_000_000:
        cmd += ["--max-entries", str(entries)]
    cmd.append(str(file))
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        timed_out = threading.Event()

        def _kill():
            timed_out.set()
            p.kill()

        timer = threading.Timer(timeout, _kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
        wall = time.perf_counter() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    res = {"status": "ran", "cmd": " ".join(cmd), "wall": wall, "exit": p.returncode,
           "maxrss_mb": ru.ru_maxrss / 1024.0, "stderr": stderr.strip()[-2000:]}
    if timed_out.is_set():
        res["status"] = "timeout"
        res["note"] = f"killed after {timeout:.0f} s"
        return res
    try:
        rep = json.loads(stdout)
    except ValueError:
        res["status"] = "no-json"
        res["note"] = (f"exit {p.returncode}; stdout not JSON: {stdout.strip()[:200]!r}; "
                       f"stderr: {stderr.strip()[:300]!r}")
        return res
    res["report"] = rep
    stats = rep.get("stats") or {}
    res["verdict"] = rep.get("verdict", f"exit {p.returncode}")
    res["epsilon_tight"] = rep.get("epsilon_tight")
    res["epsilon_delta_tight"] = rep.get("epsilon_delta_tight")
    res["stats"] = stats
    wit = None
    for c in rep.get("checks") or []:
        if isinstance(c, dict) and c.get("witness"):
            wit = {"check": c.get("name"), **c["witness"]} if isinstance(c["witness"], dict) else c["witness"]
            break
    res["witness"] = wit
    return res


def qif_is_private(C: np.ndarray, D: np.ndarray, eps: float) -> dict:
    t0 = time.perf_counter()
    d = qif.metric.from_distance_matrix(eps * D)  # ε is part of the metric in libqif
    t1 = time.perf_counter()
    ok = bool(qif.measure.d_privacy.is_private(C, d))
    t2 = time.perf_counter()
    return {"private": ok, "seconds": t2 - t1, "seconds_metric": t1 - t0}


def qif_smallest_epsilon(C: np.ndarray, D: np.ndarray) -> dict:
    d = qif.metric.from_distance_matrix(D)
    t0 = time.perf_counter()
    e = float(qif.measure.d_privacy.smallest_epsilon(C, d))
    return {"eps": e, "seconds": time.perf_counter() - t0}


# --------------------------------------------------------------------------- reporting

def machine_info(audit_bin: Path) -> dict:
    info = {"nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal"):
                    info["mem_gib"] = round(int(line.split()[1]) / 2**20, 1)
                    break
    except OSError:
        pass
    info["loadavg_at_start"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    info["os"] = platform.platform()
    info["python"] = platform.python_version()
    info["numpy"] = np.__version__
    info["qif"] = getattr(qif, "__version__", None) if qif else f"unavailable ({QIF_IMPORT_ERROR})"
    if audit_bin.is_file():
        try:
            v = subprocess.run([str(audit_bin), "--version"], capture_output=True, text=True, timeout=30)
            info["mdp_audit"] = (v.stdout or v.stderr).strip() or f"exit {v.returncode}"
        except Exception as e:
            info["mdp_audit"] = f"--version failed: {e}"
        info["mdp_audit_mtime"] = _dt.datetime.fromtimestamp(audit_bin.stat().st_mtime).isoformat(timespec="seconds")
    else:
        info["mdp_audit"] = f"not found ({audit_bin})"
    return info


def fmt_s(x):
    return "—" if x is None else (f"{x:.3f}" if x < 100 else f"{x:.1f}")


def fmt_enc(e):
    if not isinstance(e, (list, tuple)) or len(e) != 2:
        return "—"
    lo, hi = e
    lo_s = "?" if lo is None else f"{lo:.9g}"
    hi_s = "∞" if hi is None else f"{hi:.9g}"
    return f"[{lo_s}, {hi_s}]"


def yesno(b):
    return "—" if b is None else ("yes" if b else "NO")


CSV_FIELDS = [
    "n", "K", "triples", "file_mb", "gen_s", "write_s", "load1",
    "mdp_status", "mdp_verdict", "mdp_wall_s", "mdp_seconds_total", "mdp_seconds_prepare",
    "mdp_seconds_pure", "mdp_seconds_tight", "mdp_seconds_delta", "mdp_seconds_loss",
    "mdp_exact_triple_fraction", "mdp_exact_pairs_pure", "mdp_maxrss_mb",
    "mdp_eps_tight_lo", "mdp_eps_tight_hi", "mdp_eps_delta_tight_lo", "mdp_eps_delta_tight_hi",
    "qif_load_s", "qif_s", "qif_private", "qif_smallest_eps", "qif_smallest_eps_s", "ratio_qif_over_mdp",
    "ratio_qif_over_mdp_pure",
    "numpy_s", "numpy_violating_pairs", "numpy_max_excess", "numpy_eps_tight",
    "plant_u", "plant_v", "plant_w", "plant_rel", "plant_exact_excess", "plant_clean_exact_excess",
    "plant_mdp_verdict", "plant_mdp_wall_s", "plant_mdp_witness", "plant_mdp_detected",
    "plant_qif_private", "plant_qif_s", "plant_qif_detected",
    "plant_numpy_violating_pairs", "plant_numpy_max_excess", "plant_numpy_s", "plant_numpy_detected",
]


def write_reports(rows, info, args, out_dir: Path, prefix: str, notes):
    out_dir.mkdir(parents=True, exist_ok=True)
    csv_path = out_dir / f"{prefix}.csv"
    with open(csv_path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=CSV_FIELDS, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            wr.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in CSV_FIELDS})

    plant_fields = ["n"] + [k for k in CSV_FIELDS if k.startswith("plant_")] + ["plant_mdp_status", "plant_note"]
    with open(out_dir / f"{prefix}_plants.csv", "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=plant_fields, extrasaction="ignore")
        wr.writeheader()
        for r in rows:
            for pr in r.get("plants") or []:
                wr.writerow({k: ("" if pr.get(k) is None else pr.get(k)) for k in plant_fields})

    L = []
    L.append("# mdp-audit vs libqif `is_private`: growth in n")
    L.append("")
    L.append(f"Generated {_dt.datetime.now().isoformat(timespec='seconds')} by "
             f"`benches/audit_bench.py {' '.join(sys.argv[1:])}`.")
    L.append("")
    L.append("## Machine")
    L.append("")
    for k in ("nproc", "cpu", "mem_gib", "loadavg_at_start", "os", "python", "numpy", "qif", "mdp_audit", "mdp_audit_mtime"):
        if k in info:
            L.append(f"- {k}: {info[k]}")
    L.append("")
    L.append("## Setup")
    L.append("")
    L.append(f"- n random points in the unit square (numpy default_rng([{args.seed}, n])), Euclidean metric; "
             f"K = n outputs (the inputs).")
    L.append(f"- Exponential mechanism H[u][w] ∝ exp(−ε·d(u,w)/2), ε = {args.epsilon:g}, float64, rows normalized; "
             f"written as `mdp/1` with repr(float) numbers (read exactly by mdp-audit, bit-identically by the others).")
    L.append("- mdp-audit: wall clock of `mdp-audit --json FILE` (process start to exit, parsing included); "
             "`seconds_total`/`seconds_pure` are from its report.")
    L.append("- qif: `qif.measure.d_privacy.is_private(C, qif.metric.from_distance_matrix(ε·D))` on the loaded "
             "float64 arrays; load (JSON parse + distance matrix) is timed separately. libqif compares "
             "max_w |ln C[u][w] − ln C[v][w]| ≤ ε·d(u,v) with a relative tolerance of 100·DBL_EPSILON ≈ 2.2e-14 "
             "(absolute 1e-7 when a side is 0). Single-threaded.")
    L.append("- numpy: max_w (ln H[u][w] − ln H[v][w]) − ε·d(u,v) over all pairs, blocked broadcasting, strict (> 0), "
             "no tolerance.")
    L.append(f"- Planted violation: the clean matrix's tightest triple (u, v, w) gets H[u][w] := e^(ε·d(u,v))·H[v][w]·"
             f"(1 + rel), rel ∈ {{{', '.join(f'{x:g}' for x in args.plant_rel)}}}; the added mass is taken from row u's other entries within their slack, so "
             "rows still sum to 1 and no other constraint breaks. 'exact excess' is that triple's "
             "(H[u][w]/S_u)/(e^(εd)·H[v][w]/S_v) − 1 computed exactly from the file's decimals.")
    if args.repeat > 1:
        L.append(f"- Clean-matrix timings are the minimum of {args.repeat} runs (planted runs: one run).")
    L.append("- load1 (1-minute load average before each size) is in the CSV: other work on the machine inflates timings.")
    L.append("- triples = n·(n−1)·K ordered (u, v, w) with u ≠ v. ratio (wall) = qif is_private seconds / mdp-audit "
             "wall seconds; mdp-audit's wall also covers JSON parsing, the tight ε enclosure, the (ε,δ) tight ε and the "
             "loss figures, which qif's is_private does not compute; ratio pure = qif seconds / mdp-audit stats.seconds_pure "
             "(its exact pure ε·d check alone).")
    L.append("")
    L.append("## Results (clean exponential mechanism: expected verdict pass)")
    L.append("")
    L.append("| n | triples | mdp-audit s (wall) | mdp seconds_total / pure | exact fraction | qif s | qif load s "
             "| ratio qif/mdp (wall) | ratio qif/mdp pure | numpy s | mdp RSS MiB | verdict mdp | verdict qif | verdict numpy | tight ε: mdp-audit | qif smallest_epsilon |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        mdp_v = r.get("mdp_verdict") or r.get("mdp_status")
        L.append("| {n} | {tr:.3g} | {mw} | {st} / {sp} | {ef} | {qs} | {ql} | {ratio} | {ratio_p} | {ns} | {rss} | {mv} | {qv} | {nv} | {me} | {qe} |".format(
            n=r["n"], tr=r["triples"], mw=fmt_s(r.get("mdp_wall_s")),
            st=fmt_s(r.get("mdp_seconds_total")), sp=fmt_s(r.get("mdp_seconds_pure")),
            ef="—" if r.get("mdp_exact_triple_fraction") is None else f"{r['mdp_exact_triple_fraction']:.3g}",
            qs=fmt_s(r.get("qif_s")), ql=fmt_s(r.get("qif_load_s")),
            ratio="—" if r.get("ratio_qif_over_mdp") is None else f"{r['ratio_qif_over_mdp']:.2f}",
            ratio_p="—" if r.get("ratio_qif_over_mdp_pure") is None else f"{r['ratio_qif_over_mdp_pure']:.1f}",
            rss="—" if r.get("mdp_maxrss_mb") is None else f"{r['mdp_maxrss_mb']:.0f}",
            ns=fmt_s(r.get("numpy_s")), mv=mdp_v,
            qv="—" if r.get("qif_private") is None else ("pass" if r["qif_private"] else "fail"),
            nv="—" if r.get("numpy_violating_pairs") is None else ("pass" if r["numpy_violating_pairs"] == 0 else f"fail ({r['numpy_violating_pairs']} pairs)"),
            me=fmt_enc([r.get("mdp_eps_tight_lo"), r.get("mdp_eps_tight_hi")]) if r.get("mdp_status") == "ran" else "—",
            qe="—" if r.get("qif_smallest_eps") is None else f"{r['qif_smallest_eps']:.9g}",
        ))
    L.append("")
    L.append("## Planted violation: detected?")
    L.append("")
    L.append("| n | rel | triple (u, v, w) | exact excess (clean → planted) | mdp-audit | mdp witness | qif | numpy (pairs, max log excess) |")
    L.append("|---|---|---|---|---|---|---|---|")
    for r in rows:
        for pr in r.get("plants") or [{}]:
            if pr.get("plant_u") is None:
                L.append(f"| {r['n']} | {pr.get('plant_rel', '—')} | — | {pr.get('plant_note', 'not planted')} | | | | |")
                continue
            mv = pr.get("plant_mdp_verdict") or pr.get("plant_mdp_status")
            if pr.get("plant_mdp_detected") is not None:
                mv = f"{mv} ({'detected' if pr['plant_mdp_detected'] else 'MISSED'}, {fmt_s(pr.get('plant_mdp_wall_s'))} s)"
            qv = "—"
            if pr.get("plant_qif_private") is not None:
                qv = f"{'MISSED (private)' if pr['plant_qif_private'] else 'detected (not private)'}, {fmt_s(pr.get('plant_qif_s'))} s"
            nv = "—"
            if pr.get("plant_numpy_violating_pairs") is not None:
                nv = (f"{'detected' if pr['plant_numpy_violating_pairs'] else 'MISSED'} "
                      f"({pr['plant_numpy_violating_pairs']}, {pr['plant_numpy_max_excess']:.3g})")
            L.append("| {n} | {rel:g} | ({u}, {v}, {w}) | {c:.3g} → {e:.3g} | {mv} | {wit} | {qv} | {nv} |".format(
                n=r["n"], rel=pr["plant_rel"], u=pr["plant_u"], v=pr["plant_v"], w=pr["plant_w"],
                c=pr["plant_clean_exact_excess"], e=pr["plant_exact_excess"], mv=mv,
                wit=pr.get("plant_mdp_witness") or "—", qv=qv, nv=nv))
    if notes:
        L.append("")
        L.append("## Notes")
        L.append("")
        for s in notes:
            L.append(f"- {s}")
    L.append("")
    md_path = out_dir / f"{prefix}.md"
    md_path.write_text("\n".join(L))
    return md_path, csv_path


# --------------------------------------------------------------------------- main

def log(msg):
    print(msg, flush=True)


def fill_mdp(row: dict, prefix: str, res: dict):
    row[f"{prefix}status"] = res.get("status")
    if res.get("status") != "ran":
        return
    row[f"{prefix}verdict"] = res.get("verdict")
    row[f"{prefix}wall_s"] = res.get("wall")


def plant_one(args, audit_bin, n, eps, e_file, P, C, D, nc, rel) -> dict:
    """Plants one violation of relative size rel at the clean matrix's tightest triple,
    writes it, and asks every tool about it. Returns plant_* fields."""
    out = {"n": n, "plant_rel": rel}
    u, v, w = nc["u"], nc["v"], nc["w"]
    try:
        Hp, pinfo = plant(C, D, e_file, u, v, w, rel)
    except RuntimeError as ex:
        out["plant_note"] = f"not planted: {ex}"
        log(out["plant_note"])
        return out
    planted = args.work_dir / f"expmech_n{n}_seed{args.seed}_planted_{rel:g}.mdp.json"
    psize = write_mdp(planted, eps, P, Hp, {"producer": "benches/audit_bench.py",
                                            "mechanism": "exponential+planted violation",
                                            "seed": args.seed, "n": n, "planted": pinfo})
    out.update({"plant_u": u, "plant_v": v, "plant_w": w})
    out["plant_clean_exact_excess"] = exact_excess(e_file, P, C, u, v, w)
    out["plant_exact_excess"] = exact_excess(e_file, P, Hp, u, v, w)
    log(f"planted (rel {rel:g}) at (u,v,w)=({u},{v},{w}): exact excess {out['plant_clean_exact_excess']:.6g} -> "
        f"{out['plant_exact_excess']:.6g}; row sum dev {pinfo['row_sum_dev']:.3g}")
    res = run_audit(audit_bin, planted, args.audit_timeout, psize, n * n)
    out["plant_mdp_status"] = res["status"]
    if res["status"] == "ran":
        out["plant_mdp_verdict"] = res.get("verdict")
        out["plant_mdp_wall_s"] = res.get("wall")
        out["plant_mdp_detected"] = res.get("verdict") == "fail"
        wit = res.get("witness")
        if isinstance(wit, dict) and "u" in wit:
            same = (wit.get("u"), wit.get("v"), wit.get("w")) == (u, v, w)
            out["plant_mdp_witness"] = f"({wit.get('u')}, {wit.get('v')}, {wit.get('w')})" + ("" if same else " ≠ planted")
        elif wit:
            out["plant_mdp_witness"] = json.dumps(wit)[:80]
        log(f"mdp-audit on planted: verdict {res.get('verdict')} (exit {res['exit']}), "
            f"wall {res['wall']:.3f} s, witness {wit}")
        if res.get("stderr"):
            log(f"  stderr: {res['stderr'][:500]}")
    else:
        log(f"mdp-audit on planted: {res['status']}: {res.get('note', '')}")
    _, _, Cp, Dp = load_mdp(planted)
    if not args.no_qif:
        q = qif_is_private(Cp, Dp, e_file)
        out["plant_qif_private"], out["plant_qif_s"] = q["private"], q["seconds"]
        out["plant_qif_detected"] = not q["private"]
        log(f"qif on planted: is_private {q['private']} in {q['seconds']:.3f} s")
    t0 = time.perf_counter()
    ncp = numpy_check(Cp, Dp, e_file)
    out["plant_numpy_s"] = time.perf_counter() - t0
    out["plant_numpy_violating_pairs"] = ncp["violating_pairs"]
    out["plant_numpy_max_excess"] = ncp["max_excess"]
    out["plant_numpy_detected"] = ncp["violating_pairs"] > 0
    log(f"numpy on planted: {ncp['violating_pairs']} violating pairs, max log excess "
        f"{ncp['max_excess']:.6g} at {(ncp['u'], ncp['v'], ncp['w'])}, {out['plant_numpy_s']:.3f} s")
    if not args.keep_files:
        planted.unlink(missing_ok=True)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[250, 500, 1000, 2000])
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--epsilon", type=float, default=2.0)
    ap.add_argument("--audit-bin", type=Path, default=REPO / "target" / "release" / "mdp-audit")
    ap.add_argument("--audit-timeout", type=float, default=3600.0, help="seconds per mdp-audit run")
    ap.add_argument("--plant-rel", type=float, nargs="+", default=[1e-6],
                    help="relative size(s) of the planted violation, one planted file each (e.g. 1e-6 1e-14)")
    ap.add_argument("--no-plant", action="store_true")
    ap.add_argument("--no-qif", action="store_true")
    ap.add_argument("--no-qif-eps", action="store_true", help="skip qif smallest_epsilon (costs as much as is_private)")
    ap.add_argument("--no-numpy", action="store_true")
    ap.add_argument("--out-dir", type=Path, default=HERE / "reports")
    ap.add_argument("--out-prefix", default="audit_growth")
    ap.add_argument("--work-dir", type=Path, default=HERE / ".work", help="where the mdp/1 files go")
    ap.add_argument("--keep-files", action="store_true", help="keep the generated mdp/1 files")
    ap.add_argument("--repeat", type=int, default=1,
                    help="time the clean-matrix runs of each tool this many times and report the minimum")
    args = ap.parse_args(argv)

    if qif is None and not args.no_qif:
        log(f"qif not importable ({QIF_IMPORT_ERROR}); run benches/setup.sh, or pass --no-qif")
        return 2
    audit_bin = args.audit_bin.resolve()
    info = machine_info(audit_bin)
    notes = []
    log("machine: " + ", ".join(f"{k}={v}" for k, v in info.items()))
    if os.getloadavg()[0] > 0.5:
        msg = f"load average {os.getloadavg()[0]:.2f} at start: other processes compete for the {info['nproc']} cores; timings may be inflated."
        log("WARNING: " + msg)
        notes.append(msg)
    have_bin = audit_bin.is_file() and os.access(audit_bin, os.X_OK)
    if not have_bin:
        msg = f"mdp-audit binary not found at {audit_bin}: its columns are skipped (build it with `cargo build --release -p mdp-audit`, or pass --audit-bin)."
        log("NOTE: " + msg)
        notes.append(msg)
    args.work_dir.mkdir(parents=True, exist_ok=True)
    eps = args.epsilon
    rows = []
    for n in args.sizes:
        log(f"\n=== n = {n} ===")
        row = {"n": n, "K": n, "triples": n * (n - 1) * n}
        t0 = time.perf_counter()
        pts = make_points(n, args.seed)
        H = exponential_mechanism(euclid(pts), eps)
        row["gen_s"] = time.perf_counter() - t0
        clean = args.work_dir / f"expmech_n{n}_seed{args.seed}.mdp.json"
        t0 = time.perf_counter()
        size = write_mdp(clean, eps, pts, H, {"producer": "benches/audit_bench.py", "mechanism": "exponential",
                                               "seed": args.seed, "n": n, "epsilon_mech": eps})
        row["write_s"] = time.perf_counter() - t0
        row["file_mb"] = round(size / 2**20, 2)
        log(f"wrote {clean} ({row['file_mb']} MiB) in {row['write_s']:.2f} s")

        # (i) mdp-audit
        row["load1"] = os.getloadavg()[0]
        res = None
        for _ in range(max(1, args.repeat)):
            r_ = run_audit(audit_bin, clean, args.audit_timeout, size, n * n)
            if res is None or (r_.get("wall") is not None and r_["status"] == "ran" and r_["wall"] < res.get("wall", math.inf)):
                res = r_
            if r_["status"] != "ran":
                break
        fill_mdp(row, "mdp_", res)
        if res["status"] == "ran":
            st = res.get("stats") or {}
            for k in ("seconds_total", "seconds_prepare", "seconds_pure", "seconds_tight", "seconds_delta",
                      "seconds_loss", "exact_triple_fraction", "exact_pairs_pure"):
                row[f"mdp_{k}"] = st.get(k)
            row["mdp_maxrss_mb"] = round(res.get("maxrss_mb", 0.0), 1)
            et = res.get("epsilon_tight") or [None, None]
            edt = res.get("epsilon_delta_tight") or [None, None]
            if isinstance(et, list) and len(et) == 2:
                row["mdp_eps_tight_lo"], row["mdp_eps_tight_hi"] = et
            if isinstance(edt, list) and len(edt) == 2:
                row["mdp_eps_delta_tight_lo"], row["mdp_eps_delta_tight_hi"] = edt
            log(f"mdp-audit: verdict {res.get('verdict')} (exit {res['exit']}), wall {res['wall']:.3f} s, "
                f"maxrss {res.get('maxrss_mb', 0):.0f} MiB, epsilon_tight {et}, epsilon_delta_tight {edt}")
            log("  stats: " + (json.dumps(st) if st else "(none)"))
            if res.get("witness"):
                log(f"  witness: {res['witness']}")
            if res.get("stderr"):
                log(f"  stderr: {res['stderr'][:500]}")
        else:
            log(f"mdp-audit: {res['status']}: {res.get('note', '')}")
            if res.get("note") and res["status"] != "skipped":
                notes.append(f"n={n}: mdp-audit {res['status']}: {res['note']}")

        # load once for qif and numpy (timed, excluded from their check times)
        t0 = time.perf_counter()
        e_file, P, C, D = load_mdp(clean)
        row["qif_load_s"] = time.perf_counter() - t0
        assert np.array_equal(C, H), "repr round trip must be exact"
        log(f"load (JSON parse + distance matrix): {row['qif_load_s']:.3f} s")

        # (ii) qif
        if not args.no_qif:
            q = min((qif_is_private(C, D, e_file) for _ in range(max(1, args.repeat))), key=lambda x: x["seconds"])
            row["qif_s"], row["qif_private"] = q["seconds"], q["private"]
            log(f"qif is_private: {q['private']} in {q['seconds']:.3f} s (metric build {q['seconds_metric']:.4f} s)")
            if not args.no_qif_eps:
                qe = qif_smallest_epsilon(C, D)
                row["qif_smallest_eps"], row["qif_smallest_eps_s"] = qe["eps"], qe["seconds"]
                log(f"qif smallest_epsilon: {qe['eps']!r} in {qe['seconds']:.3f} s")
            if row.get("mdp_wall_s"):
                row["ratio_qif_over_mdp"] = row["qif_s"] / row["mdp_wall_s"]
            if row.get("mdp_seconds_pure"):
                row["ratio_qif_over_mdp_pure"] = row["qif_s"] / row["mdp_seconds_pure"]

        # (iii) numpy
        nc = None
        if not args.no_numpy or not args.no_plant:
            t = math.inf
            for _ in range(max(1, args.repeat) if not args.no_numpy else 1):
                t0 = time.perf_counter()
                nc = numpy_check(C, D, e_file)
                t = min(t, time.perf_counter() - t0)
            if not args.no_numpy:
                row["numpy_s"] = t
                row["numpy_violating_pairs"] = nc["violating_pairs"]
                row["numpy_max_excess"] = nc["max_excess"]
                row["numpy_eps_tight"] = nc["eps_tight"]
            log(f"numpy check: {nc['violating_pairs']} violating pairs, max log excess {nc['max_excess']:.6g} "
                f"at {(nc['u'], nc['v'], nc['w'])}, float tight eps {nc['eps_tight']!r}, {t:.3f} s")

        # planted violations (one file per level)
        row["plants"] = []
        if not args.no_plant:
            for rel in args.plant_rel:
                pr = plant_one(args, audit_bin, n, eps, e_file, P, C, D, nc, rel)
                row["plants"].append(pr)
                if len(row["plants"]) == 1:  # the first level also goes to the main CSV
                    row.update({k: v for k, v in pr.items() if k.startswith("plant_")})
        if not args.keep_files:
            clean.unlink(missing_ok=True)
        rows.append(row)
        # rewrite the reports after every size, so a long run leaves partial results
        md, cs = write_reports(rows, info, args, args.out_dir, args.out_prefix, notes)
    log(f"\nwrote {md}\nwrote {cs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
