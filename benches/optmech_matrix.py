#!/usr/bin/env python3
"""OPTMech (`mdp build optimal`, default `--solver auto`) on spaces that are not tuned for:
random planar points (ε = 1, 2, 4 per unit, uniform in the unit square), clustered planar
points (10 Gaussian clusters, σ = 0.03, ε = 2), the first n Rome and NYC road records
(haversine km, ε = 2 / median distance) and the first n MiniLM words (english2000,
Euclidean, ε = 2 / median distance). One run per instance (builds are reproducible, so a
second run gives the same file; times vary by a few %). Reports wall seconds, peak RSS,
rows generated, the certified relative gap (loss_max upper end − certified lower bound,
over the loss) and the file size; a run past --timeout is reported as such.

Usage: python3 benches/optmech_matrix.py [--sizes 100 200] [--timeout 600] [--out NAME]
Writes benches/reports/NAME.csv and NAME.md. Standard library only.
"""
import argparse, csv, json, math, os, random, re, subprocess, sys, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
DATA = REPO.parent / "shared" / "data"
MDP = REPO / "target" / "release" / "mdp"


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
    if out.exists():
        res["file_mb"] = round(out.stat().st_size / 1e6, 1)
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--timeout", type=float, default=600)
    ap.add_argument("--out", default="optmech_matrix")
    a = ap.parse_args()
    work = HERE / ".work" / "optmech_matrix"
    work.mkdir(parents=True, exist_ok=True)
    rows = []
    for label, n, space, eps in instances(a.sizes, work):
        out = work / "out.json"
        if out.exists():
            out.unlink()
        r = run(space, eps, out, a.timeout)
        r.update({"space": label, "n": n, "epsilon": eps})
        rows.append(r)
        print(json.dumps(r), file=sys.stderr, flush=True)
    keys = ["space", "n", "epsilon", "status", "seconds", "peak_mib", "rows_generated", "rows_total", "gap", "file_mb"]
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
    (rep / f"{a.out}.md").write_text("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
