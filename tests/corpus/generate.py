#!/usr/bin/env python3
"""Regenerate the mdp-audit test corpus (tests/corpus/{pass,fail,bad}/ and manifest.json).

Mechanisms are computed with mpmath at 60 significant digits and written with 45, so the
files carry no float artefacts; each planted violation is checked at 60 digits to be the
*only* violating triple. Run: python3 tests/corpus/generate.py (needs mpmath).
The two real-space files (pass/exp_rome100.json, pass/exp_cities40.json) are written by
`mdp build exponential` instead (see tests/corpus/README.md)."""
import json, os, random
import mpmath as mp

mp.mp.dps = 60
HERE = os.path.dirname(os.path.abspath(__file__))
manifest = []


def s(x, digits=45):
    return mp.nstr(mp.mpf(x), digits, min_fixed=-5, max_fixed=20).replace("e+", "e")


def dist(kind, a, b, radius=mp.mpf("6371.0088")):
    a = [mp.mpf(x) for x in a]
    b = [mp.mpf(x) for x in b]
    if kind == "euclidean":
        return mp.sqrt(sum((x - y) ** 2 for x, y in zip(a, b)))
    if kind == "manhattan":
        return sum(abs(x - y) for x, y in zip(a, b))
    if kind == "chebyshev":
        return max(abs(x - y) for x, y in zip(a, b))
    if kind == "haversine":
        p1, l1, p2, l2 = [mp.radians(t) for t in (a[0], a[1], b[0], b[1])]
        h = mp.sin((p2 - p1) / 2) ** 2 + mp.cos(p1) * mp.cos(p2) * mp.sin((l2 - l1) / 2) ** 2
        return 2 * radius * mp.asin(mp.sqrt(h))
    raise ValueError(kind)


def dmatrix(metric):
    if metric["kind"] == "explicit":
        return [[mp.mpf(x) for x in r] for r in metric["distances"]]
    if metric["kind"] == "graph":
        n = metric["nodes"]
        D = [[mp.inf] * n for _ in range(n)]
        for i in range(n):
            D[i][i] = mp.mpf(0)
        for u, v, w in metric["edges"]:
            D[u][v] = D[v][u] = min(D[u][v], mp.mpf(w))
        for k in range(n):
            for i in range(n):
                for j in range(n):
                    if D[i][k] + D[k][j] < D[i][j]:
                        D[i][j] = D[i][k] + D[k][j]
        return D
    P = metric["points"]
    return [[dist(metric["kind"], p, q) for q in P] for p in P]


def expmech(D, eps, weights=None, cols=None):
    n = len(D)
    cols = cols if cols is not None else list(range(n))
    eps = mp.mpf(eps)
    H = []
    for i in range(n):
        w = [(mp.mpf(weights[j]) if weights else 1) * mp.exp(-eps * D[i][j] / 2) for j in cols]
        z = sum(w)
        H.append([x / z for x in w])
    return H


def violations(H, D, eps, cols=None):
    n = len(H)
    cols = cols if cols is not None else list(range(n))
    out = []
    for u in range(n):
        for v in range(n):
            if u == v:
                continue
            c = mp.exp(mp.mpf(eps) * D[u][v])
            for k in range(len(cols)):
                if H[u][k] > c * H[v][k]:
                    out.append((u, v, k))
    return out


def tight_eps(H, D):
    best = mp.mpf(0)
    for u in range(len(H)):
        for v in range(len(H)):
            if u != v:
                r = max(H[u][k] / H[v][k] for k in range(len(H[u])))
                best = max(best, mp.log(r) / D[u][v])
    return best


def write(sub, name, doc, **expect):
    os.makedirs(os.path.join(HERE, sub), exist_ok=True)
    path = os.path.join(sub, name)
    with open(os.path.join(HERE, path), "w") as f:
        if isinstance(doc, str):
            f.write(doc)
        else:
            json.dump(doc, f)
            f.write("\n")
    manifest.append(dict(file=path, **expect))


def mech_doc(metric, eps, H, **extra):
    d = {"format": "mdp/1", "epsilon": eps, "metric": metric, "matrix": [[s(x) for x in r] for r in H]}
    d.update(extra)
    return d


rng = random.Random(20261122)


def rand_points(n, dim=2, lo=0, hi=10, digits=3):
    return [[f"{rng.uniform(lo, hi):.{digits}f}" for _ in range(dim)] for _ in range(n)]


# ---------------------------------------------------------------- pass: every metric kind
for kind in ["euclidean", "manhattan", "chebyshev"]:
    metric = {"kind": kind, "points": rand_points(14, 3)}
    D = dmatrix(metric)
    write("pass", f"exp_{kind}.json", mech_doc(metric, "0.8", expmech(D, "0.8")), exit=0)
metric = {"kind": "haversine", "points": [[f"{41.85 + rng.uniform(0, .1):.5f}", f"{12.45 + rng.uniform(0, .1):.5f}"] for _ in range(15)]}
D = dmatrix(metric)
write("pass", "exp_haversine.json", mech_doc(metric, "0.7", expmech(D, "0.7")), exit=0)
P = rand_points(10, 2)
metric = {"kind": "explicit", "distances": [[f"{dist('manhattan', p, q)}" for q in P] for p in P]}
D = dmatrix(metric)
write("pass", "exp_explicit.json", mech_doc(metric, "1.1", expmech(D, "1.1")), exit=0)
edges = [[i, i + 1, f"{rng.uniform(0.5, 2):.2f}"] for i in range(11)] + [[0, 6, "3.5"], [3, 9, "2.25"]]
metric = {"kind": "graph", "nodes": 12, "edges": edges}
D = dmatrix(metric)
write("pass", "exp_graph.json", mech_doc(metric, "0.9", expmech(D, "0.9")), exit=0)
# weighted exponential mechanism (Proposition 1) with random weights Y > 0
metric = {"kind": "euclidean", "points": rand_points(16, 2)}
D = dmatrix(metric)
Y = [f"{rng.uniform(0.01, 5):.4f}" for _ in range(16)]
write("pass", "wexp_random.json", mech_doc(metric, "1.3", expmech(D, "1.3", Y), meta={"weights": Y}), exit=0)
# outputs ⊂ inputs, a prior, a cost matrix, neighbours within η
cols = [0, 3, 5, 8, 11]
H = expmech(D, "1.3", cols=cols)
write("pass", "exp_of_inputs_prior.json",
      mech_doc(metric, "1.3", H, outputs={"of_inputs": cols}, loss={"prior": [str(i + 1) for i in range(16)]}), exit=0)
cost = [[s(D[i][c] ** 2) for c in cols] for i in range(16)]
write("pass", "exp_cost.json", mech_doc(metric, "1.3", H, outputs={"of_inputs": cols}, loss={"cost": cost}), exit=0)
write("pass", "exp_neighbors.json", mech_doc(metric, "1.3", expmech(D, "1.3"), neighbors={"within": "3"}), exit=0)
# packing certificate: two farthest points, radius d/2 - tiny (Imola et al. §4 special case)
far = max(((i, j) for i in range(16) for j in range(i + 1, 16)), key=lambda t: D[t[0]][t[1]])
r = s(D[far[0]][far[1]] / 2 * mp.mpf("0.999"), 12)
write("pass", "exp_packing.json", mech_doc(metric, "1.3", expmech(D, "1.3"),
      certificate={"lower_bound": {"kind": "packing", "centers": list(far), "radius": r}}), exit=0)

# ------------------------------------------------- fail: planted single-triple violations


def plant(metric, eps, rel, name, real=False):
    D = dmatrix(metric)
    n = len(D)
    base = expmech(D, mp.mpf(eps) / 2)  # slack e^{εd/2} everywhere
    c = lambda u, v: mp.exp(mp.mpf(eps) * D[u][v])
    cands = []
    for u in range(n):
        for w in range(n):
            if w == u:
                continue
            bounds = sorted((c(u, x) * base[x][w], x) for x in range(n) if x != u)
            (b1, v), (b2, _) = bounds[0], bounds[1]
            if b2 > b1 * (1 + mp.mpf(rel)) * mp.mpf("1.001"):
                cands.append((base[u][w], u, v, w, b1))
    cands.sort()
    for _, u, v, w, b1 in cands[:40]:
        T = b1 * (1 + mp.mpf(rel))
        H = [r[:] for r in base]
        rest = 1 - base[u][w]
        H[u] = [x * (1 - T) / rest for x in base[u]]
        H[u][w] = T
        # the written (45-digit) matrix must have exactly this one violation
        Hw = [[mp.mpf(s(x)) for x in r] for r in H]
        if violations(Hw, D, eps) == [(u, v, w)]:
            write("fail", name, mech_doc(metric, eps, H, meta={"planted": [u, v, w], "relative_excess": rel}),
                  exit=1, witness=[u, v, w])
            return
    raise SystemExit(f"no single-violation plant found for {name}")


metric = {"kind": "euclidean", "points": rand_points(12, 2)}
for rel, tag in [("1e-12", "1e-12"), ("1e-6", "1e-6"), ("1", "1")]:
    plant(metric, "1.5", rel, f"planted_euclidean_{tag}.json")
rome = [l.split(",") for l in open(os.path.join(HERE, "../../audit/src/builtin/rome100.csv")).read().split()[1:21]]
metric_rome = {"kind": "haversine", "points": [[r[1], r[2]] for r in rome]}
for rel, tag in [("1e-12", "1e-12"), ("1e-6", "1e-6"), ("1", "1")]:
    plant(metric_rome, "0.4", rel, f"planted_rome_{tag}.json")

# private only at a slightly larger ε: claim = tight·(1 − 1e-7)
metric = {"kind": "euclidean", "points": rand_points(15, 2)}
D = dmatrix(metric)
H = expmech(D, "1")
t = tight_eps(H, D)
write("fail", "claim_below_tight.json", mech_doc(metric, s(t * (1 - mp.mpf("1e-7")), 30), H,
      meta={"tight_epsilon": s(t, 30)}), exit=1, tight=s(t, 30))

# ------------------------------------------------------------------ bad: one per class
good = {"format": "mdp/1", "epsilon": 1, "metric": {"kind": "euclidean", "points": [[0, 0], [1, 0]]},
        "matrix": [["0.6", "0.4"], ["0.4", "0.6"]]}


def bad(name, mutate, path_msg):
    d = json.loads(json.dumps(good))
    if callable(mutate):
        mutate(d)
        doc = d
    else:
        doc = mutate
    write("bad", name, doc, exit=2, message=path_msg)


def setk(k, v):
    def f(d):
        cur = d
        for p in k[:-1]:
            cur = cur[p]
        cur[k[-1]] = v
    return f


def delk(k):
    return lambda d: d.pop(k)


bad("wrong_type_epsilon.json", setk(["epsilon"], [1]), "epsilon: expected a number")
bad("nonnumeric_epsilon.json", setk(["epsilon"], "one"), "epsilon: not an exact number")
bad("epsilon_zero.json", setk(["epsilon"], 0), "epsilon: must be > 0")
bad("epsilon_negative.json", setk(["epsilon"], "-1/2"), "epsilon: must be > 0")
bad("missing_epsilon.json", delk("epsilon"), "epsilon: missing")
bad("missing_matrix.json", delk("matrix"), "matrix: missing")
bad("ragged.json", setk(["matrix", 1], ["1"]), "matrix[1]: has 1 entries, expected 2")
bad("non_square.json", setk(["matrix"], [["0.5", "0.25", "0.25"], ["0.5", "0.25", "0.25"]]), "matrix[0]: has 3 entries, expected 2")
bad("too_many_rows.json", setk(["matrix"], [["1", "0"], ["0", "1"], ["1", "0"]]), "matrix: has 3 rows, expected 2")
bad("negative_entry.json", setk(["matrix", 0, 1], "-0.1"), "matrix[0][1]: negative entry -0.1")
bad("nonnumeric_entry.json", setk(["matrix", 1, 0], "abc"), "matrix[1][0]: not an exact number")
bad("boolean_entry.json", setk(["matrix", 1, 0], True), "matrix[1][0]: expected a number, found a boolean")
bad("nan_string.json", setk(["matrix", 0, 0], "NaN"), "matrix[0][0]: not an exact number")
bad("infinity_string.json", setk(["matrix", 0, 0], "Infinity"), "matrix[0][0]: not an exact number")
bad("hex_float.json", setk(["matrix", 0, 0], "0x1p-1"), "matrix[0][0]: not an exact number")
bad("empty_string.json", setk(["matrix", 0, 0], ""), "matrix[0][0]: not an exact number (empty)")
bad("nan_literal.json", '{"epsilon": 1, "metric": {"kind": "euclidean", "points": [[0],[1]]}, "matrix": [[NaN, 1], [1, 1]]}', "invalid JSON")
bad("zero_row.json", setk(["matrix", 1], ["0", "0"]), "matrix[1]: row sum is 0")
bad("unknown_format.json", setk(["format"], "mdp/2"), "format: unknown format \"mdp/2\"")
bad("unknown_metric.json", setk(["metric", "kind"], "cosine"), "metric.kind: unknown metric kind \"cosine\"")
bad("dimension_mismatch.json", setk(["metric", "points", 1], [1, 0, 0]), "metric.points[1]: has 3 entries, expected 2")
bad("asymmetric.json", setk(["metric"], {"kind": "explicit", "distances": [[0, 1], [2, 0]]}), "metric.distances[0][1]: not symmetric")
bad("negative_distance.json", setk(["metric"], {"kind": "explicit", "distances": [[0, -1], [-1, 0]]}), "metric.distances[0][1]: negative distance")
bad("nonzero_diagonal.json", setk(["metric"], {"kind": "explicit", "distances": [[1, 1], [1, 0]]}), "metric.distances[0][0]: diagonal entry is not 0")
bad("graph_disconnected.json", setk(["metric"], {"kind": "graph", "nodes": 2, "edges": []}), "metric.edges: graph is disconnected")
bad("graph_bad_weight.json", setk(["metric"], {"kind": "graph", "nodes": 2, "edges": [[0, 1, 0]]}), "metric.edges[0][2]: must be > 0")
bad("graph_bad_node.json", setk(["metric"], {"kind": "graph", "nodes": 2, "edges": [[0, 2, 1]]}), "metric.edges[0][1]: index 2 out of range")
bad("latitude_range.json", setk(["metric"], {"kind": "haversine", "points": [[91, 0], [0, 0]]}), "metric.points[0][0]: latitude outside")
bad("truncated.json", json.dumps(good)[:-7], "truncated JSON")
bad("not_object.json", [1, 2], "expected an object, found an array")
bad("matrix_not_array.json", setk(["matrix"], "0.5"), "matrix: expected an array, found a string")
bad("delta_range.json", setk(["delta"], 1), "delta: must be in [0, 1)")
bad("quantile_range.json", setk(["quantile"], "1.5"), "quantile: must be in [0, 1]")
bad("prior_size.json", setk(["loss"], {"prior": [1]}), "loss.prior: has 1 weights, expected 2")
bad("cost_shape.json", setk(["loss"], {"cost": [[0, 1]]}), "loss.cost: has 1 rows, expected 2")
bad("outputs_index.json", setk(["outputs"], {"of_inputs": [0, 5]}), "outputs.of_inputs[1]: index 5 out of range 0..2")
bad("packing_center.json", setk(["certificate"], {"lower_bound": {"kind": "packing", "centers": [0, 7], "radius": 1}}), "certificate.lower_bound.centers[1]: index 7 out of range")
bad("neighbors_eta.json", setk(["neighbors"], {"within": -1}), "neighbors.within: must be > 0")
bad("huge_exponent.json", setk(["matrix", 0, 0], "1e999999999"), "matrix[0][0]: not an exact number (exponent out of range)")

# Real spaces, written by our own producer (plain and weighted exponential mechanism).
import subprocess
MDP = os.path.join(HERE, "../../target/release/mdp")
real = [("pass/exp_rome100.json", ["--space", "builtin:rome100", "--epsilon", "0.5"]),
        ("pass/wexp_cities40.json", ["--space", "builtin:cities40", "--epsilon", "4", "--weights",
                                     os.path.join(HERE, "weights_cities40.json")])]
wr = random.Random(7)
with open(os.path.join(HERE, "weights_cities40.json"), "w") as f:
    json.dump([round(wr.uniform(0.05, 3), 3) for _ in range(40)], f)
for path, args in real:
    if os.path.exists(MDP):
        subprocess.run([MDP, "build", "exponential", *args, "-o", os.path.join(HERE, path)], check=True)
    manifest.append(dict(file=path, exit=0))

# Scoped files (neighbors.within) pass only under a policy that accepts them; without one,
# the `policy` check fails (mdp-audit's default is all pairs).
scoped = []
for e in manifest:
    if e["exit"] == 0 and e["file"] in ("pass/exp_neighbors.json", "pass/lp_pmo_planar20.json"):
        scoped.append(dict(e, args=["--allow-scoped"]))
        scoped.append(dict(file=e["file"], exit=1, args=[], policy="fail"))
    else:
        scoped.append(e)
manifest = scoped

with open(os.path.join(HERE, "manifest.json"), "w") as f:
    json.dump(manifest, f, indent=1)
    f.write("\n")
print(f"{len(manifest)} files")
