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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privatize::rng;
    use crate::user_level::exact_noise::tests::{chi2, chi2_limit};
    use std::cell::Cell;

    /// Logits ℓ_j = ln x_j, so the softmax is x / Σx. `fast` is the `f64` enclosure of ln x_j
    /// widened by `widen` on each side (a wide enclosure sends every draw to the exact
    /// rounds); `exact_calls` counts the calls of `exact` (one per candidate per round).
    struct LnCounts {
        xs: Vec<u32>,
        widen: f64,
        exact_calls: Cell<usize>,
    }

    impl LnCounts {
        fn new(xs: &[u32], widen: f64) -> LnCounts {
            LnCounts {
                xs: xs.to_vec(),
                widen,
                exact_calls: Cell::new(0),
            }
        }
        fn softmax(&self) -> Vec<f64> {
            let s: u32 = self.xs.iter().sum();
            self.xs.iter().map(|&x| x as f64 / s as f64).collect()
        }
    }

    impl Logits for LnCounts {
        fn count(&self) -> usize {
            self.xs.len()
        }
        fn fast(&self, j: usize) -> FI {
            let l = FI::point(self.xs[j] as f64).ln();
            l.add(FI::new(-self.widen, self.widen))
        }
        fn exact(&self, j: usize, prec: u64) -> Interval {
            self.exact_calls.set(self.exact_calls.get() + 1);
            functions::ln(&Interval::point(Q::from(self.xs[j])), prec).expect("ln of x ≥ 1")
        }
    }

    /// Draws `n` times and returns the counts per candidate.
    fn draw(l: &LnCounts, n: u64, seed: u64) -> Vec<u64> {
        let mut r = rng(Some(seed));
        let mut counts = vec![0u64; l.count()];
        for _ in 0..n {
            counts[argmax(l, &mut r)] += 1;
        }
        counts
    }

    /// Random words from a script (then zeros): the uniforms' bits chosen by the test.
    struct Script(Vec<u64>, usize);

    impl RngCore for Script {
        fn next_u32(&mut self) -> u32 {
            self.next_u64() as u32
        }
        fn next_u64(&mut self) -> u64 {
            self.1 += 1;
            self.0.get(self.1 - 1).copied().unwrap_or(0)
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            dest.iter_mut().for_each(|b| *b = self.next_u64() as u8);
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
            self.fill_bytes(dest);
            Ok(())
        }
    }

    /// The Gumbel-max law (module docs) on the `f64` path: a seeded χ² test of 40 000 draws
    /// against the softmax (false-alarm e^{−14}), nearly every draw decided without an
    /// exact round, and the test's power: the same counts refute the uniform law.
    #[test]
    fn fast_draws_follow_the_softmax() {
        let l = LnCounts::new(&[1, 2, 3, 4, 10], 0.0);
        let n = 40_000;
        let counts = draw(&l, n, 11);
        let (stat, k) = chi2(&counts, &l.softmax(), n);
        assert!(stat < chi2_limit(k, 14.0), "χ² = {stat} with {k} df");
        let (uniform, k) = chi2(&counts, &[0.2; 5], n);
        assert!(uniform > chi2_limit(k, 14.0), "power: χ² {uniform}");
        assert!(
            l.exact_calls.get() < 5 * 40,
            "{} exact calls: the f64 path decides nearly every draw",
            l.exact_calls.get()
        );
    }

    /// The same law when the `f64` enclosures decide nothing: every draw goes through the
    /// exact rounds (the uniforms' rationals, ln to `prec` bits), and is still the softmax.
    #[test]
    fn exact_rounds_follow_the_softmax() {
        let l = LnCounts::new(&[1, 2, 3, 4, 10], 40.0);
        let n = 10_000;
        let counts = draw(&l, n, 12);
        assert!(
            l.exact_calls.get() >= 5 * n as usize,
            "every draw went exact"
        );
        let (stat, k) = chi2(&counts, &l.softmax(), n);
        assert!(stat < chi2_limit(k, 14.0), "χ² = {stat} with {k} df");
        let (uniform, k) = chi2(&counts, &[0.2; 5], n);
        assert!(uniform > chi2_limit(k, 14.0), "power: χ² {uniform}");
    }

    /// Equal logits and equal first words: neither path can decide until the uniforms are
    /// refined by fresh bits, and then the larger uniform wins (G increases in U).
    #[test]
    fn tied_uniforms_are_refined_until_decided() {
        let w = 1u64 << 63;
        for (a, b, want) in [(5u64, 3u64, 0usize), (3, 5, 1), (0, 2, 1)] {
            for widen in [0.0, 40.0] {
                let l = LnCounts::new(&[7, 7], widen);
                let mut script = Script(vec![w, w, a, b], 0);
                assert_eq!(argmax(&l, &mut script), want, "words {a}, {b}");
                assert_eq!(script.1, 4, "two words, then one refinement each");
            }
        }
        // Tied at 128 bits too: a second refinement decides.
        let l = LnCounts::new(&[7, 7], 0.0);
        let mut script = Script(vec![w, w, 9, 9, 1, 3], 0);
        assert_eq!(argmax(&l, &mut script), 1);
        assert_eq!(script.1, 6);
    }

    /// A single candidate is drawn without randomness.
    #[test]
    fn one_candidate_is_index_zero() {
        let l = LnCounts::new(&[3], 0.0);
        let mut script = Script(vec![], 0);
        assert_eq!(argmax(&l, &mut script), 0);
        assert_eq!(script.1, 0);
    }

    /// `decided` needs one lower end strictly above every other upper end.
    #[test]
    fn decided_needs_a_strict_separation() {
        assert_eq!(decided(&[(0.0, 1.0), (2.0, 3.0), (-1.0, 1.5)]), Some(1));
        assert_eq!(decided(&[(2.0, 3.0), (0.0, 1.0)]), Some(0));
        assert_eq!(decided(&[(0.0, 2.0), (2.0, 3.0)]), None, "touching ends");
        assert_eq!(decided(&[(0.0, 2.5), (2.0, 3.0)]), None, "overlap");
        assert_eq!(decided(&[(1.0, 1.0), (1.0, 1.0)]), None, "a tie");
        assert_eq!(decided::<f64>(&[]), None);
        assert_eq!(decided(&[(4.0, 5.0)]), Some(0));
    }

    /// Both Gumbel enclosures contain −ln(−ln U) for every U in the uniform's interval
    /// (checked at its ends against 200-bit values), the exact one is declined while an end
    /// is 0 or 1, and it narrows with `prec`.
    #[test]
    fn gumbel_enclosures_contain_the_transform() {
        for w in [1u64, 1 << 20, 1 << 63, u64::MAX / 3, u64::MAX - 1] {
            let u = Lazy::of_word(w);
            let iv = u.interval();
            let g = gumbel_exact(&iv, 128).expect("0 < U < 1");
            let fi = gumbel_fi(u.fi());
            for end in [&iv.lo, &iv.hi] {
                let e = Interval::point(end.clone());
                let minus_ln = functions::ln(&e, 200).unwrap().neg();
                let t = functions::ln(&minus_ln, 200).unwrap().neg();
                assert!(g.lo <= t.lo && t.hi <= g.hi, "exact, word {w}");
                let t = FI::from_interval(&t);
                assert!(fi.lo <= t.lo && t.hi <= fi.hi, "f64, word {w}");
            }
            let fine = gumbel_exact(&Interval::point(iv.lo.clone()), 256).unwrap();
            let coarse = gumbel_exact(&Interval::point(iv.lo.clone()), 64).unwrap();
            assert!(fine.width() <= coarse.width());
        }
        let zero = Lazy::of_word(0).interval();
        assert!(gumbel_exact(&zero, 128).is_none(), "U may be 0");
        let top = Lazy::of_word(u64::MAX).interval();
        assert!(gumbel_exact(&top, 128).is_none(), "U may be 1");
    }
}
