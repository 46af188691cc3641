#!/usr/bin/env python3
"""Write the two JSON reproducers of finding F1 (fuzz/REPORT.md, 2026-11-23) next to this file.

    python3 fuzz/findings/gen_huge_numbers.py   # from the repository root
    time target/release/mdp-audit fuzz/findings/lp_dual_huge_beta_planar20.json   # ~36 s (original file: 0.09 s)
    time target/release/mdp-audit fuzz/findings/matrix_huge_row_planar20.json     # > 300 s

Both start from tests/corpus/pass/lp_optimal_planar20.json; numbers are kept as exact literals.
"""
import json, os, random, re, sys
from decimal import Decimal

sys.set_int_max_str_digits(0)
here = os.path.dirname(os.path.abspath(__file__))
src = os.path.join(here, "..", "..", "tests", "corpus", "pass", "lp_optimal_planar20.json")

def load():
    return json.load(open(src), parse_float=Decimal, parse_int=Decimal)

def dumps(v):
    def conv(x):
        if isinstance(x, Decimal): return "@@NUM@@" + str(x) + "@@"
        if isinstance(x, dict): return {k: conv(y) for k, y in x.items()}
        if isinstance(x, list): return [conv(y) for y in x]
        return x
    return re.sub(r'"@@NUM@@([^@]*)@@"', r"\1", json.dumps(conv(v), separators=(",", ":")))

# lp_dual: the 20 beta weights become 1/p_i with odd ~330 000-bit p_i (~100 000 digits, the
# per-literal limit): a 2 MB file, 6.6 Mbit of numbers (far below --max-bits = 2^33).
random.seed(2)
d = load()
lb = d["certificate"]["lower_bound"]
lb["beta"] = ["1/%d" % (random.getrandbits(330000) | 1) for _ in range(20)]
lb["value"] = 0
open(os.path.join(here, "lp_dual_huge_beta_planar20.json"), "w").write(dumps(d))

# The same size in one matrix row (no certificate): row normalization / privacy ratios.
random.seed(3)
d = load()
del d["certificate"]
d["matrix"][0] = ["1/%d" % (random.getrandbits(330000) | 1) for _ in range(20)]
open(os.path.join(here, "matrix_huge_row_planar20.json"), "w").write(dumps(d))
