//! User-level privacy (Imola, Roy Chowdhury, Chaudhuri 2024): the earth mover's distance
//! between two datasets and the shuffle accountant of PrivEMDItemWise, forward (α₀ → α)
//! and inverse (α → the largest α₀).

use crate::errors::{Error, Result};
use crate::mechanism::q;
use crate::space::Space;
use mdp::exact::{f64_nearest, f64_up, format_rational};
use mdp::user_level::emd::{self as transport, Histogram};
use mdp::user_level::shuffle::{self, Model, Target};
use mdp::user_level::Budget;
use pyo3::prelude::*;
use serde_json::json;

/// The default exact-operation budget of `emd` (the CLI's `--budget`).
const EMD_BUDGET: u64 = 100_000_000;

/// d_EM between the datasets `a` and `b` (input indices, repeats allowed) on `space`
/// (JSON: `emd` exact or `{lo, hi}` for irrational distances, `approx`, `lo_down`,
/// `hi_up`; with `assignment`, Lemma 2.1's value and σ for datasets of equal size).
#[pyfunction]
#[pyo3(signature = (space, a, b, *, assignment=false, budget=EMD_BUDGET))]
pub fn emd(py: Python<'_>, space: &Space, a: Vec<usize>, b: Vec<usize>, assignment: bool, budget: u64) -> Result<String> {
    py.detach(|| {
        let n = space.inner.n();
        let mut budget = Budget::new(budget);
        let ha = Histogram::from_items(&a, n)?;
        let hb = Histogram::from_items(&b, n)?;
        let v = transport::emd(&space.inner, &ha, &hb, &mut budget)?;
        let mut out = json!({
            "emd": if v.is_point() { json!(format_rational(&v.lo)) } else {
                json!({"lo": format_rational(&v.lo), "hi": format_rational(&v.hi)}) },
            "approx": f64_nearest(&v.mid()),
            "lo_down": mdp::exact::f64_down(&v.lo),
            "hi_up": f64_up(&v.hi),
        });
        if assignment {
            let (val, sigma) = transport::assignment(&space.inner, &a, &b, &mut budget)?;
            out["assignment"] = json!({"value": format_rational(&val), "sigma": sigma});
        }
        Ok::<_, Error>(out.to_string())
    })
}

/// The shuffle accountant (Theorem 4.4, `mdp account item-wise`): with `alpha0` the
/// guarantee of PrivEMDItemWise, with `alpha` the largest α₀ that meets it; `users` for
/// the central model. JSON as `--json` prints it.
#[pyfunction]
#[pyo3(signature = (items, delta, *, alpha0=None, alpha=None, users=None, distance=None))]
pub fn account_item_wise(
    py: Python<'_>,
    items: u64,
    delta: &str,
    alpha0: Option<&str>,
    alpha: Option<&str>,
    users: Option<u64>,
    distance: Option<&str>,
) -> Result<String> {
    let model = match users {
        None => Model::Local { m: items },
        Some(n) => Model::Central { n, m: items },
    };
    let target = match (alpha0, alpha) {
        (Some(a0), None) => Target::Alpha0(q("alpha0", a0)?),
        (None, Some(a)) => Target::Alpha(q("alpha", a)?),
        _ => return Err(Error::input("alpha0", "give exactly one of alpha0 and alpha")),
    };
    let delta = q("delta", delta)?;
    let distance = distance.map(|t| q("distance", t)).transpose()?;
    py.detach(|| Ok(shuffle::account(model, &target, &delta, distance.as_ref())?.json().to_string()))
}
