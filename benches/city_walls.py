#!/usr/bin/env python3
"""What a whole-city PMO would hold (issue 56): the localized LP's sizes on the issue's
instance family, computed from the road graph alone, without building the LP.

Instances: the first N nodes of a breadth-first search of the Rome road network (from its
lowest node, as `city_scale.py`), the metric the induced subgraph's road distance (km);
K outputs spread by the farthest-first traversal on it (`mdp build pmo --outputs spread:K`:
from the node farthest from node 0); η = 2 km; ε = 10 per km (and 2 per km).

For a graph metric the localized LP's neighbourhoods (spec/lp.md §4.6) have a closed form:
the chained decay from u to w along privacy rows is ε times the shortest road path between
them using only edges ≤ η (a pair within η has every edge of its shortest path ≤ η, and a
path of such edges is a chain of pairs within η), so V_k is the set of nodes within
DECAY/ε = 37/ε km of output k's cell (the inputs for which k is a cheapest output) on the
graph without the edges longer than η. From the V_k, per (N, K, ε):
  * held: Σ|V_k| / (N·K), the share of variables the localized LP keeps (it is used at ≤ 0.5);
  * blocks: Σ|V_k|² entries (the block inverses the interior point holds, 8 bytes each) and
    Σ|V_k|³/3 flops (their factorization, each iteration);
  * Schur: the share of the N(N+1)/2 lower-triangle entries of S = Σ_k B_k⁻¹ that some
    output couples (i and j in one V_k; the components of a V_k are not split here, so it
    is an upper bound), and the dense factorization's N³/3 flops.

Usage:
  python3 benches/city_walls.py --sizes 1000 2000 5000 10000 20000 43160
Writes benches/reports/city_walls.csv; the reading is in benches/reports/schur_sparse.md.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from collections import deque
from pathlib import Path

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import dijkstra

HERE = Path(__file__).resolve().parent
DATA = HERE.parent.parent / "shared" / "data" / "rome_road"
DECAY = 37.0
ETA = 2.0


def road() -> tuple[list[tuple[int, int, float]], dict[int, list[int]]]:
    edges = []
    with open(DATA / "edges_rome.csv") as f:
        for row in csv.DictReader(f):
            u, v, w = int(row["u_row"]), int(row["v_row"]), float(row["length_m"])
            if u != v and w > 0:
                edges.append((u, v, w / 1000))
    adj: dict[int, list[int]] = {}
    for u, v, _ in edges:
        adj.setdefault(u, []).append(v)
        adj.setdefault(v, []).append(u)
    return edges, adj


def bfs(adj: dict[int, list[int]], n: int) -> list[int]:
    start = min(adj)
    order, seen, q = [], {start}, deque([start])
    while q and len(order) < n:
        x = q.popleft()
        order.append(x)
        for y in adj[x]:
            if y not in seen:
                seen.add(y)
                q.append(y)
    return order


def farthest_first(g: csr_matrix, k: int) -> tuple[list[int], np.ndarray]:
    """K centres and each node's nearest centre (ties to the earlier centre)."""
    d0 = dijkstra(g, indices=0)
    first = int(np.argmax(np.where(np.isfinite(d0), d0, -1)))
    chosen, near = [first], dijkstra(g, indices=first)
    owner = np.zeros(g.shape[0], dtype=np.int64)
    near[first] = -np.inf
    while len(chosen) < k:
        nxt = int(np.argmax(near))
        d = dijkstra(g, indices=nxt)
        closer = d < near
        owner[closer] = len(chosen)
        chosen.append(nxt)
        near = np.minimum(near, d)
        near[nxt] = -np.inf
    return chosen, owner


def walls(n: int, k: int, eps: float, edges, adj) -> dict:
    t0 = time.time()
    order = bfs(adj, n)
    n = len(order)
    full = _min_edges(edges, order, None)
    chained = _min_edges(edges, order, ETA)
    _, owner = farthest_first(full, k)
    radius = DECAY / eps
    members = []
    for c in range(k):
        cell = np.flatnonzero(owner == c)
        if len(cell) == 0:
            members.append(np.array([], dtype=np.int64))
            continue
        d = dijkstra(chained, indices=cell, min_only=True, limit=radius)
        members.append(np.flatnonzero(np.isfinite(d)))
    sizes = np.array([len(m) for m in members], dtype=np.float64)
    inc = csr_matrix((np.ones(int(sizes.sum())), (np.repeat(np.arange(k), sizes.astype(int)),
                                                 np.concatenate(members))), shape=(k, n))
    inc.data[:] = 1.0
    # Lower-triangle entries of S coupled by some output: count the non-zeros of MᵀM by
    # row chunks (i ≥ j), never forming it whole.
    coupled = 0
    inc_t = inc.T.tocsr()
    step = max(1, int(2e7 // max(1, n)))
    for a in range(0, n, step):
        block = (inc_t[a:a + step] @ inc).tocsr()
        rows = np.repeat(np.arange(a, min(a + step, n)), np.diff(block.indptr))
        coupled += int(np.count_nonzero(block.indices <= rows))
    lower = n * (n + 1) / 2
    return {
        "n": n, "k": k, "eps_per_km": eps, "radius_km": round(radius, 2),
        "mean_neighbourhood": round(float(sizes.mean()), 1),
        "held_share": round(float(sizes.sum() / (n * k)), 4),
        "block_entries": float((sizes ** 2).sum()),
        "block_gb": round(float((sizes ** 2).sum()) * 8 / 1e9, 2),
        "block_flops": float((sizes ** 3).sum() / 3),
        "schur_lower_share": round(coupled / lower, 4),
        "schur_dense_gb": round(n * n * 8 / 1e9, 2),
        "schur_dense_flops": n ** 3 / 3,
        "seconds": round(time.time() - t0, 1),
    }


def _min_edges(edges, order: list[int], max_edge: float | None) -> csr_matrix:
    index = {x: i for i, x in enumerate(order)}
    best: dict[tuple[int, int], float] = {}
    for u, v, d in edges:
        if u in index and v in index and (max_edge is None or d <= max_edge):
            a, b = sorted((index[u], index[v]))
            if d < best.get((a, b), np.inf):
                best[(a, b)] = d
    a = np.array([p[0] for p in best], dtype=np.int64)
    b = np.array([p[1] for p in best], dtype=np.int64)
    w = np.array(list(best.values()))
    n = len(order)
    return csr_matrix((np.concatenate([w, w]), (np.concatenate([a, b]), np.concatenate([b, a]))),
                      shape=(n, n))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 2000, 5000, 10000, 20000, 43160])
    ap.add_argument("--eps", type=float, nargs="+", default=[10.0, 2.0])
    a = ap.parse_args()
    edges, adj = road()
    path = HERE / "reports" / "city_walls.csv"
    writer = None
    with open(path, "w", newline="") as f:
        for eps in a.eps:
            for n in a.sizes:
                # The K: 500 at N = 10⁴, 1 000 for the whole city; K = 100 below.
                k = 100 if n < 10000 else (500 if n < 20000 else 1000)
                r = walls(n, k, eps, edges, adj)
                print(json.dumps(r), flush=True)
                if writer is None:
                    writer = csv.DictWriter(f, fieldnames=list(r))
                    writer.writeheader()
                writer.writerow(r)
                f.flush()
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
