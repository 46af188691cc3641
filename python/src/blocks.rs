//! Large-mechanism containers from Python: the audit split by blocks of columns
//! (`mdp_audit::structured::blocks`), which `metricdp.distributed` runs as Dask tasks. Each call
//! converts and dispatches; sums, ε and results travel as exact text.

use crate::errors::{Error, Result};
use mdp_audit::exact::Q;
use mdp_audit::io::Limits;
use mdp_audit::structured::blocks;
use pyo3::prelude::*;
use std::path::Path;

/// Memory a block audit may plan (bytes): the block's matrix, copies and tree.
const BLOCK_MEMORY: u64 = 16_000_000_000;

/// (n, K, ε as "p/q") of a container header.
#[pyfunction]
pub fn container_shape(py: Python<'_>, header: &str) -> Result<(usize, usize, String)> {
    py.detach(|| Ok(blocks::shape(Path::new(header), &Limits::default())?))
}

/// The container's metric against the pipeline's (`space`, `require_metric_digest`; neither:
/// reported only), read from the header alone: JSON text `{"metric", "metric_digest",
/// "check"}` with `check` the `metric` check (`null` when nothing is pinned).
#[pyfunction]
#[pyo3(signature = (header, *, space=None, require_metric_digest=None))]
pub fn container_metric(
    py: Python<'_>,
    header: &str,
    space: Option<&Bound<'_, PyAny>>,
    require_metric_digest: Option<&str>,
) -> Result<String> {
    let pin = crate::mechanism::metric_pin(space, require_metric_digest, false, false)?;
    py.detach(|| {
        let limits = Limits::default();
        let doc = mdp_audit::io::parse_json(&mdp_audit::io::read_source(header, &limits)?)?;
        let (g, labels) =
            mdp_audit::io::container::header_metric(Path::new(header), &doc, &limits)?;
        let view = mdp_audit::pin::View::of_geometry(&g, labels.as_deref());
        let digest = mdp_audit::pin::digest(&view);
        let check = mdp_audit::pin::check(&view, &digest, &pin, limits.max_bits);
        Ok(
            serde_json::json!({"metric": view.describe(), "metric_digest": digest, "check": check})
                .to_string(),
        )
    })
}

/// The exact sums of columns c0..c1 of every row, as "p/q" strings.
#[pyfunction]
pub fn block_sums(py: Python<'_>, header: &str, c0: usize, c1: usize) -> Result<Vec<String>> {
    py.detach(|| {
        Ok(blocks::partial_sums(
            Path::new(header),
            c0,
            c1,
            &Limits::default(),
            BLOCK_MEMORY,
        )?)
    })
}

/// The whole rows' sums from the blocks' partial sums (each row's must be > 0).
#[pyfunction]
pub fn add_sums(parts: Vec<Vec<String>>) -> Result<Vec<String>> {
    Ok(blocks::add_sums(&parts)?)
}

/// Audit columns c0..c1 on share `part` of `parts` of the ordered pairs with the whole
/// rows' sums at ε (None: the header's claim): the block's result as JSON text.
#[pyfunction]
#[pyo3(signature = (header, c0, c1, sums, epsilon=None, part=0, parts=1, max_exact_triples=None))]
#[allow(clippy::too_many_arguments)]
pub fn audit_block(
    py: Python<'_>,
    header: &str,
    c0: usize,
    c1: usize,
    sums: Vec<String>,
    epsilon: Option<String>,
    part: usize,
    parts: usize,
    max_exact_triples: Option<u64>,
) -> Result<String> {
    let budget =
        max_exact_triples.unwrap_or(mdp_audit::structured::report::DEFAULT_MAX_EXACT_TRIPLES);
    if budget == 0 {
        return Err(Error::input("max_exact_triples", "must be ≥ 1"));
    }
    let share = mdp_audit::structured::Part::new(part, parts)?;
    py.detach(|| {
        Ok(blocks::audit_block(
            Path::new(header),
            c0,
            c1,
            share,
            &sums,
            epsilon.as_deref(),
            mdp_audit::privacy::DEFAULT_MAX_PREC,
            budget,
            &Limits::default(),
            BLOCK_MEMORY,
        )?)
    })
}

/// The blocks' results combined into one report (JSON text).
#[pyfunction]
pub fn combine_blocks(
    results: Vec<String>,
    sums: Vec<String>,
    n: usize,
    k: usize,
    epsilon: &str,
) -> Result<String> {
    let tol = Q::from_unsigneds(1u32, 1_000_000_000u32);
    blocks::combine(&results, &sums, n, k, epsilon, &tol)
        .map(|v| v.to_string())
        .map_err(Error::from)
}

impl From<mdp::large::LargeError> for Error {
    fn from(e: mdp::large::LargeError) -> Self {
        match e {
            mdp::large::LargeError::Invalid { field, message } => Error::Input { field, message },
            mdp::large::LargeError::NotCertified(report) => Error::Audit(report),
            e @ mdp::large::LargeError::Write { .. } => Error::input("path", e.to_string()),
        }
    }
}

/// Write a float64 matrix on `space` as a large-mechanism container at `path` (the header;
/// the `.npy` beside it) after the structured audit proves it ε·d private (else
/// NotPrivate with the report). The outputs are the inputs (a square matrix).
#[pyfunction]
#[pyo3(signature = (matrix, space, epsilon, path, *, progress=None))]
pub fn write_container(
    py: Python<'_>,
    matrix: numpy::PyReadonlyArray2<'_, f64>,
    space: &crate::space::Space,
    epsilon: &str,
    path: &str,
    progress: Option<Py<PyAny>>,
) -> Result<String> {
    let eps = mdp::produce::epsilon(epsilon)?;
    let view = matrix.as_array();
    let (rows, cols) = view.dim();
    if rows != space.inner.n() || cols != rows {
        return Err(Error::input(
            "matrix",
            format!(
                "is {rows} × {cols}; a container of this space is {n} × {n}",
                n = space.inner.n()
            ),
        ));
    }
    let data: Vec<f64> = view.iter().copied().collect();
    let geometry = mdp_audit::io::container::Geometry::Points(space.inner.clone());
    mdp::large::check(&geometry, &eps, u64::MAX)?;
    let dense = mdp_audit::dense::Dense::new(rows, cols, data, "matrix")?;
    let labels = space.labels.clone();
    let name = space.name.clone();
    crate::progress::run(py, progress, |p| {
        let meta = mdp::produce::producer_meta(
            serde_json::json!({"mechanism": "imported", "space": name,
                               "import": {"matrix": "numpy array (Python)"}}),
            &serde_json::Value::Null,
        );
        let header = Path::new(path);
        let m = mdp::large::certify(geometry, labels, dense, &eps, header, meta, p)?;
        m.write(header)?;
        Ok(m.container.npy.display().to_string())
    })
}

/// Gated containers of this process, kept across calls (a Dask worker audits a container
/// once, then samples every partition it is given): keyed by the header's canonical path,
/// both files' sizes and modification times, and the policy.
type GateKey = (
    std::path::PathBuf,
    Vec<(u64, std::time::SystemTime)>,
    String,
);
static GATED: std::sync::Mutex<Vec<(GateKey, std::sync::Arc<mdp::large::GatedContainer>)>> =
    std::sync::Mutex::new(Vec::new());

fn stamp(p: &Path) -> Result<(u64, std::time::SystemTime)> {
    let m =
        std::fs::metadata(p).map_err(|e| Error::input("path", format!("{}: {e}", p.display())))?;
    Ok((m.len(), m.modified().unwrap_or(std::time::UNIX_EPOCH)))
}

fn gated(
    header: &Path,
    opts: &mdp_audit::audit::Options,
    policy_key: String,
    progress: &dyn mdp_audit::progress::Progress,
) -> Result<std::sync::Arc<mdp::large::GatedContainer>> {
    let canon = header
        .canonicalize()
        .map_err(|e| Error::input("path", format!("{}: {e}", header.display())))?;
    let npy = mdp::large::npy_path(&canon);
    let mut stamps = vec![stamp(&canon)?];
    if let Ok(s) = stamp(&npy) {
        stamps.push(s);
    }
    let key = (canon.clone(), stamps, policy_key);
    if let Some((_, g)) = GATED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|(k, _)| *k == key)
    {
        return Ok(g.clone());
    }
    let g = mdp::large::load_gated(&canon, opts, BLOCK_MEMORY, progress).map_err(|e| match e {
        mdp::privatize::GateError::Read(e) | mdp::privatize::GateError::Invalid(e) => {
            Error::from(e)
        }
        mdp::privatize::GateError::NotPrivate(r) => Error::Audit(r),
    })?;
    let g = std::sync::Arc::new(g);
    let mut cache = GATED.lock().unwrap_or_else(|e| e.into_inner());
    cache.retain(|(k, _)| k.0 != canon); // one version of a file at a time
    cache.push((key, g.clone()));
    Ok(g)
}

/// Privatize records (input labels, or 0-based indices with `by_index`) with the
/// container at `header`, gated by the structured audit under the pipeline's policy
/// (`epsilon` required); the outputs' labels (or indices). OS randomness unless `seed`.
#[pyfunction]
#[pyo3(signature = (header, records, *, epsilon, within=None, allow_scoped=false, space=None, require_metric_digest=None, trust_file_metric=false, seed=None, by_index=false, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn privatize_container(
    py: Python<'_>,
    header: &str,
    records: Vec<Bound<'_, PyAny>>,
    epsilon: &str,
    within: Option<&str>,
    allow_scoped: bool,
    space: Option<&Bound<'_, PyAny>>,
    require_metric_digest: Option<&str>,
    trust_file_metric: bool,
    seed: Option<u64>,
    by_index: bool,
    progress: Option<Py<PyAny>>,
) -> Result<Vec<String>> {
    let metric =
        crate::mechanism::metric_pin(space, require_metric_digest, trust_file_metric, true)?;
    // The cache's key names the pin by the digest it requires.
    let pinned = match &metric {
        mdp_audit::pin::MetricPin::FileMetric => "file".to_string(),
        mdp_audit::pin::MetricPin::Digest(d) => d.clone(),
        mdp_audit::pin::MetricPin::Space(p) => mdp_audit::pin::digest(
            &mdp_audit::pin::View::of_geometry(&p.geometry, p.labels.as_deref()),
        ),
    };
    let opts = crate::mechanism::policy(Some(epsilon), within, allow_scoped, None, metric)?;
    let policy_key = format!("{epsilon}|{within:?}|{allow_scoped}|{pinned}");
    // The records as input indices, read while the GIL is held.
    let mut keys: Vec<std::result::Result<usize, String>> = Vec::with_capacity(records.len());
    for (i, r) in records.iter().enumerate() {
        if by_index {
            let u: usize = r.extract().map_err(|_| {
                Error::input(
                    format!("records[{i}]"),
                    "expected a non-negative integer index",
                )
            })?;
            keys.push(Ok(u));
        } else {
            let l: String = r
                .str()
                .and_then(|s| s.extract())
                .map_err(|_| Error::input(format!("records[{i}]"), "expected an input label"))?;
            keys.push(Err(l));
        }
    }
    let path = Path::new(header).to_path_buf();
    crate::progress::run(py, progress, move |p| {
        let g = gated(&path, &opts, policy_key, p)?;
        let n = g.container.matrix.rows;
        let mut rng = mdp::privatize::rng(seed);
        keys.iter()
            .enumerate()
            .map(|(i, k)| {
                let u = match k {
                    Ok(u) if *u < n => *u,
                    Ok(u) => {
                        return Err(Error::input(
                            format!("records[{i}]"),
                            format!("index {u} out of range 0..{n}"),
                        ))
                    }
                    Err(l) => g.input(l).ok_or_else(|| {
                        Error::input(
                            format!("records[{i}]"),
                            format!("{l:?} is not an input label of the container"),
                        )
                    })?,
                };
                let w = g.sample(u, &mut rng);
                Ok(if by_index {
                    w.to_string()
                } else {
                    g.output_label(w)
                })
            })
            .collect()
    })
}
