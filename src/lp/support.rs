//! The outputs an LP mechanism uses, and pricing the others (column generation with a
//! certificate; `spec/lp.md` §4.4).
//!
//! OPTMech's optimum leaves many outputs unused: on the first 100 Rome road records at
//! ε = 2/median distance, 41 of the 100 columns are 0. Every privacy row of an unused
//! column is tight (0 ≤ 0), so the lazy rows keep thousands of them (30 000 of the 78 000
//! working rows there) and the interior point takes more iterations and more rounds near
//! that degenerate face. [`solve`] finds the used outputs from the first round's solution,
//! finishes the lazy rounds on the LP over those outputs only (the others fixed at 0: a
//! restriction, so its mechanisms padded with zero columns are mechanisms of the whole LP)
//! and *prices* every other output k: multipliers γ ≥ 0 on k's own rows that keep k's term
//! of the verifier's α_u = min_k [w_u c(u,k) + Σ γ − Σ c_up γ] (`spec/lp.md` §5) at or above
//! the used outputs' minimum. With them the restricted LP's dual is a dual of the whole LP
//! with the same bound. An output that cannot be priced enters the LP and the rounds go on.
//! Nothing here is trusted: the mechanism is repaired and checked exactly, the dual
//! verified exactly, as for every solver.

use super::block_ipm;
use super::model::{Objective, PrivacyLp};
pub use super::used::{spread_outputs, used_outputs, used_outputs_above, SUPPORT_TOL};
use super::{ipm, Row};
use super::{Dual, LpError, Primal};
use crate::progress::Progress;
use rayon::prelude::*;
use std::collections::HashSet;
use std::time::Instant;

/// The shortfall pricing may leave on an input's term, relative to the mean |α_u|: the
/// verifier's bound drops by at most this much per input and unused output.
const PRICE_SLACK: f64 = 1e-11;

/// A row the float primal violates by v = M\[u\]\[k\] − c·M\[v\]\[k\] > 0 costs the exact
/// repair a uniform mix of ≈ 2vK/(c − 1) (`lp::repair`, step 3): below the separation
/// tolerance for c near 1 that is far above the certified-gap target. Rows costing more
/// than this join the working set ([`costly_violations`]).
const MIX_TOL: f64 = 1e-9;

/// [`price`] offers each deficit input u only this many surplus inputs b, those that could
/// cover most of it alone (largest r_b/c_up(u, b)): first 24, then, where those leave a
/// shortfall, 96; an output neither prices enters. Any γ ≥ 0 is a valid certificate, so
/// the restriction costs no soundness, and an output entering that the LP over all its
/// arcs would have priced costs only a column. Planar n = 500, ε = 2 (spec/lp.md §4.7):
/// every output's LP over all its arcs (≈ 1.3 s each) made a pricing pass 312–496 s; the
/// 24 nearest (least c_up) priced none of 287, the 24 of largest reach 430 of 436 (pass
/// 19.7 s), and after the next round 291 of 435, the 96 the 41 others the full LP priced,
/// and the full LP none of those the 96 left (103 entered either way; planar n = 200: the
/// same rows and outputs with or without it). Against the dual of 64 spread outputs' LP,
/// the full LP's tier for the 103 outputs that entered made the pass 299 s instead of 87 s.
const PRICE_ARCS: [usize; 2] = [24, 96];

/// Multipliers γ on privacy rows (u, v, k).
type Gamma = Vec<(u32, u32, u32, f64)>;

/// The LP over the outputs `keep` only (indices into `lp.outputs`, increasing).
pub fn restrict<'a>(lp: &PrivacyLp<'a>, keep: &[usize]) -> PrivacyLp<'a> {
    let kk = lp.k();
    let mut r = lp.clone();
    r.outputs = keep.iter().map(|&k| lp.outputs[k]).collect();
    r.cost_dn = (0..lp.n)
        .flat_map(|u| keep.iter().map(move |&k| lp.cost_dn[u * kk + k]))
        .collect();
    r
}

/// What [`price`] found.
pub struct Priced {
    /// Multipliers on the rows of the outputs not kept (output indices of the whole LP).
    pub gamma: Gamma,
    /// Outputs that could not be priced: they must enter the LP.
    pub entering: Vec<usize>,
}

/// Price every output not in `keep` against `d`, a dual of [`restrict`]`(lp, keep)` (its
/// output indices are positions in `keep`).
///
/// With w the verifier's weights (β normalized, or the prior) and α_u the minimum over the
/// kept outputs of w_u c(u,k) + Σ_{(u,v,k)} γ − Σ_{(v,u,k)} c_up(v,u) γ, an unused output k
/// needs γ ≥ 0 on its rows with r_u + Σ_b γ_{u,b} − Σ_a c_up(a,u) γ_{a,u} ≥ 0 for every u,
/// r_u = w_u c(u,k) − α_u. Inputs with r_u < 0 draw from inputs b with r_b > 0 through
/// the rows (u, b, k), paying c_up(u,b) per unit: a transportation problem with gains,
/// solved as an LP (`cover`; direct rows suffice, since a path through other inputs
/// costs the product of its constants, ≥ the direct one's by the triangle inequality).
/// A greedy cover (cheapest rows first) was measured to fail on 38 of 41 unused outputs
/// of Rome road n = 100 that this LP prices. An output that cannot be priced enters.
pub fn price(lp: &PrivacyLp, keep: &[usize], d: &Dual) -> Priced {
    let (n, kk) = (lp.n, lp.k());
    let w: Vec<f64> = match (&lp.objective, &d.beta) {
        (Objective::MaxLoss, Some(b)) => {
            let total: f64 = b.iter().sum();
            b.iter().map(|x| x / total).collect()
        }
        _ => (0..n).map(|u| lp.prior_f64(u)).collect(),
    };
    let (_, alpha) = d.terms(lp, &w, Some(keep));
    let slack = PRICE_SLACK * alpha.iter().map(|a| a.abs()).sum::<f64>() / n as f64;
    // Rows the certificate may carry: the LP's pairs with constants within the cap.
    let mut allowed = vec![false; n * n];
    for &(u, v) in &lp.pairs {
        allowed[u * n + v] = lp.c_up[u * n + v] <= lp.cap;
    }
    let kept: HashSet<usize> = keep.iter().copied().collect();
    let results: Vec<(usize, Option<Gamma>)> = (0..kk)
        .into_par_iter()
        .filter(|k| !kept.contains(k))
        .map(|k| {
            let r: Vec<f64> = (0..n)
                .map(|u| w[u] * lp.cost_dn[u * kk + k] - alpha[u])
                .collect();
            // A wider LP only while the narrower one left some surplus inputs out.
            let surplus = r.iter().filter(|&&x| x > 0.0).count();
            let mut g = None;
            for a in PRICE_ARCS {
                g = cover(lp, &allowed, &r, slack, k as u32, a);
                if g.is_some() || a >= surplus {
                    break;
                }
            }
            (k, g)
        })
        .collect();
    let mut out = Priced {
        gamma: vec![],
        entering: vec![],
    };
    for (k, g) in results {
        match g {
            Some(g) => out.gamma.extend(g),
            None => out.entering.push(k),
        }
    }
    out
}

/// [`price`], with a note on `progress` of how many outputs it priced (named `what`: the
/// lazy rounds' unused outputs, column generation's outputs outside the LP), how many
/// enter and how long it took.
pub fn price_noted(
    lp: &PrivacyLp,
    keep: &[usize],
    ds: &Dual,
    what: &str,
    progress: &dyn Progress,
) -> Priced {
    let t = Instant::now();
    let priced = price(lp, keep, ds);
    progress.note(&format!(
        "lp: priced {} {what}, {} enter ({:.2} s)",
        lp.k() - keep.len(),
        priced.entering.len(),
        t.elapsed().as_secs_f64()
    ));
    priced
}

/// Who solves the lazy rounds' working sets ([`solve`]).
#[derive(Clone, Copy)]
pub enum Rounds<'a> {
    /// Clarabel (`ipm::solve_rows`).
    Clarabel,
    /// The structured interior point (`block_ipm::solve_rows`), started from the whole LP's
    /// iterate where its every-row phase handed over (spec/lp.md §4.3), else cold (an LP
    /// past that phase's row limit, §4.7).
    Structured(Option<&'a block_ipm::Warm>),
}

/// Lazy rows from `rows`, over the outputs the solution uses (`used`, or
/// [`used_outputs`] after a first round over all), the others priced ([`price`]); the
/// primal and dual of the whole LP. Without unused outputs this is [`ipm::solve_from`].
/// Each round is solved as `rounds` says ([`Rounds`]); a structured solve
/// that stops short (`block_ipm::SHORT_GAP`) still separates, and Clarabel re-solves it
/// only if it is the last round and has at most `ipm::FULL_ROWS` rows (spec/lp.md §4.7).
pub fn solve(
    lp: &PrivacyLp,
    rows: Vec<Row>,
    used: Option<Vec<usize>>,
    rounds: Rounds,
    margin: f64,
    progress: &dyn Progress,
) -> Result<(Primal, Dual), LpError> {
    let one_round = |sub: &PrivacyLp,
                     keep: &[usize],
                     rows: &[Row],
                     present: &HashSet<Row>,
                     round: usize,
                     start: Instant| {
        let clarabel = |why: &str| {
            progress.note(&format!("lp: {why}; Clarabel solves this round"));
            ipm::solve_rows(sub, rows)
        };
        let finish =
            |solved| ipm::finish_round(sub, rows, present, margin, round, start, progress, solved);
        let structured = match rounds {
            Rounds::Structured(warm) => {
                Some(block_ipm::solve_rows(sub, rows, warm, keep, progress))
            }
            Rounds::Clarabel => None,
        };
        let (p, d, mut new) = match structured {
            Some(Ok((s, None))) => finish(s),
            // Stopped short of the accuracy a last round needs: good enough to separate.
            // If it breaks no row, Clarabel solves the round again when it has at most
            // `FULL_ROWS` rows; past that the point is kept (the gap line reports its dual).
            Some(Ok((s, Some(why)))) => match finish(s) {
                done if !done.2.is_empty() => {
                    progress.note(&format!("lp: {why}; its point finds the next round's rows"));
                    done
                }
                _ if rows.len() <= ipm::FULL_ROWS => finish(clarabel(&why)?),
                done => {
                    progress.note(&format!(
                        "lp: {why}; kept: {} rows are more than Clarabel solves in reasonable time ({})",
                        rows.len(),
                        ipm::FULL_ROWS
                    ));
                    done
                }
            },
            Some(Err(e)) => finish(clarabel(&e.to_string())?),
            None => finish(ipm::solve_rows(sub, rows)?),
        };
        if new.is_empty() && matches!(rounds, Rounds::Structured(_)) {
            new = costly_violations(sub, &p.m, present);
            if !new.is_empty() {
                progress.note(&format!(
                    "lp: {} rows violated by less than the separation tolerance would cost the repair a mix above {MIX_TOL:.0e}: they join the working set",
                    new.len()
                ));
            }
        }
        Ok::<_, LpError>((p, d, new))
    };
    let start = Instant::now();
    let kk = lp.k();
    // The outputs to solve over: `used` when given (a converged structured iterate's
    // support, spec/lp.md §4.4), else those of a first round over every output.
    let (mut all, mut keep, mut round) = match used {
        Some(keep) if !keep.is_empty() && keep.len() < kk => (rows, keep, 0),
        _ => {
            let present: HashSet<Row> = rows.iter().copied().collect();
            let all: Vec<usize> = (0..kk).collect();
            let (p0, d0, new) = one_round(lp, &all, &rows, &present, 0, start)?;
            if new.is_empty() {
                return Ok((p0, d0));
            }
            let mut all = rows;
            all.extend(new);
            let keep = used_outputs(&p0.m, kk);
            if keep.len() == kk && matches!(rounds, Rounds::Clarabel) {
                return ipm::solve_rounds(lp, all, margin, 1, start, progress);
            }
            (all, keep, 1)
        }
    };
    // `all` holds, in the whole LP's indices, the working rows of the kept outputs and the
    // candidate rows of the others (used when they enter).
    progress.note(&format!(
        "lp: {} of {kk} outputs used; solving over them, pricing the others",
        keep.len()
    ));
    loop {
        let mut pos = vec![u32::MAX; kk];
        for (j, &k) in keep.iter().enumerate() {
            pos[k] = j as u32;
        }
        let sub = restrict(lp, &keep);
        let mut sub_rows: Vec<Row> = all
            .iter()
            .filter(|r| pos[r.2 as usize] != u32::MAX)
            .map(|&(u, v, k)| (u, v, pos[k as usize]))
            .collect();
        let mut present: HashSet<Row> = sub_rows.iter().copied().collect();
        // Lazy rounds over the kept outputs, pricing the others after each: an output
        // that cannot be priced against a round's dual enters at once, with the rows the
        // round broke, instead of after the restricted LP has converged (Rome n = 200:
        // 15 outputs entering after convergence cost 6 of 10 rounds).
        let entering = loop {
            let (ps, ds, new) = one_round(&sub, &keep, &sub_rows, &present, round, start)?;
            round += 1;
            let priced = price_noted(lp, &keep, &ds, "unused outputs", progress);
            if new.is_empty() && priced.entering.is_empty() {
                let (mut p, d) = lift(lp, &keep, ps, ds, priced.gamma);
                (p.rounds, p.seconds) = (round, start.elapsed().as_secs_f64());
                return Ok((p, d));
            }
            present.extend(new.iter().copied());
            sub_rows.extend(new);
            if !priced.entering.is_empty() {
                break priced.entering;
            }
        };
        // The restricted rounds' rows, and the candidate rows of every output not kept
        // (the entering ones among them).
        let mut next: Vec<Row> = sub_rows.iter().map(|&r| to_whole(&keep, r)).collect();
        next.extend(all.iter().filter(|r| pos[r.2 as usize] == u32::MAX));
        all = next;
        keep.extend(entering);
        keep.sort_unstable();
    }
}

/// The primal and dual of the whole LP from those of [`restrict`]`(lp, keep)` (`ps`, `ds`)
/// and the multipliers [`price`] found for the other outputs against `ds`: the mechanism
/// padded with zero columns, the rows and multipliers in the whole LP's output indices.
pub fn lift(lp: &PrivacyLp, keep: &[usize], ps: Primal, ds: Dual, priced: Gamma) -> (Primal, Dual) {
    let kk = lp.k();
    let mut m = vec![0.0; lp.n * kk];
    for u in 0..lp.n {
        for (j, &k) in keep.iter().enumerate() {
            m[u * kk + k] = ps.m[u * keep.len() + j];
        }
    }
    let mut rows: Vec<Row> = ps.rows.iter().map(|&r| to_whole(keep, r)).collect();
    rows.extend(priced.iter().map(|&(u, v, k, _)| (u, v, k)));
    let mut gamma: Gamma = ds
        .gamma
        .iter()
        .map(|&(u, v, j, g)| (u, v, keep[j as usize] as u32, g))
        .collect();
    gamma.extend(priced);
    (
        Primal { m, rows, ..ps },
        Dual {
            gamma,
            seconds: 0.0,
            ..ds
        },
    )
}

/// Row (u, v, j) of [`restrict`]`(lp, keep)` in the whole LP's output indices.
fn to_whole(keep: &[usize], (u, v, j): Row) -> Row {
    (u, v, keep[j as usize] as u32)
}

/// The rows not in `present` that `m` (n×K, row-major) violates at all, by v with
/// 2vK > [`MIX_TOL`]·(c_dn − 1): those that would cost the repair a mix above it. The
/// structured interior point's primals satisfy their own rows to ≈ 10⁻¹⁴, so the repair's
/// mix comes from the rows left out (Rome n = 200: 4·10⁻⁷ without this).
fn costly_violations(lp: &PrivacyLp, m: &[f64], present: &HashSet<Row>) -> Vec<Row> {
    let kk = lp.k() as f64;
    super::simplex::rows_where(lp, m, present, |mu, c, mv| {
        let viol = mu - c * mv;
        viol > 0.0 && 2.0 * viol * kk > MIX_TOL * (c - 1.0)
    })
}

/// [`price`] for one output: the transportation LP (variables γ_{u,b} ≥ 0 from each
/// deficit u to each surplus b, a shortfall s_u ≥ 0 per deficit; minimize Σ s_u subject to
/// Σ_b γ_{u,b} + s_u ≥ −r_u and Σ_u c_up(u,b) γ_{u,b} ≤ r_b) solved by the interior point:
/// γ on the rows (u, b, k), or `None` if the shortfall exceeds `slack` per deficit (or
/// the solve fails). Each deficit u is offered at most `reach` surplus inputs, those of
/// largest r_b/c_up(u, b) ([`PRICE_ARCS`]).
fn cover(
    lp: &PrivacyLp,
    allowed: &[bool],
    r: &[f64],
    slack: f64,
    k: u32,
    reach: usize,
) -> Option<Gamma> {
    use super::sparse::{Sense, SparseLp};
    let n = lp.n;
    let deficits: Vec<usize> = (0..n).filter(|&u| r[u] < 0.0).collect();
    if deficits.is_empty() {
        return Some(vec![]);
    }
    let surplus: Vec<usize> = (0..n).filter(|&b| r[b] > 0.0).collect();
    let mut t = SparseLp::default();
    let mut arcs = vec![];
    let mut by_b: Vec<Vec<(usize, f64)>> = vec![vec![]; n];
    for &u in &deficits {
        let short = t.var(1.0);
        let mut coefs = vec![(short, 1.0)];
        let mut to: Vec<usize> = surplus
            .iter()
            .copied()
            .filter(|&b| allowed[u * n + b])
            .collect();
        if reach < to.len() {
            // Ties broken by index: the same arcs on any number of threads.
            let alone = |b: usize| r[b] / lp.c_up[u * n + b];
            to.sort_unstable_by(|&a, &b| alone(b).total_cmp(&alone(a)).then(a.cmp(&b)));
            to.truncate(reach);
        }
        for b in to {
            let j = t.var(0.0);
            arcs.push((u, b, j));
            coefs.push((j, 1.0));
            by_b[b].push((j, lp.c_up[u * n + b]));
        }
        t.row(coefs, Sense::Ge, -r[u] * (1.0 + 1e-9));
    }
    for &b in &surplus {
        if !by_b[b].is_empty() {
            t.row(std::mem::take(&mut by_b[b]), Sense::Le, r[b]);
        }
    }
    let sol = t.solve_ipm().ok()?;
    if sol.objective > slack * deficits.len() as f64 {
        return None;
    }
    Some(
        arcs.iter()
            .filter(|a| sol.x[a.2] > 0.0)
            .map(|&(u, b, j)| (u as u32, b as u32, k, sol.x[j]))
            .collect(),
    )
}
