#!/usr/bin/env python3
"""Growth benchmark for `mdp build benders` (issue 12): N road nodes of a city, side by side in one
run with `mdp build pmo` (the whole LP, lazy rows) and HiGHS's simplex on the same LP
exported as MPS, until something stops.

Instance for each N (seed 1): N nodes drawn uniformly without replacement from
shared/data/rome_road/nodes_rome.csv (43 160 OpenStreetMap nodes: the same city-wide spread
as Rome500, denser with N), or with --city nyc / london from shared/data/nyc_nodes or
london_nodes (55 353 / 128 203 nodes, wider cities: sparser at the same N), haversine on (lat, lon), K = 100 outputs drawn from the N records,
cost = the distance to the output (PMO's default), uniform prior, η = 2 km, ε = 10/km.

Every run has a wall-clock limit (a run that hits it is reported as such); Benders runs at
most --max-iter iterations, so its row reports the certified bounds reached, audited.

Usage:
  bash benches/setup.sh
  benches/.venv/bin/python benches/benders_growth.py --sizes 500 1000 2000 --limit 400
Outputs: benches/reports/benders_growth.md and .csv.
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import time
from pathlib import Path

from benders_bench import BIN, ROOT, audit, highs, run, stats, write_csv

DATA = ROOT.parent / "shared" / "data"
# City → (node file, latitude column, longitude column).
CITIES = {
    "rome": (DATA / "rome_road" / "nodes_rome.csv", "y", "x"),
    "nyc": (DATA / "nyc_nodes" / "nodes.csv", "lat", "lon"),
    "london": (DATA / "london_nodes" / "nodes.csv", "lat", "lon"),
}


def instance(n: int, work: Path, city: str = "rome") -> list[str]:
    path, lat, lon = CITIES[city]
    rows = list(csv.DictReader(open(path)))
    rng = random.Random(1)
    pick = rng.sample(range(len(rows)), n)
    space = work / f"{city}{n}.csv"
    with open(space, "w") as f:
        f.write("lat,lon\n")
        for i in pick:
            f.write(f"{rows[i][lat]},{rows[i][lon]}\n")
    outs = sorted(rng.sample(range(n), 100))
    (work / f"{city}_outputs{n}.json").write_text(json.dumps(outs))
    return ["--space", str(space), "--within", "2", "--epsilon", "10",
            "--outputs", str(work / f"{city}_outputs{n}.json")]


def status(r: dict) -> str:
    return "ok" if r["code"] == 0 else ("timeout" if r["code"] is None else f"exit {r['code']}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[500, 1000, 2000])
    ap.add_argument("--city", choices=sorted(CITIES), default="rome",
                    help="node set: rome (rome_road), nyc (nyc_nodes) or london (london_nodes)")
    ap.add_argument("--max-iter", type=int, default=5)
    ap.add_argument("--limit", type=float, default=400.0)
    ap.add_argument("--work", default="/tmp/benders_growth")
    ap.add_argument("--skip-peers", action="store_true", help="Benders only (no pmo, no HiGHS)")
    ap.add_argument("--skip-pmo", action="store_true", help="no `mdp build pmo` (e.g. it hit the limit before)")
    ap.add_argument("--skip-benders", action="store_true", help="no `mdp build benders`")
    ap.add_argument("--pmo-gap", type=float, default=None, help="pass --gap REL to `mdp build pmo`")
    ap.add_argument("--max-entries", type=int, default=None,
                    help="pass --max-entries to mdp (N = 5 000 needs 25 000 000)")
    ap.add_argument("--partitioning", default="km-dv", help="--partitioning of `mdp build benders`")
    ap.add_argument("--peers-upto", type=int, default=None,
                    help="run HiGHS only for N up to this (larger N: 'not run')")
    ap.add_argument("--report", default="benders_growth",
                    help="report name under benches/reports (NAME.md and NAME.csv)")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    stopped = {"pmo", "highs"} if a.skip_peers else ({"pmo"} if a.skip_pmo else set())
    for n in a.sizes:
        if a.peers_upto is not None and n > a.peers_upto:
            stopped |= {"highs"}
        base = instance(n, work, a.city)
        if a.max_entries:
            base += ["--max-entries", str(a.max_entries)]
        out = work / f"benders{n}.json"
        r = (run([str(BIN / "mdp"), "build", "benders", *base, "--partitioning", a.partitioning,
                  "--max-iter", str(a.max_iter), "-o", str(out)], a.limit)
             if not a.skip_benders else {"code": "skipped", "err": "", "seconds": 0})
        st = stats(r["err"])
        b = st.get("benders", {})
        shape = b.get("shape", {})
        # On a timeout there is no stats line: keep the last iteration's progress line.
        last = [l for l in r["err"].splitlines() if l.startswith("benders: iter")]
        sizes = [l for l in r["err"].splitlines() if l.startswith("benders: ") and "records," in l]
        rows.append({"n": n, "method": f"ours: benders ({a.partitioning}, C = n/60, max-iter {a.max_iter})",
                     "status": "not run (skipped)" if a.skip_benders else b.get("status", status(r)),
                     "rows": st.get("lp", {}).get("rows_total"),
                     "shape": f"{shape.get('partitions')} subsets, {shape.get('master_records')} master, largest {shape.get('free_max')}" if shape else None,
                     "lb_float": b.get("lb_float"), "ub_float": b.get("ub_float"),
                     "certified_lb": st.get("certified_lower_bound"),
                     "seconds": round(r["seconds"], 1),
                     "progress": (sizes[-1][len("benders: "):] + "; last: " + last[-1][len("benders: "):]) if last and sizes else None,
                     **({"audit": audit(out)} if r["code"] == 0 else {})})
        print(json.dumps(rows[-1]), flush=True)
        if "pmo" in stopped:
            rows.append({"n": n, "method": "ours: pmo (whole LP, lazy rows)",
                         "status": "not run (skipped)" if a.skip_peers or a.skip_pmo or (a.peers_upto or n) < n else "not run (hit the limit at a smaller N)"})
        else:
            out = work / f"pmo{n}.json"
            gap = ["--gap", str(a.pmo_gap)] if a.pmo_gap else []
            r = run(["/usr/bin/time", "-f", "peak %M KB", str(BIN / "mdp"), "build", "pmo", *base, *gap,
                     "-o", str(out)], a.limit)
            st = stats(r["err"])
            el = (st.get("expected_loss") or [None, None])[1]
            lb = st.get("certified_lower_bound")
            notes = [l for l in r["err"].splitlines() if "localized LP (round" in l]
            peak = [l for l in r["err"].splitlines() if l.startswith("peak ")]
            rows.append({"n": n, "method": "ours: pmo" + (f" --gap {a.pmo_gap}" if a.pmo_gap else ""),
                         "status": status(r),
                         "rows": st.get("lp", {}).get("rows_total"),
                         "objective": el,
                         "certified_lb": lb,
                         "certified_gap": (el - lb) / el if el and lb else None,
                         "localized": notes[-1][len("lp: "):] if notes else "whole LP",
                         "iterations": st.get("lp", {}).get("rounds"),
                         "peak": peak[-1][len("peak "):] if peak else None,
                         "audit": audit(out, ["--max-entries", str(a.max_entries)] if a.max_entries else None)
                         if r["code"] == 0 else None,
                         "seconds": round(r["seconds"], 1)})
            if r["code"] != 0:
                stopped.add("pmo")
        print(json.dumps(rows[-1]), flush=True)
        if "highs" in stopped:
            rows.append({"n": n, "method": "HiGHS simplex (full LP, MPS)",
                         "status": "not run (skipped)" if a.skip_peers or (a.peers_upto or n) < n else "not run (hit the limit at a smaller N)"})
        else:
            mps = work / f"pmo{n}.mps"
            t = time.monotonic()
            e = run([str(BIN / "mdp"), "lp", "export", "pmo", *base, "-o", str(mps)], a.limit)
            if e["code"] == 0:
                h = highs(mps, "simplex", a.limit)
                h["seconds"] = round(h.get("seconds", 0), 1)
                rows.append({"n": n, "method": "HiGHS simplex (full LP, MPS)", **h,
                             "export_seconds": round(time.monotonic() - t, 1)})
                if h.get("status") != "Optimal":
                    stopped.add("highs")
            else:
                rows.append({"n": n, "method": "HiGHS simplex (full LP, MPS)",
                             "status": f"export {status(e)}: {e['err'].strip()[-120:]}"})
                stopped.add("highs")
            mps.unlink(missing_ok=True)
        print(json.dumps(rows[-1]), flush=True)
    rep = ROOT / "benches" / "reports"
    write_csv(rep / f"{a.report}.csv", rows)
    with open(rep / f"{a.report}.md", "w") as f:
        f.write(f"# Benders growth on {a.city} road nodes (η = 2 km, ε = 10/km, K = 100, c = d)\n\n")
        f.write(f"Generated by `benches/benders_growth.py` ({time.strftime('%Y-%m-%d')}, this machine, "
                f"2 cores, one run each, wall limit {a.limit:.0f} s per run).\n\n")
        f.write("| N | method | status | LP rows | result | seconds |\n|---|---|---|---|---|---|\n")
        for r in rows:
            if r.get("progress") and r.get("lb_float") is None:
                res = r["progress"]
            elif "lb_float" in r:
                res = (f"{r.get('shape')}; LB {r['lb_float']} UB {r['ub_float']}; "
                       f"certified ≥ {r.get('certified_lb')}")
                if r.get("audit"):
                    res += f"; audit: {json.dumps(r['audit'])}"
            elif "certified_gap" in r:
                res = (f"audited loss {r.get('objective')}, certified ≥ {r.get('certified_lb')} "
                       f"(gap {r['certified_gap']:.1e}); {r.get('localized')}; "
                       f"{r.get('iterations')} iterations; peak {r.get('peak')}; "
                       f"audit: {json.dumps(r.get('audit'))}") if r.get("certified_gap") is not None else str(r.get("status"))
            elif "certified_lb" in r:
                res = f"{r.get('objective')} (certified ≥ {r.get('certified_lb')})"
            else:
                res = str(r.get("objective"))
            f.write(f"| {r['n']} | {r['method']} | {r.get('status')} | {r.get('rows')} | {res} | {r.get('seconds')} |\n")


if __name__ == "__main__":
    main()
