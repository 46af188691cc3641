"""metricdp: build, prove and apply metric differential privacy (ε·d privacy) mechanisms.

The Python face of the Rust library ``mdp`` (the same code as the ``mdp`` and ``mdp-audit``
commands, not a wrapper around them). Every mechanism returned has passed the exact audit;
every verdict is a proof::

    import numpy as np, metricdp as md
    space = md.space(np.array([[0.0], [1.0], [3.0]]))          # Euclidean points
    mech = md.optimal(space, epsilon=0.5)                       # OPTMech, certified
    mech.report.passed, mech.loss                               # True, L(M) enclosure
    md.audit(mech.matrix, space, epsilon=0.5).verdict           # 'pass', exactly proven
    md.privatize(mech, [0, 2, 2], seed=1)                       # exact sampling

Numbers: a parameter (ε, η, γ, prior weights, δ) given as a float is read as its shortest
decimal (``0.1`` is 1/10); give a ``fractions.Fraction`` or a string (``"1/3"``) for any
other rational. Data (points, distances, matrices) given as float64 arrays are taken as
the exact binary rationals they hold, so an audit proves the very matrix you pass.

See ``spec/python.md`` of the repository for the mapping to the library.
"""

from __future__ import annotations

import json
import math
import numbers
import os
from fractions import Fraction
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _core
from ._progress import resolve as _progress
from .errors import Inconclusive, InputError, MdpError, NotPrivate, SolverError
from .report import Report

__version__ = _core.__version__

Space = _core.Space
Number = Union[int, float, Fraction, str]
Progress = Union[None, bool, Callable[[str, str, Any], None]]


# ---------------------------------------------------------------- numbers and spaces


def _int_in(x: Any, field: str, lo: int, hi: int) -> int:
    """An integer argument in [lo, hi] (bools and floats refused), else InputError."""
    if not isinstance(x, int) or isinstance(x, bool) or not lo <= x <= hi:
        raise InputError(field, f"must be an integer in [{lo}, {hi}]")
    return x


def _q(x: Any, field: str) -> str:
    """An exact number as the library reads it: an int, a Fraction as p/q, a float as its
    shortest decimal, a string as given."""
    if isinstance(x, bool):
        raise InputError(field, "expected a number, found a bool")
    if isinstance(x, str):
        return x.strip()
    if isinstance(x, Fraction):
        return f"{x.numerator}/{x.denominator}"
    if isinstance(x, numbers.Integral):
        return str(int(x))
    if isinstance(x, numbers.Real):
        f = float(x)
        if not math.isfinite(f):
            raise InputError(field, "not a finite number")
        return repr(f)
    raise InputError(field, f"expected a number, found {type(x).__name__}")


def _q_list(xs: Any, field: str) -> Optional[List[str]]:
    if xs is None:
        return None
    return [_q(x, f"{field}[{i}]") for i, x in enumerate(np.asarray(xs, dtype=object).ravel())]


def _f64(a: Any, field: str, ndim: int = 2) -> np.ndarray:
    try:
        arr = np.ascontiguousarray(a, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise InputError(field, f"expected numbers: {e}") from None
    if arr.ndim == 1 and ndim == 2 and field == "points":
        arr = arr.reshape(-1, 1)
    if arr.ndim != ndim:
        raise InputError(field, f"expected a {ndim}-dimensional array, found shape {arr.shape}")
    return arr


def space(
    points: Any,
    metric: str = "euclidean",
    *,
    labels: Optional[Sequence[str]] = None,
    radius: Optional[Number] = None,
    name: Optional[str] = None,
) -> Space:
    """A metric space from points (n × d; a 1-D array is n points on a line).

    ``metric``: ``euclidean``, ``manhattan``, ``chebyshev`` or ``haversine`` (rows
    ``[lat, lon]`` in degrees, distances in km on a sphere of ``radius`` km, default the
    mean Earth radius). Each float64 coordinate is taken exactly.
    """
    return Space.from_points(
        _f64(points, "points"),
        metric,
        None if labels is None else [str(x) for x in labels],
        None if radius is None else _q(radius, "radius"),
        name,
    )


def distances(d: Any, *, labels: Optional[Sequence[str]] = None, name: Optional[str] = None,
              check_triangle: bool = False) -> Space:
    """A metric space from an n × n distance matrix (symmetric, zero diagonal, ≥ 0), read in
    O(n²) (libqif's convention: a numpy table of distances). ``check_triangle=True`` also
    searches the triangle inequality now (O(n³)) and records a violation in
    ``space.warnings`` (privacy is proven for the table as given either way)."""
    return Space.from_distances(
        _f64(d, "distances"), None if labels is None else [str(x) for x in labels], name,
        check_triangle,
    )


def load_space(spec: Union[str, "os.PathLike[str]"], *, label_column: Optional[str] = None) -> Space:
    """``builtin:NAME`` (``rome100``, ``cities40``), ``line:N[,STEP]``, ``grid:W,H[,STEP]`` or ``categories:K``
    (generated), a CSV or GeoJSON file of points, a JSON metric object or an ``mdp/1`` file.
    ``label_column``: the CSV column (GeoJSON property) holding the labels (the command
    line's ``--label-column``; by default the first named label, name or id)."""
    return Space.load(os.fspath(spec), label_column)


def from_dataframe(
    df: Any,
    columns: Sequence[str],
    *,
    metric: Optional[str] = None,
    label: Optional[str] = None,
    radius: Optional[Number] = None,
    name: Optional[str] = None,
) -> Space:
    """A space from a pandas DataFrame: coordinates from ``columns``, labels from the
    ``label`` column (else the index, when it is not a plain range).

    Two columns named as latitude and longitude (``lat``/``latitude`` and
    ``lon``/``lng``/``long``/``longitude``, any case, any order) give a haversine space in km,
    the columns put in (latitude, longitude) order, as ``--space FILE.csv`` does on the
    command line; other columns give a euclidean space. ``metric`` overrides; a
    non-haversine metric on latitude/longitude columns warns (ε would be per degree)."""
    cols = list(columns)
    lat = [c for c in cols if str(c).lower() in _LAT]
    lon = [c for c in cols if str(c).lower() in _LON]
    geographic = len(cols) == 2 and len(lat) == 1 and len(lon) == 1
    if metric is None:
        metric = "haversine" if geographic else "euclidean"
    if geographic and metric == "haversine":
        cols = [lat[0], lon[0]]
    elif geographic:
        import warnings

        warnings.warn(f"columns {cols} look like latitude and longitude in degrees, but the metric is "
                      f"{metric!r}: distances (and ε) are then per degree, not per km; "
                      "use metric='haversine' for great-circle km", stacklevel=2)
    for c in cols + ([label] if label else []):
        if c not in df.columns:
            raise InputError(str(c), "no such column")
    if label is not None:
        labels = [str(x) for x in df[label].tolist()]
    elif not _is_range_index(df.index):
        labels = [str(x) for x in df.index.tolist()]
    else:
        labels = None
    return space(df[cols].to_numpy(dtype=np.float64), metric, labels=labels, radius=radius,
                 name=name or f"DataFrame columns {cols}")


_LAT = ("lat", "latitude")
_LON = ("lon", "lng", "long", "longitude")


def _is_range_index(index: Any) -> bool:
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - a DataFrame implies pandas
        return True
    return isinstance(index, pd.RangeIndex) and index.start == 0 and index.step == 1


def _as_space(s: Any) -> Space:
    if isinstance(s, Space):
        return s
    if callable(s):
        raise InputError("space", "a metric given as a function is not accepted: pass a Space, a path, or the "
                         "n × n table of distances (np.array([[d(x, y) for y in X] for x in X]))")
    if isinstance(s, (str, os.PathLike)):
        return load_space(s)
    arr = np.asarray(s, dtype=np.float64)
    if arr.ndim == 2 and arr.shape[0] == arr.shape[1] and np.all(np.diag(arr) == 0):
        return distances(arr)
    raise InputError("space", "expected a Space, a path, or an n × n distance matrix")


# ---------------------------------------------------------------- mechanisms


class Mechanism:
    """A mechanism that passed its exact audit.

    * ``matrix``: the n × K matrix as a read-only float64 numpy array (nearest doubles);
      ``exact(i, j)``: entry (i, j) as a :class:`fractions.Fraction` (what was audited).
    * ``report``: the audit :class:`Report`; ``loss``: L(M), the worst-case expected loss,
      as a proven ``(lo, hi)``; ``certificate``: the file's certificates (LP dual, packing,
      Benders) as a dict; ``summary``: the build's statistics.
    * ``labels`` / ``output_labels``: names of inputs and outputs.
    * ``save(path)``: the ``mdp/1`` file, which ``mdp-audit`` re-proves.
    """

    def __init__(self, core: _core.Mechanism) -> None:
        self._m = core
        self._matrix: Optional[np.ndarray] = None
        self._report: Optional[Report] = None

    @property
    def n(self) -> int:
        return self._m.n

    @property
    def k(self) -> int:
        return self._m.k

    @property
    def epsilon(self) -> Fraction:
        return Fraction(self._m.epsilon)

    @property
    def within(self) -> Optional[Fraction]:
        w = self._m.within
        return None if w is None else Fraction(w)

    @property
    def labels(self) -> Optional[List[str]]:
        return self._m.labels

    @property
    def output_labels(self) -> List[str]:
        return self._m.output_labels

    @property
    def matrix(self) -> np.ndarray:
        if self._matrix is None:
            m = self._m.matrix_f64()
            m.flags.writeable = False
            self._matrix = m
        return self._matrix

    def exact(self, i: int, j: int) -> Fraction:
        return Fraction(self._m.exact(int(i), int(j)))

    @property
    def report(self) -> Report:
        if self._report is None:
            self._report = Report(self._m.report_json())
        return self._report

    @property
    def loss(self) -> Optional[Tuple[float, float]]:
        return self.report.loss_max

    @property
    def certificate(self) -> Dict[str, Any]:
        import json

        certificate: Dict[str, Any] = json.loads(self._m.to_json()).get("certificate", {})
        return certificate

    @property
    def summary(self) -> Dict[str, Any]:
        import json

        summary: Dict[str, Any] = json.loads(self._m.summary_json())
        return summary

    @property
    def input_points(self) -> Optional[np.ndarray]:
        return self._m.input_points()

    @property
    def output_points(self) -> Optional[np.ndarray]:
        return self._m.output_points()

    def to_json(self) -> str:
        """The ``mdp/1`` document, exactly as audited."""
        return self._m.to_json()

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Write the ``mdp/1`` file (atomically)."""
        self._m.save(os.fspath(path))

    def audit(self, *, epsilon: Optional[Number] = None, within: Optional[Number] = None,
              allow_scoped: bool = False, delta: Optional[Number] = None,
              progress: Progress = None) -> Report:
        """Audit again under a pipeline's policy: its ε (instead of the claim), the scope it
        accepts and δ. Returns the report whatever the verdict."""
        with _progress(progress) as cb:
            return Report(self._m.audit(
                epsilon=None if epsilon is None else _q(epsilon, "epsilon"),
                within=None if within is None else _q(within, "within"),
                allow_scoped=allow_scoped,
                delta=None if delta is None else _q(delta, "delta"),
                progress=cb,
            ))

    def __repr__(self) -> str:
        return repr(self._m).replace("Mechanism(", "<metricdp.Mechanism ", 1)[:-1] + ">"


def _build(family: str, space_: Any, epsilon: Number, progress: Progress, **kw: Any) -> Mechanism:
    sp, eps = _as_space(space_), _q(epsilon, "epsilon")
    with _progress(progress) as cb:
        return Mechanism(_core.build(sp, family, eps, progress=cb, **kw))


def exponential(space: Any, epsilon: Number, *, weights: Optional[Sequence[Number]] = None,
                progress: Progress = None) -> Mechanism:
    """The exponential mechanism Pr[w|u] ∝ Y_w·e^{−ε·d(u,w)/2} (Imola et al. §3.1; weighted
    by ``weights`` = Y > 0, Proposition 1). Private by construction; audited exactly."""
    return _build("exponential", space, epsilon, progress, weights=_q_list(weights, "weights"))


def geometric(space: Any, epsilon: Number, *, progress: Progress = None) -> Mechanism:
    """The truncated geometric mechanism (Ghosh et al. 2012; libqif's ``d_privacy.geometric``)
    on equally spaced points of a line (``load_space("line:N,STEP")``), ε per unit: exact
    entries α^|i−j| with α rounded up from e^{−ε·step}, private by construction, audited."""
    return _build("geometric", space, epsilon, progress)


def randomized_response(space: Any, epsilon: Number, *, progress: Progress = None) -> Mechanism:
    """k-ary randomized response at ε·d_min on any space (``load_space("categories:K")``:
    plain k-RR, ε-LDP; libqif's ``d_privacy.randomized_response``), audited."""
    return _build("randomized_response", space, epsilon, progress)


def planar_laplace_grid(space: Any, epsilon: Number, *, progress: Progress = None) -> Mechanism:
    """The planar Laplace on a grid (libqif's ``planar_laplace_grid``): inputs the cell
    centres of ``load_space("grid:W,H,STEP")``, output the cell the continuous release falls
    in (outside the grid: the nearest cell), ε per unit; each entry a rigorous enclosure of
    its integral, the file audited exactly (spec/geo.md §2.3)."""
    return _build("planar_laplace_grid", space, epsilon, progress)


def planar_geometric_grid(space: Any, epsilon: Number, *, progress: Progress = None) -> Mechanism:
    """The planar geometric on a grid (libqif's ``planar_geometric_grid``): inputs the cell
    centres of ``load_space("grid:W,H,STEP")``, output a lattice point with probability
    ∝ e^{−ε·d} (outside the grid: the nearest cell), ε per unit (ε·STEP ≥ 0.05); each entry an
    enclosed lattice sum, the file audited exactly (spec/geo.md §2.4)."""
    return _build("planar_geometric_grid", space, epsilon, progress)


def _outputs(outputs: Union[None, str, Sequence[int]]) -> Dict[str, Any]:
    """The builders' ``outputs``: input indices, or a rule (``"spread:K"``) the library
    resolves on the space."""
    if outputs is None:
        return {"outputs": None}
    if isinstance(outputs, str):
        return {"outputs_rule": outputs}
    return {"outputs": [int(o) for o in outputs]}


def optimal(space: Any, epsilon: Number, *, outputs: Union[None, str, Sequence[int]] = None,
            solver: str = "auto", max_memory: Optional[int] = None,
            progress: Progress = None) -> Mechanism:
    """OPTMech (Imola et al. §2): the least worst-case loss among ε·d-private mechanisms,
    with an ``lp_dual`` certificate proving the lower bound (``report.gap``); ``outputs``,
    the input indices that are the outputs, or ``"spread:K"`` (K inputs spread over the
    space by the farthest-first traversal, stated in ``meta["outputs"]``); all inputs by
    default (the CLI's ``--outputs``)."""
    return _build("optimal", space, epsilon, progress, solver=solver, max_memory=max_memory,
                  **_outputs(outputs))


def pmo(space: Any, epsilon: Number, *, prior: Optional[Sequence[Number]] = None,
        cost: Any = None, outputs: Union[None, str, Sequence[int]] = None, within: Optional[Number] = None,
        gap: Optional[float] = None, solver: str = "auto", max_memory: Optional[int] = None,
        progress: Progress = None) -> Mechanism:
    """PMO (Qiu 2024 §2.2): the least expected loss under ``prior`` (uniform by default),
    with ``cost`` (n × K, the distance by default), outputs a subset of the inputs, and
    privacy for pairs with d ≤ ``within`` only (all pairs by default)."""
    return _build(
        "pmo", space, epsilon, progress,
        prior=_q_list(prior, "prior"),
        cost=None if cost is None else _f64(cost, "cost"),
        **_outputs(outputs),
        within=None if within is None else _q(within, "within"),
        gap=gap, solver=solver, max_memory=max_memory,
    )


def benders(space: Any, epsilon: Number, *, within: Number, prior: Optional[Sequence[Number]] = None,
            cost: Any = None, outputs: Union[None, str, Sequence[int]] = None, partitions: Optional[int] = None,
            method: str = "km-rec", master: str = "cover", gap: float = 1e-6, max_iter: int = 500,
            seed: int = 0, subproblems: Optional[Callable[[List[str]], List[str]]] = None,
            progress: Progress = None) -> Mechanism:
    """PMO by Benders decomposition (Qiu 2024 §3), certified like ``pmo`` and with a
    ``benders`` certificate (lower and upper bound). ``subproblems``: where each
    iteration's subproblems are solved, a callable from their job texts to their results'
    texts in order, each by :func:`metricdp._core.benders_subproblem` (default: here, in
    parallel); :func:`metricdp.distributed.benders` passes one that maps them over Dask."""
    if subproblems is not None and not callable(subproblems):
        raise InputError("subproblems", "must be callable")
    return _build(
        "benders", space, epsilon, progress,
        prior=_q_list(prior, "prior"),
        cost=None if cost is None else _f64(cost, "cost"),
        **_outputs(outputs),
        within=_q(within, "within"), partitions=partitions, method=method, master=master,
        gap=gap, max_iter=max_iter, seed=seed, subproblems=subproblems,
    )


def spanner(space: Any, epsilon: Number, *, k: int = 2, solver: str = "ipm",
            progress: Progress = None) -> Mechanism:
    """SpannerMech (Imola et al. App. A, Theorem 4): OPTMech's rows on a greedy
    (2k−1)-spanner at ε/(2k−1)."""
    return _build("spanner", space, epsilon, progress, k=int(k), solver=solver)


def constopt(space: Any, epsilon: Number, *, r: int = 10, replacement: Optional[Sequence[Sequence[int]]] = None,
             lambdas: Sequence[float] = (0.001, 0.1, 1.0), solver: str = "auto",
             progress: Progress = None) -> Mechanism:
    """ConstOPTMech (Imola et al. §3.2, Algorithm 1) with I_NN,r (or ``replacement``: I(v)
    per input), keeping the least loss over ``lambdas``; packing lower bound certified."""
    return _build(
        "constopt", space, epsilon, progress, r=int(r),
        replacement=None if replacement is None else [[int(i) for i in s] for s in replacement],
        lambdas=[float(x) for x in lambdas], solver=solver,
    )


def tem(space: Any, epsilon: Number, *, beta: Optional[float] = None, gamma: Optional[Number] = None,
        progress: Progress = None) -> Mechanism:
    """TEM (Carvalho et al., Algorithm 2): the exponential mechanism on min(d, γ), γ from
    Theorem 4.2 for ``beta`` (default 0.001) or given."""
    return _build("tem", space, epsilon, progress, beta=beta,
                  gamma=None if gamma is None else _q(gamma, "gamma"))


def save_container(matrix: Any, space: Any, epsilon: Number, path: Union[str, "os.PathLike[str]"], *,
                   progress: Progress = None) -> str:
    """Write a square float64 ``matrix`` on ``space`` as a large-mechanism container: the
    ``mdp/1`` header at ``path`` and the matrix beside it as ``.npy`` (``spec/mechanism-format.md``,
    revision 3), after the structured exact audit proves it ε·d private (else
    :class:`NotPrivate` with the report, and nothing is written). Returns the ``.npy`` path.
    Audit it again with :func:`audit` (``audit(path)``) or across a cluster with
    :func:`metricdp.distributed.audit`."""
    m, sp = _f64(matrix, "matrix"), _as_space(space)
    with _progress(progress) as cb:
        return _core.write_container(m, sp, _q(epsilon, "epsilon"), os.fspath(path), progress=cb)


def _pin_space(space: Any) -> Union[Space, str, None]:
    """A pin's space for the core: a :class:`Space` as it is, a path as its text."""
    if space is None or isinstance(space, Space):
        return space
    if isinstance(space, (str, os.PathLike)):
        return os.fspath(space)
    raise InputError("space", "expected a Space or a path")


def load(path: Union[str, "os.PathLike[str]"], *, space: Any = None,
         require_metric_digest: Optional[str] = None, trust_file_metric: bool = False,
         epsilon: Optional[Number] = None, within: Optional[Number] = None,
         allow_scoped: bool = False, progress: Progress = None) -> Mechanism:
    """Read an ``mdp/1`` file and gate it as ``mdp privatize --mechanism`` does, with the
    same defaults: the file must pass its audit under the pipeline's policy before it can
    be sampled.

    The metric: ``space`` (a :class:`Space`, or any form ``--space`` takes: ``builtin:NAME``,
    a CSV, GeoJSON or JSON file) must equal the file's metric exactly (points, radius,
    distances and labels), or ``require_metric_digest`` the digest every report prints;
    without either the file is refused (``InputError`` on ``space``) unless
    ``trust_file_metric=True`` (a file's own metric is a claim: a radius raised 1000× makes
    its guarantee say almost nothing). ``epsilon``: the ε it must be proven private at
    (default: its claim). A file scoped to pairs within η is refused unless ``within``
    (η ≥ within) or ``allow_scoped`` accepts it.
    """
    with _progress(progress) as cb:
        return Mechanism(_core.load(
            os.fspath(path),
            space=_pin_space(space),
            require_metric_digest=require_metric_digest,
            trust_file_metric=trust_file_metric,
            epsilon=None if epsilon is None else _q(epsilon, "epsilon"),
            within=None if within is None else _q(within, "within"),
            allow_scoped=allow_scoped, progress=cb,
        ))


# ---------------------------------------------------------------- the auditor


def audit(
    matrix: Any,
    space: Any = None,
    epsilon: Optional[Number] = None,
    *,
    within: Optional[Number] = None,
    delta: Optional[Number] = None,
    eps_in_metric: bool = False,
    outputs_are_inputs: Optional[bool] = None,
    allow_scoped: bool = False,
    max_entries: Optional[int] = None,
    require_metric_digest: Optional[str] = None,
    progress: Progress = None,
) -> Report:
    """Prove (or refute) that ``matrix`` is ε·d private.

    ``matrix``: a numpy array (rows = inputs of ``space``; square ones are read as outputs
    = inputs unless ``outputs_are_inputs=False``), a :class:`Mechanism`, or the path of an
    ``mdp/1`` file. ``epsilon``: the ε to prove (required for arrays; for files and
    mechanisms it replaces the file's claim). ``within``: privacy for pairs with d ≤ η only.
    ``eps_in_metric``: ``space``'s distances already include ε (libqif's convention).
    ``max_entries``: the largest n·K of an array, arrays only (default 16·10⁶, as ``mdp-audit
    --max-entries``; the exhaustive audit's memory grows with it: ≈ 0.23 KB an entry at
    n = 5 000). Returns the :class:`Report` whatever the verdict (check ``report.passed``).

    For a file, ``space`` is the pipeline's metric, as ``mdp-audit --space``: the file's
    metric (points, radius, distances, labels) must equal it exactly, or the report fails
    its ``metric`` check; ``require_metric_digest`` pins the metric by the digest every
    report carries (``report.metric_digest``).
    """
    eps = None if epsilon is None else _q(epsilon, "epsilon")
    w = None if within is None else _q(within, "within")
    dl = None if delta is None else _q(delta, "delta")
    if max_entries is not None and isinstance(matrix, (Mechanism, str, os.PathLike)):
        raise InputError("max_entries", "applies to arrays only (files are read under the default limits)")
    if isinstance(matrix, Mechanism):
        return matrix.audit(epsilon=epsilon, within=within, allow_scoped=allow_scoped, delta=delta, progress=progress)
    if isinstance(matrix, (str, os.PathLike)):
        with _progress(progress) as cb:
            return Report(_core.audit_file(os.fspath(matrix), epsilon=eps, within=w,
                                           allow_scoped=allow_scoped, delta=dl,
                                           space=_pin_space(space),
                                           require_metric_digest=require_metric_digest,
                                           progress=cb))
    if require_metric_digest is not None:
        raise InputError("require_metric_digest", "applies to files (an array's metric is the space given)")
    if space is None or eps is None:
        raise InputError("space" if space is None else "epsilon", "required to audit a matrix")
    if max_entries is not None:
        _int_in(max_entries, "max_entries", 1, (1 << 64) - 1)
    m, sp = _f64(matrix, "matrix"), _as_space(space)
    with _progress(progress) as cb:
        return Report(_core.audit_matrix(m, sp, eps, within=w, delta=dl, eps_in_metric=eps_in_metric,
                                         outputs_are_inputs=outputs_are_inputs, max_entries=max_entries,
                                         progress=cb))


def _refuse(r: Report) -> None:
    """Raise the report's refusal: Inconclusive for an undecided audit, else NotPrivate."""
    raise (Inconclusive if r.verdict == "inconclusive" else NotPrivate)(r.json, repr(r))


def is_private(matrix: Any, space: Any, epsilon: Number = 1, *, progress: Progress = None) -> bool:
    """Whether ``matrix`` is ε·d private on ``space`` (a Space or an n × n distance matrix),
    proven exactly. With the default ε = 1 this is libqif's ``is_private(C, d)``, whose
    metric d already includes ε. Raises :class:`Inconclusive` rather than guess. A matrix
    whose rows sum to 1 only up to more than the tolerance (1e-9; float32 input, libqif's
    ``planar_laplace_grid`` rows off by 3·10⁻⁵) is not private as given: False, with a
    ``UserWarning`` that says why (``md.repair`` or normalizing the rows fixes it)."""
    r = audit(matrix, space, epsilon, progress=progress)
    if r.verdict == "inconclusive":
        _refuse(r)
    rows = next((c for c in r.checks if c["name"] == "row_sums"), None)
    if rows is not None and rows["verdict"] == "fail":
        import warnings

        warnings.warn(f"not a stochastic matrix within the tolerance: {rows['detail']}; normalize the rows "
                      "(m / m.sum(axis=1, keepdims=True)) or use metricdp.repair", stacklevel=2)
    return r.passed


def smallest_epsilon(matrix: Any, space: Any, *, progress: Progress = None) -> float:
    """The smallest ε at which ``matrix`` is ε·d private (libqif's ``smallest_epsilon``),
    as a proven upper end: the matrix is private at the returned ε, and the true value is
    within ``audit(...).epsilon_tight``. ``inf`` when no ε works (an output reachable from
    one input and not from another). Raises :class:`NotPrivate` when the matrix fails a
    check no ε can mend (its rows do not sum to 1), :class:`Inconclusive` when the tight ε
    could not be enclosed."""
    r = audit(matrix, space, 10**9, progress=progress)
    other = [c for c in r.checks if c["verdict"] == "fail" and c["name"] != "pure_privacy"]
    if other:
        raise NotPrivate(r.json, f"{other[0]['name']}: {other[0]['detail']}")
    if r.epsilon_tight is None or any(c["verdict"] == "inconclusive" for c in r.checks):
        raise Inconclusive(r.json, repr(r))
    return r.epsilon_tight[1]


def import_matrix(matrix: Any, space: Any, epsilon: Number, *, eps_in_metric: bool = False,
                  outputs_are_inputs: Optional[bool] = None, progress: Progress = None) -> Mechanism:
    """A numpy matrix as a certified :class:`Mechanism` (``mdp import``); raises
    :class:`NotPrivate` with the report when it does not pass."""
    m, sp, eps = _f64(matrix, "matrix"), _as_space(space), _q(epsilon, "epsilon")
    with _progress(progress) as cb:
        return Mechanism(_core.import_matrix(m, sp, eps, eps_in_metric=eps_in_metric,
                                             outputs_are_inputs=outputs_are_inputs, progress=cb))


def repair(matrix: Any, space: Any, epsilon: Number, *, tolerance: float = 1e-3, eps_in_metric: bool = False,
           outputs_are_inputs: Optional[bool] = None, progress: Progress = None) -> Mechanism:
    """The exact repair of a near-private matrix (rows off 1, entries like −1e-12, ratios an
    ulp over e^{εd}; ``mdp repair``): the least uniform mix that makes it provably private.
    The mechanism's ``summary['repair']`` has the mix, the change and the losses."""
    m, sp, eps = _f64(matrix, "matrix"), _as_space(space), _q(epsilon, "epsilon")
    with _progress(progress) as cb:
        core, _ = _core.repair_matrix(m, sp, eps, tolerance=float(tolerance), eps_in_metric=eps_in_metric,
                                      outputs_are_inputs=outputs_are_inputs, progress=cb)
    return Mechanism(core)


# ---------------------------------------------------------------- applying a mechanism


class PlanarLaplace:
    """Geo-indistinguishability's planar Laplace (Andrés et al. 2013) on coordinate records,
    exactly sampled (the command line's ``mdp privatize --sampler planar-laplace``;
    ``spec/geo.md`` §1). Build it with :func:`planar_laplace`; apply it with
    :func:`privatize` (DataFrames, arrays) or :func:`metricdp.distributed.privatize` (Dask).

    Each release is round_H(x + Z) clamped to ``region`` — a fixed map of exactly sampled
    noise. For ``metric="haversine"`` (lat, lon in degrees) ε is per great-circle km and
    ``region`` (lat_min, lon_min, lat_max, lon_max) is required: it fixes the projection
    whose distortion bound makes plane distances a lower bound on great-circle ones.
    """

    def __init__(self, epsilon: str, metric: str, region: Optional[str], granularity: Optional[str]):
        self.epsilon, self.metric, self.region, self.granularity = epsilon, metric, region, granularity
        # Validate now (and learn the defaults) with an empty release.
        _, text = _core.planar_laplace([], epsilon, metric == "haversine", region, granularity, 0)
        self._summary = json.loads(text)

    def summary(self, confidence: float = 0.95) -> Dict[str, Any]:
        """ε and its unit, the noise scale, the grid, the expected displacement (2/ε) and the
        radius holding the noise with probability ``confidence`` (an enclosure
        ``[lo, hi]``), and for lat/lon the projection's constants (``stretch``: how much
        wider east–west noise is on the ground than it needs to be, ≥ 1)."""
        _, text = _core.planar_laplace([], self.epsilon, self.metric == "haversine", self.region,
                                       self.granularity, 0, float(confidence))
        summary: Dict[str, Any] = json.loads(text)
        return summary

    def release(self, points: Any, *, seed: Optional[int] = None, exact: bool = False) -> Any:
        """Release an (n, 2) array-like of coordinates: a float64 array of the releases (each
        the nearest double of an exact grid point), or with ``exact=True`` the exact decimal
        strings as a list of pairs."""
        arr = np.asarray(points, dtype=object)
        if arr.ndim != 2 or arr.shape[1] != 2:
            raise InputError("records", f"expected n × 2 coordinates, got shape {arr.shape}")
        pts = [(_q(a, f"records[{i}]"), _q(b, f"records[{i}]")) for i, (a, b) in enumerate(arr.tolist())]
        out, _ = _core.planar_laplace(pts, self.epsilon, self.metric == "haversine", self.region,
                                      self.granularity, None if seed is None else int(seed))
        if exact:
            return out
        return np.array([[float(a), float(b)] for a, b in out], dtype=np.float64).reshape(len(out), 2)

    def __repr__(self) -> str:
        s = self._summary
        return (f"PlanarLaplace(epsilon={s['epsilon']} {s['epsilon_unit']}, granularity={s['granularity']}, "
                f"region={s.get('region')})")


def planar_laplace(epsilon: Optional[Number] = None, *, level: Optional[Number] = None,
                   radius: Optional[Number] = None, metric: str = "haversine",
                   region: Union[Sequence[Number], str, "os.PathLike[str]", None] = None,
                   granularity: Optional[Number] = None) -> PlanarLaplace:
    """The planar Laplace at ``epsilon`` (per km for ``metric="haversine"``, lat/lon in
    degrees; per unit for ``"euclidean"``), or in Location Guard's terms privacy ``level``
    within ``radius`` (ε = level/radius). ``region``: (min0, min1, max0, max1), required for
    haversine; releases are clamped to it. Or a space (``"builtin:rome100"``, a CSV or GeoJSON
    path: the command line's ``--region SPACE``): its points' box, and each release snapped to
    the nearest point (post-processing). ``granularity``: the output grid (default
    10^(⌊log10 θ⌋ − 6) of the noise scale θ, see ``summary()``)."""
    if metric not in ("haversine", "euclidean"):
        raise InputError("metric", "haversine (lat, lon in degrees) or euclidean")
    if (epsilon is None) == (level is None):
        raise InputError("epsilon", "give epsilon, or level with radius (ε = level/radius)")
    if epsilon is not None:
        eps = _q(epsilon, "epsilon")
    else:
        if radius is None:
            raise InputError("radius", "required with level")
        lv, rd = Fraction(_q(level, "level")), Fraction(_q(radius, "radius"))
        if lv <= 0 or rd <= 0:
            raise InputError("level" if lv <= 0 else "radius", "must be > 0")
        eps = _q(lv / rd, "epsilon")
    box = None
    if isinstance(region, (str, os.PathLike)):
        # A space (the command line's --region SPACE): its points' box, releases snapped to
        # the nearest point.
        box = os.fspath(region)
    elif region is not None:
        vals = list(region)
        if len(vals) != 4:
            raise InputError("region", "expected (min0, min1, max0, max1)")
        box = ",".join(_q(v, f"region[{i}]") for i, v in enumerate(vals))
    gran = None if granularity is None else _q(granularity, "granularity")
    return PlanarLaplace(eps, metric, box, gran)


def _coordinate_columns(frame: Any, column: Any, metric: str) -> List[str]:
    """The two coordinate columns of a DataFrame: ``column`` as "a,b" or a pair, else the
    lat/lon columns found by name (haversine)."""
    if column is None:
        if metric != "haversine":
            raise InputError("column", "name the two coordinate columns (e.g. column=['x', 'y'])")
        lat = next((c for c in frame.columns if str(c).lower() in _LAT), None)
        lon = next((c for c in frame.columns if str(c).lower() in _LON), None)
        if lat is None or lon is None:
            raise InputError("column", "no lat/lon columns by name; give column=['lat', 'lon']")
        return [lat, lon]
    cols = [c.strip() for c in column.split(",")] if isinstance(column, str) else list(column)
    if len(cols) != 2 or any(c not in frame.columns for c in cols):
        raise InputError("column", f"expected two columns of the frame, got {cols!r}")
    return cols


def _privatize_planar(mech: PlanarLaplace, records: Any, seed: Optional[int], column: Any,
                      suffix: str, keep_input: bool) -> Any:
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None and isinstance(records, pd.DataFrame):
        cols = _coordinate_columns(records, column, mech.metric)
        released = mech.release(records[cols].to_numpy(dtype=object), seed=seed)
        out = records.copy()
        for j, c in enumerate(cols):
            out[f"{c}{suffix}"] = released[:, j]
        return out if keep_input else out.drop(columns=cols)
    return mech.release(records, seed=seed)


def privatize(mechanism: Any, records: Any, *, seed: Optional[int] = None,
              column: Any = None, suffix: str = "_private",
              epsilon: Optional[Number] = None, within: Optional[Number] = None,
              keep_input: bool = False) -> Any:
    """Apply ``mechanism`` to ``records``: each input replaced by an output drawn exactly
    from the audited rationals (ChaCha20, seeded from the OS unless ``seed``).

    ``records``: input indices (list or integer numpy array: same shape back), input labels
    (list of str: output labels back), a pandas Series (same index and name + ``suffix``)
    or a DataFrame with ``column`` (a copy with ``column + suffix`` in place of ``column``,
    as ``mdp privatize --format csv`` writes it; ``keep_input=True`` keeps ``column``). With
    ``epsilon`` / ``within`` the mechanism is first audited under that policy and refused
    (:class:`NotPrivate`) unless it passes.

    A :class:`PlanarLaplace` (:func:`planar_laplace`) releases coordinates instead: an
    (n, 2) array back for an array, or for a DataFrame a copy with ``lat_private`` and
    ``lon_private`` (``column``: the two columns, found by name for lat/lon) in place of the
    true columns.
    """
    if isinstance(mechanism, PlanarLaplace):
        if epsilon is not None or within is not None:
            raise InputError("epsilon", "a planar Laplace is private by construction at its own ε")
        return _privatize_planar(mechanism, records, None if seed is None else int(seed), column,
                                 suffix, keep_input)
    if not isinstance(mechanism, Mechanism):
        raise InputError("mechanism", "expected a metricdp.Mechanism or PlanarLaplace")
    if epsilon is not None or within is not None:
        r = mechanism.audit(epsilon=epsilon, within=within)
        if not r.passed:
            _refuse(r)
    seed = None if seed is None else int(seed)
    try:
        import pandas as pd
    except ImportError:
        pd = None
    if pd is not None and isinstance(records, pd.DataFrame):
        if column is None or column not in records.columns:
            raise InputError("column", "name the DataFrame's column of inputs")
        out = records.copy()
        out[f"{column}{suffix}"] = privatize(mechanism, records[column], seed=seed)
        return out if keep_input else out.drop(columns=[column])
    if pd is not None and isinstance(records, pd.Series):
        values = _apply(mechanism, records.tolist(), seed)
        name = f"{records.name}{suffix}" if records.name is not None else None
        return pd.Series(values, index=records.index, name=name)
    if isinstance(records, np.ndarray):
        if records.dtype.kind in "iu":
            out = mechanism._m.sample_indices(records.ravel().tolist(), seed)
            return np.asarray(out, dtype=np.int64).reshape(records.shape)
        return np.asarray(_apply(mechanism, records.ravel().tolist(), seed), dtype=object).reshape(records.shape)
    return _apply(mechanism, list(records), seed)


def _apply(mechanism: Mechanism, values: List[Any], seed: Optional[int]) -> List[Any]:
    if any(isinstance(v, str) for v in values):
        # Records named by label: the first that is not a label (None, NaN, a number) is the
        # bad record, wherever it stands.
        for i, v in enumerate(values):
            if not isinstance(v, str):
                raise InputError(f"records[{i}]", f"expected an input label, found {v!r}")
        return mechanism._m.sample_labels(values, seed)
    ints = []
    for i, v in enumerate(values):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral):
            raise InputError(f"records[{i}]", f"expected an input index or label, found {v!r}")
        ints.append(int(v))
    return mechanism._m.sample_indices(ints, seed)


def _coordinates(space: Space, points: Any) -> np.ndarray:
    """Coordinate records as an (m, dim) float64 array: a DataFrame's latitude and longitude
    columns by name (in that order), else its columns; any array-like."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover
        pd = None
    if pd is not None and isinstance(points, pd.DataFrame):
        lat = [c for c in points.columns if str(c).lower() in _LAT]
        lon = [c for c in points.columns if str(c).lower() in _LON]
        cols = [lat[0], lon[0]] if len(lat) == 1 and len(lon) == 1 else list(points.columns)
        points = points[cols].to_numpy(dtype=np.float64)
    arr = np.asarray(points, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(1, -1)
    if arr.ndim != 2:
        raise InputError("points", "expected an (m, dim) array of coordinates")
    return np.ascontiguousarray(arr)


def snap(space: Space, points: Any, *, snap_max: Optional[float] = None) -> Tuple[np.ndarray, np.ndarray]:
    """Snap coordinate records (an (m, dim) array, or a DataFrame with latitude/longitude
    columns; haversine spaces take degrees) to the nearest input of ``space``: the inputs'
    indices and the distances moved (the space's unit, km for haversine). A record farther
    than ``snap_max`` (default: twice the space's widest nearest-neighbour spacing, as
    ``mdp privatize --snap``) raises ``InputError`` naming it (``records[i]``). The privacy
    guarantee then holds between the snapped inputs."""
    idx, moved = _core.snap(space, _coordinates(space, points), snap_max)
    return np.asarray(idx, dtype=np.int64), np.asarray(moved, dtype=np.float64)


def prior_from(space: Space, records: Any, *, snap_max: Optional[float] = None,
               pseudocount: Number = 0) -> np.ndarray:
    """A prior over the inputs of ``space`` from records, as ``mdp prior``: each record
    counted on its input. ``records``: input labels (strings), input indices (integers), or
    coordinates (an (m, dim) array or a DataFrame with latitude/longitude columns), which
    are snapped (:func:`snap`, within ``snap_max``). ``pseudocount`` is added to every
    input's count. Returns n float64 weights in input order (what ``prior=`` takes)."""
    n = space.n
    pq = _q(pseudocount, "pseudocount")  # as the other numbers: a str, Fraction, int or finite float
    try:
        pc = Fraction(pq)
    except (ValueError, ZeroDivisionError):
        raise InputError("pseudocount", f"not a number: {pq!r}") from None
    if pc < 0:
        raise InputError("pseudocount", "must be ≥ 0")
    values = records.tolist() if hasattr(records, "tolist") and not hasattr(records, "columns") else records
    if isinstance(values, list) and values and all(isinstance(v, str) for v in values):
        labels = space.labels
        if labels is None:
            raise InputError("records", "the space has no labels: pass indices or coordinates")
        where = {label: i for i, label in enumerate(labels)}
        idx = []
        for i, v in enumerate(values):
            if v not in where:
                raise InputError(f"records[{i}]", f"{v!r} is not an input label")
            idx.append(where[v])
    elif isinstance(values, list) and values and all(
            isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
        idx = list(values)
        for i, v in enumerate(idx):
            if not 0 <= v < n:
                raise InputError(f"records[{i}]", f"input {v} is not in 0..{n}")
    else:
        idx = snap(space, records, snap_max=snap_max)[0].tolist()
    counts = np.bincount(np.asarray(idx, dtype=np.int64), minlength=n).astype(np.float64) + float(pc)
    if not counts.any():
        raise InputError("records", "no record was counted (give pseudocount > 0 for a uniform part)")
    return counts


def measure(mechanism: Any, *, prior: Any = None, gain: Any = None) -> Dict[str, Any]:
    """The adversary's view of a mechanism (``mdp measure``): Bayes vulnerability (prior and
    posterior), multiplicative leakage and min-entropy leakage in bits, multiplicative
    capacity, g-vulnerability (with ``gain``, rows g(w, ·) one per guess), the adversary's
    expected error (the expected distance from the secret to the Bayes-optimal guess, with
    the guess for each output), conditional entropy in bits, the expected and worst loss.

    ``mechanism``: a :class:`Mechanism` or the path of an ``mdp/1`` file. ``prior``: n
    weights (default: the file's prior, else uniform). Returns a dict: exact values as
    floats (their exact rationals as strings under ``"exact"``), enclosures as
    ``[lo, hi]`` lists of floats rounded outward, ``"unit"`` the distance unit."""
    p = None if prior is None else [_q(w, f"prior[{i}]") for i, w in enumerate(np.asarray(prior).ravel().tolist())]
    g = None if gain is None else [[_q(x, f"gain[{i}]") for x in row]
                                   for i, row in enumerate(np.asarray(gain).tolist())]
    if isinstance(mechanism, Mechanism):
        text = _core.measure(mechanism=mechanism._m, prior=p, gain=g)
    elif isinstance(mechanism, (str, os.PathLike)):
        text = _core.measure(path=os.fspath(mechanism), prior=p, gain=g)
    else:
        raise InputError("mechanism", "expected a Mechanism or a path")
    return dict(json.loads(text))


def remap(mechanism: Any, *, prior: Any = None, progress: Progress = None) -> Tuple[Mechanism, Dict[str, Any]]:
    """Bayesian remapping (``mdp remap``): each output post-processed into the input that
    minimizes the posterior expected distance under ``prior`` (default: the file's, else
    uniform). Returns the remapped :class:`Mechanism`, certified by its own audit at the
    same ε (post-processing keeps ε·d privacy), and a dict with ``expected_loss_before``,
    ``expected_loss_after`` (enclosures; after = the adversary's error, never more than
    before) and ``map`` (the input each output goes to)."""
    p = None if prior is None else [_q(w, f"prior[{i}]") for i, w in enumerate(np.asarray(prior).ravel().tolist())]
    with _progress(progress) as cb:
        if isinstance(mechanism, Mechanism):
            core, text = _core.remap(mechanism=mechanism._m, prior=p, progress=cb)
        elif isinstance(mechanism, (str, os.PathLike)):
            core, text = _core.remap(path=os.fspath(mechanism), prior=p, progress=cb)
        else:
            raise InputError("mechanism", "expected a Mechanism or a path")
    return Mechanism(core), dict(json.loads(text))


# ---------------------------------------------------------------- user-level privacy

from .user import Emd, Release, emd, release_freq, release_item_wise, release_linear, shuffle_account, shuffle_inverse  # noqa: E402

__all__ = [
    "Space", "space", "distances", "load_space", "from_dataframe",
    "Mechanism", "exponential", "geometric", "randomized_response", "planar_laplace_grid", "planar_geometric_grid",
    "optimal", "pmo",
    "benders", "spanner", "constopt", "tem", "load",
    "audit", "is_private", "smallest_epsilon", "import_matrix", "repair", "privatize", "save_container",
    "snap", "prior_from", "measure", "remap", "PlanarLaplace", "planar_laplace",
    "Report", "Emd", "emd", "shuffle_account", "shuffle_inverse",
    "Release", "release_linear", "release_item_wise", "release_freq",
    "MdpError", "InputError", "NotPrivate", "Inconclusive", "SolverError",
]
