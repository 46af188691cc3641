#!/usr/bin/env python3
"""Rome500 benchmark for `mdp build benders` (issue 12), side by side in one run with
`mdp build pmo` and HiGHS (highspy) on the same full PMO LP exported as MPS.

Instance (Qiu 2024, task 2): shared/data/rome500/records.csv (haversine on lat, lon: the
correct order), K = 100 outputs from obf_loc.csv, cost = cost_matrix_task2_obfloc.csv
(travel-time difference / 500, read exactly), uniform prior, η = 2 km.

For each ε: ours (Benders, certified; then `mdp-audit --json --require-within 2` for the
verified gap), `mdp build pmo` (certified), HiGHS IPM and simplex on `mdp lp export pmo`.
Each run has a wall-clock limit; a run that hits it is reported as such.

Usage:
  bash benches/setup.sh
  benches/.venv/bin/python benches/benders_bench.py --eps 10 --max-iter 20 --limit 900
Outputs: benches/reports/benders_rome500.md and .csv (--report NAME for another name).
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "rome500"
BIN = ROOT / "target" / "release"


def prepare(work: Path) -> list[str]:
    work.mkdir(parents=True, exist_ok=True)
    outs = [int(r["record"]) - 1 for r in csv.DictReader(open(DATA / "obf_loc.csv"))]
    (work / "outputs.json").write_text(json.dumps(outs))
    rows = [l.strip().split(",") for l in open(DATA / "cost_matrix_task2_obfloc.csv") if l.strip()]
    # The cost literals are written verbatim: mdp reads them as the exact decimals.
    (work / "cost.json").write_text("[" + ",".join("[" + ",".join(r) + "]" for r in rows) + "]")
    return ["--space", str(DATA / "records.csv"), "--within", "2",
            "--outputs", str(work / "outputs.json"), "--cost", str(work / "cost.json")]


def run(cmd: list[str], limit: float) -> dict:
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=limit)
        return {"code": p.returncode, "out": p.stdout, "err": p.stderr,
                "seconds": time.monotonic() - t}
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        return {"code": None, "out": "", "err": err, "seconds": limit}


def stats(err: str) -> dict:
    for line in reversed(err.splitlines()):
        if line.startswith("stats: "):
            return json.loads(line[len("stats: "):])
    return {}


def audit(path: Path, extra: list[str] | None = None) -> dict:
    r = run([str(BIN / "mdp-audit"), "--json", "--require-within", "2", *(extra or []), str(path)], 600)
    try:
        rep = json.loads(r["out"])
    except json.JSONDecodeError:
        return {}
    for c in rep.get("checks", []):
        if c["name"] in ("benders", "lp_dual") and c.get("witness"):
            return {"check": c["name"], **c["witness"], "verdict": rep.get("verdict")}
    return {"verdict": rep.get("verdict")}


def highs(mps: Path, solver: str, limit: float) -> dict:
    code = (
        "import highspy,sys,time,json\n"
        "h=highspy.Highs(); h.setOptionValue('output_flag',False)\n"
        f"h.setOptionValue('solver','{solver}'); h.setOptionValue('time_limit',{limit})\n"
        f"h.readModel('{mps}'); t=time.monotonic(); h.run(); s=time.monotonic()-t\n"
        "print(json.dumps({'status':h.modelStatusToString(h.getModelStatus()),"
        "'objective':h.getInfo().objective_function_value,'seconds':s}))\n"
    )
    r = run([sys.executable, "-c", code], limit + 60)
    try:
        return json.loads(r["out"].strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"status": "failed", "seconds": r["seconds"], "error": r["err"][-200:]}


def write_csv(path: Path, rows: list[dict]) -> None:
    """The rows as CSV, one column per key of any row (dicts as JSON)."""
    with open(path, "w", newline="") as f:
        keys = sorted({k for r in rows for k in r})
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: json.dumps(v) if isinstance(v, dict) else v for k, v in r.items()})


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--eps", type=float, nargs="+", default=[10.0, 2.0])
    ap.add_argument("--partitions", type=int, default=8)
    ap.add_argument("--max-iter", type=int, default=20)
    ap.add_argument("--limit", type=float, default=900.0)
    ap.add_argument("--skip-pmo", action="store_true")
    ap.add_argument("--pmo-gap", type=float, nargs="*", default=[1e-6],
                    help="also run `mdp build pmo --gap REL` for each REL (the default run is always made)")
    ap.add_argument("--work", default="/tmp/benders_bench")
    ap.add_argument("--report", default="benders_rome500",
                    help="report name under benches/reports (NAME.md and NAME.csv)")
    a = ap.parse_args()
    work = Path(a.work)
    base = prepare(work)
    rows = []
    for eps in a.eps:
        e = ["--epsilon", repr(eps)]
        out = work / f"benders_e{eps}.json"
        r = run([str(BIN / "mdp"), "build", "benders", *base, *e, "--partitions",
                 str(a.partitions), "--max-iter", str(a.max_iter), "-o", str(out)], a.limit)
        st = stats(r["err"]).get("benders", {})
        rows.append({"eps": eps, "method": f"ours: benders (C={a.partitions}, max-iter {a.max_iter})",
                     "status": st.get("status", "timeout" if r["code"] is None else f"exit {r['code']}"),
                     "iterations": st.get("iterations"), "lb_float": st.get("lb_float"),
                     "ub_float": st.get("ub_float"), "seconds": round(r["seconds"], 1),
                     **({"audit": audit(out)} if r["code"] == 0 else {})})
        for gap in ([] if a.skip_pmo else [None, *a.pmo_gap]):
            out = work / f"pmo_e{eps}_{gap}.json"
            g = [] if gap is None else ["--gap", repr(gap)]
            r = run([str(BIN / "mdp"), "build", "pmo", *base, *e, *g, "-o", str(out)], a.limit)
            st = stats(r["err"])
            lb, ub = st.get("certified_lower_bound"), (st.get("expected_loss") or [None, None])[1]
            local = [l for l in r["err"].splitlines() if "localized LP (round" in l]
            whole = any("solving the whole LP" in l for l in r["err"].splitlines())
            how = "whole LP" if not local or whole else f"localized, {len(local)} round(s)"
            rows.append({"eps": eps, "method": f"ours: pmo ({how})" + (f", --gap {gap}" if gap else ""),
                         "status": "ok" if r["code"] == 0 else ("timeout" if r["code"] is None else f"exit {r['code']}"),
                         "objective": st.get("lp", {}).get("objective"),
                         "certified_lb": lb, "audited_ub": ub,
                         "certified_gap": (ub - lb) / ub if lb is not None and ub else None,
                         "seconds": round(r["seconds"], 2)})
        mps = work / f"pmo_e{eps}.mps"
        run([str(BIN / "mdp"), "lp", "export", "pmo", *base, *e, "-o", str(mps)], a.limit)
        for solver in ("ipm", "simplex"):
            h = highs(mps, solver, a.limit)
            rows.append({"eps": eps, "method": f"HiGHS {solver} (full LP, MPS)", **h})
        print(json.dumps(rows[-1]), flush=True)
    rep = ROOT / "benches" / "reports"
    write_csv(rep / f"{a.report}.csv", rows)
    with open(rep / f"{a.report}.md", "w") as f:
        f.write("# Rome500 (Qiu task 2, η = 2 km, K = 100): Benders vs pmo vs HiGHS\n\n")
        f.write(f"Generated by `benches/benders_bench.py` ({time.strftime('%Y-%m-%d')}, this machine, one run each, wall limit {a.limit:.0f} s).\n\n")
        f.write("| ε | method | status | objective / bounds | seconds |\n|---|---|---|---|---|\n")
        for r in rows:
            b = r.get("objective")
            if "lb_float" in r:
                b = f"LB {r['lb_float']} UB {r['ub_float']} ({r.get('iterations')} it.)"
                if r.get("audit"):
                    b += f"; audited: {json.dumps(r['audit'])}"
            elif "certified_lb" in r:
                b = f"{r.get('objective')} (certified ≥ {r.get('certified_lb')}, audited ≤ {r.get('audited_ub')}, gap {r.get('certified_gap') or float('nan'):.1e})"
            f.write(f"| {r['eps']} | {r['method']} | {r.get('status')} | {b} | {r.get('seconds')} |\n")


if __name__ == "__main__":
    main()
