//! Built-in metric spaces, embedded so the README's main command runs anywhere.
//!
//! * `builtin:rome100` (default): the first 100 secret records of the Rome data set of Qiu
//!   et al. (IJCAI 2024; `chenxiunt/MetricDP_BendersDecomposition`, `rome500/records.csv`),
//!   OpenStreetMap nodes (© OpenStreetMap contributors, ODbL 1.0), haversine metric in km.
//! * `builtin:cities40`: the first 40 words of the states-and-cities vocabulary of the same
//!   repository, embedded with all-MiniLM-L6-v2 (Apache-2.0), 384-d, Euclidean metric
//!   (`shared/data/text_minilm`).
//! * `builtin:blackhole:N:DELTA`: the "black hole" space of Imola et al. §3.1 (w_1 at
//!   distance 1 from all others, which lie within DELTA of each other), as an explicit
//!   metric; for Lemma 1.

use crate::exact::{parse_rational, Q};
use crate::metric::{MetricKind, Space};

const ROME100: &str = include_str!("rome100.csv");
const CITIES40: &str = include_str!("cities40.csv");

/// The default data set of `mdp demo` / `mdp build`.
pub const DEFAULT: &str = "builtin:rome100";

/// Names accepted after `builtin:`.
pub const NAMES: &[&str] = &["rome100", "cities40", "blackhole:N:DELTA"];

fn csv_points(text: &str, skip_cols: usize) -> (Vec<String>, Vec<Vec<Q>>) {
    let mut labels = Vec::new();
    let mut pts = Vec::new();
    for line in text.lines().skip(1).filter(|l| !l.is_empty()) {
        let mut it = line.split(',');
        let label = it.next().expect("label").to_string();
        let p: Vec<Q> = it
            .skip(skip_cols)
            .map(|x| parse_rational(x).expect("embedded data is numeric"))
            .collect();
        labels.push(label);
        pts.push(p);
    }
    (labels, pts)
}

/// Why `builtin:NAME` names no space.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BuiltinError {
    /// No built-in data set has this name.
    #[error("unknown built-in space {0:?} (known: {known})", known = NAMES.join(", "))]
    Unknown(String),
    /// The name is known but its parameters are not valid (`blackhole:N:DELTA`).
    #[error("{0}")]
    Invalid(String),
}

/// A built-in space and its input labels.
pub fn space(name: &str) -> Result<(Space, Vec<String>), BuiltinError> {
    let invalid = |m: &str| BuiltinError::Invalid(m.to_string());
    match name {
        "rome100" => {
            let (labels, pts) = csv_points(ROME100, 0);
            Space::from_points(MetricKind::Haversine, pts, None)
                .map(|s| (s, labels))
                .map_err(|e| BuiltinError::Invalid(e.message))
        }
        "cities40" => {
            let (labels, pts) = csv_points(CITIES40, 0);
            Space::from_points(MetricKind::Euclidean, pts, None)
                .map(|s| (s, labels))
                .map_err(|e| BuiltinError::Invalid(e.message))
        }
        _ => {
            let rest = name
                .strip_prefix("blackhole:")
                .ok_or_else(|| BuiltinError::Unknown(name.to_string()))?;
            let (n, d) = rest
                .split_once(':')
                .ok_or_else(|| invalid("expected builtin:blackhole:N:DELTA"))?;
            let n: usize = match n.parse() {
                Ok(n) if n >= 2 => n,
                _ => return Err(invalid("blackhole: N must be an integer ≥ 2")),
            };
            let delta = match parse_rational(d) {
                Ok(q) if q > 0u32 && q <= 1u32 => q,
                _ => return Err(invalid("blackhole: DELTA must be in (0, 1]")),
            };
            Ok((
                black_hole(n, &delta),
                (1..=n).map(|i| format!("w{i}")).collect(),
            ))
        }
    }
}

/// Imola et al. §3.1: d(w_1, w_i) = 1 for i ≥ 2 and d(w_i, w_j) = δ' < … for i, j ≥ 2 (we take
/// all of them equal to δ'/2 ≤ 1/2 so the triangle inequality holds).
pub fn black_hole(n: usize, delta: &Q) -> Space {
    let half = delta / Q::from(2u32);
    let rows: Vec<Vec<Q>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        Q::from(0u32)
                    } else if i == 0 || j == 0 {
                        Q::from(1u32)
                    } else {
                        half.clone()
                    }
                })
                .collect()
        })
        .collect();
    Space::from_table(rows).expect("a metric by construction")
}
