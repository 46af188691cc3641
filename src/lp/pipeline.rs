//! The certified pipeline every LP mechanism shares (`spec/lp.md`): float solve
//! ([`super::solver`]) → exact repair ([`super::repair`], proved private by the exact
//! check) → float dual → `lp_dual` lower bound proved exactly by the kernel
//! ([`crate::certificate`]). The reported gap is the repaired matrix's exact loss minus
//! that bound. OPTMech, PMO, SpannerMech, ConstOPTMech and Benders all end here.

use super::compact;
use super::error::{invalid, BuildError};
use super::model::{Objective, PrivacyLp, CAPS, SIMPLEX_CAP};
use super::solver::{solve_float, Solver};
use super::{block_ipm, repair, simplex, Dual};
use crate::certificate;
use crate::exact::{f64_down, q_from_f64, Q};
use crate::io::lp_dual::{Bounded, LpDual};
use crate::mechanism::Matrix;
use crate::progress::Progress;

/// Largest uniform mix accepted from the interior point solver before falling back to the
/// simplex (an interior solution is private only to the solver's tolerance).
pub const MAX_IPM_MIX: f64 = 1e-6;

/// That fallback is taken only for working sets up to this many rows: past it the simplex
/// would take hours (microlp needed 19 s for the 26 100 rows of OPTMech at n = 30; Rome
/// n = 200 ends with 349 000), so the interior point's repaired mechanism is kept and the
/// certified-gap message names the repair's excess (spec/lp.md §4). The same limit holds
/// for the simplex's dual when the interior point's dual proof falls short
/// (`certify_dual`; spec/lp.md §4.7).
pub const SIMPLEX_FALLBACK_ROWS: usize = 50_000;

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
    let rows_total = lp.rows_total();
    // Past the limit the max loss is solved by column generation (spec/lp.md §4.7); an expected
    // loss's would be slower than Clarabel's lazy rows (§4.3).
    let max_loss = lp.objective == super::model::Objective::MaxLoss;
    if solver == Solver::Block && rows_total > block_ipm::MAX_ROWS && !max_loss {
        return Err(invalid(
            "solver",
            format!(
                "block holds every privacy row of an expected loss ({rows_total} here): above its limit of {} rows; use auto (within η the localized LP, else lazy rows) or ipm (lazy rows)",
                block_ipm::MAX_ROWS
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
            Err(e) => return Err(e.into()),
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
    let rep = rep.ok_or(BuildError::Repair)?;
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
    d: Dual,
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
    let (mut cert, mut bound) = prove(lp, &d, pb, None)?;
    let mut chosen = d;
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
    // Past SIMPLEX_FALLBACK_ROWS working rows the simplex's dual LP takes hours (microlp
    // needed 19 s for 26 100 rows): it is not started, and the gap note says why. This
    // was the stall of issue 38 (spec/lp.md §4.7): 200 random planar points at ε = 2 ended
    // with an interior point dual 7.4·10⁻⁸ (relative) short of the 10⁻⁷ target and
    // started microlp on 1 573 899 rows.
    let tol = target * objective.abs() + 1e-12;
    let dual_can_close = upper.is_none_or(|u| u - objective <= target * u.abs());
    let short = f64_down(&bound) < objective - tol;
    if let Some(rows) = fallback.filter(|rows| short && rows.len() > SIMPLEX_FALLBACK_ROWS) {
        progress.note(&format!(
            "lp: the interior point dual proves {:.3e} below the LP value; the simplex's dual on the {} working rows is not tried (over {SIMPLEX_FALLBACK_ROWS} rows it takes hours)",
            objective - f64_down(&bound),
            rows.len()
        ));
    }
    if let Some(rows) =
        fallback.filter(|rows| simplex_dual_worth_trying(short, dual_can_close, rows.len()))
    {
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
            let (c2, b2) = prove(lp, &d2, pb, None)?;
            if b2 > bound {
                (cert, bound, chosen) = (c2, b2, d2);
            }
        }
        seconds += t.elapsed().as_secs_f64();
        progress.finish(&format!(
            "lp: dual certificate proves loss ≥ {:.12e} ({:.1} s)",
            f64_down(&bound),
            t.elapsed().as_secs_f64()
        ));
    }
    // The compact certificate (spec/lp.md §5.1).
    (cert, bound) = compacted(lp, pb, &chosen, (cert, bound), upper, target, progress);
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

/// Whether [`certify_dual`] solves the simplex's dual LP on `rows` working rows: only when
/// the interior point's proof falls `short` of the target, never past
/// [`SIMPLEX_FALLBACK_ROWS`] rows (hours of microlp: the stall of issue 38), and on more
/// than [`CHEAP_DUAL_ROWS`] rows only if the written matrix is close enough that the dual
/// can close the gap (`dual_can_close`).
fn simplex_dual_worth_trying(short: bool, dual_can_close: bool, rows: usize) -> bool {
    short && rows <= SIMPLEX_FALLBACK_ROWS && (dual_can_close || rows <= CHEAP_DUAL_ROWS)
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
    // No message within the target, nor for a gap that is not a number.
    if gap.is_nan() || gap <= target {
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
/// a proven one), each multiplier written with `digits` significant digits, or as the
/// shortest decimal that reads back as its double (`None`); an all-zero β becomes all
/// ones (any β ≥ 0 not all 0 is valid).
pub fn lp_dual_of(lp: &PrivacyLp, d: &Dual, digits: Option<usize>) -> LpDual {
    let short = |x: f64| decimal(x, digits);
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
            .map(|b| b.iter().map(|&x| short(x)).collect()),
        gamma: d
            .gamma
            .iter()
            .map(|&(u, v, k, g)| (u as usize, v as usize, k as usize, short(g)))
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

/// `x` as a decimal of `digits` significant digits, or the shortest that reads back as
/// `x` (`None`): a multiplier, where any value ≥ 0 is valid and the bound is proved from
/// what is written, so it need not be the double's exact expansion (up to 1 074 digits).
/// Non-finite values are kept as they are.
fn decimal(x: f64, digits: Option<usize>) -> Q {
    if !x.is_finite() {
        return q_from_f64(x);
    }
    let s = match digits {
        Some(d) => format!("{:.*e}", d.saturating_sub(1), x),
        None => format!("{x:e}"),
    };
    crate::exact::parse_rational(&s).unwrap_or_else(|_| q_from_f64(x))
}

/// The claim for a safe f64 bound `fast`: `fast` rounded down to 16 significant digits,
/// so the claim is ≤ the bound the auditor reproduces and short to write.
fn claim(fast: f64) -> Q {
    let exact = q_from_f64(fast);
    let Ok(q) = crate::exact::parse_rational(&format!("{fast:.15e}")) else {
        return exact;
    };
    if q <= exact {
        return q;
    }
    // One unit of the 16th digit lower: |fast|·10⁻¹⁵ ≥ that unit.
    let e = format!("{fast:e}");
    let exp: i64 = e
        .rsplit('e')
        .next()
        .and_then(|x| x.parse().ok())
        .unwrap_or(0);
    let unit = Q::from(10u32).pow(exp - 15);
    let lower = q - unit;
    if lower <= exact {
        lower
    } else {
        exact
    }
}

/// The compact form of the proof (`cert`, `bound`) of the float dual `d` (spec/lp.md
/// §5.1): a vertex of each output's multipliers ([`compact::vertex_per_output`]), then the
/// fewest significant digits of [`compact::DIGITS`]; each step is kept only if the total
/// stays within [`compact::allowance`] of `bound` (`upper`: the written matrix's loss).
fn compacted(
    lp: &PrivacyLp,
    pb: &certificate::Problem,
    d: &Dual,
    (cert, bound): (LpDual, Q),
    upper: Option<f64>,
    target: f64,
    progress: &dyn Progress,
) -> (LpDual, Q) {
    let full = f64_down(&bound);
    let allowance = compact::allowance(full, upper, target);
    let before = cert.gamma.len();
    // Each candidate is judged by its safe f64 bound alone (no rational arithmetic), which
    // is then its claim.
    // Err carries the safe bound that fell short (NaN if none), for the note.
    let within = |d: &Dual, digits: Option<usize>, floor: f64| -> Result<(LpDual, Q), f64> {
        let mut c = lp_dual_of(lp, d, digits);
        let fast = certificate::safe_f64_bound(&c, pb, lp.n, lp.k()).unwrap_or(f64::NAN);
        if !(fast.is_finite() && fast >= floor) {
            return Err(fast);
        }
        c.value = claim(fast);
        let b = c.value.clone();
        Ok((c, b))
    };
    // The vertex may use the allowance (it is what makes the file small); the digits only
    // COMPACT_LOSS more (a few bytes per multiplier).
    let t = std::time::Instant::now();
    let vertex = compact::vertex_per_output(lp, d, allowance / 2.0);
    let (d, mut best) = match &vertex {
        Ok((v, _)) => match within(v, None, full - allowance) {
            Ok(proof) => (v, proof),
            Err(short) => {
                progress.note(&format!(
                    "lp: compact certificate: the vertex per output ({} multipliers) proves {short:.12e}, more than {allowance:.1e} below the full {full:.12e}; not used",
                    v.gamma.len(),
                ));
                (d, (cert, bound))
            }
        },
        Err(why) => {
            progress.note(&format!(
                "lp: compact certificate: no vertex per output ({why})"
            ));
            (d, (cert, bound))
        }
    };
    let reached = f64_down(&best.1);
    let floor = reached - (compact::COMPACT_LOSS * reached.abs() + 1e-12);
    let digits = compact::DIGITS
        .iter()
        .copied()
        .find(|&s| match within(d, Some(s), floor) {
            Ok(proof) => {
                best = proof;
                true
            }
            Err(_) => false,
        });
    progress.note(&format!(
        "lp: compact certificate: {} of {before} multipliers{}, {} digits, proving {:.12e} (the full one {full:.12e}; {:.1} s)",
        best.0.gamma.len(),
        match &vertex {
            Ok((_, kept)) if best.0.gamma.len() < before =>
                format!(" (a vertex for {kept} of {} outputs)", lp.k()),
            _ => String::new(),
        },
        digits.map_or("up to 17".to_string(), |d| d.to_string()),
        f64_down(&best.1),
        t.elapsed().as_secs_f64(),
    ));
    best
}

/// Turn a float dual into an `lp_dual` certificate and prove its bound exactly (the
/// claimed value is the proven one).
fn prove(
    lp: &PrivacyLp,
    d: &Dual,
    pb: &certificate::Problem,
    digits: Option<usize>,
) -> Result<(LpDual, Q), BuildError> {
    let mut cert = lp_dual_of(lp, d, digits);
    let rejected = |e: certificate::Rejected| BuildError::CertificateRejected(e.0);
    // The safe f64 bound (directed rounding; spec/lp.md §5) is the claim whenever it is
    // within the float LP value's tolerance: the auditor then reproduces it without
    // rational arithmetic. Otherwise (float cancellation on extreme constants, or an
    // overflow) the exact bound is computed and the larger one claimed.
    let fast = certificate::safe_f64_bound(&cert, pb, lp.n, lp.k()).map_err(rejected)?;
    let objective = d.objective;
    let bound = if fast.is_finite() && fast >= objective - (1e-9 * objective.abs() + 1e-12) {
        claim(fast)
    } else {
        let exact = certificate::proven_bound(&cert, pb, lp.n, lp.k()).map_err(rejected)?;
        if fast.is_finite() && claim(fast) > exact {
            claim(fast)
        } else {
            exact
        }
    };
    cert.value = bound.clone();
    Ok((cert, bound))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compact certificate (spec/lp.md §5.1) has at most n multipliers per output,
    /// fewer than the interior point's dual, passes the kernel's verifier with its claim,
    /// and proves within its allowance of the full certificate; on several spaces and ε.
    #[test]
    fn compact_certificate_is_a_sparse_valid_near_equal_proof() {
        use crate::exact::Q;
        use crate::mechanisms::optimal::optimal_lp;
        use crate::metric::{MetricKind, Space};
        for (seed, eps) in [
            (1u64, Q::from(1u32)),
            (7, Q::from_signeds(5, 2)),
            (11, Q::from(6u32)),
        ] {
            let pts: Vec<Vec<Q>> = (0..14u64)
                .map(|i| {
                    let h = (i + 3) * (seed * 2654435761 + 97) % 1000;
                    vec![
                        Q::from_signeds(h as i64 % 37, 10),
                        Q::from_signeds(h as i64 % 23, 10),
                    ]
                })
                .collect();
            let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
            let lp = optimal_lp(&space, &eps, 256);
            let silent = crate::progress::Silent;
            let (_, d) = super::super::ipm::solve(&lp, &silent).unwrap();
            let pb = problem(&lp, &eps, None, None, 256);
            let (c0, b0) = prove(&lp, &d, &pb, None).unwrap();
            let (c1, b1) = compacted(
                &lp,
                &pb,
                &d,
                (c0.clone(), b0.clone()),
                None,
                TARGET_GAP,
                &silent,
            );
            let (n, k) = (lp.n, lp.k());
            assert!(
                c1.gamma.len() <= n * k && c1.gamma.len() < c0.gamma.len(),
                "{} of {} multipliers",
                c1.gamma.len(),
                c0.gamma.len()
            );
            let verified = certificate::verify(&c1, &pb, n, k).unwrap();
            assert!(verified >= c1.value && c1.value == b1);
            let (f0, f1) = (f64_down(&b0), f64_down(&b1));
            assert!(
                f1 >= f0 - compact::allowance(f0, None, TARGET_GAP),
                "{f1} < {f0}"
            );
        }
    }

    /// The simplex's dual is never started on a working set past SIMPLEX_FALLBACK_ROWS
    /// (200 planar points at ε = 2 started microlp on 1 573 899 rows and ran for hours),
    /// is tried on small ones whenever the proof falls short, and on mid-sized ones only
    /// when it can close the gap.
    #[test]
    fn simplex_dual_is_never_tried_past_the_fallback_limit() {
        assert!(!simplex_dual_worth_trying(true, true, 1_573_899));
        assert!(!simplex_dual_worth_trying(
            true,
            true,
            SIMPLEX_FALLBACK_ROWS + 1
        ));
        assert!(simplex_dual_worth_trying(true, true, SIMPLEX_FALLBACK_ROWS));
        assert!(simplex_dual_worth_trying(true, false, CHEAP_DUAL_ROWS));
        assert!(!simplex_dual_worth_trying(true, false, CHEAP_DUAL_ROWS + 1));
        assert!(!simplex_dual_worth_trying(false, true, 10));
    }

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
}
