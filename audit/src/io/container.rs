//! The large-mechanism container (`spec/mechanism-format.md`, revision 3): an `mdp/1`
//! header whose `matrix` is `{"npy": "NAME.npy"}`, a float64 `.npy` file beside it (same
//! folder). A float64 is an exact dyadic rational, so the container is as exact as the
//! JSON form; it reads in seconds what JSON reads in minutes and keeps 8 bytes an entry.
//!
//! What the container holds: `epsilon`, `metric` (coordinate kinds, or `graph` read as its
//! edges, no shortest-path table), `outputs`, `neighbors`, `meta` and the metric's
//! `labels`; since revision 4 also `loss.prior` and an `lp_dual` lower bound whose costs
//! are the distances to the outputs (checked in O(n·K) from K rows of distances, no n×n
//! table). Explicit costs (`loss.cost`) and the other certificates are refused (their
//! checks need exact n×K tables or all pairs); `explicit` metrics too (an n×n table in
//! the header is the JSON form's job).

use super::{
    array, index, input_error, number, object, outputs_from_value, positive, space_from_value,
    type_name, InputError, Limits,
};
use crate::dense::Dense;
use crate::exact::Q;
use crate::mechanism::Outputs;
use crate::metric::{MetricKind, Space};
use crate::progress::Progress;
use crate::structured::edges::Graph;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The metric of a container: points (a [`Space`] without its n×n tables) or a graph's
/// edges.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)] // one per container; a box would only add an indirection
pub enum Geometry {
    Points(Space),
    Graph(Graph),
}

impl Geometry {
    pub fn n(&self) -> usize {
        match self {
            Geometry::Points(s) => s.n(),
            Geometry::Graph(g) => g.n,
        }
    }
    pub fn kind(&self) -> MetricKind {
        match self {
            Geometry::Points(s) => s.kind(),
            Geometry::Graph(_) => MetricKind::Graph,
        }
    }
}

/// A parsed container.
#[derive(Clone, Debug)]
pub struct Container {
    pub epsilon: Q,
    pub geometry: Geometry,
    pub matrix: Dense,
    pub outputs: Outputs,
    pub within: Option<Q>,
    pub labels: Option<Vec<String>>,
    pub meta: Option<Value>,
    pub warnings: Vec<String>,
    /// The `.npy` file read.
    pub npy: PathBuf,
    /// `loss.prior` (revision 4): the weights of the expected loss an `lp_dual` bounds.
    pub prior: Option<Vec<Q>>,
    /// `certificate.lower_bound` of kind `lp_dual` (revision 4), its costs the distances
    /// from the inputs to the outputs.
    pub lp_dual: Option<crate::io::lp_dual::LpDual>,
}

/// Whether a parsed `mdp/1` document is a container header (its `matrix` an object).
pub fn is_container(v: &Value) -> bool {
    v.get("matrix").is_some_and(Value::is_object)
}

/// Bytes an audit of an n × K container needs at most (matrix, normalized copy, tree).
pub fn audit_bytes(n: usize, k: usize) -> u64 {
    Dense::audit_bytes(n, k).saturating_add(crate::structured::tree::bytes(n, k))
}

/// Read a container from its parsed header `v` (read from `header`): the metric, the
/// shape, the memory the audit will need (refused past `max_memory` bytes before the
/// matrix is read), then the `.npy` file, reporting rows read to `progress`.
pub fn read(
    header: &Path,
    v: &Value,
    limits: &Limits,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<Container, InputError> {
    let mut c = parse(header, v, limits)?;
    let (n, k) = (c.geometry.n(), c.outputs.len(c.geometry.n()));
    let need = audit_bytes(n, k);
    if need > max_memory {
        return Err(over_memory(n, k, need, max_memory));
    }
    progress.start(&format!("reading {}", c.npy.display()), Some(n as u64));
    let last = std::cell::Cell::new(0u64);
    let data = super::npy::read(&c.npy, n, k, "matrix.npy", &|rows| {
        progress.advance(rows - last.replace(rows));
    })?;
    progress.finish(&format!("read {n} × {k} entries"));
    c.matrix = Dense::new(n, k, data, "matrix")?;
    Ok(c)
}

/// Read the columns `c0..c1` of a container (one block of a distributed audit,
/// [`crate::structured::blocks`]): the same header checks, the block's memory against
/// `max_memory`, then only those columns of the `.npy` file. Rows may be 0 on a block
/// (their whole sums are checked by whoever combines the blocks); `outputs` becomes the
/// block's columns.
pub fn read_columns(
    header: &Path,
    v: &Value,
    limits: &Limits,
    max_memory: u64,
    c0: usize,
    c1: usize,
) -> Result<Container, InputError> {
    let mut c = parse(header, v, limits)?;
    let (n, k) = (c.geometry.n(), c.outputs.len(c.geometry.n()));
    if c0 >= c1 || c1 > k {
        return Err(input_error(
            "columns",
            format!("{c0}..{c1} is not a block of 0..{k}"),
        ));
    }
    let need = audit_bytes(n, c1 - c0);
    if need > max_memory {
        return Err(over_memory(n, c1 - c0, need, max_memory));
    }
    let data = super::npy::read_columns(&c.npy, n, k, c0, c1, "matrix.npy")?;
    c.matrix = Dense::block(n, c1 - c0, data, "matrix")?;
    c.outputs = match &c.outputs {
        Outputs::Inputs => Outputs::OfInputs((c0..c1).collect()),
        Outputs::OfInputs(i) => Outputs::OfInputs(i[c0..c1].to_vec()),
        Outputs::Points(p) => Outputs::Points(p[c0..c1].to_vec()),
        Outputs::Labels(l) => Outputs::Labels(l[c0..c1].to_vec()),
    };
    Ok(c)
}

/// The shape (n, K) and claimed ε of a container's header, without reading its matrix.
pub fn shape(header: &Path, v: &Value, limits: &Limits) -> Result<(usize, usize, Q), InputError> {
    let c = parse(header, v, limits)?;
    let n = c.geometry.n();
    Ok((n, c.outputs.len(n), c.epsilon))
}

fn over_memory(n: usize, k: usize, need: u64, max_memory: u64) -> InputError {
    input_error(
        "matrix",
        format!(
            "auditing {n} × {k} entries needs about {:.1} GB, more than the limit of {:.1} GB (--max-memory)",
            need as f64 / 1e9,
            max_memory as f64 / 1e9
        ),
    )
}

/// The header's metric and labels, without reading its matrix (what a cluster's driver
/// checks against the pipeline's pin, [`crate::pin::check`]).
pub fn header_metric(
    header: &Path,
    v: &Value,
    limits: &Limits,
) -> Result<(Geometry, Option<Vec<String>>), InputError> {
    let c = parse(header, v, limits)?;
    Ok((c.geometry, c.labels))
}

/// The header's checks and fields; the matrix is left empty (1 × 1).
fn parse(header: &Path, v: &Value, limits: &Limits) -> Result<Container, InputError> {
    let o = object(v, "$")?;
    let mut warnings = Vec::new();
    if let Some(f) = o.get("format") {
        if f.as_str() != Some("mdp/1") {
            return Err(input_error("format", "expected \"mdp/1\""));
        }
    }
    for k in o.keys() {
        if !super::TOP_FIELDS.contains(&k.as_str()) {
            warnings.push(format!("{k}: unknown field ignored"));
        }
    }
    for k in ["delta", "quantile"] {
        if o.contains_key(k) {
            warnings.push(format!(
                "{k}: not used by the structured audit ((ε,δ) and L_q need all n² pairs or n×K costs)"
            ));
        }
    }
    let epsilon = positive(
        o.get("epsilon")
            .ok_or_else(|| input_error("epsilon", "missing"))?,
        "epsilon",
    )?;
    let mv = o
        .get("metric")
        .ok_or_else(|| input_error("metric", "missing"))?;
    let geometry = geometry(mv, limits)?;
    let n = geometry.n();
    let outputs = match o.get("outputs") {
        None | Some(Value::Null) => Outputs::Inputs,
        Some(ov) => outputs_from_value(ov, n, limits)?,
    };
    let within = super::within_of(o)?;
    let mo = object(
        o.get("matrix")
            .ok_or_else(|| input_error("matrix", "missing"))?,
        "matrix",
    )?;
    if let Some(extra) = mo.keys().find(|k| k.as_str() != "npy") {
        return Err(input_error(
            format!("matrix.{extra}"),
            "unknown field (expected only \"npy\")",
        ));
    }
    let name = mo
        .get("npy")
        .ok_or_else(|| input_error("matrix.npy", "missing"))?;
    let name = name.as_str().ok_or_else(|| {
        input_error(
            "matrix.npy",
            format!("expected a file name, found {}", type_name(name)),
        )
    })?;
    if name.is_empty() || name.contains(['/', '\\']) || name == "." || name == ".." {
        return Err(input_error(
            "matrix.npy",
            "must be a file name in the header's folder (no path)",
        ));
    }
    if let Geometry::Points(s) = &geometry {
        warnings.extend(s.warnings.iter().cloned());
    }
    let k = outputs.len(n);
    let prior = match o.get("loss") {
        None | Some(Value::Null) => None,
        Some(lv) => {
            let lo = object(lv, "loss")?;
            if let Some(key) = lo.keys().find(|k| k.as_str() != "prior") {
                return Err(input_error(
                    format!("loss.{key}"),
                    "not supported in a container (revision 4 reads loss.prior only: the costs are the distances to the outputs)",
                ));
            }
            lo.get("prior")
                .map(|p| super::prior_from_value(p, n))
                .transpose()?
        }
    };
    let lp_dual = match o.get("certificate") {
        None | Some(Value::Null) => None,
        Some(cv) => {
            let cert = super::certificate_from_value(cv, n, k)?;
            if cert.packing.is_some() || cert.benders.is_some() || cert.claimed_loss.is_some() {
                return Err(input_error(
                    "certificate",
                    "a container carries an lp_dual lower bound only (revision 4)",
                ));
            }
            if matches!(outputs, Outputs::Points(_) | Outputs::Labels(_)) {
                return Err(input_error(
                    "certificate",
                    "an lp_dual lower bound in a container needs outputs that are inputs (its costs are their distances)",
                ));
            }
            cert.lp_dual
        }
    };
    Ok(Container {
        prior,
        lp_dual,
        epsilon,
        labels: super::metric_labels(mv, "metric", n)?,
        geometry,
        matrix: Dense::new(1, 1, vec![1.0], "matrix")?,
        outputs,
        within,
        meta: o.get("meta").cloned(),
        warnings,
        npy: header.parent().unwrap_or(Path::new(".")).join(name),
    })
}

/// The header's metric: a coordinate space (no n² limit: the structured audit keeps no
/// n×n table), or a graph's edges. Producers of containers read their spaces with it too.
pub fn geometry(mv: &Value, limits: &Limits) -> Result<Geometry, InputError> {
    let mo = object(mv, "metric")?;
    match mo.get("kind").and_then(Value::as_str) {
        Some("graph") => {
            if let Some(k) = mo
                .keys()
                .find(|k| !["kind", "nodes", "edges", "labels"].contains(&k.as_str()))
            {
                return Err(input_error(format!("metric.{k}"), "unknown field"));
            }
            let nodes = number(
                mo.get("nodes")
                    .ok_or_else(|| input_error("metric.nodes", "missing"))?,
                "metric.nodes",
            )?;
            let n = crate::exact::floor_usize(&nodes)
                .filter(|_| nodes.is_integer())
                .ok_or_else(|| input_error("metric.nodes", "expected a positive integer"))?;
            let ev = array(
                mo.get("edges")
                    .ok_or_else(|| input_error("metric.edges", "missing"))?,
                "metric.edges",
            )?;
            let mut edges = Vec::with_capacity(ev.len());
            for (i, e) in ev.iter().enumerate() {
                let path = format!("metric.edges[{i}]");
                let t = array(e, &path)?;
                if t.len() != 3 {
                    return Err(input_error(path, "expected [u, v, w]"));
                }
                edges.push((
                    index(&t[0], &format!("{path}[0]"), n)?,
                    index(&t[1], &format!("{path}[1]"), n)?,
                    number(&t[2], &format!("{path}[2]"))?,
                ));
            }
            Ok(Geometry::Graph(Graph::new(n, edges, "metric")?))
        }
        Some("explicit") => Err(input_error(
            "metric.kind",
            "an explicit table is not supported in a container (write the JSON form)",
        )),
        _ => {
            let unbounded = Limits {
                max_entries: u64::MAX,
                ..*limits
            };
            Ok(Geometry::Points(space_from_value(
                mv, "metric", &unbounded,
            )?))
        }
    }
}
