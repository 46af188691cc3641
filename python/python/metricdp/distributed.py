"""Large-mechanism containers audited and applied across a Dask cluster (issue 35, part 4).

A container is an ``mdp/1`` header beside a float64 ``.npy`` matrix (``mdp build
exponential --container``; ``spec/mechanism-format.md``, revision 3). Privacy is a
statement per column and per ordered pair, so the exact structured audit splits by blocks
of columns and by shares of the pairs (``spec/soundness.md`` §7,
``mdp::structured::blocks``):

1. each block's exact row sums, as tasks; the driver adds them exactly;
2. each (block, share) audited with the whole rows' sums, as tasks;
3. the driver combines: a pass iff every task passes, the tight ε the maximum of the
   tasks' enclosures, the witness of the first failing one.

Blocks of columns divide the column work; shares of the pairs (box pairs of the k-d tree,
or edges) divide the pair work, which every block repeats: with n ≫ K use shares.

Every decision is the library's; this module only places the calls. Workers must see the
header and the ``.npy`` file at the same path (a local cluster, or a shared file
system)::

    from dask.distributed import Client, LocalCluster
    import metricdp.distributed as mdd
    with Client(LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1",
                             dashboard_address="127.0.0.1:0")) as client:
        report = mdd.audit("city.json", client=client)
    report["verdict"], report["epsilon_tight"]

Without a client the blocks run one after the other in this process (the same result).
"""

from __future__ import annotations

import json
import os
from typing import Any, Dict, List, Optional, Tuple

from . import _core, _int_in
from .errors import InputError

# Memory a task may plan (bytes), as the library's block audit (`BLOCK_MEMORY`).
_TASK_MEMORY = 16_000_000_000


def _gather(client: Any, futures: List[Any], timeout: Optional[float]) -> List[Any]:
    """The futures' results in order; on a timeout (or any error) they are cancelled first."""
    from dask.distributed import wait

    try:
        wait(futures, timeout=timeout)
        results: List[Any] = client.gather(futures)
        return results
    except BaseException:
        client.cancel(futures)
        raise


def _bounds(k: int, blocks: int) -> List[Tuple[int, int]]:
    blocks = max(1, min(blocks, k))
    step, extra = divmod(k, blocks)
    out, c0 = [], 0
    for b in range(blocks):
        c1 = c0 + step + (1 if b < extra else 0)
        out.append((c0, c1))
        c0 = c1
    return out


def _sums(header: str, c0: int, c1: int) -> List[str]:
    return _core.block_sums(header, c0, c1)


def _block(header: str, c0: int, c1: int, sums: List[str], epsilon: Optional[str], part: int,
           parts: int, budget: Optional[int]) -> str:
    return _core.audit_block(header, c0, c1, sums, epsilon, part, parts, budget)


def audit(header: "os.PathLike[str] | str", *, client: Any = None, blocks: Optional[int] = None,
          shares: Optional[int] = None, epsilon: Any = None,
          timeout: Optional[float] = None, max_exact_triples: Optional[int] = None,
          space: Any = None, require_metric_digest: Optional[str] = None) -> Dict[str, Any]:
    """Prove (or refute) the container at ``header`` ε·d private, task by task.

    ``client``: a ``dask.distributed.Client`` (None: run here). ``blocks``: how many
    column blocks; ``shares``: how many shares of the ordered pairs; every block is audited
    on every share, one task each. Defaults (1 and 1 without a client): with more inputs
    than outputs (the pair work dominates) one share per worker (each share reads the whole
    matrix), else two column blocks per worker. The row sums are taken by column blocks,
    at least one per task. ``epsilon``: the ε to prove (default: the header's claim). ``timeout``: seconds
    each phase may wait for its tasks on the cluster (``TimeoutError`` past it).
    ``max_exact_triples``: the exact fallback's budget per task (default 2·10⁸; past it the
    task raises ``InputError``, as ``mdp-audit --max-exact-triples``). Returns
    ``space`` / ``require_metric_digest``: the pipeline's metric, as for
    :func:`metricdp.audit` (checked on this process from the header; a different metric
    fails the verdict, its ``metric_check`` saying where). Returns
    the combined report as a dict:
    ``verdict`` (``pass``/``fail``/``inconclusive``), ``epsilon_tight`` [lo, hi],
    ``witness`` (the failing block's check, with global indices), ``row_sums``, and the
    work (``settled_fraction``, ``exact_triples``, ``seconds_blocks``).
    """
    from . import _pin_space

    path = os.path.abspath(os.fspath(header))
    metric = json.loads(_core.container_metric(path, space=_pin_space(space),
                                               require_metric_digest=require_metric_digest))
    n, k, claimed = _core.container_shape(path)
    if epsilon is None:
        eps = claimed
    else:
        from . import _q

        eps = _q(epsilon, "epsilon")
    workers = max(1, len(client.scheduler_info().get("workers", {}))) if client is not None else 0
    # Shares when the pair work dominates (n > K) and each task can hold the whole matrix.
    by_shares = n > k and 24 * n * k <= _TASK_MEMORY
    if blocks is None:
        blocks = 1 if shares is not None or by_shares else max(1, 2 * workers)
    if shares is None:
        shares = max(1, workers) if by_shares and blocks == 1 else 1
    _int_in(blocks, "blocks", 1, 1 << 20)
    _int_in(shares, "shares", 1, 1 << 20)
    if max_exact_triples is not None:
        _int_in(max_exact_triples, "max_exact_triples", 1, (1 << 64) - 1)
    bounds = _bounds(k, blocks)
    work = [(a, b, s) for a, b in bounds for s in range(shares)]
    sum_bounds = _bounds(k, max(blocks, len(work)))
    heads = [path] * len(sum_bounds)
    c0s, c1s = [b[0] for b in sum_bounds], [b[1] for b in sum_bounds]
    if client is None:
        parts = [_sums(path, a, b) for a, b in sum_bounds]
        sums = _core.add_sums(parts)
        results = [_block(path, a, b, sums, eps, s, shares, max_exact_triples) for a, b, s in work]
    else:
        def done(futures: List[Any]) -> List[Any]:
            return _gather(client, futures, timeout)

        parts = done(client.map(_sums, heads, c0s, c1s, pure=False))
        sums = _core.add_sums(parts)
        [shared] = client.scatter([sums], broadcast=True)
        w = len(work)
        results = done(client.map(_block, [path] * w, [t[0] for t in work], [t[1] for t in work],
                                  [shared] * w, [eps] * w, [t[2] for t in work], [shares] * w,
                                  [max_exact_triples] * w, pure=False))
    report: Dict[str, Any] = json.loads(_core.combine_blocks(results, sums, n, k, eps))
    report["header"] = path
    report["metric"], report["metric_digest"] = metric["metric"], metric["metric_digest"]
    if metric["check"] is not None:
        report["metric_check"] = metric["check"]
        if metric["check"]["verdict"] == "fail":
            report["verdict"] = "fail"
    return report


def _privatize_part(part: Any, header: str, column: str, out: str, epsilon: str, within: Optional[str],
                    allow_scoped: bool, by_index: bool, seed: Optional[int], space: Optional[str],
                    digest: Optional[str], trust: bool, keep_input: bool, partition_info: Any = None) -> Any:
    """One pandas partition: its ``column`` privatized into ``out`` (a Dask task)."""
    if seed is not None and partition_info is not None:
        seed = seed + int(partition_info.get("number", 0))
    values = part[column].tolist()
    result = _core.privatize_container(header, values, epsilon=epsilon, within=within, allow_scoped=allow_scoped,
                                       space=space, require_metric_digest=digest, trust_file_metric=trust,
                                       seed=seed, by_index=by_index)
    part = part.copy()
    part[out] = [int(x) for x in result] if by_index else result
    return part if keep_input else part.drop(columns=[column])


def privatize(header: Any, frame: Any, column: Any = None, *, epsilon: Any = None, out: Optional[str] = None,
              within: Any = None, allow_scoped: bool = False, by_index: bool = False,
              seed: Optional[int] = None, space: Any = None, require_metric_digest: Optional[str] = None,
              trust_file_metric: bool = False, keep_input: bool = False) -> Any:
    """Apply the container at ``header`` to the records of ``frame[column]`` (input labels,
    or 0-based indices with ``by_index``), adding the released outputs as column ``out``
    (default ``{column}_private``) in place of ``column`` (``keep_input=True`` keeps it, as
    ``mdp privatize --keep-input``); every other column is kept, so each record keeps its
    id.

    ``frame``: a pandas DataFrame (privatized here) or a Dask DataFrame (each partition on
    a worker, lazily: call ``.compute()`` or write it out; ``pip install
    metricdp[dataframe]``). On each process the container is
    read and **proven by the structured audit under the pipeline's policy** (``epsilon``
    required, ``within``/``allow_scoped`` as for :func:`metricdp.audit`, the metric pinned by
    ``space`` (a path: each worker reads it) or ``require_metric_digest``, or
    ``trust_file_metric=True``, as for :func:`metricdp.load`) before its first
    record, then kept: a worker proves once what it samples, and a changed file is proven
    again. Sampling is exact (from the float64 entries the audit proved) and draws from the
    operating system's randomness unless ``seed`` is given (tests only; partition p of a
    Dask frame uses ``seed + p``).

    ``header`` may instead be a :class:`metricdp.PlanarLaplace`: each partition's coordinate
    records (``column``: the two columns, found by name for lat/lon) are released as
    :func:`metricdp.privatize` releases them, ``lat_private``/``lon_private`` in place of the
    true columns (``keep_input=True`` keeps them).
    """
    from . import PlanarLaplace, _q

    if isinstance(header, PlanarLaplace):
        return _planar(header, frame, column, seed, keep_input)
    if column is None or epsilon is None:
        raise InputError("epsilon" if column is not None else "column",
                         "required with a container (the pipeline's ε and the records' column)")

    path = os.path.abspath(os.fspath(header))
    eps = _q(epsilon, "epsilon")
    eta = None if within is None else _q(within, "within")
    out = out or f"{column}_private"
    if column not in frame.columns:
        raise InputError("column", f"{column!r} is not a column of the frame")
    if out in frame.columns:
        raise InputError("out", f"{out!r} is already a column of the frame")
    if space is not None and not isinstance(space, (str, os.PathLike)):
        raise InputError("space", "a path (each worker reads it), not an object")
    if space is None and require_metric_digest is None and not trust_file_metric:
        raise InputError("space", "the file's own metric is a claim: give the pipeline's metric (space=), "
                         "its digest (require_metric_digest=), or trust_file_metric=True")
    # A path becomes absolute (each worker reads it); builtin:, line:, grid: and categories: are not paths.
    spec = None if space is None else os.fspath(space)
    generated = spec is not None and spec.startswith(("builtin:", "line:", "grid:", "categories:"))
    pinned = spec if spec is None or generated else os.path.abspath(spec)
    args = (path, column, out, eps, eta, allow_scoped, by_index, seed, pinned, require_metric_digest,
            trust_file_metric, keep_input)
    if hasattr(frame, "map_partitions"):  # a Dask DataFrame
        meta = frame._meta.copy()
        meta[out] = meta[column].iloc[:0].astype("int64" if by_index else "object")
        if not keep_input:
            meta = meta.drop(columns=[column])
        return frame.map_partitions(_privatize_part, *args, meta=meta)
    return _privatize_part(frame, *args)


def _planar_part(part: Any, mech: Any, cols: List[str], seed: Optional[int], keep_input: bool,
                 partition_info: Optional[Dict[str, Any]] = None) -> Any:
    from . import privatize as apply

    if seed is not None and partition_info is not None:
        seed = seed + int(partition_info.get("number", 0))
    return apply(mech, part, column=cols, seed=seed, keep_input=keep_input)


def _planar(mech: Any, frame: Any, column: Any, seed: Optional[int], keep_input: bool) -> Any:
    from . import _coordinate_columns

    cols = _coordinate_columns(frame, column, mech.metric)
    if hasattr(frame, "map_partitions"):  # a Dask DataFrame
        meta = frame._meta.copy()
        for c in cols:
            meta[f"{c}_private"] = meta[c].iloc[:0].astype("float64")
        if not keep_input:
            meta = meta.drop(columns=cols)
        return frame.map_partitions(_planar_part, mech, cols, seed, keep_input, meta=meta)
    return _planar_part(frame, mech, cols, seed, keep_input)


def benders(space: Any, epsilon: Any, *, within: Any, client: Any = None, timeout: Optional[float] = None,
            **options: Any) -> Any:
    """PMO by Benders decomposition (:func:`metricdp.benders`, Qiu 2024 §3) with the master
    on this process and each iteration's subproblems as Dask tasks on ``client``'s workers
    (``spec/benders.md`` §6). Each subproblem is a pure function of the JSON text the loop
    sends (its records' costs and rows, the master's values of its fixed records); a worker
    returns its value, primal and cut, which the loop checks in shape and uses as it would
    its own. The result is the same certified mechanism as without a client (the lower
    bound is the exactly verified ``lp_dual``, the incumbent is repaired and audited
    exactly here). ``timeout``: seconds one iteration may wait for its tasks
    (``TimeoutError`` past it, raised as the build's error). ``options``: those of
    :func:`metricdp.benders` (``partitions``, ``method``, ``gap``, ``max_iter``, ...).
    """
    from . import benders as build_benders

    if "subproblems" in options:
        raise InputError("subproblems", "set by distributed.benders (pass a client instead)")
    if client is None:
        return build_benders(space, epsilon, within=within, **options)

    def solve(jobs: List[str]) -> List[str]:
        return _gather(client, client.map(_core.benders_subproblem, jobs, pure=False), timeout)

    return build_benders(space, epsilon, within=within, subproblems=solve, **options)


__all__ = ["audit", "benders", "privatize"]
