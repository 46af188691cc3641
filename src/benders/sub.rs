//! The Benders subproblem (Qiu 2024 §3.2, eq. (11)–(15)) as a pure function: a subset's
//! free records, given the master's values on the records its rows touch (fixed), solved
//! by the interior point; the result carries the cut and the multipliers that prove it.
//! Input and output are plain serializable data (no space, no globals), so the same call
//! can run on another thread or machine.
//!
//! **Elastic form.** Each row with a fixed end gets a slack priced at `penalty`, so every
//! subproblem is feasible and one solve gives a cut (no separate phase-1 LP and feasibility
//! cuts): its value Q_P(y) ≤ Q(y), equal when the slacks are 0, and P·(violation) pushes
//! the master away from values no x fits. The driver raises P when the loop would end on an
//! infeasible incumbent.
//!
//! **The cut** (valid for *any* multipliers γ ≥ 0 on the subproblem's rows
//! M_a,k − c·M_b,k ≤ 0; `spec/benders.md` §2): with T(u,k) = Σ_{rows (u,·,k)} γ −
//! Σ_{rows (·,u,k)} c·γ and α_i = min_k [w_i c(i,k) + T(i,k)] over the free records i,
//! every feasible (x, y) has Σ w c x ≥ Σ_i α_i + Σ_{b,k} T(b,k)·y_b,k. So
//! θ_s ≥ a + g·y with a = Σ α_i and g = T on the fixed records, for every y whose
//! subproblem is feasible: a valid cut whatever the solver's accuracy and the penalty.
//! Only the free records' cost is in the cut: the fixed records' cost is the master's
//! (the published code counts it twice).

use super::lazy;
use crate::lp::sparse::{Sense, SparseLp};
use crate::lp::LpError;
use serde::{Deserialize, Serialize};

/// One end of a subproblem row.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum End {
    /// A free record (local index).
    Free(u32),
    /// A fixed (master) record (local index).
    Fixed(u32),
}

/// The rows M_a,k ≤ c·M_b,k for every output k.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubPair {
    pub a: End,
    pub b: End,
    /// The primal constant c_dn ≤ e^{ε d(a,b)}.
    pub c: f64,
}

/// A subproblem: everything it needs, in local indices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubInput {
    /// Outputs K.
    pub k: usize,
    pub n_free: usize,
    pub n_fixed: usize,
    /// n_free × K: π_i·c(i,k) (prior weight times cost, rounded down).
    pub cost: Vec<f64>,
    pub pairs: Vec<SubPair>,
    /// n_fixed × K: the master's values of the fixed records.
    pub y: Vec<f64>,
    /// Price of a unit of slack on a row with a fixed end (scaled form).
    pub penalty: f64,
}

/// A cut θ ≥ constant + Σ coef·y, and the multipliers γ (row index pair·K + k) it was
/// computed from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Cut {
    pub constant: f64,
    /// n_fixed × K.
    pub coef: Vec<f64>,
    /// Non-negligible γ, by row (pair index · K + k).
    pub gamma: Vec<(u32, f64)>,
}

/// What a subproblem returns: the elastic optimum Q_P(y), the largest slack (0 when x fits
/// y), the primal (n_free × K) and the cut.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubOutput {
    pub value: f64,
    pub slack: f64,
    pub x: Vec<f64>,
    pub cut: Cut,
}

/// Bounds within this relative distance of the tightest are kept beside it ([`lower`]).
const TIE: f64 = 1e-6;

/// γ below this fraction of the largest one are dropped before the cut is computed (the
/// cut and the certificate then use exactly the kept ones, so validity is unaffected).
const GAMMA_FLOOR: f64 = 1e-13;

/// The rows of `input` in the interior point's scaled form, x\[a\]/c − x\[b\] ≤ 0 with fixed ends
/// moved to the right-hand side and a slack (priced at the penalty) on each such row;
/// variables x (n_free × K) first. With the master's values fixed, the rows between a free
/// record and fixed ones are bounds on one variable, x\[a\]\[k\] ≤ c·y\[b\]\[k\] and
/// x\[b\]\[k\] ≥ y\[a\]\[k\]/c, and only the tightest of each kind binds: when `aggregate`,
/// one row per (free record, output, kind) is kept, the pair that gives it, with every pair
/// whose bound ties it to [`TIE`] (at degenerate master values the full form spreads the
/// multiplier over tied rows; keeping one of them gave weaker cuts and a QIU-P33 instance
/// stalled at a 9.5 % gap after 100 iterations, against 0.14 % with ties kept). Returns
/// the LP and, for each of its privacy rows, the row (pair index · K + k) of `input` it is,
/// so that its dual is that row's multiplier (any γ ≥ 0 gives a valid cut, the others are
/// 0).
fn lower(input: &SubInput, aggregate: bool, present: &[bool]) -> (SparseLp, Vec<u32>) {
    let k = input.k;
    let mut lp = SparseLp::default();
    for i in 0..input.n_free * k {
        lp.var(input.cost[i]);
    }
    for i in 0..input.n_free {
        lp.row((0..k).map(|j| (i * k + j, 1.0)).collect(), Sense::Eq, 1.0);
    }
    // A row with one fixed end bounds its free variable: (index free·K + k, upper?, bound);
    // None for a row between two free records.
    let bound_of = |p: &SubPair, j: usize| match (p.a, p.b) {
        (End::Free(a), End::Fixed(b)) => {
            Some((a as usize * k + j, true, p.c * input.y[b as usize * k + j]))
        }
        (End::Fixed(a), End::Free(b)) => {
            Some((b as usize * k + j, false, input.y[a as usize * k + j] / p.c))
        }
        _ => None,
    };
    // The tightest bound of each kind per free (record, output).
    let mut upper = vec![f64::INFINITY; input.n_free * k];
    let mut lower = vec![f64::NEG_INFINITY; input.n_free * k];
    let mut kept: Vec<(usize, usize)> = vec![];
    for (pi, p) in input.pairs.iter().enumerate() {
        for j in 0..k {
            match bound_of(p, j) {
                Some((i, true, b)) if aggregate => upper[i] = upper[i].min(b),
                Some((i, false, b)) if aggregate => lower[i] = lower[i].max(b),
                Some(_) => kept.push((pi, j)),
                None if present[pi * k + j] => kept.push((pi, j)),
                None => {}
            }
        }
    }
    // Every pair whose bound ties the tightest (to TIE relative) is kept: the interior
    // point then spreads the multiplier over them as the full form would, and the cut
    // keeps a coefficient on each tied master value.
    if aggregate {
        for (pi, p) in input.pairs.iter().enumerate() {
            for j in 0..k {
                if let Some((i, up, b)) = bound_of(p, j) {
                    let t = if up { upper[i] } else { lower[i] };
                    if (b - t).abs() <= TIE * t.abs().max(1e-300) {
                        kept.push((pi, j));
                    }
                }
            }
        }
    }
    let mut rows = Vec::with_capacity(kept.len());
    for (pi, j) in kept {
        let p = &input.pairs[pi];
        let (mut coefs, mut rhs) = (vec![], 0.0);
        match p.a {
            End::Free(a) => coefs.push((a as usize * k + j, 1.0 / p.c)),
            End::Fixed(a) => rhs -= input.y[a as usize * k + j] / p.c,
        }
        match p.b {
            End::Free(b) => coefs.push((b as usize * k + j, -1.0)),
            End::Fixed(b) => rhs += input.y[b as usize * k + j],
        }
        if matches!(p.a, End::Fixed(_)) || matches!(p.b, End::Fixed(_)) {
            let t = lp.var(input.penalty);
            coefs.push((t, -1.0));
        }
        lp.row(coefs, Sense::Le, rhs);
        rows.push((pi * k + j) as u32);
    }
    (lp, rows)
}

/// The cut of multipliers `z` (the scaled rows' duals, γ = z/c; indexed by row
/// pair index · K + k of `input`, 0 on rows the LP left out).
fn cut(input: &SubInput, z: &[f64]) -> Cut {
    let k = input.k;
    let zmax = z.iter().cloned().fold(0.0, f64::max);
    let mut gamma = vec![];
    for (pi, p) in input.pairs.iter().enumerate() {
        for j in 0..k {
            let r = pi * k + j;
            let zr = z[r];
            if zr <= GAMMA_FLOOR * zmax || zr.is_nan() {
                continue;
            }
            gamma.push((r as u32, zr / p.c));
        }
    }
    cut_of(input, gamma)
}

/// The cut θ ≥ Σ_i min_k [π_i c(i,k) + T(i,k)] + Σ T(b,k)·y_b,k of multipliers `gamma`
/// ≥ 0 on rows (pair index · K + k) of `input` (spec/benders.md §3): valid for any such γ,
/// so the driver recomputes it from a remote worker's γ (`remote::output_of`).
pub fn cut_of(input: &SubInput, gamma: Vec<(u32, f64)>) -> Cut {
    let k = input.k;
    let mut t_free = vec![0.0; input.n_free * k];
    let mut t_fixed = vec![0.0; input.n_fixed * k];
    for &(r, g) in &gamma {
        let (pi, j) = (r as usize / k, r as usize % k);
        let p = &input.pairs[pi];
        match p.a {
            End::Free(a) => t_free[a as usize * k + j] += g,
            End::Fixed(a) => t_fixed[a as usize * k + j] += g,
        }
        match p.b {
            End::Free(b) => t_free[b as usize * k + j] -= p.c * g,
            End::Fixed(b) => t_fixed[b as usize * k + j] -= p.c * g,
        }
    }
    let constant = (0..input.n_free)
        .map(|i| {
            (0..k)
                .map(|j| input.cost[i * k + j] + t_free[i * k + j])
                .fold(f64::INFINITY, f64::min)
        })
        .sum();
    Cut {
        constant,
        coef: t_fixed,
        gamma,
    }
}

/// Solve a subproblem (elastic form): its value, slack, primal and cut.
///
/// First with one bound row per (free record, output, kind) (`lower`): at values x fits,
/// its optimum and its dual (0 on the rows left out) are the full form's, and it is
/// smaller (500 Rome road nodes, 3 iterations: the loop 18.6 s → 13.4 s, peak memory
/// 752 → 611 MB; the final polish uses [`solve_primal`] instead).
/// Where x does not fit (slack above `super::SLACK_TOL`), the full form is solved
/// instead: with a slack on every row, its elastic optimum is at least the aggregated one
/// and its cut charges every broken row, which the loop needs to leave infeasible values
/// behind (with the aggregated cut alone, a QIU-P33 instance stalled at a 43 % gap).
pub fn solve_subproblem(input: &SubInput) -> Result<SubOutput, LpError> {
    let out = solve_form(input, true)?;
    if out.slack > super::SLACK_TOL {
        return solve_form(input, false);
    }
    Ok(out)
}

/// The subproblem's value, slack and primal in the aggregated form alone, for a candidate
/// incumbent that needs no cut (the final polish). Its x fit the master's values exactly
/// when the full form's do (at fixed values the rows left out are implied); where the
/// elastic optimum keeps slack, the full form (which charges every broken row) might still
/// fit, so a polish point can be missed, never accepted wrongly. Its cut is valid as any.
/// Measured (500 Rome road nodes, task 2, ε = 10, C = 8, 4 iterations): the polish's three
/// points took 35 s with [`solve_subproblem`] (each needing slack, so solved twice).
pub fn solve_primal(input: &SubInput) -> Result<SubOutput, LpError> {
    solve_form(input, true)
}

/// The rows between two free records start from each free record's rows to this many
/// nearest free records (every output); the others join when a solve breaks them
/// (`solve_form`).
pub const FREE_NEIGHBOURS: usize = 2;

/// The pairs between two free records as [`lazy`] pairs (local free indices, c); `None`
/// for a pair with a fixed end (those rows are kept as [`lower`] says).
fn free_pairs(input: &SubInput) -> Vec<Option<(usize, usize, f64)>> {
    input
        .pairs
        .iter()
        .map(|p| match (p.a, p.b) {
            (End::Free(a), End::Free(b)) => Some((a as usize, b as usize, p.c)),
            _ => None,
        })
        .collect()
}

/// [`solve_subproblem`] in one form (aggregated bound rows or every row). The rows between
/// two free records are lazy ([`super::lazy`]): from each free record's
/// [`FREE_NEIGHBOURS`] nearest, the broken ones join and the LP is
/// solved again until none is broken (rows only join, so this ends); its duals with 0 on
/// the rows left out are then the whole subproblem's, and any γ ≥ 0 gives a valid cut.
fn solve_form(input: &SubInput, aggregate: bool) -> Result<SubOutput, LpError> {
    let nx = input.n_free * input.k;
    let pairs = free_pairs(input);
    let mut present = vec![false; input.pairs.len() * input.k];
    for p in lazy::nearest(&pairs, input.n_free, FREE_NEIGHBOURS) {
        present[p * input.k..(p + 1) * input.k].fill(true);
    }
    let (sol, rows) = loop {
        let (lp, rows) = lower(input, aggregate, &present);
        let sol = lp.solve_ipm_unrefined()?;
        if lazy::separate(&pairs, input.k, &sol.x[..nx], &mut present).is_empty() {
            break (sol, rows);
        }
    };
    let mut z = vec![0.0; input.pairs.len() * input.k];
    for (&r, &d) in rows.iter().zip(&sol.duals[input.n_free..]) {
        z[r as usize] = d;
    }
    let slack = sol.x[nx..].iter().cloned().fold(0.0, f64::max);
    // The value of the returned point, computed here (Clarabel's reported objective can be
    // off on nearly degenerate subproblems: seen 10⁻⁴ where the point's cost is 2·10⁻³).
    let value = (0..nx)
        .map(|i| input.cost[i] * sol.x[i].max(0.0))
        .sum::<f64>()
        + input.penalty * sol.x[nx..].iter().map(|t| t.max(0.0)).sum::<f64>();
    Ok(SubOutput {
        value,
        slack,
        x: sol.x[..nx].to_vec(),
        cut: cut(input, &z),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(y: Vec<f64>) -> SubInput {
        // One free record between two fixed ones, K = 2; rows both ways with c = 2.
        let pairs = vec![
            SubPair {
                a: End::Free(0),
                b: End::Fixed(0),
                c: 2.0,
            },
            SubPair {
                a: End::Fixed(0),
                b: End::Free(0),
                c: 2.0,
            },
            SubPair {
                a: End::Free(0),
                b: End::Fixed(1),
                c: 2.0,
            },
            SubPair {
                a: End::Fixed(1),
                b: End::Free(0),
                c: 2.0,
            },
        ];
        SubInput {
            k: 2,
            n_free: 1,
            n_fixed: 2,
            cost: vec![0.0, 1.0],
            pairs,
            y,
            penalty: 10.0,
        }
    }

    /// The serialized input solves to the same output (location independence), and the
    /// optimality cut is tight at the point it was computed for.
    #[test]
    fn round_trip_and_tight_cut() {
        let inp = input(vec![0.5, 0.5, 0.6, 0.4]);
        let text = serde_json::to_string(&inp).unwrap();
        let back: SubInput = serde_json::from_str(&text).unwrap();
        assert_eq!(back, inp);
        let (a, b) = (
            solve_subproblem(&inp).unwrap(),
            solve_subproblem(&back).unwrap(),
        );
        assert_eq!(a, b);
        let SubOutput {
            value, cut, slack, ..
        } = a;
        assert!(slack < 1e-8);
        // Output 1 costs 1 and x1 ≥ y1/2 from both fixed records: x1 = max(0.5, 0.4)/2.
        assert!((value - 0.25).abs() < 1e-7, "{value}");
        let at: f64 = cut.constant + cut.coef.iter().zip(&inp.y).map(|(g, y)| g * y).sum::<f64>();
        assert!((at - value).abs() < 1e-6, "cut {at} vs value {value}");
    }

    /// The aggregated form keeps one bound row per (free record, output, kind) and, where
    /// x fits, has the full form's optimum and a cut tight at the same point.
    #[test]
    fn aggregated_bounds_match_the_full_form() {
        let inp = input(vec![0.5, 0.5, 0.6, 0.4]);
        let every = vec![true; inp.pairs.len() * inp.k];
        let (agg, rows) = lower(&inp, true, &every);
        let (full, all) = lower(&inp, false, &every);
        assert_eq!((rows.len(), all.len()), (4, 8));
        assert!(agg.rows.len() < full.rows.len());
        let (a, f) = (
            solve_form(&inp, true).unwrap(),
            solve_form(&inp, false).unwrap(),
        );
        assert!(
            (a.value - f.value).abs() < 1e-7,
            "{} vs {}",
            a.value,
            f.value
        );
        let at = |c: &Cut| c.constant + c.coef.iter().zip(&inp.y).map(|(g, y)| g * y).sum::<f64>();
        assert!((at(&a.cut) - at(&f.cut)).abs() < 1e-6);
        // Infeasible values: the full form is solved (a slack on every broken row).
        let bad = input(vec![1.0, 0.0, 0.0, 1.0]);
        assert_eq!(
            solve_subproblem(&bad).unwrap(),
            solve_form(&bad, false).unwrap()
        );
    }

    /// Fixed values no x can fit (output 0: x0 ≤ 2·0 and x0 ≥ 1/2) leave slack, and the cut
    /// charges them the penalty while staying below the true value at feasible values.
    #[test]
    fn infeasible_values_are_cut_off_by_the_penalty() {
        let inp = input(vec![1.0, 0.0, 0.0, 1.0]);
        let out = solve_subproblem(&inp).unwrap();
        assert!(out.slack > 1e-3, "{}", out.slack);
        let at = |y: &[f64]| {
            out.cut.constant + out.cut.coef.iter().zip(y).map(|(g, v)| g * v).sum::<f64>()
        };
        assert!(at(&inp.y) > 1.0, "deep at ŷ: {}", at(&inp.y));
        // At feasible values the cut is below the true optimum (value of output 1's mass).
        for y in [[0.5, 0.5, 0.5, 0.5], [0.6, 0.4, 0.5, 0.5]] {
            let mut ok = inp.clone();
            ok.y = y.to_vec();
            let v = solve_subproblem(&ok).unwrap().value;
            assert!(at(&y) <= v + 1e-9, "cut {} above value {v}", at(&y));
        }
    }
}
