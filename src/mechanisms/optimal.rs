//! Certified LP mechanisms: OPTMech (Imola et al. 2022 §2, the minimax-loss LP) and PMO
//! (Bordenabe et al. 2014; Qiu 2024 §2.2, the prior-weighted expected-loss LP with
//! privacy for pairs within η).
//!
//! [`certified`] is the pipeline every LP mechanism shares (`spec/lp.md`): lazy float
//! solve → exact repair (proved private by the exact check) → float dual → exactly
//! verified `lp_dual` lower bound. The reported gap is the repaired matrix's exact loss
//! minus that bound.

use crate::exact::{f64_down, q_from_f64, Q};
use crate::io::lp_dual::{Bounded, LpDual};
use crate::certificate;
use crate::lp::model::{Objective, PairSet, PrivacyLp, CAPS, SIMPLEX_CAP};
use crate::lp::simplex;
use crate::lp::{ipm, repair};
use crate::mechanism::Matrix;
use crate::metric::Space;
use crate::progress::Progress;

/// Initial neighbours per input for the simplex's lazy rows.
pub const INITIAL_NEIGHBOURS: usize = 2;

/// Largest uniform mix accepted from the interior point solver before falling back to the
/// simplex (an interior solution is private only to the solver's tolerance).
pub const MAX_IPM_MIX: f64 = 1e-6;

/// That fallback is taken only for working sets up to this many rows: past it the simplex
/// would take hours (microlp needed 19 s for the 26 100 rows of OPTMech at n = 30; Rome
/// n = 200 ends with 349 000), so the interior point's repaired mechanism is kept and the
/// certified-gap message names the repair's excess (spec/lp.md §4).
pub const SIMPLEX_FALLBACK_ROWS: usize = 50_000;

/// Which float LP solver finds the candidates (spec/lp.md §4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Solver {
    /// Clarabel's interior point method: primal and dual in one solve (default).
    Ipm,
    /// microlp's simplex (vertex solutions; the dual is a second LP solve).
    Simplex,
    /// The structured interior point of [`crate::lp::block_ipm`] on every row, then on the
    /// lazy rounds' working sets from its hand-over iterate (Clarabel where one of those
    /// stops short; spec/lp.md §4.3).
    Block,
    /// [`Solver::Block`] for OPTMech and PMO when its every-row iterate fits the memory
    /// budget (resolved by [`crate::produce`]); else, for a PMO within η, the localized LP
    /// (spec/lp.md §4.6) and [`Solver::Ipm`] if it does not apply or fails; `Ipm` for the
    /// other LPs (measured in spec/lp.md §4.3).
    Auto,
}

/// The float primal and, if asked, the float dual.
fn solve_float(
    lp: &PrivacyLp,
    solver: Solver,
    dual: bool,
    aim: Option<f64>,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<(simplex::Primal, Option<simplex::Dual>), simplex::SolveError> {
    match solver {
        Solver::Ipm => ipm::solve(lp, progress).map(|(p, d)| (p, dual.then_some(d))),
        Solver::Auto => {
            // `auto` reaches here only where the whole LP is past the structured solver's
            // budget (`produce`): the localized LP if it applies, else Clarabel's lazy rows.
            if let Some((p, d)) = solve_localized(lp, aim, max_memory, progress) {
                return Ok((p, dual.then_some(d)));
            }
            ipm::solve(lp, progress).map(|(p, d)| (p, dual.then_some(d)))
        }
        Solver::Block => {
            // The structured interior point on every row; if it stops short, its working
            // set, support and iterate start the lazy rounds, which it solves (spec/lp.md
            // §4.3). Either way the result is
            // repaired and verified exactly; if it fails, the lazy rows start as
            // `--solver ipm`'s do.
            let start = std::time::Instant::now();
            if let Some((p, d)) = solve_localized(lp, aim, max_memory, progress) {
                return Ok((p, dual.then_some(d)));
            }
            let (mut used, mut warm) = (None, None);
            let rows = match crate::lp::block_ipm::solve(lp, aim, progress) {
                Ok(crate::lp::block_ipm::Outcome::Solved(p, d)) => {
                    return Ok((p, dual.then_some(d)));
                }
                Ok(crate::lp::block_ipm::Outcome::WorkingSet(mut rows, u, w)) => {
                    // The structured rounds serve the max loss (OPTMech); on PMO (Rome500
                    // at ε = 2) they took > 300 s against Clarabel's 106 s (spec/lp.md §4.3).
                    used = u;
                    if lp.objective == Objective::MaxLoss {
                        warm = Some(w);
                    }
                    let mut seen: std::collections::HashSet<_> = rows.iter().copied().collect();
                    rows.extend(
                        simplex::initial_rows(lp, 2)
                            .into_iter()
                            .filter(|r| seen.insert(*r)),
                    );
                    rows.sort_unstable();
                    rows
                }
                Err(e) => {
                    progress.note(&format!(
                        "lp: {e}; the lazy rows start from the nearest neighbours instead"
                    ));
                    ipm::start_rows(lp)
                }
            };
            let margin = crate::lp::block_ipm::NEAR_TIGHT;
            crate::lp::support::solve(lp, rows, used, warm.as_deref(), margin, progress).map(
                |(mut p, d)| {
                    // The primal's seconds include the structured phase.
                    p.seconds = start.elapsed().as_secs_f64();
                    (p, dual.then_some(d))
                },
            )
        }
        Solver::Simplex => {
            let p = simplex::solve_primal(lp, INITIAL_NEIGHBOURS, progress)?;
            let d = if dual {
                Some(simplex::solve_dual(lp, &p.rows)?)
            } else {
                None
            };
            Ok((p, d))
        }
    }
}

/// The localized LP (spec/lp.md §4.6) when it applies: solved by the structured interior
/// point on each output's neighbourhood, its mechanism completed. Absent variables that
/// price in against its dual become seeds of their outputs' neighbourhoods and the LP is
/// solved again (at most [`LOCAL_ROUNDS`] times). `None` (with a note) when it does not
/// apply, fails, or its completed loss is further from its dual's bound than the aim (else
/// [`crate::lp::block_ipm::SOLVED_GAP`]): the whole LP is then solved.
fn solve_localized(
    lp: &PrivacyLp,
    aim: Option<f64>,
    max_memory: u64,
    progress: &dyn Progress,
) -> Option<(simplex::Primal, simplex::Dual)> {
    use crate::lp::{block_ipm, local};
    let mut seeds = local::cells(lp)?;
    let start = std::time::Instant::now();
    for round in 1..=LOCAL_ROUNDS {
        let Some(keep) = local::neighbourhoods(lp, &seeds) else {
            if round > 1 {
                progress.note(
                    "lp: the grown neighbourhoods hold over half the variables; solving the whole LP",
                );
            }
            return None;
        };
        let held: usize = keep.iter().map(Vec::len).sum();
        let need = block_ipm::local_memory_estimate(lp, &keep);
        if need > max_memory {
            progress.note(&format!(
                "lp: the localized LP ({held} of {} variables) needs about {} MiB, over --max-memory; not localized",
                lp.n * lp.k(),
                need >> 20
            ));
            return None;
        }
        progress.note(&format!(
            "lp: localized LP (round {round}): {held} of {} variables (outputs' neighbourhoods, chained decay {})",
            lp.n * lp.k(),
            local::DECAY
        ));
        let found = match block_ipm::solve_local(lp, &keep, aim, progress) {
            Ok(x) => x,
            Err(e) => {
                progress.note(&format!("lp: {e}; solving the whole LP"));
                return None;
            }
        };
        let (mut p, d) = (found.primal, found.dual);
        let spills = local::complete(lp, &mut p.m, &keep);
        let (upper, r) = local::repaired_loss_estimate(lp, &p.m);
        let slack = match aim {
            Some(a) => a * upper.abs(),
            None => block_ipm::SOLVED_GAP * (1.0 + upper.abs()),
        };
        if upper - d.objective <= slack {
            p.objective = upper;
            p.seconds = start.elapsed().as_secs_f64();
            return Some((p, d));
        }
        if found.entering.is_empty() && spills.is_empty() || round == LOCAL_ROUNDS {
            progress.note(&format!(
                "lp: the localized LP's completed loss {upper:.10e} (the repair's mix ≈ {r:.1e} included) is {:.1e} above its bound {:.10e}; solving the whole LP",
                upper - d.objective,
                d.objective
            ));
            return None;
        }
        progress.note(&format!(
            "lp: {} absent variables price in (the bound falls {:.1e} short) and {} completed entries spill over {:.0e} (the repair's mix ≈ {r:.1e}): they join their outputs' neighbourhoods",
            found.entering.len(),
            found.shortfall,
            spills.len(),
            local::SPILL
        ));
        for (u, k) in found.entering.into_iter().chain(spills) {
            seeds[k as usize].push(u);
        }
    }
    None
}

/// Most solves of the localized LP before the whole LP is solved instead.
const LOCAL_ROUNDS: usize = 3;

/// A certified LP mechanism and what was measured while building it.
pub struct Built {
    pub matrix: Matrix,
    pub certificate: Option<LpDual>,
    /// The float LP optimum (with the primal's rounded-down constants).
    pub lp_objective: f64,
    /// The certified lower bound (rounded down), when a dual was computed.
    pub lower_bound: Option<f64>,
    /// Privacy rows of the LP's pair set, and those the lazy solve generated.
    pub rows_total: usize,
    pub rows_generated: usize,
    pub rounds: usize,
    /// Uniform-mixing weight of the repair.
    pub t: f64,
    /// The cap on the privacy constants the float solves used (spec/lp.md §2).
    pub cap: f64,
    pub seconds_primal: f64,
    pub seconds_dual: f64,
}

/// Why a build stopped.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A parameter out of its domain; `field` is its name (`k`, `prior`, `outputs`).
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// The float solver or the exact repair failed.
    #[error("{0}")]
    Solver(String),
}

/// A [`BuildError::Invalid`].
pub fn invalid(field: &str, message: impl Into<String>) -> BuildError {
    BuildError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// Solve `lp` with lazy rows, repair it into a mechanism the exact check proves private at
/// `claim_eps` within `claim_within`, and (if `dual`) certify a lower bound on the LP's
/// objective for every mechanism private at `claim_eps` (valid because `lp.eps` =
/// `claim_eps` for OPTMech and PMO). `cost` is the explicit cost matrix the LP used, if
/// any (the verifier reads the same one from the file). `aim` is a certified relative gap
/// the caller is content with (`mdp build pmo --gap`): the structured interior point stops
/// once it expects to reach it (Clarabel and the simplex solve to their own tolerances),
/// and the gap note names it; by default the target is [`TARGET_GAP`].
#[allow(clippy::too_many_arguments)]
pub fn certified(
    lp: &PrivacyLp,
    claim_eps: &Q,
    claim_within: Option<&Q>,
    cost: Option<&[Q]>,
    dual: bool,
    solver: Solver,
    aim: Option<f64>,
    max_memory: u64,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    // On a numerical failure, retry with a lower cap on the constants (spec/lp.md §2); the
    // simplex starts at its own cap.
    let rows_total = lp.pairs.len() as u64 * lp.k() as u64;
    if solver == Solver::Block && rows_total > crate::lp::block_ipm::MAX_ROWS {
        return Err(invalid(
            "solver",
            format!(
                "block holds every privacy row ({rows_total} here): above its limit of {} rows; use --solver auto (for PMO within η the localized LP, else lazy rows) or ipm (lazy rows)",
                crate::lp::block_ipm::MAX_ROWS
            ),
        ));
    }
    let mut lp_capped;
    let mut lp = lp;
    let mut attempt = 0;
    if solver == Solver::Simplex && lp.cap > SIMPLEX_CAP {
        lp_capped = lp.clone_with_cap(SIMPLEX_CAP);
        lp = &lp_capped;
        attempt = CAPS.iter().position(|&c| c == SIMPLEX_CAP).unwrap_or(0);
    }
    let (primal, dual_sol) = loop {
        match solve_float(lp, solver, dual, aim, max_memory, progress) {
            Ok(x) => break x,
            Err(e) if attempt + 1 < CAPS.len() => {
                attempt += 1;
                progress.note(&format!(
                    "lp: {e}; retrying with constants capped at {}",
                    CAPS[attempt]
                ));
                let next = lp.clone_with_cap(CAPS[attempt]);
                lp_capped = next;
                lp = &lp_capped;
            }
            Err(e) => return Err(BuildError::Solver(e.to_string())),
        }
    };
    let rep = repair::repair(lp, &primal.m, claim_eps, claim_within, max_prec);
    let inaccurate = rep.as_ref().is_none_or(|r| r.t > MAX_IPM_MIX);
    if solver != Solver::Simplex
        && inaccurate
        && (rep.is_none() || primal.rows.len() <= SIMPLEX_FALLBACK_ROWS)
    {
        // An inaccurate interior point (extreme constants near the cap): the simplex's
        // vertex is exact enough (spec/lp.md §4).
        progress.note(&format!(
            "lp: the interior point solution needed a uniform mix of {:.1e}; re-solving with the simplex",
            rep.as_ref().map_or(1.0, |r| r.t)
        ));
        return certified(
            lp,
            claim_eps,
            claim_within,
            cost,
            dual,
            Solver::Simplex,
            aim,
            max_memory,
            max_prec,
            progress,
        );
    }
    if inaccurate && solver != Solver::Simplex {
        progress.note(&format!(
            "lp: the interior point solution needed a uniform mix of {:.1e}; kept, since its {} working rows are past the simplex fallback's {SIMPLEX_FALLBACK_ROWS}",
            rep.as_ref().map_or(1.0, |r| r.t),
            primal.rows.len()
        ));
    }
    let rep = rep.ok_or_else(|| {
        BuildError::Solver(
            "exact repair failed: no uniform mix up to the limit passes the exact check".into(),
        )
    })?;
    let mut built = Built {
        matrix: rep.matrix,
        certificate: None,
        lp_objective: primal.objective,
        lower_bound: None,
        rows_total: lp.pairs.len() * lp.k(),
        rows_generated: primal.rows.len(),
        rounds: primal.rounds,
        t: rep.t,
        cap: lp.cap,
        seconds_primal: primal.seconds,
        seconds_dual: 0.0,
    };
    if let Some(d) = dual_sol {
        let pb = problem(lp, claim_eps, claim_within, cost, max_prec);
        let fallback = (solver != Solver::Simplex).then_some(primal.rows.as_slice());
        let upper = lp.objective_f64(&built.matrix);
        let proof = certify_dual(
            lp,
            primal.objective,
            Some(upper),
            d,
            &pb,
            fallback,
            aim.unwrap_or(TARGET_GAP),
            progress,
        )?;
        built.seconds_dual = proof.seconds;
        built.lower_bound = proof.lower_bound;
        built.certificate = proof.certificate;
    }
    Ok(built)
}

/// The verifier's view of `lp` with the file's claims: what an `lp_dual` certificate for it
/// is checked against.
pub(crate) fn problem<'p>(
    lp: &'p PrivacyLp,
    claim_eps: &'p Q,
    claim_within: Option<&'p Q>,
    cost: Option<&'p [Q]>,
    max_prec: u64,
) -> certificate::Problem<'p> {
    certificate::Problem {
        space: lp.space,
        eps: claim_eps,
        within: claim_within,
        sites: Some(&lp.outputs),
        cost,
        prior: match &lp.objective {
            Objective::MaxLoss => None,
            Objective::Expected { prior } => Some(prior.as_slice()),
        },
        max_prec,
    }
}

/// A proven `lp_dual` certificate (absent when the proof says nothing, i.e. < 0).
pub(crate) struct Proof {
    pub certificate: Option<LpDual>,
    pub lower_bound: Option<f64>,
    pub seconds: f64,
}

/// Prove the float dual `d` of `lp` (float optimum `objective`) exactly. When the proven
/// bound is visibly below `objective` and `fallback` gives the working rows, the simplex's
/// dual on those rows is tried too and the better proof kept. Shared by the LP mechanisms
/// and Benders (`crate::benders`), whose dual is assembled from master and subproblems.
/// A certified relative gap above `target` gets a note saying why ([`gap_reason`]).
#[allow(clippy::too_many_arguments)]
pub(crate) fn certify_dual(
    lp: &PrivacyLp,
    objective: f64,
    upper: Option<f64>,
    d: simplex::Dual,
    pb: &certificate::Problem,
    fallback: Option<&[(u32, u32, u32)]>,
    target: f64,
    progress: &dyn Progress,
) -> Result<Proof, BuildError> {
    let mut seconds = d.seconds;
    let t_proof = std::time::Instant::now();
    progress.start(
        &format!(
            "lp: proving the dual certificate exactly ({} multipliers)",
            d.gamma.len()
        ),
        None,
    );
    let (mut cert, mut bound) = prove(lp, &d, pb)?;
    progress.finish(&format!(
        "lp: dual certificate proves loss ≥ {:.12e} ({:.1} s)",
        f64_down(&bound),
        t_proof.elapsed().as_secs_f64()
    ));
    // An interior point dual can be inaccurate where constants are extreme: if its
    // proven bound is visibly below the LP value, the simplex's dual LP on the same rows
    // is tried too and the better proof kept. On a large working set it is tried only if
    // it can bring the certified gap to the target, i.e. not when the written matrix's own
    // loss (`upper`) is already more than the target above the LP value (measured: 22 s
    // spent for nothing on MiniLM n = 50, ε = 20); on a small one it is cheap and still
    // tightens the lower bound, a statement about every private mechanism.
    let tol = target * objective.abs() + 1e-12;
    let dual_can_close = upper.is_none_or(|u| u - objective <= target * u.abs());
    if let Some(rows) = fallback.filter(|rows| {
        f64_down(&bound) < objective - tol && (dual_can_close || rows.len() <= CHEAP_DUAL_ROWS)
    }) {
        let t = std::time::Instant::now();
        progress.start(
            &format!(
                "lp: the interior point dual proves {:.3e} below the LP value; solving the simplex's dual on the {} working rows (can take minutes)",
                objective - f64_down(&bound),
                rows.len()
            ),
            None,
        );
        if let Ok(d2) = simplex::solve_dual(lp, rows) {
            let (c2, b2) = prove(lp, &d2, pb)?;
            if b2 > bound {
                (cert, bound) = (c2, b2);
            }
        }
        seconds += t.elapsed().as_secs_f64();
        progress.finish(&format!(
            "lp: dual certificate proves loss ≥ {:.12e} ({:.1} s)",
            f64_down(&bound),
            t.elapsed().as_secs_f64()
        ));
    }
    // Float noise can leave the proof a hair below 0 where the optimum is ≈ 0 (e.g. a
    // prior on one input). The same certificate without γ bounds the loss by
    // Σ_u w_u·min_k cost(u,k) ≥ 0: it is kept when it certifies the LP value to within
    // 10⁻⁹ (absolute) + 10⁻⁷ (relative), and only then (elsewhere a bound of 0 would
    // say nothing).
    if bound < 0u32 {
        let mut trivial = cert.clone();
        trivial.gamma.clear();
        if let Ok(b0) = certificate::proven_bound(&trivial, pb, lp.n, lp.k()) {
            let near = objective - (1e-7 * objective.abs() + 1e-9);
            if f64_down(&b0) >= near {
                trivial.value = b0.clone();
                (cert, bound) = (trivial, b0);
            }
        }
    }
    if let Some(why) = gap_reason(lp, objective, upper, f64_down(&bound), target) {
        progress.note(&why);
    }
    // Every loss is ≥ 0: a certificate proving less says nothing and is not written.
    Ok(if bound >= 0u32 {
        Proof {
            lower_bound: Some(f64_down(&bound)),
            certificate: Some(cert),
            seconds,
        }
    } else {
        Proof {
            lower_bound: None,
            certificate: None,
            seconds,
        }
    })
}

/// Relative certified gap the producers aim for (issue 14).
pub const TARGET_GAP: f64 = 1e-7;

/// Working sets up to this many rows always get the simplex's dual when the interior
/// point's proof falls short ([`certify_dual`]).
const CHEAP_DUAL_ROWS: usize = 10_000;

/// A one-line explanation when the certified relative gap is above [`TARGET_GAP`]: which
/// gap was reached and why. The gap has two parts: the written matrix's loss `upper` above
/// the LP value (the exact repair's uniform mix over the float solver's rounding; large
/// relative to a loss near 0) and the LP value above the proven `bound` (rows left out of
/// the relaxation, or an inaccurate dual).
fn gap_reason(
    lp: &PrivacyLp,
    objective: f64,
    upper: Option<f64>,
    bound: f64,
    target: f64,
) -> Option<String> {
    let n = lp.n;
    let capped = lp
        .pairs
        .iter()
        .filter(|&&(u, v)| lp.c_up[u * n + v] > lp.cap)
        .count();
    gap_message(
        objective,
        upper,
        bound,
        capped,
        lp.pairs.len(),
        lp.cap,
        target,
    )
}

/// [`gap_reason`]'s message from the numbers: `capped` of `pairs` ordered pairs have a
/// constant above `cap`; `target` is the certified relative gap aimed for.
fn gap_message(
    objective: f64,
    upper: Option<f64>,
    bound: f64,
    capped: usize,
    pairs: usize,
    cap: f64,
    target: f64,
) -> Option<String> {
    let top = upper.unwrap_or(objective).max(objective);
    let rel = |x: f64| x / top.abs().max(1e-300);
    let gap = rel(top - bound);
    if !(gap > target) {
        return None;
    }
    let dual = rel(objective - bound);
    let dual_why = if dual <= 0.0 {
        "the dual proves at least the float LP value".to_string()
    } else if dual <= target {
        format!("the dual proves the LP value to {dual:.1e}")
    } else if capped > 0 {
        format!(
            "the dual proves {dual:.1e} below the LP value: {capped} of {pairs} ordered pairs have e^(ε·d) above the solver's cap {cap} and are left out of the relaxation the certificate proves (spec/lp.md §2)"
        )
    } else {
        format!(
            "the dual proves {dual:.1e} below the LP value: the float dual is not accurate enough (no row was left out)"
        )
    };
    let primal = rel(top - objective);
    let primal_why = if primal > target {
        format!(
            "the written matrix's loss is {primal:.1e} above the LP value (the exact repair's uniform mix over the float solver's rounding, spec/lp.md §4); "
        )
    } else {
        String::new()
    };
    Some(format!(
        "lp: certified relative gap {gap:.1e}, above the target {target:.0e}: {primal_why}{dual_why}"
    ))
}

/// A float dual of `lp` as an `lp_dual` certificate, its claimed value 0 (to be replaced by
/// a proven one); an all-zero β becomes all ones (any β ≥ 0 not all 0 is valid).
pub fn lp_dual_of(lp: &PrivacyLp, d: &simplex::Dual) -> LpDual {
    let bounded = match lp.objective {
        Objective::MaxLoss => Bounded::MaxLoss,
        Objective::Expected { .. } => Bounded::ExpectedLoss,
    };
    let mut cert = LpDual {
        bounded,
        value: Q::from(0u32),
        beta: d
            .beta
            .as_ref()
            .map(|b| b.iter().map(|&x| q_from_f64(x)).collect()),
        gamma: d
            .gamma
            .iter()
            .map(|&(u, v, k, g)| (u as usize, v as usize, k as usize, q_from_f64(g)))
            .collect(),
    };
    if cert
        .beta
        .as_ref()
        .is_some_and(|b| b.iter().all(|q| *q == 0u32))
    {
        cert.beta = Some(vec![Q::from(1u32); lp.n]);
    }
    cert
}

/// Turn a float dual into an `lp_dual` certificate and prove its bound exactly (the
/// claimed value is the proven one).
fn prove(
    lp: &PrivacyLp,
    d: &simplex::Dual,
    pb: &certificate::Problem,
) -> Result<(LpDual, Q), BuildError> {
    let mut cert = lp_dual_of(lp, d);
    let rejected =
        |e: certificate::Rejected| BuildError::Solver(format!("own certificate rejected: {}", e.0));
    // The safe f64 bound (directed rounding; spec/lp.md §5) is the claim whenever it is
    // within the float LP value's tolerance: the auditor then reproduces it without
    // rational arithmetic. Otherwise (float cancellation on extreme constants, or an
    // overflow) the exact bound is computed and the larger one claimed.
    let fast = certificate::safe_f64_bound(&cert, pb, lp.n, lp.k()).map_err(rejected)?;
    let objective = d.objective;
    let bound = if fast.is_finite() && fast >= objective - (1e-9 * objective.abs() + 1e-12) {
        q_from_f64(fast)
    } else {
        let exact = certificate::proven_bound(&cert, pb, lp.n, lp.k()).map_err(rejected)?;
        if fast.is_finite() && q_from_f64(fast) > exact {
            q_from_f64(fast)
        } else {
            exact
        }
    };
    cert.value = bound.clone();
    Ok((cert, bound))
}

/// OPTMech: the mechanism with the least worst-case loss max_u Σ_k M\[u\]\[k\] d(u,k) among
/// ε·d-private mechanisms on the space (outputs = inputs).
pub fn optimal(
    space: &Space,
    eps: &Q,
    solver: Solver,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    let lp = optimal_lp(space, eps, max_prec);
    certified(
        &lp,
        eps,
        None,
        None,
        true,
        solver,
        None,
        u64::MAX,
        max_prec,
        progress,
    )
}

/// OPTMech's LP.
pub fn optimal_lp<'a>(space: &'a Space, eps: &Q, max_prec: u64) -> PrivacyLp<'a> {
    PrivacyLp::new(
        space,
        eps.clone(),
        (0..space.n()).collect(),
        Objective::MaxLoss,
        None,
        PairSet::All,
        max_prec,
    )
}

/// PMO parameters (Qiu 2024 §2.2).
pub struct PmoParams<'p> {
    /// Privacy only for pairs with d ≤ η (all pairs if `None`).
    pub within: Option<&'p Q>,
    /// Prior π over the inputs (normalized here); uniform if `None`.
    pub prior: Option<Vec<Q>>,
    /// n×K cost matrix (row-major); d(u, output) if `None`.
    pub cost: Option<Vec<Q>>,
    /// Output k is input `outputs\[k\]`; all inputs if `None`.
    pub outputs: Option<Vec<usize>>,
}

/// PMO's LP; checks the parameters' sizes.
pub fn pmo_lp<'a>(
    space: &'a Space,
    eps: &Q,
    p: &PmoParams,
    max_prec: u64,
) -> Result<PrivacyLp<'a>, BuildError> {
    let n = space.n();
    let outputs = p.outputs.clone().unwrap_or_else(|| (0..n).collect());
    if outputs.is_empty() {
        return Err(invalid("outputs", "at least one output is needed"));
    }
    if let Some(&o) = outputs.iter().find(|&&o| o >= n) {
        return Err(invalid(
            "outputs",
            format!("index {o} is not an input (n = {n})"),
        ));
    }
    let prior = match &p.prior {
        Some(pr) => {
            if pr.len() != n {
                return Err(invalid(
                    "prior",
                    format!("has {} weights, the space has {n} points", pr.len()),
                ));
            }
            if pr.iter().any(|q| *q < 0u32) || pr.iter().all(|q| *q == 0u32) {
                return Err(invalid("prior", "weights must be ≥ 0 and not all 0"));
            }
            let s: Q = pr.iter().sum();
            pr.iter().map(|q| q / &s).collect()
        }
        None => vec![Q::from(1u32) / Q::from(n as u64); n],
    };
    if let Some(c) = &p.cost {
        let k = outputs.len();
        if c.len() != n * k {
            return Err(invalid(
                "cost",
                format!("has {} entries, expected n × K = {} × {}", c.len(), n, k),
            ));
        }
        if let Some(j) = c.iter().position(|q| *q < 0u32) {
            return Err(invalid(
                &format!("cost[{}][{}]", j / k, j % k),
                "costs are ≥ 0",
            ));
        }
    }
    if p.within.is_some_and(|eta| *eta <= 0u32) {
        return Err(invalid("within", "η must be > 0"));
    }
    let pairs = match p.within {
        Some(eta) => PairSet::Within(eta),
        None => PairSet::All,
    };
    Ok(PrivacyLp::new(
        space,
        eps.clone(),
        outputs,
        Objective::Expected { prior },
        p.cost.as_deref(),
        pairs,
        max_prec,
    ))
}

/// PMO: the mechanism with the least expected loss under the prior; `aim`, a certified
/// relative gap in (0, 1) to stop at ([`certified`]; `--gap`); `max_memory`, the budget
/// the localized LP's estimate must fit (spec/lp.md §4.6; `--max-memory`).
#[allow(clippy::too_many_arguments)]
pub fn pmo(
    space: &Space,
    eps: &Q,
    p: &PmoParams,
    solver: Solver,
    aim: Option<f64>,
    max_memory: u64,
    max_prec: u64,
    progress: &dyn Progress,
) -> Result<Built, BuildError> {
    if let Some(a) = aim.filter(|a| !(*a > 0.0 && *a < 1.0)) {
        return Err(invalid("gap", format!("{a} is not in (0, 1)")));
    }
    let lp = pmo_lp(space, eps, p, max_prec)?;
    certified(
        &lp,
        eps,
        p.within,
        p.cost.as_deref(),
        true,
        solver,
        aim,
        max_memory,
        max_prec,
        progress,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{MetricKind, Space};

    #[test]
    fn gap_message_names_the_part_that_keeps_the_gap_open() {
        // Within the target: no message.
        assert_eq!(
            gap_message(1.0, Some(1.0 + 1e-9), 1.0 - 1e-9, 0, 2, 1e6, TARGET_GAP),
            None
        );
        // The repair's excess dominates (a loss near 0, MiniLM ε = 20).
        let m = gap_message(2.956e-6, Some(3.045e-6), 2.9555e-6, 0, 2, 1e6, TARGET_GAP).unwrap();
        assert!(
            m.contains("2.9e-2") && m.contains("written matrix's loss"),
            "{m}"
        );
        assert!(m.contains("float dual is not accurate"), "{m}");
        // The dual's shortfall from capped rows; no excess to report.
        let m = gap_message(1.0, Some(1.0), 0.99, 3, 10, 1e6, TARGET_GAP).unwrap();
        assert!(
            m.contains("3 of 10 ordered pairs") && !m.contains("written"),
            "{m}"
        );
    }

    /// [`simplex::Dual::sparsify`] (Benders' certificates): the proven bound falls by at
    /// most the dropped multipliers' sum, and the smallest are the ones dropped.
    #[test]
    fn sparsified_dual_loses_at_most_the_dropped_sum() {
        let pts = (0..8)
            .map(|i| vec![Q::from_signeds(7 * i * i % 11, 10)])
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let (eps, eta) = (Q::from(2u32), Q::from_signeds(1, 2));
        let params = PmoParams {
            within: Some(&eta),
            prior: None,
            cost: None,
            outputs: None,
        };
        let lp = pmo_lp(&space, &eps, &params, 256).unwrap();
        let silent = crate::progress::Silent;
        let (p, d) = ipm::solve(&lp, &silent).unwrap();
        let pb = problem(&lp, &eps, Some(&eta), None, 256);
        let bound = |d: simplex::Dual| {
            certify_dual(&lp, p.objective, None, d, &pb, None, TARGET_GAP, &silent)
                .unwrap()
                .lower_bound
                .unwrap_or(0.0)
        };
        let full = bound(d.clone());
        assert!(full > 0.0 && !d.gamma.is_empty());
        let mut dropped_any = false;
        for budget in [0.0, 1e-12, 1e-6, 1e-3, 1e-1, 10.0].map(|b| b * full) {
            let mut s = d.clone();
            let (count, sum) = s.sparsify(budget);
            assert!(sum <= budget, "{sum} > {budget}");
            assert_eq!(s.gamma.len() + count, d.gamma.len());
            let kept_min = s.gamma.iter().map(|g| g.3).fold(f64::INFINITY, f64::min);
            let dropped_max = d
                .gamma
                .iter()
                .filter(|g| !s.gamma.contains(g))
                .map(|g| g.3)
                .fold(0.0, f64::max);
            assert!(
                dropped_max <= kept_min,
                "{dropped_max} dropped, {kept_min} kept"
            );
            let b = bound(s);
            assert!(b >= full - sum - 1e-12 * full, "{b} < {full} - {sum}");
            dropped_any |= count > 0;
        }
        assert!(dropped_any);
    }

    #[test]
    fn objective_f64_is_the_written_matrix_loss() {
        let pts = vec![
            vec![Q::from(0u32)],
            vec![Q::from(1u32)],
            vec![Q::from(3u32)],
        ];
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let eps = Q::from(1u32);
        let lp = PrivacyLp::new(
            &space,
            eps,
            (0..3).collect(),
            Objective::MaxLoss,
            None,
            PairSet::All,
            256,
        );
        let third = Q::from_signeds(1, 3);
        let uniform = Matrix::new(3, 3, vec![third; 9]);
        // Row losses (0+1+3)/3, (1+0+2)/3, (3+2+0)/3: the max is 5/3.
        assert!((lp.objective_f64(&uniform) - 5.0 / 3.0).abs() < 1e-12);
        let prior = vec![
            Q::from_signeds(1, 2),
            Q::from_signeds(1, 4),
            Q::from_signeds(1, 4),
        ];
        let lp = PrivacyLp::new(
            &space,
            Q::from(1u32),
            (0..3).collect(),
            Objective::Expected { prior },
            None,
            PairSet::All,
            256,
        );
        let want = 0.5 * 4.0 / 3.0 + 0.25 * 3.0 / 3.0 + 0.25 * 5.0 / 3.0;
        assert!((lp.objective_f64(&uniform) - want).abs() < 1e-12);
    }
}
