#!/usr/bin/env python3
"""LP benchmark: our certified LP mechanisms (`mdp build optimal|pmo`) vs HiGHS and libqif.

Two comparisons, side by side on the same instances (one run of each solver):

(1) OPTMech (minimax loss) growth, `reports/lp_growth.{csv,md}`:
  a. OURS: `mdp build optimal --space SPACE.json --epsilon E -o OUT.json
     [--progress-json PROG.json]` (the flag is dropped when the binary does not know it),
     then `mdp-audit --json OUT.json`: verdict, loss_max, and the `lp_dual` check (the
     certified lower bound and the gap of the output to it).
  b. The same LP exported by `mdp lp export optimal ... -o LP.mps` (free MPS, every privacy
     row) and solved by HiGHS (highspy) twice: solver=simplex (default strategy = dual
     simplex) and solver=ipm, default options otherwise (threads etc. are reported), with
     HiGHS's time_limit = --timeout. HiGHS runs in a child process killed after
     --timeout + a margin, so a hang is recorded as "timeout" rather than stopping the run.

(2) PMO (expected loss, uniform prior, privacy on all pairs) vs libqif,
    `reports/pmo_vs_qif.{csv,md}`:
  OURS: `mdp build pmo --space SPACE.json --epsilon E -o OUT.json` + `mdp-audit --json`.
  libqif: qif.mechanism.d_privacy.min_loss_given_d(pi, n, d_priv, loss) with pi uniform,
  d_priv = qif.metric.from_distance_matrix(E·D), loss = from_distance_matrix(D) (float64 D
  computed here in numpy from the same coordinates). Its matrix is written as an mdp/1 file
  (repr(float) numbers, loss.prior uniform) and audited by `mdp-audit --json` too.
  Optionally (unless --skip-highs) HiGHS IPM on `mdp lp export pmo` as a third objective.

Spaces (each written as a metric-object JSON file, the `--space` argument of `mdp`):
  planar  n points uniform in the unit square (numpy default_rng([seed, n])), euclidean;
  road    the first n records of shared/data/rome500/records.csv, haversine [lat, lon] (km);
  text    the first n words of shared/data/text_minilm/english2000 (384-d unit vectors),
          euclidean.
ε per space: --eps-scale / median pairwise distance of that instance (default 2.0), or a
fixed --epsilon for all.

Usage:
  bash benches/setup.sh
  cargo build --release
  benches/.venv/bin/python benches/lp_bench.py --spaces planar --sizes 20 30 40 50
"""

from __future__ import annotations

import argparse
import csv
import datetime as _dt
import json
import math
import os
import platform
import re
import shutil
import subprocess
import tempfile
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
EARTH_RADIUS_KM = 6371.0088  # the radius src/metric.rs uses for haversine

# ----------------------------------------------------------------------------- data


def find_data_dir() -> Path:
    for c in (os.environ.get("MDP_SHARED_DATA"), REPO.parent / "shared" / "data",
              Path("/work/shared/data")):
        if c and Path(c).is_dir():
            return Path(c)
    return Path("/work/shared/data")


def planar_points(n: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng([seed, n])
    return rng.random((n, 2))


def road_points(n: int, data: Path) -> np.ndarray:
    """[lat, lon] of the first n records of rome500/records.csv (record order)."""
    pts = []
    with open(data / "rome500" / "records.csv") as f:
        for row in csv.DictReader(f):
            pts.append([float(row["lat"]), float(row["lon"])])
            if len(pts) == n:
                break
    if len(pts) < n:
        raise ValueError(f"rome500 has only {len(pts)} records")
    return np.asarray(pts)


def text_points(n: int, data: Path, vocab: str) -> tuple[np.ndarray, list[str]]:
    """The first n embedding vectors (file order, index 1..n) of text_minilm/VOCAB."""
    vecs, words = [], []
    with open(data / "text_minilm" / f"{vocab}_vectors.csv") as f:
        next(f)
        for line in f:
            vecs.append([float(x) for x in line.rstrip("\n").split(",")[1:]])
            if len(vecs) == n:
                break
    with open(data / "text_minilm" / f"{vocab}_words.csv") as f:
        next(f)
        for line in f:
            words.append(line.rstrip("\n").split(",", 1)[1])
            if len(words) == n:
                break
    if len(vecs) < n:
        raise ValueError(f"{vocab} has only {len(vecs)} vectors")
    return np.asarray(vecs), words


def euclid(P: np.ndarray) -> np.ndarray:
    diff = P[:, None, :] - P[None, :, :]
    return np.sqrt((diff * diff).sum(axis=-1))


def haversine(P: np.ndarray, R: float = EARTH_RADIUS_KM) -> np.ndarray:
    """Float64 haversine, km. The differences are taken in degrees *before* the conversion
    to radians: for nearby points that subtraction is exact (Sterbenz), whereas subtracting
    two converted latitudes of ~0.73 rad leaves an absolute error of ~1e-16 on a Δ of ~1e-4
    rad, i.e. a relative error of up to ~1e-13 in short distances."""
    lat = np.radians(P[:, 0])
    dlat = np.radians(P[:, 0][:, None] - P[:, 0][None, :])
    dlon = np.radians(P[:, 1][:, None] - P[:, 1][None, :])
    a = np.sin(dlat / 2) ** 2 + np.cos(lat)[:, None] * np.cos(lat)[None, :] * np.sin(dlon / 2) ** 2
    D = 2 * R * np.arcsin(np.sqrt(np.clip(a, 0.0, 1.0)))
    np.fill_diagonal(D, 0.0)
    return D


def make_space(kind: str, n: int, args) -> tuple[dict, np.ndarray, str]:
    """(metric object, float64 distance matrix, description)."""
    data = find_data_dir()
    if kind == "planar":
        P = planar_points(n, args.seed)
        return ({"kind": "euclidean", "points": P.tolist()}, euclid(P),
                f"{n} points uniform in [0,1]² (default_rng([{args.seed}, {n}])), euclidean")
    if kind == "road":
        P = road_points(n, data)
        return ({"kind": "haversine", "points": P.tolist()}, haversine(P),
                f"first {n} records of rome500/records.csv, haversine [lat, lon], km")
    if kind == "text":
        P, words = text_points(n, data, args.text_vocab)
        return ({"kind": "euclidean", "points": P.tolist()}, euclid(P),
                f"first {n} words of text_minilm/{args.text_vocab} ({', '.join(words[:4])}, …), "
                "euclidean on 384-d MiniLM vectors")
    raise ValueError(f"unknown space {kind!r}")


def median_offdiag(D: np.ndarray) -> float:
    iu = np.triu_indices(D.shape[0], 1)
    return float(np.median(D[iu]))


def write_json(path: Path, obj) -> None:
    # json.dumps writes floats with repr(): the shortest decimal that reads back as the
    # same double (mdp reads that decimal exactly)
    with open(path, "w") as f:
        json.dump(obj, f, allow_nan=False, separators=(",", ":"))
        f.write("\n")


# ----------------------------------------------------------------------------- processes


GNU_TIME = Path("/usr/bin/time")


def run_proc(cmd: list, timeout: float) -> dict:
    """Run cmd; wall clock (perf_counter) around the subprocess; 'timeout' on expiry.
    With GNU time installed, 'peak_mib' is the process's peak resident memory (its
    maximum RSS, as the kernel accounts it; a child process's own peak is not added)."""
    t0 = time.perf_counter()
    cmd = [str(c) for c in cmd]
    peak_file = None
    if GNU_TIME.exists():
        fd, peak_file = tempfile.mkstemp(suffix=".peak")
        os.close(fd)
        cmd = [str(GNU_TIME), "-f", "%M", "-o", peak_file, *cmd]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO)
    except subprocess.TimeoutExpired as e:
        return {"status": "timeout", "seconds": time.perf_counter() - t0, "rc": None,
                "stdout": _s(e.stdout), "stderr": _s(e.stderr)}
    except OSError as e:
        return {"status": "error", "seconds": time.perf_counter() - t0, "rc": None,
                "stdout": "", "stderr": f"{type(e).__name__}: {e}"}
    finally:
        peak = None
        if peak_file:
            try:
                lines = Path(peak_file).read_text().split()
                peak = int(lines[-1]) / 1024 if lines else None
            except (OSError, ValueError):
                pass
            Path(peak_file).unlink(missing_ok=True)
    return {"status": "ok" if p.returncode == 0 else "failed", "rc": p.returncode,
            "seconds": time.perf_counter() - t0, "stdout": p.stdout, "stderr": p.stderr,
            "peak_mib": peak}


def _s(x) -> str:
    if x is None:
        return ""
    return x.decode(errors="replace") if isinstance(x, bytes) else x


def is_usage_error(r: dict, flag: str) -> bool:
    """clap's answer to an unknown option: exit 2 and 'unexpected argument' on stderr."""
    err = r.get("stderr") or ""
    return r.get("rc") == 2 and (flag in err or "unexpected argument" in err
                                 or "Usage:" in err or "unrecognized" in err)


def first_line(s: str, limit: int = 160) -> str:
    for line in (s or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def worker_cmd(*a) -> list:
    return [sys.executable, str(Path(__file__).resolve()), *a]


def run_worker(args_list: list, timeout: float) -> dict:
    r = run_proc(worker_cmd(*args_list), timeout)
    out = {"status": r["status"], "wall": r["seconds"], "peak_mib": r.get("peak_mib")}
    if r["status"] == "ok":
        try:
            out.update(json.loads(r["stdout"].strip().splitlines()[-1]))
        except Exception as e:  # worker printed garbage
            out["status"] = "error"
            out["error"] = f"bad worker output: {e}: {first_line(r['stdout'])}"
    elif r["status"] != "timeout":
        out["error"] = first_line(r["stderr"].strip().splitlines()[-1] if r["stderr"].strip() else "")
    return out


# ----------------------------------------------------------------------------- workers


def worker_highs(mps: str, solver: str, time_limit: float) -> None:
    import highspy
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("solver", solver)
    h.setOptionValue("time_limit", float(time_limit))
    t0 = time.perf_counter()
    st = h.readModel(mps)
    t_read = time.perf_counter() - t0
    if st == highspy.HighsStatus.kError:
        print(json.dumps({"status": "error", "error": "readModel failed", "seconds_read": t_read}))
        return
    lp = h.getLp()
    t1 = time.perf_counter()
    h.run()
    t_run = time.perf_counter() - t1
    ms = h.getModelStatus()
    info = h.getInfo()
    opts = {}
    for o in ("threads", "presolve", "parallel", "simplex_strategy", "run_crossover",
              "ipm_optimality_tolerance", "primal_feasibility_tolerance",
              "dual_feasibility_tolerance"):
        try:
            v = h.getOptionValue(o)
            opts[o] = v[1] if isinstance(v, tuple) else v
        except Exception:
            pass
    status = h.modelStatusToString(ms)
    res = {
        "status": "ok" if ms == highspy.HighsModelStatus.kOptimal else
                  ("timeout" if ms == highspy.HighsModelStatus.kTimeLimit else "other"),
        "model_status": status,
        "objective": float(info.objective_function_value),
        "seconds_read": t_read,
        "seconds_run": t_run,
        "seconds": t_read + t_run,
        "rows": int(lp.num_row_),
        "cols": int(lp.num_col_),
        "simplex_iterations": int(info.simplex_iteration_count),
        "ipm_iterations": int(info.ipm_iteration_count),
        "options": opts,
    }
    print(json.dumps(res))


def worker_qif(dfile: str, eps: float, out_npy: str) -> None:
    import qif
    D = np.load(dfile)
    n = D.shape[0]
    pi = np.full(n, 1.0 / n)
    d_priv = qif.metric.from_distance_matrix(eps * D)
    loss = qif.metric.from_distance_matrix(D)
    t0 = time.perf_counter()
    C = qif.mechanism.d_privacy.min_loss_given_d(pi, n, d_priv, loss)
    t = time.perf_counter() - t0
    C = np.asarray(C, dtype=np.float64)
    np.save(out_npy, C)
    t1 = time.perf_counter()
    priv = bool(qif.measure.d_privacy.is_private(C, d_priv))
    t_check = time.perf_counter() - t1
    print(json.dumps({"status": "ok", "seconds": t, "qif_is_private": priv,
                      "seconds_is_private": t_check, "lp_solver": str(qif.lp.defaults.solver),
                      "lp_method": str(qif.lp.defaults.method)}))


# ----------------------------------------------------------------------------- ours


ROWS_RES = [
    re.compile(r"rows[ _-]?generated\D{0,5}(\d+)", re.I),
    re.compile(r"(\d+)\s*(?:/|of)\s*\d+\s*(?:privacy\s*)?rows", re.I),
    re.compile(r"generated\s+(\d+)\s+(?:privacy\s+)?rows", re.I),
    re.compile(r"(\d+)\s+(?:privacy\s+)?rows\s+generated", re.I),
]
ROWS_TOTAL_RES = [
    re.compile(r"rows[ _-]?total\D{0,5}(\d+)", re.I),
    re.compile(r"\d+\s*(?:/|of)\s*(\d+)\s*(?:privacy\s*)?rows", re.I),
]


def _last_match(res, text):
    best = None
    for rx in res:
        for m in rx.finditer(text or ""):
            best = int(m.group(1))
    return best


def _walk_key(obj, keys):
    """Last value of any key in `keys` found anywhere in a JSON value (list or dict)."""
    found = None
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k in keys and isinstance(v, (int, float)):
                found = v
            sub = _walk_key(v, keys)
            if sub is not None:
                found = sub
    elif isinstance(obj, list):
        for v in obj:
            sub = _walk_key(v, keys)
            if sub is not None:
                found = sub
    return found


def read_progress(path: Path) -> dict:
    """Tolerant reader of --progress-json output: one JSON document or JSON lines."""
    if not path.exists():
        return {}
    text = path.read_text(errors="replace")
    docs = []
    try:
        docs = [json.loads(text)]
    except Exception:
        for line in text.splitlines():
            line = line.strip()
            if line:
                try:
                    docs.append(json.loads(line))
                except Exception:
                    pass
    out = {"progress_records": len(docs)}
    g = _walk_key(docs, {"rows_generated", "generated_rows", "rows"})
    if g is not None:
        out["rows_generated"] = int(g)
    t = _walk_key(docs, {"rows_total", "total_rows"})
    if t is not None:
        out["rows_total"] = int(t)
    r = _walk_key(docs, {"rounds", "round"})
    if r is not None:
        out["rounds"] = int(r)
    return out


def parse_stats_line(stderr: str) -> dict:
    """The last `stats: {json}` line that `mdp build optimal|pmo` prints on stderr."""
    for line in reversed((stderr or "").splitlines()):
        if line.startswith("stats:"):
            try:
                return json.loads(line[len("stats:"):])
            except Exception:
                return {}
    return {}


def run_ours_build(args, which: str, space_file: Path, eps: float, out: Path, prog: Path | None) -> dict:
    base = [args.mdp_bin, "build", which, "--space", space_file, "--epsilon", repr(float(eps)), "-o", out]
    if which == "optimal" and args.ours_solver:
        base += ["--solver", args.ours_solver]
    res = {"progress_flag": False}
    r = None
    if prog is not None and args.progress_json:
        if prog.exists():
            prog.unlink()
        r = run_proc(base + ["--progress-json", prog], args.timeout)
        if is_usage_error(r, "--progress-json"):
            r = None  # binary without the flag: retry without it
        else:
            res["progress_flag"] = True
    if r is None:
        r = run_proc(base, args.timeout)
    res.update({"status": r["status"], "seconds": r["seconds"], "rc": r["rc"],
                "stderr": r["stderr"], "peak_mib": r.get("peak_mib")})
    if r["status"] == "failed":
        res["error"] = first_line(r["stderr"])
    st = parse_stats_line(r["stderr"])
    if st:
        lp = st.get("lp") if isinstance(st.get("lp"), dict) else {}
        for k in ("rows_generated", "rows_total", "rounds", "seconds_primal", "seconds_dual",
                  "uniform_mix", "objective"):
            if k in lp:
                res["lp_" + k if k == "objective" else k] = lp[k]
        if "certified_lower_bound" in st:
            res["stats_lower_bound"] = st["certified_lower_bound"]
    rg = _last_match(ROWS_RES, r["stderr"])
    if rg is not None and "rows_generated" not in res:
        res["rows_generated"] = rg
    rt = _last_match(ROWS_TOTAL_RES, r["stderr"])
    if rt is not None and "rows_total" not in res:
        res["rows_total"] = rt
    if res["progress_flag"] and prog is not None:
        p = read_progress(prog)
        for k, v in p.items():
            res.setdefault(k, v)
    return res


def enc_hi(x):
    """Upper end of an [lo, hi] enclosure (or the number itself)."""
    if isinstance(x, (list, tuple)) and x:
        return None if x[-1] is None else float(x[-1])
    if isinstance(x, (int, float)):
        return float(x)
    return None


GAP_RE = re.compile(r"certified gap ≤ ([0-9.eE+-]+) \(([0-9.eE+-]+) relative\)")
BOUND_RE = re.compile(r"≥ ([0-9.eE+-]+) \(exact dual bound")


def run_audit(args, file: Path) -> dict:
    r = run_proc([args.audit_bin, "--json", file], args.timeout)
    out = {"audit_status": r["status"], "audit_seconds": r["seconds"]}
    if r["status"] == "timeout":
        out["verdict"] = "timeout"
        return out
    try:
        rep = json.loads(r["stdout"])
    except Exception:
        out["verdict"] = "error"
        out["audit_error"] = first_line(r["stderr"]) or first_line(r["stdout"])
        return out
    out["verdict"] = rep.get("verdict")
    out["loss_max"] = enc_hi(rep.get("loss_max"))
    out["expected_loss"] = enc_hi(rep.get("expected_loss"))
    out["epsilon_tight"] = enc_hi(rep.get("epsilon_tight"))
    out["failed_checks"] = ";".join(c.get("name", "?") for c in rep.get("checks", [])
                                     if c.get("verdict") not in ("pass", None))
    fails = [c for c in rep.get("checks", []) if c.get("verdict") not in ("pass", None)]
    if fails:
        out["fail_detail"] = first_line(fails[0].get("detail", ""), 300)
    lp = [c for c in rep.get("checks", []) if "lp_dual" in str(c.get("name", ""))]
    if lp:
        c = lp[0]
        out["lp_dual_verdict"] = c.get("verdict")
        out["lp_dual_detail"] = c.get("detail", "")
        w = c.get("witness") or {}
        b = w.get("bound") if isinstance(w, dict) else None
        if b is None:
            m = BOUND_RE.search(c.get("detail", ""))
            b = float(m.group(1)) if m else None
        out["lower_bound"] = b
        m = GAP_RE.search(c.get("detail", ""))
        if m:
            out["gap"], out["gap_rel"] = float(m.group(1)), float(m.group(2))
    else:
        out["lp_dual_verdict"] = "absent"
    return out


# ----------------------------------------------------------------------------- one instance


def fnum(x, spec=".6g"):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return ""
    if isinstance(x, str):
        return x
    return format(x, spec)


def secs(d: dict | None, key="seconds"):
    """Seconds if the solver finished, else its status word (timeout, failed, …)."""
    if not d:
        return "skipped"
    if d.get("status") == "ok":
        return d.get(key)
    return d.get("status", "?")


def bench_optimal(args, space: str, n: int, eps: float, sfile: Path, work: Path) -> dict:
    tag = f"{space}{n}"
    row = {"space": space, "n": n, "eps": eps}
    out, prog = work / f"{tag}_optimal.json", work / f"{tag}_optimal.progress.json"
    ours = run_ours_build(args, "optimal", sfile, eps, out, prog)
    row["ours_status"] = ours["status"]
    row["ours_seconds"] = secs(ours)
    row["ours_peak_mib"] = ours.get("peak_mib") if ours["status"] == "ok" else None
    row["ours_error"] = ours.get("error", "")
    for k in ("rows_generated", "rows_total", "rounds", "seconds_primal", "seconds_dual",
              "uniform_mix", "lp_objective"):
        row[k] = ours.get(k)
    if ours["status"] != "ok" or row["rows_generated"] is None:
        row["ours_stderr_tail"] = " | ".join(
            (ours.get("stderr") or "").strip().splitlines()[-3:])[:400]
    if ours["status"] == "ok":
        a = run_audit(args, out)
        row.update({
            "ours_verdict": a.get("verdict"),
            "ours_loss": a.get("loss_max"),
            "certified_lower_bound": a.get("lower_bound"),
            "lp_dual": a.get("lp_dual_verdict"),
            "lp_dual_detail": a.get("lp_dual_detail", a.get("fail_detail", "")),
            "audit_seconds": a.get("audit_seconds"),
        })
        if a.get("gap") is not None:
            row["certified_gap"] = a["gap"]
            row["certified_gap_rel"] = a.get("gap_rel")
        elif a.get("loss_max") is not None and a.get("lower_bound") is not None:
            row["certified_gap"] = max(0.0, a["loss_max"] - a["lower_bound"])
    else:
        row["ours_verdict"] = ours["status"]
    print(f"  [{tag}] ours optimal: {row['ours_seconds']!s:.8} s, verdict {row.get('ours_verdict')}, "
          f"loss {fnum(row.get('ours_loss'))}, bound {fnum(row.get('certified_lower_bound'))}, "
          f"rows {row.get('rows_generated')}", flush=True)

    if not args.skip_highs:
        mps = work / f"{tag}_optimal.mps"
        ex = run_proc([args.mdp_bin, "lp", "export", "optimal", "--space", sfile,
                       "--epsilon", repr(float(eps)), "-o", mps], args.timeout)
        row["export_seconds"] = secs(ex)
        if ex["status"] == "ok":
            row["mps_mib"] = mps.stat().st_size / 2**20
            for solver in args.highs_solvers:
                h = run_worker(["--worker-highs", str(mps), solver, repr(args.timeout)],
                               args.timeout + args.kill_margin)
                key = f"highs_{solver}"
                row[f"{key}_status"] = h.get("model_status", h["status"])
                row[f"{key}_seconds"] = secs(h)
                row[f"{key}_solve_seconds"] = secs(h, "seconds_run")
                row[f"{key}_peak_mib"] = h.get("peak_mib") if h["status"] == "ok" else None
                row[f"{key}_obj"] = h.get("objective") if h["status"] == "ok" else None
                row[f"{key}_iters"] = h.get("ipm_iterations" if solver == "ipm" else "simplex_iterations")
                if "rows" in h:
                    row["lp_rows"], row["lp_cols"] = h["rows"], h["cols"]
                if "options" in h:
                    row["highs_options"] = json.dumps(h["options"], sort_keys=True)
                if h.get("error"):
                    row[f"{key}_error"] = h["error"]
                print(f"  [{tag}] HiGHS {solver}: {row[f'{key}_seconds']!s:.8} s, "
                      f"{row[f'{key}_status']}, obj {fnum(row[f'{key}_obj'])}", flush=True)
            if not args.keep_files:
                mps.unlink(missing_ok=True)
        else:
            row["export_error"] = first_line(ex["stderr"])
            print(f"  [{tag}] lp export: {ex['status']}: {row['export_error']}", flush=True)
    ours_s = row.get("ours_seconds")
    hi = row.get("highs_ipm_seconds")
    if isinstance(ours_s, float) and isinstance(hi, float) and ours_s > 0:
        row["ratio_highs_ipm_over_ours"] = hi / ours_s
    for s in args.highs_solvers:
        o, l = row.get(f"highs_{s}_obj"), row.get("ours_loss")
        if isinstance(o, float) and isinstance(l, float) and o != 0:
            row[f"rel_diff_{s}"] = (l - o) / abs(o)
    if not args.keep_files:
        for f in (out, prog):
            f.unlink(missing_ok=True)
    return row


def float_max_rel_violation(C: np.ndarray, D: np.ndarray, eps: float) -> float:
    """max over u != v, w of C[u][w] / (e^(eps d(u,v)) C[v][w]) − 1, in float64 (≤ 0: no
    violation at float precision); 0/0 entries are skipped, x/0 with x > 0 gives inf."""
    n = C.shape[0]
    E = np.exp(eps * D)
    worst = -math.inf
    for u in range(n):
        B = E[u][:, None] * C  # B[v][w] = e^(eps d(u,v)) C[v][w]
        with np.errstate(divide="ignore", invalid="ignore"):
            R = C[u][None, :] / B - 1.0
        R[u, :] = -math.inf
        R = np.where(np.isnan(R), -math.inf, R)
        worst = max(worst, float(R.max()))
    return worst


def mdp1_doc(eps: float, metric: dict, C: np.ndarray, n: int) -> dict:
    return {"format": "mdp/1", "epsilon": float(eps), "metric": metric,
            "matrix": C.tolist(), "loss": {"prior": [1.0] * n},
            "meta": {"producer": "qif.mechanism.d_privacy.min_loss_given_d (benches/lp_bench.py)"}}


def bench_pmo(args, space: str, n: int, eps: float, sfile: Path, metric: dict, D: np.ndarray,
              work: Path) -> dict:
    tag = f"{space}{n}"
    row = {"space": space, "n": n, "eps": eps}
    pi = np.full(n, 1.0 / n)
    out = work / f"{tag}_pmo.json"
    ours = run_ours_build(args, "pmo", sfile, eps, out, None)
    row["ours_status"] = ours["status"]
    row["ours_seconds"] = secs(ours)
    row["ours_peak_mib"] = ours.get("peak_mib") if ours["status"] == "ok" else None
    row["ours_error"] = ours.get("error", "")
    for k in ("rows_generated", "rows_total", "rounds", "seconds_primal", "seconds_dual"):
        row[k] = ours.get(k)
    if ours["status"] == "ok":
        a = run_audit(args, out)
        row["ours_verdict"] = a.get("verdict")
        row["ours_expected_loss_audit"] = a.get("expected_loss")
        row["certified_lower_bound"] = a.get("lower_bound")
        row["lp_dual"] = a.get("lp_dual_verdict")
        row["ours_fail_detail"] = a.get("fail_detail", "")
        try:
            doc = json.load(open(out))
            M = np.asarray(doc["matrix"], dtype=np.float64)
            row["ours_expected_loss_float"] = float((pi[:, None] * M * D).sum())
        except Exception as e:
            row["ours_expected_loss_float"] = None
            row["ours_error"] = f"reading output: {e}"
        row["ours_loss"] = (row["ours_expected_loss_audit"]
                            if row["ours_expected_loss_audit"] is not None
                            else row["ours_expected_loss_float"])
    else:
        row["ours_verdict"] = ours["status"]
    print(f"  [{tag}] ours pmo: {row['ours_seconds']!s:.8} s, verdict {row.get('ours_verdict')}, "
          f"E[loss] {fnum(row.get('ours_loss'))}, bound {fnum(row.get('certified_lower_bound'))}",
          flush=True)

    if not args.skip_qif:
        dfile = work / f"{tag}_D.npy"
        np.save(dfile, D)
        cfile = work / f"{tag}_qif_C.npy"
        q = run_worker(["--worker-qif", str(dfile), repr(float(eps)), str(cfile)],
                       args.timeout + args.kill_margin)
        if q["status"] == "ok" and q.get("seconds", 0) > args.timeout:
            q["status"] = "timeout"
        row["qif_status"] = q["status"]
        row["qif_seconds"] = secs(q)
        row["qif_error"] = q.get("error", "")
        if q["status"] == "ok":
            C = np.load(cfile)
            row["qif_loss"] = float((pi[:, None] * C * D).sum())
            row["qif_min_entry"] = float(C.min())
            row["qif_row_sum_dev"] = float(np.abs(C.sum(axis=1) - 1).max())
            row["qif_is_private_self"] = q.get("qif_is_private")
            row["qif_max_rel_violation"] = float_max_rel_violation(C, D, eps)
            qfile = work / f"{tag}_qif_pmo.json"
            write_json(qfile, mdp1_doc(eps, metric, C, n))
            a = run_audit(args, qfile)
            row["qif_verdict"] = a.get("verdict")
            row["qif_failed_checks"] = a.get("failed_checks", "")
            row["qif_fail_detail"] = a.get("fail_detail", "") or a.get("audit_error", "")
            row["qif_expected_loss_audit"] = a.get("expected_loss")
            if not args.keep_files:
                qfile.unlink(missing_ok=True)
        if not args.keep_files:
            dfile.unlink(missing_ok=True)
            cfile.unlink(missing_ok=True)
        print(f"  [{tag}] qif min_loss_given_d: {row['qif_seconds']!s:.8} s, "
              f"E[loss] {fnum(row.get('qif_loss'))}, mdp-audit {row.get('qif_verdict')}, "
              f"qif is_private {row.get('qif_is_private_self')}", flush=True)

    if not args.skip_highs and args.pmo_highs:
        mps = work / f"{tag}_pmo.mps"
        ex = run_proc([args.mdp_bin, "lp", "export", "pmo", "--space", sfile,
                       "--epsilon", repr(float(eps)), "-o", mps], args.timeout)
        if ex["status"] == "ok":
            h = run_worker(["--worker-highs", str(mps), "ipm", repr(args.timeout)],
                           args.timeout + args.kill_margin)
            row["highs_ipm_seconds"] = secs(h)
            row["highs_ipm_obj"] = h.get("objective") if h["status"] == "ok" else None
            if not args.keep_files:
                mps.unlink(missing_ok=True)
        else:
            row["highs_ipm_seconds"] = f"export {ex['status']}"
    ol, ql = row.get("ours_loss"), row.get("qif_loss")
    if isinstance(ol, float) and isinstance(ql, float) and ql != 0:
        row["rel_diff_ours_qif"] = (ol - ql) / abs(ql)
    os_, qs = row.get("ours_seconds"), row.get("qif_seconds")
    if isinstance(os_, float) and isinstance(qs, float) and os_ > 0:
        row["ratio_qif_over_ours"] = qs / os_
    if not args.keep_files:
        out.unlink(missing_ok=True)
    return row


# ----------------------------------------------------------------------------- reports


def machine_info(args) -> dict:
    info = {"date": _dt.datetime.now().isoformat(timespec="seconds")}
    try:
        info["nproc"] = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
    except OSError:
        info["nproc"] = str(os.cpu_count())
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
    for mod, dist in (("highspy", "highspy"), ("qif", "qif")):
        try:
            from importlib.metadata import version
            info[mod] = version(dist)
        except Exception:
            info[mod] = "not installed"
    try:
        import highspy
        h = highspy.Highs()
        info["HiGHS"] = f"{h.versionMajor()}.{h.versionMinor()}.{h.versionPatch()}"
    except Exception:
        pass
    for key, b in (("mdp", args.mdp_bin), ("mdp_audit", args.audit_bin)):
        try:
            info[key] = subprocess.run([str(b), "--version"], capture_output=True,
                                       text=True).stdout.strip()
            info[key + "_mtime"] = _dt.datetime.fromtimestamp(
                Path(b).stat().st_mtime).isoformat(timespec="seconds")
        except OSError:
            info[key] = "missing"
    return info


GROWTH_CSV = ["space", "n", "eps", "ours_status", "ours_seconds", "ours_peak_mib", "ours_verdict", "ours_loss",
              "certified_lower_bound", "certified_gap", "certified_gap_rel", "lp_dual",
              "audit_seconds", "rows_generated", "rows_total", "rounds", "seconds_primal",
              "seconds_dual", "uniform_mix", "lp_objective", "export_seconds", "mps_mib",
              "lp_rows", "lp_cols",
              "highs_simplex_status", "highs_simplex_seconds", "highs_simplex_solve_seconds",
              "highs_simplex_obj", "highs_simplex_iters", "rel_diff_simplex",
              "highs_simplex_peak_mib",
              "highs_ipm_status", "highs_ipm_seconds", "highs_ipm_solve_seconds",
              "highs_ipm_obj", "highs_ipm_iters", "rel_diff_ipm", "highs_ipm_peak_mib",
              "ratio_highs_ipm_over_ours", "highs_options", "ours_error", "export_error",
              "ours_stderr_tail", "lp_dual_detail"]
GROWTH_MD = [("space", "space", None), ("n", "n", "d"), ("eps", "ε", ".4g"),
             ("ours_seconds", "ours s", ".3f"), ("ours_peak_mib", "ours peak MiB", ".0f"),
             ("ours_verdict", "ours audit", None),
             ("ours_loss", "ours loss_max", ".9g"),
             ("certified_lower_bound", "certified lower bound", ".9g"),
             ("certified_gap", "certified gap", ".2e"),
             ("highs_simplex_seconds", "HiGHS simplex s", ".3f"),
             ("highs_simplex_obj", "HiGHS simplex obj", ".9g"),
             ("highs_ipm_seconds", "HiGHS IPM s", ".3f"),
             ("highs_ipm_obj", "HiGHS IPM obj", ".9g"),
             ("highs_simplex_peak_mib", "HiGHS simplex peak MiB", ".0f"),
             ("highs_ipm_peak_mib", "HiGHS IPM peak MiB", ".0f"),
             ("ratio_highs_ipm_over_ours", "HiGHS IPM / ours", ".2f"),
             ("rows_generated", "rows generated", None), ("rows_total", "privacy rows", None),
             ("rounds", "rounds", None), ("seconds_primal", "ours primal s", ".2f"),
             ("seconds_dual", "ours dual s", ".2f")]
PMO_CSV = ["space", "n", "eps", "ours_status", "ours_seconds", "ours_peak_mib", "ours_verdict", "ours_loss",
           "ours_expected_loss_audit", "ours_expected_loss_float", "certified_lower_bound",
           "lp_dual", "rows_generated", "rows_total", "rounds", "seconds_primal", "seconds_dual",
           "qif_status", "qif_seconds", "qif_loss", "qif_verdict",
           "qif_failed_checks", "qif_is_private_self", "qif_max_rel_violation", "qif_min_entry", "qif_row_sum_dev",
           "qif_expected_loss_audit", "rel_diff_ours_qif", "ratio_qif_over_ours",
           "highs_ipm_seconds", "highs_ipm_obj", "ours_error", "qif_error", "ours_fail_detail",
           "qif_fail_detail"]
PMO_MD = [("space", "space", None), ("n", "n", "d"), ("eps", "ε", ".4g"),
          ("ours_seconds", "ours s", ".3f"), ("ours_verdict", "ours audit", None),
          ("ours_loss", "ours E[loss]", ".9g"),
          ("certified_lower_bound", "certified lower bound", ".9g"),
          ("qif_seconds", "qif s", ".3f"), ("qif_loss", "qif E[loss]", ".9g"),
          ("qif_verdict", "qif output: mdp-audit", None),
          ("qif_is_private_self", "qif is_private", None),
          ("qif_max_rel_violation", "qif max rel. violation (float)", ".1e"),
          ("rel_diff_ours_qif", "(ours−qif)/qif", ".2e"),
          ("ratio_qif_over_ours", "qif / ours", ".2f"),
          ("highs_ipm_seconds", "HiGHS IPM s", ".3f"),
          ("highs_ipm_obj", "HiGHS IPM obj", ".9g"),
          ("rows_generated", "rows generated", None)]


def cell(v, spec):
    if v is None or v == "":
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, str):
        return v
    if spec:
        try:
            return format(v, spec)
        except (ValueError, TypeError):
            return str(v)
    return str(v)


def write_csv(path: Path, rows: list, cols: list) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: ("" if r.get(k) is None else
                            (repr(r[k]) if isinstance(r[k], float) else r[k])) for k in cols})


def md_table(rows: list, spec: list) -> list:
    out = ["| " + " | ".join(h for _, h, _ in spec) + " |",
           "|" + "|".join("---" for _ in spec) + "|"]
    for r in rows:
        out.append("| " + " | ".join(cell(r.get(k), f) for k, _, f in spec) + " |")
    return out


def header(title, info, args, spaces_desc) -> list:
    L = [f"# {title}", "",
         f"Generated {info['date']} by `benches/lp_bench.py {' '.join(sys.argv[1:])}`.", "",
         "## Machine", ""]
    for k in ("nproc", "cpu", "mem_gib", "loadavg_at_start", "os", "python", "numpy",
              "highspy", "HiGHS", "qif", "mdp", "mdp_mtime", "mdp_audit", "mdp_audit_mtime"):
        if k in info:
            L.append(f"- {k}: {info[k]}")
    L += ["", "## Spaces and ε", ""]
    for k, (desc, eps, med) in spaces_desc.items():
        L.append(f"- {k}: {desc}; median distance {med:.6g}, ε = {eps:.6g}")
    L.append("")
    return L


def write_reports(args, info, growth, pmo, spaces_desc, notes) -> None:
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if growth:
        write_csv(out / "lp_growth.csv", growth, GROWTH_CSV)
        L = header("OPTMech (minimax loss LP): ours (certified) vs HiGHS", info, args, spaces_desc)
        L += ["## Setup", "",
              "- ours: wall clock (perf_counter around the process) of `mdp build optimal "
              "--space S --epsilon E -o OUT`; then `mdp-audit --json OUT`: verdict, loss_max "
              "(upper end of its enclosure), and the `lp_dual` check's certified lower bound "
              "(witness.bound) and gap (loss_max − bound, as the check reports it).",
              "- HiGHS: `mdp lp export optimal` writes the same LP (every privacy row, the "
              "mechanism's rounded-down constants) as free MPS; highspy `readModel` + `run` in a "
              "child process, `output_flag` off, `time_limit` = --timeout, other options default "
              f"({growth[-1].get('highs_options', '?')}). Seconds = read + solve "
              "(the CSV also has solve only and the export time, which is not included).",
              f"- A solver that exceeds --timeout = {args.timeout:g} s is recorded as `timeout`.",
              "- HiGHS IPM / ours = HiGHS IPM seconds ÷ ours seconds (> 1: ours faster).",
              "- Peak MiB: the process's maximum resident set size (GNU time's %M): `mdp build` "
              "alone (the audit is not counted); for HiGHS its worker process (Python + highspy, "
              "model read and solve).", "",
              "## Results", ""]
        L += md_table(growth, GROWTH_MD)
        L += ["", "Relative objective difference (ours loss_max − HiGHS obj) / HiGHS obj:", ""]
        for r in growth:
            L.append(f"- {r['space']} n={r['n']}: simplex {cell(r.get('rel_diff_simplex'), '.2e')}, "
                     f"IPM {cell(r.get('rel_diff_ipm'), '.2e')}")
        errs = [r for r in growth if r.get("ours_error") or r.get("export_error")]
        if errs:
            L += ["", "Errors:", ""]
            for r in errs:
                L.append(f"- {r['space']} n={r['n']}: {r.get('ours_error') or ''} "
                         f"{r.get('export_error') or ''}".rstrip())
        L += [""] + notes
        (out / "lp_growth.md").write_text("\n".join(L) + "\n")
    if pmo:
        write_csv(out / "pmo_vs_qif.csv", pmo, PMO_CSV)
        L = header("PMO (expected loss, uniform prior, all pairs): ours vs libqif", info, args,
                   spaces_desc)
        L += ["## Setup", "",
              "- ours: wall clock of `mdp build pmo --space S --epsilon E -o OUT` (uniform prior "
              "and all pairs by default), then `mdp-audit --json OUT` (verdict, expected_loss).",
              "- qif: `qif.mechanism.d_privacy.min_loss_given_d(pi, n, "
              "from_distance_matrix(ε·D), from_distance_matrix(D))`, pi uniform, D float64 "
              "from the same coordinates (numpy), timed around the call only, in a child "
              "process (so the interpreter start and import are not counted). Its matrix is "
              "written as mdp/1 (repr(float), loss.prior uniform) and checked by `mdp-audit`; "
              "'qif is_private' is libqif's own float check of its output (relative tolerance "
              "≈ 2.2e-14 on the log ratio); 'qif max rel. violation (float)' = max over u ≠ v, "
              "w of C[u][w] / (e^(ε·d(u,v))·C[v][w]) − 1 in float64 with numpy's D (> 0: a "
              "violated constraint at float precision; inf: some C[v][w] ≤ 0 < C[u][w], e.g. a "
              "negative entry).",
              "- E[loss] = Σ_x π_x Σ_y C[x][y]·d(x,y): ours from mdp-audit's expected_loss "
              "(upper end), qif's in float64 numpy.", ""]
        L += ["## Results", ""]
        L += md_table(pmo, PMO_MD)
        bad = [r for r in pmo if r.get("qif_verdict") not in (None, "pass")
               or r.get("ours_verdict") not in (None, "pass")]
        if bad:
            L += ["", "Audit failures:", ""]
            for r in bad:
                if r.get("ours_verdict") not in (None, "pass"):
                    L.append(f"- ours {r['space']} n={r['n']}: {r.get('ours_verdict')}: "
                             f"{r.get('ours_fail_detail') or r.get('ours_error') or ''}")
                if r.get("qif_verdict") not in (None, "pass"):
                    L.append(f"- qif {r['space']} n={r['n']}: {r.get('qif_verdict')} "
                             f"({r.get('qif_failed_checks')}): {r.get('qif_fail_detail') or ''}")
        L += [""] + notes
        (out / "pmo_vs_qif.md").write_text("\n".join(L) + "\n")


# ----------------------------------------------------------------------------- main


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[20, 30, 40, 50, 60, 80, 100])
    ap.add_argument("--spaces", nargs="+", default=["planar", "road", "text"],
                    choices=["planar", "road", "text"])
    ap.add_argument("--timeout", type=float, default=300.0,
                    help="per solver run, seconds (HiGHS time_limit too) [300]")
    ap.add_argument("--kill-margin", type=float, default=60.0,
                    help="extra seconds before a HiGHS/qif child is killed [60]")
    ap.add_argument("--skip-highs", action="store_true")
    ap.add_argument("--skip-qif", action="store_true")
    ap.add_argument("--skip-optimal", action="store_true", help="no OPTMech / HiGHS table")
    ap.add_argument("--skip-pmo", action="store_true", help="no PMO / qif table")
    ap.add_argument("--no-pmo-highs", dest="pmo_highs", action="store_false",
                    help="do not also solve the exported PMO LP with HiGHS IPM")
    ap.add_argument("--highs-solvers", nargs="+", default=["simplex", "ipm"])
    ap.add_argument("--ours-solver", default=None, choices=["ipm", "simplex", "block"],
                    help="`--solver` of `mdp build optimal` (default: the binary's default, ipm)")
    ap.add_argument("--eps-scale", type=float, default=2.0,
                    help="ε = SCALE / median pairwise distance of each instance [2.0]")
    ap.add_argument("--epsilon", type=float, default=None, help="fixed ε for every instance")
    ap.add_argument("--seed", type=int, default=20240611)
    ap.add_argument("--text-vocab", default="english2000", choices=["english2000", "statesandcities"])
    ap.add_argument("--mdp-bin", type=Path, default=REPO / "target" / "release" / "mdp")
    ap.add_argument("--audit-bin", type=Path, default=REPO / "target" / "release" / "mdp-audit")
    ap.add_argument("--no-progress-json", dest="progress_json", action="store_false",
                    help="do not pass --progress-json to mdp build optimal")
    ap.add_argument("--work-dir", type=Path, default=HERE / ".work" / "lp")
    ap.add_argument("--out-dir", type=Path, default=HERE / "reports")
    ap.add_argument("--keep-files", action="store_true")
    ap.add_argument("--budget", type=float, default=None,
                    help="stop starting new instances after this many seconds in total")
    return ap.parse_args(argv)


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--worker-highs"]:
        worker_highs(argv[1], argv[2], float(argv[3]))
        return 0
    if argv[:1] == ["--worker-qif"]:
        worker_qif(argv[1], float(argv[2]), argv[3])
        return 0
    args = parse_args(argv)
    for b in (args.mdp_bin, args.audit_bin):
        if not Path(b).exists():
            print(f"lp_bench: warning: {b} not found (its columns will read 'error'); "
                  "run `cargo build --release`", file=sys.stderr)
    work = args.work_dir
    work.mkdir(parents=True, exist_ok=True)
    info = machine_info(args)
    print(f"lp_bench: {info.get('nproc')} × {info.get('cpu')}; highspy {info.get('highspy')}, "
          f"qif {info.get('qif')}; {info.get('mdp')}", flush=True)
    growth, pmo, spaces_desc = [], [], {}
    notes = []
    t_start = time.perf_counter()
    stopped = False
    for space in args.spaces:
        for n in args.sizes:
            if args.budget is not None and time.perf_counter() - t_start > args.budget:
                notes.append(f"- Stopped before {space} n={n}: --budget {args.budget:g} s used up.")
                stopped = True
                break
            try:
                metric, D, desc = make_space(space, n, args)
            except (OSError, ValueError) as e:
                print(f"lp_bench: {space} n={n}: {e}", file=sys.stderr)
                notes.append(f"- {space} n={n}: skipped ({e}).")
                continue
            med = median_offdiag(D)
            eps = args.epsilon if args.epsilon is not None else args.eps_scale / med
            spaces_desc[f"{space} n={n}"] = (desc, eps, med)
            sfile = work / f"{space}{n}_space.json"
            write_json(sfile, metric)
            print(f"{space} n={n}: median d = {med:.6g}, ε = {eps:.6g} "
                  f"({'fixed' if args.epsilon is not None else f'{args.eps_scale:g}/median'})",
                  flush=True)
            if not args.skip_optimal:
                growth.append(bench_optimal(args, space, n, eps, sfile, work))
            if not args.skip_pmo:
                pmo.append(bench_pmo(args, space, n, eps, sfile, metric, D, work))
            write_reports(args, info, growth, pmo, spaces_desc, notes)
            if not args.keep_files:
                sfile.unlink(missing_ok=True)
        if stopped:
            break
    write_reports(args, info, growth, pmo, spaces_desc, notes)
    print(f"lp_bench: wrote {args.out_dir}/lp_growth.* and pmo_vs_qif.* "
          f"({time.perf_counter() - t_start:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
