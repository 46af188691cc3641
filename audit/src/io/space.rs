//! Spaces users bring: `builtin:NAME`, CSV and GeoJSON files of points, JSON metric objects
//! and `mdp/1` files ([`load_space_with_labels`]). In the kernel because a pipeline's own
//! space pins the metric a gate accepts (`mdp-audit --space`, [`crate::pin`]).

use crate::exact::{format_rational, parse_rational, Q};
use crate::io::{self, input_error, InputError, Limits};
use crate::metric::{MetricKind, Space};
use serde_json::Value;
use std::collections::HashMap;

/// Load a space given as `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric
/// object file, or an `mdp/1` file (its `metric` is used); [`load_space_with_labels`] also
/// returns the points' labels.
pub fn load_space(
    spec: &str,
    label_column: Option<&str>,
    limits: &Limits,
) -> Result<Space, InputError> {
    load_space_with_labels(spec, label_column, limits).map(|(s, _)| s)
}

/// Load a space and, when the source has them, the labels of its points: `builtin:NAME`
/// (the data set's labels), `line:N[,STEP]`, `grid:W,H[,STEP]` or `categories:K` (generated, no labels), a
/// `.csv` file ([`space_from_csv`]), a `.geojson` file or any
/// JSON file holding a GeoJSON `FeatureCollection` ([`space_from_geojson`]), or a JSON metric
/// object / `mdp/1` file ([`io::space_and_labels_from_json`]: its `labels`, if any). `-`
/// reads JSON from standard input. `label_column` (`--label-column`) names the CSV column or
/// GeoJSON property that holds the labels; it is an error for any other source.
pub fn load_space_with_labels(
    spec: &str,
    label_column: Option<&str>,
    limits: &Limits,
) -> Result<(Space, Option<Vec<String>>), InputError> {
    let not_points = || {
        input_error(
            "--label-column",
            format!("applies to a CSV or GeoJSON space; {spec} is neither"),
        )
    };
    if let Some(name) = spec.strip_prefix("builtin:") {
        if label_column.is_some() {
            return Err(not_points());
        }
        return crate::builtin::space(name)
            .map(|(s, labels)| (s, Some(labels)))
            .map_err(|e| input_error(spec, e.to_string()));
    }
    if let Some(generated) = generated_space(spec, limits) {
        if label_column.is_some() {
            return Err(not_points());
        }
        return generated.map(|s| (s, None));
    }
    let bytes = io::read_source(spec, limits)?;
    let lower = spec.to_ascii_lowercase();
    if lower.ends_with(".csv") {
        return space_from_csv(&bytes, spec, label_column, limits);
    }
    let v = io::parse_json(&bytes)?;
    if lower.ends_with(".geojson") || is_feature_collection(&v) {
        return space_from_geojson(&v, spec, label_column, limits);
    }
    if label_column.is_some() {
        return Err(not_points());
    }
    io::space_and_labels_from_json(&v, limits)
}

/// A space for a large-mechanism container (`spec/mechanism-format.md`, revision 3): a
/// `graph` metric as its edges (no shortest-path table), any other space as
/// [`load_space_with_labels`] reads it but without the n² entry limit (the structured audit
/// keeps no n×n table).
pub fn load_geometry(
    spec: &str,
    label_column: Option<&str>,
    limits: &Limits,
) -> Result<(crate::io::container::Geometry, Option<Vec<String>>), InputError> {
    use crate::io::container::{self, Geometry};
    let unbounded = Limits {
        max_entries: u64::MAX,
        ..*limits
    };
    let lower = spec.to_ascii_lowercase();
    if label_column.is_none()
        && !spec.starts_with("builtin:")
        && !is_generated(spec)
        && !lower.ends_with(".csv")
        && !lower.ends_with(".geojson")
    {
        let v = io::parse_json(&io::read_source(spec, limits)?)?;
        let mv = v.get("metric").unwrap_or(&v);
        if mv.get("kind").and_then(Value::as_str) == Some("graph") {
            let g = container::geometry(mv, limits)?;
            let labels = io::metric_labels(mv, "metric", g.n())?;
            return Ok((g, labels));
        }
    }
    let (s, labels) = load_space_with_labels(spec, label_column, &unbounded)?;
    Ok((Geometry::Points(s), labels))
}

/// The spaces a spec describes in itself (no file): `line:N[,STEP]`, N points 0, STEP, …,
/// (N − 1)·STEP on a line (euclidean; STEP 1 by default: the 1-D geometric mechanism's
/// domain), `grid:W,H[,STEP]`, the W·H cell centres of a grid (euclidean, row-major with x
/// fastest: the planar Laplace grid's domain), and `categories:K`, K categories at distance 1 from each other (the discrete
/// metric: k-ary randomized response's). `None` for any other spec.
fn generated_space(spec: &str, limits: &Limits) -> Option<Result<Space, InputError>> {
    if !is_generated(spec) {
        return None;
    }
    let (kind, args) = spec.split_once(':')?;
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    let bad = |m: &str| input_error(spec, m.to_string());
    let count = |p: Option<&&str>| match p.and_then(|p| p.parse::<usize>().ok()) {
        Some(n) if n >= 1 => Ok(n),
        _ => Err(bad(
            "expected a count ≥ 1 first (line:N[,STEP], grid:W,H[,STEP], categories:K)",
        )),
    };
    let n = match count(parts.first()) {
        Ok(n) => n,
        Err(e) => return Some(Err(e)),
    };
    // grid:W,H takes two counts; the rest one.
    let (n, rest) = if kind == "grid" {
        match count(parts.get(1)).map(|h| n.checked_mul(h)) {
            Ok(Some(wh)) => (wh, &parts[2..]),
            Ok(None) => return Some(Err(bad("W·H overflows"))),
            Err(e) => return Some(Err(e)),
        }
    } else {
        (n, &parts[1..])
    };
    if let Err(e) = check_points(n, spec, limits) {
        return Some(Err(e));
    }
    let step = || match rest.first().map(|s| parse_rational(s)) {
        None => Ok(Q::from(1u32)),
        Some(Ok(s)) if s > 0u32 => Ok(s),
        Some(_) => Err(bad("the step must be a number > 0")),
    };
    let points = |pts: Vec<Vec<Q>>| {
        Space::from_points(MetricKind::Euclidean, pts, None).map_err(|e| metric_error(spec, e))
    };
    Some(match (kind, rest) {
        ("line", [] | [_]) => step()
            .and_then(|step| points((0..n).map(|i| vec![Q::from(i as u64) * &step]).collect())),
        // Cell centres of a W × H grid, row-major with x fastest (libqif's order): point
        // y·W + x at (x·STEP, y·STEP).
        ("grid", [] | [_]) => step().and_then(|step| {
            let w = parts[0].parse::<usize>().unwrap_or(1);
            points(
                (0..n)
                    .map(|i| {
                        vec![
                            Q::from((i % w) as u64) * &step,
                            Q::from((i / w) as u64) * &step,
                        ]
                    })
                    .collect(),
            )
        }),
        ("categories", []) => {
            let rows = (0..n)
                .map(|i| (0..n).map(|j| Q::from(u32::from(i != j))).collect())
                .collect();
            Space::from_table(rows).map_err(|e| metric_error(spec, e))
        }
        _ => Err(bad(
            "expected line:N[,STEP], grid:W,H[,STEP] or categories:K",
        )),
    })
}

/// Whether `spec` names a generated space (`line:…`, `grid:…`, `categories:…`): a prefix test, so a
/// caller can route it without building the space.
fn is_generated(spec: &str) -> bool {
    matches!(
        spec.split_once(':'),
        Some(("line" | "grid" | "categories", _))
    )
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

/// Split CSV text into records with the `csv` crate (RFC 4180): fields separated by
/// commas, records by LF, CRLF or CR; a field in double quotes may hold commas, line breaks
/// and `""` (one quote). Fields are trimmed of surrounding white space (quoted or not: a
/// label may not carry any, `spec/mechanism-format.md`); blank lines are skipped; a leading
/// byte order mark is ignored. Each record carries the line of the file it starts on. The
/// reader is the crate's lenient one: a stray quote is kept as text (`"a"b` reads `ab`)
/// and an unterminated quote runs to the end of the file, merging the rows after it into
/// one field; the readers refuse what that leaves (a short row, a cell that is not a
/// number, a label with a line break: [`space_from_csv`]), naming the row.
pub fn csv_records(text: &str, name: &str) -> Result<Vec<Record>, InputError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut records = Vec::new();
    let mut record = csv::StringRecord::new();
    // The crate's own line count skips quoted line breaks; count them from byte offsets. A
    // record's offset may point into the line break before it (the `\n` of a CRLF, a blank
    // line), so line breaks at the offset are passed over first.
    let (mut line, mut counted) = (1usize, 0usize);
    let mut line_at = |byte: usize| {
        let b = text.as_bytes();
        let mut byte = byte.min(b.len());
        while byte < b.len() && (b[byte] == b'\n' || b[byte] == b'\r') {
            byte += 1;
        }
        for i in counted..byte {
            if b[i] == b'\n' || (b[i] == b'\r' && b.get(i + 1) != Some(&b'\n')) {
                line += 1;
            }
        }
        counted = counted.max(byte);
        line
    };
    loop {
        let more = reader.read_record(&mut record).map_err(|e| {
            let line = e.position().map_or(0, |p| line_at(p.byte() as usize));
            input_error(format!("{name}:row {line}"), e.to_string())
        })?;
        if !more {
            return Ok(records);
        }
        if record.len() == 1 && record[0].is_empty() {
            continue; // a line of white space
        }
        records.push(Record {
            line: record.position().map_or(0, |p| line_at(p.byte() as usize)),
            fields: record.iter().map(str::to_string).collect(),
        });
    }
}

pub fn utf8<'a>(bytes: &'a [u8], name: &str) -> Result<&'a str, InputError> {
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
        if label.chars().any(char::is_control) {
            return Err(input_error(
                format!("{name}:{place}"),
                "a label holds a line break or control character (in a CSV, an unclosed quote merges the rows after it)",
            ));
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
/// column named `label`, `name` or `id` gives the labels (non-empty, unique), or the column
/// `label_column` names (any case; it is then not a coordinate).
pub fn space_from_csv(
    bytes: &[u8],
    name: &str,
    label_column: Option<&str>,
    limits: &Limits,
) -> Result<(Space, Option<Vec<String>>), InputError> {
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
    let mut label_col = match label_column {
        None => find(LABEL),
        Some(l) => {
            let c = find(&[l.to_lowercase().as_str()]).ok_or_else(|| {
                input_error(
                    "--label-column",
                    format!(
                        "{name} has no column {l:?} (its columns: {})",
                        header.fields.join(", ")
                    ),
                )
            })?;
            Some(c)
        }
    };
    let (lat_col, lon_col) = (find(LAT), find(LON));
    if let Some(c) = label_col.filter(|c| [lat_col, lon_col].contains(&Some(*c))) {
        return Err(input_error(
            "--label-column",
            format!("{}'s column {} is a coordinate", name, col_name(c)),
        ));
    }
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
                if label_col == Some(c) || (label_column.is_none() && LABEL.contains(&col.as_str()))
                {
                    continue;
                }
                let numeric = rows
                    .iter()
                    .filter(|r| parse_rational(&r.fields[c]).is_ok())
                    .count();
                if numeric == 0 && label_col.is_none() {
                    // The one text column of a vector file (`word,v0,v1,…`) names the
                    // points (issue 33: it was silently ignored).
                    label_col = Some(c);
                } else if numeric == 0 {
                    warnings.push(format!(
                        "{name}: column {} holds no numbers and is ignored (the labels are column {})",
                        col_name(c),
                        col_name(label_col.unwrap_or(c))
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
            (MetricKind::Euclidean, coords)
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
        used += p.iter().map(crate::exact::bits).sum::<u64>();
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
/// otherwise; or `properties.LABEL_COLUMN`, which every feature must then have. Any other
/// geometry is an error naming the feature.
pub fn space_from_geojson(
    v: &Value,
    name: &str,
    label_column: Option<&str>,
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
        used += crate::exact::bits(&lat) + crate::exact::bits(&lon);
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
    let defaults = [Some("label"), Some("name"), Some("id"), None];
    let chosen = [label_column];
    let keys: &[Option<&str>] = if label_column.is_some() {
        &chosen
    } else {
        &defaults
    };
    if let (Some(l), Some(i)) = (
        label_column,
        feats
            .iter()
            .position(|f| label_of(f, label_column).is_none()),
    ) {
        return Err(input_error(
            "--label-column",
            format!("{name}:features[{i}] has no properties.{l} (a string or number)"),
        ));
    }
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
