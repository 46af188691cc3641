//! k-ary randomized response (Warner 1965; Kairouz, Oh, Viswanath 2014; libqif's
//! `d_privacy.randomized_response`) on any finite metric space, `spec/geo.md` §2.
//!
//! M\[x\]\[x\] = a/(a + k − 1), M\[x\]\[y\] = 1/(a + k − 1) for y ≠ x. Every ratio of a column's entries
//! is at most a, so M is ε·d-private when a ≤ e^{ε·d_min}, d_min the least distance between
//! distinct points (on the discrete metric of `categories:K`, d_min = 1 and M is ε-LDP). Here
//! a is a rational **rounded down** from e^{ε·d_min} (d_min itself a lower end): exact entries,
//! rows summing to exactly 1, private by construction, and proven by the audit.

use crate::exact::{functions, q_from_f64, Interval, Q};
use crate::mechanism::Matrix;
use crate::metric::Space;

/// A lower end of the least distance between distinct points (0 if two points coincide).
pub fn min_distance_lo(space: &Space) -> Q {
    let n = space.n();
    let mut lo = f64::INFINITY;
    for i in 0..n {
        for j in i + 1..n {
            lo = lo.min(space.fi(i, j).lo);
        }
    }
    if lo.is_finite() {
        q_from_f64(lo.max(0.0))
    } else {
        Q::from(0u32)
    }
}

/// a ≤ e^{ε·d}: the lower end of an enclosure, rounded down to a 64-bit dyadic.
pub fn ratio_down(eps: &Q, d: &Q) -> Q {
    let e = functions::exp(&Interval::point(eps * d), 128);
    let scale = Q::from(1u32) << 64u64;
    Q::from((&e.lo * &scale).floor()) / scale
}

/// k-RR on `space` at `eps` (module docs).
pub fn randomized_response(space: &Space, eps: &Q) -> Matrix {
    let n = space.n();
    let a = ratio_down(eps, &min_distance_lo(space));
    let one = Q::from(1u32);
    let total = &a + Q::from((n - 1) as u64);
    let (diag, off) = (&a / &total, &one / &total);
    let data = (0..n * n)
        .map(|t| {
            if t / n == t % n {
                diag.clone()
            } else {
                off.clone()
            }
        })
        .collect();
    Matrix::new(n, n, data)
}

/// k-ary randomized response as a family of [`produce`](mod@crate::produce), at ε·d_min on any space
/// (`categories:K`: plain k-RR); no certificate (privacy is proven, `spec/geo.md` §2).
#[derive(Clone, Copy, Debug, Default)]
pub struct RandomizedResponseMech;

impl crate::produce::MechanismFamily for RandomizedResponseMech {
    fn name(&self) -> &'static str {
        "randomized_response"
    }

    fn paper_name(&self) -> String {
        "k-RR".into()
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        progress: &dyn crate::progress::Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        crate::produce::check_dense_memory(
            "randomized response",
            req.space.n(),
            || None,
            req.max_memory,
            progress,
        )
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn crate::progress::Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        let d_min = min_distance_lo(req.space);
        Ok(crate::produce::Assembled {
            meta: serde_json::json!({"randomized_response": {"k": req.space.n(), "d_min_lower": crate::io::number_value(&d_min)}}),
            ..crate::produce::Assembled::matrix(randomized_response(req.space, &req.eps))
        })
    }
}
