#!/usr/bin/env python3
"""PMO on a city's road network (issue 56): `mdp build pmo --container` (the graph read as
its edges, no n×n table, the localized LP, the lp_dual checked from the outputs' rows)
against the JSON form (the exact n×n table) and HiGHS (highspy) on the same LP.

Since session 40 the container's localized LP factors its whole reduced system as one sparse
LDLᵀ (spec/lp.md §4.10); `container-schur` rows are the same build on the route before it
(`MDP_SCHUR=sparse`: the block inverses and their sparse Schur complement).

Instances (the issue's family): the first N nodes of a breadth-first search of the Rome road
network (`city_scale.rome_graph`: from its lowest node, induced subgraph, weights in km), K
outputs by `--outputs spread:K`, η = 2 km, ε = 10 per km, `--gap 1e-6`.

For each case N:K, whole processes under /usr/bin/time -v (wall clock, peak resident set):
  * container: `mdp build pmo --container`, then `mdp-audit --json --require-within 2` on it
    (the certified bound and this matrix's expected loss); 3 runs (median) when the first is
    under 10 minutes, else one;
  * json: `mdp build pmo` (exact table, exact repair), one run, up to --json-upto nodes;
  * highs: `mdp lp export pmo` (the whole LP over the pairs within η, MPS) solved by HiGHS's
    interior point (highspy, crossover off, its own tolerances), up to --highs-upto nodes.
Each run is bounded by --limit seconds (a stopped run is reported as such).

Usage:
  python3 benches/city_pmo.py            # the issue's growth curve, 1 000 to 43 160 nodes
Writes benches/reports/city_pmo.csv and prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import city_scale  # noqa: E402  (the instance family: rome_graph)

BIN = HERE.parent / "target" / "release"
EPS, ETA, GAP = "10", "2", "1e-6"


def timed(cmd: list[str], limit: float) -> dict:
    """Run `cmd` under /usr/bin/time -v: wall seconds, peak GB, exit code, stderr tail."""
    t = time.monotonic()
    try:
        p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, timeout=limit)
        code, err, out = p.returncode, p.stderr, p.stdout
    except subprocess.TimeoutExpired as e:
        code, err, out = "timeout", (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or ""), ""
    wall = time.monotonic() - t
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", err)
    return {"seconds": wall, "peak_gb": int(m.group(1)) / 1e6 if m else None, "code": code, "err": err, "out": out}


def stats_of(err: str) -> dict:
    """The container build's stats line and its interior point's iteration count."""
    r = {}
    m = re.search(r"stats: pmo lp ([\d.]+) s, proof ([\d.]+) s, audit ([\d.]+) s; (\d+) privacy rows held", err)
    if m:
        r.update(lp_s=float(m.group(1)), proof_s=float(m.group(2)), audit_s=float(m.group(3)), rows=int(m.group(4)))
    its = [int(x) for x in re.findall(r"converged: relative gap [\d.e+-]+ in (\d+) iterations", err)]
    its += [int(x) for x in re.findall(r"after (\d+) iterations", err)]
    if its:
        r["iterations"] = sum(its)
    m = re.search(r"the reduced system \((\d+) unknowns, (\d+) entries in its lower triangle\): its LDL.{1,3} factor stores (\d+) entries", err)
    if m:
        r.update(unknowns=int(m.group(1)), pattern=int(m.group(2)), factor=int(m.group(3)))
    m = re.search(r"localized LP \(round \d+\): (\d+) of (\d+) variables", err)
    if m:
        r["held"] = int(m.group(1)) / int(m.group(2))
    r["rounds"] = len(re.findall(r"localized LP \(round", err))
    return r


def audited(path: Path) -> dict:
    p = subprocess.run([str(BIN / "mdp-audit"), "--json", "--require-within", ETA, str(path)],
                       capture_output=True, text=True, timeout=3600)
    try:
        rep = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"verdict": "error"}
    bound = next((c["witness"]["bound"] for c in rep["checks"] if c["name"] == "lp_dual" and c.get("witness")), None)
    loss = (rep.get("expected_loss") or [None, None])[1]
    gap = (loss - bound) / loss if bound is not None and loss else None
    return {"verdict": rep["verdict"], "bound": bound, "loss": loss, "gap": gap,
            "audit_s": rep["stats"]["seconds_total"]}


def build(space: Path, k: int, out: Path, container: bool, limit: float, route: str | None = None) -> dict:
    cmd = [str(BIN / "mdp"), "build", "pmo", "--space", str(space), "--epsilon", EPS, "--within", ETA,
           "--outputs", f"spread:{k}", "--gap", GAP, "--max-memory", "20G", "--max-entries", "100000000",
           "-o", str(out)]
    if container:
        cmd.append("--container")
    if route:
        cmd = ["env", f"MDP_SCHUR={route}", *cmd]
    r = timed(cmd, limit)
    row = {"seconds": r["seconds"], "peak_gb": r["peak_gb"], "code": r["code"], **stats_of(r["err"])}
    if r["code"] == 0:
        row.update(audited(out))
    else:
        said = [line for line in r["err"].splitlines() if line.startswith("mdp")]
        row["error"] = said[-1][:300] if said else ""
    return row


def highs(space: Path, k: int, work: Path, limit: float) -> dict:
    mps = work / f"pmo_{space.stem}_{k}.mps"
    r = timed([str(BIN / "mdp"), "lp", "export", "pmo", "--space", str(space), "--epsilon", EPS, "--within", ETA,
               "--outputs", f"spread:{k}", "--max-entries", "100000000", "-o", str(mps)], limit)
    if r["code"] != 0:
        return {"status": "export failed", "error": r["err"][-300:]}
    code = (
        "import highspy,json,time\n"
        "h=highspy.Highs(); h.setOptionValue('output_flag',False)\n"
        f"h.setOptionValue('solver','ipm'); h.setOptionValue('run_crossover','off'); h.setOptionValue('time_limit',{limit})\n"
        f"h.readModel('{mps}'); t=time.monotonic(); h.run(); s=time.monotonic()-t\n"
        "print(json.dumps({'status':h.modelStatusToString(h.getModelStatus()),"
        "'objective':h.getInfo().objective_function_value,'solve_s':s}))\n"
    )
    r = timed([sys.executable, "-c", code], limit + 120)
    mps.unlink(missing_ok=True)
    try:
        return {**json.loads(r["out"].strip().splitlines()[-1]), "seconds": r["seconds"], "peak_gb": r["peak_gb"]}
    except (IndexError, json.JSONDecodeError):
        return {"status": f"failed ({r['code']})", "seconds": r["seconds"], "peak_gb": r["peak_gb"]}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", nargs="+",
                    default=["1000:100", "2000:100", "5000:100", "10000:500", "20000:1000", "43160:1000"])
    ap.add_argument("--json-upto", type=int, default=2000)
    ap.add_argument("--schur-upto", type=int, default=5000,
                    help="also build with the blocks' route (MDP_SCHUR=sparse: block inverses, sparse Schur complement), one run")
    ap.add_argument("--highs-upto", type=int, default=5000)
    ap.add_argument("--highs-limit", type=float, default=1200.0, help="seconds for HiGHS's solve")
    ap.add_argument("--limit", type=float, default=3600.0)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default="/tmp/city_pmo")
    ap.add_argument("--csv", default=str(HERE / "reports" / "city_pmo.csv"))
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for case in a.cases:
        n, k = (int(x) for x in case.split(":"))
        space = work / f"rome{n}.json"
        edges = city_scale.rome_graph(n, space)
        runs = []
        for i in range(a.repeat):
            r = build(space, k, work / f"c{n}_{k}.json", True, a.limit)
            runs.append(r)
            print(json.dumps({"n": n, "k": k, "path": "container", "run": i, **r}), flush=True)
            if r["code"] != 0 or r["seconds"] > 600:
                break
        secs = [r["seconds"] for r in runs]
        row = {"n": n, "k": k, "edges": edges, "path": "container", "runs": len(runs),
               "seconds_median": statistics.median(secs), "seconds_min": min(secs), "seconds_max": max(secs),
               **{key: v for key, v in runs[0].items() if key not in ("seconds",)}}
        rows.append(row)
        if n <= a.schur_upto:
            r = build(space, k, work / f"s{n}_{k}.json", True, a.limit, route="sparse")
            print(json.dumps({"n": n, "k": k, "path": "container-schur", **r}), flush=True)
            rows.append({"n": n, "k": k, "edges": edges, "path": "container-schur", "runs": 1,
                         "seconds_median": r["seconds"], **r})
        if n <= a.json_upto:
            r = build(space, k, work / f"j{n}_{k}.json", False, a.limit)
            print(json.dumps({"n": n, "k": k, "path": "json", **r}), flush=True)
            rows.append({"n": n, "k": k, "edges": edges, "path": "json", "runs": 1, "seconds_median": r["seconds"], **r})
        if n <= a.highs_upto:
            h = highs(space, k, work, a.highs_limit)
            print(json.dumps({"n": n, "k": k, "path": "highs", **h}), flush=True)
            rows.append({"n": n, "k": k, "edges": edges, "path": "highs", "runs": 1,
                         "seconds_median": h.get("seconds"), **h})
    with open(a.csv, "w", newline="") as f:
        keys = sorted({key for r in rows for key in r})
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)


if __name__ == "__main__":
    main()
