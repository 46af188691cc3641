//! The privacy checks of `mdp-audit` on the exactly row-normalized matrix
//! H\[u\]\[w\] = M\[u\]\[w\] / Σ_k M\[u\]\[k\]:
//!
//! * pure ε·d privacy (Imola et al., Definition 1 / LP rows (2)): for every ordered pair
//!   (u, v) in scope and every output w, H\[u\]\[w\] ≤ e^{ε·d(u,v)} H\[v\]\[w\];
//! * the tight pure ε: max over pairs of ln(R_uv)/d(u,v), R_uv = max_w H\[u\]\[w\]/H\[v\]\[w\];
//! * the (ε,δ) tight epsilon (Imola et al., eqs. (9)–(10)): per pair the smallest ε with
//!   Σ_w max(0, H\[u\]\[w\] − e^{ε d} H\[v\]\[w\]) ≤ δ (the hockey-stick divergence; the worst
//!   set S of (9) is {w : H\[u\]\[w\] > e^{εd} H\[v\]\[w\]}).
//!
//! Every decision is a proof: a fast `f64` filter whose error bound is proven (see
//! `spec/soundness.md`, "The fast filter") decides most pairs; the rest are decided in
//! exact rational arithmetic with refinable enclosures of e^x, ln x and d.

use crate::exact::float::FI;
use crate::exact::{f64_down, f64_nearest, f64_up, functions, Interval, Q};
use crate::mechanism::Matrix;
use crate::metric::Space;
use rayon::prelude::*;
use std::cmp::Ordering;

/// Directed-rounding bounds [lo, hi] on e^{ε d(u,v)} as f64 (rigorous `FI` arithmetic):
/// the privacy constant of rows (u, v, ·) of Definition 1, used by the `lp_dual` check
/// ([`crate::certificate`]) and by the LP assembly of the `mdp` crate.
pub fn exp_eps_d(space: &Space, eps: &Q, u: usize, v: usize) -> FI {
    if space.is_zero(u, v) {
        return FI::point(1.0);
    }
    FI::from_q(eps).mul(space.fi(u, v)).exp()
}

/// Unit roundoff of `f64` (round to nearest).
pub const U: f64 = f64::EPSILON / 2.0;
/// Proven bound on the relative error of a float-safe normalized entry h̃ = fl(fl(m)/fl(s)):
/// (1+u)²/(1−u) − 1 < 3.01u.
pub const RHO: f64 = 4.0 * U;
/// Proven bound on the relative error of a computed ratio fl(h̃_u · fl(1/h̃_v)) of float-safe
/// entries: (1+ρ)(1+u)²/(1−ρ) − 1 < 10.1u.
pub const KAPPA: f64 = 16.0 * U;
/// Starting and largest precision (bits) of the exact fallback's enclosures.
pub const START_PREC: u64 = 64;
pub const DEFAULT_MAX_PREC: u64 = 4096;
/// Target relative width of the reported ε enclosures.
pub const TARGET_REL_WIDTH: f64 = 1e-10;

/// A 3-valued verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    Holds,
    Fails,
    Undecided,
}

/// The normalized mechanism prepared for the checks.
pub struct Prepared<'a> {
    pub space: &'a Space,
    pub m: &'a Matrix,
    pub n: usize,
    pub k: usize,
    /// Exact row sums.
    pub sums: Vec<Q>,
    /// h̃: nearest-float normalized entries, row-major n×K.
    pub h: Vec<f64>,
    /// fl(1/h̃), row-major n×K (∞ where h̃ = 0): ratios are products, not quotients.
    pub recip: Vec<f64>,
    /// Rows whose every entry satisfies the error model (see [`RHO`]); pairs touching
    /// another row are decided exactly.
    pub safe: Vec<bool>,
    /// Rigorous enclosures of d(u, v), n×n.
    pub dist: Vec<FI>,
    /// d(u, v) = 0 exactly.
    pub zero: Vec<bool>,
    /// Pair (u, v) is in scope (all pairs, or d ≤ η with `neighbors`).
    pub scope: Vec<bool>,
    /// Largest precision for the exact fallback.
    pub max_prec: u64,
}

/// One row of the float copy h̃ = fl(x / s̃) (§1 of `spec/soundness.md`): `entries` are
/// the row's entries as doubles (`None` for an exact 0, which stays 0), `s` the double
/// nearest to the exact row sum. Returns h̃ and whether the row satisfies the error model
/// |h̃ − H| ≤ ρH: s̃ and every positive entry and quotient normal and finite (a positive
/// entry that rounded to 0, or underflows, makes the row unsafe: its pairs go exact).
pub(crate) fn float_safe_row(
    entries: impl Iterator<Item = Option<f64>>,
    s: f64,
) -> (Vec<f64>, bool) {
    let mut safe = s.is_finite() && s >= f64::MIN_POSITIVE;
    let row = entries
        .map(|x| {
            let Some(x) = x else { return 0.0 };
            let h = x / s;
            if !(x.is_finite() && x >= f64::MIN_POSITIVE && h >= f64::MIN_POSITIVE && h.is_finite())
            {
                safe = false;
            }
            h
        })
        .collect();
    (row, safe)
}

impl<'a> Prepared<'a> {
    /// Normalize rows, build the float copy and its error model, the distance enclosures
    /// and the pairs in scope. Returns `Err(pair)` if a scope decision d(u,v) ≤ η is
    /// undecidable at `max_prec` (the audit is then inconclusive).
    pub fn new(
        space: &'a Space,
        m: &'a Matrix,
        within: Option<&Q>,
        max_prec: u64,
    ) -> Result<Self, (usize, usize)> {
        let (n, k) = (m.rows, m.cols);
        let sums = m.row_sums();
        let rows: Vec<(Vec<f64>, bool)> = (0..n)
            .into_par_iter()
            .map(|u| {
                let entries = m
                    .row(u)
                    .iter()
                    .map(|q| (*q != 0u32).then(|| f64_nearest(q)));
                float_safe_row(entries, f64_nearest(&sums[u]))
            })
            .collect();
        let mut h = Vec::with_capacity(n * k);
        let mut safe = Vec::with_capacity(n);
        for (r, s) in rows {
            h.extend(r);
            safe.push(s);
        }
        let dist_rows: Vec<Vec<FI>> = (0..n)
            .into_par_iter()
            .map(|u| {
                (0..n)
                    .map(|v| {
                        if v < u {
                            FI::point(0.0)
                        } else {
                            space.fi(u, v)
                        }
                    })
                    .collect()
            })
            .collect();
        let mut dist = vec![FI::point(0.0); n * n];
        let mut zero = vec![false; n * n];
        for u in 0..n {
            for v in u..n {
                let d = dist_rows[u][v];
                dist[u * n + v] = d;
                dist[v * n + u] = d;
                let z = if d.lo > 0.0 {
                    false
                } else {
                    space.is_zero(u, v)
                };
                zero[u * n + v] = z;
                zero[v * n + u] = z;
            }
        }
        let mut scope = vec![true; n * n];
        if let Some(eta) = within {
            let (elo, ehi) = (f64_down(eta), f64_up(eta));
            for u in 0..n {
                for v in (u + 1)..n {
                    let d = dist[u * n + v];
                    let inside = if d.hi <= elo {
                        true
                    } else if d.lo > ehi {
                        false
                    } else {
                        match space.cmp_distance(u, v, eta, max_prec) {
                            Some(o) => o != Ordering::Greater,
                            None => return Err((u, v)),
                        }
                    };
                    scope[u * n + v] = inside;
                    scope[v * n + u] = inside;
                }
            }
        }
        let recip = h.par_iter().map(|x| 1.0 / x).collect();
        Ok(Prepared {
            space,
            m,
            n,
            k,
            sums,
            h,
            recip,
            safe,
            dist,
            zero,
            scope,
            max_prec,
        })
    }

    pub fn hrow(&self, u: usize) -> &[f64] {
        &self.h[u * self.k..(u + 1) * self.k]
    }

    pub fn recip_row(&self, u: usize) -> &[f64] {
        &self.recip[u * self.k..(u + 1) * self.k]
    }

    /// Exact H\[u\]\[w\].
    pub fn h_exact(&self, u: usize, w: usize) -> Q {
        self.m.get(u, w) / &self.sums[u]
    }

    /// Ordered pairs (u, v), u ≠ v, in scope.
    pub fn pairs_in_scope(&self) -> usize {
        (0..self.n * self.n)
            .filter(|&i| self.scope[i] && i / self.n != i % self.n)
            .count()
    }
}

/// The exact ratio R_uv = max_w H\[u\]\[w\] / H\[v\]\[w\] and its arg max, or `None` (R = ∞) with
/// the output w where H\[v\]\[w\] = 0 < H\[u\]\[w\].
pub fn exact_ratio(p: &Prepared, u: usize, v: usize) -> (Option<Q>, usize) {
    let mut best: Option<(Q, usize)> = None;
    for w in 0..p.k {
        let (a, b) = (p.m.get(u, w), p.m.get(v, w));
        if *a == 0u32 {
            continue;
        }
        if *b == 0u32 {
            return (None, w);
        }
        let r = a / b;
        if best.as_ref().is_none_or(|(x, _)| r > *x) {
            best = Some((r, w));
        }
    }
    match best {
        Some((r, w)) => (Some(r * &p.sums[v] / &p.sums[u]), w),
        None => unreachable!("row {u} has a positive entry"),
    }
}

/// Float ratios (R̃_uv, R̃_vu) for one unordered pair: max_w fl(h̃_uw · fl(1/h̃_vw)) (∞ where
/// h̃_vw = 0 < h̃_uw; 0·∞ = NaN entries are skipped: NaN never wins a comparison). Eight
/// independent maxima so the loop vectorizes.
#[inline]
pub fn pair_ratios(a: &[f64], ra: &[f64], b: &[f64], rb: &[f64]) -> (f64, f64) {
    const L: usize = 8;
    let (mut ma, mut mb) = ([0.0f64; L], [0.0f64; L]);
    let n = a.len() / L * L;
    for i in (0..n).step_by(L) {
        for j in 0..L {
            let q1 = a[i + j] * rb[i + j];
            let q2 = b[i + j] * ra[i + j];
            ma[j] = if q1 > ma[j] { q1 } else { ma[j] };
            mb[j] = if q2 > mb[j] { q2 } else { mb[j] };
        }
    }
    for i in n..a.len() {
        let q1 = a[i] * rb[i];
        let q2 = b[i] * ra[i];
        ma[0] = if q1 > ma[0] { q1 } else { ma[0] };
        mb[0] = if q2 > mb[0] { q2 } else { mb[0] };
    }
    let fold = |m: [f64; L]| m.iter().fold(0.0f64, |x, &y| if y > x { y } else { x });
    (fold(ma), fold(mb))
}

/// For every ordered pair, R̃_uv (n×n, diagonal 1). Only meaningful for safe rows.
pub fn float_ratios(p: &Prepared) -> Vec<f64> {
    let n = p.n;
    let rows: Vec<Vec<(f64, f64)>> = (0..n)
        .into_par_iter()
        .map(|u| {
            ((u + 1)..n)
                .map(|v| pair_ratios(p.hrow(u), p.recip_row(u), p.hrow(v), p.recip_row(v)))
                .collect()
        })
        .collect();
    let mut r = vec![1.0; n * n];
    for (u, row) in rows.into_iter().enumerate() {
        for (j, (a, b)) in row.into_iter().enumerate() {
            let v = u + 1 + j;
            r[u * n + v] = a;
            r[v * n + u] = b;
        }
    }
    r
}

/// Rigorous bounds [R_lo, R_hi] on the true R_uv from the float ratio of safe rows.
/// `None` when R̃ = ∞ (exact: a zero against a positive entry; the exact path decides).
pub fn ratio_bounds(rt: f64) -> Option<FI> {
    if !rt.is_finite() {
        return None;
    }
    let r = FI::point(rt);
    Some(FI::new(
        r.mul_f64(1.0 - KAPPA).lo,
        r.mul_f64(1.0 + KAPPA).hi,
    ))
}

/// Decide R ≤ e^{ε d(u,v)} exactly (R = `None` is ∞), as ln R ≤ ε·d(u,v): both sides
/// are enclosed at rising precision (no exponential of a possibly huge ε·d is formed).
pub fn exact_ratio_vs_bound(p: &Prepared, u: usize, v: usize, r: &Option<Q>, eps: &Q) -> Decision {
    ratio_within(r, p.zero[u * p.n + v], eps, p.max_prec, |prec| {
        p.space.enclosure(u, v, prec)
    })
}

/// Decide R ≤ e^{ε·d} exactly (R = `None` is ∞) for a pair at distance d, given by its
/// enclosure at a precision (`dist`), `zero` when d = 0 exactly: ln R ≤ ε·d with both
/// sides enclosed at rising precision up to `max_prec` bits.
pub fn ratio_within(
    r: &Option<Q>,
    zero: bool,
    eps: &Q,
    max_prec: u64,
    dist: impl Fn(u64) -> Interval,
) -> Decision {
    let Some(r) = r else { return Decision::Fails };
    if *r <= 1u32 {
        return Decision::Holds; // e^{εd} ≥ 1
    }
    if zero {
        return Decision::Fails;
    }
    functions::refine(START_PREC, max_prec, |prec| {
        let l = functions::ln(&Interval::point(r.clone()), prec)?;
        let x = dist(prec).scale(eps);
        if l.hi <= x.lo {
            Some(Decision::Holds)
        } else if l.lo > x.hi {
            Some(Decision::Fails)
        } else {
            None
        }
    })
    .unwrap_or(Decision::Undecided)
}

/// A violating triple of the pure check, with enclosures of both sides.
#[derive(Clone, Debug)]
pub struct Witness {
    pub u: usize,
    pub v: usize,
    pub w: usize,
    /// H\[u\]\[w\] (exact, shown as an f64 enclosure).
    pub lhs: (f64, f64),
    /// e^{ε d(u,v)} H\[v\]\[w\].
    pub rhs: (f64, f64),
}

/// Result of the pure check at one ε.
#[derive(Clone, Debug)]
pub struct PureCheck {
    pub decision: Decision,
    pub witness: Option<Witness>,
    /// An undecided pair, if any.
    pub undecided: Option<(usize, usize)>,
    /// Ordered pairs checked, and how many needed the exact fallback.
    pub pairs: usize,
    pub exact_pairs: usize,
}

/// Classify a pair with the fast filter: Holds / Fails are proofs; Undecided → exact.
fn filter_pair(p: &Prepared, ratios: &[f64], eps: FI, u: usize, v: usize) -> Decision {
    let n = p.n;
    if !(p.safe[u] && p.safe[v]) {
        return Decision::Undecided;
    }
    let Some(r) = ratio_bounds(ratios[u * n + v]) else {
        return Decision::Undecided; // exact path finds the witness
    };
    let c = if p.zero[u * n + v] {
        FI::point(1.0)
    } else {
        eps.mul(p.dist[u * n + v]).exp()
    };
    if r.hi <= c.lo {
        Decision::Holds
    } else if r.lo > c.hi {
        Decision::Fails
    } else {
        Decision::Undecided
    }
}

fn witness(p: &Prepared, u: usize, v: usize, eps: &Q) -> Witness {
    let (_, w) = exact_ratio(p, u, v);
    let lhs = p.h_exact(u, w);
    let hv = p.h_exact(v, w);
    let rhs = if p.zero[u * p.n + v] {
        Some(Interval::point(hv))
    } else {
        let x = p.space.enclosure(u, v, 136).scale(eps);
        functions::exp_checked(&x, 128).map(|c| c.scale(&hv))
    };
    Witness {
        u,
        v,
        w,
        lhs: (f64_down(&lhs), f64_up(&lhs)),
        // e^{εd} beyond 2^(2^21): shown as [f64::MAX, ∞]
        rhs: rhs.map_or((f64::MAX, f64::INFINITY), |r| r.to_f64_bounds()),
    }
}

/// Pure ε·d privacy at `eps` for every ordered pair in scope.
pub fn check_pure(p: &Prepared, ratios: &[f64], eps: &Q) -> PureCheck {
    check_pure_with(p, ratios, eps, &crate::progress::Silent)
}

/// [`check_pure`], reporting the exact fallback (its slow part) as a phase.
pub fn check_pure_with(
    p: &Prepared,
    ratios: &[f64],
    eps: &Q,
    progress: &dyn crate::progress::Progress,
) -> PureCheck {
    let flagged = float_flagged(p, ratios, eps);
    let mut out = PureCheck {
        decision: Decision::Holds,
        witness: None,
        undecided: None,
        pairs: p.pairs_in_scope(),
        exact_pairs: 0,
    };
    // Pass 2: exact fallback for the flagged pairs (proven failures still get an exact
    // witness).
    let t = std::time::Instant::now();
    progress.start(
        &format!(
            "audit: pure privacy, exact fallback on {} pairs",
            flagged.len()
        ),
        Some(flagged.len() as u64),
    );
    let done = |out: &PureCheck| {
        progress.finish(&format!(
            "audit: pure privacy decided {} pairs exactly ({:.1} s)",
            out.exact_pairs,
            t.elapsed().as_secs_f64()
        ))
    };
    for (u, v, d) in flagged {
        progress.advance(1);
        match decide_flagged(p, u, v, d, eps, &mut out.exact_pairs) {
            Decision::Holds => {}
            Decision::Fails => {
                out.decision = Decision::Fails;
                out.witness = Some(witness(p, u, v, eps));
                done(&out);
                return out;
            }
            Decision::Undecided => {
                out.decision = Decision::Undecided;
                out.undecided.get_or_insert((u, v));
            }
        }
    }
    done(&out);
    out
}

/// Pass 1 of [`check_pure`] (parallel): the float filter over all pairs in scope; the
/// pairs it cannot prove, with its verdict (a proven failure, or undecided).
fn float_flagged(p: &Prepared, ratios: &[f64], eps: &Q) -> Vec<(usize, usize, Decision)> {
    let n = p.n;
    let feps = FI::from_q(eps);
    (0..n)
        .into_par_iter()
        .flat_map_iter(|u| {
            (0..n).filter_map(move |v| {
                if u == v || !p.scope[u * n + v] {
                    return None;
                }
                match filter_pair(p, ratios, feps, u, v) {
                    Decision::Holds => None,
                    d => Some((u, v, d)),
                }
            })
        })
        .collect()
}

/// Pass 2 for one flagged pair: an undecided one is decided exactly (counted).
fn decide_flagged(
    p: &Prepared,
    u: usize,
    v: usize,
    d: Decision,
    eps: &Q,
    exact_pairs: &mut usize,
) -> Decision {
    if d == Decision::Undecided {
        *exact_pairs += 1;
        let (r, _) = exact_ratio(p, u, v);
        exact_ratio_vs_bound(p, u, v, &r, eps)
    } else {
        d
    }
}

/// Every pair that violates ε·d privacy at `eps`, and the first pair that cannot be
/// decided at the maximum precision.
fn failing_pairs(
    p: &Prepared,
    ratios: &[f64],
    eps: &Q,
) -> (Vec<(usize, usize)>, Option<(usize, usize)>) {
    let mut exact = 0;
    let (mut fails, mut undecided) = (Vec::new(), None);
    for (u, v, d) in float_flagged(p, ratios, eps) {
        match decide_flagged(p, u, v, d, eps, &mut exact) {
            Decision::Holds => {}
            Decision::Fails => fails.push((u, v)),
            Decision::Undecided => {
                undecided.get_or_insert((u, v));
            }
        }
    }
    (fails, undecided)
}

/// An enclosure of a tight ε: `None` = +∞ (no finite ε works).
#[derive(Clone, Debug, PartialEq)]
pub struct EpsEnclosure {
    pub lo: Q,
    pub hi: Option<Q>,
    /// The pair attaining the lower end.
    pub pair: Option<(usize, usize)>,
}

impl EpsEnclosure {
    /// [0, 0]: no pair seen yet.
    pub fn zero() -> Self {
        EpsEnclosure {
            lo: Q::from(0u32),
            hi: Some(Q::from(0u32)),
            pair: None,
        }
    }
    /// +∞, attained by `pair`.
    pub fn infinite(pair: (usize, usize)) -> Self {
        EpsEnclosure {
            lo: Q::from(0u32),
            hi: None,
            pair: Some(pair),
        }
    }
    /// Fold in the enclosure `e` of one pair's ε: the max of the lower ends (with its
    /// pair) and of the upper ends, then the upper end widened to at least
    /// lo·(1 + [`TARGET_REL_WIDTH`]) so the verification pass has room to prove it.
    pub(crate) fn absorb(&mut self, e: Interval, pair: (usize, usize)) {
        if e.lo > self.lo || self.pair.is_none() {
            self.lo = e.lo.clone().max(self.lo.clone());
            self.pair = Some(pair);
        }
        let hi = self.hi.clone().expect("finite");
        let want = target_hi(&self.lo).max(e.hi);
        if want > hi {
            self.hi = Some(want);
        }
    }
    pub fn is_infinite(&self) -> bool {
        self.hi.is_none()
    }
    pub fn to_f64(&self) -> (f64, f64) {
        (
            f64_down(&self.lo),
            self.hi.as_ref().map_or(f64::INFINITY, f64_up),
        )
    }
}

/// ln(t)/d(u,v) as a rational enclosure of relative width ≤ [`TARGET_REL_WIDTH`] (t ≥ 1
/// rational, d(u,v) > 0).
pub fn eps_of_ratio(p: &Prepared, u: usize, v: usize, t: &Q) -> Option<Interval> {
    eps_of(t, p.max_prec, |prec| p.space.enclosure(u, v, prec))
}

/// ln(t)/d for t ≥ 1 rational and d > 0 given by its enclosure at a precision (`dist`), to
/// relative width ≤ [`TARGET_REL_WIDTH`] or the widest `max_prec` allows.
pub fn eps_of(t: &Q, max_prec: u64, dist: impl Fn(u64) -> Interval) -> Option<Interval> {
    if *t == 1u32 {
        return Some(Interval::point(Q::from(0u32)));
    }
    functions::refine(START_PREC, max_prec, |prec| {
        let l = functions::ln(&Interval::point(t.clone()), prec)?;
        let d = dist(prec);
        if d.lo <= 0u32 {
            return None;
        }
        let e = l.div(&d)?;
        let e = Interval::new(if e.lo < 0u32 { Q::from(0u32) } else { e.lo }, e.hi);
        match e.relative_width() {
            Some(w) if w <= Q::try_from(TARGET_REL_WIDTH).unwrap() => Some(e),
            _ if prec >= max_prec => Some(e),
            _ => None,
        }
    })
}

/// Widen `lo` by the target relative width, as a rational upper end.
fn target_hi(lo: &Q) -> Q {
    lo * Q::try_from(1.0 + TARGET_REL_WIDTH).unwrap()
}

/// The work of [`tight_pure_eps`]. The float estimates only propose pairs (the
/// verification decides every pair), so a wrong estimate shows here, not in the result.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PureStats {
    /// Pairs whose ε was computed exactly: the candidates, then the pairs a verification
    /// pass found above the upper end.
    pub exact_pairs: usize,
    /// Verification passes over every pair in scope (0 when a candidate is infinite; 1
    /// when the candidates held the arg max).
    pub passes: usize,
}

/// The tight pure ε over the pairs in scope, as an enclosure of relative width ≤ 1e-10
/// with the search's work, or `Err(pair)` if some pair is undecidable at the precision
/// limit.
pub fn tight_pure_eps(
    p: &Prepared,
    ratios: &[f64],
) -> Result<(EpsEnclosure, PureStats), (usize, usize)> {
    let n = p.n;
    // Infinite cases: d = 0 with different rows, or a zero against a positive entry.
    // Estimate per pair; collect candidates.
    let mut est: Vec<(f64, usize, usize)> = Vec::new();
    for u in 0..n {
        for v in 0..n {
            if u == v || !p.scope[u * n + v] {
                continue;
            }
            let i = u * n + v;
            let r = ratios[i];
            let e = if p.zero[i] {
                if r > 1.0 + 1e-12 || !(p.safe[u] && p.safe[v]) {
                    f64::INFINITY
                } else {
                    0.0
                }
            } else if !(p.safe[u] && p.safe[v]) {
                f64::INFINITY
            } else {
                r.max(1.0).ln() / (0.5 * (p.dist[i].lo + p.dist[i].hi))
            };
            est.push((e, u, v));
        }
    }
    let mut enc = EpsEnclosure::zero();
    let mut stats = PureStats::default();
    let est = est.into_iter().map(|(e, u, v)| (e, (u, v))).collect();
    for (u, v) in best_candidates(est) {
        stats.exact_pairs += 1;
        if absorb_pair(p, u, v, &mut enc)? {
            return Ok((enc, stats));
        }
    }
    // Verification at T = hi: every pair must satisfy R ≤ e^{T d}; the pairs that do not
    // are computed exactly and absorbed, all of them at once. A pair failing at the new
    // T' ≥ T also failed at T (monotone in T), so this loop runs at most twice unless a
    // pair was undecided (O(n²K) per round, not one round per violating pair).
    loop {
        let t = enc.hi.clone().expect("finite");
        let (fails, undecided) = failing_pairs(p, ratios, &t);
        stats.passes += 1;
        if fails.is_empty() {
            return match undecided {
                None => Ok((enc, stats)),
                Some(pair) => Err(pair),
            };
        }
        for (u, v) in fails {
            stats.exact_pairs += 1;
            if absorb_pair(p, u, v, &mut enc)? {
                return Ok((enc, stats));
            }
        }
    }
}

/// The candidates of a tight-ε search from float estimates (largest first, ties in the
/// order of `T`): every pair without a finite estimate (up to 64) and the best finite
/// estimates (within 1e-6 of the largest, at most 16). The verification that follows
/// catches anything the estimates missed, so this choice affects speed only.
pub(crate) fn best_candidates<T: Copy + Ord>(mut est: Vec<(f64, T)>) -> Vec<T> {
    est.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
    let top = est
        .iter()
        .find(|x| x.0.is_finite())
        .map(|x| x.0)
        .unwrap_or(0.0);
    let infinite = est.iter().take_while(|x| x.0.is_infinite()).take(64);
    let finite = est
        .iter()
        .filter(|x| x.0.is_finite())
        .take_while(|x| x.0 >= top * (1.0 - 1e-6))
        .take(16);
    infinite.chain(finite).map(|x| x.1).collect()
}

/// Fold the exact ε of pair (u, v) into `enc`; returns true if it is infinite.
fn absorb_pair(
    p: &Prepared,
    u: usize,
    v: usize,
    enc: &mut EpsEnclosure,
) -> Result<bool, (usize, usize)> {
    let (r, _) = exact_ratio(p, u, v);
    let Some(r) = r else {
        *enc = EpsEnclosure::infinite((u, v));
        return Ok(true);
    };
    if p.zero[u * p.n + v] {
        if r > 1u32 {
            *enc = EpsEnclosure::infinite((u, v));
            return Ok(true);
        }
        return Ok(false);
    }
    enc.absorb(eps_of_ratio(p, u, v, &r).ok_or((u, v))?, (u, v));
    Ok(false)
}

// ---------------------------------------------------------------------------------------
// (ε, δ): the hockey-stick divergence f_uv(t) = Σ_w max(0, H[u][w] − t·H[v][w]).

/// Σ_w max(0, a_w·α − b_w·β) in `f64`, with eight independent partial sums (any
/// summation order of K non-negative terms has relative error ≤ (K−1)u).
#[inline]
fn positive_part_sum(a: &[f64], b: &[f64], alpha: f64, beta: f64) -> f64 {
    const L: usize = 8;
    let mut acc = [0.0f64; L];
    let n = a.len() / L * L;
    for i in (0..n).step_by(L) {
        for j in 0..L {
            let z = a[i + j] * alpha - b[i + j] * beta;
            acc[j] += if z > 0.0 { z } else { 0.0 };
        }
    }
    for i in n..a.len() {
        let z = a[i] * alpha - b[i] * beta;
        acc[0] += if z > 0.0 { z } else { 0.0 };
    }
    acc.iter().sum()
}

/// Float value of f_uv(t) (estimate).
#[inline]
pub fn hockey(a: &[f64], b: &[f64], t: f64) -> f64 {
    positive_part_sum(a, b, 1.0, t)
}

/// A proven upper bound on f_uv(t) for every t ≥ `t_lo`, from float-safe rows (proof in
/// `spec/soundness.md` §5: with A = (1+ρ')(1+8u)↑ and B = t_lo(1−ρ)(1−8u)↓, each computed
/// max(0, fl(fl(ã·A) − fl(b̃·B))) bounds the true term, and a float sum S of K non-negative
/// terms satisfies Σ ≤ S/(1 − K·u)).
pub fn hockey_upper(a: &[f64], b: &[f64], t_lo: f64) -> f64 {
    let rho1 = FI::point(RHO).div(FI::point(1.0 - RHO)).hi;
    let big_a = FI::point(1.0)
        .add(FI::point(rho1))
        .mul_f64(1.0 + 8.0 * U)
        .hi;
    let big_b = FI::point(t_lo).mul_f64(1.0 - RHO).mul_f64(1.0 - 8.0 * U).lo;
    let s = positive_part_sum(a, b, big_a, big_b);
    let k = a.len() as f64;
    FI::point(s)
        .div(FI::point(1.0).sub(FI::point(k * U).mul_f64(1.0 + 4.0 * U)))
        .hi
}

/// The arithmetic of the per-pair t* solve, written once ([`t_star`]) over `f64` (the
/// search's estimate) and [`Q`] (the proof), as CGAL writes a predicate once over its
/// number type.
pub trait TStarField: Clone + PartialOrd {
    fn zero() -> Self;
    fn one() -> Self;
    fn add(&self, o: &Self) -> Self;
    fn sub(&self, o: &Self) -> Self;
    fn mul(&self, o: &Self) -> Self;
    fn div(&self, o: &Self) -> Self;
    /// Σ terms (f64: in order; Q: as a tree, no quadratic growth of partial sums).
    fn sum(terms: Vec<Self>) -> Self;
    /// f(1) = Σ_w max(0, a_w − b_w).
    fn excess(a: &[Self], b: &[Self]) -> Self {
        let terms = a
            .iter()
            .zip(b)
            .filter(|(x, y)| x > y)
            .map(|(x, y)| x.sub(y))
            .collect();
        Self::sum(terms)
    }
}

impl TStarField for f64 {
    fn zero() -> Self {
        0.0
    }
    fn one() -> Self {
        1.0
    }
    fn add(&self, o: &Self) -> Self {
        self + o
    }
    fn sub(&self, o: &Self) -> Self {
        self - o
    }
    fn mul(&self, o: &Self) -> Self {
        self * o
    }
    fn div(&self, o: &Self) -> Self {
        self / o
    }
    fn sum(terms: Vec<Self>) -> Self {
        terms.iter().sum()
    }
    fn excess(a: &[Self], b: &[Self]) -> Self {
        hockey(a, b, 1.0)
    }
}

impl TStarField for Q {
    fn zero() -> Self {
        Q::from(0u32)
    }
    fn one() -> Self {
        Q::from(1u32)
    }
    fn add(&self, o: &Self) -> Self {
        self + o
    }
    fn sub(&self, o: &Self) -> Self {
        self - o
    }
    fn mul(&self, o: &Self) -> Self {
        self * o
    }
    fn div(&self, o: &Self) -> Self {
        self / o
    }
    fn sum(terms: Vec<Self>) -> Self {
        crate::exact::sum_tree(terms)
    }
}

/// The per-pair (ε,δ) t*: the smallest t ≥ 1 with f(t) = Σ_w max(0, a_w − t·b_w) ≤ δ, or
/// `None` = ∞. f is convex, piecewise linear and non-increasing with breakpoints a_w/b_w:
/// walk them downwards, accumulating the active a and b; between two breakpoints f is
/// linear and its root is (Σa − δ)/Σb. Exact over [`Q`]; an estimate over `f64`.
pub fn t_star<N: TStarField>(a: &[N], b: &[N], delta: &N) -> Option<N> {
    let one = N::one();
    if N::excess(a, b) <= *delta {
        return Some(one);
    }
    let zero = N::zero();
    let mut a0_terms = Vec::new();
    let mut bp: Vec<(N, &N, &N)> = Vec::new();
    for (x, y) in a.iter().zip(b) {
        if *x > zero {
            if *y == zero {
                a0_terms.push(x.clone());
            } else if x > y {
                bp.push((x.div(y), x, y));
            }
        }
    }
    let a0 = N::sum(a0_terms);
    if a0 > *delta {
        return None;
    }
    bp.sort_by(|p, q| q.0.partial_cmp(&p.0).unwrap_or(std::cmp::Ordering::Equal));
    let (mut sa, mut sb) = (a0, zero);
    let mut i = 0;
    while i < bp.len() {
        let t = bp[i].0.clone();
        if sa.sub(&t.mul(&sb)) > *delta {
            return Some(sa.sub(delta).div(&sb));
        }
        while i < bp.len() && bp[i].0 == t {
            sa = sa.add(bp[i].1);
            sb = sb.add(bp[i].2);
            i += 1;
        }
    }
    // Every breakpoint above 1 is active: f(1) = sa − sb > δ, so t* = (sa − δ)/sb > 1
    // exactly (the max only absorbs float rounding).
    let t = sa.sub(delta).div(&sb);
    Some(if t < one { one } else { t })
}

/// The exact t* of pair (u, v) on the exactly normalized rows.
pub fn exact_t_star(p: &Prepared, u: usize, v: usize, delta: &Q) -> Option<Q> {
    let a: Vec<Q> = (0..p.k).map(|w| p.h_exact(u, w)).collect();
    let b: Vec<Q> = (0..p.k).map(|w| p.h_exact(v, w)).collect();
    t_star(&a, &b, delta)
}

/// Exact enclosure of the per-pair (ε,δ) tight ε (`Ok(None)` = ∞).
fn exact_pair_eps_delta(
    p: &Prepared,
    u: usize,
    v: usize,
    delta: &Q,
) -> Result<Option<Interval>, (usize, usize)> {
    match exact_t_star(p, u, v, delta) {
        None => Ok(None),
        Some(t) if t == 1u32 => Ok(Some(Interval::point(Q::from(0u32)))),
        Some(_) if p.zero[u * p.n + v] => Ok(None),
        Some(t) => eps_of_ratio(p, u, v, &t).map(Some).ok_or((u, v)),
    }
}

/// Statistics of the (ε,δ) search.
#[derive(Clone, Debug, Default)]
pub struct DeltaStats {
    pub pairs_searched: usize,
    pub exact_pairs: usize,
}

/// The (ε,δ) tight epsilon (Imola et al. eq. (10)) over the ordered pairs in scope.
pub fn tight_eps_delta(
    p: &Prepared,
    ratios: &[f64],
    delta: &Q,
) -> Result<(EpsEnclosure, DeltaStats), (usize, usize)> {
    let n = p.n;
    let fdelta = f64_nearest(delta);
    let mut stats = DeltaStats::default();
    // Search order: decreasing pure-ε estimate, an upper bound of the (ε,δ) value.
    let mut order: Vec<(f64, usize, usize)> = Vec::new();
    for u in 0..n {
        for v in 0..n {
            let i = u * n + v;
            if u == v || !p.scope[i] {
                continue;
            }
            let e = if !(p.safe[u] && p.safe[v]) || ratios[i].is_infinite() {
                f64::INFINITY
            } else if p.zero[i] {
                if ratios[i] > 1.0 {
                    f64::INFINITY
                } else {
                    0.0
                }
            } else {
                ratios[i].max(1.0).ln() / (0.5 * (p.dist[i].lo + p.dist[i].hi)) * (1.0 + 1e-9)
            };
            order.push((e, u, v));
        }
    }
    order.sort_by(|a, b| b.0.total_cmp(&a.0));
    // Float search for the arg max.
    let mut best = 0.0f64;
    let mut best_pair: Option<(usize, usize)> = None;
    for &(e, u, v) in &order {
        if e <= best {
            break;
        }
        stats.pairs_searched += 1;
        let (a, b) = (p.hrow(u), p.hrow(v));
        let i = u * n + v;
        let dmid = 0.5 * (p.dist[i].lo + p.dist[i].hi);
        if best_pair.is_some() && !p.zero[i] && hockey(a, b, (best * dmid).exp()) <= fdelta {
            continue;
        }
        let val = match t_star(a, b, &fdelta) {
            None => f64::INFINITY,
            Some(t) if t <= 1.0 => 0.0,
            Some(_) if p.zero[i] => f64::INFINITY,
            Some(t) => t.ln() / dmid,
        };
        if val > best || best_pair.is_none() {
            best = val.max(best);
            best_pair = Some((u, v));
        }
    }
    let mut enc = EpsEnclosure::zero();
    if let Some((u, v)) = best_pair {
        stats.exact_pairs += 1;
        match exact_pair_eps_delta(p, u, v, delta)? {
            None => return Ok((EpsEnclosure::infinite((u, v)), stats)),
            Some(e) => enc.absorb(e, (u, v)),
        }
    }
    // Rigorous verification: every pair has ε_uv(δ) ≤ T, i.e. f_uv(e^{T d}) ≤ δ.
    let flagged = eps_delta_unproven(p, ratios, delta, enc.hi.as_ref().expect("finite"));
    for (u, v) in flagged {
        stats.exact_pairs += 1;
        match exact_pair_eps_delta(p, u, v, delta)? {
            None => return Ok((EpsEnclosure::infinite((u, v)), stats)),
            Some(e) => enc.absorb(e, (u, v)),
        }
    }
    Ok((enc, stats))
}

/// The verification pass of [`tight_eps_delta`]: the ordered pairs in scope for which the
/// floats do not prove ε_uv(δ) ≤ `t`, i.e. f_uv(e^{t·d(u,v)}) ≤ δ (Imola et al. eq. 10).
/// Every other pair in scope is proven: by pure privacy at `t` (R ≤ e^{t d} gives
/// f(e^{t d}) = 0) or by [`hockey_upper`] (`spec/soundness.md` §5). A pair with an unsafe
/// row is always returned; the caller decides the returned pairs exactly.
pub fn eps_delta_unproven(p: &Prepared, ratios: &[f64], delta: &Q, t: &Q) -> Vec<(usize, usize)> {
    let n = p.n;
    let ft = FI::from_q(t);
    let dlo = f64_down(delta);
    (0..n)
        .into_par_iter()
        .flat_map_iter(|u| {
            (0..n).filter_map(move |v| {
                let i = u * n + v;
                if u == v || !p.scope[i] {
                    return None;
                }
                if !(p.safe[u] && p.safe[v]) {
                    return Some((u, v));
                }
                let t_lo = if p.zero[i] {
                    1.0
                } else {
                    ft.mul(p.dist[i]).exp().lo
                };
                // Pure privacy at T for this pair (R ≤ e^{Td}) already gives f(e^{Td}) = 0.
                if ratio_bounds(ratios[i]).is_some_and(|r| r.hi <= t_lo)
                    || hockey_upper(p.hrow(u), p.hrow(v), t_lo) <= dlo
                {
                    None
                } else {
                    Some((u, v))
                }
            })
        })
        .collect()
}

/// Reference implementations that use no float filter at all: every triple / pair decided
/// in exact rational arithmetic. Slow; for the differential tests of the fast path.
pub mod reference {
    use super::*;

    /// Pure privacy at `eps`, every ordered pair in scope, every output, exactly.
    pub fn check_pure(p: &Prepared, eps: &Q) -> Decision {
        let mut out = Decision::Holds;
        for u in 0..p.n {
            for v in 0..p.n {
                if u == v || !p.scope[u * p.n + v] {
                    continue;
                }
                for w in 0..p.k {
                    let a = p.h_exact(u, w);
                    let b = p.h_exact(v, w);
                    let d = if a == 0u32 {
                        Decision::Holds
                    } else if b == 0u32 {
                        Decision::Fails
                    } else {
                        exact_ratio_vs_bound(p, u, v, &Some(a / b), eps)
                    };
                    match d {
                        Decision::Fails => return Decision::Fails,
                        Decision::Undecided => out = Decision::Undecided,
                        Decision::Holds => {}
                    }
                }
            }
        }
        out
    }

    /// The tight pure ε, pair by pair, exactly (`None` = ∞).
    pub fn tight_pure(p: &Prepared) -> Option<Interval> {
        let mut best = Interval::point(Q::from(0u32));
        for u in 0..p.n {
            for v in 0..p.n {
                if u == v || !p.scope[u * p.n + v] {
                    continue;
                }
                let (r, _) = exact_ratio(p, u, v);
                let r = r?;
                if p.zero[u * p.n + v] {
                    if r > 1u32 {
                        return None;
                    }
                    continue;
                }
                let e = eps_of_ratio(p, u, v, &r)?;
                best = Interval::new(best.lo.clone().max(e.lo), best.hi.clone().max(e.hi));
            }
        }
        Some(best)
    }

    /// The (ε,δ) tight epsilon, pair by pair, exactly (`None` = ∞).
    pub fn tight_delta(p: &Prepared, delta: &Q) -> Option<Interval> {
        let mut best = Interval::point(Q::from(0u32));
        for u in 0..p.n {
            for v in 0..p.n {
                if u == v || !p.scope[u * p.n + v] {
                    continue;
                }
                let e = exact_pair_eps_delta(p, u, v, delta).ok()??;
                best = Interval::new(best.lo.clone().max(e.lo), best.hi.clone().max(e.hi));
            }
        }
        Some(best)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn iv(lo: i64, hi: i64, den: i64) -> Interval {
        Interval::new(Q::from_signeds(lo, den), Q::from_signeds(hi, den))
    }

    /// `EpsEnclosure::absorb` keeps the largest lower end and the pair attaining it (the
    /// first of equals), the largest upper end, and an upper end at least
    /// lo·(1 + `TARGET_REL_WIDTH`); a first pair at ε = 0 is still the attaining pair.
    #[test]
    fn absorb_keeps_the_max_its_pair_and_room_above_it() {
        let room = |lo: &Q| lo * Q::try_from(1.0 + TARGET_REL_WIDTH).unwrap();
        let mut e = EpsEnclosure::zero();
        e.absorb(Interval::point(Q::from(0u32)), (0, 1));
        assert_eq!(e.pair, Some((0, 1)));
        assert_eq!(e.hi, Some(Q::from(0u32)));
        e.absorb(iv(10, 10, 10), (1, 0));
        assert_eq!((e.lo.clone(), e.pair), (Q::from(1u32), Some((1, 0))));
        assert_eq!(e.hi, Some(room(&Q::from(1u32))));
        assert!(e.hi.clone().unwrap() > 1u32);
        e.absorb(iv(20, 21, 10), (2, 0));
        assert_eq!((e.lo.clone(), e.pair), (Q::from(2u32), Some((2, 0))));
        assert_eq!(e.hi, Some(Q::from_signeds(21, 10)));
        // An equal lower end keeps the first pair; a lower one keeps lo and raises hi.
        e.absorb(iv(20, 20, 10), (0, 2));
        assert_eq!(e.pair, Some((2, 0)));
        e.absorb(iv(15, 30, 10), (1, 2));
        assert_eq!((e.lo.clone(), e.pair), (Q::from(2u32), Some((2, 0))));
        assert_eq!(e.hi, Some(Q::from(3u32)));
    }
}
