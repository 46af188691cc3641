//! What users bring: spaces as CSV or GeoJSON files of points (besides the built-in data
//! sets and the JSON forms of [`crate::io`]), mechanism matrices produced elsewhere (numpy
//! `.npy`, JSON, CSV) turned into `mdp/1` documents, and the exact repair of a near-private
//! external matrix (`spec/mechanism-format.md`, "Importing matrices").
//!
//! Every number is read exactly: CSV and JSON literals with [`parse_rational`], `f64` and
//! `f32` array entries as the exact rational value of the float ([`q_from_f64`]). Errors are
//! [`InputError`]s whose path names the file and the place, e.g. `pts.csv:row 7, column lat`
//! (CSV rows are the file's line numbers, the header being row 1), `m.npy[2][5]` (0-based
//! matrix indices) or `pts.geojson:features[3].geometry`.

use crate::exact::{f64_nearest, format_rational, parse_rational, q_from_f64, Q};
use crate::io::{self, input_error, InputError, Limits};
use crate::loss::{self, Cost};
use crate::mechanism::{Matrix, Outputs};
use crate::metric::{MetricKind, Space};
use crate::privacy::Prepared;
use rayon::prelude::*;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::fmt;

// ---------------------------------------------------------------------------------------
// Spaces
// ---------------------------------------------------------------------------------------
/// Load a space given as `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric
/// object file, or an `mdp/1` file (its `metric` is used); [`load_space_with_labels`] also
/// returns the points' labels.
pub fn load_space(spec: &str, limits: &Limits) -> Result<Space, InputError> {
    load_space_with_labels(spec, limits).map(|(s, _)| s)
}


/// Load a space and, when the source has them, the labels of its points: `builtin:NAME`
/// (the data set's labels), a `.csv` file ([`space_from_csv`]), a `.geojson` file or any
/// JSON file holding a GeoJSON `FeatureCollection` ([`space_from_geojson`]), or a JSON metric
/// object / `mdp/1` file ([`io::space_from_json`]; no labels). `-` reads JSON from standard
/// input.
pub fn load_space_with_labels(
    spec: &str,
    limits: &Limits,
) -> Result<(Space, Option<Vec<String>>), InputError> {
    if let Some(name) = spec.strip_prefix("builtin:") {
        return crate::builtin::space(name)
            .map(|(s, labels)| (s, Some(labels)))
            .map_err(|e| input_error("--space", e.to_string()));
    }
    let bytes = io::read_source(spec, limits)?;
    let lower = spec.to_ascii_lowercase();
    if lower.ends_with(".csv") {
        return space_from_csv(&bytes, spec, limits);
    }
    let v = io::parse_json(&bytes)?;
    if lower.ends_with(".geojson") || is_feature_collection(&v) {
        return space_from_geojson(&v, spec, limits);
    }
    Ok((io::space_from_json(&v, limits)?, None))
}

fn is_feature_collection(v: &Value) -> bool {
    v.get("type").and_then(Value::as_str) == Some("FeatureCollection")
}

/// One CSV record: the line of the file it starts on (1-based) and its fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub line: usize,
    pub fields: Vec<String>,
}

/// Split CSV text into records (RFC 4180): fields separated by commas, records by LF, CRLF
/// or CR; a field in double quotes may hold commas, line breaks and `""` (one quote).
/// Unquoted fields are trimmed of spaces and tabs; spaces around a quoted field are
/// ignored. Blank lines are skipped; a leading byte order mark is ignored. A quote inside
/// an unquoted field, text after a closing quote and an unterminated quote are errors
/// naming the row (`name:row L`).
pub fn csv_records(text: &str, name: &str) -> Result<Vec<Record>, InputError> {
    #[derive(PartialEq)]
    enum St {
        Start,
        Unquoted,
        Quoted,
        AfterQuote,
    }
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut records = Vec::new();
    let mut fields: Vec<String> = Vec::new();
    let mut field = String::new();
    let mut st = St::Start;
    let (mut line, mut record_line, mut quote_line) = (1usize, 1usize, 1usize);
    let mut chars = text.chars().peekable();
    let row_err = |l: usize, m: &str| input_error(format!("{name}:row {l}"), m);
    let end_field = |fields: &mut Vec<String>, field: &mut String, quoted: bool| {
        let f = std::mem::take(field);
        fields.push(if quoted {
            f
        } else {
            f.trim_matches([' ', '\t']).to_string()
        });
    };
    while let Some(orig) = chars.next() {
        let newline = orig == '\n' || orig == '\r';
        let crlf = orig == '\r' && chars.peek() == Some(&'\n');
        if crlf {
            chars.next();
        }
        let c = if newline { '\n' } else { orig };
        match st {
            St::Quoted => {
                if newline {
                    field.push_str(if crlf { "\r\n" } else if orig == '\r' { "\r" } else { "\n" });
                } else if c == '"' {
                    if chars.peek() == Some(&'"') {
                        chars.next();
                        field.push('"');
                    } else {
                        st = St::AfterQuote;
                    }
                } else {
                    field.push(c);
                }
            }
            St::Start | St::Unquoted | St::AfterQuote if c == ',' => {
                end_field(&mut fields, &mut field, st == St::AfterQuote);
                st = St::Start;
            }
            St::Start | St::Unquoted | St::AfterQuote if c == '\n' => {
                let blank = fields.is_empty() && st != St::AfterQuote && field.trim().is_empty();
                end_field(&mut fields, &mut field, st == St::AfterQuote);
                let f = std::mem::take(&mut fields);
                if !blank {
                    records.push(Record {
                        line: record_line,
                        fields: f,
                    });
                }
                st = St::Start;
            }
            St::Start if c == '"' && field.trim_matches([' ', '\t']).is_empty() => {
                field.clear();
                st = St::Quoted;
                quote_line = line;
            }
            St::Start | St::Unquoted if c == '"' => {
                return Err(row_err(
                    line,
                    "quote inside an unquoted field (quote the whole field: \"...\", with \"\" for a quote)",
                ))
            }
            St::Start | St::Unquoted => {
                field.push(c);
                if c != ' ' && c != '\t' {
                    st = St::Unquoted;
                }
            }
            St::AfterQuote => {
                if c != ' ' && c != '\t' {
                    return Err(row_err(
                        line,
                        &format!("unexpected {c:?} after a closing quote"),
                    ));
                }
            }
        }
        if newline {
            line += 1;
            if st == St::Start && fields.is_empty() {
                record_line = line;
            }
        }
    }
    if st == St::Quoted {
        return Err(row_err(quote_line, "unterminated quoted field"));
    }
    let blank = fields.is_empty() && st != St::AfterQuote && field.trim().is_empty();
    if !blank {
        end_field(&mut fields, &mut field, st == St::AfterQuote);
        records.push(Record {
            line: record_line,
            fields,
        });
    }
    Ok(records)
}

fn utf8<'a>(bytes: &'a [u8], name: &str) -> Result<&'a str, InputError> {
    std::str::from_utf8(bytes).map_err(|e| input_error(name, format!("not UTF-8 text: {e}")))
}

const LAT: &[&str] = &["lat", "latitude"];
const LON: &[&str] = &["lon", "lng", "long", "longitude"];
const LABEL: &[&str] = &["label", "name", "id"];

fn check_points(n: usize, name: &str, limits: &Limits) -> Result<(), InputError> {
    if n == 0 {
        return Err(input_error(
            name,
            "no points (one data row or feature per point)",
        ));
    }
    io::check_entries(name, n as u64, n as u64, limits)
}

fn check_unique(labels: &[(String, String)], name: &str) -> Result<(), InputError> {
    let mut seen: HashMap<&str, &str> = HashMap::new();
    for (label, place) in labels {
        if label.is_empty() {
            return Err(input_error(format!("{name}:{place}"), "empty label"));
        }
        if let Some(first) = seen.insert(label, place) {
            return Err(input_error(
                format!("{name}:{place}"),
                format!("duplicate label {label:?} (also at {first}); labels must be unique"),
            ));
        }
    }
    Ok(())
}

fn lat_lon_check(lat: &Q, lon: &Q) -> (Option<String>, Option<String>) {
    let bad_lat = (*lat > 90u32 || *lat < -90i32)
        .then(|| format!("latitude {} outside [-90, 90]", format_rational(lat)));
    let bad_lon = (*lon > 180u32 || *lon < -180i32)
        .then(|| format!("longitude {} outside [-180, 180]", format_rational(lon)));
    (bad_lat, bad_lon)
}

fn metric_error(name: &str, e: InputError) -> InputError {
    e.within(name, ":")
}

/// A space from a CSV file with a header row: columns `lat` and `lon` (any case; also
/// `latitude`, `longitude`, `lng`, `long`) give a haversine space in km (latitude in
/// [−90, 90], longitude in [−180, 180]; other columns are ignored); otherwise every numeric
/// column is a coordinate of a Euclidean space (a column without any number, e.g. free text,
/// is ignored with a warning; a column mixing numbers and text is an error). The first
/// column named `label`, `name` or `id` gives the labels (non-empty, unique).
pub fn space_from_csv(
    bytes: &[u8],
    name: &str,
    limits: &Limits,
) -> Result<(Space, Option<Vec<String>>), InputError> {
    space_from_csv_as(bytes, name, limits, MetricKind::Euclidean)
}

/// [`space_from_csv`] with the metric of vector coordinates chosen (euclidean, manhattan or
/// chebyshev).
pub fn space_from_csv_as(
    bytes: &[u8],
    name: &str,
    limits: &Limits,
    vector_kind: MetricKind,
) -> Result<(Space, Option<Vec<String>>), InputError> {
    assert!(vector_kind.has_points() && vector_kind != MetricKind::Haversine);
    let records = csv_records(utf8(bytes, name)?, name)?;
    let Some((header, rows)) = records.split_first() else {
        return Err(input_error(
            name,
            "empty file: a header row and one row per point are required",
        ));
    };
    let cols: Vec<String> = header.fields.iter().map(|h| h.to_lowercase()).collect();
    if cols.iter().all(|c| parse_rational(c).is_ok()) {
        return Err(input_error(
            format!("{name}:row {}", header.line),
            "a header row is required (column names such as lat,lon or x,y, and optionally label)",
        ));
    }
    // Column c as named in messages: its header text, or its 1-based number.
    let col_name = |c: usize| {
        let h = header.fields[c].trim();
        if h.is_empty() {
            format!("{}", c + 1)
        } else {
            h.to_string()
        }
    };
    for (i, c) in cols.iter().enumerate() {
        if !c.is_empty() && cols[..i].contains(c) {
            return Err(input_error(
                format!("{name}:row {}, column {}", header.line, col_name(i)),
                "duplicate column name",
            ));
        }
    }
    let find = |names: &[&str]| names.iter().find_map(|n| cols.iter().position(|c| c == n));
    let label_col = find(LABEL);
    let (lat_col, lon_col) = (find(LAT), find(LON));
    check_points(rows.len(), name, limits)?;
    for r in rows {
        if r.fields.len() != cols.len() {
            return Err(input_error(
                format!("{name}:row {}", r.line),
                format!(
                    "has {} fields, the header has {}",
                    r.fields.len(),
                    cols.len()
                ),
            ));
        }
    }
    let at = |r: &Record, c: usize| format!("{name}:row {}, column {}", r.line, col_name(c));
    let num = |r: &Record, c: usize| -> Result<Q, InputError> {
        let s = &r.fields[c];
        if s.is_empty() {
            return Err(input_error(at(r, c), "empty value"));
        }
        parse_rational(s).map_err(|e| input_error(at(r, c), e.to_string()))
    };
    let mut warnings = Vec::new();
    let (kind, coord_cols) = match (lat_col, lon_col) {
        (Some(a), Some(o)) => (MetricKind::Haversine, vec![a, o]),
        (Some(c), None) | (None, Some(c)) => {
            return Err(input_error(
                format!("{name}:row {}, column {}", header.line, col_name(c)),
                "a latitude column needs a longitude column (lat,lon) and vice versa",
            ))
        }
        (None, None) => {
            let mut coords = Vec::new();
            for (c, col) in cols.iter().enumerate() {
                if LABEL.contains(&col.as_str()) {
                    continue;
                }
                let numeric = rows
                    .iter()
                    .filter(|r| parse_rational(&r.fields[c]).is_ok())
                    .count();
                if numeric == 0 {
                    warnings.push(format!(
                        "{name}: column {} holds no numbers and is ignored",
                        col_name(c)
                    ));
                } else {
                    coords.push(c);
                }
            }
            if coords.is_empty() {
                return Err(input_error(
                    format!("{name}:row {}", header.line),
                    "no numeric columns (expected lat,lon or numeric coordinate columns)",
                ));
            }
            (vector_kind, coords)
        }
    };
    let mut used = 0u64;
    let mut pts = Vec::with_capacity(rows.len());
    for r in rows {
        let p = coord_cols
            .iter()
            .map(|&c| num(r, c))
            .collect::<Result<Vec<Q>, _>>()?;
        if kind == MetricKind::Haversine {
            let (bad_lat, bad_lon) = lat_lon_check(&p[0], &p[1]);
            if let Some(m) = bad_lat {
                return Err(input_error(at(r, coord_cols[0]), m));
            }
            if let Some(m) = bad_lon {
                return Err(input_error(at(r, coord_cols[1]), m));
            }
        }
        used += p.iter().map(io::bits).sum::<u64>();
        if used > limits.max_bits {
            return Err(io::over_bits(name, limits));
        }
        pts.push(p);
    }
    let labels = match label_col {
        None => None,
        Some(c) => {
            let l: Vec<(String, String)> = rows
                .iter()
                .map(|r| {
                    (
                        r.fields[c].clone(),
                        format!("row {}, column {}", r.line, col_name(c)),
                    )
                })
                .collect();
            check_unique(&l, name)?;
            Some(l.into_iter().map(|(s, _)| s).collect())
        }
    };
    let mut space = Space::from_points(kind, pts, None).map_err(|e| metric_error(name, e))?;
    space.warnings.extend(warnings);
    Ok((space, labels))
}

/// A haversine space (km) from a GeoJSON `FeatureCollection` of `Point` features (RFC 7946:
/// coordinates are `[longitude, latitude]`, swapped here to the metric's `[lat, lon]`; an
/// altitude is ignored). Labels: the first of `properties.label`, `properties.name`,
/// `properties.id` or the feature's `id` that every feature has (strings or numbers); none
/// otherwise. Any other geometry is an error naming the feature.
pub fn space_from_geojson(
    v: &Value,
    name: &str,
    limits: &Limits,
) -> Result<(Space, Option<Vec<String>>), InputError> {
    if !is_feature_collection(v) {
        return Err(input_error(
            format!("{name}:type"),
            "expected a GeoJSON \"FeatureCollection\" of Point features",
        ));
    }
    let feats = v
        .get("features")
        .and_then(Value::as_array)
        .ok_or_else(|| input_error(format!("{name}:features"), "missing or not an array"))?;
    check_points(feats.len(), name, limits)?;
    let mut pts = Vec::with_capacity(feats.len());
    let mut used = 0u64;
    for (i, f) in feats.iter().enumerate() {
        let fp = format!("{name}:features[{i}]");
        let g = f.get("geometry").filter(|g| g.is_object()).ok_or_else(|| {
            input_error(format!("{fp}.geometry"), "missing (a Point is required)")
        })?;
        match g.get("type").and_then(Value::as_str) {
            Some("Point") => {}
            Some(other) => {
                return Err(input_error(
                    format!("{fp}.geometry"),
                    format!("geometry type {other:?} is not supported (only Point)"),
                ))
            }
            None => return Err(input_error(format!("{fp}.geometry.type"), "missing")),
        }
        let cp = format!("{fp}.geometry.coordinates");
        let c = g
            .get("coordinates")
            .and_then(Value::as_array)
            .filter(|c| c.len() >= 2)
            .ok_or_else(|| input_error(&cp, "expected [longitude, latitude]"))?;
        let lon = io::number(&c[0], &format!("{cp}[0]"))?;
        let lat = io::number(&c[1], &format!("{cp}[1]"))?;
        let (bad_lat, bad_lon) = lat_lon_check(&lat, &lon);
        if let Some(m) = bad_lat {
            return Err(input_error(format!("{cp}[1]"), m));
        }
        if let Some(m) = bad_lon {
            return Err(input_error(format!("{cp}[0]"), m));
        }
        used += io::bits(&lat) + io::bits(&lon);
        if used > limits.max_bits {
            return Err(io::over_bits(name, limits));
        }
        pts.push(vec![lat, lon]);
    }
    let label_of = |f: &Value, key: Option<&str>| -> Option<String> {
        let v = match key {
            Some(k) => f.get("properties")?.get(k)?,
            None => f.get("id")?,
        };
        match v {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.as_str().to_string()),
            _ => None,
        }
    };
    let keys = [Some("label"), Some("name"), Some("id"), None];
    let labels = match keys
        .iter()
        .find(|k| feats.iter().all(|f| label_of(f, **k).is_some()))
    {
        None => None,
        Some(k) => {
            let what = k.map_or("id".to_string(), |k| format!("properties.{k}"));
            let l: Vec<(String, String)> = feats
                .iter()
                .enumerate()
                .map(|(i, f)| {
                    (
                        label_of(f, *k).expect("checked"),
                        format!("features[{i}].{what}"),
                    )
                })
                .collect();
            check_unique(&l, name)?;
            Some(l.into_iter().map(|(s, _)| s).collect())
        }
    };
    let space =
        Space::from_points(MetricKind::Haversine, pts, None).map_err(|e| metric_error(name, e))?;
    Ok((space, labels))
}

/// The same space with every distance multiplied by `factor` > 0, exactly: coordinates
/// scaled (euclidean, manhattan, chebyshev), the radius scaled (haversine), the table scaled
/// (explicit; a graph becomes its explicit shortest-path table).
pub fn scale_space(space: &Space, factor: &Q) -> Result<Space, InputError> {
    assert!(*factor > 0u32);
    let n = space.n();
    let r = match space.kind() {
        MetricKind::Haversine => Space::from_points(
            MetricKind::Haversine,
            space.points()[..n].to_vec(),
            Some(space.radius() * factor),
        ),
        MetricKind::Explicit | MetricKind::Graph => Space::from_table(
            space
                .table()
                .chunks(n)
                .map(|row| row.iter().map(|d| d * factor).collect())
                .collect(),
        ),
        kind => Space::from_points(
            kind,
            space.points()[..n]
                .iter()
                .map(|p| p.iter().map(|x| x * factor).collect())
                .collect(),
            None,
        ),
    };
    r.map_err(|e| metric_error("metric", e))
}

/// The (ε, metric) pair a file states. Without `eps_in_metric`, `(epsilon, space)`: the
/// matrix is claimed ε·d private for the space's d. With it, the space's distances already
/// include ε (libqif's convention: its mechanisms and checks take the metric d′ = ε·d and
/// guarantee 1·d′ privacy), and the file states the same guarantee as `(epsilon, space/ε)`,
/// with distances (and so losses) in the plain units.
pub fn file_claim(
    space: &Space,
    epsilon: &Q,
    eps_in_metric: bool,
) -> Result<(Q, Space), InputError> {
    if eps_in_metric {
        Ok((
            epsilon.clone(),
            scale_space(space, &(Q::from(1u32) / epsilon))?,
        ))
    } else {
        Ok((epsilon.clone(), space.clone()))
    }
}

// ---------------------------------------------------------------------------------------
// Matrices
// ---------------------------------------------------------------------------------------

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
    let total: u64 = m.data.par_iter().map(io::bits).sum();
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

// ---------------------------------------------------------------------------------------
// Repair
// ---------------------------------------------------------------------------------------

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
    let zero = Q::from(0u32);
    let clamped = Matrix::new(
        n,
        k,
        m.data
            .iter()
            .map(|q| if *q < 0u32 { zero.clone() } else { q.clone() })
            .collect(),
    );
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
