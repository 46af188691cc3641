#!/usr/bin/env python3
"""City scale (issue 35): the structured exact audit and the container against the
exhaustive audit and libqif's `is_private`, growing n.

For each n:
  * planar: n random points in a 10 × 10 square (numpy default_rng([35, n]), 4 decimals,
    Euclidean), written as a CSV of labelled points;
  * graph: the first n nodes of a breadth-first search of the Rome road network from its
    first node (shared/data/rome_road; edges between them, weights in km; the induced
    subgraph is connected by construction), written as a JSON `graph` metric;
and on each space, at ε (default 1 per unit; 2 per km on the road graph):
  (i)   `mdp build exponential --container` (float64 rows, proven by the structured audit
        before anything is written): wall clock, peak memory (/usr/bin/time -v), file size;
  (ii)  `mdp-audit --json HEADER` on what (i) wrote: wall clock, peak memory, the tight ε
        enclosure, the fraction of triples settled by box pairs;
  (iii) planar only, n ≤ --exhaustive-max: the exhaustive exact audit of the same float64
        matrix (the Python package's `metricdp.audit`, which computes also (ε,δ) and the
        losses; its own pure-check and tight-ε seconds are reported beside its wall clock),
        under a --timeout;
  (iv)  planar only, n ≤ --qif-max: libqif's `is_private(C, ε·D)` on the same arrays
        (in-process time of the call alone), under the same timeout.
Plus one haversine space: 2 048 points uniform on the whole sphere (the case the old
float filter sent to rationals past 60°), container built and audited.

Usage:
  bash benches/setup.sh
  benches/.venv/bin/python benches/city_scale.py --sizes 2000 5000 10000 20000
Outputs benches/reports/city_scale.md, .csv and city_scale.png (time against n).
Run nothing else on the machine meanwhile (2 cores): the timings are wall clocks.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
from collections import deque
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data"
MDP = REPO / "target" / "release" / "mdp"
AUDIT = REPO / "target" / "release" / "mdp-audit"


def timed(cmd: list[str], timeout: float) -> dict:
    """Run under /usr/bin/time -v: wall seconds, peak RSS (GB), exit code, stdout."""
    try:
        p = subprocess.run(["/usr/bin/time", "-v", *cmd], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"timeout": True, "wall": None, "peak_gb": None, "code": None, "stdout": "", "stderr": ""}
    wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", p.stderr)
    rss = re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr)
    secs = None
    if wall:
        parts = [float(x) for x in wall.group(1).split(":")]
        secs = sum(x * 60 ** i for i, x in enumerate(reversed(parts)))
    return {
        "timeout": False,
        "wall": secs,
        "peak_gb": int(rss.group(1)) / 1e6 if rss else None,
        "code": p.returncode,
        "stdout": p.stdout,
        "stderr": p.stderr,
    }


def planar_csv(n: int, path: Path) -> np.ndarray:
    rng = np.random.default_rng([35, n])
    pts = np.round(rng.uniform(0, 10, (n, 2)), 4)
    with open(path, "w") as f:
        f.write("id,x,y\n")
        for i, (x, y) in enumerate(pts):
            f.write(f"p{i},{float(x)!r},{float(y)!r}\n")
    return pts


def sphere_csv(n: int, path: Path) -> None:
    rng = np.random.default_rng([35, 0, n])
    v = rng.normal(size=(n, 3))
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    lat = np.round(np.degrees(np.arcsin(v[:, 2])), 4)
    lon = np.round(np.degrees(np.arctan2(v[:, 1], v[:, 0])), 4)
    with open(path, "w") as f:
        f.write("id,lat,lon\n")
        for i in range(n):
            f.write(f"s{i},{float(lat[i])!r},{float(lon[i])!r}\n")


def rome_graph(n: int, path: Path) -> int:
    """The first n nodes of a BFS of the Rome road graph and the edges among them."""
    edges = []
    with open(DATA / "rome_road" / "edges_rome.csv") as f:
        for row in csv.DictReader(f):
            u, v = int(row["u_row"]), int(row["v_row"])
            w = float(row["length_m"])
            if u != v and w > 0:
                edges.append((u, v, w))
    adj: dict[int, list[int]] = {}
    for u, v, _ in edges:
        adj.setdefault(u, []).append(v)
        adj.setdefault(v, []).append(u)
    start = min(adj)
    order, seen, q = [], {start}, deque([start])
    while q and len(order) < n:
        x = q.popleft()
        order.append(x)
        for y in adj[x]:
            if y not in seen:
                seen.add(y)
                q.append(y)
    index = {x: i for i, x in enumerate(order)}
    kept = [[index[u], index[v], f"{w / 1000:.6f}"] for u, v, w in edges if u in index and v in index]
    doc = {"kind": "graph", "nodes": len(order), "edges": kept, "labels": [f"rome{x}" for x in order]}
    path.write_text(json.dumps(doc))
    return len(kept)


EXHAUSTIVE = """
import json, sys, time, numpy as np, metricdp
m = np.load(sys.argv[1]); pts = np.loadtxt(sys.argv[2], delimiter=",", skiprows=1, usecols=(1, 2))
t = time.perf_counter()
r = metricdp.audit(m, metricdp.space(pts), sys.argv[3], max_entries=m.size)
print(json.dumps({"seconds": time.perf_counter() - t, "verdict": r.verdict, "tight": r.epsilon_tight,
                  "pure": r.to_dict()["stats"]["seconds_pure"], "tight_s": r.to_dict()["stats"]["seconds_tight"]}))
"""

QIF = """
import json, sys, time, numpy as np, qif
m = np.load(sys.argv[1]); pts = np.loadtxt(sys.argv[2], delimiter=",", skiprows=1, usecols=(1, 2))
d = np.sqrt(((pts[:, None, :] - pts[None, :, :]) ** 2).sum(-1)) * float(sys.argv[3])
dm = qif.metric.from_distance_matrix(d)
t = time.perf_counter()
ok = qif.measure.d_privacy.is_private(m, dm)
print(json.dumps({"seconds": time.perf_counter() - t, "private": bool(ok)}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000, 20000])
    ap.add_argument("--epsilon", default="1")
    ap.add_argument("--graph-epsilon", default="2")
    ap.add_argument("--exhaustive-max", type=int, default=5000)
    ap.add_argument("--qif-max", type=int, default=5000)
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--max-memory", default="20G")
    ap.add_argument("--out-prefix", default=str(HERE / "reports" / "city_scale"))
    ap.add_argument("--replot", action="store_true", help="redraw the chart from the committed CSV")
    a = ap.parse_args()
    if a.replot:
        rows = []
        with open(Path(a.out_prefix).with_suffix(".csv")) as f:
            for r in csv.DictReader(f):
                row = {}
                for k, v in r.items():
                    if v == "":
                        continue
                    try:
                        row[k] = int(v) if k in ("n", "edges", "pairs_checked", "exact_triples", "build_code", "audit_code") else float(v)
                    except ValueError:
                        row[k] = v
                rows.append(row)
        write_report(a, rows, tables=False)
        return
    work = Path(tempfile.mkdtemp(prefix="city_scale-"))
    rows = []

    def build_and_audit(kind: str, n: int, space: Path, eps: str) -> dict:
        header = work / f"{kind.split()[0]}{n}.json"
        b = timed([str(MDP), "build", "exponential", "--space", str(space), "--epsilon", eps, "-o", str(header),
                   "--container", "--quiet", "--max-memory", a.max_memory], a.timeout)
        row = {"kind": kind, "n": n, "epsilon": eps, "build_s": b["wall"], "build_peak_gb": b["peak_gb"],
               "build_code": b["code"]}
        if b["code"] != 0:
            row["note"] = (b["stderr"].strip().splitlines() or ["timeout"])[-1][:200]
            return row
        npy = header.with_suffix(".npy")
        row["file_mb"] = (npy.stat().st_size + header.stat().st_size) / 1e6
        r = timed([str(AUDIT), "--json", "--max-memory", str(64 << 30), str(header)], a.timeout)
        row.update({"audit_s": r["wall"], "audit_peak_gb": r["peak_gb"], "audit_code": r["code"]})
        if r["code"] in (0, 1):
            rep = json.loads(r["stdout"])
            s = rep["stats"]["structured"]
            row.update({"tight_lo": rep["epsilon_tight"][0], "tight_hi": rep["epsilon_tight"][1],
                        "settled_fraction": s["settled_fraction"], "pairs_checked": s["pairs_checked"],
                        "exact_triples": s["exact_triples"], "verdict": rep["verdict"]})
        return row

    for n in a.sizes:
        csv_path = work / f"pts{n}.csv"
        planar_csv(n, csv_path)
        row = build_and_audit("planar", n, csv_path, a.epsilon)
        npy = work / f"planar{n}.npy"
        if n <= a.exhaustive_max and npy.exists():
            e = timed([sys.executable, "-c", EXHAUSTIVE, str(npy), str(csv_path), a.epsilon], a.timeout)
            if e["timeout"]:
                row["exhaustive_s"] = f"> {a.timeout:.0f}"
            elif e["code"] == 0:
                x = json.loads(e["stdout"].strip().splitlines()[-1])
                row.update({"exhaustive_s": e["wall"], "exhaustive_peak_gb": e["peak_gb"],
                            "exhaustive_pure_tight_s": x["pure"] + x["tight_s"], "exhaustive_verdict": x["verdict"],
                            "exhaustive_tight_hi": x["tight"][1] if x["tight"] else None})
            else:
                row["exhaustive_s"] = "error: " + [l for l in e["stderr"].splitlines() if "Error" in l or "error" in l][:1][0][:160] if "rror" in e["stderr"] else "error"
        if n <= a.qif_max and npy.exists():
            q = timed([sys.executable, "-c", QIF, str(npy), str(csv_path), a.epsilon], a.timeout)
            if q["timeout"]:
                row["qif_s"] = f"> {a.timeout:.0f}"
            elif q["code"] == 0:
                x = json.loads(q["stdout"].strip().splitlines()[-1])
                row.update({"qif_s": x["seconds"], "qif_private": x["private"], "qif_peak_gb": q["peak_gb"]})
            else:
                row["qif_s"] = "error: " + [l for l in q["stderr"].splitlines() if "Error" in l or "error" in l][:1][0][:160] if "rror" in q["stderr"] else "error"
        rows.append(row)
        print(json.dumps(row), flush=True)
        for f in work.glob(f"planar{n}.*"):
            f.unlink()
        g = work / f"rome{n}.json"
        m = rome_graph(n, g)
        row = build_and_audit("road graph", n, g, a.graph_epsilon)
        row["edges"] = m
        rows.append(row)
        print(json.dumps(row), flush=True)
        for f in work.glob(f"road{n}.*"):
            f.unlink()
    s = work / "sphere2048.csv"
    sphere_csv(2048, s)
    row = build_and_audit("haversine (globe)", 2048, s, "0.01")
    rows.append(row)
    print(json.dumps(row), flush=True)
    write_report(a, rows)


def fmt(x, digits=2) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:.{digits}f}"
    return str(x)


def write_report(a, rows: list[dict], tables: bool = True) -> None:
    prefix = Path(a.out_prefix)
    if tables:
        write_tables(a, rows, prefix)
    chart(rows, prefix)


def write_tables(a, rows: list[dict], prefix: Path) -> None:
    keys = sorted({k for r in rows for k in r})
    with open(prefix.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    lines = [
        "# City scale: the structured exact audit and the large-mechanism container",
        "",
        f"Generated {dt.datetime.now().isoformat(timespec='seconds')} by `benches/city_scale.py "
        f"--sizes {' '.join(map(str, a.sizes))}` (timeout {a.timeout:.0f} s per run).",
        "",
        f"Machine: {os.cpu_count()} cores, {platform.platform()}, python {platform.python_version()}.",
        "",
        "Exponential mechanism e^(−ε·d/2)/Z, K = n outputs (the inputs). Times are wall clocks of whole "
        "processes (/usr/bin/time -v); peak = maximum resident set size.",
        "",
        "| space | n | ε | build s | build peak GB | files MB | audit s | audit peak GB | tight ε | settled by boxes | exhaustive s (pure+tight s) | libqif is_private s |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        tight = f"[{r['tight_lo']:.10g}, {r['tight_hi']:.10g}]" if r.get("tight_hi") else "—"
        ex = r.get("exhaustive_s")
        if isinstance(ex, float):
            ex = f"{ex:.1f} ({r['exhaustive_pure_tight_s']:.1f})"
        qs = r.get("qif_s")
        lines.append(
            f"| {r['kind']} | {r['n']} | {r['epsilon']} | {fmt(r.get('build_s'), 1)} | {fmt(r.get('build_peak_gb'))} | "
            f"{fmt(r.get('file_mb'), 0)} | {fmt(r.get('audit_s'), 1)} | {fmt(r.get('audit_peak_gb'))} | {tight} | "
            f"{fmt(100 * r['settled_fraction'], 2) + ' %' if 'settled_fraction' in r else '—'} | {fmt(ex, 1)} | "
            f"{fmt(qs, 1)} |"
        )
        if r.get("note"):
            lines.append(f"|  | note: {r['note']} |||||||||||")
    lines += [
        "",
        "'settled by boxes' is the fraction of the n·(n−1)·K triples proven at once by a box-pair test, per pass "
        "(spec/soundness.md §7.2); the rest were decided pair by pair at the leaves (graphs: every triple is an "
        "edge's, there are no boxes). The exhaustive audit also computes the (ε,δ) tight ε and the losses; the "
        "parenthesis is its own pure check plus tight ε.",
    ]
    prefix.with_suffix(".md").write_text("\n".join(lines) + "\n")


def chart(rows: list[dict], prefix: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # pragma: no cover
        print(f"no chart: {e}")
        return
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind, key, style, label in [
        ("planar", "audit_s", "o-", "structured audit, planar (container)"),
        ("road graph", "audit_s", "s-", "structured audit, Rome road graph (edges)"),
        ("planar", "build_s", "o:", "build + proof, planar (container)"),
        ("planar", "exhaustive_s", "^--", "exhaustive exact audit (all pairs)"),
        ("planar", "qif_s", "v--", "libqif is_private (float)"),
    ]:
        pts = [(r["n"], r[key]) for r in rows if r["kind"] == kind and isinstance(r.get(key), float)]
        if pts:
            line = ax.plot(*zip(*pts), style, label=label)[0]
            # Runs stopped at the timeout: an open marker at the bound, labelled.
            for r in rows:
                v = r.get(key)
                if r["kind"] == kind and isinstance(v, str) and v.startswith(">"):
                    bound = float(v[1:])
                    ax.plot([r["n"]], [bound], marker=style[0], mfc="none", color=line.get_color())
                    ax.annotate(f"> {bound:.0f} s", (r["n"], bound), textcoords="offset points",
                                xytext=(6, -3), fontsize=7, color=line.get_color())
            for r in rows:
                v = r.get(key)
                if r["kind"] == kind and isinstance(v, str) and v.startswith("error"):
                    ax.annotate(f"n = {r['n']}: refused (16M-entry limit)", pts[-1], textcoords="offset points",
                                xytext=(8, -3), fontsize=7, color=line.get_color())
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("n (inputs = outputs)")
    ax.set_ylabel("wall clock, seconds")
    ax.set_title("Exact ε·d audit of the exponential mechanism, 2 cores")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(prefix.with_suffix(".png"), dpi=120)


if __name__ == "__main__":
    main()
