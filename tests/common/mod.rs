//! Helpers shared by the mechanism-suite tests: generated spaces and auditing a matrix as a
//! peer's file.
#![allow(dead_code)]

use mdp::audit::{self, Options};
use mdp::exact::Q;
use mdp::io::{self, Limits};
use mdp::mechanism::Matrix;
use mdp::metric::{MetricKind, Space};
use proptest::prelude::*;
use serde_json::json;

pub fn q(a: i64, b: i64) -> Q {
    Q::from_signeds(a, b)
}

/// n points with coordinates in [−3, 3] (multiples of 1/100), 1 or 2 dimensions, under
/// the Euclidean, Manhattan or Chebyshev metric.
pub fn arb_space(min_n: usize, max_n: usize) -> impl Strategy<Value = Space> {
    (min_n..=max_n, 1usize..=2, 0usize..3).prop_flat_map(|(n, dim, kind)| {
        proptest::collection::vec(proptest::collection::vec(-300i64..300, dim), n).prop_map(
            move |pts| {
                let kind = [
                    MetricKind::Euclidean,
                    MetricKind::Manhattan,
                    MetricKind::Chebyshev,
                ][kind];
                let pts = pts
                    .into_iter()
                    .map(|p| p.into_iter().map(|x| q(x, 100)).collect())
                    .collect();
                Space::from_points(kind, pts, None).unwrap()
            },
        )
    })
}

/// ε ∈ [0.2, 3].
pub fn arb_eps() -> impl Strategy<Value = Q> {
    (20i64..300).prop_map(|x| q(x, 100))
}

/// Write `matrix` as an `mdp/1` file (plus `extra` top-level fields) and audit it.
pub fn audit_matrix(
    space: &Space,
    eps: &Q,
    matrix: &Matrix,
    extra: serde_json::Value,
) -> audit::Report {
    let mut doc = io::mechanism_to_value(eps, space, matrix, json!({"producer": "test"}));
    if let (Some(d), Some(x)) = (doc.as_object_mut(), extra.as_object()) {
        d.extend(x.clone());
    }
    let text = serde_json::to_string(&doc).unwrap();
    let file = io::read_mechanism(text.as_bytes(), &Limits::default()).unwrap();
    audit::audit(&file, &Options::default()).unwrap()
}
