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
