#!/usr/bin/env python3
"""The whole-city PMO on the map (issue 56 part 5): the release distribution of a few inputs
of a PMO container built by `mdp build pmo --container` on Rome road nodes
(`benches/city_pmo.py`'s instances, labels `rome<row>` of shared/data/rome_road/nodes_rome.csv,
1-based rows as in edges_rome.csv).

Each panel: every road node of the instance in grey, the K outputs as dots coloured by
Pr[release = output | input] (log scale), the input as a star.

With --zoom KM (for a whole city, where a release stays within a few km at ε = 10/km): a
first panel of the whole instance with the inputs marked, then one panel per input showing
KM km around it.

Usage:
  python3 benches/city_pmo_picture.py HEADER.json OUT.png [--inputs 3] [--zoom 3]
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "rome_road" / "nodes_rome.csv"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("header")
    ap.add_argument("out")
    ap.add_argument("--inputs", type=int, default=3)
    ap.add_argument("--zoom", type=float, default=None, help="km shown around each input")
    a = ap.parse_args()
    header = Path(a.header)
    doc = json.loads(header.read_text())
    m = np.load(header.parent / doc["matrix"]["npy"])
    m = m / m.sum(axis=1, keepdims=True)
    labels = doc["metric"]["labels"]
    outputs = doc["outputs"]["of_inputs"]
    with open(DATA) as f:
        nodes = [(float(r["x"]), float(r["y"])) for r in csv.DictReader(f)]
    xy = np.array([nodes[int(lab[4:]) - 1] for lab in labels])
    n = len(labels)
    # Inputs spread over the instance: its longitude quantiles 1/(k+1) … k/(k+1).
    order = np.argsort(xy[:, 0])
    picks = [int(order[int((i + 1) * (n - 1) / (a.inputs + 1))]) for i in range(a.inputs)]
    eps = doc["epsilon"]
    eta = doc.get("neighbors", {}).get("within")
    panels = a.inputs + (1 if a.zoom else 0)
    fig, axes = plt.subplots(1, panels, figsize=(5.2 * panels, 5.0), constrained_layout=True)
    axes = np.atleast_1d(axes)
    norm = LogNorm(vmin=1e-8, vmax=1.0)
    aspect = 1 / np.cos(np.radians(xy[:, 1].mean()))
    if a.zoom:
        ax = axes[0]
        ax.scatter(xy[:, 0], xy[:, 1], s=0.3, c="0.82", linewidths=0)
        ax.scatter(xy[outputs, 0], xy[outputs, 1], s=2, c="0.35", linewidths=0, label=f"the {len(outputs)} outputs")
        for u in picks:
            ax.scatter(*xy[u], marker="*", s=300, facecolors="none", edgecolors="red", linewidths=1.2)
            ax.annotate(labels[u], xy[u], xytext=(6, 6), textcoords="offset points", fontsize=8, color="red")
        ax.set_title(f"the whole instance ({n} nodes); the inputs shown", fontsize=9)
        ax.set_xlabel("longitude (°)")
        ax.set_ylabel("latitude (°)")
        ax.set_aspect(aspect)
        ax.legend(loc="lower left", fontsize=8)
        axes = axes[1:]
    for ax, u in zip(axes, picks):
        ax.scatter(xy[:, 0], xy[:, 1], s=0.3, c="0.82", linewidths=0)
        p = m[u]
        o = np.array(outputs)
        shown = np.flatnonzero(p > 1e-8)
        shown = shown[np.argsort(p[shown])]  # the likeliest outputs drawn last, on top
        ax.scatter(*xy[u], marker="*", s=420, facecolors="none", edgecolors="red", linewidths=1.2,
                   label=f"input {labels[u]}", zorder=1)
        sc = ax.scatter(xy[o[shown], 0], xy[o[shown], 1], s=8 + 70 * p[shown] ** 0.25, c=p[shown], cmap="viridis",
                        norm=norm, edgecolors="k", linewidths=0.2, zorder=2)
        best = int(np.argmax(p))
        ax.set_title(f"input {labels[u]}: Pr[release] (max {p[best]:.2f} at {labels[o[best]]})", fontsize=9)
        ax.set_xlabel("longitude (°)")
        ax.set_ylabel("latitude (°)")
        ax.set_aspect(aspect)
        if a.zoom:
            dy = a.zoom / 111.2
            dx = dy * aspect
            ax.set_xlim(xy[u, 0] - dx, xy[u, 0] + dx)
            ax.set_ylim(xy[u, 1] - dy, xy[u, 1] + dy)
            ax.scatter(xy[outputs, 0], xy[outputs, 1], s=4, marker="x", c="0.45", linewidths=0.5, zorder=1,
                       label="outputs")
            ax.set_title(f"{labels[u]}, {a.zoom:g} km around: max {p[best]:.2f} at {labels[o[best]]}", fontsize=9)
        ax.legend(loc="lower left", fontsize=8)
    fig.colorbar(sc, ax=axes, shrink=0.8, label="Pr[release = output | input] (outputs below 1e-8 not drawn)")
    fig.suptitle(f"PMO on {n} Rome road nodes, K = {len(outputs)} outputs, ε = {eps}/km within η = {eta} km "
                 "(certified container, mdp build pmo --container)", fontsize=10)
    fig.savefig(a.out, dpi=110)


if __name__ == "__main__":
    main()
