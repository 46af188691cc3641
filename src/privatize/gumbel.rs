//! Exact Gumbel-max: draw index j with probability ∝ e^{ℓ_j} for logits known only through
//! enclosures (`spec/geo.md` §5), as TEM's Algorithm 3 does with floats.
//!
//! argmax_j (ℓ_j + G_j) with G_j = −ln(−ln U_j) i.i.d. Gumbel is distributed as the softmax
//! of ℓ (the Gumbel-max trick). Here each U_j is a dyadic interval of its random bits
//! (`exact_noise::Lazy`), G_j and ℓ_j are enclosed (first in `f64` interval arithmetic, then in exact
//! rationals at growing precision), and j is returned once the lower end of its score is
//! above every other score's upper end: then j is the argmax for the uniforms' exact values
//! and exact logits. Ties and boundary values are null events, so the loop ends with
//! probability 1, and the law is exactly the softmax of the exact logits.

use crate::exact::float::FI;
use crate::exact::{functions, Interval, Q};
use crate::user_level::exact_noise::Lazy;
use rand::RngCore;

/// The logits of one draw, as enclosures.
pub trait Logits {
    /// How many candidates.
    fn count(&self) -> usize;
    /// An `f64` enclosure of ℓ_j.
    fn fast(&self, j: usize) -> FI;
    /// A rational enclosure of ℓ_j at about `prec` bits (narrowing as `prec` grows).
    fn exact(&self, j: usize, prec: u64) -> Interval;
}

/// G = −ln(−ln U) from an `f64` enclosure of U (increasing in U).
fn gumbel_fi(u: FI) -> FI {
    let minus_ln = u.ln().neg(); // −ln U ∈ [−ln hi, −ln lo], > 0
    minus_ln.ln().neg()
}

/// G from a rational enclosure of U; `None` while an end is 0 or 1.
fn gumbel_exact(u: &Interval, prec: u64) -> Option<Interval> {
    if u.lo <= 0u32 || u.hi >= 1u32 {
        return None;
    }
    let minus_ln = functions::ln(u, prec)?.neg().round_outward(prec);
    if minus_ln.lo <= 0u32 {
        return None;
    }
    Some(functions::ln(&minus_ln, prec)?.neg().round_outward(prec))
}

/// The index of the decided maximum of `scores`, if one lower end beats every upper end.
fn decided<T: PartialOrd + Clone>(scores: &[(T, T)]) -> Option<usize> {
    let best = (0..scores.len()).max_by(|&a, &b| {
        scores[a]
            .0
            .partial_cmp(&scores[b].0)
            .unwrap_or(std::cmp::Ordering::Equal)
    })?;
    let lo = &scores[best].0;
    scores
        .iter()
        .enumerate()
        .all(|(j, s)| j == best || s.1 < *lo)
        .then_some(best)
}

/// One exact draw of j ∝ e^{ℓ_j} (module docs).
pub fn argmax<L: Logits, R: RngCore + ?Sized>(logits: &L, rng: &mut R) -> usize {
    let k = logits.count();
    assert!(k > 0, "a draw needs a candidate");
    if k == 1 {
        return 0;
    }
    let mut u: Vec<Lazy> = (0..k).map(|_| Lazy::of_word(rng.next_u64())).collect();
    let fast: Vec<(f64, f64)> = (0..k)
        .map(|j| {
            let s = logits.fast(j).add(gumbel_fi(u[j].fi()));
            (s.lo, s.hi)
        })
        .collect();
    if let Some(j) = decided(&fast) {
        return j;
    }
    for round in 0u64.. {
        let prec = 64 * (round + 2);
        let scores: Option<Vec<(Q, Q)>> = (0..k)
            .map(|j| {
                let g = gumbel_exact(&u[j].interval(), prec)?;
                let s = logits.exact(j, prec).add(&g);
                Some((s.lo, s.hi))
            })
            .collect();
        if let Some(j) = scores.as_deref().and_then(decided) {
            return j;
        }
        for v in u.iter_mut() {
            v.refine(rng);
        }
    }
    unreachable!("the rounds are unbounded")
}
