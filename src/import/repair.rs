//! The exact repair of a near-private external matrix (rows off 1, entries like −1e-12,
//! ratios an ulp over e^{εd}): the LP mechanisms' uniform mix, proved exactly, and the
//! repaired `mdp/1` document (`mdp repair`).

use super::matrix::{document, ImportOptions};
use crate::exact::{f64_nearest, q_from_f64, Q};
use crate::io::{self, input_error, InputError, Limits, MechanismFile};
use crate::loss::{self, Cost};
use crate::mechanism::{Matrix, Outputs};
use crate::metric::{MetricKind, Space};
use crate::privacy::Prepared;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::fmt;

/// Options of [`repair_external`].
#[derive(Clone, Debug)]
pub struct RepairOptions {
    /// Largest accepted |row sum − 1|, −(smallest entry) and change of the mechanism (the
    /// probability mass moved in any row) for a rounding-level repair.
    pub tolerance: f64,
    /// Precision limit of the exact decisions.
    pub max_prec: u64,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            tolerance: 1e-3,
            max_prec: crate::privacy::DEFAULT_MAX_PREC,
        }
    }
}

/// An external mechanism to repair.
pub struct External<'a> {
    pub space: &'a Space,
    /// The matrix as given (may have tiny negative entries and rows off 1).
    pub matrix: &'a Matrix,
    pub outputs: &'a Outputs,
    pub cost: Option<&'a Matrix>,
    pub epsilon: &'a Q,
    /// Privacy claimed only for pairs with d ≤ η.
    pub within: Option<&'a Q>,
}

/// The result of [`repair_external`].
#[derive(Clone, Debug)]
pub struct ExternalRepair {
    /// The certified matrix: exactly stochastic, proved ε·d private.
    pub matrix: Matrix,
    /// The weight of the uniform mechanism mixed in.
    pub t: f64,
    /// max_u |Σ_k M\[u\]\[k\] − 1| of the input.
    pub max_row_deviation: f64,
    /// max_u ½ Σ_k |P\[u\]\[k\] − H\[u\]\[k\]|: the probability mass moved in the worst row (H the
    /// input with negatives set to 0, row-normalized; P the result), in `f64`.
    pub change: f64,
    /// L(M) of H (before) and of P (after), rigorous enclosures; `None` when the outputs have
    /// no distance and there is no cost matrix.
    pub loss_before: Option<[f64; 2]>,
    pub loss_after: Option<[f64; 2]>,
}

/// Why [`repair_external`] refused or failed.
#[derive(Clone, Debug, PartialEq)]
pub enum RepairError {
    /// Malformed input (shapes).
    Input(InputError),
    /// A row sum is farther than the tolerance from 1: not a rounding-level repair.
    RowSum {
        row: usize,
        sum: f64,
        tolerance: f64,
    },
    /// An entry is below −tolerance: not a rounding-level repair.
    Negative {
        row: usize,
        col: usize,
        value: f64,
        tolerance: f64,
    },
    /// Privacy needs more than the tolerance of probability mass moved: the matrix is not
    /// private up to rounding.
    TooFar { change: f64, t: f64, tolerance: f64 },
    /// No uniform mix up to the limit passed the exact check (never observed).
    Failed,
}

impl RepairError {
    /// The exit code: 2 for input that is not a stochastic matrix up to the tolerance, 1 for
    /// a matrix too far from private (a failed privacy check), 4 when the repair fails.
    pub fn exit_code(&self) -> i32 {
        match self {
            RepairError::Input(_) | RepairError::RowSum { .. } | RepairError::Negative { .. } => 2,
            RepairError::TooFar { .. } => 1,
            RepairError::Failed => 4,
        }
    }
}

impl fmt::Display for RepairError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RepairError::Input(e) => write!(f, "{e}"),
            RepairError::RowSum { row, sum, tolerance } => write!(
                f,
                "matrix[{row}]: row sum {sum} is off 1 by more than the tolerance {tolerance:e}: not a rounding-level repair"
            ),
            RepairError::Negative { row, col, value, tolerance } => write!(
                f,
                "matrix[{row}][{col}]: entry {value:e} is below −{tolerance:e}: not a rounding-level repair"
            ),
            RepairError::TooFar { change, t, tolerance } => write!(
                f,
                "refused: privacy needs {change:.3e} of a row's probability mass moved (uniform mix t = {t:.3e}), more than the tolerance {tolerance:e}: the matrix is not private up to rounding"
            ),
            RepairError::Failed => write!(
                f,
                "exact repair failed: no uniform mix up to the limit passes the exact check"
            ),
        }
    }
}

impl std::error::Error for RepairError {}

/// Site index of each output column, for losses as distances.
fn output_sites(space: &Space, outputs: &Outputs, k: usize) -> Option<(Space, Vec<usize>)> {
    let n = space.n();
    match outputs {
        Outputs::Inputs => Some((space.clone(), (0..n).collect())),
        Outputs::OfInputs(v) => Some((space.clone(), v.clone())),
        Outputs::Points(p) => Some((
            space.with_extra_points(p.clone()).ok()?,
            (n..n + k).collect(),
        )),
        Outputs::Labels(_) => None,
    }
}

/// L(M) of `m` (any row sums) as a rigorous enclosure, or `None` without a loss.
fn loss_max(x: &External, m: &Matrix, max_prec: u64) -> Option<[f64; 2]> {
    let (space, sites) = match output_sites(x.space, x.outputs, m.cols) {
        Some(s) => s,
        None => (x.space.clone(), vec![]),
    };
    let cost = match (x.cost, sites.is_empty()) {
        (Some(c), _) => Cost::Matrix(c),
        (None, false) => Cost::Distance(&sites),
        (None, true) => return None,
    };
    let prep = Prepared::new(&space, m, x.within, max_prec).ok()?;
    let l = loss::losses(&prep, &cost, &Q::from(1u32), None).max;
    Some([l.lo, l.hi])
}

/// Turn a near-private external matrix (rounding-level violations, rows off 1, tiny
/// negatives) into the nearest certified one with the exact repair
/// ([`crate::lp::repair::repair_matrix`]: clamp, normalize, mix with the uniform mechanism,
/// round, prove ε·d privacy exactly). Refuses rows off 1 by more than the tolerance,
/// entries below −tolerance, and matrices whose repair moves more than the tolerance of a
/// row's probability mass (not private up to rounding).
pub fn repair_external(x: &External, opts: &RepairOptions) -> Result<ExternalRepair, RepairError> {
    let (n, m) = (x.space.n(), x.matrix);
    let k = m.cols;
    let shape_err = |msg: String| RepairError::Input(input_error("matrix", msg));
    if m.rows != n {
        return Err(shape_err(format!(
            "has {} rows, the space has {n} points",
            m.rows
        )));
    }
    let want = x.outputs.len(n);
    if k != want {
        return Err(shape_err(format!(
            "has {k} columns, the outputs are {want}"
        )));
    }
    if let Some(c) = x.cost {
        if c.rows != n || c.cols != k {
            return Err(shape_err(format!(
                "loss.cost is {} × {}, the matrix {n} × {k}",
                c.rows, c.cols
            )));
        }
    }
    let tol = opts.tolerance;
    let tol_q = q_from_f64(tol);
    let neg_tol = -&tol_q;
    if let Some(i) = m.data.iter().position(|q| *q < neg_tol) {
        return Err(RepairError::Negative {
            row: i / k,
            col: i % k,
            value: f64_nearest(&m.data[i]),
            tolerance: tol,
        });
    }
    let clamped = clamp(m);
    let one = Q::from(1u32);
    let mut max_dev = 0.0f64;
    for (u, s) in m.row_sums().iter().enumerate() {
        let dev = if *s > one { s - &one } else { &one - s };
        let csum: Q = clamped.row(u).iter().sum();
        if dev > tol_q || csum == 0u32 {
            return Err(RepairError::RowSum {
                row: u,
                sum: f64_nearest(s),
                tolerance: tol,
            });
        }
        max_dev = max_dev.max(crate::exact::f64_up(&dev));
    }
    let f: Vec<f64> = clamped.data.iter().map(f64_nearest).collect();
    let zero_pairs = crate::lp::model::zero_pairs(x.space);
    let rep = crate::lp::repair::repair_matrix(
        x.space,
        &f,
        k,
        &zero_pairs,
        x.epsilon,
        x.within,
        opts.max_prec,
    )
    .ok_or(RepairError::Failed)?;
    // The probability mass moved, per row (H: clamped input normalized).
    let change = (0..n)
        .into_par_iter()
        .map(|u| {
            let row = &f[u * k..(u + 1) * k];
            let s: f64 = row.iter().sum();
            let moved: f64 = row
                .iter()
                .zip(rep.matrix.row(u))
                .map(|(h, p)| (f64_nearest(p) - h / s).abs())
                .sum();
            moved / 2.0
        })
        .reduce(|| 0.0, f64::max);
    if change > tol {
        return Err(RepairError::TooFar {
            change,
            t: rep.t,
            tolerance: tol,
        });
    }
    Ok(ExternalRepair {
        loss_before: loss_max(x, &clamped, opts.max_prec),
        loss_after: loss_max(x, &rep.matrix, opts.max_prec),
        matrix: rep.matrix,
        t: rep.t,
        max_row_deviation: max_dev,
        change,
    })
}

/// The unit of a space's distances for messages: `km` for a haversine space with the
/// default radius, else empty (the coordinates' or table's own unit).
pub fn distance_unit(space: &Space) -> &'static str {
    if space.kind() == MetricKind::Haversine && *space.radius() == crate::metric::default_radius() {
        "km"
    } else {
        ""
    }
}

/// What `mdp repair` starts from: the `mdp/1` document to write once its matrix is
/// replaced (`doc`), the file as the auditor reads it with negative entries set to 0
/// (`file`: the claim, the space, the outputs; the repair decides whether the negatives
/// are rounding-level) and the raw matrix (`raw`).
pub struct ToRepair {
    pub doc: Value,
    pub file: MechanismFile,
    pub raw: Matrix,
}

impl ToRepair {
    /// An `mdp/1` document (parsed JSON): its matrix read as it is; `epsilon` replaces the
    /// file's claim; certificates are dropped (they described the old matrix).
    pub fn from_document(
        mut v: Value,
        epsilon: Option<&Q>,
        limits: &Limits,
    ) -> Result<ToRepair, InputError> {
        let mv = v
            .get("matrix")
            .ok_or_else(|| input_error("matrix", "missing"))?;
        let raw = io::number_matrix(mv, "matrix", None, None, limits, &|_| None)?;
        if let Some(e) = epsilon {
            v["epsilon"] = io::number_value(e);
        }
        if let Some(o) = v.as_object_mut() {
            o.remove("certificate");
        }
        let mut lenient = v.clone();
        lenient["matrix"] = rows_value(&clamp(&raw));
        let file = io::mechanism_from_value(&lenient, limits)?;
        Ok(ToRepair { doc: v, file, raw })
    }

    /// A raw matrix on `space` claimed at ε (`opts`, as `mdp import` reads one; `name`
    /// labels its errors), with the producer's `meta`. The document is built on a stand-in
    /// with negative entries set to 0 (shapes are checked there).
    pub fn from_matrix(
        raw: Matrix,
        space: &Space,
        opts: &ImportOptions,
        meta: Value,
        name: &str,
        limits: &Limits,
    ) -> Result<ToRepair, InputError> {
        // `document` makes the (ε, metric) claim of `opts` itself (`file_claim`).
        let doc = document(&clamp(&raw), space, opts, meta, name)?;
        let file = io::mechanism_from_value(&doc, limits)?;
        Ok(ToRepair { doc, file, raw })
    }

    /// The claim and the raw matrix as [`repair_external`] takes them.
    pub fn external(&self) -> External<'_> {
        External {
            space: &self.file.space,
            matrix: &self.raw,
            outputs: &self.file.outputs,
            cost: self.file.cost.as_ref(),
            epsilon: &self.file.epsilon,
            within: self.file.within.as_ref(),
        }
    }

    /// The document with the repaired matrix and `meta.repair` (the mix, the tolerance, the
    /// largest row deviation and change, the losses before and after).
    pub fn repaired_document(mut self, rep: &ExternalRepair, tolerance: f64) -> Value {
        self.doc["matrix"] = rows_value(&rep.matrix);
        let repair_meta = json!({
            "uniform_mix": rep.t,
            "tolerance": tolerance,
            "max_row_deviation": rep.max_row_deviation,
            "change": rep.change,
            "loss_before": rep.loss_before,
            "loss_after": rep.loss_after,
        });
        match self.doc.get_mut("meta").and_then(Value::as_object_mut) {
            Some(m) => {
                m.insert("repair".into(), repair_meta);
            }
            None => self.doc["meta"] = json!({"repair": repair_meta}),
        }
        self.doc
    }
}

/// The matrix with negative entries set to 0.
fn clamp(m: &Matrix) -> Matrix {
    let zero = Q::from(0u32);
    Matrix::new(
        m.rows,
        m.cols,
        m.data
            .iter()
            .map(|q| if *q < 0u32 { zero.clone() } else { q.clone() })
            .collect(),
    )
}

/// A matrix as JSON rows of exact numbers.
fn rows_value(m: &Matrix) -> Value {
    Value::Array(
        (0..m.rows)
            .map(|r| Value::Array(m.row(r).iter().map(io::number_value).collect()))
            .collect(),
    )
}
