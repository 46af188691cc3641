#!/usr/bin/env python3
"""Write the experiment spaces (mdp metric JSON) from ../shared/data (stdlib only).

  python3 experiments/spaces.py [OUT_DIR]   # default experiments/.spaces

road{N}: the first N secret records of rome500/records.csv (Qiu et al.), haversine km.
text{N}: the first N words of text_minilm/english2000 (all-MiniLM-L6-v2, 384-d), euclidean.
"""
import csv, json, os, sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "shared", "data")
out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, ".spaces")
os.makedirs(out, exist_ok=True)

rows = list(csv.DictReader(open(os.path.join(DATA, "rome500", "records.csv"))))
for n in (50, 200, 500):
    pts = [[float(r["lat"]), float(r["lon"])] for r in rows[:n]]
    json.dump({"kind": "haversine", "points": pts}, open(os.path.join(out, f"road{n}.json"), "w"))

vec = list(csv.reader(open(os.path.join(DATA, "text_minilm", "english2000_vectors.csv"))))[1:]
for n in (50, 200, 500):
    pts = [[float(x) for x in r[1:]] for r in vec[:n]]
    json.dump({"kind": "euclidean", "points": pts}, open(os.path.join(out, f"text{n}.json"), "w"))
print(f"spaces written to {out}")

# User-level experiments (mdp experiment user-level): Rome road nodes (rome_road, OSM).
# romeroad300: 300 nodes of central Rome (every k-th node inside a 12 x 11 km box), haversine
# km. rome_freq_prior.json: a 16 x 8 clustered item space built from the same nodes: 16
# centres by farthest-first traversal, each cluster the 8 nodes nearest its centre; item
# weight = the node's street_count, cluster mass = the share of central nodes nearest to
# its centre (item probabilities, cluster-major order).
import math
nodes = list(csv.DictReader(open(os.path.join(DATA, "rome_road", "nodes_rome.csv"))))
central = [(float(r["y"]), float(r["x"]), int(r["street_count"] or 1)) for r in nodes
           if 41.85 <= float(r["y"]) <= 41.95 and 12.42 <= float(r["x"]) <= 12.56]
step = max(1, len(central) // 300)
pick = central[::step][:300]
json.dump({"kind": "haversine", "points": [[la, lo] for la, lo, _ in pick]},
          open(os.path.join(out, "romeroad300.json"), "w"))

def km(a, b):
    la1, lo1, la2, lo2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((la2 - la1) / 2) ** 2 + math.cos(la1) * math.cos(la2) * math.sin((lo2 - lo1) / 2) ** 2
    return 2 * 6371.0088 * math.asin(math.sqrt(h))

sample = central[::max(1, len(central) // 3000)]
centres = [sample[0]]
while len(centres) < 16:
    centres.append(max(sample, key=lambda p: min(km(p, c) for c in centres)))
share = [0] * 16
for p in sample:
    share[min(range(16), key=lambda i: km(p, centres[i]))] += 1
prior = []
for i, c in enumerate(centres):
    near = sorted(sample, key=lambda p: km(p, c))[:8]
    w = [p[2] for p in near]
    prior += [share[i] / len(sample) * x / sum(w) for x in w]
json.dump(prior, open(os.path.join(out, "rome_freq_prior.json"), "w"))
print(f"user-level spaces written to {out}: romeroad300 ({len(pick)} of {len(central)} central nodes)")
