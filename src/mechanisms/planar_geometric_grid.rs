//! The planar geometric mechanism on a grid (libqif's `planar_geometric_grid`; the discrete
//! analogue of the planar Laplace, Chatzikokolakis et al. 2015), `spec/geo.md` §2.4.
//!
//! Inputs are the centres of a W × H grid of step s (`grid:W,H,STEP`, as
//! [`super::planar_laplace_grid`]). Input x releases the point z of the infinite lattice sℤ²
//! (extending the grid) with probability c·e^{−ε_noise·‖z − x‖}, c = 1/Σ_{z∈sℤ²} e^{−ε_noise·‖z‖};
//! a point outside the grid goes to the nearest cell (coordinate-wise clamping). The ratio of
//! two inputs' probabilities of any z is e^{−ε(‖z−x‖ − ‖z−x′‖)} ≤ e^{ε‖x − x′‖} (the triangle
//! inequality; c is common), and the clamping is a fixed map (post-processing), so the channel is
//! ε_noise·d private (Theorem PL-GEOM).
//!
//! **Entries, enclosed.** In steps, the lattice points a cell collects are, per coordinate, one
//! offset u = |a − i| (an interior column), a ray u₀, u₀ + 1, … (a border column: everything
//! beyond it), or the whole line (a grid one cell wide). An entry is c times a sum over a
//! product of two such sets of g(u, v) = e^{−e·√(u² + v²)}, e = ε_noise·s: finitely many terms in
//! `f64` interval arithmetic plus a bound on the rest from √(u² + v²) ≥ max(u, v) (one ray) or
//! ≥ (u + v)/√2 (two rays), geometric series, taken until the rest is below 10⁻¹⁷ of the sum. c is
//! enclosed the same way (the whole plane). As for the planar Laplace grid, the file holds each
//! entry's midpoint, each row's largest entry taking up the rounding (rows sum to 1 exactly), at
//! ε_noise = ε·(1 − η) ([`super::planar_laplace_grid::margin`]), every written entry within
//! 10⁻¹⁰ relative of its sum (checked; ε·s ≥ 0.05 makes η·ε·s ≥ 10⁻⁹ cover twice that), and
//! the exact audit proves ε.

use std::collections::HashMap;

use super::planar_laplace_grid::{built, grid_and_noise, Built, GridError};
use crate::exact::float::FI;
use crate::exact::Q;
use crate::metric::Space;

/// One coordinate's lattice offsets from the input, in steps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Offsets {
    /// One offset u ≥ 0.
    Point(u64),
    /// u₀, u₀ + 1, … (u₀ ≥ 0).
    Ray(u64),
}

/// The offsets a column `a` collects from input column `i` of `w`, with multiplicities.
fn offsets(a: usize, i: usize, w: usize) -> Vec<(u32, Offsets)> {
    if w == 1 {
        // The whole line: 0 once, and 1, 2, … on both sides.
        vec![(1, Offsets::Point(0)), (2, Offsets::Ray(1))]
    } else if a == 0 {
        vec![(1, Offsets::Ray(i as u64))]
    } else if a == w - 1 {
        vec![(1, Offsets::Ray((w - 1 - i) as u64))]
    } else {
        vec![(1, Offsets::Point(a.abs_diff(i) as u64))]
    }
}

/// The rest of a series is at most this fraction of its partial sum.
const TAIL: f64 = 1e-17;
/// Largest number of terms along one ray (a square of side 2 048 for two rays).
const MAX_TERMS: u64 = 2048;
/// The largest relative error of a written entry (module doc).
const MAX_RELATIVE: f64 = 1e-10;
/// Below this ε·s the lattice sums would need more than 2 048 terms along a ray.
pub const MIN_EPS_STEP: f64 = 0.05;

/// Σ g(u, v) over a product of offset sets, e = ε·s (module doc); `None` if the rest could not
/// be made small enough within [`MAX_TERMS`].
fn lattice_sum(a: Offsets, b: Offsets, e: FI) -> Option<FI> {
    let g = |u: u64, v: u64| {
        let r = FI::point((u * u + v * v) as f64).sqrt();
        (FI::point(0.0) - e * r).exp()
    };
    // e^{−e·t} for a real t ≥ 0, and 1/(1 − e^{−e·t}).
    let decay = |t: FI| (FI::point(0.0) - e * t).exp();
    let geometric = |t: FI| FI::point(1.0).div(FI::point(1.0) - decay(t));
    match (a, b) {
        (Offsets::Point(u), Offsets::Point(v)) => Some(g(u, v)),
        (Offsets::Ray(v0), Offsets::Point(u)) | (Offsets::Point(u), Offsets::Ray(v0)) => {
            let mut sum = FI::point(0.0);
            for k in 0..MAX_TERMS {
                sum = sum + g(u, v0 + k);
                // Rest: Σ_{v ≥ v0+k+1} e^{−e·v} (√(u²+v²) ≥ v).
                let rest = decay(FI::point((v0 + k + 1) as f64)) * geometric(FI::point(1.0));
                if rest.hi <= TAIL * sum.lo {
                    return Some(sum + FI::new(0.0, rest.hi));
                }
            }
            None
        }
        (Offsets::Ray(u0), Offsets::Ray(v0)) => {
            // Squares of growing side k: the terms with u < u0 + k and v < v0 + k.
            let mut sum = FI::point(0.0);
            let s2 = FI::point(2.0).sqrt();
            for k in 0..MAX_TERMS {
                // Add the L-shaped layer u = u0 + k or v = v0 + k, summed on its own first so
                // that the enclosure widens by O(k) ulps over the square, not O(k²).
                let mut layer = FI::point(0.0);
                for j in 0..=k {
                    layer = layer + g(u0 + k, v0 + j);
                    if j < k {
                        layer = layer + g(u0 + j, v0 + k);
                    }
                }
                sum = sum + layer;
                // Rest: u ≥ u0+k+1 or v ≥ v0+k+1, each strip below Σ e^{−e(u+v)/√2}.
                let strip = decay(FI::point((u0 + k + 1 + v0) as f64).div(s2))
                    * geometric(FI::point(1.0).div(s2)).sqr();
                let rest = strip.mul_f64(2.0);
                if rest.hi <= TAIL * sum.lo {
                    return Some(sum + FI::new(0.0, rest.hi));
                }
            }
            None
        }
    }
}

/// The planar geometric grid channel on `space` (the cell centres of a grid) at `eps`.
pub fn planar_geometric_grid(space: &Space, eps: &Q) -> Result<Built, GridError> {
    let (grid, eps_noise) = grid_and_noise(space, eps, MIN_EPS_STEP)?;
    let (w, h) = (grid.width, grid.height);
    let n = w * h;
    let e = FI::from_q(&(&eps_noise * &grid.step));
    let mut cache: HashMap<(Offsets, Offsets), FI> = HashMap::new();
    let mut sum = |a: Offsets, b: Offsets| -> Result<FI, GridError> {
        let key = if (a, b) <= (b, a) { (a, b) } else { (b, a) };
        if let Some(v) = cache.get(&key) {
            return Ok(*v);
        }
        let v = lattice_sum(key.0, key.1, e).ok_or(GridError::Imprecise(f64::INFINITY))?;
        cache.insert(key, v);
        Ok(v)
    };
    // The whole plane: the normalizer 1/c.
    let whole = [(1u32, Offsets::Point(0)), (2, Offsets::Ray(1))];
    let mut total = FI::point(0.0);
    for &(ma, a) in &whole {
        for &(mb, b) in &whole {
            total = total + sum(a, b)?.mul_f64(f64::from(ma * mb));
        }
    }
    // 2·10⁻¹⁰ ≤ η·ε·s = min(10⁻³·ε·s, 10⁻⁹) for ε·s ≥ 0.05: the written ratios stay within
    // e^{ε·d} (module doc). Sums of thousands of enclosed terms are wider than the planar
    // Laplace grid's integrals (8 × 8 cells at ε·s = 0.5: 1.4·10⁻¹¹ before the layers of
    // the two-ray sums were summed on their own).
    built(grid, eps_noise, MAX_RELATIVE, |x| {
        let (i, j) = (x % w, x / w);
        let mut row = Vec::with_capacity(n);
        for c in 0..n {
            let (a, b) = (c % w, c / w);
            let mut s = FI::point(0.0);
            for &(ma, oa) in &offsets(a, i, w) {
                for &(mb, ob) in &offsets(b, j, h) {
                    s = s + sum(oa, ob)?.mul_f64(f64::from(ma * mb));
                }
            }
            row.push(s.div(total));
        }
        Ok(row)
    })
}

/// The planar geometric on the cell centres of a grid as a family of [`produce`](mod@crate::produce),
/// each entry an enclosed lattice sum ([`planar_geometric_grid`]); no certificate (privacy
/// is proven, `spec/geo.md` §2.4).
#[derive(Clone, Copy, Debug, Default)]
pub struct PlanarGeometricGridMech;

impl crate::produce::MechanismFamily for PlanarGeometricGridMech {
    fn name(&self) -> &'static str {
        "planar_geometric_grid"
    }

    fn paper_name(&self) -> String {
        "planar geometric grid".into()
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        progress: &dyn crate::progress::Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        super::planar_laplace_grid::check_grid_memory("the planar geometric grid", req, progress)
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn crate::progress::Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        super::planar_laplace_grid::grid_assembled(
            self.name(),
            planar_geometric_grid(req.space, &req.eps),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::f64_nearest;
    use crate::metric::MetricKind;

    /// Against a direct float sum over a large window of the lattice (ε·s = 0.7: the window's
    /// rest is below 10⁻¹⁵⁰), entry by entry, and rows summing to 1 exactly.
    #[test]
    fn entries_match_a_direct_lattice_sum() {
        let (w, h) = (4usize, 3usize);
        let pts = (0..w * h)
            .map(|i| vec![Q::from((i % w) as u64), Q::from((i / w) as u64)])
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let b =
            planar_geometric_grid(&space, &crate::exact::parse_rational("0.7").unwrap()).unwrap();
        let e = f64_nearest(&b.eps_noise);
        let r = 600i64;
        for x in [0usize, 5, 11] {
            let (xi, xj) = ((x % w) as i64, (x / w) as i64);
            let mut want = vec![0.0f64; w * h];
            let mut z = 0.0;
            for p in -r..r {
                for q in -r..r {
                    let g =
                        (-e * (((p - xi) * (p - xi) + (q - xj) * (q - xj)) as f64).sqrt()).exp();
                    z += g;
                    let (a, bb) = (p.clamp(0, w as i64 - 1), q.clamp(0, h as i64 - 1));
                    want[(bb * w as i64 + a) as usize] += g;
                }
            }
            let mut sum = Q::from(0u32);
            for c in 0..w * h {
                let got = f64_nearest(b.matrix.get(x, c));
                assert!(
                    (got - want[c] / z).abs() <= 1e-12,
                    "({x}, {c}): {got} vs {}",
                    want[c] / z
                );
                sum += b.matrix.get(x, c);
            }
            assert_eq!(sum, Q::from(1u32));
        }
    }
}
