"""User-level privacy via the earth mover's distance (Imola, Roy Chowdhury, Chaudhuri
2024): d_EM between datasets and the shuffle accountant of PrivEMDItemWise (Theorem 4.4),
forward and inverse. Every printed α and δ is a proven upper bound."""

from __future__ import annotations

import json
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _core
from .errors import InputError


def _items(space: Any, xs: Sequence[Any], field: str) -> List[int]:
    labels = space.labels
    out = []
    for i, x in enumerate(xs):
        if isinstance(x, str):
            if labels is None or x not in labels:
                raise InputError(f"{field}[{i}]", f"{x!r} is not a label of the space")
            out.append(labels.index(x))
        elif isinstance(x, bool) or not hasattr(x, "__index__"):
            raise InputError(f"{field}[{i}]", f"expected an input index or label, found {x!r}")
        else:
            v = int(x)
            if v < 0:
                raise InputError(f"{field}[{i}]", f"{v} is not an input index")
            out.append(v)
    return out


@dataclass(frozen=True)
class Emd:
    """d_EM(A, B): ``value`` exact when the distances are rational (else None), and the
    proven enclosure ``[lo, hi]`` in floats rounded outward; ``assignment``: Lemma 2.1's
    ``(value, sigma)`` for datasets of equal size when asked."""

    value: Optional[Fraction]
    lo: float
    hi: float
    approx: float
    assignment: Optional[Tuple[Fraction, List[int]]] = None

    def __float__(self) -> float:
        return self.approx


def emd(space: Any, a: Sequence[Any], b: Sequence[Any], *, assignment: bool = False,
        budget: int = 100_000_000) -> Emd:
    """The earth mover's distance between datasets ``a`` and ``b`` (input indices or
    labels, repeats allowed) on ``space``; exact operations count against ``budget``."""
    from . import _as_space

    s = _as_space(space)
    d = json.loads(_core.emd(s, _items(s, a, "a"), _items(s, b, "b"), assignment=assignment, budget=int(budget)))
    exact = d["emd"]
    a_ = d.get("assignment")
    return Emd(
        value=Fraction(exact) if isinstance(exact, str) else None,
        lo=d["lo_down"], hi=d["hi_up"], approx=d["approx"],
        assignment=None if a_ is None else (Fraction(a_["value"]), list(a_["sigma"])),
    )


def shuffle_account(items: int, alpha0: Any, delta: Any, *, users: Optional[int] = None,
                    distance: Any = None) -> Dict[str, Any]:
    """The guarantee of PrivEMDItemWise with an α₀·d-private randomizer (d ≤ 1,
    normalised) on ``items`` items per user, item δ ``delta``; ``users`` for the central
    (shuffle) model. Returns ``mdp account item-wise --json``'s record: ``alpha_upper``,
    ``delta_upper`` (proven), the comparisons, and ``at_distance`` when asked."""
    from . import _q

    return json.loads(_core.account_item_wise(
        int(items), _q(delta, "delta"), alpha0=_q(alpha0, "alpha0"), users=users,
        distance=None if distance is None else _q(distance, "distance")))


def shuffle_inverse(items: int, alpha: Any, delta: Any, *, users: Optional[int] = None) -> Dict[str, Any]:
    """The largest α₀ (on a 2⁻⁴⁰ grid) whose guarantee is within (``alpha``, ``delta``)
    user-level; the record as :func:`shuffle_account`, with ``alpha0`` exact."""
    from . import _q

    return json.loads(_core.account_item_wise(
        int(items), _q(delta, "delta"), alpha=_q(alpha, "alpha"), users=users))
