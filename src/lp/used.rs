//! The outputs a float mechanism uses (`spec/lp.md` §4.4): those whose column has an entry
//! above a fraction of the mechanism's largest entry. Both the lazy rounds over the used
//! outputs (`lp::support`, which re-exports these) and the structured interior point, which
//! hands them its iterate's support (`lp::block_ipm`), take them from here: a module of
//! their own, so that `block_ipm` does not depend on the rounds that call it. Where no
//! mechanism is at hand yet (column generation past the every-row phase's limit,
//! spec/lp.md §4.7), [`spread_outputs`] guesses a support.

/// An output is used when its column has an entry above this fraction of the largest
/// entry of the mechanism (measured on Rome road n = 100: unused columns ≤ 3·10⁻⁸, used
/// ones ≥ 3.8·10⁻³ after the first round).
pub const SUPPORT_TOL: f64 = 1e-5;

/// The outputs whose column of `m` (n×K, row-major) has an entry above [`SUPPORT_TOL`]
/// times the largest entry, in increasing order.
pub fn used_outputs(m: &[f64], kk: usize) -> Vec<usize> {
    used_outputs_above(m, kk, SUPPORT_TOL)
}

/// [`used_outputs`] with the threshold `tol` (relative to the largest entry).
pub fn used_outputs_above(m: &[f64], kk: usize, tol: f64) -> Vec<usize> {
    let top = m.iter().cloned().fold(0.0, f64::max);
    let mut colmax = vec![0.0f64; kk];
    for row in m.chunks(kk) {
        for (c, x) in colmax.iter_mut().zip(row) {
            *c = c.max(*x);
        }
    }
    (0..kk).filter(|&k| colmax[k] > tol * top).collect()
}

/// `m` outputs of `lp` spread over the space (farthest-first traversal, Gonzalez 1985):
/// from output 0, each next one the output farthest, by the cost from its own input
/// (`cost_dn`, the distance for OPTMech), from those chosen; ties to the lowest index.
/// Increasing order. A guessed support: the outputs it misses enter by pricing.
pub fn spread_outputs(lp: &super::model::PrivacyLp, m: usize) -> Vec<usize> {
    let kk = lp.k();
    let cost = |a: usize, b: usize| lp.cost_dn[lp.outputs[a] * kk + b];
    let mut chosen = vec![];
    let mut nearest = vec![f64::INFINITY; kk];
    let mut next = 0;
    while chosen.len() < m.min(kk) {
        chosen.push(next);
        for (k, d) in nearest.iter_mut().enumerate() {
            *d = d.min(cost(k, next));
        }
        // The first of the farthest (`max_by` keeps the last of equals).
        next = (0..kk)
            .rev()
            .max_by(|&a, &b| nearest[a].total_cmp(&nearest[b]))
            .unwrap_or(0);
        if nearest[next] <= 0.0 {
            break; // every output is at cost 0 from a chosen one
        }
    }
    chosen.sort_unstable();
    chosen
}
