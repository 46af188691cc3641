//! The `mdp/1` mechanism file format: reading (with exact numbers and path-named errors)
//! and writing. `spec/mechanism-format.md` is the authoritative contract.

pub mod container;
pub mod lp_dual;
pub mod npy;
pub mod space;

use crate::exact::{bits, format_rational, parse_rational, Q};
use crate::mechanism::{Matrix, Outputs};
use crate::metric::{MetricKind, Space};
use serde_json::{Map, Value};
use std::io::Read;

pub use crate::error::{input_error, InputError};

/// Resource limits a hostile file cannot exceed.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Largest accepted file, in bytes.
    pub max_bytes: u64,
    /// Largest accepted number of matrix entries n·K (also bounds explicit tables).
    pub max_entries: u64,
    /// Largest total size, in bits of numerators and denominators, of the exact numbers
    /// of one matrix (16M entries of `1e-999` would otherwise need 13 GB).
    pub max_bits: u64,
    /// Largest size in bits of one exact number: a matrix entry as written, and (checked by
    /// the audit, [`crate::audit::Options::max_number_bits`]) an exactly row-normalized
    /// entry. Exact comparisons, sums and logarithms cost superlinearly in this size, so
    /// the file-wide `max_bits` alone does not bound the time (fuzz finding F1).
    pub max_number_bits: u64,
}

/// Default of [`Limits::max_number_bits`]: 2^16 bits (≈ 19 700 decimal digits), far above
/// what f64-derived or decimal entries need; the exponential mechanism's exact entries
/// e^{-εd/2} reach it at ε·d ≈ 90 000.
pub const DEFAULT_MAX_NUMBER_BITS: u64 = 1 << 16;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 256 << 20,
            max_entries: 16_000_000,
            max_bits: 1 << 33,
            max_number_bits: DEFAULT_MAX_NUMBER_BITS,
        }
    }
}

/// `certificate.lower_bound` of kind `packing` (Imola et al., Definition 2).
#[derive(Clone, Debug, PartialEq)]
pub struct PackingClaim {
    pub centers: Vec<usize>,
    pub radius: Q,
}

/// `certificate.benders`: the optimum of the file's LP lies in [lower, upper] (Qiu 2024,
/// Proposition 3.3); `lower` must be backed by the file's `lp_dual`, `upper` must bound
/// this matrix's loss.
#[derive(Clone, Debug, PartialEq)]
pub struct BendersClaim {
    pub objective: lp_dual::Bounded,
    pub lower: Q,
    pub upper: Q,
}

/// The `certificate` object.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Certificate {
    pub claimed_loss: Option<Q>,
    pub packing: Option<PackingClaim>,
    /// `lower_bound` of kind `lp_dual` (`spec/lp.md` §5).
    pub lp_dual: Option<lp_dual::LpDual>,
    /// `benders`: the bounds of a Benders decomposition (`spec/benders.md` §4).
    pub benders: Option<BendersClaim>,
}

/// A parsed `mdp/1` mechanism file.
#[derive(Clone, Debug)]
pub struct MechanismFile {
    pub epsilon: Q,
    pub space: Space,
    pub matrix: Matrix,
    pub outputs: Outputs,
    /// η of `neighbors.within`: privacy claimed only for pairs with d ≤ η.
    pub within: Option<Q>,
    pub delta: Q,
    pub quantile: Q,
    pub cost: Option<Matrix>,
    pub prior: Option<Vec<Q>>,
    pub certificate: Certificate,
    pub meta: Option<Value>,
    /// Non-fatal remarks (unknown fields, metric warnings).
    pub warnings: Vec<String>,
    /// The inputs' labels (`metric.labels`), used in witnesses and releases.
    pub labels: Option<Vec<String>>,
}

/// Read a whole file (or standard input for `-`) with a size limit.
pub fn read_source(path: &str, limits: &Limits) -> Result<Vec<u8>, InputError> {
    let mut buf = Vec::new();
    let too_big = || {
        input_error(
            "$",
            format!(
                "file larger than the limit of {} bytes (--max-bytes)",
                limits.max_bytes
            ),
        )
    };
    if path == "-" {
        std::io::stdin()
            .take(limits.max_bytes.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| input_error("$", format!("cannot read standard input: {e}")))?;
    } else {
        let f = std::fs::File::open(path)
            .map_err(|e| input_error("$", format!("cannot open {path}: {e}")))?;
        if let Ok(m) = f.metadata() {
            if m.is_dir() {
                return Err(input_error("$", format!("{path} is a directory")));
            }
            if m.len() > limits.max_bytes {
                return Err(too_big());
            }
        }
        f.take(limits.max_bytes.saturating_add(1))
            .read_to_end(&mut buf)
            .map_err(|e| input_error("$", format!("cannot read {path}: {e}")))?;
    }
    if buf.len() as u64 > limits.max_bytes {
        return Err(too_big());
    }
    Ok(buf)
}

/// Parse JSON text (numbers kept as their literal text, nesting depth limited to 128).
pub fn parse_json(bytes: &[u8]) -> Result<Value, InputError> {
    serde_json::from_slice(bytes).map_err(|e| {
        let what = match e.classify() {
            // From a slice there is no `Io` category: the bytes were read already.
            serde_json::error::Category::Eof => "truncated JSON",
            _ => "invalid JSON",
        };
        input_error("$", format!("{what}: {e}"))
    })
}

/// Parse and validate an `mdp/1` file.
pub fn read_mechanism(bytes: &[u8], limits: &Limits) -> Result<MechanismFile, InputError> {
    let v = parse_json(bytes)?;
    mechanism_from_value(&v, limits)
}

pub(crate) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Read a number (JSON number or numeric string) exactly.
pub fn number(v: &Value, path: &str) -> Result<Q, InputError> {
    match v {
        Value::Number(n) => {
            parse_rational(n.as_str()).map_err(|e| input_error(path, e.to_string()))
        }
        Value::String(s) => parse_rational(s).map_err(|e| input_error(path, e.to_string())),
        other => Err(input_error(
            path,
            format!("expected a number, found {}", type_name(other)),
        )),
    }
}

pub(crate) fn positive(v: &Value, path: &str) -> Result<Q, InputError> {
    let q = number(v, path)?;
    if q <= 0u32 {
        return Err(input_error(
            path,
            format!("must be > 0, got {}", format_rational(&q)),
        ));
    }
    Ok(q)
}

pub(crate) fn array<'a>(v: &'a Value, path: &str) -> Result<&'a Vec<Value>, InputError> {
    v.as_array()
        .ok_or_else(|| input_error(path, format!("expected an array, found {}", type_name(v))))
}

pub(crate) fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, InputError> {
    v.as_object()
        .ok_or_else(|| input_error(path, format!("expected an object, found {}", type_name(v))))
}

pub(crate) fn index(v: &Value, path: &str, bound: usize) -> Result<usize, InputError> {
    let q = number(v, path)?;
    if q < 0u32 || !q.is_integer() {
        return Err(input_error(path, "expected a non-negative integer index"));
    }
    let i = crate::exact::floor_usize(&q).ok_or_else(|| input_error(path, "index too large"))?;
    if i >= bound {
        return Err(input_error(
            path,
            format!("index {i} out of range 0..{bound}"),
        ));
    }
    Ok(i)
}

/// A matrix of numbers with the given shape (`None` = any number of rows / columns, but
/// rectangular). Entries must satisfy `check`.
pub fn number_matrix(
    v: &Value,
    path: &str,
    rows: Option<usize>,
    cols: Option<usize>,
    limits: &Limits,
    check: &(dyn Fn(&Q) -> Option<&'static str> + Sync),
) -> Result<Matrix, InputError> {
    let a = array(v, path)?;
    if a.is_empty() {
        return Err(input_error(path, "must have at least one row"));
    }
    if let Some(r) = rows {
        if a.len() != r {
            return Err(input_error(
                path,
                format!("has {} rows, expected {r}", a.len()),
            ));
        }
    }
    let first = array(&a[0], &format!("{path}[0]"))?;
    let k = cols.unwrap_or(first.len());
    if k == 0 {
        return Err(input_error(
            format!("{path}[0]"),
            "must have at least one column",
        ));
    }
    check_entries(path, a.len() as u64, k as u64, limits)?;
    // Rows are converted in parallel; the first error in row order is reported. A shared
    // budget stops conversion once the numbers' total size exceeds `max_bits`.
    use rayon::prelude::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    let used = AtomicU64::new(0);
    let rows: Vec<Result<Vec<Q>, InputError>> = a
        .par_iter()
        .enumerate()
        .map(|(i, row)| {
            let rp = format!("{path}[{i}]");
            let row = array(row, &rp)?;
            if row.len() != k {
                return Err(input_error(
                    &rp,
                    format!("has {} entries, expected {k}", row.len()),
                ));
            }
            // Counted entry by entry: a row stops as soon as the budget is exceeded.
            let out: Vec<Q> = row
                .iter()
                .enumerate()
                .map(|(j, x)| {
                    let ep = || format!("{path}[{i}][{j}]");
                    if used.load(Ordering::Relaxed) > limits.max_bits {
                        return Err(over_bits(path, limits));
                    }
                    let q = number(x, "").map_err(|e| input_error(ep(), e.message))?;
                    let b = bits(&q);
                    if b > limits.max_number_bits {
                        return Err(over_number_bits(&ep(), b, limits.max_number_bits));
                    }
                    if used.fetch_add(b, Ordering::Relaxed).saturating_add(b) > limits.max_bits {
                        return Err(over_bits(path, limits));
                    }
                    match check(&q) {
                        Some(why) => Err(input_error(ep(), format!("{why} {}", short(&q)))),
                        None => Ok(q),
                    }
                })
                .collect::<Result<_, _>>()?;
            Ok(out)
        })
        .collect();
    let mut data = Vec::with_capacity(a.len() * k);
    for r in rows {
        data.extend(r?);
    }
    Ok(Matrix::new(a.len(), k, data))
}

/// `rows × cols` exact numbers (entries, or pairwise distances the auditor keeps) within
/// `--max-entries`.
pub fn check_entries(path: &str, rows: u64, cols: u64, limits: &Limits) -> Result<(), InputError> {
    if rows.saturating_mul(cols) > limits.max_entries {
        return Err(input_error(
            path,
            format!(
                "{rows} × {cols} entries exceed the limit of {} (--max-entries)",
                limits.max_entries
            ),
        ));
    }
    Ok(())
}

/// The `--max-number-bits` error.
pub fn over_number_bits(path: &str, bits: u64, max: u64) -> InputError {
    input_error(
        path,
        format!("an exact number of {bits} bits exceeds the per-number limit of {max} bits (--max-number-bits)"),
    )
}

/// The `--max-bits` error.
pub fn over_bits(path: &str, limits: &Limits) -> InputError {
    input_error(
        path,
        format!(
            "exact numbers need more than {} bits in total (--max-bits)",
            limits.max_bits
        ),
    )
}

/// The total size of every exact number a file brings (matrix, metric, costs, prior,
/// scalars and certificates): the file-wide `max_bits` budget.
fn file_bits(f: &MechanismFile) -> u64 {
    let sum = |v: &[Q]| v.iter().map(bits).fold(0u64, u64::saturating_add);
    let mut total = sum(&f.matrix.data)
        .saturating_add(
            f.space
                .points()
                .iter()
                .map(|p| sum(p))
                .fold(0, u64::saturating_add),
        )
        .saturating_add(sum(f.space.table()))
        .saturating_add(bits(&f.epsilon) + bits(&f.delta) + bits(&f.quantile));
    // Only a haversine file brings a radius; the other kinds hold the default unused.
    if f.space.kind() == MetricKind::Haversine {
        total = total.saturating_add(bits(f.space.radius()));
    }
    if let Some(c) = &f.cost {
        total = total.saturating_add(sum(&c.data));
    }
    if let Some(p) = &f.prior {
        total = total.saturating_add(sum(p));
    }
    if let Some(w) = &f.within {
        total = total.saturating_add(bits(w));
    }
    if let Outputs::Points(p) = &f.outputs {
        total = total.saturating_add(p.iter().map(|x| sum(x)).fold(0, u64::saturating_add));
    }
    let c = &f.certificate;
    if let Some(q) = &c.claimed_loss {
        total = total.saturating_add(bits(q));
    }
    if let Some(p) = &c.packing {
        total = total.saturating_add(bits(&p.radius));
    }
    if let Some(d) = &c.lp_dual {
        total = total
            .saturating_add(bits(&d.value))
            .saturating_add(d.beta.as_deref().map_or(0, sum))
            .saturating_add(
                d.gamma
                    .iter()
                    .map(|g| bits(&g.3))
                    .fold(0, u64::saturating_add),
            );
    }
    total
}

fn short(q: &Q) -> String {
    let big = bits(q) > 200;
    let s = if big {
        String::new()
    } else {
        format_rational(q)
    };
    if big || s.len() > 30 {
        format!("{:e}", crate::exact::f64_nearest(q))
    } else {
        s
    }
}

fn non_negative(q: &Q) -> Option<&'static str> {
    (*q < 0u32).then_some("negative entry")
}

/// Parse a `metric` object (also the content of a space file).
pub fn space_from_value(v: &Value, path: &str, limits: &Limits) -> Result<Space, InputError> {
    let o = object(v, path)?;
    let kind_v = o
        .get("kind")
        .ok_or_else(|| input_error(format!("{path}.kind"), "missing"))?;
    let kind_s = kind_v.as_str().ok_or_else(|| {
        input_error(
            format!("{path}.kind"),
            format!("expected a string, found {}", type_name(kind_v)),
        )
    })?;
    let kind = MetricKind::from_name(kind_s).ok_or_else(|| {
        input_error(
            format!("{path}.kind"),
            format!("unknown metric kind {kind_s:?} (expected euclidean, manhattan, chebyshev, haversine, explicit or graph)"),
        )
    })?;
    let wrap = |e: InputError| e.within(path, ".");
    // A misspelt field ("lables", "radious") is an error, not silently ignored (issue 33).
    let allowed: &[&str] = match kind {
        MetricKind::Explicit => &["kind", "distances", "labels"],
        MetricKind::Graph => &["kind", "nodes", "edges", "labels"],
        MetricKind::Haversine => &["kind", "points", "radius", "labels"],
        _ => &["kind", "points", "labels"],
    };
    if let Some(k) = o.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(input_error(
            format!("{path}.{k}"),
            format!(
                "unknown field for a {} metric (expected {})",
                kind.name(),
                allowed.join(", ")
            ),
        ));
    }
    match kind {
        MetricKind::Explicit => {
            let dv = o
                .get("distances")
                .ok_or_else(|| input_error(format!("{path}.distances"), "missing"))?;
            let dp = format!("{path}.distances");
            let m = number_matrix(dv, &dp, None, None, limits, &|q| {
                (*q < 0u32).then_some("negative distance")
            })?;
            if m.rows != m.cols {
                return Err(input_error(
                    &dp,
                    format!("is {} × {}, expected a square matrix", m.rows, m.cols),
                ));
            }
            let rows: Vec<Vec<Q>> = m.data.chunks(m.cols).map(|r| r.to_vec()).collect();
            Space::from_table(rows).map_err(wrap)
        }
        MetricKind::Graph => {
            let nv = o
                .get("nodes")
                .ok_or_else(|| input_error(format!("{path}.nodes"), "missing"))?;
            let n = index(nv, &format!("{path}.nodes"), usize::MAX)?;
            check_entries(&format!("{path}.nodes"), n as u64, n as u64, limits)?;
            let ev = o
                .get("edges")
                .ok_or_else(|| input_error(format!("{path}.edges"), "missing"))?;
            let ea = array(ev, &format!("{path}.edges"))?;
            let mut edges = Vec::with_capacity(ea.len());
            for (i, e) in ea.iter().enumerate() {
                let ep = format!("{path}.edges[{i}]");
                let t = array(e, &ep)?;
                if t.len() != 3 {
                    return Err(input_error(&ep, "expected [u, v, w]"));
                }
                let u = index(&t[0], &format!("{ep}[0]"), n)?;
                let w = index(&t[1], &format!("{ep}[1]"), n)?;
                let wt = positive(&t[2], &format!("{ep}[2]"))?;
                edges.push((u, w, wt));
            }
            Space::from_graph_within(n, &edges, limits.max_bits).map_err(wrap)
        }
        _ => {
            let pv = o
                .get("points")
                .ok_or_else(|| input_error(format!("{path}.points"), "missing"))?;
            let pts = point_list(pv, &format!("{path}.points"), limits)?;
            // Only a haversine metric may carry a radius (the allowed fields above).
            let radius = o
                .get("radius")
                .map(|r| positive(r, &format!("{path}.radius")))
                .transpose()?;
            // The auditor keeps n² distance enclosures: bounded like a table.
            check_entries(
                &format!("{path}.points"),
                pts.len() as u64,
                pts.len() as u64,
                limits,
            )?;
            Space::from_points(kind, pts, radius).map_err(wrap)
        }
    }
}

fn point_list(v: &Value, path: &str, limits: &Limits) -> Result<Vec<Vec<Q>>, InputError> {
    let m = number_matrix(v, path, None, None, limits, &|_| None)?;
    Ok(m.data.chunks(m.cols).map(|r| r.to_vec()).collect())
}

pub(crate) const TOP_FIELDS: [&str; 11] = [
    "format",
    "epsilon",
    "metric",
    "matrix",
    "outputs",
    "neighbors",
    "delta",
    "quantile",
    "loss",
    "certificate",
    "meta",
];

/// Validate a parsed JSON value as an `mdp/1` mechanism file.
pub fn mechanism_from_value(v: &Value, limits: &Limits) -> Result<MechanismFile, InputError> {
    mechanism_from_parts(v, None, None, limits)
}

/// [`mechanism_from_value`] for a document whose `matrix` is given already exact (the
/// Python package's float64 arrays: each entry the dyadic rational it holds), instead of
/// as JSON numbers to parse. `v` must not carry a `matrix`; `matrix` gets every check the
/// JSON one does (its shape against the metric and outputs, the entry limit, entries ≥ 0,
/// no zero row, each entry's and the whole file's bits).
pub fn mechanism_with_matrix(
    v: &Value,
    matrix: Matrix,
    limits: &Limits,
) -> Result<MechanismFile, InputError> {
    if v.get("matrix").is_some() {
        return Err(input_error(
            "matrix",
            "given twice (in the document and as exact numbers)",
        ));
    }
    mechanism_from_parts(v, Some(matrix), None, limits)
}

/// [`mechanism_with_matrix`] on a space already in memory (a library or Python caller's,
/// with its labels): the document has no `metric`; the space is not written as JSON and
/// read back (n² numbers each way for a table: 6 of the 7 s of a Python `is_private` at
/// n = 1 000 before issue 53).
pub fn mechanism_on_space(
    v: &Value,
    space: Space,
    labels: Option<Vec<String>>,
    matrix: Matrix,
    limits: &Limits,
) -> Result<MechanismFile, InputError> {
    if v.get("matrix").is_some() || v.get("metric").is_some() {
        return Err(input_error(
            "metric",
            "given twice (in the document and as a space)",
        ));
    }
    if labels.as_ref().is_some_and(|l| l.len() != space.n()) {
        return Err(input_error("metric.labels", "one label per input expected"));
    }
    mechanism_from_parts(v, Some(matrix), Some((space, labels)), limits)
}

/// A given exact matrix checked as [`number_matrix`] checks a JSON one with `rows`, `cols`
/// and [`non_negative`].
fn checked_matrix(
    m: Matrix,
    rows: usize,
    cols: usize,
    limits: &Limits,
) -> Result<Matrix, InputError> {
    if m.rows != rows {
        return Err(input_error(
            "matrix",
            format!(
                "has {} rows, expected {rows} (one row per input of the metric)",
                m.rows
            ),
        ));
    }
    if m.cols != cols {
        return Err(input_error(
            "matrix[0]",
            format!("has {} entries, expected {cols}", m.cols),
        ));
    }
    check_entries("matrix", rows as u64, cols as u64, limits)?;
    let mut used = 0u64;
    for (i, q) in m.data.iter().enumerate() {
        let path = || format!("matrix[{}][{}]", i / cols, i % cols);
        let b = bits(q);
        if b > limits.max_number_bits {
            return Err(over_number_bits(&path(), b, limits.max_number_bits));
        }
        used = used.saturating_add(b);
        if used > limits.max_bits {
            return Err(over_bits("matrix", limits));
        }
        if let Some(why) = non_negative(q) {
            return Err(input_error(path(), format!("{why} {}", short(q))));
        }
    }
    Ok(m)
}

fn mechanism_from_parts(
    v: &Value,
    given: Option<Matrix>,
    given_space: Option<(Space, Option<Vec<String>>)>,
    limits: &Limits,
) -> Result<MechanismFile, InputError> {
    let o = object(v, "$")?;
    let mut warnings = Vec::new();
    if let Some(f) = o.get("format") {
        match f.as_str() {
            Some("mdp/1") => {}
            Some(other) => {
                return Err(input_error(
                    "format",
                    format!("unknown format {other:?} (expected \"mdp/1\")"),
                ))
            }
            None => {
                return Err(input_error(
                    "format",
                    format!("expected a string, found {}", type_name(f)),
                ))
            }
        }
    }
    for k in o.keys() {
        if !TOP_FIELDS.contains(&k.as_str()) {
            warnings.push(format!("{k}: unknown field ignored"));
        }
    }
    let epsilon = positive(
        o.get("epsilon")
            .ok_or_else(|| input_error("epsilon", "missing"))?,
        "epsilon",
    )?;
    let (space, given_labels) = match given_space {
        Some((s, l)) => (s, Some(l)),
        None => (
            space_from_value(
                o.get("metric")
                    .ok_or_else(|| input_error("metric", "missing"))?,
                "metric",
                limits,
            )?,
            None,
        ),
    };
    let n = space.n();
    let outputs = match o.get("outputs") {
        None | Some(Value::Null) => Outputs::Inputs,
        Some(ov) => outputs_from_value(ov, n, limits)?,
    };
    if let Outputs::Points(p) = &outputs {
        let sites = (n + p.len()) as u64;
        check_entries("outputs.points", sites, sites, limits)?;
    }
    let k = match outputs {
        Outputs::Inputs => n,
        ref other => other.len(n),
    };
    let matrix = match given {
        Some(m) => checked_matrix(m, n, k, limits)?,
        None => json_matrix(o.get("matrix"), n, k, limits)?,
    };
    for r in 0..n {
        if matrix.row(r).iter().all(|x| *x == 0u32) {
            return Err(input_error(format!("matrix[{r}]"), "row sum is 0"));
        }
    }
    let within = within_of(o)?;
    let delta = match o.get("delta") {
        None => Q::from_unsigneds(1u32, 1000u32),
        Some(d) => {
            let q = number(d, "delta")?;
            if q < 0u32 || q >= 1u32 {
                return Err(input_error("delta", "must be in [0, 1)"));
            }
            q
        }
    };
    let quantile = match o.get("quantile") {
        None => Q::from_unsigneds(95u32, 100u32),
        Some(d) => {
            let q = number(d, "quantile")?;
            if q < 0u32 || q > 1u32 {
                return Err(input_error("quantile", "must be in [0, 1]"));
            }
            q
        }
    };
    let (mut cost, mut prior) = (None, None);
    if let Some(lv) = o.get("loss") {
        let lo = object(lv, "loss")?;
        if let Some(c) = lo.get("cost") {
            cost = Some(number_matrix(
                c,
                "loss.cost",
                Some(n),
                Some(k),
                limits,
                &|q| (*q < 0u32).then_some("negative cost"),
            )?);
        }
        if let Some(p) = lo.get("prior") {
            prior = Some(prior_from_value(p, n)?);
        }
        for key in lo.keys() {
            if key != "cost" && key != "prior" {
                warnings.push(format!("loss.{key}: unknown field ignored"));
            }
        }
    }
    if matches!(outputs, Outputs::Labels(_)) && cost.is_none() {
        warnings.push("outputs.labels without loss.cost: losses are not reported".into());
    }
    let certificate = match o.get("certificate") {
        None | Some(Value::Null) => Certificate::default(),
        Some(cv) => certificate_from_value(cv, n, matrix.cols)?,
    };
    warnings.extend(space.warnings.iter().cloned());
    let file = MechanismFile {
        epsilon,
        space,
        matrix,
        outputs,
        within,
        delta,
        quantile,
        cost,
        prior,
        certificate,
        meta: o.get("meta").cloned(),
        warnings,
        labels: match given_labels {
            Some(l) => l,
            None => metric_labels(o.get("metric").unwrap_or(&Value::Null), "metric", n)?,
        },
    };
    if file_bits(&file) > limits.max_bits {
        return Err(over_bits("$", limits));
    }
    Ok(file)
}

/// `neighbors.within` (η > 0) of a document, if it has one.
pub(crate) fn within_of(o: &Map<String, Value>) -> Result<Option<Q>, InputError> {
    match o.get("neighbors") {
        None | Some(Value::Null) => Ok(None),
        Some(nv) => {
            let no = object(nv, "neighbors")?;
            Ok(Some(positive(
                no.get("within")
                    .ok_or_else(|| input_error("neighbors.within", "missing"))?,
                "neighbors.within",
            )?))
        }
    }
}

/// The document's `matrix` as JSON numbers, n rows of k entries ≥ 0.
fn json_matrix(
    mv: Option<&Value>,
    n: usize,
    k: usize,
    limits: &Limits,
) -> Result<Matrix, InputError> {
    let mv = mv.ok_or_else(|| input_error("matrix", "missing"))?;
    number_matrix(mv, "matrix", Some(n), Some(k), limits, &non_negative).map_err(|e| {
        if e.message.starts_with("has ") && e.path == "matrix" {
            input_error(
                "matrix",
                format!("{} (one row per input of the metric)", e.message),
            )
        } else {
            e
        }
    })
}

pub(crate) fn outputs_from_value(
    v: &Value,
    n: usize,
    limits: &Limits,
) -> Result<Outputs, InputError> {
    let o = object(v, "outputs")?;
    if o.len() != 1 {
        return Err(input_error(
            "outputs",
            "expected exactly one of of_inputs, points, labels",
        ));
    }
    let (key, val) = o.iter().next().expect("one entry");
    let path = format!("outputs.{key}");
    match key.as_str() {
        "of_inputs" => {
            let a = array(val, &path)?;
            if a.is_empty() {
                return Err(input_error(&path, "must list at least one input"));
            }
            let v = a
                .iter()
                .enumerate()
                .map(|(i, x)| index(x, &format!("{path}[{i}]"), n))
                .collect::<Result<_, _>>()?;
            Ok(Outputs::OfInputs(v))
        }
        "points" => Ok(Outputs::Points(point_list(val, &path, limits)?)),
        "labels" => {
            let a = array(val, &path)?;
            if a.is_empty() {
                return Err(input_error(&path, "must list at least one label"));
            }
            let v = a
                .iter()
                .enumerate()
                .map(|(i, x)| match x {
                    Value::String(s) => Ok(s.clone()),
                    Value::Number(num) => Ok(num.as_str().to_string()),
                    other => Err(input_error(
                        format!("{path}[{i}]"),
                        format!("expected a string label, found {}", type_name(other)),
                    )),
                })
                .collect::<Result<_, _>>()?;
            Ok(Outputs::Labels(v))
        }
        other => Err(input_error(
            &path,
            format!("unknown outputs kind {other:?} (expected of_inputs, points or labels)"),
        )),
    }
}

/// `loss.prior`: n weights ≥ 0, not all 0 (the JSON form and the container read it alike).
pub(crate) fn prior_from_value(p: &Value, n: usize) -> Result<Vec<Q>, InputError> {
    let pa = array(p, "loss.prior")?;
    if pa.len() != n {
        return Err(input_error(
            "loss.prior",
            format!("has {} weights, expected {n}", pa.len()),
        ));
    }
    let mut w = Vec::with_capacity(n);
    for (i, x) in pa.iter().enumerate() {
        let q = number(x, &format!("loss.prior[{i}]"))?;
        if q < 0u32 {
            return Err(input_error(format!("loss.prior[{i}]"), "negative weight"));
        }
        w.push(q);
    }
    if w.iter().all(|x| *x == 0u32) {
        return Err(input_error("loss.prior", "weights sum to 0"));
    }
    Ok(w)
}

pub(crate) fn certificate_from_value(
    v: &Value,
    n: usize,
    k: usize,
) -> Result<Certificate, InputError> {
    let o = object(v, "certificate")?;
    let mut c = Certificate::default();
    for (key, val) in o {
        let path = format!("certificate.{key}");
        match key.as_str() {
            "claimed_loss" => {
                let q = number(val, &path)?;
                if q < 0u32 {
                    return Err(input_error(&path, "a loss is ≥ 0"));
                }
                c.claimed_loss = Some(q);
            }
            "lower_bound" => {
                let lo = object(val, &path)?;
                let kind = lo.get("kind").and_then(Value::as_str).ok_or_else(|| {
                    input_error(format!("{path}.kind"), "missing or not a string")
                })?;
                match kind {
                    "packing" => {
                        let ca = array(
                            lo.get("centers")
                                .ok_or_else(|| input_error(format!("{path}.centers"), "missing"))?,
                            &format!("{path}.centers"),
                        )?;
                        if ca.is_empty() {
                            return Err(input_error(
                                format!("{path}.centers"),
                                "must list at least one center",
                            ));
                        }
                        let centers = ca
                            .iter()
                            .enumerate()
                            .map(|(i, x)| index(x, &format!("{path}.centers[{i}]"), n))
                            .collect::<Result<Vec<_>, _>>()?;
                        let radius = positive(
                            lo.get("radius")
                                .ok_or_else(|| input_error(format!("{path}.radius"), "missing"))?,
                            &format!("{path}.radius"),
                        )?;
                        c.packing = Some(PackingClaim { centers, radius });
                    }
                    "lp_dual" => c.lp_dual = Some(lp_dual::parse(val, n, k)?),
                    other => {
                        return Err(input_error(
                            format!("{path}.kind"),
                            format!(
                                "unknown lower bound kind {other:?} (expected packing or lp_dual)"
                            ),
                        ))
                    }
                }
            }
            "benders" => c.benders = Some(benders_claim(val, &path)?),
            other => return Err(input_error(&path, format!("unknown certificate {other:?}"))),
        }
    }
    Ok(c)
}

fn benders_claim(v: &Value, path: &str) -> Result<BendersClaim, InputError> {
    let o = v
        .as_object()
        .ok_or_else(|| input_error(path, "expected an object"))?;
    for key in o.keys() {
        if !["objective", "lower", "upper"].contains(&key.as_str()) {
            return Err(input_error(
                format!("{path}.{key}"),
                "unknown field of a benders certificate",
            ));
        }
    }
    let get = |key: &str| {
        o.get(key)
            .ok_or_else(|| input_error(format!("{path}.{key}"), "missing"))
    };
    Ok(BendersClaim {
        objective: lp_dual::objective(get("objective")?, &format!("{path}.objective"))?,
        lower: number(get("lower")?, &format!("{path}.lower"))?,
        upper: number(get("upper")?, &format!("{path}.upper"))?,
    })
}

/// The inputs' labels of a metric object (`labels`: n non-empty, unique strings), if any.
pub fn metric_labels(v: &Value, path: &str, n: usize) -> Result<Option<Vec<String>>, InputError> {
    let Some(lv) = v.get("labels") else {
        return Ok(None);
    };
    let lp = if path.is_empty() {
        "labels".to_string()
    } else {
        format!("{path}.labels")
    };
    let a = array(lv, &lp)?;
    if a.len() != n {
        return Err(input_error(
            &lp,
            format!("has {} labels, the metric has {n} points", a.len()),
        ));
    }
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    for (i, x) in a.iter().enumerate() {
        let ip = format!("{lp}[{i}]");
        let s = x.as_str().ok_or_else(|| {
            input_error(
                &ip,
                format!("expected a string label, found {}", type_name(x)),
            )
        })?;
        if s.is_empty() || s.trim() != s || s.chars().any(char::is_control) {
            return Err(input_error(
                &ip,
                "a label must be non-empty, without leading or trailing spaces or control characters",
            ));
        }
        if !seen.insert(s) {
            return Err(input_error(&ip, format!("label {s:?} is not unique")));
        }
        out.push(s.to_string());
    }
    Ok(Some(out))
}

/// Write the inputs' labels into an `mdp/1` document's metric (`metric.labels`).
pub fn set_labels(doc: &mut Value, labels: &[String]) {
    if let Some(m) = doc.get_mut("metric").and_then(Value::as_object_mut) {
        m.insert(
            "labels".into(),
            Value::Array(labels.iter().map(|l| Value::String(l.clone())).collect()),
        );
    }
}

/// Write a number: exact rationals as strings that read back exactly.
pub fn q_value(q: &Q) -> Value {
    Value::String(format_rational(q))
}

/// Write an `f64` exactly (shortest round-trip decimal) as a JSON number.
pub fn f64_value(x: f64) -> Value {
    let s = if x != 0.0 && (x.abs() < 1e-5 || x.abs() >= 1e16) {
        format!("{x:e}")
    } else {
        format!("{x}")
    };
    Value::Number(s.parse().expect("finite float literal"))
}

/// A metric object for writing.
pub fn space_to_value(s: &Space) -> Value {
    let mut o = Map::new();
    o.insert("kind".into(), Value::String(s.kind().name().into()));
    match s.kind() {
        MetricKind::Graph if s.roads().is_some() => {
            let r = s.roads().expect("checked");
            o.insert("nodes".into(), Value::from(s.n() as u64));
            let edges = r
                .edges()
                .iter()
                .map(|(a, b, w)| Value::Array(vec![Value::from(*a), Value::from(*b), q_value(w)]))
                .collect();
            o.insert("edges".into(), Value::Array(edges));
        }
        MetricKind::Explicit | MetricKind::Graph => {
            // Graphs are written as their exact distance table (lossless).
            o.insert("kind".into(), Value::String("explicit".into()));
            let n = s.n();
            let rows = (0..n)
                .map(|i| Value::Array(s.table()[i * n..(i + 1) * n].iter().map(q_value).collect()))
                .collect();
            o.insert("distances".into(), Value::Array(rows));
        }
        _ => {
            let pts = s.points()[..s.n()]
                .iter()
                .map(|p| Value::Array(p.iter().map(number_value).collect()))
                .collect();
            o.insert("points".into(), Value::Array(pts));
            if s.kind() == MetricKind::Haversine {
                o.insert("radius".into(), number_value(s.radius()));
            }
        }
    }
    Value::Object(o)
}

/// A number as a JSON number when it is a terminating decimal, else as a `"p/q"` string.
pub fn number_value(q: &Q) -> Value {
    let s = format_rational(q);
    if s.contains('/') {
        Value::String(s)
    } else {
        Value::Number(s.parse().expect("decimal literal"))
    }
}

/// Assemble an `mdp/1` document for a square mechanism on `space`.
pub fn mechanism_to_value(epsilon: &Q, space: &Space, matrix: &Matrix, meta: Value) -> Value {
    let mut o = Map::new();
    o.insert("format".into(), Value::String("mdp/1".into()));
    o.insert("epsilon".into(), number_value(epsilon));
    o.insert("metric".into(), space_to_value(space));
    o.insert("matrix".into(), matrix_value(matrix));
    o.insert("meta".into(), meta);
    Value::Object(o)
}

/// A matrix as the format's `matrix`: rows of exact numbers ([`number_value`]).
pub fn matrix_value(matrix: &Matrix) -> Value {
    Value::Array(
        (0..matrix.rows)
            .map(|r| Value::Array(matrix.row(r).iter().map(number_value).collect()))
            .collect(),
    )
}

/// A space from parsed JSON: a metric object, or an `mdp/1` document (its `metric`).
pub fn space_from_json(v: &Value, limits: &Limits) -> Result<Space, InputError> {
    space_and_labels_from_json(v, limits).map(|(s, _)| s)
}

/// [`space_from_json`] with the metric's labels, if it has them.
pub fn space_and_labels_from_json(
    v: &Value,
    limits: &Limits,
) -> Result<(Space, Option<Vec<String>>), InputError> {
    let (m, path) = match v.get("metric") {
        Some(m) => (m, "metric"),
        None => (v, "$"),
    };
    let space = space_from_value(m, path, limits)?;
    let labels = metric_labels(m, if path == "$" { "" } else { path }, space.n())?;
    Ok((space, labels))
}
