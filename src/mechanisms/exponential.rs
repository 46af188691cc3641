//! The exponential mechanism and the weighted exponential mechanism EXPMECH_Y (Imola et
//! al. 2022, §3.1):
//!
//!   Pr[EXPMECH_Y(w_i) = w_j] = Y_j e^{−ε d(w_i, w_j)/2} / Σ_k Y_k e^{−ε d(w_i, w_k)/2},
//!
//! ε·d private for every Y > 0 (Proposition 1: each factor of the ratio
//! H\[u\]\[w\]/H\[v\]\[w\] = (e^{−εd(u,w)/2}/e^{−εd(v,w)/2}) · (Z_v/Z_u) is ≤ e^{εd(u,v)/2} by the
//! triangle inequality). The plain mechanism is Y = 1.
//!
//! The matrix is computed in `f64` (log-sum-exp, relative error ~1e-15) and each entry is
//! written as the exact rational value of its float; the result is then *proven* private
//! by the auditor rather than trusted. The Z-ratio factor is strictly below e^{εd/2} for
//! d(u,v) > 0 (the k = v term), which leaves the slack the rounding needs; `mdp build`
//! refuses to write a file whose audit does not pass.

use crate::exact::{f64_nearest, q_from_f64, N, Q};
use crate::mechanism::Matrix;
use crate::metric::Space;

/// EXPMECH_Y on `space` at privacy level `eps`; `weights` = None is the plain mechanism.
/// Its entries are short decimals of [`entry_digits`] significant digits where the
/// mechanism's slack covers that rounding (issue 33: compact files).
pub fn weighted_exponential(space: &Space, eps: &Q, weights: Option<&[Q]>) -> Matrix {
    let digits = entry_digits(space, eps, weights);
    softmax_rows_rounded(space.n(), space.n(), logits(space, eps, weights), digits)
}

/// Relative error allowed for the `f64` softmax's entries (|logit|·2⁻⁵² for logits down
/// to −700, with room).
const FLOAT_ERROR: f64 = 2e-13;

/// The significant digits the exponential mechanism's entries can be rounded to and
/// still be proved private; `None` when its slack is too small for 17 digits.
///
/// The slack (Proposition 1's proof, made quantitative): for u ≠ v,
/// H\[u\]\[w\]/H\[v\]\[w\] ≤ e^{εd/2}·Z_v/Z_u and, from the k = u term of Z_u,
/// Z_u ≥ e^{−εd/2}Z_v + Y_u(1 − e^{−εd}), so every ratio is below e^{εd(u,v)} by the factor
/// 1 + x with x ≥ Y_min(1 − e^{−ε d_min})/ΣY (Z_v ≤ ΣY; d_min the least positive
/// distance). Rounding each entry to S significant digits moves it by a relative
/// 0.5·10^{1−S}, and the row's largest entry, which takes the remainder so the row sums to
/// exactly 1, by at most 0.5·K·10^{1−S}; with the float error, a ratio moves by less than
/// e^{K·10^{1−S} + 4·FLOAT_ERROR}. S is the least with K·10^{1−S} ≤ ln(1 + x)/4 − 4·FLOAT_ERROR
/// (at least 6). The exact audit of the written file still decides.
pub fn entry_digits(space: &Space, eps: &Q, weights: Option<&[Q]>) -> Option<usize> {
    let room = slack_room(space, eps, weights);
    if room == f64::INFINITY {
        return Some(6);
    }
    if !(room > 0.0 && room.is_finite()) {
        return None;
    }
    let digits = 1.0 + (space.n() as f64 / room).log10().ceil();
    (digits <= 17.0).then(|| digits.max(6.0) as usize)
}

/// ln(1 + x)/4 − 4·FLOAT_ERROR for the slack x of [`entry_digits`]: the room the entries'
/// rounding may use; ∞ when no two points are apart (no pair to protect).
fn slack_room(space: &Space, eps: &Q, weights: Option<&[Q]>) -> f64 {
    let s = Slack::of(space, eps, weights);
    if s.d_min == f64::INFINITY {
        return f64::INFINITY;
    }
    s.x.ln_1p() / 4.0 - 4.0 * FLOAT_ERROR
}

/// Proposition 1's slack x = Y_min(1 − e^{−ε·d_min})/ΣY and what bounds the `f64`
/// softmax's error: the largest |logit| L = max|ln Y| + ε·d_max/2.
struct Slack {
    x: f64,
    d_min: f64,
    logit_max: f64,
}

impl Slack {
    fn of(space: &Space, eps: &Q, weights: Option<&[Q]>) -> Slack {
        let n = space.n();
        let e = f64_nearest(eps);
        let y: Vec<f64> = match weights {
            Some(w) => w.iter().map(f64_nearest).collect(),
            None => vec![1.0; n],
        };
        let y_min = y.iter().cloned().fold(f64::INFINITY, f64::min);
        let y_sum: f64 = y.iter().sum();
        let ln_y = y.iter().map(|v| v.ln().abs()).fold(0.0, f64::max);
        let (mut d_min, mut d_max) = (f64::INFINITY, 0.0f64);
        for u in 0..n {
            for v in u + 1..n {
                let d = space.approx(u, v);
                if d > 0.0 && d < d_min {
                    d_min = d;
                }
                d_max = d_max.max(d);
            }
        }
        Slack {
            x: y_min * -(-e * d_min).exp_m1() / y_sum,
            d_min,
            logit_max: ln_y + e * d_max / 2.0,
        }
    }
}

/// Whether the `f64` construction leaves slack for its own rounding. An entry
/// e^{l − ln Z} is computed with a relative error below (2L + ln n + 4)·2⁻⁵¹ (the absolute
/// error of l − ln Z, |l|, |ln Z| ≤ L + ln n, becomes a relative one through exp, plus the
/// rounding of exp itself), so a ratio of two entries moves by less than twice that; the
/// slack x of [`entry_digits`] must cover four times it (a margin of 2). Below it every
/// ratio sits within a float error of e^{εd}, so the audit would almost surely refuse what
/// was built: the producer refuses first, naming the cause.
pub fn certifiable(space: &Space, eps: &Q, weights: Option<&[Q]>) -> bool {
    let s = Slack::of(space, eps, weights);
    if s.d_min == f64::INFINITY {
        return true;
    }
    let err = (2.0 * s.logit_max + (space.n() as f64).ln() + 4.0) * f64::EPSILON * 2.0;
    s.x.ln_1p() > 4.0 * err
}

/// The exponential mechanism's logits: log Y_j − ε d(w_i, w_j)/2.
fn logits<'a>(
    space: &'a Space,
    eps: &Q,
    weights: Option<&[Q]>,
) -> impl Fn(usize, usize) -> f64 + 'a {
    let e = f64_nearest(eps);
    let logy: Vec<f64> = match weights {
        Some(w) => w.iter().map(|y| f64_nearest(y).ln()).collect(),
        None => vec![0.0; space.n()],
    };
    move |i, j| logy[j] - e * space.approx(i, j) / 2.0
}

/// The size in bits of exact entries, estimated from above (64 bits of mantissa and
/// exponent per entry plus its binary exponent): the whole matrix's and its largest
/// entry's, so a producer can refuse entries that need unbounded numbers before building
/// them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EntryBits {
    pub total: f64,
    pub largest: f64,
}

/// The [`EntryBits`] of the entries [`weighted_exponential`] would produce.
pub fn exact_bits(space: &Space, eps: &Q, weights: Option<&[Q]>) -> EntryBits {
    softmax_bits(space.n(), space.n(), logits(space, eps, weights))
}

/// [`exact_bits`] for any softmax (TEM's truncated scores too).
pub fn softmax_bits(rows: usize, cols: usize, logit: impl Fn(usize, usize) -> f64) -> EntryBits {
    let mut bits = EntryBits {
        total: 0.0,
        largest: 0.0,
    };
    for i in 0..rows {
        let l: Vec<f64> = (0..cols).map(|j| logit(i, j)).collect();
        let mx = l.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let ln_z = l.iter().map(|x| (x - mx).exp()).sum::<f64>().ln() + mx;
        for x in &l {
            if x.is_finite() {
                let b = 64.0 + ((ln_z - x) / std::f64::consts::LN_2).max(0.0);
                bits.total += b;
                bits.largest = bits.largest.max(b);
            } else if x.is_nan() || *x > 0.0 {
                return EntryBits {
                    total: f64::INFINITY,
                    largest: f64::INFINITY,
                };
            }
        }
    }
    bits
}

/// The rows × cols matrix whose row i is the softmax of `logit(i, ·)` (log-sum-exp in
/// `f64`, each entry the exact rational [`exp_as_rational`] of its float; a logit of −∞
/// gives an exact 0). Shared by the exponential mechanisms and TEM; the result is proved
/// private by the auditor, not trusted.
pub fn softmax_rows(rows: usize, cols: usize, logit: impl Fn(usize, usize) -> f64) -> Matrix {
    softmax_rows_rounded(rows, cols, logit, None)
}

/// [`softmax_rows`] with each row's entries rounded to `digits` significant digits (the
/// nearest decimal) and its largest entry (the first, on ties) taking the remainder, so the
/// row sums to exactly 1; a row with an entry below 10⁻³⁰⁰ keeps its exact floats.
pub fn softmax_rows_rounded(
    rows: usize,
    cols: usize,
    logit: impl Fn(usize, usize) -> f64,
    digits: Option<usize>,
) -> Matrix {
    let mut data = Vec::with_capacity(rows * cols);
    for i in 0..rows {
        let logits: Vec<f64> = (0..cols).map(|j| logit(i, j)).collect();
        let mx = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let ln_z = logits.iter().map(|l| (l - mx).exp()).sum::<f64>().ln() + mx;
        let short = digits.and_then(|d| rounded_row(&logits, ln_z, d));
        match short {
            Some(row) => data.extend(row),
            None => data.extend(logits.iter().map(|&l| {
                if l == f64::NEG_INFINITY {
                    Q::from(0u32)
                } else {
                    exp_as_rational(l - ln_z)
                }
            })),
        }
    }
    Matrix::new(rows, cols, data)
}

/// One softmax row e^{l − ln Z} with `digits` significant digits, the largest entry taking
/// the remainder (exact, over the row's finest power of ten); `None` if an entry is below
/// 10⁻³⁰⁰ or the remainder is not positive.
fn rounded_row(logits: &[f64], ln_z: f64, digits: usize) -> Option<Vec<Q>> {
    let x: Vec<f64> = logits
        .iter()
        .map(|&l| {
            if l == f64::NEG_INFINITY {
                0.0
            } else {
                (l - ln_z).exp()
            }
        })
        .collect();
    // An entry below 10⁻³⁰⁰, or one that underflowed to 0 from a finite logit, keeps its
    // exact float (`exp_as_rational` scales by a power of two): a 0 there would be an
    // infinite privacy loss.
    if x.iter()
        .zip(logits)
        .any(|(&v, &l)| l != f64::NEG_INFINITY && v < 1e-300)
    {
        return None;
    }
    let big = (0..x.len()).fold(0, |b, j| if x[j] > x[b] { j } else { b });
    // Entry j ≈ m_j·10^{e_j}.
    let mut parts: Vec<Option<(u64, i64)>> = Vec::with_capacity(x.len());
    for (j, &v) in x.iter().enumerate() {
        parts.push(if j != big && v != 0.0 {
            Some(decimal_parts(v, digits)?)
        } else {
            None
        });
    }
    let e_min = parts
        .iter()
        .flatten()
        .map(|p| p.1)
        .min()
        .unwrap_or(0)
        .min(0);
    let ten = N::from(10u32);
    let mut total = N::from(0u32);
    for &(m, e) in parts.iter().flatten() {
        total += N::from(m) * ten.pow((e - e_min) as u64);
    }
    let unit = ten.pow((-e_min) as u64);
    if total >= unit {
        return None;
    }
    let mut row: Vec<Q> = parts
        .iter()
        .map(|p| match p {
            Some((m, e)) if *e >= 0 => Q::from(N::from(*m) * ten.pow(*e as u64)),
            Some((m, e)) => Q::from_naturals(N::from(*m), ten.pow((-e) as u64)),
            None => Q::from(0u32),
        })
        .collect();
    row[big] = Q::from_naturals(&unit - &total, unit);
    Some(row)
}

/// `v` > 0 rounded to `digits` significant digits, as (m, e) with v ≈ m·10^e.
fn decimal_parts(v: f64, digits: usize) -> Option<(u64, i64)> {
    let s = format!("{:.*e}", digits.clamp(1, 17) - 1, v);
    let (mantissa, exp) = s.split_once('e')?;
    let m: u64 = mantissa.replace('.', "").parse().ok()?;
    let e: i64 = exp.parse().ok()?;
    Some((m, e - (digits.clamp(1, 17) as i64 - 1)))
}

/// A rational close to e^l (relative error ~|l|·2^-52), also far below the `f64` range:
/// e^l = m·2^k with k = ⌊l/ln 2⌋ and m = e^{l − k ln 2} ∈ [1, 2), so an entry never
/// underflows to an exact 0 (which would make the mechanism non-private).
pub fn exp_as_rational(l: f64) -> Q {
    if l > -700.0 {
        return q_from_f64(l.exp());
    }
    let k = (l / std::f64::consts::LN_2).floor();
    let m = (l - k * std::f64::consts::LN_2).exp();
    let shift = (-k) as u64;
    q_from_f64(m) / Q::from(crate::exact::N::from(1u32) << shift)
}

/// The plain exponential mechanism (Y = 1).
pub fn exponential(space: &Space, eps: &Q) -> Matrix {
    weighted_exponential(space, eps, None)
}

/// EXPMECH and weighted EXPMECH as a family of [`produce`](mod@crate::produce): Pr\[w|u\] ∝
/// Y_w·exp(−ε·d(u,w)/2), `weights` = Y > 0 (Proposition 1); no certificate (privacy is
/// proven).
///
/// ```
/// # use mdp::exact::{parse_rational, Q};
/// # use mdp::metric::{MetricKind, Space};
/// # use mdp::produce::*;
/// # use mdp::progress::Silent;
/// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
/// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
/// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
/// let family = Family::Exponential(ExpMech { weights: Some(vec![Q::from(1u32); 6]) });
/// let out = produce(&req, &family, &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// ```
#[derive(Clone, Debug, Default)]
pub struct ExpMech {
    pub weights: Option<Vec<Q>>,
}

/// The weights Y of EXPMECH_Y: one per point, each > 0 (Proposition 1).
pub fn check_weights(w: &[Q], n: usize) -> Result<(), crate::produce::ProduceError> {
    use crate::produce::invalid;
    if w.len() != n {
        return Err(invalid(
            "weights",
            format!("has {} weights, the space has {n} points", w.len()),
        ));
    }
    if let Some(i) = w.iter().position(|y| *y <= 0u32) {
        return Err(invalid(
            &format!("weights[{i}]"),
            "must be > 0 (Proposition 1 needs Y > 0)",
        ));
    }
    Ok(())
}

impl crate::produce::MechanismFamily for ExpMech {
    fn name(&self) -> &'static str {
        match self.weights {
            None => "exponential",
            Some(_) => "weighted_exponential",
        }
    }

    fn paper_name(&self) -> String {
        match self.weights {
            None => "EXPMECH".into(),
            Some(_) => "weighted EXPMECH".into(),
        }
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        progress: &dyn crate::progress::Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        let (space, eps, n) = (req.space, &req.eps, req.space.n());
        if let Some(w) = &self.weights {
            check_weights(w, n)?;
        }
        let weights = self.weights.as_deref();
        // The file: each entry's digits plus its exponent and separators (≈ 8 bytes).
        let file = || {
            entry_digits(space, eps, weights).map(|d| {
                (n as u64)
                    .saturating_mul(n as u64)
                    .saturating_mul(d as u64 + 8)
            })
        };
        crate::produce::check_dense_memory("exponential", n, file, req.max_memory, progress)?;
        crate::produce::check_size_budget(exact_bits(space, eps, weights))?;
        if !certifiable(space, eps, weights) {
            return Err(crate::produce::invalid(
                if weights.is_some() { "weights" } else { "epsilon" },
                "ε·(least distance) and Y_min/ΣY leave the mechanism a relative slack below the f64 softmax's error bound (exponential::certifiable): it cannot be certified; use a larger ε or weights closer to each other",
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn crate::progress::Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        Ok(crate::produce::Assembled::matrix(weighted_exponential(
            req.space,
            &req.eps,
            self.weights.as_deref(),
        )))
    }
}
