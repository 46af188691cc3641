"""Pictures of issue 54 (spec/geo.md §1, §2.3), drawn from what the tools release:

1. spec/pictures/planar_laplace_cloud_rome.png: 2 000 exact planar Laplace releases of one
   true location (the Colosseum) at Location Guard's "level 2 within 0.5 km" (ε = 4 per km),
   over Rome's road nodes, with the certified radius that holds 95 % of releases.
2. spec/pictures/planar_laplace_grid_rows.png: two rows of the certified planar Laplace grid
   channel (`mdp build planar-laplace --space grid:10,10,1 --epsilon 0.5`): a corner input and
   an interior one, each cell's probability (log scale).

Usage: python benches/geo_pictures.py   (needs metricdp with matplotlib and pandas)
The releases use a fixed seed so that the picture is reproducible; releases of records use
the OS's randomness.
"""
import math
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.colors import LogNorm  # noqa: E402

import metricdp as md  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "spec", "pictures")
NODES = os.path.join(ROOT, "..", "shared", "data", "rome_road", "nodes_rome.csv")


def cloud() -> None:
    region = (41.84, 12.44, 41.94, 12.56)
    true = (41.8902, 12.4922)
    pl = md.planar_laplace(level=2, radius=0.5, region=region)
    s = pl.summary(0.95)
    rel = pl.release([true] * 2000, seed=54)
    nodes = pd.read_csv(NODES, usecols=["y", "x"])
    box = nodes[(nodes.y.between(region[0], region[2])) & (nodes.x.between(region[1], region[3]))]
    fig, ax = plt.subplots(figsize=(8, 7.2))
    ax.scatter(box.x, box.y, s=0.3, c="0.8", label="road nodes (OpenStreetMap)")
    ax.scatter(rel[:, 1], rel[:, 0], s=3, c="tab:blue", alpha=0.5, label="2 000 releases")
    ax.scatter([true[1]], [true[0]], marker="*", s=250, c="tab:red", edgecolors="k", zorder=5,
               label="true location (Colosseum)")
    r_km = s["radius_at_confidence"][1]
    km = s["projection"]["km_per_degree"]
    c = s["projection"]["cos_reference_latitude"]
    th = np.linspace(0, 2 * math.pi, 400)
    # The radius is in the projection's plane: Δlat = r/km, Δlon = r/(km·c).
    ax.plot(true[1] + r_km / (km * c) * np.cos(th), true[0] + r_km / km * np.sin(th), "k--", lw=1,
            label=f"95 % of releases within {r_km:.3f} km (certified)")
    inside = np.mean(np.hypot((rel[:, 0] - true[0]) * km, (rel[:, 1] - true[1]) * km * c) <= r_km)
    ax.set_xlim(region[1], region[3])
    ax.set_ylim(region[0], region[2])
    ax.set_aspect(1 / math.cos(math.radians(41.89)))
    ax.set_xlabel("longitude (degrees)")
    ax.set_ylabel("latitude (degrees)")
    ax.set_title(f"Planar Laplace, level 2 within 0.5 km (ε = {s['epsilon']} per km), exactly sampled\n"
                 f"expected displacement {s['expected_error']:.2f} km; {inside:.1%} of these 2 000 inside the circle")
    ax.legend(loc="lower left", fontsize=8, markerscale=2)
    fig.tight_layout()
    fig.savefig(os.path.join(OUT, "planar_laplace_cloud_rome.png"), dpi=110)
    plt.close(fig)


def grid_rows() -> None:
    w = h = 10
    m = md.planar_laplace_grid(md.load_space(f"grid:{w},{h},1"), 0.5, progress=False)
    assert m.report.passed
    fig, axes = plt.subplots(1, 2, figsize=(11, 5))
    norm = LogNorm(vmin=float(m.matrix.min()), vmax=float(m.matrix.max()))
    for ax, x in zip(axes, [0, 44]):
        img = ax.imshow(m.matrix[x].reshape(h, w), origin="lower", cmap="viridis", norm=norm,
                        extent=(-0.5, w - 0.5, -0.5, h - 0.5))
        ax.scatter([x % w], [x // w], marker="*", s=200, c="tab:red", edgecolors="k")
        ax.set_title(f"input cell ({x % w}, {x // w}): P[output cell]")
        ax.set_xlabel("x (cells of 1 unit)")
        ax.set_ylabel("y (cells of 1 unit)")
    fig.colorbar(img, ax=axes, label="probability (log scale)", shrink=0.85)
    fig.suptitle("Planar Laplace grid channel, 10 × 10 cells, ε = 0.5 per unit: each entry an enclosed integral,\n"
                 "the border cells holding the mass outside the grid; certified by the exact audit")
    fig.savefig(os.path.join(OUT, "planar_laplace_grid_rows.png"), dpi=100)
    plt.close(fig)


def main() -> int:
    os.makedirs(OUT, exist_ok=True)
    cloud()
    grid_rows()
    print("wrote", os.path.join(OUT, "planar_laplace_cloud_rome.png"), "and planar_laplace_grid_rows.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
