//! The truncated geometric mechanism (Ghosh, Roughgarden, Sundararajan 2012; libqif's
//! `d_privacy.geometric`) on N equally spaced points of a line, `spec/geo.md` §2.
//!
//! With α = e^{−ε·s} (s the spacing): M\[i\]\[j\] = (1 − α)/(1 + α)·α^{|i−j|} for interior j,
//! and the two ends take the tails, M\[i\]\[0\] = α^i/(1 + α), M\[i\]\[N−1\] = α^{N−1−i}/(1 + α). Each
//! row sums to 1 for any α (the geometric series telescopes), and moving the input by one
//! step changes every entry by a factor in [α, 1/α], so M is ε·d-private whenever
//! 1/α ≤ e^{ε·s}. Here α is a rational **rounded up** from e^{−ε·s} (an upper end of its
//! enclosure, cut to a 64-bit dyadic): the matrix is exact, its rows sum to exactly 1, and it
//! is ε·d-private by construction — the audit then proves it.

use crate::exact::{functions, Interval, Q};
use crate::mechanism::Matrix;
use crate::metric::{MetricKind, Space};

/// Why a space is not a line of equally spaced points.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("the geometric mechanism needs equally spaced points on a line (a 1-D euclidean space in order, e.g. line:N,STEP): {0}")]
pub struct NotALine(pub String);

/// The spacing s of `space`'s points 0, s, 2s, … (in order, up to a shift).
pub fn spacing(space: &Space) -> Result<Option<Q>, NotALine> {
    if space.kind() != MetricKind::Euclidean || space.points().iter().any(|p| p.len() != 1) {
        return Err(NotALine("not a 1-D euclidean space".into()));
    }
    let p = space.points();
    if p.len() < 2 {
        return Ok(None);
    }
    let s = &p[1][0] - &p[0][0];
    if s <= 0u32 {
        return Err(NotALine(
            "points 0 and 1 are not in increasing order".into(),
        ));
    }
    for i in 1..p.len() {
        if &p[i][0] - &p[i - 1][0] != s {
            return Err(NotALine(format!(
                "point {i} is not one step after point {}",
                i - 1
            )));
        }
    }
    Ok(Some(s))
}

/// α ≥ e^{−ε·s}: the upper end of an enclosure, rounded up to a 64-bit dyadic.
pub fn alpha_up(eps: &Q, step: &Q) -> Q {
    let e = functions::exp(&Interval::point(-(eps * step)), 128);
    let scale = Q::from(1u32) << 64u64;
    let m = -Q::from((-(&e.hi * &scale)).floor());
    m / scale
}

/// The truncated geometric mechanism on `space` at `eps` (module docs).
pub fn geometric(space: &Space, eps: &Q) -> Result<Matrix, NotALine> {
    let n = space.n();
    let Some(step) = spacing(space)? else {
        return Ok(Matrix::new(1, 1, vec![Q::from(1u32)]));
    };
    let a = alpha_up(eps, &step);
    let one = Q::from(1u32);
    let pow: Vec<Q> = std::iter::successors(Some(one.clone()), |p| Some(p * &a))
        .take(n)
        .collect();
    let end = &one / (&one + &a);
    let mid = (&one - &a) / (&one + &a);
    let mut data = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            data.push(if j == 0 {
                &pow[i] * &end
            } else if j == n - 1 {
                &pow[n - 1 - i] * &end
            } else {
                &pow[i.abs_diff(j)] * &mid
            });
        }
    }
    Ok(Matrix::new(n, n, data))
}

/// The truncated geometric mechanism as a family of [`produce`](mod@crate::produce): equally spaced
/// points of a line (`line:N,STEP`), entries α^|i−j| ([`geometric`]); no certificate
/// (privacy is proven, `spec/geo.md` §2).
#[derive(Clone, Copy, Debug, Default)]
pub struct GeometricMech;

impl crate::produce::MechanismFamily for GeometricMech {
    fn name(&self) -> &'static str {
        "geometric"
    }

    fn paper_name(&self) -> String {
        "Geometric".into()
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        progress: &dyn crate::progress::Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        let n = req.space.n();
        crate::produce::check_dense_memory(
            "the geometric mechanism",
            n,
            || None,
            req.max_memory,
            progress,
        )?;
        // Entries α^|i−j| with a 64-bit α: about 128·|i−j| bits each.
        let nf = n as f64;
        let total = 128.0 * nf * nf * nf / 3.0;
        let max_bits = crate::io::Limits::default().max_bits;
        if total > max_bits as f64 {
            return Err(crate::produce::invalid(
                "space",
                format!("the geometric mechanism's exact entries α^|i−j| over {n} points would need about {total:.2e} bits, over the auditor's default budget of {max_bits} bits; use fewer points"),
            ));
        }
        Ok(())
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn crate::progress::Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        let matrix = geometric(req.space, &req.eps)
            .map_err(|e| crate::produce::invalid("space", e.to_string()))?;
        let step = spacing(req.space)
            .ok()
            .flatten()
            .map(|s| crate::io::number_value(&s));
        Ok(crate::produce::Assembled {
            meta: serde_json::json!({"geometric": {"step": step}}),
            ..crate::produce::Assembled::matrix(matrix)
        })
    }
}
