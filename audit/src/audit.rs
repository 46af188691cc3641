//! `mdp-audit`: every check of the `mdp/1` contract on one mechanism file, and the report.
//! The verdict is **pass** only if every check is proven (`spec/soundness.md`).

use crate::bounds;
use crate::exact::float::FI;
use crate::exact::{f64_down, f64_up, q_from_f64, Q};
use crate::io::{InputError, MechanismFile};
use crate::loss::{self, Cost};
use crate::mechanism::Outputs;
use crate::metric::Space;
use crate::pin::{self, MetricPin};
use crate::privacy::{self, Decision, EpsEnclosure, Prepared};
use crate::progress::{Progress, Silent};
use rayon::prelude::*;
use serde::Serialize;
use serde_json::Value;
use std::time::Instant;

/// Process exit codes (contract: "What mdp-audit reports and how it exits").
pub const EXIT_PASS: i32 = 0;
pub const EXIT_FAIL: i32 = 1;
pub const EXIT_INPUT: i32 = 2;
pub const EXIT_INCONCLUSIVE: i32 = 3;

/// Which privacy scope an audit accepts: the pipeline's policy on `neighbors.within`
/// (a file that claims privacy only for pairs with d ≤ η protects nothing beyond η).
#[derive(Clone, Debug, Default, PartialEq)]
pub enum ScopePolicy {
    /// Only claims for all ordered pairs: a file with `neighbors` fails the `policy`
    /// check. The default (`spec/threat-model.md`).
    #[default]
    AllPairs,
    /// Scoped claims are accepted when η ≥ this value (decided exactly).
    WithinAtLeast(Q),
    /// Any scoped claim is accepted (its scope is reported).
    AnyScope,
}

impl ScopePolicy {
    /// The gate's flags: `--require-within ETA` (η ≥ ETA), else `--allow-scoped`, else all
    /// pairs.
    pub fn from_flags(require_within: Option<Q>, allow_scoped: bool) -> ScopePolicy {
        match (require_within, allow_scoped) {
            (Some(eta), _) => ScopePolicy::WithinAtLeast(eta),
            (None, true) => ScopePolicy::AnyScope,
            (None, false) => ScopePolicy::AllPairs,
        }
    }

    /// A producer's policy: exactly the scope it was asked to build (all pairs, or its η).
    pub fn exactly(within: Option<&Q>) -> ScopePolicy {
        match within {
            Some(eta) => ScopePolicy::WithinAtLeast(eta.clone()),
            None => ScopePolicy::AllPairs,
        }
    }
}

/// Options of an audit.
#[derive(Clone, Debug)]
pub struct Options {
    /// The ε the pipeline requires: privacy is checked at this ε instead of the file's own
    /// claim (a gate never trusts the file's claim).
    pub epsilon: Option<Q>,
    /// The scope the pipeline accepts.
    pub scope: ScopePolicy,
    /// The metric the pipeline accepts: the file's own (default), or one pinned by a digest
    /// or by the pipeline's space ([`crate::pin`]).
    pub metric: MetricPin,
    pub delta: Option<Q>,
    pub quantile: Option<Q>,
    pub row_sum_tolerance: Q,
    pub loss_tolerance: Q,
    pub max_prec: u64,
    /// Largest size in bits of an exactly row-normalized entry H\[u\]\[w\] (see
    /// [`crate::io::Limits::max_number_bits`]); a larger one refuses the file.
    pub max_number_bits: u64,
    /// Exact triples the structured audit's fallback may decide before it stops with an
    /// input error (containers, `spec/soundness.md` §7).
    pub max_exact_triples: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            epsilon: None,
            scope: ScopePolicy::AllPairs,
            metric: MetricPin::FileMetric,
            delta: None,
            quantile: None,
            row_sum_tolerance: Q::from_unsigneds(1u32, 1_000_000_000u32),
            loss_tolerance: Q::from_unsigneds(1u32, 1_000_000_000u32),
            max_prec: privacy::DEFAULT_MAX_PREC,
            max_number_bits: crate::io::DEFAULT_MAX_NUMBER_BITS,
            max_exact_triples: crate::structured::report::DEFAULT_MAX_EXACT_TRIPLES,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
    Inconclusive,
}

impl Verdict {
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => EXIT_PASS,
            Verdict::Fail => EXIT_FAIL,
            Verdict::Inconclusive => EXIT_INCONCLUSIVE,
        }
    }
}

/// One check's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    pub name: String,
    pub verdict: Verdict,
    pub detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub witness: Option<Value>,
}

/// The `--json` report (contract fields plus the checks and statistics).
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub verdict: Verdict,
    pub n: usize,
    #[serde(rename = "K")]
    pub k: usize,
    pub epsilon_claimed: f64,
    /// The pipeline's required ε (`--require-epsilon`), at which privacy was checked;
    /// absent when the file's claim was checked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon_required: Option<f64>,
    /// The file's metric in one line (form, n, radius, labels).
    pub metric: String,
    /// The digest of the file's metric ([`crate::pin::digest`]): what
    /// `--require-metric-digest` pins.
    pub metric_digest: String,
    /// Pure tight ε enclosure [lo, hi] (`null` hi = +∞).
    pub epsilon_tight: [Option<f64>; 2],
    pub delta: f64,
    pub epsilon_delta_tight: [Option<f64>; 2],
    pub max_row_sum_deviation: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_max: Option<[f64; 2]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub loss_quantile: Option<[f64; 2]>,
    pub quantile: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected_loss: Option<[f64; 2]>,
    pub checks: Vec<Check>,
    pub warnings: Vec<String>,
    pub stats: Stats,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
    /// The distance (and loss) unit when the metric states one: "km" for haversine with
    /// the default earth radius.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unit: Option<&'static str>,
}

/// Work statistics (what the fast filter decided, and timings).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Stats {
    pub pairs_in_scope: usize,
    pub triples: u64,
    pub exact_pairs_pure: usize,
    /// Fraction of the n·n·K triples of the pure check that the exact fallback decided.
    pub exact_triple_fraction: f64,
    /// Pairs the tight-ε search computed exactly (the exhaustive audit; a container's
    /// work is in `structured`).
    pub exact_pairs_tight: usize,
    /// Verification passes of the tight-ε search over every pair in scope.
    pub passes_tight: usize,
    pub exact_pairs_delta: usize,
    pub pairs_searched_delta: usize,
    pub seconds_prepare: f64,
    pub seconds_pure: f64,
    pub seconds_tight: f64,
    pub seconds_delta: f64,
    pub seconds_loss: f64,
    pub seconds_total: f64,
    /// The structured audit's work (a container's audit, `spec/soundness.md` §7).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub structured: Option<StructuredStats>,
}

/// What the structured audit decided how: triples proven at once by box pairs, triples
/// decided pair by pair (leaf pairs or edges) and by exact arithmetic.
#[derive(Clone, Debug, Default, Serialize)]
pub struct StructuredStats {
    /// `edges` (graph metric) or `boxes` (k-d tree of a coordinate metric).
    pub method: &'static str,
    pub pairs_checked: u64,
    pub triples_settled_by_boxes: u64,
    pub triples_checked_by_pairs: u64,
    /// Fraction of the n·(n−1)·K triples settled by box pairs, without a leaf, per pass
    /// (averaged over the checks: the tight-ε search's and the verdict's).
    pub settled_fraction: f64,
    /// Checks (passes over the pairs in scope) the counts above add up.
    pub passes: u64,
    pub box_tests: u64,
    pub exact_pairs: u64,
    pub exact_triples: u64,
}

fn enc_json(e: &EpsEnclosure) -> [Option<f64>; 2] {
    let (lo, hi) = e.to_f64();
    [Some(lo), hi.is_finite().then_some(hi)]
}

fn fi2(x: FI) -> [f64; 2] {
    [x.lo, x.hi]
}

/// Site index, in `space`, of each output column.
pub fn output_sites(file: &MechanismFile, space: &Space) -> Option<Vec<usize>> {
    let n = file.space.n();
    match &file.outputs {
        Outputs::Inputs => Some((0..n).collect()),
        Outputs::OfInputs(v) => Some(v.clone()),
        Outputs::Points(p) => {
            Some((n..n + p.len()).collect()).filter(|_| space.sites() == n + p.len())
        }
        Outputs::Labels(_) => None,
    }
}

/// The `lp_dual` check (`spec/lp.md` §5): verify the dual exactly at the file's ε and
/// scope, report the certified bound and this matrix's gap to it.
fn lp_dual_check(
    file: &MechanismFile,
    space: &Space,
    sites: Option<&[usize]>,
    c: &crate::io::lp_dual::LpDual,
    losses: Option<&loss::Losses>,
    opts: &Options,
) -> (Check, Option<Q>) {
    use crate::certificate as cert;
    let cost: Option<Vec<Q>> = file
        .cost
        .as_ref()
        .map(|m| (0..m.rows).flat_map(|r| m.row(r).iter().cloned()).collect());
    let pb = cert::Problem {
        space,
        eps: &file.epsilon,
        within: file.within.as_ref(),
        sites,
        cost: cost.as_deref(),
        prior: file.prior.as_deref(),
        max_prec: opts.max_prec,
    };
    match cert::verify(c, &pb, file.matrix.rows, file.matrix.cols) {
        Err(cert::Rejected(why)) => (
            Check {
                name: "lp_dual".into(),
                verdict: Verdict::Fail,
                detail: format!("certificate rejected: {why}"),
                witness: None,
            },
            None,
        ),
        Ok(bound) => {
            let lb = f64_down(&bound);
            let this = loss_of(losses, c.bounded);
            let gap = match this {
                Some(l) => format!(
                    "; this matrix's {} ≤ {:.12e}, certified gap ≤ {:.3e} ({:.3e} relative)",
                    c.bounded.name(),
                    l.hi,
                    crate::exact::float::add_up(l.hi, -lb).max(0.0),
                    (crate::exact::float::add_up(l.hi, -lb) / lb.abs()).max(0.0)
                ),
                None => String::new(),
            };
            (
                Check {
                    name: "lp_dual".into(),
                    verdict: Verdict::Pass,
                    detail: format!(
                        "every mechanism ε·d private at the file's ε = {} has {} ≥ {:.15e} (exact dual bound ≥ the claimed {:.15e}){gap}",
                        f64_nearest_str(&file.epsilon),
                        c.bounded.name(),
                        lb,
                        f64_down(&c.value)
                    ),
                    witness: Some(serde_json::json!({"bound": lb, "objective": c.bounded.name()})),
                },
                Some(bound),
            )
        }
    }
}

/// The enclosure of the loss a certificate bounds, when the file gives it.
fn loss_of(losses: Option<&loss::Losses>, bounded: crate::io::lp_dual::Bounded) -> Option<FI> {
    use crate::io::lp_dual::Bounded;
    losses.and_then(|l| match bounded {
        Bounded::MaxLoss => Some(l.max),
        Bounded::ExpectedLoss => l.expected,
    })
}

/// `certificate.benders` (`spec/benders.md` §4): `lower` must be at most the bound the
/// file's `lp_dual` proves for the same objective (`proven`, `None` when that certificate
/// is absent or rejected), and `upper` at least this matrix's loss, decided on the loss
/// enclosure: above its upper end passes, below its lower end fails, between is
/// inconclusive. Reports the verified gap upper − lower.
fn benders_check(
    claim: &crate::io::BendersClaim,
    lp_dual: Option<(&crate::io::lp_dual::LpDual, Option<&Q>)>,
    losses: Option<&loss::Losses>,
) -> Check {
    let name = claim.objective.name();
    let check = |verdict, detail: String| Check {
        name: "benders".into(),
        verdict,
        detail,
        witness: None,
    };
    let proven = match lp_dual {
        None => {
            return check(
                Verdict::Fail,
                "its lower bound needs an lp_dual certificate (certificate.lower_bound), and the file has none".into(),
            )
        }
        Some((c, _)) if c.bounded != claim.objective => {
            return check(
                Verdict::Fail,
                format!("the lp_dual certificate bounds {}, the benders claim {name}", c.bounded.name()),
            )
        }
        Some((_, None)) => {
            return check(
                Verdict::Fail,
                "its lower bound rests on the lp_dual certificate, which was rejected".into(),
            )
        }
        Some((_, Some(b))) => b,
    };
    if claim.lower > *proven {
        return check(
            Verdict::Fail,
            format!(
                "claimed lower bound {:.15e} is above the {:.15e} the lp_dual certificate proves",
                f64_up(&claim.lower),
                f64_down(proven)
            ),
        );
    }
    let Some(l) = loss_of(losses, claim.objective) else {
        return check(
            Verdict::Fail,
            format!("cannot verify the upper bound: this file gives no {name}"),
        );
    };
    let upper = f64_down(&claim.upper);
    if claim.upper < crate::exact::q_from_f64(l.lo) {
        return check(
            Verdict::Fail,
            format!(
                "claimed upper bound {upper:.15e} is below this matrix's {name} ≥ {:.15e}",
                l.lo
            ),
        );
    }
    let gap = &claim.upper - &claim.lower;
    let rel = f64_up(&gap) / f64_down(&claim.lower).abs().max(f64::MIN_POSITIVE);
    let bounds = format!(
        "{:.15e} ≤ optimal {name} ≤ this matrix's {name} ∈ [{:.15e}, {:.15e}]",
        f64_down(&claim.lower),
        l.lo,
        l.hi
    );
    if claim.upper < crate::exact::q_from_f64(l.hi) {
        return check(
            Verdict::Inconclusive,
            format!("{bounds}; the claimed upper bound {upper:.15e} is inside the loss enclosure"),
        );
    }
    Check {
        name: "benders".into(),
        verdict: Verdict::Pass,
        detail: format!(
            "{bounds} ≤ {upper:.15e}: verified gap {:.3e} ({rel:.3e} relative)",
            f64_up(&gap)
        ),
        witness: Some(serde_json::json!({
            "lower": f64_down(&claim.lower), "upper": f64_up(&claim.upper),
            "gap": f64_up(&gap), "relative_gap": rel})),
    }
}

/// Run every check on a parsed file.
pub fn audit(file: &MechanismFile, opts: &Options) -> Result<Report, InputError> {
    audit_with(file, opts, &Silent)
}

/// [`audit`], reporting its long phases (exact fallback, tight ε, (ε,δ), certificates)
/// to `progress`.
pub fn audit_with(
    file: &MechanismFile,
    opts: &Options,
    progress: &dyn Progress,
) -> Result<Report, InputError> {
    let t0 = Instant::now();
    let mut stats = Stats::default();
    let mut checks = Vec::new();
    let mut warnings = file.warnings.clone();
    let eps = opts.epsilon.clone().unwrap_or_else(|| file.epsilon.clone());
    let delta = opts.delta.clone().unwrap_or_else(|| file.delta.clone());
    let quantile = opts
        .quantile
        .clone()
        .unwrap_or_else(|| file.quantile.clone());
    let space = match &file.outputs {
        Outputs::Points(pts) => file
            .space
            .with_extra_points(pts.clone())
            .map_err(|e| crate::io::input_error(format!("outputs.points{}", e.path), e.message))?,
        _ => file.space.clone(),
    };
    let inconclusive = |what: &str, (u, v): (usize, usize)| Check {
        name: what.into(),
        verdict: Verdict::Inconclusive,
        detail: format!("pair ({u}, {v}) undecidable within {} bits", opts.max_prec),
        witness: None,
    };
    let view = pin::View::of_file(file);
    let metric = (view.describe(), pin::digest(&view));
    checks.extend(pin::check(
        &view,
        &metric.1,
        &opts.metric,
        crate::io::Limits::default().max_bits,
    ));
    let prep = match Prepared::new(&space, &file.matrix, file.within.as_ref(), opts.max_prec) {
        Ok(p) => p,
        Err(pair) => {
            checks.push(inconclusive("neighbors", pair));
            return Ok(finish(
                file, &eps, &delta, &quantile, checks, warnings, stats, t0, None, None, 0.0, None,
                metric,
            ));
        }
    };
    // H[u][w] = M[u][w] / Σ_k M[u][k] has at most bits(M[u][w]) + bits(Σ) bits: refuse rows
    // whose exact normalization would be larger than the per-number limit.
    for u in 0..prep.n {
        let widest = file
            .matrix
            .row(u)
            .iter()
            .map(crate::exact::bits)
            .max()
            .unwrap_or(0);
        let b = widest + crate::exact::bits(&prep.sums[u]);
        if b > opts.max_number_bits {
            return Err(crate::io::over_number_bits(
                &format!("matrix[{u}] (row-normalized)"),
                b,
                opts.max_number_bits,
            ));
        }
    }
    stats.seconds_prepare = t0.elapsed().as_secs_f64();
    stats.pairs_in_scope = prep.pairs_in_scope();
    stats.triples = stats.pairs_in_scope as u64 * prep.k as u64;

    // Row sums.
    let (dev, check) = row_sums_check(&prep.sums, &opts.row_sum_tolerance);
    let dev_f = f64_up(&dev);
    checks.push(check);

    // Pure privacy at the claimed ε.
    let t = Instant::now();
    let ratios = privacy::float_ratios(&prep);
    let pure = privacy::check_pure_with(&prep, &ratios, &eps, progress);
    stats.exact_pairs_pure = pure.exact_pairs;
    stats.exact_triple_fraction = if stats.triples == 0 {
        0.0
    } else {
        (pure.exact_pairs as f64 * prep.k as f64) / stats.triples as f64
    };
    stats.seconds_pure = t.elapsed().as_secs_f64();
    let scope_txt = match &file.within {
        Some(eta) => format!("ordered pairs with d ≤ η = {}", f64_up(eta)),
        None => "all ordered pairs".to_string(),
    };
    checks.push(match pure.decision {
        Decision::Holds => Check {
            name: "pure_privacy".into(),
            verdict: Verdict::Pass,
            detail: format!(
                "H[u][w] ≤ e^(ε·d(u,v))·H[v][w] proven for {} {scope_txt} × {} outputs at ε = {} ({} pairs needed exact arithmetic)",
                pure.pairs,
                prep.k,
                f64_nearest_str(&eps),
                pure.exact_pairs
            ),
            witness: None,
        },
        Decision::Fails => {
            let w = pure.witness.clone().expect("witness");
            Check {
                name: "pure_privacy".into(),
                verdict: Verdict::Fail,
                detail: format!(
                    "violated at (u, v, w) = ({}, {}, {}): H[u][w] ∈ [{:.17e}, {:.17e}] > e^(ε·d(u,v))·H[v][w] ∈ [{:.17e}, {:.17e}]",
                    named(w.u, input_label(file, w.u)),
                    named(w.v, input_label(file, w.v)),
                    named(w.w, output_label(file, w.w)),
                    w.lhs.0, w.lhs.1, w.rhs.0, w.rhs.1
                ),
                witness: Some({
                    let mut j = serde_json::json!({"u": w.u, "v": w.v, "w": w.w, "lhs": [w.lhs.0, w.lhs.1], "rhs": [w.rhs.0, w.rhs.1]});
                    for (key, label) in [
                        ("u_label", input_label(file, w.u)),
                        ("v_label", input_label(file, w.v)),
                        ("w_label", output_label(file, w.w)),
                    ] {
                        if let Some(l) = label {
                            j[key] = Value::String(l.to_string());
                        }
                    }
                    j
                }),
            }
        }
        Decision::Undecided => inconclusive("pure_privacy", pure.undecided.expect("pair")),
    });

    if let Some(c) = policy_check(file, opts) {
        checks.push(c);
    }

    // Tight pure ε.
    let t = Instant::now();
    progress.start("audit: tight ε", None);
    let tight = match privacy::tight_pure_eps(&prep, &ratios) {
        Ok((e, s)) => {
            stats.exact_pairs_tight = s.exact_pairs;
            stats.passes_tight = s.passes;
            Some(e)
        }
        Err(pair) => {
            checks.push(inconclusive("epsilon_tight", pair));
            None
        }
    };
    stats.seconds_tight = t.elapsed().as_secs_f64();
    progress.finish(&format!("audit: tight ε ({:.1} s)", stats.seconds_tight));

    // (ε,δ) tight epsilon.
    let t = Instant::now();
    progress.start("audit: (ε,δ) tight ε", None);
    let tight_delta = match privacy::tight_eps_delta(&prep, &ratios, &delta) {
        Ok((e, s)) => {
            stats.exact_pairs_delta = s.exact_pairs;
            stats.pairs_searched_delta = s.pairs_searched;
            Some(e)
        }
        Err(pair) => {
            checks.push(inconclusive("epsilon_delta_tight", pair));
            None
        }
    };
    stats.seconds_delta = t.elapsed().as_secs_f64();
    progress.finish(&format!(
        "audit: (ε,δ) tight ε ({:.1} s)",
        stats.seconds_delta
    ));

    // Implied guarantee along shortest η-paths.
    if file.within.is_some() {
        let (check, unguarded) = neighbors_report(&prep);
        checks.push(check);
        // A scoped guarantee is a warning in the summary, not only a detail of a passing
        // check (issue 33: "[ok] neighbors … 998 212 ordered pairs … have no guarantee").
        if unguarded > 0 {
            warnings.push(format!(
                "scoped guarantee: privacy is claimed only for pairs within η; {unguarded} ordered pairs (in different components of the η-graph) have no privacy guarantee at all"
            ));
        }
    }

    // Losses.
    let t = Instant::now();
    progress.start("audit: losses", None);
    let sites = output_sites(file, &space);
    let cost = match (&file.cost, &sites) {
        (Some(c), _) => Some(Cost::Matrix(c)),
        (None, Some(s)) => Some(Cost::Distance(s)),
        (None, None) => None,
    };
    let losses = cost
        .as_ref()
        .map(|c| loss::losses(&prep, c, &quantile, file.prior.as_deref()));
    stats.seconds_loss = t.elapsed().as_secs_f64();
    progress.finish(&format!("audit: losses ({:.1} s)", stats.seconds_loss));

    if let (Some(claim), Some(l)) = (&file.certificate.claimed_loss, &losses) {
        let mut check = claimed_loss_check(claim, l.max, &opts.loss_tolerance);
        // Where the enclosure cannot decide, the exact rational loss (rational costs) does.
        if check.verdict == Verdict::Inconclusive {
            if let Some(exact) = cost
                .as_ref()
                .and_then(|c| loss::exact_max_loss(&file.matrix, c, &space))
            {
                check = claimed_loss_exact(claim, &exact, &opts.loss_tolerance);
            }
        }
        checks.push(check);
    } else if file.certificate.claimed_loss.is_some() {
        checks.push(Check {
            name: "claimed_loss".into(),
            verdict: Verdict::Fail,
            detail: "cannot verify: losses need loss.cost with label outputs".into(),
            witness: None,
        });
    }

    if let Some(pc) = &file.certificate.packing {
        progress.start("audit: packing lower bound", None);
        let t = Instant::now();
        checks.push(packing_check(
            file,
            &prep,
            &space,
            sites.as_deref(),
            pc,
            &eps,
            tight.as_ref(),
            losses.as_ref(),
            opts,
        ));
        progress.finish(&format!(
            "audit: packing lower bound ({:.1} s)",
            t.elapsed().as_secs_f64()
        ));
    }
    let mut proven_lp_dual = None;
    if let Some(c) = &file.certificate.lp_dual {
        progress.start(
            &format!("audit: lp_dual certificate ({} multipliers)", c.gamma.len()),
            None,
        );
        let t = Instant::now();
        let (check, bound) =
            lp_dual_check(file, &space, sites.as_deref(), c, losses.as_ref(), opts);
        checks.push(check);
        proven_lp_dual = bound;
        progress.finish(&format!(
            "audit: lp_dual certificate ({:.1} s)",
            t.elapsed().as_secs_f64()
        ));
    }
    if let Some(claim) = &file.certificate.benders {
        let lp = file
            .certificate
            .lp_dual
            .as_ref()
            .map(|c| (c, proven_lp_dual.as_ref()));
        checks.push(benders_check(claim, lp, losses.as_ref()));
    }
    if let Some(e) = &tight {
        if e.is_infinite() {
            let (u, v) = e.pair.expect("pair");
            warnings.push(format!(
                "no finite ε makes this matrix ε·d private (pair ({u}, {v}))"
            ));
        }
    }
    let dev = dev_f;
    Ok(finish(
        file,
        &eps,
        &delta,
        &quantile,
        checks,
        warnings,
        stats,
        t0,
        tight,
        tight_delta,
        dev,
        losses,
        metric,
    ))
}

/// The pipeline's policy (`--require-epsilon`, the scope policy): `None` when the file
/// claims all pairs and no ε is required (nothing beyond the other checks to decide).
fn policy_check(file: &MechanismFile, opts: &Options) -> Option<Check> {
    scope_policy_check(file.within.as_ref(), &file.epsilon, opts)
}

/// The `policy` check of a file claiming `epsilon` within scope `within`: the ε checked
/// and the scope against the pipeline's [`ScopePolicy`] (`None` when neither applies).
pub(crate) fn scope_policy_check(within: Option<&Q>, epsilon: &Q, opts: &Options) -> Option<Check> {
    if opts.epsilon.is_none() && within.is_none() {
        return None;
    }
    let required = opts.epsilon.as_ref().map(|e| {
        format!(
            "privacy checked at the required ε = {} (the file claims ε = {})",
            f64_nearest_str(e),
            f64_nearest_str(epsilon)
        )
    });
    let (verdict, scope) = match (within, &opts.scope) {
        (None, _) => (Verdict::Pass, "scope: all ordered pairs".to_string()),
        (Some(eta), ScopePolicy::AllPairs) => (
            Verdict::Fail,
            format!(
                "the file claims privacy only for pairs with d ≤ η = {}; the policy requires all pairs (accept scoped claims with --require-within ETA or --allow-scoped)",
                f64_nearest_str(eta)
            ),
        ),
        (Some(eta), ScopePolicy::WithinAtLeast(min)) if eta >= min => (
            Verdict::Pass,
            format!(
                "scope: pairs with d ≤ η = {} (the policy requires η ≥ {})",
                f64_nearest_str(eta),
                f64_nearest_str(min)
            ),
        ),
        (Some(eta), ScopePolicy::WithinAtLeast(min)) => (
            Verdict::Fail,
            format!(
                "the file claims privacy only for pairs with d ≤ η = {}, the policy requires η ≥ {}",
                f64_nearest_str(eta),
                f64_nearest_str(min)
            ),
        ),
        (Some(eta), ScopePolicy::AnyScope) => (
            Verdict::Pass,
            format!(
                "scope: only pairs with d ≤ η = {} (accepted by --allow-scoped)",
                f64_nearest_str(eta)
            ),
        ),
    };
    let detail = match required {
        Some(r) => format!("{r}; {scope}"),
        None => scope,
    };
    Some(Check {
        name: "policy".into(),
        verdict,
        detail,
        witness: None,
    })
}

pub(crate) fn f64_nearest_str(q: &Q) -> String {
    plain(crate::exact::f64_nearest(q))
}

/// A number for people: the shortest decimal that reads back, in scientific notation
/// outside [1e-4, 1e7).
pub fn plain(x: f64) -> String {
    if x == 0.0 || (1e-4..1e7).contains(&x.abs()) || !x.is_finite() {
        format!("{x}")
    } else {
        format!("{x:e}")
    }
}

#[allow(clippy::too_many_arguments)]
fn finish(
    file: &MechanismFile,
    eps: &Q,
    delta: &Q,
    quantile: &Q,
    checks: Vec<Check>,
    warnings: Vec<String>,
    mut stats: Stats,
    t0: Instant,
    tight: Option<EpsEnclosure>,
    tight_delta: Option<EpsEnclosure>,
    dev: f64,
    losses: Option<loss::Losses>,
    (metric, metric_digest): (String, String),
) -> Report {
    let verdict = verdict_of(&checks);
    stats.seconds_total = t0.elapsed().as_secs_f64();
    let epsilon_tight = tight_under_pass(tight.as_ref(), &checks, eps);
    Report {
        verdict,
        n: file.matrix.rows,
        k: file.matrix.cols,
        epsilon_claimed: crate::exact::f64_nearest(&file.epsilon),
        epsilon_required: (*eps != file.epsilon).then(|| crate::exact::f64_nearest(eps)),
        metric,
        metric_digest,
        epsilon_tight,
        delta: crate::exact::f64_nearest(delta),
        epsilon_delta_tight: tight_delta.as_ref().map(enc_json).unwrap_or([None, None]),
        max_row_sum_deviation: dev,
        loss_max: losses.as_ref().map(|l| fi2(l.max)),
        loss_quantile: losses.as_ref().map(|l| fi2(l.quantile)),
        quantile: crate::exact::f64_nearest(quantile),
        expected_loss: losses.as_ref().and_then(|l| l.expected.map(fi2)),
        checks,
        warnings,
        stats,
        meta: file.meta.clone(),
        unit: unit_of(&file.space),
    }
}

/// The `row_sums` check: max |S_u − 1| over the exact row sums against `tol`, and that
/// deviation.
pub(crate) fn row_sums_check(sums: &[Q], tol: &Q) -> (Q, Check) {
    let one = Q::from(1u32);
    let dev = sums
        .iter()
        .map(|s| if *s > one { s - &one } else { &one - s })
        .max()
        .expect("n ≥ 1");
    let check = Check {
        name: "row_sums".into(),
        verdict: if dev <= *tol {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        detail: format!(
            "max |Σ_k M[u][k] − 1| = {:.3e} (tolerance {:.1e})",
            f64_up(&dev),
            f64_up(tol)
        ),
        witness: None,
    };
    (dev, check)
}

/// A report's verdict: fail if any check fails, else inconclusive if any is, else pass.
pub(crate) fn verdict_of(checks: &[Check]) -> Verdict {
    if checks.iter().any(|c| c.verdict == Verdict::Fail) {
        Verdict::Fail
    } else if checks.iter().any(|c| c.verdict == Verdict::Inconclusive) {
        Verdict::Inconclusive
    } else {
        Verdict::Pass
    }
}

/// The tight pure ε as the report shows it. A pass of the exact pure check proves tight
/// ε ≤ ε (the checked one): the enclosure's upper end is cut there (rounded up), so a pass
/// never shows a tight ε above the ε it passed at (issue 33: [1.99999999999,
/// 2.00000000019] beside PASS at 2).
pub(crate) fn tight_under_pass(
    tight: Option<&EpsEnclosure>,
    checks: &[Check],
    eps: &Q,
) -> [Option<f64>; 2] {
    let mut epsilon_tight = tight.map(enc_json).unwrap_or([None, None]);
    let pure_pass = checks
        .iter()
        .any(|c| c.name == "pure_privacy" && c.verdict == Verdict::Pass);
    if pure_pass {
        if let [Some(_), hi] = &mut epsilon_tight {
            let cap = crate::exact::f64_up(eps);
            *hi = Some(hi.map_or(cap, |h| h.min(cap)));
        }
    }
    epsilon_tight
}

/// The distance unit a space states: "km" for haversine with the default earth radius.
pub fn unit_of(space: &Space) -> Option<&'static str> {
    (space.kind() == crate::metric::MetricKind::Haversine
        && *space.radius() == crate::metric::default_radius())
    .then_some("km")
}

/// `claimed_loss` holds when |claim − L(M)| ≤ tol·L(M), decided exactly (rationals) on the
/// enclosure [lo, hi] of L(M): pass iff the claim is within tolerance of *every* L in the
/// enclosure (claim ≥ hi(1−tol) and claim ≤ lo(1+tol)), fail iff of *none* (claim <
/// lo(1−tol) or claim > hi(1+tol)), inconclusive in between. No float rounding decides.
pub fn claimed_loss_check(claim: &Q, l: FI, tol: &Q) -> Check {
    let one = Q::from(1u32);
    let verdict = if !(l.lo.is_finite() && l.hi.is_finite()) {
        Verdict::Inconclusive
    } else {
        let (lo, hi) = (q_from_f64(l.lo), q_from_f64(l.hi));
        let (down, up) = (&one - tol, &one + tol);
        if *claim >= &hi * &down && *claim <= &lo * &up {
            Verdict::Pass
        } else if *claim < &lo * &down || *claim > &hi * &up {
            Verdict::Fail
        } else {
            Verdict::Inconclusive
        }
    };
    Check {
        name: "claimed_loss".into(),
        verdict,
        detail: format!(
            "claimed {:.12e}, L(M) ∈ [{:.12e}, {:.12e}] (relative tolerance {:.1e})",
            crate::exact::f64_nearest(claim),
            l.lo,
            l.hi,
            crate::exact::f64_nearest(tol)
        ),
        witness: None,
    }
}

/// The claimed loss against the exact L(M): pass iff L(1 − tol) ≤ claim ≤ L(1 + tol).
pub fn claimed_loss_exact(claim: &Q, exact: &Q, tol: &Q) -> Check {
    let one = Q::from(1u32);
    let within = *claim >= exact * (&one - tol) && *claim <= exact * (&one + tol);
    Check {
        name: "claimed_loss".into(),
        verdict: if within { Verdict::Pass } else { Verdict::Fail },
        detail: format!(
            "claimed {:.12e}, L(M) = {} exactly (relative tolerance {:.1e})",
            crate::exact::f64_nearest(claim),
            crate::exact::format_rational(exact),
            crate::exact::f64_nearest(tol)
        ),
        witness: None,
    }
}

/// The η-graph (the pairs in scope) with upper bounds on their distances, for the chained
/// distances d_G ([`Space::shortest_paths_upper`]).
fn scope_graph(p: &Prepared) -> Vec<Vec<(u32, f64)>> {
    let n = p.n;
    p.space
        .upper_adjacency(&|a, b| p.scope[a * n + b].then(|| p.dist[a * n + b].hi))
}

/// Input u's label, when the file has labels (`metric.labels`).
fn input_label(file: &MechanismFile, u: usize) -> Option<&str> {
    label_at(file.labels.as_deref(), u)
}

/// Output column w's label: its input's label, or an opaque output's own.
fn output_label(file: &MechanismFile, w: usize) -> Option<&str> {
    output_label_at(file.labels.as_deref(), &file.outputs, w)
}

/// Input u's label among `labels`.
pub(crate) fn label_at(labels: Option<&[String]>, u: usize) -> Option<&str> {
    labels.and_then(|l| l.get(u)).map(String::as_str)
}

/// Output column w's label: its input's label (`labels`), or an opaque output's own.
pub(crate) fn output_label_at<'a>(
    labels: Option<&'a [String]>,
    outputs: &'a Outputs,
    w: usize,
) -> Option<&'a str> {
    match outputs {
        Outputs::Inputs => label_at(labels, w),
        Outputs::OfInputs(v) => v.get(w).and_then(|&i| label_at(labels, i)),
        Outputs::Labels(l) => l.get(w).map(String::as_str),
        Outputs::Points(_) => None,
    }
}

/// An index with its label: `3 "Rome"`, or `3`.
pub(crate) fn named(i: usize, label: Option<&str>) -> String {
    match label {
        Some(l) => format!("{i} {l:?}"),
        None => i.to_string(),
    }
}

/// The `neighbors` check and the number of ordered pairs with no guarantee.
fn neighbors_report(p: &Prepared) -> (Check, usize) {
    let n = p.n;
    // Components of the η-graph and the worst stretch d_G/d over connected pairs.
    let mut comp = vec![usize::MAX; n];
    let mut ncomp = 0;
    for s in 0..n {
        if comp[s] != usize::MAX {
            continue;
        }
        let mut stack = vec![s];
        comp[s] = ncomp;
        while let Some(x) = stack.pop() {
            for y in 0..n {
                if comp[y] == usize::MAX && p.scope[x * n + y] {
                    comp[y] = ncomp;
                    stack.push(y);
                }
            }
        }
        ncomp += 1;
    }
    let unguarded = (0..n * n).filter(|&i| comp[i / n] != comp[i % n]).count();
    // O(n³): the stretch is computed up to n = 1000 inputs, one source per task.
    let stretch_known = n <= 1000;
    let stretch = if stretch_known {
        let adj = scope_graph(p);
        (0..n)
            .into_par_iter()
            .map(|s| {
                let dg = p.space.shortest_paths_upper(s, &adj);
                (0..n)
                    .filter(|&t| t != s && dg[t].is_finite() && p.dist[s * n + t].lo > 0.0)
                    .map(|t| dg[t] / p.dist[s * n + t].lo)
                    .fold(1.0f64, f64::max)
            })
            .reduce(|| 1.0, f64::max)
    } else {
        1.0
    };
    let check = Check {
        name: "neighbors".into(),
        verdict: Verdict::Pass,
        detail: {
            let chained = if stretch_known {
                format!("every connected pair gets ε·d_G(u,v) ≤ ε·{stretch:.6}·d(u,v)")
            } else {
                "every connected pair gets ε·d_G(u,v) (stretch not computed for n > 1000)"
                    .to_string()
            };
            format!(
                "privacy claimed within η only; by chaining along shortest η-paths {chained}; η-graph has {ncomp} component(s), {unguarded} ordered pairs across components have no guarantee"
            )
        },
        witness: None,
    };
    (check, unguarded)
}

#[allow(clippy::too_many_arguments)]
fn packing_check(
    file: &MechanismFile,
    p: &Prepared,
    space: &Space,
    sites: Option<&[usize]>,
    pc: &crate::io::PackingClaim,
    eps: &Q,
    tight: Option<&EpsEnclosure>,
    losses: Option<&loss::Losses>,
    opts: &Options,
) -> Check {
    let fail = |detail: String| Check {
        name: "packing".into(),
        verdict: Verdict::Fail,
        detail,
        witness: None,
    };
    let Some(sites) = sites.filter(|_| file.cost.is_none()) else {
        return fail("the packing bound (Imola et al. Theorem 3) needs outputs in the metric space and the default cost d".into());
    };
    let packing = match bounds::verify_packing(space, &pc.centers, &pc.radius, sites, opts.max_prec)
    {
        Ok(pk) => pk,
        Err(bounds::PackingError::Undecided { s, output }) => {
            return Check {
                name: "packing".into(),
                verdict: Verdict::Inconclusive,
                detail: format!("cannot decide d({s}, {output}) ≤ r"),
                witness: None,
            }
        }
        Err(e) => return fail(format!("not a packing: {e}")),
    };
    let n = p.n;
    // With `neighbors`, the guarantee between w and a center s is ε·d_G(w, s) along
    // shortest η-paths: O(c·n²) to compute, so only up to n = 1000 (beyond, +∞: the bounds
    // become 0, still valid).
    let scoped = file.within.is_some();
    let chained: Option<Vec<Vec<f64>>> = (scoped && n <= 1000).then(|| {
        let adj = scope_graph(p);
        packing
            .centers
            .iter()
            .map(|&s| p.space.shortest_paths_upper(s, &adj))
            .collect()
    });
    let mut center_index = vec![usize::MAX; n];
    for (i, &c) in packing.centers.iter().enumerate() {
        center_index[c] = i;
    }
    let dist_upper = |w: usize, s: usize| -> f64 {
        match (&chained, scoped) {
            (Some(tab), _) => tab[center_index[s]][w],
            (None, true) => f64::INFINITY,
            (None, false) => p.dist[w * n + s].hi,
        }
    };
    let at_claim = bounds::bound_eq7(&packing, n, f64_up(eps), &dist_upper);
    // Bound (8) needs Q ≥ the guarantee's distance between any two centers: d, or the
    // chained d_G with `neighbors` (+∞ across η-components: then (8) is 0).
    let q_hi = if scoped {
        packing
            .centers
            .iter()
            .flat_map(|&s| packing.centers.iter().map(move |&t| (s, t)))
            .filter(|(s, t)| s != t)
            .map(|(s, t)| dist_upper(t, s))
            .fold(0.0, f64::max)
    } else {
        packing.q.hi
    };
    let eq8 = bounds::bound_eq8(&packing, q_hi, f64_up(eps));
    let mut detail = format!(
        "valid ({}, r = {}, Q ≤ {:.6e})-packing{}; at the claimed ε the bound (7) gives L ≥ {:.9e} (bound (8): {:.9e})",
        packing.centers.len(),
        f64_nearest_str(&packing.radius),
        q_hi,
        if scoped { " (Q in the chained distance d_G)" } else { "" },
        at_claim.lo,
        eq8.lo
    );
    let mut verdict = Verdict::Pass;
    if let (Some(t), Some(l)) = (tight, losses) {
        if let Some(hi) = &t.hi {
            let at_tight = bounds::bound_eq7(&packing, n, f64_up(hi), &dist_upper);
            detail.push_str(&format!(
                "; at the matrix's tight ε ≤ {:.9e}: L ≥ {:.9e}, matrix L(M) ≤ {:.9e}",
                f64_up(hi),
                at_tight.lo,
                l.max.hi
            ));
            if l.max.hi < at_tight.lo {
                verdict = Verdict::Fail;
                detail.push_str(" — the matrix's loss is below a valid lower bound (impossible for a private mechanism)");
            }
        }
    }
    Check {
        name: "packing".into(),
        verdict,
        detail,
        witness: None,
    }
}

/// The human-readable report.
pub fn human(report: &Report) -> String {
    let mut s = String::new();
    let v = match report.verdict {
        Verdict::Pass => "PASS",
        Verdict::Fail => "FAIL",
        Verdict::Inconclusive => "INCONCLUSIVE",
    };
    let (per, unit) = match report.unit {
        Some(u) => (format!(" per {u}"), format!(" {u}")),
        None => (String::new(), String::new()),
    };
    let required = match report.epsilon_required {
        Some(e) => format!(", required ε = {}{per}", plain(e)),
        None => String::new(),
    };
    s.push_str(&format!(
        "mdp-audit: {v}  (n = {}, K = {}, claimed ε = {}{per}{required})\n",
        report.n,
        report.k,
        plain(report.epsilon_claimed)
    ));
    s.push_str(&format!(
        "  metric                  {} (digest {})\n",
        report.metric, report.metric_digest
    ));
    let iv = |x: [Option<f64>; 2]| match x {
        [Some(a), Some(b)] => format!("[{a:.12e}, {b:.12e}]"),
        [Some(a), None] => format!("[{a:.12e}, +inf]"),
        _ => "not computed".into(),
    };
    s.push_str(&format!(
        "  tight pure ε            {}\n",
        iv(report.epsilon_tight)
    ));
    if !report.delta.is_nan() {
        s.push_str(&format!(
            "  tight ε at δ = {:<8}  {}\n",
            report.delta,
            iv(report.epsilon_delta_tight)
        ));
    }
    if let Some(l) = report.loss_max {
        s.push_str(&format!(
            "  loss L(M)               [{:.12e}, {:.12e}]{unit}  (the worst input's expected distance to its release)\n",
            l[0], l[1]
        ));
    }
    if let Some(l) = report.loss_quantile {
        s.push_str(&format!(
            "  loss L_q (q = {})      [{:.12e}, {:.12e}]{unit}  (the q-quantile over inputs of that expected distance, not of the distance)\n",
            report.quantile, l[0], l[1]
        ));
    }
    if let Some(l) = report.expected_loss {
        s.push_str(&format!(
            "  expected loss (prior)   [{:.12e}, {:.12e}]{unit}\n",
            l[0], l[1]
        ));
    }
    for c in &report.checks {
        let tag = match c.verdict {
            Verdict::Pass => "ok  ",
            Verdict::Fail => "FAIL",
            Verdict::Inconclusive => "??  ",
        };
        s.push_str(&format!("  [{tag}] {}: {}\n", c.name, c.detail));
    }
    for w in &report.warnings {
        s.push_str(&format!("  warning: {w}\n"));
    }
    let st = &report.stats;
    if let Some(ss) = &st.structured {
        s.push_str(&format!(
            "  structured audit ({}): passes {} over {} triples, {} settled by box pairs ({:.4} % per pass), {} checked pair by pair ({} ordered pairs in scope), {} exact; {:.3} s\n",
            ss.method,
            ss.passes,
            st.triples,
            ss.triples_settled_by_boxes,
            100.0 * ss.settled_fraction,
            ss.triples_checked_by_pairs,
            ss.pairs_checked,
            ss.exact_triples,
            st.seconds_total
        ));
        return s;
    }
    s.push_str(&format!(
        "  {} ordered pairs × {} outputs = {} triples; exact fallback decided {:.3e} of them; {:.3} s\n",
        st.pairs_in_scope, report.k, st.triples, st.exact_triple_fraction, st.seconds_total
    ));
    s
}

/// The `--json` report text.
pub fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("a report always serializes")
}
