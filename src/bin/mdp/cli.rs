//! The `mdp` command line: every subcommand, flag and help text (clap derive). Parsing
//! only: values become the library's settings types in `main.rs`.

use crate::{suite, tools, user};
use clap::{Parser, Subcommand};
use mdp::io::Limits;

#[derive(Parser)]
#[command(
    name = "mdp",
    version,
    about = "Metric differential privacy mechanisms with proofs"
)]
pub(crate) struct Cli {
    /// The CSV column (or GeoJSON property) whose values label the points of a CSV or
    /// GeoJSON space; by default the first column named label, name or id. Part of the
    /// metric a pin compares.
    #[arg(long, global = true, value_name = "COLUMN")]
    pub(crate) label_column: Option<String>,
    #[command(subcommand)]
    pub(crate) cmd: Cmd,
}

#[derive(Subcommand)]
pub(crate) enum Cmd {
    /// Build the exponential mechanism on the embedded default space, write it and audit it.
    Demo {
        /// Privacy level ε (per km for the default space).
        #[arg(long, default_value = "0.5")]
        epsilon: String,
        /// Space: `builtin:NAME` or a JSON file.
        #[arg(long, default_value = mdp::builtin::DEFAULT)]
        space: String,
        /// Where to write the mechanism.
        #[arg(short, long, default_value = "mech.json")]
        output: String,
    },
    /// Build a mechanism and write it as an mdp/1 file.
    Build {
        #[command(subcommand)]
        mechanism: Mechanism,
    },
    /// Work with the privacy LPs directly.
    Lp {
        #[command(subcommand)]
        cmd: LpCmd,
    },
    /// Monte Carlo estimate of a sampler's matrix and loss (not a certificate).
    Estimate {
        #[command(subcommand)]
        sampler: EstimateKind,
    },
    /// Apply a mechanism to records: one input (index or label) per line in, one sampled
    /// output per line out; seeded and streaming.
    Privatize(suite::PrivatizeArgs),
    /// A prior from records: each record (a label, an index, or coordinates snapped to the
    /// nearest input) counted on its input; a JSON array of n weights, a prior for PMO.
    Prior(suite::PriorArgs),
    /// The adversary's view of a mechanism: Bayes vulnerability and leakage, capacity,
    /// g-vulnerability, the adversary's expected error, conditional entropy, losses.
    Measure(suite::MeasureArgs),
    /// Bayesian remapping: each output mapped to the input that minimizes the posterior
    /// expected distance; written only once the result passes its audit at the same ε.
    Remap(suite::RemapArgs),
    /// Find a mechanism's parameter giving a target (ε,δ) tight epsilon, and write it.
    Calibrate(suite::CalibrateArgs),
    /// The papers' experiments, written as CSV and SVG.
    Experiment {
        #[command(subcommand)]
        kind: suite::ExperimentKind,
    },
    /// Lower bounds on the loss of every ε·d-private mechanism.
    Bound {
        #[command(subcommand)]
        kind: BoundKind,
    },
    /// Write an external matrix (numpy .npy, JSON, CSV) on a space as an mdp/1 file; it is
    /// audited and written only if it passes.
    Import(tools::ImportArgs),
    /// Repair a near-private external matrix (rounding-level violations) into the nearest
    /// certified one, by an exact uniform mix; refuses matrices that are not private up to
    /// rounding.
    Repair(tools::RepairArgs),
    /// A picture of a mechanism (SVG): on a map, the output distributions of chosen inputs;
    /// otherwise a heat map of the matrix.
    Plot(suite::PlotArgs),
    /// The earth mover's distance between two datasets of items (Imola et al. 2024,
    /// Definition 2.4): exact for rational distances, an enclosure otherwise.
    Emd(user::EmdArgs),
    /// User-level privacy accountants (shuffling, Theorem 4.4; the reduction, Theorem 5.3),
    /// with directed rounding.
    Account {
        #[command(subcommand)]
        kind: user::AccountKind,
    },
    /// User-level releases (d_EM privacy): users as JSON lines, one list of items each.
    Release {
        #[command(subcommand)]
        kind: user::ReleaseKind,
    },
}

#[derive(Subcommand)]
pub(crate) enum EstimateKind {
    /// Madlib (Feyisetan et al.): Laplace-type noise on the embedding, nearest point.
    Madlib {
        #[command(flatten)]
        base: SpaceEps,
        /// Draws per input.
        #[arg(long, default_value = "1000")]
        samples: usize,
        /// Seed of the draws (an estimate for experiments, not a privacy path).
        #[arg(long, default_value = "1")]
        seed: u64,
        /// Confidence of the loss intervals (Bonferroni over the inputs).
        #[arg(long, default_value = "0.95")]
        confidence: f64,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
    },
}

#[derive(Subcommand)]
pub(crate) enum BoundKind {
    /// The best packing bound (Imola et al. Theorem 3, eq. 7) over the k-center candidate
    /// packings, for each ε: one JSON line per ε on standard output, each verified exactly.
    Packing {
        /// Space: `builtin:NAME`, a JSON metric object, or an mdp/1 file.
        #[arg(long, required = true)]
        space: String,
        /// Privacy levels ε > 0 (repeat or comma-separate).
        #[arg(long, value_delimiter = ',', required = true)]
        epsilon: Vec<String>,
    },
}

#[derive(Subcommand)]
pub(crate) enum LpCmd {
    /// Write a mechanism's full LP (every privacy row) as free MPS, for any solver.
    Export {
        #[command(subcommand)]
        problem: LpProblem,
    },
}

#[derive(Subcommand)]
pub(crate) enum LpProblem {
    /// OPTMech's LP.
    Optimal {
        #[command(flatten)]
        base: SpaceEps,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// PMO's LP.
    Pmo {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        pmo: PmoArgs,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// SpannerMech's LP (rows on the greedy (2k−1)-spanner's edges, at ε/(2k−1)).
    Spanner {
        #[command(flatten)]
        base: SpaceEps,
        /// Spanner parameter k ≥ 1 (stretch 2k−1).
        #[arg(long, default_value = "2")]
        k: u64,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// ConstOPTMech's reduced LP (Imola et al. eqs. 18–26) at ε/2 for one λ, as
    /// `mdp build constopt` solves it (variables x_j, rows r_i).
    Constopt {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        repl: ReplacementArgs,
        /// λ > 0 of the reduced LP.
        #[arg(long, default_value = "0.1")]
        lambda: f64,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
    },
}

/// ConstOPTMech's replacement function I (Imola et al. §3.2).
#[derive(clap::Args)]
pub(crate) struct ReplacementArgs {
    /// r of I_NN,r: entries M_uv with v among u's r nearest neighbours are free.
    #[arg(long, default_value = "10")]
    pub(crate) r: usize,
    /// JSON array of n arrays: I(v) for each v (instead of I_NN,r).
    #[arg(long)]
    pub(crate) replacement: Option<String>,
}

/// The float LP solver of the LP mechanisms (spec/lp.md §4).
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum SolverArg {
    /// Clarabel's interior point method (primal and dual in one solve).
    Ipm,
    /// microlp's simplex with warm-started lazy rows (vertex solutions).
    Simplex,
    /// The structured interior point (K dense n×n blocks + a 2n Schur complement, every
    /// row present) finds the working set, then solves the lazy rounds' working sets
    /// (spec/lp.md §4.3); past 5·10⁷ rows (OPTMech, n > 368) the same on the LP over a
    /// growing set of outputs, the others priced (§4.7).
    Block,
    /// block for OPTMech and PMO when it fits --max-memory (PMO: its every-row iterate),
    /// else ipm; ipm for the other LPs.
    Auto,
}

impl From<SolverArg> for mdp::lp::Solver {
    fn from(s: SolverArg) -> Self {
        match s {
            SolverArg::Ipm => mdp::lp::Solver::Ipm,
            SolverArg::Simplex => mdp::lp::Solver::Simplex,
            SolverArg::Block => mdp::lp::Solver::Block,
            SolverArg::Auto => mdp::lp::Solver::Auto,
        }
    }
}

#[derive(clap::Args, Clone)]
pub(crate) struct SpaceEps {
    /// Space: `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric object, or an
    /// mdp/1 file.
    #[arg(long, required = true)]
    pub(crate) space: String,
    /// Privacy level ε > 0.
    #[arg(long)]
    pub(crate) epsilon: String,
    /// Refuse a build whose estimated memory exceeds this, before the work (LP builds, and
    /// the dense exponential and TEM matrices); bytes, or with a K, M, G suffix: 8G.
    #[arg(long, default_value = "8G", value_parser = memory_value)]
    pub(crate) max_memory: u64,
    /// Refuse a space whose n×n pairwise table exceeds this many entries (the default
    /// admits n = 4 000; the LP's own memory is still bounded by --max-memory).
    #[arg(long, default_value_t = Limits::default().max_entries)]
    pub(crate) max_entries: u64,
}

impl SpaceEps {
    /// The input limits these flags set (the others at their defaults).
    pub(crate) fn limits(&self) -> Limits {
        Limits {
            max_entries: self.max_entries,
            ..Limits::default()
        }
    }
}

/// A memory size: bytes, or a number with a K, M or G suffix (powers of 1024).
pub(crate) fn memory_value(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (
            &t[..i],
            match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("{s:?}: unknown unit (use K, M or G)")),
            },
        ),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|x| x.checked_mul(mult))
        .ok_or_else(|| format!("{s:?} is not a memory size"))
}

#[derive(clap::Args, Clone)]
pub(crate) struct PmoArgs {
    /// Privacy only for pairs with d ≤ η (Qiu's Definition 2.1); default all pairs.
    #[arg(long)]
    pub(crate) within: Option<String>,
    /// JSON array of n prior weights ≥ 0 (default uniform).
    #[arg(long)]
    pub(crate) prior: Option<String>,
    /// JSON n×K cost matrix (default: the distance to the output).
    #[arg(long)]
    pub(crate) cost: Option<String>,
    /// The outputs: a JSON array of input indices, or spread:K (K inputs spread over the
    /// space by the farthest-first traversal, stated in the file's meta.outputs); default:
    /// all inputs.
    #[arg(long)]
    pub(crate) outputs: Option<String>,
}

#[derive(Subcommand)]
pub(crate) enum Mechanism {
    /// The exponential mechanism Pr[w|u] ∝ Y_w·exp(−ε·d(u,w)/2) (Imola et al. §3.1).
    Exponential {
        #[command(flatten)]
        base: SpaceEps,
        /// JSON array of n positive weights Y (the weighted exponential mechanism).
        #[arg(long)]
        weights: Option<String>,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// Write a large-mechanism container: the header to --output, the float64 matrix
        /// beside it as .npy, proven by the structured audit (spec/mechanism-format.md,
        /// revision 3). Chosen automatically past --max-entries n² entries.
        #[arg(long)]
        container: bool,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// OPTMech: the least worst-case loss among ε·d-private mechanisms (Imola et al. §2),
    /// certified by an exactly checked LP dual.
    Optimal {
        #[command(flatten)]
        base: SpaceEps,
        /// The outputs: a JSON array of input indices, or spread:K (K inputs spread over
        /// the space by the farthest-first traversal, stated in the file's meta.outputs);
        /// default: all inputs.
        #[arg(long, value_name = "IDX.json|spread:K")]
        outputs: Option<String>,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
        /// Float LP solver.
        #[arg(long, value_enum, default_value = "auto")]
        solver: SolverArg,
    },
    /// PMO: the least expected loss under a prior, privacy for pairs within η (Qiu §2.2).
    Pmo {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        pmo: PmoArgs,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
        /// Float LP solver (default `auto`: the structured interior point when its
        /// every-row iterate fits --max-memory, else Clarabel's lazy rows).
        #[arg(long, value_enum, default_value = "auto")]
        solver: SolverArg,
        /// Stop once the certified relative gap (UB − LB)/UB is expected within REL,
        /// 0 < REL < 1 (the structured interior point; Clarabel solves to its own
        /// tolerances). Default: as far as the solver goes (target 1e-7).
        #[arg(long)]
        gap: Option<f64>,
        /// Write a large-mechanism container with its lp_dual certificate (a graph metric
        /// read as its edges, no n×n table; the localized LP; spec/lp.md §4.9). Chosen by
        /// itself on a graph with more than --max-entries n² pairs.
        #[arg(long)]
        container: bool,
    },
    /// PMO by Benders decomposition (Qiu 2024 §3, corrected), for large spaces: certified
    /// like pmo, written with a benders certificate (proven lower and upper bound); one
    /// progress line per iteration. Needs --within.
    Benders {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        pmo: PmoArgs,
        /// Number of subsets C, 1 ≤ C ≤ n (default: n/60, at least 1).
        #[arg(long)]
        partitions: Option<usize>,
        /// How records are grouped: k-means on coordinates (km-rec), on distance vectors
        /// (km-dv) or on η-adjacency rows (km-adj), or balanced spectral clustering of the
        /// η-graph (bsc) (Qiu §3.4).
        #[arg(long, default_value = "km-rec", value_parser = ["km-rec", "km-dv", "km-adj", "bsc"])]
        partitioning: String,
        /// Master records: a vertex cover of the cross-subset edges (cover) or both ends of
        /// every one (boundary, Qiu's Definition 3.2).
        #[arg(long, default_value = "cover", value_parser = ["cover", "boundary"])]
        master: String,
        /// Stop at relative gap (UB − LB)/UB ≤ REL.
        #[arg(long, default_value = "1e-6")]
        gap: f64,
        /// At most N master solves.
        #[arg(long, default_value = "500")]
        max_iter: usize,
        /// Seed of the partition's k-means.
        #[arg(long, default_value = "0")]
        seed: u64,
        /// In-out stabilization's first β in [0, 1): subproblems are solved between the
        /// master's point and the best incumbent (0: plain Kelley cuts).
        #[arg(long, default_value = "0.5")]
        stabilize: f64,
        /// Do not add Proposition 3.2's chained inequalities to the master (they are added
        /// lazily by default: only the rows the master's point breaks).
        #[arg(long)]
        no_chains: bool,
        /// Copy the layer (free records with a row to a master record) into the master
        /// (partial decomposition: the master holds the constraints the cuts would otherwise
        /// find one at a time; small instances that stalled converge in a few iterations,
        /// but each master solve costs more: Rome500 took 4× longer, spec/benders.md §5).
        #[arg(long)]
        copies: bool,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// ConstOPTMech (Imola et al. §3.2, Algorithm 1): the reduced LP at ε/2 with the
    /// replacement function I_NN,r (or --replacement), normalized; a λ sweep keeps the
    /// least loss. Written with the best k-center packing lower bound as its certificate.
    Constopt {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        repl: ReplacementArgs,
        /// Candidate λ > 0 (repeat or comma-separate); default the paper's {0.001, 0.1, 1}.
        #[arg(long, value_delimiter = ',', default_values = ["0.001", "0.1", "1"])]
        lambda: Vec<f64>,
        /// Float LP solver (default `auto`: the block-angular interior point, Clarabel if
        /// it fails; `block`: that method alone; `ipm`: Clarabel; `simplex`: microlp).
        #[arg(long, value_enum, default_value = "auto")]
        solver: SolverArg,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// The clustered k-RR randomizer of FreqEstLocal (Imola et al. 2024, Algorithm 4) on C
    /// clusters of s items (distance r inside a cluster, 1 across), written as a container
    /// (the clustered metric as an exact Chebyshev space, items `c<c>-<i>`) proven by the
    /// structured audit at ε = α₀.
    ClusteredRr {
        #[command(flatten)]
        clustered: crate::user::ClusteredArgs,
        /// α₀ per unit of the clustered metric.
        #[arg(long)]
        epsilon: String,
        /// The container's header (its .npy is written beside it).
        #[arg(short, long)]
        output: String,
        /// Refuse before building when the matrix and its audit would need more (bytes,
        /// or with a K, M, G suffix).
        #[arg(long, default_value = "8G", value_parser = memory_value)]
        max_memory: u64,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// TEM (Carvalho et al., Algorithm 2): the exponential mechanism on min(d, γ); γ from
    /// Theorem 4.2 for --beta, or given with --gamma.
    Tem {
        #[command(flatten)]
        base: SpaceEps,
        /// β of Theorem 4.2: output within γ with probability ≥ 1 − β.
        #[arg(long, default_value = "0.001")]
        beta: f64,
        /// The truncation threshold γ ≥ 0 (instead of --beta).
        #[arg(long)]
        gamma: Option<String>,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// Write a large-mechanism container (as `build exponential --container`; chosen
        /// automatically past --max-entries n² entries).
        #[arg(long)]
        container: bool,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// The truncated geometric mechanism (Ghosh et al. 2012) on equally spaced points of a
    /// line, e.g. `--space line:20,0.5` (20 points 0.5 apart); ε per unit.
    Geometric {
        #[command(flatten)]
        base: SpaceEps,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// The planar Laplace on a grid (libqif's planar_laplace_grid): inputs the cell centres
    /// of `--space grid:W,H,STEP`, output the cell the release falls in (outside the grid:
    /// the nearest cell), each entry a rigorous enclosure of its integral; ε per unit.
    PlanarLaplace {
        #[command(flatten)]
        base: SpaceEps,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// The planar geometric on a grid (libqif's planar_geometric_grid): inputs the cell
    /// centres of `--space grid:W,H,STEP`, output a point of the infinite lattice with
    /// probability ∝ e^{−ε·d} (outside the grid: the nearest cell), each entry an enclosed
    /// lattice sum; ε per unit, ε·STEP ≥ 0.05.
    PlanarGeometric {
        #[command(flatten)]
        base: SpaceEps,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// k-ary randomized response at ε·d_min on any space (`--space categories:K`: plain
    /// k-RR, ε-LDP).
    RandomizedResponse {
        #[command(flatten)]
        base: SpaceEps,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
    },
    /// SpannerMech: OPTMech's rows on a greedy (2k−1)-spanner only, at ε/(2k−1)
    /// (Imola et al. Appendix A, Theorem 4).
    Spanner {
        #[command(flatten)]
        base: SpaceEps,
        /// Spanner parameter k ≥ 1 (stretch 2k−1).
        #[arg(long, default_value = "2")]
        k: u64,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
        /// Float LP solver (`ipm`: Clarabel's interior point; `simplex`: microlp).
        #[arg(long, value_enum, default_value = "ipm")]
        solver: SolverArg,
    },
}

/// The metric a gate that samples accepts, besides `--space` (`mdp privatize --mechanism`,
/// `mdp release item-wise`): [`mdp::privatize::sampling_pin`].
#[derive(clap::Args)]
pub(crate) struct PinArgs {
    /// Refuse the mechanism unless its metric has this digest (the `metric_digest` that
    /// mdp-audit prints; 64 hex digits). Instead of --space.
    #[arg(long, value_name = "HEX", conflicts_with = "space")]
    pub require_metric_digest: Option<String>,
    /// Take the file's own metric as the pipeline's, unchecked (without --space or
    /// --require-metric-digest the mechanism is refused: a file's metric is a claim).
    #[arg(long, conflicts_with_all = ["space", "require_metric_digest"])]
    pub trust_file_metric: bool,
}

impl PinArgs {
    /// The pin for the pipeline's `--space`, if given.
    pub(crate) fn pin(&self, space: Option<&str>) -> Result<mdp::pin::MetricPin, String> {
        use mdp::privatize::PinError;
        mdp::privatize::sampling_pin(
            space,
            crate::label_column(),
            self.require_metric_digest.as_deref(),
            self.trust_file_metric,
        )
        .map_err(|e| match e {
            PinError::Unpinned => format!("--space: {e}"),
            PinError::Digest(e) => format!("--{e}"),
            PinError::Space(e) => e.to_string(),
        })
    }
}
