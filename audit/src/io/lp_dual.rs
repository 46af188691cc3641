//! The `lp_dual` certificate's layout in `mdp/1` (`spec/lp.md` §5): parsing (exact
//! numbers, path-named errors) and writing. Its verification is
//! [`crate::certificate::verify`].

use super::{input_error, number, number_value, InputError};
use crate::exact::Q;
use serde_json::{json, Value};

/// Which optimum the certificate bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bounded {
    /// max_u L(M, u) (OPTMech).
    MaxLoss,
    /// Σ_u π_u L(M, u) / Σ π (PMO).
    ExpectedLoss,
}

impl Bounded {
    pub fn name(self) -> &'static str {
        match self {
            Bounded::MaxLoss => "max_loss",
            Bounded::ExpectedLoss => "expected_loss",
        }
    }

    /// The objective named `s` (`max_loss`, `expected_loss`).
    pub fn from_name(s: &str) -> Option<Bounded> {
        [Bounded::MaxLoss, Bounded::ExpectedLoss]
            .into_iter()
            .find(|b| b.name() == s)
    }
}

/// The `objective` field of a certificate (`lp_dual`, `benders`).
pub fn objective(v: &Value, path: &str) -> Result<Bounded, InputError> {
    v.as_str()
        .and_then(Bounded::from_name)
        .ok_or_else(|| input_error(path, "expected \"max_loss\" or \"expected_loss\""))
}

/// A parsed `lp_dual` certificate.
#[derive(Clone, Debug, PartialEq)]
pub struct LpDual {
    pub bounded: Bounded,
    /// The claimed lower bound.
    pub value: Q,
    /// β (max loss only): n weights ≥ 0, not all 0 (normalized by their sum).
    pub beta: Option<Vec<Q>>,
    /// γ on privacy rows (u, v, k): M\[u\]\[k\] ≤ c M\[v\]\[k\].
    pub gamma: Vec<(usize, usize, usize, Q)>,
}

fn field<'v>(
    o: &'v serde_json::Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'v Value, InputError> {
    o.get(key)
        .ok_or_else(|| input_error(path, format!("missing field {key:?}")))
}

fn index(v: &Value, path: &str, limit: usize) -> Result<usize, InputError> {
    match v.as_u64() {
        Some(i) if (i as usize) < limit => Ok(i as usize),
        _ => Err(input_error(
            path,
            format!("expected an index in 0..{limit}, got {v}"),
        )),
    }
}

/// Parse `certificate.lower_bound` of kind `lp_dual` for an n×K matrix.
pub fn parse(v: &Value, n: usize, k: usize) -> Result<LpDual, InputError> {
    let base = "certificate.lower_bound";
    let o = v
        .as_object()
        .ok_or_else(|| input_error(base, "expected an object"))?;
    for key in o.keys() {
        if !["kind", "objective", "value", "beta", "gamma"].contains(&key.as_str()) {
            return Err(input_error(
                format!("{base}.{key}"),
                "unknown field of an lp_dual certificate",
            ));
        }
    }
    let bounded = objective(field(o, "objective", base)?, &format!("{base}.objective"))?;
    let value = number(field(o, "value", base)?, &format!("{base}.value"))?;
    let beta = match (bounded, o.get("beta")) {
        (Bounded::MaxLoss, Some(b)) => {
            let p = format!("{base}.beta");
            let a = b
                .as_array()
                .ok_or_else(|| input_error(&p, "expected an array of n numbers"))?;
            if a.len() != n {
                return Err(input_error(
                    &p,
                    format!("has {} entries, expected n = {n}", a.len()),
                ));
            }
            let mut out = Vec::with_capacity(n);
            for (i, x) in a.iter().enumerate() {
                let q = number(x, &format!("{p}[{i}]"))?;
                if q < 0u32 {
                    return Err(input_error(format!("{p}[{i}]"), "negative weight"));
                }
                out.push(q);
            }
            if out.iter().all(|q| *q == 0u32) {
                return Err(input_error(&p, "all weights are 0"));
            }
            Some(out)
        }
        (Bounded::MaxLoss, None) => return Err(input_error(base, "max_loss needs field \"beta\"")),
        (Bounded::ExpectedLoss, Some(_)) => {
            return Err(input_error(
                format!("{base}.beta"),
                "expected_loss uses loss.prior, not beta",
            ))
        }
        (Bounded::ExpectedLoss, None) => None,
    };
    let p = format!("{base}.gamma");
    let g = field(o, "gamma", base)?
        .as_array()
        .ok_or_else(|| input_error(&p, "expected an array of [u, v, k, value]"))?;
    let mut gamma = Vec::with_capacity(g.len());
    let mut seen = std::collections::HashSet::new();
    for (i, e) in g.iter().enumerate() {
        let pi = format!("{p}[{i}]");
        let a = e
            .as_array()
            .filter(|a| a.len() == 4)
            .ok_or_else(|| input_error(&pi, "expected [u, v, k, value]"))?;
        let u = index(&a[0], &format!("{pi}[0]"), n)?;
        let w = index(&a[1], &format!("{pi}[1]"), n)?;
        let kk = index(&a[2], &format!("{pi}[2]"), k)?;
        if u == w {
            return Err(input_error(&pi, "u = v is not a privacy row"));
        }
        if !seen.insert((u, w, kk)) {
            return Err(input_error(
                &pi,
                format!("row ({u}, {w}, {kk}) is listed twice (one multiplier per privacy row)"),
            ));
        }
        let x = number(&a[3], &format!("{pi}[3]"))?;
        if x < 0u32 {
            return Err(input_error(format!("{pi}[3]"), "negative multiplier"));
        }
        gamma.push((u, w, kk, x));
    }
    Ok(LpDual {
        bounded,
        value,
        beta,
        gamma,
    })
}

/// The JSON form (numbers exact).
pub fn to_value(c: &LpDual) -> Value {
    let mut o = json!({
        "kind": "lp_dual",
        "objective": c.bounded.name(),
        "value": number_value(&c.value),
        "gamma": c.gamma.iter().map(|(u, v, k, g)| json!([u, v, k, number_value(g)])).collect::<Vec<_>>(),
    });
    if let Some(b) = &c.beta {
        o["beta"] = Value::Array(b.iter().map(number_value).collect());
    }
    o
}
