//! Packing lower bounds on the loss of every ε·d private mechanism (Imola et al. 2022,
//! §4: Definition 2, Theorem 3, eqs. (7) and (8)).
//!
//! A set S of inputs is a (c, r, Q)-packing when |S| = c, the balls B(s, r) = {outputs o :
//! d(s, o) ≤ r} are pairwise disjoint and max_{s,s'} d(s, s') ≤ Q. For every ε·d private
//! mechanism M, with N(w, S) = Σ_{s∈S} e^{−ε d(w, s)}:
//!   L(M) ≥ max_w r (1 − 1/N(w, S))                       (7)
//!   L(M) ≥ r (1 − 1/(1 + (c − 1) e^{−Qε}))               (8)
//! The proof (appendix) uses Markov's inequality on the loss d(w, M(w)) and the privacy
//! inequality between w and each center s, so it needs the default cost c(u, o) = d(u, o)
//! and outputs that are sites of the metric. With `neighbors` (privacy only within η) the
//! chained guarantee e^{ε d_G(w,s)} along shortest η-paths replaces e^{ε d(w,s)}
//! (Qiu 2024, Prop. 3.2), so N uses d_G (≥ d, a weaker but valid bound).
//!
//! Everything here is a rigorous lower enclosure: N is bounded below with upper bounds on
//! the distances, and the bound below from that.

use crate::exact::float::FI;
use crate::exact::Q;
use crate::metric::Space;
use std::cmp::Ordering;

/// A verified packing.
#[derive(Clone, Debug)]
pub struct Packing {
    pub centers: Vec<usize>,
    pub radius: Q,
    /// Enclosure of Q = max pairwise center distance.
    pub q: FI,
}

/// Why a claimed packing is not one.
#[derive(Clone, Debug, PartialEq)]
pub enum PackingError {
    DuplicateCenter(usize),
    /// Output `o` (a site) lies in the balls of two centers.
    Overlap {
        s: usize,
        t: usize,
        output: usize,
    },
    /// d(s, o) vs r undecidable at the precision limit.
    Undecided {
        s: usize,
        output: usize,
    },
}

impl std::fmt::Display for PackingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PackingError::DuplicateCenter(s) => write!(f, "center {s} is listed twice"),
            PackingError::Overlap { s, t, output } => {
                write!(
                    f,
                    "balls of centers {s} and {t} overlap: both contain output site {output}"
                )
            }
            PackingError::Undecided { s, output } => {
                write!(
                    f,
                    "cannot decide d({s}, {output}) ≤ r within the precision limit"
                )
            }
        }
    }
}

/// Verify Definition 2 for `centers` (inputs) and radius `r`, with balls over `outputs`
/// (site indices of the outputs in `space`).
pub fn verify_packing(
    space: &Space,
    centers: &[usize],
    r: &Q,
    outputs: &[usize],
    max_prec: u64,
) -> Result<Packing, PackingError> {
    let mut seen = std::collections::HashSet::new();
    for &s in centers {
        if !seen.insert(s) {
            return Err(PackingError::DuplicateCenter(s));
        }
    }
    for &o in outputs {
        let mut owner: Option<usize> = None;
        for &s in centers {
            let inside = match space.cmp_distance(s, o, r, max_prec) {
                Some(ord) => ord != Ordering::Greater,
                None => return Err(PackingError::Undecided { s, output: o }),
            };
            if inside {
                if let Some(t) = owner {
                    return Err(PackingError::Overlap {
                        s: t,
                        t: s,
                        output: o,
                    });
                }
                owner = Some(s);
            }
        }
    }
    let mut q = FI::point(0.0);
    for (i, &s) in centers.iter().enumerate() {
        for &t in &centers[i + 1..] {
            let d = space.fi(s, t);
            q = FI::new(q.lo.max(d.lo), q.hi.max(d.hi));
        }
    }
    Ok(Packing {
        centers: centers.to_vec(),
        radius: r.clone(),
        q,
    })
}

/// The bound (7) at privacy level `eps`, as a rigorous enclosure (its `lo` is a valid
/// lower bound on the loss of every eps·d private mechanism). `dist_upper(w, s)` must be an
/// upper bound on the distance used by the guarantee (d, or d_G with `neighbors`;
/// `f64::INFINITY` when there is none).
pub fn bound_eq7(p: &Packing, n: usize, eps: f64, dist_upper: &dyn Fn(usize, usize) -> f64) -> FI {
    let mut best = FI::point(0.0);
    for w in 0..n {
        // r(1 − 1/N) = r·M/(1 + M) with M = N − 1, increasing in M; M is bounded below
        // term by term (e^{−ε d} ≥ e^{−ε d_hi}); the self term of a center w is exactly 1.
        let mut m = FI::point(if p.centers.contains(&w) { 0.0 } else { -1.0 });
        for &s in p.centers.iter().filter(|&&s| s != w) {
            let d = dist_upper(w, s);
            if d.is_finite() {
                let e = FI::point(eps).mul(FI::point(d)).neg().exp();
                m = m.add(FI::point(e.lo));
            }
        }
        let b = ratio_bound(&p.radius, m.lo);
        if b.lo > best.lo {
            best = b;
        }
    }
    best
}

/// r·M/(1 + M) for M ≥ m_lo, as an enclosure whose lower end is rigorous (0 if m_lo ≤ 0).
fn ratio_bound(r: &Q, m_lo: f64) -> FI {
    if m_lo <= 0.0 {
        return FI::point(0.0);
    }
    let m = FI::point(m_lo);
    FI::from_q(r).mul(m.div(FI::point(1.0).add(m)))
}

/// The bound (8): r (1 − 1/(1 + (c−1) e^{−Qε})), rigorous lower end, for `q_hi` an upper
/// bound on the guarantee's distance between any two centers: `p.q.hi` for plain ε·d
/// privacy, the largest chained d_G between centers under `neighbors` (Qiu 2024, Prop.
/// 3.2; with the plain d the bound can exceed the true optimum). 0 when `q_hi` is +∞.
pub fn bound_eq8(p: &Packing, q_hi: f64, eps: f64) -> FI {
    if !q_hi.is_finite() {
        return FI::point(0.0);
    }
    let c = p.centers.len() as f64;
    let e = FI::point(eps).mul(FI::point(q_hi)).neg().exp();
    let m = FI::point(c - 1.0).mul(FI::point(e.lo));
    ratio_bound(&p.radius, m.lo)
}

/// Candidate packings from the farthest-first traversal (Gonzalez's k-center algorithm),
/// as Imola et al. §5 generate them ("a k-center algorithm, with k from 1 to the size of
/// the metric space"): the traversal starts from the two farthest inputs (so k = 2 is the
/// paper's two-farthest-points packing) and the k-th candidate is its first k centers with
/// the largest radius keeping the balls over `outputs` disjoint: just below
/// min_o (second-smallest distance from output o to a center).
pub struct PackingCandidates {
    /// Centers in traversal order; candidate k uses the first k.
    pub order: Vec<usize>,
    /// `radius_sup[k − 2]`: the supremum of valid radii for the first k centers (float).
    pub radius_sup: Vec<f64>,
    /// Upper bounds on the distances between inputs (n×n).
    dist_hi: Vec<f64>,
    n: usize,
}

/// The best packing bound found at one ε.
pub struct BestPacking {
    pub packing: Packing,
    /// Rigorous enclosure of the bound (7).
    pub bound: FI,
}

impl PackingCandidates {
    pub fn new(space: &Space, outputs: &[usize]) -> PackingCandidates {
        use rayon::prelude::*;
        let n = space.n();
        let dist: Vec<FI> = (0..n * n)
            .into_par_iter()
            .map(|i| {
                let (u, v) = (i / n, i % n);
                if u == v || space.is_zero(u, v) {
                    FI::point(0.0)
                } else {
                    space.fi(u, v)
                }
            })
            .collect();
        let mid = |u: usize, v: usize| 0.5 * dist[u * n + v].lo + 0.5 * dist[u * n + v].hi;
        let mut order = vec![];
        if n >= 2 {
            let (mut a, mut b, mut best) = (0, 1, -1.0);
            for u in 0..n {
                for v in u + 1..n {
                    if mid(u, v) > best {
                        (a, b, best) = (u, v, mid(u, v));
                    }
                }
            }
            order.extend([a, b]);
            let mut near: Vec<f64> = (0..n).map(|x| mid(a, x).min(mid(b, x))).collect();
            while order.len() < n {
                let next = (0..n)
                    .filter(|x| !order.contains(x))
                    .max_by(|&x, &y| near[x].total_cmp(&near[y]).then(y.cmp(&x)))
                    .expect("inputs left");
                if near[next] <= 0.0 {
                    break; // only duplicates of centers remain: no disjoint balls
                }
                order.push(next);
                for x in 0..n {
                    near[x] = near[x].min(mid(next, x));
                }
            }
        }
        // Smallest and second-smallest distance from each output to the centers so far.
        let sites: Vec<usize> = outputs.to_vec();
        let mut first = vec![f64::INFINITY; sites.len()];
        let mut second = vec![f64::INFINITY; sites.len()];
        let mut radius_sup = vec![];
        for (i, &c) in order.iter().enumerate() {
            for (j, &o) in sites.iter().enumerate() {
                let d = mid(c, o);
                if d < first[j] {
                    second[j] = first[j];
                    first[j] = d;
                } else if d < second[j] {
                    second[j] = d;
                }
            }
            if i >= 1 {
                radius_sup.push(second.iter().cloned().fold(f64::INFINITY, f64::min));
            }
        }
        PackingCandidates {
            order,
            radius_sup,
            dist_hi: dist.iter().map(|d| d.hi).collect(),
            n,
        }
    }

    /// The float value of bound (7) for the first k centers and radius r at `eps`.
    fn float_bound(&self, k: usize, r: f64, eps: f64) -> f64 {
        let n = self.n;
        let centers = &self.order[..k];
        (0..n)
            .map(|w| {
                let nn: f64 = centers
                    .iter()
                    .map(|&s| (-eps * self.dist_hi[w * n + s]).exp())
                    .sum();
                r * (1.0 - 1.0 / nn)
            })
            .fold(0.0, f64::max)
    }

    /// The strongest verified bound (7) at `eps` over the candidates (the `TOP` best by
    /// float value are verified exactly; `None` if no candidate verifies).
    pub fn best(
        &self,
        space: &Space,
        outputs: &[usize],
        eps: f64,
        max_prec: u64,
    ) -> Option<BestPacking> {
        const TOP: usize = 3;
        let mut ranked: Vec<(f64, usize)> = self
            .radius_sup
            .iter()
            .enumerate()
            .filter(|(_, &r)| r > 0.0 && r.is_finite())
            .map(|(i, &r)| (self.float_bound(i + 2, r, eps), i + 2))
            .collect();
        ranked.sort_by(|a, b| b.0.total_cmp(&a.0));
        let n = self.n;
        let dist_upper = |w: usize, s: usize| self.dist_hi[w * n + s];
        let mut best: Option<BestPacking> = None;
        for &(_, k) in ranked.iter().take(TOP) {
            let centers = &self.order[..k];
            let mut r = self.radius_sup[k - 2] * (1.0 - 1e-9);
            for _ in 0..4 {
                match verify_packing(
                    space,
                    centers,
                    &crate::exact::q_from_f64(r),
                    outputs,
                    max_prec,
                ) {
                    Ok(p) => {
                        let b = bound_eq7(&p, n, eps, &dist_upper);
                        if best.as_ref().is_none_or(|x| b.lo > x.bound.lo) {
                            best = Some(BestPacking {
                                packing: p,
                                bound: b,
                            });
                        }
                        break;
                    }
                    Err(PackingError::Overlap { .. }) | Err(PackingError::Undecided { .. }) => {
                        r *= 1.0 - 1e-6;
                    }
                    Err(PackingError::DuplicateCenter(_)) => break,
                }
            }
        }
        best
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::MetricKind;

    /// Points 0, 10, 20, 3 on a line; centers 0, 10, 20 with r = 4 over every output.
    fn packing() -> (Space, Packing) {
        let pts = [0i64, 10, 20, 3]
            .iter()
            .map(|&x| vec![Q::from(x)])
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let p = verify_packing(&space, &[0, 1, 2], &Q::from(4u32), &[0, 1, 2, 3], 256).unwrap();
        (space, p)
    }

    /// (8) = r(1 − 1/(1 + (c − 1)e^{−Qε})) and (7) = max_w r(1 − 1/N(w)) against their closed
    /// forms: each a rigorous lower end within 10⁻¹² of the value. A bound above its value
    /// (c + 1 for c − 1, say) would claim more than the theorem proves; a smaller one (the
    /// wrong w kept, or 0) is valid but weaker than the paper's.
    #[test]
    fn the_bounds_are_their_formulas_from_below() {
        let (_, p) = packing();
        assert!(p.q.lo <= 20.0 && 20.0 <= p.q.hi, "{:?}", p.q);
        let eps = 0.1;
        let m = 2.0 * (-2.0f64).exp();
        let eq8 = 4.0 * m / (1.0 + m);
        let b8 = bound_eq8(&p, p.q.hi, eps);
        assert!(b8.lo <= eq8 && eq8 - b8.lo < 1e-12, "{b8:?} vs {eq8}");
        assert_eq!(bound_eq8(&p, f64::INFINITY, eps).lo, 0.0);
        let xs = [0.0f64, 10.0, 20.0, 3.0];
        let eq7 = (0..4)
            .map(|w| {
                let n: f64 = [0usize, 1, 2]
                    .iter()
                    .map(|&s| (-eps * (xs[w] - xs[s]).abs()).exp())
                    .sum();
                4.0 * (1.0 - 1.0 / n)
            })
            .fold(0.0, f64::max);
        let b7 = bound_eq7(&p, 4, eps, &|w, s| (xs[w] - xs[s]).abs());
        assert!(b7.lo <= eq7 && eq7 - b7.lo < 1e-12, "{b7:?} vs {eq7}");
        // No finite distance: nothing is bounded.
        assert_eq!(bound_eq7(&p, 4, eps, &|_, _| f64::INFINITY).lo, 0.0);
        assert_eq!(ratio_bound(&Q::from(4u32), 0.0).lo, 0.0);
        assert_eq!(ratio_bound(&Q::from(4u32), -1.0).lo, 0.0);
    }

    /// The farthest-first candidates on the line 0, 10, 20, 3: the traversal starts from the
    /// two farthest inputs and adds 10, then 3; the radii are just below the least
    /// second-nearest center distance of an output (10, 7, 3); `best` returns the strongest
    /// verified bound (7) among them, equal to the brute force over every candidate.
    #[test]
    fn farthest_first_candidates_and_the_best_verified_bound() {
        let (space, _) = packing();
        let outputs = [0, 1, 2, 3];
        let c = PackingCandidates::new(&space, &outputs);
        let mut first_two = c.order[..2].to_vec();
        first_two.sort();
        assert_eq!((first_two, &c.order[2..]), (vec![0, 2], &[1, 3][..]));
        for (got, want) in c.radius_sup.iter().zip([10.0, 7.0, 3.0]) {
            assert!((got - want).abs() < 1e-9, "{:?}", c.radius_sup);
        }
        let xs = [0.0f64, 10.0, 20.0, 3.0];
        let eps = 0.1;
        let best = c
            .best(&space, &outputs, eps, 256)
            .expect("a verified packing");
        let brute = (2..=4)
            .map(|k| {
                let r = crate::exact::q_from_f64(c.radius_sup[k - 2] * (1.0 - 1e-9));
                let p = verify_packing(&space, &c.order[..k], &r, &outputs, 256).unwrap();
                bound_eq7(&p, 4, eps, &|w, s| (xs[w] - xs[s]).abs()).lo
            })
            .fold(0.0, f64::max);
        assert!(
            (best.bound.lo - brute).abs() < 1e-9,
            "{} vs {brute}",
            best.bound.lo
        );
        assert!(best.bound.lo > 1.0);
    }

    /// Nine points in clusters on a line: seven candidates (more than the `TOP` = 3 that are
    /// verified), whose bounds (7) differ; at each ε the best returned is the best over every
    /// candidate by brute force, so the float ranking must put it among the three verified.
    #[test]
    fn best_ranks_many_candidates_by_their_float_bound() {
        let xs = [0i64, 1, 2, 10, 11, 30, 31, 60, 100];
        let pts = xs.iter().map(|&x| vec![Q::from(x)]).collect();
        let space = Space::from_points(MetricKind::Manhattan, pts, None).unwrap();
        let outputs: Vec<usize> = (0..xs.len()).collect();
        let c = PackingCandidates::new(&space, &outputs);
        assert!(c.radius_sup.len() > 3, "{:?}", c.radius_sup);
        let mut best_ks = vec![];
        for eps in [0.01, 0.05, 0.2, 1.0, 5.0] {
            let best = c
                .best(&space, &outputs, eps, 256)
                .expect("a verified packing");
            let brute = (2..c.radius_sup.len() + 2)
                .filter(|&k| c.radius_sup[k - 2] > 0.0 && c.radius_sup[k - 2].is_finite())
                .map(|k| {
                    let r = crate::exact::q_from_f64(c.radius_sup[k - 2] * (1.0 - 1e-9));
                    let p = verify_packing(&space, &c.order[..k], &r, &outputs, 256).unwrap();
                    let d = |w: usize, s: usize| (xs[w] - xs[s]).abs() as f64;
                    (bound_eq7(&p, xs.len(), eps, &d).lo, k)
                })
                .fold((0.0, 0), |a, b| if b.0 > a.0 { b } else { a });
            assert!(
                (best.bound.lo - brute.0).abs() <= 1e-9 * brute.0,
                "ε = {eps}: {} vs {brute:?}",
                best.bound.lo
            );
            assert_eq!(best.packing.centers.len(), brute.1, "ε = {eps}");
            best_ks.push(brute.1);
        }
        // The best candidate changes with ε: the instance tells the ranking apart.
        best_ks.dedup();
        assert!(best_ks.len() > 1, "{best_ks:?}");
    }

    #[test]
    fn claimed_packings_that_are_not_are_refused_with_a_reason() {
        let (space, _) = packing();
        let e = verify_packing(&space, &[0, 0], &Q::from(1u32), &[0], 256).unwrap_err();
        assert_eq!(e, PackingError::DuplicateCenter(0));
        assert!(e.to_string().contains("twice"));
        // r = 8: output 3 (at 3) is within 8 of both 0 and 10.
        let e = verify_packing(&space, &[0, 1], &Q::from(8u32), &[3], 256).unwrap_err();
        assert_eq!(
            e,
            PackingError::Overlap {
                s: 0,
                t: 1,
                output: 3
            }
        );
        assert!(e.to_string().contains("overlap"), "{e}");
        let e = PackingError::Undecided { s: 1, output: 2 };
        assert!(e.to_string().contains("cannot decide d(1, 2)"), "{e}");
    }
}
