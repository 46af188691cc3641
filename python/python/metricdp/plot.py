"""Pictures of mechanisms and reports (matplotlib, the optional extra ``metricdp[plot]``).

* :func:`outputs`: where chosen inputs are released to, on the plane or the map (longitude
  across, latitude up for haversine spaces), each output's marker area ∝ its probability;
* :func:`matrix`: the matrix as a heat map with a colour bar;
* :func:`report`: a report's enclosures: ε claimed against the tight ε and the (ε, δ)
  tight ε, and the loss against the certified lower bound.

Each takes an optional ``ax`` and returns the matplotlib ``Axes`` (or ``Figure``).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence, Union

import numpy as np


def _plt() -> Any:
    try:
        import matplotlib.pyplot as plt
    except ImportError as e:  # pragma: no cover - the extra is documented
        raise ImportError("metricdp.plot needs matplotlib: pip install 'metricdp[plot]'") from e
    return plt


def _index(mech: Any, u: Union[int, str]) -> int:
    if isinstance(u, str):
        labels = mech.labels or []
        if u not in labels:
            from .errors import InputError

            raise InputError("inputs", f"{u!r} is not an input label")
        return labels.index(u)
    return int(u)


def outputs(mech: Any, inputs: Sequence[Union[int, str]], *, ax: Any = None, top: float = 0.999) -> Any:
    """Output distributions of ``inputs`` (indices or labels) on the mechanism's own
    coordinates; outputs carrying the last ``1 − top`` of each distribution's mass are left
    out so the picture shows where the mass is."""
    plt = _plt()
    pin, pout = mech.input_points, mech.output_points
    if pin is None or pout is None or pin.shape[1] != 2:
        from .errors import InputError

        raise InputError("mechanism", "outputs() needs 2-D or [lat, lon] points; use matrix() instead")
    haversine = mech.report.unit == "km"
    if haversine:  # [lat, lon] rows drawn as (x, y) = (lon, lat)
        pin, pout = pin[:, ::-1], pout[:, ::-1]
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 6))
    m = mech.matrix
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    ax.scatter(pout[:, 0], pout[:, 1], s=4, color="#bbbbbb", label="outputs", zorder=1)
    for i, u in enumerate(inputs):
        ui = _index(mech, u)
        row = m[ui]
        order = np.argsort(row)[::-1]
        keep = order[: int(np.searchsorted(np.cumsum(row[order]), top) + 1)]
        c = colours[i % len(colours)]
        name = mech.labels[ui] if mech.labels else str(ui)
        ax.scatter(pout[keep, 0], pout[keep, 1], s=2000 * row[keep], color=c, alpha=0.45,
                   edgecolors="none", zorder=2)
        ax.scatter([pin[ui, 0]], [pin[ui, 1]], marker="*", s=220, color=c, edgecolors="black",
                   zorder=3, label=f"input {name}: outputs ∝ probability")
    # Equal ground distances on both axes: a degree of longitude is cos(latitude) as long.
    ax.set_aspect(1 / np.cos(np.radians(pin[:, 1].mean())) if haversine else "equal", adjustable="datalim")
    ax.set_xlabel("longitude (°)" if haversine else "x")
    ax.set_ylabel("latitude (°)" if haversine else "y")
    meta = (mech.report.meta or {}).get("mechanism", "mechanism")
    ax.set_title(f"{meta}: output distributions (ε = {float(mech.epsilon):g}{'/km' if haversine else ''})")
    ax.legend(loc="best", fontsize="small")
    return ax


def matrix(mech: Any, *, ax: Any = None, labels: Optional[bool] = None) -> Any:
    """The matrix as a heat map (rows: inputs, columns: outputs), labelled when small."""
    plt = _plt()
    if ax is None:
        _, ax = plt.subplots(figsize=(6.5, 5.5))
    im = ax.imshow(mech.matrix, cmap="viridis", aspect="auto", interpolation="nearest")
    ax.figure.colorbar(im, ax=ax, label="Pr[output | input]")
    show = labels if labels is not None else max(mech.n, mech.k) <= 30
    if show and mech.labels:
        ax.set_yticks(range(mech.n), mech.labels, fontsize="x-small")
        ax.set_xticks(range(mech.k), mech.output_labels, fontsize="x-small", rotation=90)
    ax.set_xlabel("output")
    ax.set_ylabel("input")
    meta = (mech.report.meta or {}).get("mechanism", "mechanism")
    ax.set_title(f"{meta}: n = {mech.n}, K = {mech.k}, ε = {float(mech.epsilon):g}")
    return ax


def report(rep: Any, *, fig: Any = None) -> Any:
    """A report's proven enclosures: the ε values (left) and the losses (right)."""
    plt = _plt()
    if fig is None:
        fig = plt.figure(figsize=(9, 3.2))
    a1, a2 = fig.subplots(1, 2)
    rows = [("ε claimed", (rep.epsilon_claimed, rep.epsilon_claimed))]
    if rep.epsilon_tight:
        rows.append(("tight ε", rep.epsilon_tight))
    if rep.epsilon_delta_tight:
        rows.append((f"(ε, δ={rep.delta:g}) tight ε", rep.epsilon_delta_tight))
    _intervals(a1, rows, "ε")
    unit = f" ({rep.unit})" if rep.unit else ""
    losses = []
    if rep.loss_max:
        losses.append(("max loss L(M)", rep.loss_max))
    if rep.expected_loss:
        losses.append(("expected loss", rep.expected_loss))
    if rep.lower_bound is not None:
        losses.append(("certified lower bound", (rep.lower_bound, rep.lower_bound)))
    _intervals(a2, losses, "loss" + unit)
    if rep.gap is not None:
        a2.set_title(f"certified gap ≤ {rep.gap:.3g}{unit}", fontsize="medium")
    colour = {"pass": "#1a7f37", "fail": "#cf222e"}.get(rep.verdict, "#9a6700")
    fig.suptitle(f"audit: {rep.verdict.upper()} (n = {rep.n}, K = {rep.k})", color=colour)
    fig.tight_layout()
    return fig


def _intervals(ax: Any, rows: Any, xlabel: str) -> None:
    """Horizontal bars from 0 to each enclosure's upper end, labelled with the enclosure."""
    finite = [(k, (lo, hi)) for k, (lo, hi) in rows if np.isfinite(lo) and np.isfinite(hi)]
    colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"]
    for y, (_, (lo, hi)) in enumerate(finite):
        ax.barh(y, hi, color=colours[y % len(colours)], alpha=0.8)
        text = f"{hi:.7g}" if lo == hi else f"[{lo:.7g}, {hi:.7g}]"
        ax.annotate(text, (hi, y), textcoords="offset points", xytext=(4, -3), fontsize="small")
    ax.set_yticks(range(len(finite)), [k for k, _ in finite])
    ax.set_xlabel(xlabel)
    ax.ticklabel_format(axis="x", useOffset=False)
    ax.set_xlim(0, 2.2 * max([hi for _, (_, hi) in finite] + [1e-300]))
