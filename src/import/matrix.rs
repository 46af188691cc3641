//! Mechanism matrices produced elsewhere (numpy `.npy` float64/float32, a JSON array of rows,
//! a CSV of numbers), read exactly and turned into `mdp/1` documents
//! (`spec/mechanism-format.md`, "Importing matrices").

use super::scale::file_claim;
use crate::exact::{f64_nearest, parse_rational, q_from_f64, Q};
use crate::io::{self, input_error, InputError, Limits};
use crate::mechanism::Matrix;
use crate::metric::Space;
use mdp_audit::io::space::{csv_records, utf8};
use rayon::prelude::*;
use serde_json::{json, Value};

/// The file formats of an external matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixFormat {
    /// numpy `.npy`: a 2-D float64 or float32 little-endian array, C or Fortran order.
    Npy,
    /// A JSON array of rows (arrays of numbers).
    Json,
    /// CSV: one row per line, every field a number; an optional header row (no number in
    /// it) is skipped.
    Csv,
}

impl MatrixFormat {
    /// The format of `path`: by extension (`.npy`, `.json`, `.csv`), else by content (the
    /// numpy magic string, a leading `[`, anything else CSV).
    pub fn detect(path: &str, bytes: &[u8]) -> MatrixFormat {
        let lower = path.to_ascii_lowercase();
        if lower.ends_with(".npy") || bytes.starts_with(NPY_MAGIC) {
            MatrixFormat::Npy
        } else if lower.ends_with(".json")
            || bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
        {
            MatrixFormat::Json
        } else {
            MatrixFormat::Csv
        }
    }
}

/// A test applied to every entry read (`Some(problem)` rejects it; the reader names the
/// entry).
pub type EntryCheck<'a> = &'a (dyn Fn(&Q) -> Option<String> + Sync);

/// No test.
pub fn any_entry(_: &Q) -> Option<String> {
    None
}

/// The check of [`import_matrix`]: entries are probabilities (≥ 0).
pub fn non_negative_entry(q: &Q) -> Option<String> {
    (*q < 0u32).then(|| {
        format!(
            "negative entry {:e} (for a matrix private up to rounding, use `mdp repair`)",
            f64_nearest(q)
        )
    })
}

/// Read a matrix file (format by [`MatrixFormat::detect`]); `check` tests every entry.
pub fn read_matrix(path: &str, limits: &Limits, check: EntryCheck) -> Result<Matrix, InputError> {
    let bytes = io::read_source(path, limits).map_err(|e| {
        if e.path == "$" {
            input_error(path, e.message)
        } else {
            e
        }
    })?;
    match MatrixFormat::detect(path, &bytes) {
        MatrixFormat::Npy => matrix_from_npy(&bytes, path, limits, check),
        MatrixFormat::Json => matrix_from_json(&bytes, path, limits, check),
        MatrixFormat::Csv => matrix_from_csv(&bytes, path, limits, check),
    }
}

fn check_entries(limits: &Limits, name: &str, rows: usize, cols: usize) -> Result<(), InputError> {
    if rows == 0 || cols == 0 {
        return Err(input_error(name, format!("empty matrix ({rows} × {cols})")));
    }
    io::check_entries(name, rows as u64, cols as u64, limits)
}

fn bits_budget(m: &Matrix, name: &str, limits: &Limits) -> Result<(), InputError> {
    let total: u64 = m.data.par_iter().map(crate::exact::bits).sum();
    if total > limits.max_bits {
        return Err(io::over_bits(name, limits));
    }
    Ok(())
}

/// A JSON array of n arrays of K numbers (exact).
pub fn matrix_from_json(
    bytes: &[u8],
    name: &str,
    limits: &Limits,
    check: EntryCheck,
) -> Result<Matrix, InputError> {
    let v = io::parse_json(bytes).map_err(|e| input_error(name, e.message))?;
    if v.get("matrix").is_some() {
        return Err(input_error(
            name,
            "expected a JSON array of rows; this looks like an mdp/1 file (audit it with mdp-audit, or use `mdp repair FILE`)",
        ));
    }
    let m = io::number_matrix(&v, name, None, None, limits, &|_| None)?;
    for (i, q) in m.data.iter().enumerate() {
        if let Some(why) = check(q) {
            return Err(input_error(
                format!("{name}[{}][{}]", i / m.cols, i % m.cols),
                why,
            ));
        }
    }
    Ok(m)
}

/// A CSV of numbers: every record one row; a first record without any number is a header
/// and skipped. Entries are named `name:row L, column C` (L the line, C 1-based).
pub fn matrix_from_csv(
    bytes: &[u8],
    name: &str,
    limits: &Limits,
    check: EntryCheck,
) -> Result<Matrix, InputError> {
    let mut records = csv_records(utf8(bytes, name)?, name)?;
    if records
        .first()
        .is_some_and(|r| r.fields.iter().all(|f| parse_rational(f).is_err()))
    {
        records.remove(0);
    }
    let (rows, cols) = (records.len(), records.first().map_or(0, |r| r.fields.len()));
    check_entries(limits, name, rows, cols)?;
    let mut data = Vec::with_capacity(rows * cols);
    for r in &records {
        if r.fields.len() != cols {
            return Err(input_error(
                format!("{name}:row {}", r.line),
                format!("has {} fields, the first row has {cols}", r.fields.len()),
            ));
        }
        for (c, f) in r.fields.iter().enumerate() {
            let at = || format!("{name}:row {}, column {}", r.line, c + 1);
            let q = parse_rational(f).map_err(|e| input_error(at(), e.to_string()))?;
            if let Some(why) = check(&q) {
                return Err(input_error(at(), why));
            }
            data.push(q);
        }
    }
    let m = Matrix::new(rows, cols, data);
    bits_budget(&m, name, limits)?;
    Ok(m)
}

const NPY_MAGIC: &[u8] = b"\x93NUMPY";

/// The largest `.npy` header read: numpy's own default limit (`max_header_size`); a plain
/// float array's header is under 128 bytes. A longer header is refused before any parser
/// sees it.
const NPY_MAX_HEADER: usize = 10_000;
/// The most opening brackets accepted in a `.npy` header, counted everywhere (in strings
/// too): a plain array's has 2 (`{` and the shape's `(`). The Python-literal parser
/// recurses on each and re-parses on backtracking, so this bounds its work.
const NPY_MAX_BRACKETS: usize = 4;

/// The checks on an `.npy` header made before `npyz` parses it, for what that crate leaves
/// to its caller: the header's length is bounded by the file and [`NPY_MAX_HEADER`] (npyz
/// allocates the length the file states), its brackets by [`NPY_MAX_BRACKETS`] (the
/// Python-literal parser recurses and backtracks), no key may repeat (npyz keeps the last
/// of a repeated key), and the shape's product must fit in `u64` (npyz multiplies
/// unchecked). Returns the shape, parsed by `py_literal`, the parser npyz uses.
fn npy_shape_guard(bytes: &[u8]) -> Result<Vec<u64>, String> {
    if !bytes.starts_with(NPY_MAGIC) || bytes.len() < 10 {
        return Err("not a numpy .npy file (no \\x93NUMPY magic string)".into());
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(format!("unsupported .npy format version {v}")),
    };
    if len > NPY_MAX_HEADER {
        return Err(format!(
            ".npy header of {len} bytes (at most {NPY_MAX_HEADER})"
        ));
    }
    let text = bytes
        .get(start..start + len)
        .ok_or("truncated .npy header")?;
    let text = std::str::from_utf8(text).map_err(|_| ".npy header is not text")?;
    let brackets = text
        .bytes()
        .filter(|c| matches!(c, b'(' | b'[' | b'{'))
        .count();
    if brackets > NPY_MAX_BRACKETS {
        return Err(format!(
            ".npy header with {brackets} brackets (a plain array's has 2; structured dtypes are not supported)"
        ));
    }
    let dict: py_literal::Value = text
        .trim_end()
        .parse()
        .map_err(|_| ".npy header: not a Python dict literal")?;
    let py_literal::Value::Dict(entries) = dict else {
        return Err(".npy header: not a Python dict literal".into());
    };
    for (i, (k, _)) in entries.iter().enumerate() {
        if entries[..i].iter().any(|(e, _)| e == k) {
            return Err(format!(".npy header: the key {k} is repeated"));
        }
    }
    let shape = entries
        .iter()
        .find(|(k, _)| matches!(k, py_literal::Value::String(s) if s == "shape"))
        .map(|(_, v)| v)
        .ok_or(".npy header: descr, fortran_order and shape are required")?;
    let (py_literal::Value::Tuple(dims) | py_literal::Value::List(dims)) = shape else {
        return Err(".npy header: the shape is not a tuple".into());
    };
    let dims: Vec<u64> = dims
        .iter()
        .map(|d| match d {
            py_literal::Value::Integer(i) => u64::try_from(i).ok(),
            _ => None,
        })
        .collect::<Option<_>>()
        .ok_or(".npy header: malformed shape")?;
    // Every partial product (npyz's strides, in either order) divides a nonzero full product.
    dims.iter()
        .filter(|&&d| d != 0)
        .try_fold(1u64, |p, &d| p.checked_mul(d))
        .ok_or("shape too large")?;
    Ok(dims)
}

/// A numpy `.npy` array read with `npyz` (format versions 1–3; pickles are never loaded):
/// 2-D, dtype float64 or float32 of either byte order, C or Fortran order. The header is
/// checked first (`npy_shape_guard`). Every entry is converted exactly; NaN and infinities
/// are errors naming `name[row][col]`.
pub fn matrix_from_npy(
    bytes: &[u8],
    name: &str,
    limits: &Limits,
    check: EntryCheck,
) -> Result<Matrix, InputError> {
    let bad = |m: &str| input_error(name, m);
    let shape = npy_shape_guard(bytes).map_err(|e| bad(&e))?;
    let file = npyz::NpyFile::new(bytes).map_err(|e| bad(&format!(".npy header: {e}")))?;
    if file.uses_pickled_array() {
        return Err(bad(
            "object arrays (pickles) are rejected: save the matrix with dtype float64",
        ));
    }
    let size = match file.dtype() {
        npyz::DType::Plain(t) if t.type_char() == npyz::TypeChar::Float => match t.num_bytes() {
            Some(s @ (4 | 8)) => s,
            _ => {
                return Err(bad(&format!(
                    "dtype {t} is not supported (float64 or float32)"
                )))
            }
        },
        npyz::DType::Plain(t) => {
            return Err(bad(&format!(
                "dtype {t} is not supported (float64 or float32)"
            )))
        }
        _ => {
            return Err(bad(
                "structured dtypes are not supported (save a plain float64 array)",
            ))
        }
    };
    if shape.len() != 2 {
        return Err(bad(&format!(
            "expected a 2-D array, got {} dimensions",
            shape.len()
        )));
    }
    let (rows, cols) = (
        usize::try_from(shape[0]).map_err(|_| bad("shape too large"))?,
        usize::try_from(shape[1]).map_err(|_| bad("shape too large"))?,
    );
    if file.shape() != shape.as_slice() {
        return Err(bad(".npy header: the shape is ambiguous"));
    }
    check_entries(limits, name, rows, cols)?;
    let fortran = file.order() == npyz::Order::Fortran;
    let header = file.header().clone();
    let data = file.into_inner();
    let need = rows
        .checked_mul(cols)
        .and_then(|e| e.checked_mul(size))
        .ok_or_else(|| bad("shape too large"))?;
    if data.len() != need {
        return Err(bad(&format!(
            "{} data bytes for a {rows} × {cols} array of {size}-byte floats (expected {need})",
            data.len()
        )));
    }
    let stored: Vec<f64> = if size == 8 {
        npyz::NpyFile::with_header(header, data).into_vec::<f64>()
    } else {
        npyz::NpyFile::with_header(header, data)
            .into_vec::<f32>()
            .map(|v| v.into_iter().map(f64::from).collect())
    }
    .map_err(|e| bad(&format!(".npy data: {e}")))?;
    if stored.len() != rows * cols {
        return Err(bad(".npy data: the element count differs from the shape"));
    }
    let out: Vec<Result<Vec<Q>, InputError>> = (0..rows)
        .into_par_iter()
        .map(|i| {
            (0..cols)
                .map(|j| {
                    let x = stored[if fortran { j * rows + i } else { i * cols + j }];
                    let at = || format!("{name}[{i}][{j}]");
                    if !x.is_finite() {
                        return Err(input_error(at(), format!("{x} is not a finite number")));
                    }
                    let q = q_from_f64(x);
                    match check(&q) {
                        Some(why) => Err(input_error(at(), why)),
                        None => Ok(q),
                    }
                })
                .collect()
        })
        .collect();
    let mut flat = Vec::with_capacity(rows * cols);
    for r in out {
        flat.extend(r?);
    }
    let m = Matrix::new(rows, cols, flat);
    bits_budget(&m, name, limits)?;
    Ok(m)
}

/// How an imported matrix's claim is stated.
#[derive(Clone, Debug)]
pub struct ImportOptions {
    /// The ε of the claim.
    pub epsilon: Q,
    /// The space's distances already include ε (libqif's convention); see [`file_claim`].
    pub eps_in_metric: bool,
    /// The columns are the inputs, in order (square matrix; losses are distances). Otherwise
    /// the outputs are opaque labels `"0"`, `"1"`, … and no loss is reported.
    pub outputs_are_inputs: bool,
}

/// Whether the matrix passes its audit under the other reading of
/// [`ImportOptions::eps_in_metric`] (the flag flipped): the hint after a failed import, for
/// the common mix-up of a plain space given as libqif's scaled metric or the reverse.
pub fn passes_with_other_reading(
    matrix_path: &str,
    space: &Space,
    opts: &ImportOptions,
    limits: &Limits,
) -> bool {
    let flipped = ImportOptions {
        eps_in_metric: !opts.eps_in_metric,
        ..opts.clone()
    };
    import_matrix(matrix_path, space, &flipped, Value::Null, limits).is_ok_and(|doc| {
        crate::certified::Certified::certify(&doc, &crate::progress::Silent).is_ok()
    })
}

/// Read a matrix file (npy, JSON or CSV; entries ≥ 0) and build the `mdp/1` document that
/// states it on `space` (see [`document`]).
pub fn import_matrix(
    matrix_path: &str,
    space: &Space,
    opts: &ImportOptions,
    meta: Value,
    limits: &Limits,
) -> Result<Value, InputError> {
    let m = read_matrix(matrix_path, limits, &non_negative_entry)?;
    document(&m, space, opts, meta, matrix_path)
}

/// The `mdp/1` document of matrix `m` (entries ≥ 0, written exactly, not normalized) on
/// `space`, with the (ε, metric) pair of [`file_claim`]; `name` names the matrix in errors.
pub fn document(
    m: &Matrix,
    space: &Space,
    opts: &ImportOptions,
    meta: Value,
    name: &str,
) -> Result<Value, InputError> {
    let mut doc = claim(m, space, opts, meta, name)?;
    doc["matrix"] = io::matrix_value(m);
    Ok(doc)
}

/// [`document`] without its `matrix` (for [`io::mechanism_with_matrix`], which takes the
/// exact matrix as it is): the shape and zero-row checks on `m`, the claim, the outputs.
pub fn claim(
    m: &Matrix,
    space: &Space,
    opts: &ImportOptions,
    meta: Value,
    name: &str,
) -> Result<Value, InputError> {
    let (mut doc, fspace) = claim_on_space(m, space, opts, meta, name)?;
    doc["metric"] = io::space_to_value(&fspace);
    Ok(doc)
}

/// [`claim`] without its `metric`, and the space the claim is on (for
/// [`io::mechanism_on_space`], which takes the space as it is).
pub fn claim_on_space(
    m: &Matrix,
    space: &Space,
    opts: &ImportOptions,
    meta: Value,
    name: &str,
) -> Result<(Value, Space), InputError> {
    let n = space.n();
    if m.rows != n {
        return Err(input_error(
            name,
            format!(
                "has {} rows, the space has {n} points (one row per input)",
                m.rows
            ),
        ));
    }
    if opts.outputs_are_inputs && m.cols != n {
        return Err(input_error(
            name,
            format!(
                "is {} × {}: outputs that are the inputs need a square matrix",
                m.rows, m.cols
            ),
        ));
    }
    if let Some(r) = (0..n).find(|&r| m.row(r).iter().all(|q| *q == 0u32)) {
        return Err(input_error(format!("{name}[{r}]"), "row sum is 0"));
    }
    let (eps, fspace) = file_claim(space, &opts.epsilon, opts.eps_in_metric)?;
    let mut doc = json!({"format": "mdp/1", "epsilon": io::number_value(&eps), "meta": meta});
    if !opts.outputs_are_inputs {
        doc["outputs"] = json!({"labels": (0..m.cols).map(|j| j.to_string()).collect::<Vec<_>>()});
    }
    Ok((doc, fspace))
}
