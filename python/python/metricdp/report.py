"""The audit report: the verdict and every proven enclosure, as ``mdp-audit --json`` has it."""

from __future__ import annotations

import html
import json
import math
from typing import Any, Dict, List, Optional, Tuple


def _pair(v: Any) -> Optional[Tuple[float, float]]:
    """An enclosure ``[lo, hi]``; a missing end is unbounded (``None`` in the JSON: an
    infinite tight ε)."""
    if v is None or (v[0] is None and v[1] is None):
        return None
    lo = -math.inf if v[0] is None else float(v[0])
    hi = math.inf if v[1] is None else float(v[1])
    return (lo, hi)


class Report:
    """An audit's result. Enclosures are ``(lo, hi)`` pairs of floats rounded outward: the
    true value is proven to lie between them.

    * ``verdict``: ``"pass"``, ``"fail"`` or ``"inconclusive"``; ``passed`` is
      ``verdict == "pass"``.
    * ``epsilon_claimed``; ``epsilon_tight``: the smallest ε at which the matrix is ε·d
      private; ``epsilon_delta_tight``: the (ε, δ) tight ε at ``delta``.
    * ``loss_max`` (L(M), the worst expected loss), ``loss_quantile``, ``expected_loss``.
    * ``lower_bound``: the certified lower bound on the loss of every private mechanism
      (LP dual, packing or Benders certificate), ``gap``: ``loss_max[1] − lower_bound``.
    * ``metric``, ``metric_digest``: the file's metric in one line and its digest (what
      ``require_metric_digest`` pins).
    * ``witness``: the failing check's witness (``u``, ``v``, ``w`` …), or None.
    * ``checks``, ``warnings``, ``stats``, ``meta``: as in the JSON; ``json`` the JSON itself.
    """

    def __init__(self, report_json: str) -> None:
        d: Dict[str, Any] = json.loads(report_json)
        self.json = report_json
        self._d = d
        self.verdict: str = d["verdict"]
        self.n: int = d["n"]
        self.k: int = d["K"]
        self.epsilon_claimed: float = d["epsilon_claimed"]
        self.epsilon_required: Optional[float] = d.get("epsilon_required")
        self.epsilon_tight = _pair(d.get("epsilon_tight"))
        self.delta: float = d["delta"]
        self.epsilon_delta_tight = _pair(d.get("epsilon_delta_tight"))
        self.loss_max = _pair(d.get("loss_max"))
        self.loss_quantile = _pair(d.get("loss_quantile"))
        self.quantile: float = d.get("quantile", 0.95)
        self.expected_loss = _pair(d.get("expected_loss"))
        self.checks: List[Dict[str, Any]] = d.get("checks", [])
        self.warnings: List[str] = d.get("warnings", [])
        self.stats: Dict[str, Any] = d.get("stats", {})
        self.meta: Optional[Dict[str, Any]] = d.get("meta")
        self.unit: Optional[str] = d.get("unit")
        self.metric: Optional[str] = d.get("metric")
        self.metric_digest: Optional[str] = d.get("metric_digest")

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    def __bool__(self) -> bool:
        return self.passed

    @property
    def witness(self) -> Optional[Dict[str, Any]]:
        for c in self.checks:
            if c["verdict"] != "pass" and c.get("witness") is not None:
                w: Dict[str, Any] = c["witness"]
                return w
        return None

    def _bound(self) -> Optional[Tuple[float, str]]:
        """The largest certified lower bound and the objective it bounds (``max_loss`` or
        ``expected_loss``)."""
        bounds = [
            (c["witness"]["bound"], c["witness"].get("objective", "max_loss"))
            for c in self.checks
            if c["verdict"] == "pass"
            and isinstance(c.get("witness"), dict)
            and isinstance(c["witness"].get("bound"), (int, float))
        ]
        return max(bounds) if bounds else None

    @property
    def lower_bound(self) -> Optional[float]:
        b = self._bound()
        return None if b is None else b[0]

    @property
    def gap(self) -> Optional[float]:
        """The certified gap: the proven upper end of the loss the certificate bounds (L(M)
        for OPTMech, the expected loss for PMO) minus the certified lower bound."""
        b = self._bound()
        if b is None:
            return None
        loss = self.expected_loss if b[1] == "expected_loss" else self.loss_max
        return None if loss is None else loss[1] - b[0]

    def to_dict(self) -> Dict[str, Any]:
        return dict(self._d)

    def _unit(self) -> str:
        return f" {self.unit}" if self.unit else ""

    def _lines(self) -> List[Tuple[str, str]]:
        u = self._unit()
        rows = [("verdict", self.verdict.upper()), ("n × K", f"{self.n} × {self.k}"),
                ("ε claimed", f"{self.epsilon_claimed:g}")]
        if self.epsilon_required is not None:
            rows.append(("ε required", f"{self.epsilon_required:g}"))
        if self.epsilon_tight:
            rows.append(("tight ε", f"[{self.epsilon_tight[0]:.10g}, {self.epsilon_tight[1]:.10g}]"))
        if self.epsilon_delta_tight:
            lo, hi = self.epsilon_delta_tight
            rows.append((f"(ε, δ={self.delta:g}) tight ε", f"[{lo:.10g}, {hi:.10g}]"))
        if self.loss_max:
            rows.append(("max loss L(M)", f"[{self.loss_max[0]:.10g}, {self.loss_max[1]:.10g}]{u}"))
        if self.expected_loss:
            rows.append(("expected loss", f"[{self.expected_loss[0]:.10g}, {self.expected_loss[1]:.10g}]{u}"))
        if self.lower_bound is not None:
            gap = "" if self.gap is None else f" (gap ≤ {self.gap:.3g})"
            rows.append(("certified lower bound", f"{self.lower_bound:.10g}{u}{gap}"))
        for c in self.checks:
            rows.append((f"check {c['name']}", f"{c['verdict']}: {c['detail']}"))
        w = self.witness
        if w is not None:
            rows.append(("witness", json.dumps(w, ensure_ascii=False)))
        for x in self.warnings:
            rows.append(("warning", x))
        return rows

    def __repr__(self) -> str:
        width = max(len(k) for k, _ in self._lines())
        body = "\n".join(f"  {k:<{width}}  {v}" for k, v in self._lines())
        return f"<metricdp.Report\n{body}>"

    def _repr_html_(self) -> str:
        colour = {"pass": "#1a7f37", "fail": "#cf222e"}.get(self.verdict, "#9a6700")
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
            f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
            for k, v in self._lines()[1:]
        )
        return (f"<div><b style='color:{colour}'>audit: {html.escape(self.verdict.upper())}</b>"
                f"<table>{rows}</table></div>")


__all__ = ["Report"]
