#!/usr/bin/env python3
"""OPTMech (`mdp build optimal`, default `--solver auto`) on spaces that are not tuned for:
random planar points (ε = 1, 2, 4 per unit, uniform in the unit square), clustered planar
points (10 Gaussian clusters, σ = 0.03, ε = 2), the first n Rome and NYC road records
(haversine km, ε = 2 / median distance) and the first n MiniLM words (english2000,
Euclidean, ε = 2 / median distance). One run per instance (builds are reproducible, so a
second run gives the same file; times vary by a few %). Reports wall seconds, peak RSS,
rows generated, the certified relative gap (loss_max upper end − certified lower bound,
over the loss) and the file size; a run past --timeout is reported as such.

With --highs, the same LP (`mdp lp export optimal`: every row after exact pruning, as
free MPS) is solved by HiGHS's interior point (highspy, crossover on, default options,
`time_limit` = --timeout, in a child process: `lp_bench.py --worker-highs`) right after
our build, so each pair runs on the same machine state; HiGHS's objective is compared with
our written matrix's certified loss. Needs benches/setup.sh (the .venv with highspy).

Usage: python3 benches/optmech_matrix.py [--sizes 100 200] [--timeout 600] [--out NAME]
       [--highs] [--only SUBSTRING,...]
Writes benches/reports/NAME.csv and NAME.md. Standard library only (highspy in .venv).
"""
import argparse, csv, json, math, os, random, re, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data"
MDP = REPO / "target" / "release" / "mdp"
VENV_PY = HERE / ".venv" / "bin" / "python"


def planar(n, seed):
    r = random.Random(seed * 1000 + n)
    return [[round(r.random(), 6), round(r.random(), 6)] for _ in range(n)]


def clustered(n, seed):
    r = random.Random(seed * 1000 + n + 7)
    centers = [[r.random(), r.random()] for _ in range(10)]
    pts = []
    for i in range(n):
        c = centers[i % 10]
        pts.append([round(c[0] + r.gauss(0, 0.03), 6), round(c[1] + r.gauss(0, 0.03), 6)])
    return pts


def euclid(a, b):
    return math.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))


def haversine(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0088 * math.asin(min(1.0, math.sqrt(h)))


def median_distance(pts, d):
    ds = sorted(d(pts[i], pts[j]) for i in range(len(pts)) for j in range(i + 1, len(pts)))
    return ds[len(ds) // 2]


def road(name, n):
    path = DATA / name
    rows = list(csv.DictReader(open(path)))[:n]
    return [[float(r["lat"]), float(r["lon"])] for r in rows]


def text(n):
    rows = list(csv.reader(open(DATA / "text_minilm" / "english2000_vectors.csv")))[1 : n + 1]
    return [[float(x) for x in r[1:]] for r in rows]


def instances(sizes, work):
    for n in sizes:
        for eps in (1, 2, 4):
            p = work / f"planar{n}.json"
            p.write_text(json.dumps({"kind": "euclidean", "points": planar(n, 1)}))
            yield f"planar ε={eps}", n, p, str(eps)
        p = work / f"clustered{n}.json"
        p.write_text(json.dumps({"kind": "euclidean", "points": clustered(n, 1)}))
        yield "clustered ε=2", n, p, "2"
        for label, f in (("Rome road", "rome500/records.csv"), ("NYC road", "nyc_nodes/nodes.csv")):
            pts = road(f, n)
            p = work / f"{label.split()[0].lower()}{n}.csv"
            p.write_text("lat,lon\n" + "".join(f"{a},{b}\n" for a, b in pts))
            eps = 2.0 / median_distance(pts, haversine)
            yield f"{label} ε=2/median", n, p, f"{eps:.6g}"
        pts = text(n)
        p = work / f"text{n}.json"
        p.write_text(json.dumps({"kind": "euclidean", "points": pts}))
        eps = 2.0 / median_distance(pts, euclid)
        yield "MiniLM text ε=2/median", n, p, f"{eps:.6g}"


def run(space, eps, out, timeout):
    cmd = ["/usr/bin/time", "-f", "PEAK_KB %M", str(MDP), "build", "optimal", "--space", str(space),
           "--epsilon", eps, "-o", str(out), "--quiet"]
    t = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout {timeout:.0f} s", "seconds": timeout}
    secs = time.monotonic() - t
    res = {"status": "ok" if p.returncode == 0 else f"exit {p.returncode}", "seconds": round(secs, 2)}
    m = re.search(r"PEAK_KB (\d+)", p.stderr)
    if m:
        res["peak_mib"] = round(int(m.group(1)) / 1024)
    m = re.search(r"^stats: (\{.*\})$", p.stderr, re.M)
    if m:
        st = json.loads(m.group(1))
        hi = st["loss_max"][1]
        lb = st.get("certified_lower_bound")
        res["rows_generated"] = st["lp"]["rows_generated"]
        res["rows_total"] = st["lp"]["rows_total"]
        res["gap"] = None if lb is None else (hi - lb) / hi
        res["loss_upper"] = hi
    if out.exists():
        res["file_mb"] = round(out.stat().st_size / 1e6, 1)
    return res


def highs(space, eps, work, timeout):
    """HiGHS IPM on the exported LP: status, seconds (read + run), objective, peak MiB."""
    mps = work / "lp.mps"
    t = time.monotonic()
    e = subprocess.run([str(MDP), "lp", "export", "optimal", "--space", str(space), "--epsilon", eps,
                        "-o", str(mps)], capture_output=True, text=True, timeout=timeout)
    res = {"export_seconds": round(time.monotonic() - t, 2)}
    if e.returncode != 0:
        res["highs_status"] = f"export exit {e.returncode}"
        return res
    res["mps_mb"] = round(mps.stat().st_size / 1e6, 1)
    cmd = ["/usr/bin/time", "-f", "PEAK_KB %M", str(VENV_PY), str(HERE / "lp_bench.py"),
           "--worker-highs", str(mps), "ipm", repr(float(timeout))]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 120)
    except subprocess.TimeoutExpired:
        res["highs_status"] = f"timeout {timeout:.0f} s"
        return res
    finally:
        mps.unlink(missing_ok=True)
    m = re.search(r"PEAK_KB (\d+)", p.stderr)
    if m:
        res["highs_peak_mib"] = round(int(m.group(1)) / 1024)
    try:
        h = json.loads(p.stdout.strip().splitlines()[-1])
    except Exception:
        res["highs_status"] = f"exit {p.returncode}"
        return res
    res["highs_status"] = h["status"] if h["status"] != "timeout" else f"timeout {timeout:.0f} s"
    res["highs_seconds"] = round(h["seconds"], 2)
    res["highs_objective"] = h.get("objective")
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default="optmech_matrix")
    ap.add_argument("--highs", action="store_true", help="also solve each LP with HiGHS IPM")
    ap.add_argument("--only", default="", help="run only the instances whose label contains one of these (comma-separated)")
    a = ap.parse_args()
    work = HERE / ".work" / "optmech_matrix"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for label, n, space, eps in instances(a.sizes, work):
        if a.only and not any(o in label for o in a.only.split(",")):
            continue
        out = work / "out.json"
        if out.exists():
            out.unlink()
        r = run(space, eps, out, a.timeout)
        r.update({"space": label, "n": n, "epsilon": eps})
        if a.highs:
            r.update(highs(space, eps, work, a.timeout))
            if r.get("highs_status") == "ok" and r["status"] == "ok":
                r["ratio_highs_over_ours"] = round(r["highs_seconds"] / r["seconds"], 2)
            elif r.get("highs_status", "").startswith("timeout") and r["status"] == "ok":
                r["ratio_highs_over_ours"] = f"> {a.timeout / r['seconds']:.0f}"
                r["highs_objective"] = None  # not an optimum
        rows.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    keys = ["space", "n", "epsilon", "status", "seconds", "peak_mib", "rows_generated", "rows_total", "gap", "file_mb",
            "loss_upper", "highs_status", "highs_seconds", "highs_objective", "highs_peak_mib", "mps_mb",
            "ratio_highs_over_ours"]
    rep = HERE / "reports"
    with open(rep / f"{a.out}.csv", "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k) for k in keys})
    L = [f"# OPTMech on untuned spaces ({time.strftime('%Y-%m-%d')}, `benches/optmech_matrix.py`)", "",
         "One run each, this machine (2 cores), `mdp build optimal` with the default `--solver auto`.",
         "gap = (upper end of the written matrix's exact loss − certified lower bound) / loss.", "",
         "| space | n | ε | status | wall s | peak MiB | rows generated / total | certified gap | file MB |",
         "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        g = r.get("gap")
        L.append(f"| {r['space']} | {r['n']} | {r['epsilon']} | {r['status']} | {r.get('seconds')} | {r.get('peak_mib', '')} | "
                 f"{r.get('rows_generated', '')} / {r.get('rows_total', '')} | {'' if g is None else f'{g:.1e}'} | {r.get('file_mb', '')} |")
    if a.highs:
        L += ["", "HiGHS IPM (highspy, crossover on) on the same LP (`mdp lp export optimal`), right after ours:", "",
              "| space | n | ours s | HiGHS status | HiGHS s | HiGHS/ours | HiGHS peak MiB | MPS MB | HiGHS objective | our loss (upper) |",
              "|---|---|---|---|---|---|---|---|---|---|"]
        for r in rows:
            L.append(f"| {r['space']} | {r['n']} | {r.get('seconds')} | {r.get('highs_status', '')} | {r.get('highs_seconds', '')} | "
                     f"{r.get('ratio_highs_over_ours', '')} | {r.get('highs_peak_mib', '')} | {r.get('mps_mb', '')} | "
                     f"{r.get('highs_objective', '')} | {r.get('loss_upper', '')} |")
    (rep / f"{a.out}.md").write_text("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
