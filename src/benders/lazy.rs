//! Lazy privacy rows for the Benders master and subproblems (`spec/benders.md` §5): a
//! list of pairs (a, b, c), each a row x\[a\]\[k\] ≤ c·x\[b\]\[k\] for every output k,
//! of which only some are in the LP. They start from each record's nearest pairs
//! ([`nearest`]); after a solve the rows its point breaks join, with those held near tight
//! ([`separate`], `ipm`'s rule: [`row_state`] at margin [`NEAR_TIGHT`]), until none is
//! broken. Rows only join, so the loop ends; the duals with 0 on the absent rows are then
//! the whole LP's.

use crate::lp::block_ipm::NEAR_TIGHT;
use crate::lp::simplex::row_state;

/// The pairs (indices into `pairs`) that start in the LP: each record's `neighbours`
/// pairs of smallest constant, records in increasing order. `pairs[p]` is
/// `Some((a, b, c))` for a lazy pair (a the record it belongs to), `None` for a pair that
/// is not lazy.
pub fn nearest(
    pairs: &[Option<(usize, usize, f64)>],
    records: usize,
    neighbours: usize,
) -> Vec<usize> {
    let mut by_record: Vec<Vec<usize>> = vec![vec![]; records];
    for (p, e) in pairs.iter().enumerate() {
        if let Some((a, _, _)) = e {
            by_record[*a].push(p);
        }
    }
    let c = |p: usize| pairs[p].map_or(f64::INFINITY, |e| e.2);
    by_record
        .into_iter()
        .flat_map(|mut ps| {
            ps.sort_by(|&x, &y| c(x).total_cmp(&c(y)));
            ps.truncate(neighbours);
            ps
        })
        .collect()
}

/// The absent rows (pair index, output) that the values `x` (records × `k`) break, and if
/// any, every absent row they hold near tight; marked in `present` (pair index · `k` +
/// output) and returned in index order. Empty means no lazy row is broken. The interior
/// point's tiny negative entries count as 0: otherwise a −10⁻¹² entry times a large
/// constant looks broken, yet is not near tight, never joins, and the loop never ends.
pub fn separate(
    pairs: &[Option<(usize, usize, f64)>],
    k: usize,
    x: &[f64],
    present: &mut [bool],
) -> Vec<(usize, usize)> {
    let at = |r: usize, t: usize| x[r * k + t].max(0.0);
    let state = |a: usize, b: usize, c: f64, t: usize| row_state(at(a, t), c, at(b, t), NEAR_TIGHT);
    if !absent(pairs, k, present).any(|(_, t, (a, b, c))| state(a, b, c, t).0) {
        return vec![];
    }
    let new: Vec<(usize, usize)> = absent(pairs, k, present)
        .filter(|&(_, t, (a, b, c))| state(a, b, c, t).1)
        .map(|(p, t, _)| (p, t))
        .collect();
    for &(p, t) in &new {
        present[p * k + t] = true;
    }
    new
}

/// The lazy rows not in `present`: (pair index, output, pair).
fn absent<'a>(
    pairs: &'a [Option<(usize, usize, f64)>],
    k: usize,
    present: &'a [bool],
) -> impl Iterator<Item = (usize, usize, (usize, usize, f64))> + 'a {
    pairs
        .iter()
        .enumerate()
        .filter_map(|(p, e)| e.map(|e| (p, e)))
        .flat_map(move |(p, e)| (0..k).map(move |t| (p, t, e)))
        .filter(move |&(p, t, _)| !present[p * k + t])
}
