//! User-level privacy (Imola, Roy Chowdhury, Chaudhuri 2024): the earth mover's distance
//! between two datasets and the shuffle accountant of PrivEMDItemWise, forward (α₀ → α)
//! and inverse (α → the largest α₀).

use crate::errors::{Error, Result};
use crate::mechanism::q;
use crate::mechanism::Mechanism;
use crate::space::Space;
use mdp::user_level::emd::{self as transport, Histogram};
use mdp::user_level::run::{self, ReleaseModel};
use mdp::user_level::shuffle::{self, Accountant, Model, Target};
use mdp::user_level::Budget;
use mdp_audit::exact::{f64_nearest, f64_up, format_rational};
use pyo3::prelude::*;
use serde_json::json;

/// d_EM between the datasets `a` and `b` (input indices, repeats allowed) on `space`
/// (JSON: `emd` exact or `{lo, hi}` for irrational distances, `approx`, `lo_down`,
/// `hi_up`; with `assignment`, Lemma 2.1's value and σ for datasets of equal size).
#[pyfunction]
#[pyo3(signature = (space, a, b, *, assignment=false, budget=Budget::DEFAULT))]
pub fn emd(
    py: Python<'_>,
    space: &Space,
    a: Vec<usize>,
    b: Vec<usize>,
    assignment: bool,
    budget: u64,
) -> Result<String> {
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
            "lo_down": mdp_audit::exact::f64_down(&v.lo),
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
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (items, delta, *, alpha0=None, alpha=None, users=None, distance=None, accountant="tighter"))]
pub fn account_item_wise(
    py: Python<'_>,
    items: u64,
    delta: &str,
    alpha0: Option<&str>,
    alpha: Option<&str>,
    users: Option<u64>,
    distance: Option<&str>,
    accountant: &str,
) -> Result<String> {
    let model = match users {
        None => Model::Local { m: items },
        Some(n) => Model::Central { n, m: items },
    };
    let target = match (alpha0, alpha) {
        (Some(a0), None) => Target::Alpha0(q("alpha0", a0)?),
        (None, Some(a)) => Target::Alpha(q("alpha", a)?),
        _ => {
            return Err(Error::input(
                "alpha0",
                "give exactly one of alpha0 and alpha",
            ))
        }
    };
    let delta = q("delta", delta)?;
    let distance = distance.map(|t| q("distance", t)).transpose()?;
    let accountant = self::accountant(accountant)?;
    py.detach(|| {
        Ok(
            shuffle::account(model, &target, &delta, distance.as_ref(), accountant)?
                .json()
                .to_string(),
        )
    })
}

/// `closed`, `numerical` or `tighter` (the shuffle accountant).
fn accountant(name: &str) -> Result<Accountant> {
    Accountant::from_name(name)
        .ok_or_else(|| Error::input("accountant", "must be 'closed', 'numerical' or 'tighter'"))
}

/// A release's error (`--flag: message` from the library) as an input error naming the
/// flag as its field (`alpha`, `delta`, `users`, …); the randomizer's certification
/// failing is a solver error.
fn release_error(e: String) -> Error {
    if e.starts_with("the randomizer: ") {
        return Error::Solver(e);
    }
    match e.strip_prefix("--").and_then(|r| r.split_once(": ")) {
        Some((flag, message)) => Error::input(flag.replace('-', "_"), message),
        None => Error::input("users", e),
    }
}

/// The records a release writes, shared with the writer the library is given.
#[derive(Clone, Default)]
struct SharedBuf(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for SharedBuf {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0
            .lock()
            .map_err(|_| std::io::Error::other("poisoned"))?
            .extend_from_slice(b);
        Ok(b.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn model(name: &str) -> Result<ReleaseModel> {
    match name {
        "local" => Ok(ReleaseModel::Local),
        "central" => Ok(ReleaseModel::Central),
        _ => Err(Error::input(
            "model",
            format!("{name:?}: expected local or central"),
        )),
    }
}

/// Run one release over users given as JSON lines; the records (JSON lines) and the
/// summary (JSON).
fn release(
    py: Python<'_>,
    users: &str,
    seed: Option<u64>,
    f: impl FnOnce(
            &mut run::Users,
            &mut run::Output,
            &mut rand_chacha::ChaCha20Rng,
        ) -> std::result::Result<run::Summary, String>
        + Send,
) -> Result<(String, String)> {
    py.detach(|| {
        let mut rng = mdp::privatize::rng(seed);
        let buf = SharedBuf::default();
        let mut open = || -> std::result::Result<Box<dyn std::io::BufRead + '_>, String> {
            Ok(Box::new(std::io::Cursor::new(users.as_bytes())))
        };
        let mut output = || -> std::result::Result<Box<dyn std::io::Write>, String> {
            Ok(Box::new(buf.clone()))
        };
        let summary = f(&mut open, &mut output, &mut rng).map_err(release_error)?;
        let bytes = buf.0.lock().map(|b| b.clone()).unwrap_or_default();
        let records = String::from_utf8(bytes).map_err(|e| Error::Solver(e.to_string()))?;
        Ok((records, summary.value.to_string()))
    })
}

/// PrivEMDLinear (`mdp release linear`): users as JSON lines.
#[pyfunction]
#[pyo3(signature = (space, users, alpha, *, query="average", norm="l2", model="local", budget=Budget::DEFAULT,
    samples=None, tau=None, beta="1e-9", seed=None))]
#[allow(clippy::too_many_arguments)]
pub fn release_linear(
    py: Python<'_>,
    space: &Space,
    users: &str,
    alpha: &str,
    query: &str,
    norm: &str,
    model: &str,
    budget: u64,
    samples: Option<usize>,
    tau: Option<String>,
    beta: &str,
    seed: Option<u64>,
) -> Result<(String, String)> {
    let settings = run::LinearSettings {
        space: &space.inner,
        labels: space.labels.as_deref(),
        query,
        norm,
        alpha,
        model: self::model(model)?,
        budget,
        resample: run::Resample {
            samples,
            tau,
            beta: beta.to_string(),
        },
    };
    release(py, users, seed, |u, out, rng| {
        run::linear(&settings, u, out, rng)
    })
}

/// PrivEMDItemWise (`mdp release item-wise`) with a certified mechanism; `epsilon`: the
/// pipeline's ε, at which the mechanism must pass its audit first.
#[pyfunction]
#[pyo3(signature = (mechanism, users, *, delta="1e-9", model="central", epsilon=None, samples=None, tau=None,
    beta="1e-9", seed=None, accountant="tighter"))]
#[allow(clippy::too_many_arguments)]
pub fn release_item_wise(
    py: Python<'_>,
    mechanism: &Mechanism,
    users: &str,
    delta: &str,
    model: &str,
    epsilon: Option<&str>,
    samples: Option<usize>,
    tau: Option<String>,
    beta: &str,
    seed: Option<u64>,
    accountant: &str,
) -> Result<(String, String)> {
    let accountant = self::accountant(accountant)?;
    let opts = crate::mechanism::policy(epsilon, None, false, None, Default::default())?;
    let (file, eps) = py.detach(|| -> Result<_> {
        let file = mechanism.sampled_file();
        let eps = match &opts.epsilon {
            Some(e) => {
                crate::mechanism::require_pass(file, &opts, &mdp_audit::progress::Silent)?;
                e.clone()
            }
            None if file.within.is_some() => {
                return Err(Error::input(
                    "mechanism",
                    "a scoped mechanism (privacy within η): the item-wise release needs privacy for all pairs",
                ))
            }
            None => file.epsilon.clone(),
        };
        Ok((file, eps))
    })?;
    let settings = run::ItemWiseSettings {
        file,
        labels: file.labels.as_deref(),
        epsilon: &eps,
        delta,
        model: self::model(model)?,
        resample: run::Resample {
            samples,
            tau,
            beta: beta.to_string(),
        },
        accountant,
    };
    release(py, users, seed, |u, out, rng| {
        run::item_wise(&settings, u, out, rng)
    })
}

/// FreqEstLocal (`mdp release freq`) on C clusters of s items; also the certified
/// randomizer.
#[pyfunction]
#[pyo3(signature = (users, *, clusters, size, r, alpha, delta="1e-6", model="central", seed=None,
    accountant="tighter"))]
#[allow(clippy::too_many_arguments)]
pub fn release_freq(
    py: Python<'_>,
    users: &str,
    clusters: usize,
    size: usize,
    r: &str,
    alpha: &str,
    delta: &str,
    model: &str,
    seed: Option<u64>,
    accountant: &str,
) -> Result<(String, String, Mechanism)> {
    let settings = run::FreqSettings {
        clusters,
        size,
        r,
        alpha,
        delta,
        model: self::model(model)?,
        accountant: self::accountant(accountant)?,
    };
    let mut cert = None;
    let (records, summary) = release(py, users, seed, |u, out, rng| {
        let mut out = out()?;
        run::freq(&settings, u, &mut *out, rng).map(|(s, c)| {
            cert = Some(c);
            s
        })
    })?;
    let cert = cert.expect("set on success");
    Ok((
        records,
        summary,
        Mechanism::new(cert, serde_json::json!({"mechanism": "clustered k-RR"})),
    ))
}
