//! Producers: each mechanism family of the papers built, packaged as an `mdp/1` document
//! and certified by its own audit ([`Certified`]) through one call, [`produce`], with one
//! validated settings type per family, each in its own module behind one interface
//! ([`MechanismFamily`]) and listed in one table ([`Family`]). The command line only parses flags
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
//! use mdp::produce::{produce, ExpMech, Family, Request};
//! use mdp::progress::Silent;
//!
//! let (space, _labels) = mdp::builtin::space("cities40").unwrap();
//! let req = Request::new(&space, "builtin:cities40", parse_rational("0.5").unwrap());
//! let out = produce(&req, &Family::Exponential(ExpMech { weights: None }), &Silent).unwrap();
//! assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
//! ```

use crate::bounds::PackingCandidates;
use crate::certified::{Certified, CertifyError};
use crate::exact::{f64_up, parse_rational, Q};
use crate::io::{self, Limits};
use crate::lp::{BuildError, Built, Solver};
use crate::mechanism::Matrix;
use crate::mechanisms::exponential;
use crate::metric::Space;
use crate::progress::Progress;
use serde_json::{json, Value};
use thiserror::Error;

pub use crate::benders::BendersMech;
pub use crate::mechanisms::constopt::{check_r, replacement, ConstOptMech, ReplacementSpec};
pub use crate::mechanisms::exponential::{check_weights, ExpMech};
pub use crate::mechanisms::geometric::GeometricMech;
pub use crate::mechanisms::optimal::{OptMech, Pmo, PmoMech};
pub use crate::mechanisms::planar_geometric_grid::PlanarGeometricGridMech;
pub use crate::mechanisms::planar_laplace_grid::PlanarLaplaceGridMech;
pub use crate::mechanisms::randomized_response::RandomizedResponseMech;
pub use crate::mechanisms::spanner::{check_spanner_k, SpannerMech};
pub use crate::mechanisms::tem::{check_beta, tem_gamma, tem_gamma_for, TemMech, Truncation};

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

pub(crate) fn invalid(field: &str, message: impl Into<String>) -> ProduceError {
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
    /// What the front end states in the file's `meta` beside the family's own (e.g. how
    /// the outputs were chosen, `meta.outputs`, [`crate::outputs::OutputChoice::meta`]);
    /// an object, or null.
    pub meta: Value,
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
            meta: Value::Null,
        }
    }
}

/// One mechanism family behind one interface (issue 54 part 6). [`build`] runs
/// [`check`](MechanismFamily::check) (the settings against the request's space, and the
/// estimated memory against [`Request::max_memory`], before any heavy work), then
/// [`build`](MechanismFamily::build) (the matrix, its certificate, its `meta`); [`produce`]
/// packages and certifies what was built. Each family implements it in its own module
/// (`crate::mechanisms::*`, `crate::benders`); [`Family`] is the one table listing them, so
/// adding a family touches its own file and that table.
pub trait MechanismFamily {
    /// The name written to `meta.mechanism` (`exponential`, `pmo`, …).
    fn name(&self) -> &'static str;
    /// The name the papers use, with the settings that name it (`SpannerMech(k=2)`): the
    /// experiments' tables and figures.
    fn paper_name(&self) -> String;
    /// Refuse settings out of their domain for the request's space, and a build whose
    /// estimated memory exceeds the budget (`check_dense_memory`, [`check_lp_memory_rows`]),
    /// before the build starts.
    fn check(&self, req: &Request, progress: &dyn Progress) -> Result<(), ProduceError>;
    /// The matrix, the certificate data and the family's `meta` (settings checked).
    fn build(&self, req: &Request, progress: &dyn Progress) -> Result<Assembled, ProduceError>;
}

/// The mechanism families and their settings: the one table [`build`] and `lp export`
/// dispatch on ([`Family::member`]); each variant's settings live in the family's module.
///
/// ```
/// # use mdp::exact::{parse_rational, Q};
/// # use mdp::metric::{MetricKind, Space};
/// # use mdp::produce::*;
/// # use mdp::progress::Silent;
/// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
/// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
/// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
/// let family = Family::Exponential(ExpMech { weights: Some(vec![Q::from(1u32); 6]) });
/// let out = produce(&req, &family, &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// ```
#[derive(Clone, Debug)]
pub enum Family {
    /// EXPMECH and weighted EXPMECH (Imola et al. §3.1, Proposition 1).
    Exponential(ExpMech),
    /// OPTMech (Imola et al. §2).
    Optimal(OptMech),
    /// PMO (Qiu 2024 §2.2).
    Pmo(PmoMech),
    /// PMO by Benders decomposition (Qiu 2024 §3).
    Benders(BendersMech),
    /// SpannerMech (Imola et al. App. A, Theorem 4).
    Spanner(SpannerMech),
    /// ConstOPTMech (Imola et al. §3.2, Algorithm 1).
    Constopt(ConstOptMech),
    /// TEM (Carvalho et al. Algorithm 2).
    Tem(TemMech),
    /// The truncated geometric mechanism on a line (`spec/geo.md` §2).
    Geometric(GeometricMech),
    /// k-ary randomized response (`spec/geo.md` §2).
    RandomizedResponse(RandomizedResponseMech),
    /// The planar Laplace on a grid (`spec/geo.md` §2.3).
    PlanarLaplaceGrid(PlanarLaplaceGridMech),
    /// The planar geometric on a grid (`spec/geo.md` §2.4).
    PlanarGeometricGrid(PlanarGeometricGridMech),
}

impl Family {
    /// The family behind its interface: the one table.
    pub fn member(&self) -> &dyn MechanismFamily {
        match self {
            Family::Exponential(f) => f,
            Family::Optimal(f) => f,
            Family::Pmo(f) => f,
            Family::Benders(f) => f,
            Family::Spanner(f) => f,
            Family::Constopt(f) => f,
            Family::Tem(f) => f,
            Family::Geometric(f) => f,
            Family::RandomizedResponse(f) => f,
            Family::PlanarLaplaceGrid(f) => f,
            Family::PlanarGeometricGrid(f) => f,
        }
    }

    /// [`MechanismFamily::paper_name`].
    pub fn paper_name(&self) -> String {
        self.member().paper_name()
    }

    /// [`MechanismFamily::name`].
    pub fn name(&self) -> &'static str {
        self.member().name()
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
pub(crate) fn mib(bytes: u64) -> String {
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
pub(crate) fn check_dense_memory(
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
pub(crate) fn check_size_budget(bits: exponential::EntryBits) -> Result<(), ProduceError> {
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

/// The best verified k-center packing bound at `eps` for a square mechanism on `space`,
/// as a `packing` certificate and the bound's rigorous lower end.
pub(crate) fn packing_certificate(space: &Space, eps: &Q) -> Option<(Value, f64)> {
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

impl Assembled {
    /// A matrix with no certificate, `meta`, fields or LP (the families whose privacy is
    /// proven).
    pub fn matrix(matrix: Matrix) -> Self {
        Assembled {
            matrix,
            certificate: None,
            lower_bound: None,
            meta: json!({}),
            fields: json!({}),
            lp_size: None,
        }
    }
}

/// Non-zeros of a max-loss privacy LP on n inputs = outputs with `rows` privacy rows
/// M_uk − c·M_vk ≤ 0 (two each), n row sums (n each) and n loss rows (n − 1 costs and L).
fn privacy_lp_nonzeros(n: usize, rows: usize) -> usize {
    2 * rows + 2 * n * n
}

pub(crate) fn lp_assembled(b: Built, extra_meta: Value) -> Assembled {
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
/// experiments' sweeps; [`produce`] for a certified mechanism): ε's range, then the
/// family's [`check`](MechanismFamily::check), then its [`build`](MechanismFamily::build).
pub fn build(
    req: &Request,
    family: &Family,
    progress: &dyn Progress,
) -> Result<Assembled, ProduceError> {
    check_epsilon(
        &req.eps,
        &format!("{:e}", crate::exact::f64_nearest(&req.eps)),
    )?;
    let member = family.member();
    member.check(req, progress)?;
    member.build(req, progress)
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
    let mut meta = producer_meta(
        json!({"mechanism": name, "space": req.space_name}),
        &req.meta,
    );
    merge(&mut meta, &a.meta);
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
