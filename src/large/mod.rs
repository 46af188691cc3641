//! Mechanisms at city scale (issue 35): built in float64, proven by the structured audit
//! (`spec/soundness.md` §7) and written as a large-mechanism container (an `mdp/1` header
//! beside a `.npy` matrix, `spec/mechanism-format.md` revision 3).
//!
//! The exponential mechanism (Imola et al. §3.1) is built row by row from float distances
//! (coordinate metrics: [`crate::metric::Space::approx`]; graphs: an upward-rounded float
//! Dijkstra per row, [`crate::metric::shortest_paths_upper`], so no n×n table of exact
//! shortest paths is formed). The floats are not trusted: the container is
//! written only after the kernel's structured audit proves it ε·d private for the true
//! metric, at the ε and scope it claims.

pub mod pmo;

use crate::atomic::AtomicFile;
use crate::dense::Dense;
use crate::exact::Q;
use crate::io::container::{Container, Geometry};
use crate::io::{self, npy};
use crate::mechanism::Outputs;
use crate::progress::Progress;
use crate::structured::report::audit_container;
use crate::{AuditOptions, Report, Verdict};
use rayon::prelude::*;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// What can stop a large build.
#[derive(Debug, thiserror::Error)]
pub enum LargeError {
    /// A parameter or an input is out of its domain (`field: message`).
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// The matrix did not pass its own audit (the report says why).
    #[error("the mechanism did not pass its audit: {}", failing_check(.0))]
    NotCertified(Box<Report>),
    /// Writing the files failed.
    #[error("{path}: cannot write: {message}")]
    Write { path: String, message: String },
}

/// The first check of `report` that did not pass, as `name: detail`.
fn failing_check(report: &Report) -> String {
    report
        .checks
        .iter()
        .find(|c| c.verdict != Verdict::Pass)
        .map_or(String::new(), |c| format!("{}: {}", c.name, c.detail))
}

fn invalid(field: &str, message: impl Into<String>) -> LargeError {
    LargeError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// A certified large mechanism, ready to write.
pub struct LargeMechanism {
    pub container: Container,
    pub report: Report,
    header: Value,
}

/// Bytes a build of n × n needs at most: the matrix, the audit's copies and its tree.
pub fn build_bytes(n: usize) -> u64 {
    io::container::audit_bytes(n, n)
}

/// Float distances from input `u` to every input.
fn distance_row(geometry: &Geometry, adjacency: &[Vec<(u32, f64)>], u: usize) -> Vec<f64> {
    match geometry {
        Geometry::Points(s) => (0..s.n()).map(|w| s.approx(u, w)).collect(),
        Geometry::Graph(_) => crate::metric::shortest_paths_upper(adjacency, u),
    }
}

fn adjacency(geometry: &Geometry) -> Vec<Vec<(u32, f64)>> {
    match geometry {
        Geometry::Points(_) => Vec::new(),
        Geometry::Graph(g) => {
            let mut adj = vec![Vec::new(); g.n];
            for (a, b, w) in g.edge_list() {
                let w = crate::exact::f64_nearest(w);
                adj[a].push((b as u32, w));
                adj[b].push((a as u32, w));
            }
            adj
        }
    }
}

/// The weighted exponential mechanism EXPMECH_Y, Y_w e^{−ε·d(u,w)/2}/Z_u over the inputs
/// (K = n; `weights` = None is Y = 1), in float64 (log-sum-exp per row). Proposition 1
/// leaves every ratio below e^{ε·d} by the k = u term of Z_u, which covers the float error
/// where `exponential::certifiable` says so for JSON files; here the audit that follows
/// decides. With `gamma`, TEM (Carvalho et al., Lemma 4.2): the same on the truncated
/// metric d̃ = min(d, γ), which is ε·d private because d̃ is 1-Lipschitz in d (Lemma 4.1).
pub fn exponential(
    geometry: &Geometry,
    eps: &Q,
    weights: Option<&[Q]>,
    gamma: Option<&Q>,
    progress: &dyn Progress,
) -> Result<Dense, LargeError> {
    if gamma.is_some_and(|g| *g < 0u32) {
        return Err(invalid("gamma", "must be ≥ 0"));
    }
    let cap = gamma.map_or(f64::INFINITY, crate::exact::f64_nearest);
    let n = geometry.n();
    let ln_y: Vec<f64> = match weights {
        None => vec![0.0; n],
        Some(w) => {
            crate::produce::check_weights(w, n).map_err(|e| match e {
                crate::produce::ProduceError::Invalid { field, message } => {
                    LargeError::Invalid { field, message }
                }
                e => invalid("weights", e.to_string()),
            })?;
            w.iter()
                .map(|y| crate::exact::f64_nearest(y).ln())
                .collect()
        }
    };
    if let Some(i) = ln_y.iter().position(|l| !l.is_finite()) {
        return Err(invalid(
            &format!("weights[{i}]"),
            "outside the range of a double",
        ));
    }
    let e = crate::exact::f64_nearest(eps);
    let adj = adjacency(geometry);
    progress.start("exponential mechanism: rows", Some(n as u64));
    let rows: Vec<Vec<f64>> = (0..n)
        .into_par_iter()
        .map(|u| {
            let d = distance_row(geometry, &adj, u);
            let logits: Vec<f64> = d
                .iter()
                .zip(&ln_y)
                .map(|(x, l)| l - 0.5 * e * x.min(cap))
                .collect();
            let mx = logits.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let ln_z = logits.iter().map(|l| (l - mx).exp()).sum::<f64>().ln() + mx;
            progress.advance(1);
            logits.iter().map(|l| (l - ln_z).exp()).collect()
        })
        .collect();
    progress.finish(&format!("exponential mechanism: {n} rows"));
    let mut data = Vec::with_capacity(n * n);
    for r in rows {
        data.extend(r);
    }
    Dense::new(n, n, data, "matrix").map_err(|e| invalid("epsilon", e.to_string()))
}

/// The metric as the header writes it (with labels).
fn metric_value(geometry: &Geometry, labels: Option<&[String]>) -> Value {
    let mut v = match geometry {
        Geometry::Points(s) => io::space_to_value(s),
        Geometry::Graph(g) => json!({
            "kind": "graph",
            "nodes": g.n,
            "edges": g.edge_list().map(|(a, b, w)| json!([a, b, io::number_value(w)])).collect::<Vec<_>>(),
        }),
    };
    if let Some(l) = labels {
        v["labels"] = json!(l);
    }
    v
}

/// Relative margin by which the clustered randomizer's float64 weights b and c are rounded
/// up beyond their rational bounds (2⁻⁴⁰): the tight ratios a/b = e^{α₀r} and a/c = e^{α₀}
/// then hold with a slack the audit's float filter resolves, instead of one triple at a
/// time in rationals; it costs only utility.
const CLUSTERED_MARGIN: i64 = 40;

/// The clustered k-RR randomizer of FreqEstLocal (Imola et al. 2024, Algorithm 4;
/// `spec/user-level.md` §6) on `clusters` clusters of `size` items at α₀, as a container's
/// parts: the clustered metric realized exactly as a Chebyshev space (item i of cluster c
/// at r·bits(i) ⧺ bits(c): two items of one cluster differ by r in some coordinate and by
/// at most r in all; items of two clusters differ by 1 in a cluster coordinate), labels
/// `c<c>-<i>`, and the rows of weights a = 1 (the item), b (its cluster), c (elsewhere),
/// b ≥ e^{−α₀r}(1 + 2⁻⁴⁰), c ≥ e^{−α₀}(1 + 2⁻⁴⁰) and c ≤ b < 1, divided by their common sum
/// in float64 (the exact privacy argument of §6; the audit that follows decides).
pub fn clustered_randomizer(
    clusters: usize,
    size: usize,
    r: &Q,
    alpha0: &Q,
    max_memory: u64,
) -> Result<(Geometry, Vec<String>, Dense), LargeError> {
    if clusters == 0 || size == 0 {
        return Err(invalid("clusters", "clusters and size must be ≥ 1"));
    }
    let k = clusters
        .checked_mul(size)
        .filter(|k| (2..=1 << 20).contains(k))
        .ok_or_else(|| invalid("size", "clusters × size must be in [2, 2^20]"))?;
    if *r <= 0u32 || *r >= 1u32 {
        return Err(invalid("r", "must be in (0, 1)"));
    }
    if *alpha0 <= 0u32 || *alpha0 > 1000u32 {
        return Err(invalid("epsilon", "α₀ must be in (0, 1000]"));
    }
    let need = build_bytes(k);
    if need > max_memory {
        return Err(invalid(
            "max-memory",
            format!(
                "{k} × {k} needs about {:.1} GB, more than the limit of {:.1} GB",
                need as f64 / 1e9,
                max_memory as f64 / 1e9
            ),
        ));
    }
    let margin = Q::from(1u32) + (Q::from(1u32) >> CLUSTERED_MARGIN as u64);
    let up = |x: &Q| crate::exact::f64_up(&(x * &margin));
    let b = up(&crate::user_level::freq::exp_neg_up(&(alpha0 * r)));
    let c = up(&crate::user_level::freq::exp_neg_up(alpha0)).min(b);
    if b >= 1.0 || c <= 0.0 {
        return Err(invalid(
            "epsilon",
            "α₀·r too small (or α₀ too large) for float64 weights to separate the item, its cluster and the rest",
        ));
    }
    let bits = |m: usize| (usize::BITS - (m.max(1) - 1).leading_zeros()) as usize;
    let (kb, kc) = (bits(size), bits(clusters));
    let points: Vec<Vec<Q>> = (0..k)
        .map(|x| {
            let (cl, i) = (x / size, x % size);
            let mut p: Vec<Q> = (0..kb)
                .map(|j| {
                    if i >> j & 1 == 1 {
                        r.clone()
                    } else {
                        Q::from(0u32)
                    }
                })
                .collect();
            p.extend((0..kc).map(|j| Q::from((cl >> j & 1) as u32)));
            if p.is_empty() {
                p.push(Q::from(0u32));
            }
            p
        })
        .collect();
    let space =
        crate::metric::Space::from_points(crate::metric::MetricKind::Chebyshev, points, None)
            .map_err(|e| invalid("space", e.to_string()))?;
    let labels = (0..k)
        .map(|x| format!("c{}-{}", x / size, x % size))
        .collect();
    // Rows normalized in floats: every row holds the same multiset {a, b ×(s−1), c ×(k−s)},
    // so every exact row sum is the same and the audited ratios are those of the doubles
    // 1/z, b/z, c/z, whose roundings the 2⁻⁴⁰ margin covers.
    let z = 1.0 + (size - 1) as f64 * b + (k - size) as f64 * c;
    let (a, b, c) = (1.0 / z, b / z, c / z);
    let mut data = vec![c; k * k];
    data.par_chunks_mut(k).enumerate().for_each(|(x, row)| {
        let first = x / size * size;
        row[first..first + size].fill(b);
        row[x] = a;
    });
    let dense = Dense::new(k, k, data, "matrix").map_err(|e| invalid("matrix", e.to_string()))?;
    Ok((Geometry::Points(space), labels, dense))
}

/// The `.npy` file beside `header`: its name with `.json` replaced by `.npy` (or `.npy`
/// appended).
pub fn npy_path(header: &Path) -> PathBuf {
    match header.extension() {
        Some(e) if e == "json" => header.with_extension("npy"),
        _ => {
            let mut s = header.as_os_str().to_owned();
            s.push(".npy");
            PathBuf::from(s)
        }
    }
}

/// Certify `matrix` as an ε·d private mechanism on `geometry` (outputs: the inputs) by the
/// structured audit at ε, for the header at `header`.
pub fn certify(
    geometry: Geometry,
    labels: Option<Vec<String>>,
    matrix: Dense,
    eps: &Q,
    header: &Path,
    meta: Value,
    progress: &dyn Progress,
) -> Result<LargeMechanism, LargeError> {
    certify_with_outputs(
        geometry,
        labels,
        matrix,
        Outputs::Inputs,
        eps,
        header,
        meta,
        progress,
    )
}

/// [`certify`] with the outputs given: the inputs, or opaque labels (written as the
/// header's `outputs`).
#[allow(clippy::too_many_arguments)]
fn certify_with_outputs(
    geometry: Geometry,
    labels: Option<Vec<String>>,
    matrix: Dense,
    outputs: Outputs,
    eps: &Q,
    header: &Path,
    meta: Value,
    progress: &dyn Progress,
) -> Result<LargeMechanism, LargeError> {
    let npy = npy_path(header);
    let name = npy
        .file_name()
        .map(|s| s.to_string_lossy().into_owned())
        .ok_or_else(|| invalid("output", "not a file path"))?;
    let mut doc = json!({
        "format": "mdp/1",
        "epsilon": io::number_value(eps),
        "metric": metric_value(&geometry, labels.as_deref()),
        "matrix": {"npy": name},
        "meta": meta,
    });
    if let Outputs::Labels(l) = &outputs {
        doc["outputs"] = json!({ "labels": l });
    }
    let container = Container {
        epsilon: eps.clone(),
        geometry,
        matrix,
        outputs,
        within: None,
        labels,
        meta: doc.get("meta").cloned(),
        warnings: Vec::new(),
        npy,
        prior: None,
        lp_dual: None,
    };
    let opts = AuditOptions {
        epsilon: Some(eps.clone()),
        ..AuditOptions::default()
    };
    let report = audit_container(&container, &opts, progress)
        .map_err(|e| invalid("matrix", e.to_string()))?;
    if report.verdict != Verdict::Pass {
        return Err(LargeError::NotCertified(Box::new(report)));
    }
    Ok(LargeMechanism {
        container,
        report,
        header: doc,
    })
}

/// `mdp import --container`: a float64 `.npy` matrix at `matrix` (one row per input of
/// `geometry`; its columns the inputs when `outputs_are_inputs`, else opaque outputs named
/// 0..K−1) claimed ε·d private, as a container at `header`. The shape is read first and
/// the audit's memory checked against `max_memory` before the matrix is; the entries are
/// checked (finite, ≥ 0, no zero row) and the structured audit must pass at ε (else
/// [`LargeError::NotCertified`]); the matrix is written beside the header, unchanged.
#[allow(clippy::too_many_arguments)]
pub fn import_npy(
    matrix: &Path,
    geometry: Geometry,
    labels: Option<Vec<String>>,
    eps: &Q,
    outputs_are_inputs: bool,
    header: &Path,
    meta: Value,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<LargeMechanism, LargeError> {
    let name = matrix.display().to_string();
    let bad = |e: crate::error::InputError| invalid("matrix", e.to_string());
    let shape = npy::shape(matrix, &name).map_err(bad)?;
    let n = geometry.n();
    if shape.rows != n {
        return Err(invalid(
            "matrix",
            format!(
                "{name} has {} rows, the space has {n} points (one row per input)",
                shape.rows
            ),
        ));
    }
    if outputs_are_inputs && shape.cols != n {
        return Err(invalid(
            "matrix",
            format!(
                "{name} is {n} × {}: outputs that are the inputs need a square matrix",
                shape.cols
            ),
        ));
    }
    let need = io::container::audit_bytes(n, shape.cols);
    if need > max_memory {
        return Err(invalid(
            "max-memory",
            format!(
                "auditing {n} × {} entries needs about {:.1} GB, more than the limit of {:.1} GB",
                shape.cols,
                need as f64 / 1e9,
                max_memory as f64 / 1e9
            ),
        ));
    }
    let data = npy::read(matrix, n, shape.cols, &name, &|_| {}).map_err(bad)?;
    let dense = Dense::new(n, shape.cols, data, &name).map_err(bad)?;
    let outputs = if outputs_are_inputs {
        Outputs::Inputs
    } else {
        Outputs::Labels((0..shape.cols).map(|j| j.to_string()).collect())
    };
    certify_with_outputs(
        geometry, labels, dense, outputs, eps, header, meta, progress,
    )
}

impl LargeMechanism {
    /// Write the `.npy` matrix, then the header (each whole or not at all): a header never
    /// names a matrix that is not complete.
    pub fn write(&self, header: &Path) -> Result<(), LargeError> {
        let err = |p: &Path, e: std::io::Error| LargeError::Write {
            path: p.display().to_string(),
            message: e.to_string(),
        };
        let npy = &self.container.npy;
        let mut f = AtomicFile::create(npy).map_err(|e| err(npy, e))?;
        let m = &self.container.matrix;
        npy::write(&mut f, m.rows, m.cols, m.data()).map_err(|e| err(npy, e))?;
        f.commit().map_err(|e| err(npy, e))?;
        let mut h = AtomicFile::create(header).map_err(|e| err(header, e))?;
        use std::io::Write;
        h.write_all(
            serde_json::to_string_pretty(&self.header)
                .expect("json")
                .as_bytes(),
        )
        .and_then(|_| h.write_all(b"\n"))
        .map_err(|e| err(header, e))?;
        h.commit().map_err(|e| err(header, e))
    }
}

/// Check ε and the memory a build of `geometry` needs against `max_memory` bytes.
pub fn check(geometry: &Geometry, eps: &Q, max_memory: u64) -> Result<(), LargeError> {
    if *eps <= 0u32 {
        return Err(invalid("epsilon", "must be > 0"));
    }
    let need = build_bytes(geometry.n());
    if need > max_memory {
        return Err(invalid(
            "max-memory",
            format!(
                "a container of {n} × {n} needs about {:.1} GB to build and certify, more than {:.1} GB",
                need as f64 / 1e9,
                max_memory as f64 / 1e9,
                n = geometry.n()
            ),
        ));
    }
    if let Geometry::Points(s) = geometry {
        if !crate::structured::tree::supports(s.kind()) {
            return Err(invalid(
                "space",
                "an explicit table has no structured audit: build the JSON form",
            ));
        }
    }
    Ok(())
}

/// A container that passed the structured audit under the pipeline's policy (its ε and
/// scope, never the file's own claims when the policy states them): the only way a
/// container reaches a sampler ([`load_gated`]). Rows are sampled exactly from the float64
/// entries the audit proved (`privatize::ExactRow::from_dyadic`), each row prepared on
/// first use and kept.
pub struct GatedContainer {
    pub container: Container,
    pub report: Report,
    rows: std::sync::Mutex<
        std::collections::HashMap<usize, std::sync::Arc<crate::privatize::ExactRow>>,
    >,
    index: std::collections::HashMap<String, usize>,
}

/// Read the container at `header`, audit it under `policy` (structured audit), and keep it
/// only if it passes: [`crate::privatize::GateError::NotPrivate`] with the report
/// otherwise.
pub fn load_gated(
    header: &Path,
    policy: &AuditOptions,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<GatedContainer, crate::privatize::GateError> {
    use crate::privatize::GateError;
    let limits = io::Limits::default();
    let bytes = io::read_source(&header.to_string_lossy(), &limits).map_err(GateError::Read)?;
    let doc = io::parse_json(&bytes).map_err(GateError::Invalid)?;
    if !io::container::is_container(&doc) {
        return Err(GateError::Invalid(io::input_error(
            "matrix",
            "not a container (its matrix is not {\"npy\": …})",
        )));
    }
    gate(header, &doc, policy, max_memory, progress)
}

/// Read the container whose parsed header `doc` is at `header` (its `.npy` beside it) and
/// gate it as [`load_gated`] does.
pub fn gate(
    header: &Path,
    doc: &serde_json::Value,
    policy: &AuditOptions,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<GatedContainer, crate::privatize::GateError> {
    use crate::privatize::GateError;
    let limits = io::Limits::default();
    let container = io::container::read(header, doc, &limits, max_memory, progress)
        .map_err(GateError::Invalid)?;
    let report = audit_container(&container, policy, progress).map_err(GateError::Invalid)?;
    if report.verdict != Verdict::Pass {
        return Err(GateError::NotPrivate(Box::new(report)));
    }
    let index = container
        .labels
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, l)| (l.clone(), i))
        .collect();
    Ok(GatedContainer {
        container,
        report,
        rows: Default::default(),
        index,
    })
}

impl GatedContainer {
    /// The input named `label` (the metric's labels).
    pub fn input(&self, label: &str) -> Option<usize> {
        self.index.get(label).copied()
    }

    /// The label of output column `w`: the input's label when the outputs are the inputs,
    /// else its index.
    pub fn output_label(&self, w: usize) -> String {
        let input = match &self.container.outputs {
            Outputs::Inputs => Some(w),
            Outputs::OfInputs(i) => i.get(w).copied(),
            _ => None,
        };
        match (&self.container.outputs, input, &self.container.labels) {
            (Outputs::Labels(l), _, _) => l[w].clone(),
            (_, Some(u), Some(l)) => l[u].clone(),
            _ => w.to_string(),
        }
    }

    /// Draw an output for input `u` (0-based, < n) from the row the audit proved.
    pub fn sample<R: rand::RngCore + ?Sized>(&self, u: usize, rng: &mut R) -> usize {
        let row = {
            let mut rows = self.rows.lock().unwrap_or_else(|e| e.into_inner());
            rows.entry(u)
                .or_insert_with(|| {
                    std::sync::Arc::new(crate::privatize::ExactRow::from_dyadic(
                        self.container.matrix.row(u),
                    ))
                })
                .clone()
        };
        row.sample(rng)
    }
}
