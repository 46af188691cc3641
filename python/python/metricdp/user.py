"""User-level privacy via the earth mover's distance (Imola, Roy Chowdhury, Chaudhuri
2024): d_EM between datasets and the shuffle accountant of PrivEMDItemWise (Theorem 4.4),
forward and inverse. Every printed α and δ is a proven upper bound."""

from __future__ import annotations

import json
import math
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
        budget: Optional[int] = None) -> Emd:
    """The earth mover's distance between datasets ``a`` and ``b`` (input indices or
    labels, repeats allowed) on ``space``; exact operations count against ``budget``
    (default: the command line's ``--budget``)."""
    from . import _as_space

    s = _as_space(space)
    kw = {} if budget is None else {"budget": int(budget)}
    d = json.loads(_core.emd(s, _items(s, a, "a"), _items(s, b, "b"), assignment=assignment, **kw))
    exact = d["emd"]
    a_ = d.get("assignment")
    return Emd(
        value=Fraction(exact) if isinstance(exact, str) else None,
        lo=d["lo_down"], hi=d["hi_up"], approx=d["approx"],
        assignment=None if a_ is None else (Fraction(a_["value"]), list(a_["sigma"])),
    )


def _floats(record: Dict[str, Any]) -> Dict[str, Any]:
    """The record with floats where the core writes exact decimal strings (issue 53): ``alpha``
    and ``delta`` become their proven upper ends (``alpha_upper``, ``delta_upper``), ``alpha0``
    is rounded down (a randomizer's parameter at most the proven one keeps the guarantee);
    the exact strings move under ``exact``. Sub-records (``closed``, ``numerical``) alike."""
    from fractions import Fraction

    out = dict(record)
    exact: Dict[str, str] = {}
    for key in ("alpha", "delta"):
        if isinstance(out.get(key), str):
            exact[key] = out[key]
            up = out.get(f"{key}_upper")
            if up is None:
                q = Fraction(out[key])
                up = float(q)
                if Fraction(up) < q:
                    up = math.nextafter(up, math.inf)
            out[key] = up
    if isinstance(out.get("alpha0"), str):
        exact["alpha0"] = out["alpha0"]
        q = Fraction(out["alpha0"])
        down = float(q)
        if Fraction(down) > q:
            down = math.nextafter(down, -math.inf)
        out["alpha0"] = down
    for sub in ("closed", "numerical"):
        if isinstance(out.get(sub), dict):
            out[sub] = _floats(out[sub])
    if exact:
        out["exact"] = exact
    return out


def shuffle_account(items: int, alpha0: Any, delta: Any, *, users: Optional[int] = None,
                    distance: Any = None, accountant: str = "tighter", exact: bool = False) -> Dict[str, Any]:
    """The guarantee of PrivEMDItemWise with an α₀·d-private randomizer (d ≤ 1,
    normalised) on ``items`` items per user, item δ ``delta``; ``users`` for the central
    (shuffle) model. ``accountant``: ``closed`` (FMT's closed form), ``numerical`` (the
    clones divergence with directed rounding) or ``tighter``. Returns ``mdp account
    item-wise --json``'s record: ``alpha_upper``, ``delta_upper`` (proven), the
    comparisons, ``at_distance`` when asked, and both accountants' records under
    ``closed`` and ``numerical``. The guarantee is ``alpha`` with ``delta``: floats, proven
    upper ends, per unit of the metric normalized to d ≤ 1 (the composition and FMT figures
    are comparisons); ``exact=True`` keeps the exact decimal strings the core computes."""
    from . import _q

    record = json.loads(_core.account_item_wise(
        int(items), _q(delta, "delta"), alpha0=_q(alpha0, "alpha0"), users=users,
        distance=None if distance is None else _q(distance, "distance"), accountant=accountant))
    return record if exact else _floats(record)


def shuffle_inverse(items: int, alpha: Any, delta: Any, *, users: Optional[int] = None,
                    accountant: str = "tighter", exact: bool = False) -> Dict[str, Any]:
    """The largest α₀ (on a 2⁻⁴⁰ grid, numerical: 2⁻²⁴) whose guarantee is within
    (``alpha``, ``delta``) user-level; the record as :func:`shuffle_account`, ``alpha0``
    a float rounded down (its exact value under ``exact``, or as a string with
    ``exact=True``)."""
    from . import _q

    record = json.loads(_core.account_item_wise(
        int(items), _q(delta, "delta"), alpha=_q(alpha, "alpha"), users=users, accountant=accountant))
    return record if exact else _floats(record)


# ---------------------------------------------------------------- releases


@dataclass
class Release:
    """A user-level release: ``records`` (one dict per user — ``user`` and the release —,
    the counts of a central release, or one per item), ``guarantee`` (the proven guarantee
    and its parameters, as ``mdp release … --json`` prints it; ``warning`` when it is weak)
    and, for the frequency release, the certified ``randomizer``."""

    records: List[Dict[str, Any]]
    guarantee: Dict[str, Any]
    randomizer: Any = None

    @property
    def warning(self) -> Optional[str]:
        return self.guarantee.get("warning")

    def to_frame(self) -> Any:
        """The records as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame.from_records(self.records)


def _users_jsonl(users: Any) -> str:
    """Users as the JSON lines the library reads: ``{"id": …, "items": [...]}``. Accepts a
    mapping id → items, a pandas Series of item lists (the index gives the ids), or a
    sequence of item lists (ids 1, 2, … as line numbers)."""
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None and isinstance(users, pd.Series):
        pairs = list(zip(users.index.tolist(), users.tolist()))
    elif isinstance(users, dict):
        pairs = list(users.items())
    else:
        pairs = [(None, u) for u in users]
    lines = []
    for i, (uid, items) in enumerate(pairs):
        its = [x if isinstance(x, str) else int(x) for x in items]
        lines.append(json.dumps(its if uid is None else {"id": _plain(uid), "items": its}))
        if uid is None and not its:
            raise InputError(f"users[{i}]", "a user with no items")
    return "\n".join(lines) + "\n"


def _plain(x: Any) -> Any:
    return x.item() if hasattr(x, "item") else x


def _records(text: str) -> List[Dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def release_linear(space: Any, users: Any, alpha: Any, *, query: str = "average", norm: str = "l2",
                   model: str = "local", samples: Optional[int] = None, tau: Any = None, beta: Any = "1e-9",
                   budget: Optional[int] = None, seed: Optional[int] = None) -> Release:
    """PrivEMDLinear (Algorithm 1): ``query`` (``average``, ``distance:SITE``,
    ``region:SITE:RADIUS:WIDTH``, ``similarity:v1,v2,…``) of each user's items with K-norm
    noise at α per unit of the space's distance; ``local``: one record per user,
    ``central``: one record of the mean (``samples``/``tau``: Algorithm 3 first)."""
    from . import _as_space, _q

    s = _as_space(space)
    recs, summary = _core.release_linear(
        s, _users_jsonl(users), _q(alpha, "alpha"), query=query, norm=norm, model=model,
        **({} if budget is None else {"budget": int(budget)}), samples=samples,
        tau=None if tau is None else _q(tau, "tau"), beta=_q(beta, "beta"), seed=seed)
    return Release(_records(recs), json.loads(summary))


def release_item_wise(mechanism: Any, users: Any, *, delta: Any = "1e-9", model: str = "central",
                      epsilon: Any = None, samples: Optional[int] = None, tau: Any = None, beta: Any = "1e-9",
                      seed: Optional[int] = None, accountant: str = "tighter") -> Release:
    """PrivEMDItemWise (Algorithm 2): the certified ``mechanism`` applied to every item,
    shuffled; ``local``: each user's outputs, ``central``: the counts. With ``epsilon`` the
    mechanism must pass its audit at that ε first (the pipeline's policy). ``accountant``
    as in :func:`shuffle_account`."""
    from . import _q

    recs, summary = _core.release_item_wise(
        mechanism._m, _users_jsonl(users), delta=_q(delta, "delta"), model=model,
        epsilon=None if epsilon is None else _q(epsilon, "epsilon"), samples=samples,
        tau=None if tau is None else _q(tau, "tau"), beta=_q(beta, "beta"), seed=seed,
        accountant=accountant)
    return Release(_records(recs), json.loads(summary))


def release_freq(users: Any, *, clusters: int, size: int, r: Any, alpha: Any, delta: Any = "1e-6",
                 model: str = "central", seed: Optional[int] = None, accountant: str = "tighter") -> Release:
    """FreqEstLocal (Algorithm 4) on ``clusters`` clusters of ``size`` items (labels
    ``c<i>-<j>``, distance ``r`` inside a cluster, 1 across): α₀ from the accountant for the
    target (α, δ), the clustered k-RR randomizer certified, one record per item."""
    from . import Mechanism, _q

    recs, summary, rand = _core.release_freq(
        _users_jsonl(users), clusters=int(clusters), size=int(size), r=_q(r, "r"), alpha=_q(alpha, "alpha"),
        delta=_q(delta, "delta"), model=model, seed=seed, accountant=accountant)
    return Release(_records(recs), json.loads(summary), Mechanism(rand))
