//! Mechanism matrices produced elsewhere (numpy `.npy` float64/float32, a JSON array of rows,
//! a CSV of numbers), read exactly and turned into `mdp/1` documents
//! (`spec/mechanism-format.md`, "Importing matrices").

use super::space::{csv_records, file_claim, utf8};
use crate::exact::{f64_nearest, parse_rational, q_from_f64, Q};
use crate::io::{self, input_error, InputError, Limits};
use crate::mechanism::Matrix;
use crate::metric::Space;
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

/// A value of the npy header's Python dict literal.
#[derive(Debug, PartialEq)]
enum PyVal {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
    List,
}

/// Parse the npy header `{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }`.
fn parse_npy_header(h: &str) -> Result<Vec<(String, PyVal)>, String> {
    let b = h.as_bytes();
    let mut i = 0;
    let ws = |i: &mut usize| {
        while *i < b.len() && b[*i].is_ascii_whitespace() {
            *i += 1;
        }
    };
    let string = |i: &mut usize| -> Result<String, String> {
        let q = b[*i];
        let start = *i + 1;
        let end = h[start..]
            .find(q as char)
            .ok_or("unterminated string in the header")?;
        *i = start + end + 1;
        Ok(h[start..start + end].to_string())
    };
    ws(&mut i);
    if b.get(i) != Some(&b'{') {
        return Err("the header is not a Python dict".into());
    }
    i += 1;
    let mut out = Vec::new();
    loop {
        ws(&mut i);
        match b.get(i) {
            Some(b'}') => break,
            Some(b'\'') | Some(b'"') => {}
            _ => return Err("malformed header dict".into()),
        }
        let key = string(&mut i)?;
        ws(&mut i);
        if b.get(i) != Some(&b':') {
            return Err("malformed header dict".into());
        }
        i += 1;
        ws(&mut i);
        let val = match b.get(i) {
            Some(b'\'') | Some(b'"') => PyVal::Str(string(&mut i)?),
            Some(b'T') if h[i..].starts_with("True") => {
                i += 4;
                PyVal::Bool(true)
            }
            Some(b'F') if h[i..].starts_with("False") => {
                i += 5;
                PyVal::Bool(false)
            }
            Some(b'(') => {
                let end = h[i..].find(')').ok_or("malformed shape tuple")? + i;
                let dims = h[i + 1..end]
                    .split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(|s| s.trim_end_matches('L').parse::<u64>())
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| "malformed shape tuple")?;
                i = end + 1;
                PyVal::Tuple(dims)
            }
            Some(b'[') => {
                // A structured dtype: rejected by the caller; skip to the matching bracket.
                let mut depth = 0;
                while i < b.len() {
                    match b[i] {
                        b'[' => depth += 1,
                        b']' => {
                            depth -= 1;
                            if depth == 0 {
                                i += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                PyVal::List
            }
            _ => return Err(format!("unsupported value for {key:?} in the header")),
        };
        out.push((key, val));
        ws(&mut i);
        match b.get(i) {
            Some(b',') => i += 1,
            Some(b'}') => {}
            _ => return Err("malformed header dict".into()),
        }
    }
    Ok(out)
}

/// A numpy `.npy` array (format versions 1–3, parsed here; no pickle is ever loaded):
/// 2-D, dtype `<f8` or `<f4`, C or Fortran order. Every entry is converted exactly; NaN and
/// infinities are errors naming `name[row][col]`.
pub fn matrix_from_npy(
    bytes: &[u8],
    name: &str,
    limits: &Limits,
    check: EntryCheck,
) -> Result<Matrix, InputError> {
    let bad = |m: &str| input_error(name, m);
    if !bytes.starts_with(NPY_MAGIC) || bytes.len() < 10 {
        return Err(bad("not a numpy .npy file (no \\x93NUMPY magic string)"));
    }
    let (hlen, start): (usize, usize) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        v => return Err(bad(&format!("unsupported .npy format version {v}"))),
    };
    let end = start
        .checked_add(hlen)
        .filter(|&e| e <= bytes.len())
        .ok_or_else(|| bad("truncated .npy header"))?;
    let header: String = if bytes[6] == 3 {
        utf8(&bytes[start..end], name)?.to_string()
    } else {
        bytes[start..end].iter().map(|&c| c as char).collect()
    };
    let dict = parse_npy_header(&header).map_err(|e| bad(&format!(".npy header: {e}")))?;
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (k, v) in dict {
        match (k.as_str(), v) {
            ("descr", PyVal::Str(s)) => descr = Some(s),
            ("descr", _) => {
                return Err(bad(
                    "structured dtypes are not supported (save a plain float64 array)",
                ))
            }
            ("fortran_order", PyVal::Bool(f)) => fortran = Some(f),
            ("shape", PyVal::Tuple(s)) => shape = Some(s),
            (k, _) => return Err(bad(&format!(".npy header: unexpected entry {k:?}"))),
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err(bad(
            ".npy header: descr, fortran_order and shape are required",
        ));
    };
    let size = match descr.as_str() {
        "<f8" => 8,
        "<f4" => 4,
        d if d.contains('O') => {
            return Err(bad(
                "object arrays (pickles) are rejected: save the matrix with dtype float64",
            ))
        }
        d if d.starts_with('>') => {
            return Err(bad(&format!(
                "big-endian dtype {d:?} is not supported (use arr.astype('<f8'))"
            )))
        }
        d => {
            return Err(bad(&format!(
                "dtype {d:?} is not supported (float64 or float32, little-endian)"
            )))
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
    check_entries(limits, name, rows, cols)?;
    let data = &bytes[end..];
    let need = rows * cols * size;
    if data.len() != need {
        return Err(bad(&format!(
            "{} data bytes for a {rows} × {cols} array of {size}-byte floats (expected {need})",
            data.len()
        )));
    }
    let get = |i: usize, j: usize| -> f64 {
        let k = if fortran { j * rows + i } else { i * cols + j } * size;
        if size == 8 {
            f64::from_le_bytes(data[k..k + 8].try_into().expect("8 bytes"))
        } else {
            f32::from_le_bytes(data[k..k + 4].try_into().expect("4 bytes")) as f64
        }
    };
    let out: Vec<Result<Vec<Q>, InputError>> = (0..rows)
        .into_par_iter()
        .map(|i| {
            (0..cols)
                .map(|j| {
                    let x = get(i, j);
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
    let mut doc = io::mechanism_to_value(&eps, &fspace, m, meta);
    if !opts.outputs_are_inputs {
        doc["outputs"] = json!({"labels": (0..m.cols).map(|j| j.to_string()).collect::<Vec<_>>()});
    }
    Ok(doc)
}
