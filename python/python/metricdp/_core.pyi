"""Type stubs of the extension module (python/src; registered in python/src/lib.rs). Numbers
are passed as exact decimal or p/q strings; reports and summaries come back as JSON text.

Each signature is the Rust one (`#[pyo3(signature = ...)]`): a Rust `Vec<T>` argument takes
any sequence and comes back as a list, a float64 array argument must be a 2-D numpy array of
dtype float64, `progress` is called as `progress(event, phase, value)` (its return value is
ignored) and a `space=` pin is a `Space` or a string (`builtin:NAME`, a path).
"""

from typing import Any, Callable, Optional, Sequence, final

import numpy as np
import numpy.typing as npt

# In the order python/src/lib.rs registers them.
__all__ = [
    "__version__",
    "Space",
    "snap",
    "Mechanism",
    "build",
    "load",
    "audit_file",
    "audit_matrix",
    "import_matrix",
    "repair_matrix",
    "emd",
    "account_item_wise",
    "release_linear",
    "release_item_wise",
    "release_freq",
    "benders_subproblem",
    "container_shape",
    "container_metric",
    "measure",
    "remap",
    "planar_laplace",
    "block_sums",
    "add_sums",
    "audit_block",
    "combine_blocks",
    "write_container",
    "privatize_container",
]

__version__: str

# Stub-only aliases (not attributes of the module).
_F64Array = npt.NDArray[np.float64]
_Progress = Optional[Callable[[str, str, Any], object]]
# `subproblems`: the Benders loop's job texts to their results' texts, in order.
_Subproblems = Optional[Callable[[list[str]], Sequence[str]]]

@final
class Space:
    @staticmethod
    def from_points(
        points: _F64Array,
        metric: str,
        labels: Optional[Sequence[str]] = None,
        radius: Optional[str] = None,
        name: Optional[str] = None,
    ) -> Space: ...
    @staticmethod
    def from_distances(
        distances: _F64Array,
        labels: Optional[Sequence[str]] = None,
        name: Optional[str] = None,
        check_triangle: bool = False,
    ) -> Space: ...
    @staticmethod
    def load(spec: str, label_column: Optional[str] = None) -> Space: ...
    @property
    def n(self) -> int: ...
    @property
    def metric(self) -> str: ...
    @property
    def labels(self) -> Optional[list[str]]: ...
    @property
    def name(self) -> str: ...
    @property
    def unit(self) -> str: ...
    @property
    def warnings(self) -> list[str]: ...
    def distance(self, i: int, j: int) -> float: ...
    def points(self) -> Optional[_F64Array]: ...
    def to_json(self) -> str: ...
    def __len__(self) -> int: ...
    def __repr__(self) -> str: ...

def snap(space: Space, points: _F64Array, snap_max: Optional[float] = None) -> tuple[list[int], list[float]]: ...

@final
class Mechanism:
    @property
    def n(self) -> int: ...
    @property
    def k(self) -> int: ...
    @property
    def epsilon(self) -> str: ...
    @property
    def within(self) -> Optional[str]: ...
    @property
    def labels(self) -> Optional[list[str]]: ...
    @property
    def output_labels(self) -> list[str]: ...
    def input_points(self) -> Optional[_F64Array]: ...
    def output_points(self) -> Optional[_F64Array]: ...
    def matrix_f64(self) -> _F64Array: ...
    def exact(self, i: int, j: int) -> str: ...
    def report_json(self) -> str: ...
    def report_text(self) -> str: ...
    def summary_json(self) -> str: ...
    def to_json(self) -> str: ...
    def save(self, path: str) -> None: ...
    def audit(
        self,
        *,
        epsilon: Optional[str] = None,
        within: Optional[str] = None,
        allow_scoped: bool = False,
        delta: Optional[str] = None,
        progress: _Progress = None,
    ) -> str: ...
    def sample_indices(self, inputs: Sequence[int], seed: Optional[int] = None) -> list[int]: ...
    def sample_labels(self, inputs: Sequence[str], seed: Optional[int] = None) -> list[str]: ...
    def __repr__(self) -> str: ...

def build(
    space: Space,
    family: str,
    epsilon: str,
    *,
    weights: Optional[Sequence[str]] = None,
    solver: str = "auto",
    prior: Optional[Sequence[str]] = None,
    cost: Optional[_F64Array] = None,
    outputs: Optional[Sequence[int]] = None,
    outputs_rule: Optional[str] = None,
    within: Optional[str] = None,
    gap: Optional[float] = None,
    k: int = 2,
    r: int = 10,
    replacement: Optional[Sequence[Sequence[int]]] = None,
    lambdas: Optional[Sequence[float]] = None,
    beta: Optional[float] = None,
    gamma: Optional[str] = None,
    partitions: Optional[int] = None,
    method: str = "km-rec",
    master: str = "cover",
    max_iter: int = 500,
    seed: int = 0,
    max_memory: Optional[int] = None,
    subproblems: _Subproblems = None,
    progress: _Progress = None,
) -> Mechanism: ...
def load(
    path: str,
    *,
    space: Space | str | None = None,
    require_metric_digest: Optional[str] = None,
    trust_file_metric: bool = False,
    epsilon: Optional[str] = None,
    within: Optional[str] = None,
    allow_scoped: bool = False,
    progress: _Progress = None,
) -> Mechanism: ...
def audit_file(
    path: str,
    *,
    epsilon: Optional[str] = None,
    within: Optional[str] = None,
    allow_scoped: bool = False,
    delta: Optional[str] = None,
    space: Space | str | None = None,
    require_metric_digest: Optional[str] = None,
    progress: _Progress = None,
) -> str: ...
def audit_matrix(
    matrix: _F64Array,
    space: Space,
    epsilon: str,
    *,
    within: Optional[str] = None,
    delta: Optional[str] = None,
    eps_in_metric: bool = False,
    outputs_are_inputs: Optional[bool] = None,
    max_entries: Optional[int] = None,
    progress: _Progress = None,
) -> str: ...
def import_matrix(
    matrix: _F64Array,
    space: Space,
    epsilon: str,
    *,
    eps_in_metric: bool = False,
    outputs_are_inputs: Optional[bool] = None,
    progress: _Progress = None,
) -> Mechanism: ...
def repair_matrix(
    matrix: _F64Array,
    space: Space,
    epsilon: str,
    *,
    tolerance: float = 1e-3,
    eps_in_metric: bool = False,
    outputs_are_inputs: Optional[bool] = None,
    progress: _Progress = None,
) -> tuple[Mechanism, str]: ...

# ---- user-level privacy (python/src/user.rs). `budget` defaults to mdp's Budget::DEFAULT
# (50 000 000 exact operations), written `...` as the runtime signature shows it.

def emd(space: Space, a: Sequence[int], b: Sequence[int], *, assignment: bool = False,
        budget: int = ...) -> str: ...
def account_item_wise(
    items: int,
    delta: str,
    *,
    alpha0: Optional[str] = None,
    alpha: Optional[str] = None,
    users: Optional[int] = None,
    distance: Optional[str] = None,
    accountant: str = "tighter",
) -> str: ...
def release_linear(
    space: Space,
    users: str,
    alpha: str,
    *,
    query: str = "average",
    norm: str = "l2",
    model: str = "local",
    budget: int = ...,
    samples: Optional[int] = None,
    tau: Optional[str] = None,
    beta: str = "1e-9",
    seed: Optional[int] = None,
) -> tuple[str, str]: ...
def release_item_wise(
    mechanism: Mechanism,
    users: str,
    *,
    delta: str = "1e-9",
    model: str = "central",
    epsilon: Optional[str] = None,
    samples: Optional[int] = None,
    tau: Optional[str] = None,
    beta: str = "1e-9",
    seed: Optional[int] = None,
    accountant: str = "tighter",
) -> tuple[str, str]: ...
def release_freq(
    users: str,
    *,
    clusters: int,
    size: int,
    r: str,
    alpha: str,
    delta: str = "1e-6",
    model: str = "central",
    seed: Optional[int] = None,
    accountant: str = "tighter",
) -> tuple[str, str, Mechanism]: ...

# ---- Benders subproblems solved elsewhere (python/src/remote.rs).

def benders_subproblem(job: str) -> str: ...

# ---- measures, remapping and the planar Laplace (python/src/tools.rs).

def measure(
    *,
    path: Optional[str] = None,
    mechanism: Optional[Mechanism] = None,
    prior: Optional[Sequence[str]] = None,
    gain: Optional[Sequence[Sequence[str]]] = None,
) -> str: ...
def remap(
    *,
    path: Optional[str] = None,
    mechanism: Optional[Mechanism] = None,
    prior: Optional[Sequence[str]] = None,
    progress: _Progress = None,
) -> tuple[Mechanism, str]: ...
def planar_laplace(
    points: Sequence[tuple[str, str]],
    epsilon: str,
    geographic: bool,
    region: Optional[str] = None,
    granularity: Optional[str] = None,
    seed: Optional[int] = None,
    confidence: float = 0.95,
) -> tuple[list[tuple[str, str]], str]: ...

# ---- large-mechanism containers (python/src/blocks.rs).

def container_shape(header: str) -> tuple[int, int, str]: ...
def container_metric(
    header: str,
    *,
    space: Space | str | None = None,
    require_metric_digest: Optional[str] = None,
) -> str: ...
def block_sums(header: str, c0: int, c1: int) -> list[str]: ...
def add_sums(parts: Sequence[Sequence[str]]) -> list[str]: ...
def audit_block(
    header: str,
    c0: int,
    c1: int,
    sums: Sequence[str],
    epsilon: Optional[str] = None,
    part: int = 0,
    parts: int = 1,
    max_exact_triples: Optional[int] = None,
) -> str: ...
def combine_blocks(results: Sequence[str], sums: Sequence[str], n: int, k: int, epsilon: str) -> str: ...
def write_container(
    matrix: _F64Array,
    space: Space,
    epsilon: str,
    path: str,
    *,
    progress: _Progress = None,
) -> str: ...
def privatize_container(
    header: str,
    records: Sequence[Any],
    *,
    epsilon: str,
    within: Optional[str] = None,
    allow_scoped: bool = False,
    space: Space | str | None = None,
    require_metric_digest: Optional[str] = None,
    trust_file_metric: bool = False,
    seed: Optional[int] = None,
    by_index: bool = False,
    progress: _Progress = None,
) -> list[str]: ...
