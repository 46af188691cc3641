//! The auditor and the import tools on numpy matrices and `mdp/1` files: `audit_file`,
//! `audit_matrix` (`mdp-audit`), `import_matrix` (`mdp import`), `repair_matrix`
//! (`mdp repair`).

use crate::errors::{Error, Result};
use crate::mechanism::{policy, Mechanism};
use crate::progress::run;
use crate::space::{check_size_within, exact_rows, Space};
use mdp::import::{self, ImportOptions, RepairError, RepairOptions, ToRepair};
use mdp_audit::audit;
use mdp_audit::certified::Certified;
use mdp_audit::exact::Q;
use mdp_audit::io::{self, Limits};
use mdp_audit::mechanism::Matrix;
use numpy::PyReadonlyArray2;
use pyo3::prelude::*;
use serde_json::{json, Value};

/// The exact matrix of a float64 array (each entry the dyadic rational it is).
fn exact_matrix(m: &PyReadonlyArray2<'_, f64>, limits: &Limits) -> Result<Matrix> {
    check_size_within(m, "matrix", limits)?;
    let rows = exact_rows(m, "matrix")?;
    let (r, c) = (rows.len(), rows.first().map_or(0, Vec::len));
    if r == 0 || c == 0 {
        return Err(Error::input("matrix", "is empty"));
    }
    Ok(Matrix::new(r, c, rows.concat()))
}

fn producer_meta(space: &Space, eps_in_metric: bool) -> Value {
    mdp::produce::producer_meta(
        json!({"mechanism": "imported", "space": space.name,
               "import": {"matrix": "numpy array (Python)", "eps_in_metric": eps_in_metric}}),
        &Value::Null,
    )
}

/// The `mdp/1` document claiming ε·d privacy of `matrix` on `space` (`within`: for pairs
/// with d ≤ η only), as `mdp import` states it, without the matrix itself
/// ([`import::claim`]).
fn claim(
    matrix: &Matrix,
    space: &Space,
    opts: &ImportOptions,
    within: Option<&Q>,
) -> Result<Value> {
    let meta = producer_meta(space, opts.eps_in_metric);
    let mut doc = import::claim(matrix, &space.inner, opts, meta, "matrix")?;
    if let Some(eta) = within {
        doc["neighbors"] = json!({ "within": io::number_value(eta) });
    }
    if let Some(l) = &space.labels {
        io::set_labels(&mut doc, l);
    }
    Ok(doc)
}

fn import_options(
    space: &Space,
    epsilon: &str,
    eps_in_metric: bool,
    outputs_are_inputs: Option<bool>,
    cols: usize,
) -> Result<ImportOptions> {
    Ok(ImportOptions {
        epsilon: mdp::produce::epsilon(epsilon)?,
        eps_in_metric,
        // Square matrices on the space's points are read as outputs = inputs unless told.
        outputs_are_inputs: outputs_are_inputs.unwrap_or(cols == space.inner.n()),
    })
}

/// Audit an `mdp/1` file under a pipeline's policy (its ε, scope, δ); the report as JSON.
#[pyfunction]
#[pyo3(signature = (path, *, epsilon=None, within=None, allow_scoped=false, delta=None, space=None, require_metric_digest=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn audit_file(
    py: Python<'_>,
    path: &str,
    epsilon: Option<&str>,
    within: Option<&str>,
    allow_scoped: bool,
    delta: Option<&str>,
    space: Option<&Bound<'_, PyAny>>,
    require_metric_digest: Option<&str>,
    progress: Option<Py<PyAny>>,
) -> Result<String> {
    let metric = crate::mechanism::metric_pin(space, require_metric_digest, false, false)?;
    let opts = policy(epsilon, within, allow_scoped, delta, metric)?;
    run(py, progress, |p| {
        // A JSON file or a large-mechanism container (header + .npy).
        let report =
            mdp_audit::source::audit_path(path, &Limits::default(), 8_000_000_000, &opts, p)?;
        Ok(audit::json(&report))
    })
}

/// Audit a numpy matrix (rows = inputs of `space`) claimed ε·d private (for d ≤ `within`
/// only, if given); `eps_in_metric`: the space's distances already include ε (libqif's
/// convention). The report as JSON.
#[pyfunction]
#[pyo3(signature = (matrix, space, epsilon, *, within=None, delta=None, eps_in_metric=false, outputs_are_inputs=None, max_entries=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn audit_matrix(
    py: Python<'_>,
    matrix: PyReadonlyArray2<'_, f64>,
    space: &Space,
    epsilon: &str,
    within: Option<&str>,
    delta: Option<&str>,
    eps_in_metric: bool,
    outputs_are_inputs: Option<bool>,
    max_entries: Option<u64>,
    progress: Option<Py<PyAny>>,
) -> Result<String> {
    let limits = Limits {
        max_entries: max_entries.unwrap_or(Limits::default().max_entries),
        ..Limits::default()
    };
    let m = exact_matrix(&matrix, &limits)?;
    let opts = import_options(space, epsilon, eps_in_metric, outputs_are_inputs, m.cols)?;
    let eta = within
        .map(|w| crate::mechanism::q("within", w))
        .transpose()?;
    let aopts = policy(None, within, false, delta, Default::default())?;
    run(py, progress, |p| {
        // The claim as a document, the exact matrix and the space beside it (no JSON
        // numbers to write and parse back: the reader's checks apply to it all the same).
        let meta = producer_meta(space, opts.eps_in_metric);
        let (mut doc, fspace) = import::claim_on_space(&m, &space.inner, &opts, meta, "matrix")?;
        if let Some(eta) = &eta {
            doc["neighbors"] = json!({ "within": io::number_value(eta) });
        }
        let file = io::mechanism_on_space(&doc, fspace, space.labels.clone(), m, &limits)?;
        Ok(audit::json(&audit::audit_with(&file, &aopts, p)?))
    })
}

/// A numpy matrix as a certified mechanism (`mdp import`): raises NotPrivate (with the
/// report) if it does not pass.
#[pyfunction]
#[pyo3(signature = (matrix, space, epsilon, *, eps_in_metric=false, outputs_are_inputs=None, progress=None))]
pub fn import_matrix(
    py: Python<'_>,
    matrix: PyReadonlyArray2<'_, f64>,
    space: &Space,
    epsilon: &str,
    eps_in_metric: bool,
    outputs_are_inputs: Option<bool>,
    progress: Option<Py<PyAny>>,
) -> Result<Mechanism> {
    let m = exact_matrix(&matrix, &Limits::default())?;
    if let Some((i, _)) = m.data.iter().enumerate().find(|(_, x)| **x < 0u32) {
        return Err(Error::input(
            format!("matrix[{}][{}]", i / m.cols, i % m.cols),
            "negative entry (repair() takes rounding-level negatives)",
        ));
    }
    let opts = import_options(space, epsilon, eps_in_metric, outputs_are_inputs, m.cols)?;
    run(py, progress, |p| {
        let mut doc = claim(&m, space, &opts, None)?;
        doc["matrix"] = io::matrix_value(&m);
        Ok(Mechanism::new(
            Certified::certify(&doc, p)?,
            json!({"mechanism": "imported"}),
        ))
    })
}

/// The exact repair of a near-private numpy matrix (`mdp repair`): the certified
/// mechanism and the repair's summary (JSON: uniform mix t, change, row deviation, losses
/// before and after).
#[pyfunction]
#[pyo3(signature = (matrix, space, epsilon, *, tolerance=1e-3, eps_in_metric=false, outputs_are_inputs=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn repair_matrix(
    py: Python<'_>,
    matrix: PyReadonlyArray2<'_, f64>,
    space: &Space,
    epsilon: &str,
    tolerance: f64,
    eps_in_metric: bool,
    outputs_are_inputs: Option<bool>,
    progress: Option<Py<PyAny>>,
) -> Result<(Mechanism, String)> {
    if !(tolerance.is_finite() && tolerance > 0.0) {
        return Err(Error::input("tolerance", "must be a finite number > 0"));
    }
    let raw = exact_matrix(&matrix, &Limits::default())?;
    let opts = import_options(space, epsilon, eps_in_metric, outputs_are_inputs, raw.cols)?;
    run(py, progress, |p| {
        let limits = Limits::default();
        let meta = producer_meta(space, eps_in_metric);
        let mut prepared =
            ToRepair::from_matrix(raw, &space.inner, &opts, meta, "matrix", &limits)?;
        if let Some(l) = &space.labels {
            io::set_labels(&mut prepared.doc, l);
        }
        let ropts = RepairOptions {
            tolerance,
            max_prec: mdp::produce::MAX_PREC,
        };
        let rep = match import::repair_external(&prepared.external(), &ropts) {
            Ok(r) => r,
            Err(e @ RepairError::TooFar { .. }) => {
                return Err(Error::Refused(format!(
                    "{e}; build a private mechanism instead"
                )))
            }
            Err(e @ RepairError::Failed) => return Err(Error::Solver(e.to_string())),
            Err(RepairError::Input(e)) => return Err(e.into()),
            Err(e) => return Err(Error::input("matrix", e.to_string())),
        };
        let summary = json!({
            "uniform_mix": rep.t,
            "change": rep.change,
            "max_row_deviation": rep.max_row_deviation,
            "loss_before": rep.loss_before,
            "loss_after": rep.loss_after,
        });
        let doc = prepared.repaired_document(&rep, tolerance);
        let certified = Certified::certify(&doc, p)?;
        Ok((
            Mechanism::new(
                certified,
                json!({"mechanism": "repaired", "repair": summary.clone()}),
            ),
            summary.to_string(),
        ))
    })
}

/// Exact numbers from their strings, each named `field[i]` in an error.
fn q_strings(field: &str, v: &[String]) -> Result<Vec<Q>> {
    v.iter()
        .enumerate()
        .map(|(i, s)| crate::mechanism::q(&format!("{field}[{i}]"), s))
        .collect()
}

/// The mechanism file a call is about: `path` read under the default limits (kept in
/// `loaded`), or the `mechanism`'s own.
fn file_of<'a>(
    path: Option<&str>,
    mechanism: Option<&'a Mechanism>,
    loaded: &'a mut Option<mdp_audit::io::MechanismFile>,
) -> Result<&'a mdp_audit::io::MechanismFile> {
    match (path, mechanism) {
        (Some(p), None) => {
            let limits = Limits::default();
            Ok(loaded.insert(io::read_mechanism(&io::read_source(p, &limits)?, &limits)?))
        }
        (None, Some(m)) => Ok(m.certified.file()),
        _ => Err(Error::input("mechanism", "give a Mechanism or a path")),
    }
}

/// The adversary's measures ([`mdp::measure`]) of a mechanism (`mechanism`) or an `mdp/1`
/// file (`path`) under `prior` (default: the file's, else uniform) and an optional gain
/// (rows g(w, ·)); numbers as exact strings. The JSON text of `mdp measure --json`.
#[pyfunction]
#[pyo3(signature = (*, path=None, mechanism=None, prior=None, gain=None))]
pub fn measure(
    py: Python<'_>,
    path: Option<&str>,
    mechanism: Option<&Mechanism>,
    prior: Option<Vec<String>>,
    gain: Option<Vec<Vec<String>>>,
) -> Result<String> {
    let prior = prior.map(|p| q_strings("prior", &p)).transpose()?;
    let gain = gain
        .map(|rows| -> Result<mdp::measure::Gain> {
            Ok(mdp::measure::Gain {
                rows: rows
                    .into_iter()
                    .enumerate()
                    .map(|(w, r)| q_strings(&format!("gain[{w}]"), &r))
                    .collect::<Result<_>>()?,
            })
        })
        .transpose()?;
    let mut loaded = None;
    let file = file_of(path, mechanism, &mut loaded)?;
    py.detach(|| {
        let measure_error = |e: mdp::measure::MeasureError| match e {
            mdp::measure::MeasureError::Invalid { field, message } => Error::input(field, message),
        };
        let prior = mdp::measure::prior_of(file, prior.as_deref()).map_err(measure_error)?;
        let m = mdp::measure::measures(file, &prior, gain.as_ref()).map_err(measure_error)?;
        Ok(mdp::measure::to_json(&m, file).to_string())
    })
}

/// Bayesian remapping ([`mdp::remap`]) of a mechanism or an `mdp/1` file under `prior`
/// (default: the file's, else uniform): the remapped mechanism, certified by its own audit,
/// and what remapping did as JSON text (`expected_loss_before`, `expected_loss_after`,
/// `adversary_error`, `map`).
#[pyfunction]
#[pyo3(signature = (*, path=None, mechanism=None, prior=None, progress=None))]
pub fn remap(
    py: Python<'_>,
    path: Option<&str>,
    mechanism: Option<&Mechanism>,
    prior: Option<Vec<String>>,
    progress: Option<Py<PyAny>>,
) -> Result<(Mechanism, String)> {
    let prior = prior.map(|p| q_strings("prior", &p)).transpose()?;
    let mut loaded = None;
    let file = file_of(path, mechanism, &mut loaded)?;
    run(py, progress, |p| {
        let prior = mdp::measure::prior_of(file, prior.as_deref()).map_err(|e| match e {
            mdp::measure::MeasureError::Invalid { field, message } => Error::input(field, message),
        })?;
        let r = mdp::remap::remap(file, &prior, p).map_err(|e| match e {
            mdp::remap::RemapError::NotPrivate(report) => Error::Audit(report),
            mdp::remap::RemapError::Invalid { field, message } => Error::input(field, message),
            e => Error::input("mechanism", e.to_string()),
        })?;
        let summary = mdp::remap::summary_json(&r, file);
        Ok((
            Mechanism::new(r.certified, summary.clone()),
            summary.to_string(),
        ))
    })
}

/// The planar Laplace ([`mdp::planar_laplace`]) on coordinate records: each `points[i]` (two
/// decimal strings: lat, lon in degrees when `geographic`, else x, y) released exactly as
/// two decimal strings, with the summary as JSON text. `region` is `"A,B,C,D"`; `epsilon`
/// and `granularity` exact decimals or fractions. OS-seeded unless `seed`.
#[pyfunction]
#[pyo3(signature = (points, epsilon, geographic, region=None, granularity=None, seed=None, confidence=0.95))]
#[allow(clippy::too_many_arguments)]
pub fn planar_laplace(
    py: Python<'_>,
    points: Vec<(String, String)>,
    epsilon: &str,
    geographic: bool,
    region: Option<&str>,
    granularity: Option<&str>,
    seed: Option<u64>,
    confidence: f64,
) -> Result<(Vec<(String, String)>, String)> {
    use mdp::planar_laplace::{PlanarLaplace, Region, SettingError};
    let setting = |e: SettingError| Error::input(e.flag.trim_start_matches("--"), e.message);
    let q = |name: &str, s: &str| {
        mdp_audit::exact::parse_rational(s.trim()).map_err(|e| Error::input(name, e.to_string()))
    };
    let eps = q("epsilon", epsilon)?;
    let region = region
        .map(|text| {
            Region::from_arg(text, geographic, |spec| {
                mdp::import::load_space(spec, None, &mdp_audit::io::Limits::default())
                    .map_err(|e| e.to_string())
            })
        })
        .transpose()
        .map_err(setting)?;
    let granularity = granularity.map(|g| q("granularity", g)).transpose()?;
    let pl = PlanarLaplace::new(eps, geographic, region, granularity).map_err(setting)?;
    let x: Vec<[Q; 2]> = points
        .iter()
        .enumerate()
        .map(|(i, (a, b))| {
            Ok([
                q(&format!("records[{i}]"), a)?,
                q(&format!("records[{i}]"), b)?,
            ])
        })
        .collect::<Result<_>>()?;
    let released = py.detach(|| {
        let mut rng = mdp::privatize::rng(seed);
        x.iter()
            .enumerate()
            .map(|(i, xi)| {
                pl.release(xi, &mut rng)
                    .map(|y| {
                        (
                            mdp_audit::exact::format_rational(&y[0]),
                            mdp_audit::exact::format_rational(&y[1]),
                        )
                    })
                    .map_err(|e| Error::input(format!("records[{i}]"), e))
            })
            .collect::<Result<Vec<_>>>()
    })?;
    Ok((released, pl.summary(confidence).to_string()))
}
