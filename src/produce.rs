//! Producers: each mechanism family of the papers built, packaged as an `mdp/1` document
//! and certified by its own audit ([`Certified`]) through one call, [`produce`], with one
//! validated settings type per family ([`Family`]). The command line only parses flags
//! into these types; a library user gets the same certified mechanisms.
//!
//! | family | paper | certificate written |
//! |---|---|---|
//! | [`Family::Exponential`] | Imola et al. §3.1 (weighted: Proposition 1) | none (privacy is proven) |
//! | [`Family::Optimal`] | Imola et al. §2 (OPTMech) | `lp_dual` lower bound |
//! | [`Family::Pmo`] | Qiu 2024 §2.2 (PMO) | `lp_dual` (expected loss) |
//! | [`Family::Spanner`] | Imola et al. App. A, Theorem 4 | none (a spanner LP bound is no bound on OPTMech) |
//! | [`Family::Constopt`] | Imola et al. §3.2, Algorithm 1 | k-center `packing` bound (Theorem 3, eq. 7) |
//! | [`Family::Tem`] | Carvalho et al. Algorithm 2 | k-center `packing` bound |
//! | [`Family::Geometric`] | Ghosh et al. 2012 (truncated geometric; `spec/geo.md` §2) | none (privacy is proven) |
//! | [`Family::RandomizedResponse`] | Warner 1965, k-RR (`spec/geo.md` §2) | none (privacy is proven) |
//! | [`Family::PlanarGeometricGrid`] | Chatzikokolakis et al. 2015 on a grid (libqif `planar_geometric_grid`; `spec/geo.md` §2.4) | none (privacy is proven) |
//! | [`Family::PlanarLaplaceGrid`] | Andrés et al. 2013 on a grid (libqif `planar_laplace_grid`; `spec/geo.md` §2.3) | none (privacy is proven) |
//!
//! ```
//! use mdp::exact::parse_rational;
//! use mdp::produce::{produce, Family, Request};
//! use mdp::progress::Silent;
//!
//! let (space, _labels) = mdp::builtin::space("cities40").unwrap();
//! let req = Request::new(&space, "builtin:cities40", parse_rational("0.5").unwrap());
//! let out = produce(&req, &Family::Exponential { weights: None }, &Silent).unwrap();
//! assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
//! ```

use crate::bounds::PackingCandidates;
use crate::certified::{Certified, CertifyError};
use crate::exact::{f64_up, parse_rational, Q};
use crate::io::{self, Limits};
use crate::lp::{BuildError, Built, LpKind, Solver};
use crate::mechanism::Matrix;
use crate::mechanisms::constopt::{self, Replacement};
use crate::mechanisms::optimal::{self, PmoParams};
use crate::mechanisms::{exponential, spanner, tem};
use crate::metric::Space;
use crate::progress::Progress;
use serde_json::{json, Value};
use thiserror::Error;

/// Precision limit (bits) of exact decisions in the builders.
pub const MAX_PREC: u64 = 4096;

/// Default memory budget of an LP build (8 GiB).
pub const DEFAULT_MAX_MEMORY: u64 = 8 << 30;

/// Why a mechanism was not produced.
#[derive(Debug, Error)]
pub enum ProduceError {
    /// A parameter is out of its domain; `field` is its name (`epsilon`, `k`, `prior[3]`).
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// The float solver, the exact repair or the certificate failed ([`BuildError`]
    /// other than `Invalid`).
    #[error(transparent)]
    Build(BuildError),
    /// The privacy LP's estimated memory is over the budget: a bad `max-memory`, or
    /// `solver`.
    #[error("max-memory: {}", .0.message("the block solver", "the budget"))]
    LpMemory(LpMemory),
    /// The built mechanism could not be certified (nothing is returned to write).
    #[error(transparent)]
    Certify(#[from] CertifyError),
}

/// An LP over `n` inputs and `k` outputs whose estimated memory `need` with `solver`
/// ([`crate::lp::memory_need`], bytes) is over the `budget` (bytes).
#[derive(Debug)]
pub struct LpMemory {
    pub n: u64,
    pub k: u64,
    pub need: u64,
    pub budget: u64,
    pub solver: Solver,
}

impl LpMemory {
    /// The explanation, naming the block solver and the budget as the caller says them
    /// (the library: "the block solver", "the budget"; the command line: its flags).
    pub fn message(&self, block: &str, budget_name: &str) -> String {
        let with = if self.solver == Solver::Block {
            format!(" with {block}")
        } else {
            String::new()
        };
        format!(
            "the privacy LP over {} inputs × {} outputs needs about {}{with} (estimate), over the budget of {}; use fewer points, ConstOPTMech (mdp build constopt) or raise {budget_name}",
            self.n,
            self.k,
            mib(self.need),
            mib(self.budget)
        )
    }
}

fn invalid(field: &str, message: impl Into<String>) -> ProduceError {
    ProduceError::Invalid {
        field: field.to_string(),
        message: message.into(),
    }
}

impl From<BuildError> for ProduceError {
    fn from(e: BuildError) -> Self {
        match e {
            BuildError::Invalid { field, message } => ProduceError::Invalid { field, message },
            e => ProduceError::Build(e),
        }
    }
}

/// What every family needs: the space, its name for `meta.space`, ε and the LP budget.
pub struct Request<'a> {
    pub space: &'a Space,
    /// How the space was named (`builtin:rome100`, a path), written to `meta.space`.
    pub space_name: &'a str,
    pub eps: Q,
    /// Refuse an LP whose estimated memory ([`crate::lp::model::memory_estimate`]), or a
    /// dense exact build whose estimate ([`DENSE_BYTES_PER_ENTRY`]) exceeds this many bytes.
    pub max_memory: u64,
    /// The inputs' labels, written to the file's `metric.labels` (witnesses and releases
    /// then name inputs by them).
    pub labels: Option<&'a [String]>,
}

impl<'a> Request<'a> {
    /// A request with the default memory budget.
    pub fn new(space: &'a Space, space_name: &'a str, eps: Q) -> Self {
        Request {
            space,
            space_name,
            eps,
            max_memory: DEFAULT_MAX_MEMORY,
            labels: None,
        }
    }
}

/// PMO's parameters (Qiu 2024 §2.2), validated against the space by [`produce`].
#[derive(Clone, Debug, Default)]
pub struct Pmo {
    /// Privacy only for pairs with d ≤ η (Qiu's Definition 2.1); all pairs if `None`.
    pub within: Option<Q>,
    /// n prior weights ≥ 0, not all 0 (uniform if `None`).
    pub prior: Option<Vec<Q>>,
    /// n×K costs ≥ 0, row-major (the distance to the output if `None`).
    pub cost: Option<Vec<Q>>,
    /// The inputs that are the outputs (all inputs if `None`).
    pub outputs: Option<Vec<usize>>,
}

/// ConstOPTMech's replacement function I (Imola et al. §3.2).
#[derive(Clone, Debug)]
pub enum ReplacementSpec {
    /// I_NN,r: each input's r nearest inputs, 1 ≤ r < n.
    NearestNeighbours { r: usize },
    /// I(v) given per input.
    Sets(Vec<Vec<usize>>),
}

/// TEM's truncation threshold (Carvalho et al. Theorem 4.2).
#[derive(Clone, Debug)]
pub enum Truncation {
    /// γ ≥ 0 given.
    Gamma(Q),
    /// γ such that the output is within γ with probability ≥ 1 − β, β ∈ (0, 1).
    Beta(f64),
}

/// The mechanism families and their settings: the one registry `build` and `lp export`
/// dispatch on.
#[derive(Clone, Debug)]
pub enum Family {
    /// Pr[w|u] ∝ Y_w·exp(−ε·d(u,w)/2); `weights` = Y > 0 (weighted exponential).
    ///
    /// ```
    /// # use mdp::exact::{parse_rational, Q};
    /// # use mdp::metric::{MetricKind, Space};
    /// # use mdp::produce::*;
    /// # use mdp::progress::Silent;
    /// # use mdp::lp::Solver;
    /// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
    /// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    /// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
    /// let family = Family::Exponential { weights: Some(vec![Q::from(1u32); 6]) };
    /// let out = produce(&req, &family, &Silent).unwrap();
    /// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
    /// ```
    Exponential { weights: Option<Vec<Q>> },
    /// OPTMech: the least worst-case loss among ε·d-private mechanisms.
    ///
    /// ```
    /// # use mdp::exact::{parse_rational, Q};
    /// # use mdp::metric::{MetricKind, Space};
    /// # use mdp::produce::*;
    /// # use mdp::progress::Silent;
    /// # use mdp::lp::Solver;
    /// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
    /// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    /// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
    /// let family = Family::Optimal { solver: Solver::Ipm, outputs: None };
    /// let out = produce(&req, &family, &Silent).unwrap();
    /// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
    /// // The lp_dual certificate proves no private mechanism has a smaller worst-case loss.
    /// assert!(out.certified.file().certificate.lp_dual.is_some());
    /// ```
    /// `outputs`: the inputs that are the outputs (`--outputs`; all inputs if `None`).
    Optimal {
        solver: Solver,
        outputs: Option<Vec<usize>>,
    },
    /// PMO: the least expected loss under a prior, privacy within η.
    ///
    /// ```
    /// # use mdp::exact::{parse_rational, Q};
    /// # use mdp::metric::{MetricKind, Space};
    /// # use mdp::produce::*;
    /// # use mdp::progress::Silent;
    /// # use mdp::lp::Solver;
    /// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
    /// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    /// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
    /// let pmo = Pmo { within: Some(Q::from(10u32)), prior: Some(vec![Q::from(1u32), Q::from(3u32), Q::from(1u32), Q::from(1u32), Q::from(2u32), Q::from(1u32)]), ..Pmo::default() };
    /// let family = Family::Pmo { pmo, solver: Solver::Ipm, gap: None };
    /// let out = produce(&req, &family, &Silent).unwrap();
    /// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
    /// assert!(out.certified.file().within.is_some());
    /// ```
    /// `gap`: the certified relative gap to stop at (`--gap`; the structured interior
    /// point's own target if `None`).
    Pmo {
        pmo: Pmo,
        solver: Solver,
        gap: Option<f64>,
    },
    /// PMO solved by Benders decomposition (Qiu 2024 §3), for spaces too large for the
    /// whole LP; needs `pmo.within`. Certified like PMO (exact repair, `lp_dual` of the
    /// whole LP) and written with a `benders` certificate (lower and upper bound).
    ///
    /// ```
    /// # use mdp::exact::{parse_rational, Q};
    /// # use mdp::metric::{MetricKind, Space};
    /// # use mdp::produce::*;
    /// # use mdp::progress::Silent;
    /// # let pts = (0..12).map(|i| vec![Q::from(i), Q::from(i % 3)]).collect();
    /// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    /// let req = Request::new(&space, "points", parse_rational("1").unwrap());
    /// let pmo = Pmo { within: Some(Q::from(3u32)), ..Pmo::default() };
    /// let options = mdp::benders::Options { partitions: Some(3), ..Default::default() };
    /// let out = produce(&req, &Family::Benders { pmo, options }, &Silent).unwrap();
    /// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
    /// ```
    Benders {
        pmo: Pmo,
        options: crate::benders::Options,
    },
    /// SpannerMech: OPTMech's rows on a greedy (2k−1)-spanner at ε/(2k−1), 1 ≤ k ≤ n.
    ///
    /// ```
    /// # use mdp::exact::{parse_rational, Q};
    /// # use mdp::metric::{MetricKind, Space};
    /// # use mdp::produce::*;
    /// # use mdp::progress::Silent;
    /// # use mdp::lp::Solver;
    /// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
    /// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    /// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
    /// let family = Family::Spanner { k: 2, solver: Solver::Ipm };
    /// let out = produce(&req, &family, &Silent).unwrap();
    /// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
    /// ```
    Spanner { k: u64, solver: Solver },
    /// ConstOPTMech: the reduced LP at ε/2 with a replacement function; the λ sweep keeps
    /// the least loss.
    ///
    /// ```
    /// # use mdp::exact::{parse_rational, Q};
    /// # use mdp::metric::{MetricKind, Space};
    /// # use mdp::produce::*;
    /// # use mdp::progress::Silent;
    /// # use mdp::lp::Solver;
    /// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
    /// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    /// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
    /// let family = Family::Constopt {
    ///     replacement: ReplacementSpec::NearestNeighbours { r: 2 },
    ///     lambdas: vec![0.1, 1.0],
    ///     solver: Solver::Auto,
    /// };
    /// let out = produce(&req, &family, &Silent).unwrap();
    /// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
    /// ```
    Constopt {
        replacement: ReplacementSpec,
        lambdas: Vec<f64>,
        /// `Auto`: the block-angular interior point, Clarabel if it fails (spec/lp.md §4.5).
        solver: Solver,
    },
    /// TEM: the exponential mechanism on min(d, γ).
    ///
    /// ```
    /// # use mdp::exact::{parse_rational, Q};
    /// # use mdp::metric::{MetricKind, Space};
    /// # use mdp::produce::*;
    /// # use mdp::progress::Silent;
    /// # use mdp::lp::Solver;
    /// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
    /// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    /// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
    /// let family = Family::Tem { truncation: Truncation::Beta(0.01) };
    /// let out = produce(&req, &family, &Silent).unwrap();
    /// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
    /// ```
    Tem { truncation: Truncation },
    /// The truncated geometric mechanism on equally spaced points of a line (`line:N,STEP`):
    /// [`crate::mechanisms::geometric`].
    Geometric,
    /// k-ary randomized response at ε·d_min on any space (`categories:K`: plain k-RR):
    /// [`crate::mechanisms::randomized_response`].
    RandomizedResponse,
    /// The planar Laplace on the cell centres of a grid (`grid:W,H,STEP`), each entry an
    /// enclosed integral: [`crate::mechanisms::planar_laplace_grid`].
    PlanarLaplaceGrid,
    /// The planar geometric on the cell centres of a grid, each entry an enclosed lattice
    /// sum: [`crate::mechanisms::planar_geometric_grid`].
    PlanarGeometricGrid,
}

impl Family {
    /// The name the papers use (the experiments' tables and figures).
    pub fn paper_name(&self) -> String {
        match self {
            Family::Exponential { weights: None } => "EXPMECH".into(),
            Family::Exponential { weights: Some(_) } => "weighted EXPMECH".into(),
            Family::Optimal { .. } => "OPTMech".into(),
            Family::Pmo { .. } => "PMO".into(),
            Family::Benders { .. } => "PMO (Benders)".into(),
            Family::Spanner { k, .. } => format!("SpannerMech(k={k})"),
            Family::Constopt {
                replacement: ReplacementSpec::NearestNeighbours { r },
                lambdas,
                ..
            } if lambdas.len() == 1 => format!("ConstOPTMech(r={r},λ={})", lambdas[0]),
            Family::Constopt {
                replacement: ReplacementSpec::NearestNeighbours { r },
                ..
            } => format!("ConstOPTMech(r={r})"),
            Family::Constopt { .. } => "ConstOPTMech".into(),
            Family::Tem {
                truncation: Truncation::Beta(b),
            } => format!("TEM(β={b})"),
            Family::Tem { .. } => "TEM".into(),
            Family::Geometric => "Geometric".into(),
            Family::RandomizedResponse => "k-RR".into(),
            Family::PlanarLaplaceGrid => "planar Laplace grid".into(),
            Family::PlanarGeometricGrid => "planar geometric grid".into(),
        }
    }

    /// The name written to `meta.mechanism`.
    pub fn name(&self) -> &'static str {
        match self {
            Family::Exponential { weights: None } => "exponential",
            Family::Exponential { weights: Some(_) } => "weighted_exponential",
            Family::Optimal { .. } => "optimal",
            Family::Pmo { .. } => "pmo",
            Family::Benders { .. } => "benders",
            Family::Spanner { .. } => "spanner",
            Family::Constopt { .. } => "constopt",
            Family::Tem { .. } => "tem",
            Family::Geometric => "geometric",
            Family::RandomizedResponse => "randomized_response",
            Family::PlanarLaplaceGrid => "planar_laplace_grid",
            Family::PlanarGeometricGrid => "planar_geometric_grid",
        }
    }
}

/// A certified mechanism and the build's summary (the CLI's `stats:` line).
#[derive(Debug)]
pub struct Produced {
    pub certified: Certified,
    /// mechanism, n, verdict, losses, certified lower bound, and the family's own build
    /// data (`lp`, `constopt`, `tem`).
    pub summary: Value,
}

/// ε in the supported range [10^-9, 10^9] (beyond it e^{±ε·d} leaves every meaningful
/// scale, and exact mechanisms would need unbounded numbers).
pub fn epsilon(s: &str) -> Result<Q, ProduceError> {
    let q = parse_rational(s).map_err(|e| invalid("epsilon", e.to_string()))?;
    check_epsilon(&q, s)?;
    Ok(q)
}

/// [`epsilon`]'s range check; `shown` is how the value is named in the message (the
/// user's literal, not a 300-digit expansion of `1e300`).
fn check_epsilon(q: &Q, shown: &str) -> Result<(), ProduceError> {
    if *q <= 0u32 {
        return Err(invalid("epsilon", "must be > 0"));
    }
    let (lo, hi) = (
        Q::from_unsigneds(1u32, 1_000_000_000u32),
        Q::from(1_000_000_000u32),
    );
    if *q < lo || *q > hi {
        return Err(invalid(
            "epsilon",
            format!("{shown} is outside the supported range [1e-9, 1e9]"),
        ));
    }
    Ok(())
}

/// A space LP mechanisms and samplers accept: a metric.
pub fn require_metric(space: Space) -> Result<Space, ProduceError> {
    if let Some((u, v, w)) = space.triangle_violation() {
        return Err(invalid(
            "space",
            format!("not a metric: d({u},{w}) > d({u},{v}) + d({v},{w})"),
        ));
    }
    Ok(space)
}

/// Refuse an LP over `n` inputs and `k` outputs whose estimated memory with `solver`
/// exceeds the budget: the lazy-row working set ([`crate::lp::model::memory_estimate`]),
/// plus, for `--solver block`, its structured phase's every-row iterate (counted for all
/// n(n−1)·k rows, an upper estimate when η prunes pairs).
pub fn check_lp_memory(
    n: usize,
    k: usize,
    solver: Solver,
    max_memory: u64,
) -> Result<(), ProduceError> {
    let rows = crate::lp::model::rows_upper(n as u64, k as u64);
    check_lp_memory_rows(n, k, rows, solver, max_memory)
}

/// `bytes` in whole MiB, for the memory budget's messages.
fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// [`check_lp_memory`] with the LP's privacy rows counted (`rows`, e.g. the pairs within η
/// times k) instead of bounded by n(n−1)·k.
pub fn check_lp_memory_rows(
    n: usize,
    k: usize,
    rows: u64,
    solver: Solver,
    max_memory: u64,
) -> Result<(), ProduceError> {
    let (n, k) = (n as u64, k as u64);
    let need = crate::lp::memory_need(n, k, rows, solver);
    if need > max_memory {
        return Err(ProduceError::LpMemory(LpMemory {
            n,
            k,
            need,
            budget: max_memory,
            solver,
        }));
    }
    Ok(())
}

/// Bytes of memory per entry of a dense exact build (exponential, TEM: the exact matrix,
/// its certification and the written text), measured on Rome road nodes (session 20):
/// 357 B at n = 2 000 (1.43 GB peak), 344 B at n = 3 000 (3.1 GB); rounded up.
pub const DENSE_BYTES_PER_ENTRY: u64 = 400;

/// Refuse a dense n × n exact build whose estimated memory ([`DENSE_BYTES_PER_ENTRY`] per
/// entry) exceeds `max_memory`, before any work, naming the flag that raises the budget;
/// then note the estimates (memory, and the file's size from `file_bytes`, computed only
/// after the check) when the build is large enough to take a while.
fn check_dense_memory(
    name: &str,
    n: usize,
    file_bytes: impl FnOnce() -> Option<u64>,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<(), ProduceError> {
    let entries = (n as u64).saturating_mul(n as u64);
    let need = entries.saturating_mul(DENSE_BYTES_PER_ENTRY);
    if need > max_memory {
        return Err(invalid(
            "max-memory",
            format!(
                "{name} over {n} points needs about {} ({DENSE_BYTES_PER_ENTRY} B for each of the n² = {entries} entries, estimate), over the budget of {}; raise --max-memory or use fewer points",
                mib(need),
                mib(max_memory)
            ),
        ));
    }
    if need >= 1 << 28 {
        let file = file_bytes().map_or(String::new(), |b| format!(", a file of about {}", mib(b)));
        progress.note(&format!(
            "{name}: n = {n}: about {} of memory{file} (estimates)",
            mib(need)
        ));
    }
    Ok(())
}

/// Refuse a matrix whose exact entries would exceed the auditor's default number budget
/// (`--max-bits`) or whose largest entry would be longer than the format's longest number
/// (`exact::number::MAX_DIGITS` digits): a file the auditor refuses by default is never built.
fn check_size_budget(bits: exponential::EntryBits) -> Result<(), ProduceError> {
    let max = Limits::default().max_bits;
    if bits.total > max as f64 {
        return Err(invalid(
            "epsilon",
            format!("the exact entries e^(-ε·d/2) would need about {:.2e} bits, over the auditor's default budget of {max} bits; use a smaller ε or fewer points", bits.total),
        ));
    }
    // An entry p/2^k is written with about k·log10(2) digits.
    let digits = bits.largest * std::f64::consts::LOG10_2;
    if digits > crate::exact::number::MAX_DIGITS as f64 {
        return Err(invalid(
            "epsilon",
            format!("an exact entry e^(-ε·d/2) would be written with about {digits:.2e} digits, beyond the format's longest number ({} digits); use a smaller ε", crate::exact::number::MAX_DIGITS),
        ));
    }
    Ok(())
}

/// SpannerMech's k: 1 ≤ k ≤ n (beyond n the stretch 2k − 1 exceeds any path's hops).
pub fn check_spanner_k(k: u64, n: usize) -> Result<u32, ProduceError> {
    if k < 1 || k > n.max(1) as u64 {
        return Err(invalid(
            "k",
            format!("must be in 1..={} (the number of inputs)", n.max(1)),
        ));
    }
    Ok(k as u32)
}

/// ConstOPTMech's replacement function, checked against the space.
pub fn replacement(space: &Space, spec: &ReplacementSpec) -> Result<Replacement, ProduceError> {
    let n = space.n();
    match spec {
        ReplacementSpec::Sets(sets) => Replacement::from_sets(n, sets.clone())
            .map_err(|e| invalid("replacement", e.to_string())),
        ReplacementSpec::NearestNeighbours { r } => {
            check_r(*r, n)?;
            Ok(Replacement::nearest_neighbours(space, *r))
        }
    }
}

/// I_NN,r's r: 1 ≤ r < n.
pub fn check_r(r: usize, n: usize) -> Result<(), ProduceError> {
    if r < 1 || r >= n {
        return Err(invalid(
            "r",
            format!("must be in 1..{} (n = {n})", n.saturating_sub(1)),
        ));
    }
    Ok(())
}

/// TEM's β of Theorem 4.2: in (0, 1).
pub fn check_beta(beta: f64) -> Result<(), ProduceError> {
    if !(beta > 0.0 && beta < 1.0) {
        return Err(invalid("beta", "must be in (0, 1)"));
    }
    Ok(())
}

/// TEM's γ for the settings.
pub fn tem_gamma(space: &Space, eps: &Q, t: &Truncation) -> Result<Q, ProduceError> {
    tem_gamma_for(space.n(), eps, t)
}

/// [`tem_gamma`] for n inputs.
pub fn tem_gamma_for(n: usize, eps: &Q, t: &Truncation) -> Result<Q, ProduceError> {
    match t {
        Truncation::Gamma(g) if *g < 0u32 => Err(invalid("gamma", "must be ≥ 0")),
        Truncation::Gamma(g) => Ok(g.clone()),
        Truncation::Beta(beta) => {
            check_beta(*beta)?;
            tem::gamma_for_beta(eps, n, *beta)
                .ok_or_else(|| invalid("beta", "γ = (2/ε)·ln((1−β)(n−1)/β) is not finite"))
        }
    }
}

impl Pmo {
    /// The LP's privacy rows over `k` outputs, for the memory estimate and the choice of
    /// `--solver auto`: the ordered pairs within η (by the float distance, widened by
    /// 10⁻⁹ relative so that the count is not below the exact one; all n(n−1) without η)
    /// times k.
    fn privacy_rows(&self, space: &Space, k: usize) -> u64 {
        use rayon::prelude::*;
        let n = space.n();
        let pairs = match self.within.as_ref().map(crate::exact::f64_up) {
            None => (n as u64).saturating_mul(n.saturating_sub(1) as u64),
            Some(eta) => (0..n)
                .into_par_iter()
                .map(|u: usize| {
                    (0..n)
                        .filter(|&v| v != u && space.approx(u, v) <= eta * (1.0 + 1e-9))
                        .count() as u64
                })
                .sum(),
        };
        pairs.saturating_mul(k as u64)
    }

    /// The prior as written to `loss.prior`: the given weights, or all ones.
    fn prior_or_ones(&self, n: usize) -> Vec<Q> {
        self.prior.clone().unwrap_or_else(|| vec![Q::from(1u32); n])
    }

    /// The file fields PMO's audit reads: `loss.prior` (all ones if none), `loss.cost`,
    /// `outputs`, `neighbors`.
    fn fields(&self, n: usize) -> Value {
        let prior = self.prior_or_ones(n);
        let mut fields =
            json!({"loss": {"prior": prior.iter().map(io::number_value).collect::<Vec<_>>()}});
        if let Some(c) = &self.cost {
            let k = c.len() / n;
            fields["loss"]["cost"] = (0..n)
                .map(|u| {
                    c[u * k..(u + 1) * k]
                        .iter()
                        .map(io::number_value)
                        .collect::<Vec<_>>()
                })
                .collect();
        }
        if let Some(o) = &self.outputs {
            fields["outputs"] = json!({"of_inputs": o});
        }
        if let Some(w) = &self.within {
            fields["neighbors"] = json!({"within": io::number_value(w)});
        }
        fields
    }

    /// An upper end of `matrix`'s expected loss, as the auditor encloses it from the
    /// fields [`Self::fields`] writes (one ulp above its enclosure's upper end).
    fn expected_loss_upper(&self, space: &Space, matrix: &Matrix) -> Option<f64> {
        let n = space.n();
        let prep =
            crate::privacy::Prepared::new(space, matrix, self.within.as_ref(), MAX_PREC).ok()?;
        let cost_matrix = self
            .cost
            .as_ref()
            .map(|c| Matrix::new(n, c.len() / n, c.clone()));
        let sites: Vec<usize> = self.outputs.clone().unwrap_or_else(|| (0..n).collect());
        let cost = match &cost_matrix {
            Some(m) => crate::loss::Cost::Matrix(m),
            None => crate::loss::Cost::Distance(&sites),
        };
        let prior = self.prior_or_ones(n);
        let l = crate::loss::losses(&prep, &cost, &Q::from_unsigneds(1u32, 2u32), Some(&prior));
        l.expected.map(|e| e.hi.next_up())
    }

    /// The parameters of [`optimal::pmo`] / [`optimal::pmo_lp`], which check them against
    /// the space (sizes, η > 0, costs ≥ 0, prior ≥ 0 and not all 0).
    pub fn params(&self) -> PmoParams<'_> {
        PmoParams {
            within: self.within.as_ref(),
            prior: self.prior.clone(),
            cost: self.cost.clone(),
            outputs: self.outputs.clone(),
        }
    }
}

/// The best verified k-center packing bound at `eps` for a square mechanism on `space`,
/// as a `packing` certificate and the bound's rigorous lower end.
fn packing_certificate(space: &Space, eps: &Q) -> Option<(Value, f64)> {
    let outputs: Vec<usize> = (0..space.n()).collect();
    let cands = PackingCandidates::new(space, &outputs);
    let best = cands.best(space, &outputs, f64_up(eps), MAX_PREC)?;
    Some((
        json!({"lower_bound": {
            "kind": "packing",
            "centers": best.packing.centers,
            "radius": io::number_value(&best.packing.radius),
        }}),
        best.bound.lo,
    ))
}

/// A built mechanism before packaging and certification ([`build`]).
#[derive(Debug)]
pub struct Assembled {
    pub matrix: Matrix,
    /// The file's `certificate` object.
    pub certificate: Option<Value>,
    /// The certified lower bound it carries (for the summary).
    pub lower_bound: Option<f64>,
    /// Joins the file's `meta` (and the summary under the same keys).
    pub meta: Value,
    /// Extra top-level fields (`loss`, `outputs`, `neighbors`).
    pub fields: Value,
    /// Size of the LP the family solved: (non-zeros, rows), if any.
    pub lp_size: Option<(usize, usize)>,
}

/// Non-zeros of a max-loss privacy LP on n inputs = outputs with `rows` privacy rows
/// M_uk − c·M_vk ≤ 0 (two each), n row sums (n each) and n loss rows (n − 1 costs and L).
fn privacy_lp_nonzeros(n: usize, rows: usize) -> usize {
    2 * rows + 2 * n * n
}

fn lp_assembled(b: Built, extra_meta: Value) -> Assembled {
    let n = b.matrix.rows;
    let lp_size = Some((privacy_lp_nonzeros(n, b.rows_generated), b.rows_generated));
    let mut meta = json!({"lp": {
        "objective": b.lp_objective,
        "rows_total": b.rows_total,
        "rows_generated": b.rows_generated,
        "rounds": b.rounds,
        "uniform_mix": b.t,
        "seconds_primal": b.seconds_primal,
        "seconds_dual": b.seconds_dual,
    }});
    merge(&mut meta, &extra_meta);
    Assembled {
        certificate: b
            .certificate
            .as_ref()
            .map(|c| json!({"lower_bound": io::lp_dual::to_value(c)})),
        lower_bound: b.lower_bound,
        matrix: b.matrix,
        meta,
        fields: json!({}),
        lp_size,
    }
}

fn merge(into: &mut Value, from: &Value) {
    if let (Some(m), Some(x)) = (into.as_object_mut(), from.as_object()) {
        m.extend(x.clone());
    }
}

/// Build `family` on the request's space at its ε, package it as an `mdp/1` document and
/// certify it ([`Certified::certify`]): a returned mechanism has passed its audit.
pub fn produce(
    req: &Request,
    family: &Family,
    progress: &dyn Progress,
) -> Result<Produced, ProduceError> {
    let a = build(req, family, progress)?;
    package(req, family.name(), a, progress)
}

/// Build `family`'s matrix and certificate data without packaging or auditing it (the
/// experiments' sweeps; [`produce`] for a certified mechanism).
pub fn build(
    req: &Request,
    family: &Family,
    progress: &dyn Progress,
) -> Result<Assembled, ProduceError> {
    check_epsilon(
        &req.eps,
        &format!("{:e}", crate::exact::f64_nearest(&req.eps)),
    )?;
    let (space, eps) = (req.space, &req.eps);
    let n = space.n();
    let a = match family {
        Family::Exponential { weights } => {
            if let Some(w) = weights {
                check_weights(w, n)?;
            }
            // The file: each entry's digits plus its exponent and separators (≈ 8 bytes).
            let file = || {
                exponential::entry_digits(space, eps, weights.as_deref()).map(|d| {
                    (n as u64)
                        .saturating_mul(n as u64)
                        .saturating_mul(d as u64 + 8)
                })
            };
            check_dense_memory("exponential", n, file, req.max_memory, progress)?;
            check_size_budget(exponential::exact_bits(space, eps, weights.as_deref()))?;
            if !exponential::certifiable(space, eps, weights.as_deref()) {
                return Err(invalid(
                    if weights.is_some() { "weights" } else { "epsilon" },
                    "ε·(least distance) and Y_min/ΣY leave the mechanism a relative slack below the f64 softmax's error bound (exponential::certifiable): it cannot be certified; use a larger ε or weights closer to each other",
                ));
            }
            Assembled {
                matrix: exponential::weighted_exponential(space, eps, weights.as_deref()),
                certificate: None,
                lower_bound: None,
                meta: json!({}),
                fields: json!({}),
                lp_size: None,
            }
        }
        Family::Optimal { solver, outputs } => {
            let k = outputs.as_ref().map_or(n, Vec::len);
            let rows = crate::lp::model::rows_upper(n as u64, k as u64);
            let solver = solver.resolve(n as u64, k as u64, rows, LpKind::MaxLoss, req.max_memory);
            check_lp_memory_rows(n, k, rows, solver, req.max_memory)?;
            let built =
                optimal::optimal_on(space, eps, outputs.clone(), solver, MAX_PREC, progress)?;
            Assembled {
                fields: outputs
                    .as_ref()
                    .map_or(json!({}), |o| json!({"outputs": {"of_inputs": o}})),
                ..lp_assembled(built, json!({}))
            }
        }
        Family::Pmo { pmo, solver, gap } => {
            let k = pmo.outputs.as_ref().map_or(n, Vec::len);
            let rows = pmo.privacy_rows(space, k);
            // Within η, `auto` may take the localized LP (spec/lp.md §4.6).
            let kind = LpKind::Expected {
                localizable: pmo.within.is_some(),
            };
            let solver = solver.resolve(n as u64, k as u64, rows, kind, req.max_memory);
            // `auto` kept within η tries the localized LP, which estimates its own memory
            // from the neighbourhoods (a fraction of the whole LP's: 1 500 points within η
            // were refused at 9.8 GB and ran in 1.1 GB, issue 33); the whole LP's lazy rows
            // are checked only if it falls back to them (`lp::solver`).
            if solver != Solver::Auto {
                check_lp_memory_rows(n, k, rows, solver, req.max_memory)?;
            }
            let params = pmo.params();
            let built = optimal::pmo(
                space,
                eps,
                &params,
                solver,
                *gap,
                req.max_memory,
                MAX_PREC,
                progress,
            )?;
            Assembled {
                fields: pmo.fields(n),
                ..lp_assembled(built, json!({}))
            }
        }
        Family::Benders { pmo, options } => {
            let (built, report) =
                crate::benders::benders(space, eps, &pmo.params(), options, MAX_PREC, progress)?;
            let upper = pmo.expected_loss_upper(space, &built.matrix);
            let mut a = lp_assembled(
                built,
                json!({"benders": {
                    "status": report.status,
                    "iterations": report.iterations,
                    "lb_float": report.lb_float,
                    "ub_float": report.ub_float,
                    "shape": report.shape,
                    "seconds_partition": report.seconds_partition,
                    "seconds_master": report.seconds_master,
                    "seconds_subproblems": report.seconds_sub,
                    "trace": report.trace,
                }}),
            );
            if let (Some(cert), Some(upper)) = (a.certificate.as_mut(), upper) {
                let lower = cert["lower_bound"]["value"].clone();
                cert["benders"] =
                    json!({"objective": "expected_loss", "lower": lower, "upper": upper});
            }
            Assembled {
                fields: pmo.fields(n),
                ..a
            }
        }
        Family::Spanner { k, solver } => {
            let k = check_spanner_k(*k, n)?;
            check_lp_memory(n, n, *solver, req.max_memory)?;
            let (b, edges, stretch) =
                spanner::spanner_mech(space, eps, k, *solver, MAX_PREC, progress)?;
            lp_assembled(
                b,
                json!({"k": k, "spanner_edges": edges.len(), "stretch_bound": stretch}),
            )
        }
        Family::Constopt {
            replacement: spec,
            lambdas,
            solver,
        } => {
            let repl = replacement(space, spec)?;
            let need =
                constopt::memory_estimate(n, &constopt::reduced_counts(n, &repl), lambdas.len());
            if need > req.max_memory {
                return Err(invalid(
                    "max-memory",
                    format!(
                        "ConstOPTMech over {n} inputs needs about {} for {} λ (estimate), over the budget of {}; use fewer points or λ, or raise the budget",
                        mib(need),
                        lambdas.len(),
                        mib(req.max_memory)
                    ),
                ));
            }
            let params = constopt::Params {
                eps,
                replacement: &repl,
                lambdas,
                max_prec: MAX_PREC,
                solver: *solver,
            };
            let built = constopt::constopt(space, &params, progress)?;
            for t in &built.trials {
                if let Some(why) = &t.fallback {
                    progress.note(&format!(
                        "constopt: λ = {}: {why}; solved by Clarabel",
                        t.lambda
                    ));
                }
                progress.note(&format!(
                    "constopt: λ = {:<8} LP objective {:.9}, loss {:.9}, {:.2} s ({})",
                    t.lambda, t.lp_objective, t.loss, t.seconds, t.solver
                ));
            }
            let (certificate, lower_bound) = packing_certificate(space, eps).unzip();
            let r = match spec {
                ReplacementSpec::NearestNeighbours { r } => Some(*r),
                ReplacementSpec::Sets(_) => None,
            };
            Assembled {
                meta: json!({"constopt": {
                    "r": r,
                    "lambda": built.trials[built.best].lambda,
                    "trials": built.trials,
                    "lp": built.counts,
                    "theorem1_bounds": constopt::theorem1_bounds(n, &repl),
                    "uniform_mix": built.t,
                }}),
                lp_size: Some((built.counts.nonzeros, built.counts.rows)),
                matrix: built.matrix,
                certificate,
                lower_bound,
                fields: json!({}),
            }
        }
        Family::Tem { truncation } => {
            check_dense_memory("TEM", n, || None, req.max_memory, progress)?;
            let gamma = tem_gamma(space, eps, truncation)?;
            check_size_budget(tem::exact_bits(n, eps, &gamma))?;
            let lists = tem::within_gamma(space, &gamma, MAX_PREC)
                .map_err(|(u, v)| invalid("gamma", format!("d({u},{v}) ≤ γ cannot be decided")))?;
            let (matrix, t) = tem::tem_matrix_certified(space, eps, &lists, &gamma, MAX_PREC)
                .ok_or(ProduceError::Build(BuildError::Repair))?;
            let beta = match truncation {
                Truncation::Beta(b) => Some(*b),
                Truncation::Gamma(_) => None,
            };
            let (certificate, lower_bound) = packing_certificate(space, eps).unzip();
            Assembled {
                meta: json!({"tem": {"gamma": io::number_value(&gamma), "beta": beta, "uniform_mix": t,
                    "mean_list_size": lists.iter().map(Vec::len).sum::<usize>() as f64 / n as f64}}),
                matrix,
                certificate,
                lower_bound,
                fields: json!({}),
                lp_size: None,
            }
        }
        Family::Geometric => {
            check_dense_memory(
                "the geometric mechanism",
                n,
                || None,
                req.max_memory,
                progress,
            )?;
            // Entries α^|i−j| with a 64-bit α: about 128·|i−j| bits each.
            let nf = n as f64;
            let total = 128.0 * nf * nf * nf / 3.0;
            if total > Limits::default().max_bits as f64 {
                return Err(invalid(
                    "space",
                    format!("the geometric mechanism's exact entries α^|i−j| over {n} points would need about {total:.2e} bits, over the auditor's default budget of {} bits; use fewer points", Limits::default().max_bits),
                ));
            }
            let matrix = crate::mechanisms::geometric::geometric(space, eps)
                .map_err(|e| invalid("space", e.to_string()))?;
            Assembled {
                meta: json!({"geometric": {"step": crate::mechanisms::geometric::spacing(space).ok().flatten().map(|s| io::number_value(&s))}}),
                matrix,
                certificate: None,
                lower_bound: None,
                fields: json!({}),
                lp_size: None,
            }
        }
        Family::PlanarLaplaceGrid | Family::PlanarGeometricGrid => {
            use crate::mechanisms::{planar_geometric_grid, planar_laplace_grid};
            let what = format!("the {}", family.paper_name());
            check_dense_memory(&what, n, || None, req.max_memory, progress)?;
            let b = if matches!(family, Family::PlanarLaplaceGrid) {
                planar_laplace_grid::planar_laplace_grid(space, eps)
            } else {
                planar_geometric_grid::planar_geometric_grid(space, eps)
            }
            .map_err(|e| invalid("space", e.to_string()))?;
            let mut meta = json!({});
            meta[family.name()] = json!({
                "width": b.grid.width, "height": b.grid.height,
                "step": io::number_value(&b.grid.step),
                "epsilon_noise": io::number_value(&b.eps_noise),
                "max_relative_width": b.max_relative_width});
            Assembled {
                meta,
                matrix: b.matrix,
                certificate: None,
                lower_bound: None,
                fields: json!({}),
                lp_size: None,
            }
        }
        Family::RandomizedResponse => {
            check_dense_memory("randomized response", n, || None, req.max_memory, progress)?;
            let d_min = crate::mechanisms::randomized_response::min_distance_lo(space);
            Assembled {
                meta: json!({"randomized_response": {"k": n, "d_min_lower": io::number_value(&d_min)}}),
                matrix: crate::mechanisms::randomized_response::randomized_response(space, eps),
                certificate: None,
                lower_bound: None,
                fields: json!({}),
                lp_size: None,
            }
        }
    };
    Ok(a)
}

/// The weights Y of EXPMECH_Y: one per point, each > 0 (Proposition 1).
pub fn check_weights(w: &[Q], n: usize) -> Result<(), ProduceError> {
    if w.len() != n {
        return Err(invalid(
            "weights",
            format!("has {} weights, the space has {n} points", w.len()),
        ));
    }
    if let Some(i) = w.iter().position(|y| *y <= 0u32) {
        return Err(invalid(
            &format!("weights[{i}]"),
            "must be > 0 (Proposition 1 needs Y > 0)",
        ));
    }
    Ok(())
}

/// The `meta` object of every file `mdp` writes (`spec/mechanism-format.md`): the producer
/// (`mdp` and its version), then `fields` (the mechanism's name, its space, …), then
/// `extra`, later keys replacing earlier ones.
pub fn producer_meta(fields: Value, extra: &Value) -> Value {
    let mut meta = json!({"producer": format!("mdp {}", env!("CARGO_PKG_VERSION"))});
    merge(&mut meta, &fields);
    merge(&mut meta, extra);
    meta
}

/// `v` without its wall-clock timings: every object key named `seconds` or `seconds_*`,
/// at any depth.
fn without_timings(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !(*k == "seconds" || k.starts_with("seconds_")))
                .map(|(k, x)| (k.clone(), without_timings(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(without_timings).collect()),
        x => x.clone(),
    }
}

/// The `mdp/1` document of an assembled mechanism, certified, with its summary.
fn package(
    req: &Request,
    name: &str,
    a: Assembled,
    progress: &dyn Progress,
) -> Result<Produced, ProduceError> {
    let meta = producer_meta(json!({"mechanism": name, "space": req.space_name}), &a.meta);
    // The file carries no wall-clock time (the summary, i.e. the stats line, does): the
    // same input, flags and build write the same bytes (spec/lp.md §4.7).
    let mut doc = io::mechanism_to_value(&req.eps, req.space, &a.matrix, without_timings(&meta));
    if let Some(c) = a.certificate {
        doc["certificate"] = c;
    }
    if let Some(l) = req.labels.filter(|l| l.len() == req.space.n()) {
        io::set_labels(&mut doc, l);
    }
    merge(&mut doc, &a.fields);
    // The self-audit's phases are nearly always quick: only those ≥ 2 s are reported.
    // A space admitted past the default --max-entries (n×n entries) is read back with
    // the same allowance; mdp-audit then needs --max-entries as the build did.
    let n = req.space.n() as u64;
    let limits = crate::io::Limits {
        max_entries: crate::io::Limits::default()
            .max_entries
            .max(n.saturating_mul(n)),
        ..crate::io::Limits::default()
    };
    let certified = Certified::certify_within(
        &doc,
        &limits,
        &crate::progress::OnlyLong::new(progress, 2.0),
    )?;
    let report = certified.report();
    let mut summary = json!({
        "mechanism": name,
        "n": req.space.n(),
        "verdict": report.verdict,
        "loss_max": report.loss_max,
        "expected_loss": report.expected_loss,
        "certified_lower_bound": a.lower_bound,
    });
    for key in ["lp", "constopt", "tem", "benders"] {
        if let Some(v) = meta.get(key) {
            summary[key] = v.clone();
        }
    }
    Ok(Produced { certified, summary })
}
