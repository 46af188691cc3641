//! The planar Laplace on a grid (libqif's `planar_laplace_grid`; Andrés et al., CCS 2013,
//! §4's discretization), `spec/geo.md` §2.3.
//!
//! Inputs are the centres of a W × H grid of square cells of side s (`grid:W,H,STEP`, row
//! major with x fastest). An input x releases x + Z with Z the planar Laplace at ε_noise
//! (density ε²/(2π)·e^{−ε‖z‖}), and the output is the cell the release falls in, a point
//! outside the grid going to the nearest cell: the border cells reach to infinity. Being a
//! fixed map of an ε_noise-geo-indistinguishable release, the channel is ε_noise·d private
//! (post-processing; Theorem PL-GRID).
//!
//! **Entries.** M\[x\]\[c\] = P(x + Z ∈ cell c) is split at x into at most four rectangles,
//! one per quadrant, each reflected into the first quadrant and cut by the diagonal into two
//! wedges. On the wedge y = t·x (0 ≤ t ≤ 1) a ray at slope t meets [x₀, x₁] × [y₀, y₁]
//! between x_in(t) = max(x₀, y₀/t) and x_out(t) = min(x₁, y₁/t), at radii ‖(1, t)‖·x, and
//! the radius is Gamma(2, 1/ε) with survival T(r) = e^{−εr}(1 + εr), so
//!
//! mass = (1/2π) ∫₀¹ [T(√(1+t²)·x_in(t)) − T(√(1+t²)·x_out(t))]₊ dt/(1 + t²)
//!
//! (dθ = dt/(1+t²)). The integrand is smooth between the slopes where x_in or x_out changes
//! branch or the ray stops meeting the rectangle; each piece is integrated rigorously
//! ([`crate::quadrature`]) and the rounding of the slopes to doubles is enclosed. Every
//! entry is thus an interval of relative width about 10⁻¹³, and the file holds its
//! midpoint, the largest entry of each row taking up the rounding so that rows sum to 1
//! exactly.
//!
//! **ε.** The entries are computed at ε_noise = ε·(1 − η) with η = min(10⁻³, 10⁻⁹/(ε·s)),
//! so that the rounding of the entries (relative 10⁻¹¹ at most, checked) stays inside the
//! slack e^{η·ε·s} between ε_noise and ε on every pair of distinct inputs (ε·s below
//! [`MIN_EPS_STEP`] is refused: the slack would be too small); the audit then proves the
//! written matrix ε·d private.

use std::collections::HashMap;

use crate::exact::float::FI;
use crate::exact::{f64_nearest, q_from_f64, Q};
use crate::mechanism::Matrix;
use crate::metric::{MetricKind, Space};
use crate::quadrature::{integrate, Taylor};

/// Why a space is not the cell centres of a grid.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GridError {
    #[error("the planar Laplace grid needs the cell centres of a grid (a 2-D euclidean space in row-major order, e.g. grid:W,H,STEP): {0}")]
    NotAGrid(String),
    #[error("ε·step·(W + H) = {0:.3e} is over 600: the far entries e^{{−ε·d}} leave the range of doubles; use a smaller ε or grid")]
    TooFar(f64),
    #[error("an entry could not be enclosed closely enough (relative error {0:.2e})")]
    Imprecise(f64),
    #[error("ε·step = {0:.3e} is below {1}: use a larger ε or step")]
    TooFine(f64, f64),
}

/// A grid's shape: W × H cells of side `step`.
#[derive(Debug, Clone, PartialEq)]
pub struct Grid {
    pub width: usize,
    pub height: usize,
    pub step: Q,
}

/// The grid whose cell centres `space`'s points are (checked exactly, up to a shift).
pub fn grid_of(space: &Space) -> Result<Grid, GridError> {
    let bad = |m: String| GridError::NotAGrid(m);
    if space.kind() != MetricKind::Euclidean || space.points().iter().any(|p| p.len() != 2) {
        return Err(bad("not a 2-D euclidean space".into()));
    }
    let p = space.points();
    let n = p.len();
    let width = (1..n).find(|&i| p[i][1] != p[0][1]).unwrap_or(n);
    if n % width != 0 {
        return Err(bad(format!("{n} points do not fill rows of {width}")));
    }
    let height = n / width;
    let step = if width > 1 {
        &p[1][0] - &p[0][0]
    } else if height > 1 {
        &p[width][1] - &p[0][1]
    } else {
        Q::from(1u32)
    };
    if step <= 0u32 {
        return Err(bad("points 0 and 1 are not in increasing order".into()));
    }
    for (i, pt) in p.iter().enumerate() {
        let want_x = &p[0][0] + Q::from((i % width) as u64) * &step;
        let want_y = &p[0][1] + Q::from((i / width) as u64) * &step;
        if pt[0] != want_x || pt[1] != want_y {
            return Err(bad(format!(
                "point {i} is not the centre of cell ({}, {})",
                i % width,
                i / width
            )));
        }
    }
    Ok(Grid {
        width,
        height,
        step,
    })
}

/// A rectangle of the first quadrant in half-steps (the input at the origin): [x₀, x₁] ×
/// [y₀, y₁], `None` for ∞.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Quadrant {
    x0: u64,
    x1: Option<u64>,
    y0: u64,
    y1: Option<u64>,
}

/// A rational slope num/den (den > 0, or den = 0 for +∞).
#[derive(Debug, Clone, Copy)]
struct Slope {
    num: u64,
    den: u64,
}

impl Slope {
    fn lt(self, o: Slope) -> bool {
        (self.num as u128) * (o.den as u128) < (o.num as u128) * (self.den as u128)
    }
    fn enclosure(self) -> FI {
        FI::point(self.num as f64).div(FI::point(self.den as f64))
    }
    fn nearest(self) -> f64 {
        self.num as f64 / self.den as f64
    }
}

/// One end of a ray's stretch in a rectangle: a constant x, y/t (a horizontal side at
/// height y), or ∞.
#[derive(Debug, Clone, Copy)]
enum End {
    Const(u64),
    Over(u64),
    Infinite,
}

/// T(√(1+t²)·x(t)) in units where ε is `eps` per half-step.
fn survival(end: End, t: &Taylor, u: &Taylor, eps: FI) -> Option<Taylor> {
    let x = match end {
        End::Const(x) => Taylor::constant(FI::point(x as f64)),
        End::Over(y) => Taylor::constant(FI::point(y as f64)).div(t),
        End::Infinite => return None,
    };
    let r = u.mul(&x).scale(eps);
    let one = Taylor::constant(FI::point(1.0));
    Some(r.scale(FI::point(-1.0)).exp().mul(&r.add(&one)))
}

/// The wedge integrand (module doc) with the given ends.
fn integrand(t: &Taylor, into: End, out: End, eps: FI) -> Taylor {
    let one = Taylor::constant(FI::point(1.0));
    let tt = t.mul(t).add(&one);
    let u = tt.sqrt();
    let zero = Taylor::constant(FI::point(0.0));
    let a = survival(into, t, &u, eps).unwrap_or_else(|| zero.clone());
    let b = survival(out, t, &u, eps).unwrap_or(zero);
    let two_pi = FI::new(
        std::f64::consts::PI,
        crate::exact::float::next_up(std::f64::consts::PI),
    )
    .mul_f64(2.0);
    a.sub(&b).div(&tt).scale(FI::point(1.0).div(two_pi))
}

/// Relative tolerance of each piece's integral.
const REL_TOL: f64 = 1e-14;
/// ε·y/τ at which T underflows: below slope τ a y/t end contributes nothing a double holds.
const UNDERFLOW: f64 = 750.0;

/// ∫ over slopes [p, q] of the integrand with fixed ends, p, q doubles.
fn piece_integral(p: f64, q: f64, into: End, out: End, eps: FI) -> FI {
    let f = |t: &Taylor| integrand(t, into, out, eps);
    let mut total = FI::point(0.0);
    let mut start = p;
    if p == 0.0 {
        // A y/t end is singular at t = 0; below τ = ε·y/750 its T is under 751·e^{−750}.
        let ys: Vec<u64> = [into, out]
            .iter()
            .filter_map(|e| match e {
                End::Over(y) => Some(*y),
                _ => None,
            })
            .collect();
        if let Some(&ymin) = ys.iter().min() {
            let tau = (eps.lo * ymin as f64 / UNDERFLOW).min(q);
            let strip = |e: End| match e {
                End::Over(_) => End::Infinite,
                e => e,
            };
            let regular = |t: &Taylor| integrand(t, strip(into), strip(out), eps);
            total = total + integrate(&regular, 0.0, tau, REL_TOL * estimate(&regular, 0.0, tau));
            // Each y/t term's T on (0, τ] is at most T(ε·y/τ) (T decreases, √(1+t²) ≥ 1).
            let bound = |y: u64| {
                let r = eps * FI::point(y as f64).div(FI::point(tau));
                let t = (FI::point(0.0) - r).exp() * (r + FI::point(1.0));
                FI::new(0.0, (t * FI::point(tau)).hi)
            };
            if let End::Over(y) = into {
                total = total + bound(y);
            }
            if let End::Over(y) = out {
                total = total - bound(y);
            }
            start = tau;
        }
    }
    total + integrate(&f, start, q, REL_TOL * estimate(&f, start, q))
}

/// A rough size of ∫_a^b f (midpoint rule on eight pieces, in doubles): what the tolerance is
/// relative to.
fn estimate<F: Fn(&Taylor) -> Taylor>(f: &F, a: f64, b: f64) -> f64 {
    if a >= b {
        return 0.0;
    }
    let h = (b - a) / 8.0;
    let s: f64 = (0..8)
        .map(|i| {
            let v = f(&Taylor::var(FI::point(a + (i as f64 + 0.5) * h))).value();
            (v.lo + v.hi) / 2.0
        })
        .sum();
    (s * h).abs().max(f64::MIN_POSITIVE)
}

/// The mass of the wedge 0 ≤ y ≤ x of rectangle `r` (module doc).
fn wedge(r: Quadrant, eps: FI) -> FI {
    let mut cuts = vec![Slope { num: 0, den: 1 }, Slope { num: 1, den: 1 }];
    let mut add = |num: u64, den: Option<u64>| {
        if let Some(den) = den.filter(|&d| d > 0) {
            let s = Slope { num, den };
            if (Slope { num: 0, den: 1 }).lt(s) && s.lt(Slope { num: 1, den: 1 }) {
                cuts.push(s);
            }
        }
    };
    add(r.y0, r.x1);
    add(r.y0, Some(r.x0));
    if let Some(y1) = r.y1 {
        add(y1, Some(r.x0));
        add(y1, r.x1);
    }
    cuts.sort_by(|a, b| {
        if a.lt(*b) {
            std::cmp::Ordering::Less
        } else if b.lt(*a) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    cuts.dedup_by(|a, b| !a.lt(*b) && !b.lt(*a));
    // The ends on the piece whose slopes lie strictly between `a` and `b`, or `None` if the
    // ray misses the rectangle there; decided at the exact midpoint (a + b)/2.
    let ends = |a: Slope, b: Slope| -> Option<(End, End)> {
        // t = num/den with num = a.num·b.den + b.num·a.den, den = 2·a.den·b.den.
        let num = a.num as u128 * b.den as u128 + b.num as u128 * a.den as u128;
        let den = 2 * a.den as u128 * b.den as u128;
        // Scaled by num (t = num/den): x_in·num = max(x₀·num, y₀·den), x_out·num =
        // min(x₁·num, y₁·den); the ray meets the rectangle iff the first is below the second.
        let (x0n, y0d) = (r.x0 as u128 * num, r.y0 as u128 * den);
        let (into, in_scaled) = if x0n >= y0d {
            (End::Const(r.x0), x0n)
        } else {
            (End::Over(r.y0), y0d)
        };
        let x1n = r.x1.map(|x1| (End::Const(x1), x1 as u128 * num));
        let y1d = r.y1.map(|y1| (End::Over(y1), y1 as u128 * den));
        let out = match (x1n, y1d) {
            (Some(a), Some(b)) => Some(if a.1 <= b.1 { a } else { b }),
            (a, b) => a.or(b),
        };
        match out {
            None => Some((into, End::Infinite)),
            Some((end, scaled)) => (in_scaled < scaled).then_some((into, end)),
        }
    };
    let mut total = FI::point(0.0);
    let mut slack = FI::point(0.0);
    for (k, w) in cuts.windows(2).enumerate() {
        let (a, b) = (w[0], w[1]);
        let Some((into, out)) = ends(a, b) else {
            continue;
        };
        total = total + piece_integral(a.nearest(), b.nearest(), into, out, eps);
        // The pieces' ends are the slopes rounded to doubles: the stretch between a slope
        // and its double is integrated with a neighbour's ends or not at all, which moves
        // the integral by at most its width times both formulas' bound there.
        for (s, interior) in [(a, k > 0), (b, k + 2 < cuts.len())] {
            if interior {
                let e = s.enclosure().hull(FI::point(s.nearest()));
                let v = integrand(&Taylor::constant(e), into, out, eps).value();
                let bound = v.lo.abs().max(v.hi.abs());
                slack = slack + FI::point(e.width()) * FI::point(bound);
            }
        }
    }
    total + FI::new(-slack.hi, slack.hi)
}

/// The planar Laplace mass of cell `c`'s region seen from input `x` (module doc), with
/// `cache` keyed by the reflected rectangles.
fn entry(
    grid: (usize, usize),
    x: usize,
    c: usize,
    eps: FI,
    cache: &mut HashMap<Quadrant, FI>,
) -> FI {
    let (w, h) = grid;
    // Half-steps: cell (a, b) spans [2a, 2a + 2] × [2b, 2b + 2], centres are odd.
    let (cx, cy) = (2 * (x % w) as i64 + 1, 2 * (x / w) as i64 + 1);
    let (a, b) = ((c % w) as i64, (c / w) as i64);
    let span = |k: i64, n: i64, centre: i64| -> (Option<i64>, Option<i64>) {
        let lo = (k > 0).then_some(2 * k - centre);
        let hi = (k < n - 1).then_some(2 * k + 2 - centre);
        (lo, hi)
    };
    // One side of the centre of a span: [lo, hi] ∩ [0, ∞) and its mirror image.
    let halves = |(lo, hi): (Option<i64>, Option<i64>)| -> Vec<(u64, Option<u64>)> {
        let mut out = vec![];
        let (lo_pos, hi_pos) = (lo.map_or(0, |l| l.max(0)), hi);
        if hi_pos.is_none_or(|h| h > lo_pos) {
            out.push((lo_pos as u64, hi_pos.map(|h| h as u64)));
        }
        // Mirror: [−hi, −lo] ∩ [0, ∞).
        let (mlo, mhi) = (hi.map_or(0, |h| (-h).max(0)), lo.map(|l| -l));
        if mhi.is_none_or(|m| m > mlo) {
            out.push((mlo as u64, mhi.map(|m| m as u64)));
        }
        out
    };
    let xs = halves(span(a, w as i64, cx));
    let ys = halves(span(b, h as i64, cy));
    let mut total = FI::point(0.0);
    for &(x0, x1) in &xs {
        for &(y0, y1) in &ys {
            let q = Quadrant { x0, x1, y0, y1 };
            let m = *cache.entry(q).or_insert_with(|| {
                let swapped = Quadrant {
                    x0: y0,
                    x1: y1,
                    y0: x0,
                    y1: x1,
                };
                wedge(q, eps) + wedge(swapped, eps)
            });
            total = total + m;
        }
    }
    total
}

/// The channel and what it was computed with (both grid families).
#[derive(Debug, Clone)]
pub struct Built {
    pub matrix: Matrix,
    pub grid: Grid,
    /// ε_noise = ε·(1 − η) (module doc).
    pub eps_noise: Q,
    /// The largest relative half-width of an entry's enclosure.
    pub max_relative_width: f64,
}

/// One row of enclosed entries as the file holds it: each entry's midpoint (exact as a
/// rational), the largest taking up the rounding so that the row sums to exactly 1; with the
/// largest relative error of a written entry from its enclosure's value.
fn exact_row(row: &[FI]) -> Result<(Vec<Q>, f64), GridError> {
    let mids: Vec<f64> = row.iter().map(|e| e.lo + (e.hi - e.lo) / 2.0).collect();
    let mut worst = 0.0f64;
    for e in row {
        if !(e.lo > 0.0) {
            return Err(GridError::Imprecise(f64::INFINITY));
        }
        worst = worst.max(e.width() / 2.0 / e.lo);
    }
    let mut q: Vec<Q> = mids.iter().map(|&m| q_from_f64(m)).collect();
    let big = (0..row.len())
        .max_by(|&i, &j| mids[i].total_cmp(&mids[j]))
        .unwrap_or(0);
    let others: Q = q
        .iter()
        .enumerate()
        .filter(|&(j, _)| j != big)
        .fold(Q::from(0u32), |acc, (_, v)| acc + v);
    q[big] = Q::from(1u32) - others;
    let moved = (f64_nearest(&(&q[big] - q_from_f64(mids[big]))) / row[big].lo).abs();
    worst = worst.max(moved + row[big].width() / 2.0 / row[big].lo);
    Ok((q, worst))
}

/// Both grid families' file: the rows `row(x)` (enclosed entries, x = 0 … n − 1) written by
/// [`exact_row`], refused if a written entry is further than `max_relative` from its value.
pub(crate) fn built(
    grid: Grid,
    eps_noise: Q,
    max_relative: f64,
    mut row: impl FnMut(usize) -> Result<Vec<FI>, GridError>,
) -> Result<Built, GridError> {
    let n = grid.width * grid.height;
    let mut data = Vec::with_capacity(n * n);
    let mut worst = 0.0f64;
    for x in 0..n {
        let (q, err) = exact_row(&row(x)?)?;
        worst = worst.max(err);
        data.extend(q);
    }
    if worst > max_relative {
        return Err(GridError::Imprecise(worst));
    }
    Ok(Built {
        matrix: Matrix::new(n, n, data),
        grid,
        eps_noise,
        max_relative_width: worst,
    })
}

/// ε·s below which η·ε·s = 10⁻³·ε·s no longer covers the written entries' relative error
/// (2·10⁻¹¹ at most, checked): refused.
pub const MIN_EPS_STEP: f64 = 1e-7;

/// η of the module doc.
pub fn margin(eps: &Q, step: &Q) -> Q {
    let es = f64_nearest(&(eps * step));
    q_from_f64((1e-9 / es).min(1e-3))
}

/// The grid of `space` and ε_noise = ε·(1 − η), after the checks both grid families need:
/// ε·s·(W + H) ≤ 600 (far entries stay in the doubles' range) and ε·s ≥ `min_eps_step`.
pub(crate) fn grid_and_noise(
    space: &Space,
    eps: &Q,
    min_eps_step: f64,
) -> Result<(Grid, Q), GridError> {
    let grid = grid_of(space)?;
    let es = f64_nearest(&(eps * &grid.step));
    let reach = es * (grid.width + grid.height) as f64;
    if reach > 600.0 {
        return Err(GridError::TooFar(reach));
    }
    if es < min_eps_step {
        return Err(GridError::TooFine(es, min_eps_step));
    }
    let eps_noise = eps * (Q::from(1u32) - margin(eps, &grid.step));
    Ok((grid, eps_noise))
}

/// The planar Laplace grid channel on `space` (the cell centres of a grid) at `eps`.
pub fn planar_laplace_grid(space: &Space, eps: &Q) -> Result<Built, GridError> {
    let (grid, eps_noise) = grid_and_noise(space, eps, MIN_EPS_STEP)?;
    let (w, h) = (grid.width, grid.height);
    let n = w * h;
    // ε per half-step.
    let eps_half = FI::from_q(&(&eps_noise * &grid.step / Q::from(2u32)));
    let mut cache = HashMap::new();
    built(grid, eps_noise, 1e-11, |x| {
        Ok((0..n)
            .map(|c| entry((w, h), x, c, eps_half, &mut cache))
            .collect())
    })
}

/// The planar Laplace on the cell centres of a grid (`grid:W,H,STEP`) as a family of
/// [`produce`](mod@crate::produce), each entry an enclosed integral ([`planar_laplace_grid`]); no
/// certificate (privacy is proven, `spec/geo.md` §2.3).
#[derive(Clone, Copy, Debug, Default)]
pub struct PlanarLaplaceGridMech;

impl crate::produce::MechanismFamily for PlanarLaplaceGridMech {
    fn name(&self) -> &'static str {
        "planar_laplace_grid"
    }

    fn paper_name(&self) -> String {
        "planar Laplace grid".into()
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        progress: &dyn crate::progress::Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        check_grid_memory("the planar Laplace grid", req, progress)
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn crate::progress::Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        grid_assembled(self.name(), planar_laplace_grid(req.space, &req.eps))
    }
}

/// A grid channel's memory: its dense n × n exact matrix.
pub(crate) fn check_grid_memory(
    what: &str,
    req: &crate::produce::Request,
    progress: &dyn crate::progress::Progress,
) -> Result<(), crate::produce::ProduceError> {
    crate::produce::check_dense_memory(what, req.space.n(), || None, req.max_memory, progress)
}

/// A grid channel as [`produce`](mod@crate::produce) writes it: the matrix, and under `meta[name]` the
/// grid, ε_noise and the widest entry's relative enclosure width.
pub(crate) fn grid_assembled(
    name: &str,
    b: Result<Built, GridError>,
) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
    let b = b.map_err(|e| crate::produce::invalid("space", e.to_string()))?;
    let mut meta = serde_json::json!({});
    meta[name] = serde_json::json!({
        "width": b.grid.width, "height": b.grid.height,
        "step": crate::io::number_value(&b.grid.step),
        "epsilon_noise": crate::io::number_value(&b.eps_noise),
        "max_relative_width": b.max_relative_width});
    Ok(crate::produce::Assembled {
        meta,
        ..crate::produce::Assembled::matrix(b.matrix)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Monte-Carlo-free check in doubles: the polar integral by a fine midpoint rule over
    /// angles with the exact radial survival.
    fn polar(cx: f64, cy: f64, rect: [f64; 4], eps: f64) -> f64 {
        let steps = 200_000;
        let mut s = 0.0;
        for k in 0..steps {
            let th = (k as f64 + 0.5) / steps as f64 * std::f64::consts::TAU;
            let (dx, dy) = (th.cos(), th.sin());
            // Ray (cx, cy) + r (dx, dy) in [x0, x1] × [y0, y1].
            let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
            for (c, d, a, b) in [(cx, dx, rect[0], rect[1]), (cy, dy, rect[2], rect[3])] {
                if d.abs() < 1e-300 {
                    if c < a || c > b {
                        hi = -1.0;
                    }
                    continue;
                }
                let (t1, t2) = ((a - c) / d, (b - c) / d);
                lo = lo.max(t1.min(t2));
                hi = hi.min(t1.max(t2));
            }
            if hi > lo {
                let t = |r: f64| {
                    if r.is_infinite() {
                        0.0
                    } else {
                        (-eps * r).exp() * (1.0 + eps * r)
                    }
                };
                s += t(lo) - t(hi);
            }
        }
        s / steps as f64
    }

    #[test]
    fn entries_match_the_polar_integral_and_rows_sum_to_one() {
        let pts = (0..12)
            .map(|i| vec![Q::from((i % 4) as u64), Q::from((i / 4) as u64)])
            .collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let eps = Q::from(1u32);
        let b = planar_laplace_grid(&space, &eps).unwrap();
        assert_eq!((b.grid.width, b.grid.height), (4, 3));
        assert!(b.max_relative_width < 1e-11);
        let e = f64_nearest(&b.eps_noise);
        for x in [0usize, 5, 11] {
            let mut sum = Q::from(0u32);
            for c in 0..12 {
                let (a, bb) = ((c % 4) as f64, (c / 4) as f64);
                let rect = [
                    if a == 0.0 { f64::NEG_INFINITY } else { a - 0.5 },
                    if a == 3.0 { f64::INFINITY } else { a + 0.5 },
                    if bb == 0.0 {
                        f64::NEG_INFINITY
                    } else {
                        bb - 0.5
                    },
                    if bb == 2.0 { f64::INFINITY } else { bb + 0.5 },
                ];
                let want = polar((x % 4) as f64, (x / 4) as f64, rect, e);
                let got = f64_nearest(b.matrix.get(x, c));
                assert!((got - want).abs() < 1e-8, "({x}, {c}): {got} vs {want}");
                sum += b.matrix.get(x, c);
            }
            assert_eq!(sum, Q::from(1u32));
        }
    }

    /// Exact values the pieces must reproduce tightly (the polar check above is only good
    /// to 10⁻⁸): a whole quadrant is 1/4 and each of its wedges 1/8; the four rectangles
    /// [0, 1] × [0, 1], [1, ∞) × [0, 1], [0, 1] × [1, ∞), [1, ∞)² tile a quadrant, so their
    /// enclosures add up to one of 1/4 (breakpoints, the singular t → 0 bound and the
    /// slack all take part), each within 10⁻¹³.
    #[test]
    fn quadrants_and_their_tilings_enclose_a_quarter() {
        let eps = FI::point(0.7);
        let q = |x0, x1, y0, y1| Quadrant { x0, x1, y0, y1 };
        let mass = |r: Quadrant| wedge(r, eps) + wedge(q(r.y0, r.y1, r.x0, r.x1), eps);
        let whole = q(0, None, 0, None);
        let w = wedge(whole, eps);
        assert!(w.lo <= 0.125 && 0.125 <= w.hi && w.width() < 1e-14, "{w:?}");
        let tiles = [
            q(0, Some(1), 0, Some(1)),
            q(1, None, 0, Some(1)),
            q(0, Some(1), 1, None),
            q(1, None, 1, None),
        ];
        let sum = tiles.iter().fold(FI::point(0.0), |a, &t| a + mass(t));
        assert!(
            sum.lo <= 0.25 && 0.25 <= sum.hi && sum.width() < 1e-13,
            "{sum:?}"
        );
        for t in tiles {
            let m = mass(t);
            assert!(
                m.lo > 0.0 && m.width() < 1e-13 * m.hi.max(1e-3),
                "{t:?}: {m:?}"
            );
        }
    }

    #[test]
    fn grids_are_recognized_exactly() {
        let mk = |pts: Vec<Vec<i64>>| {
            Space::from_points(
                MetricKind::Euclidean,
                pts.into_iter()
                    .map(|p| p.into_iter().map(Q::from).collect())
                    .collect(),
                None,
            )
            .unwrap()
        };
        let g = grid_of(&mk(vec![vec![0, 0], vec![2, 0], vec![0, 2], vec![2, 2]])).unwrap();
        assert_eq!((g.width, g.height, g.step), (2, 2, Q::from(2u32)));
        assert!(grid_of(&mk(vec![vec![0, 0], vec![2, 0], vec![0, 2], vec![3, 2]])).is_err());
        assert!(grid_of(&mk(vec![vec![0, 0], vec![2, 0], vec![0, 1]])).is_err());
    }
}
