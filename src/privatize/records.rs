//! Records in, records out (`mdp privatize`; issue 33): plain lines, CSV with a header, or
//! JSON lines; each record names its input (a label, a 0-based index, or coordinates
//! snapped to the nearest input) and is written back **with** its release, so the output
//! joins to the input:
//!
//! * [`Format::Lines`]: line i of the output is the release of line i of the input;
//! * [`Format::Csv`]: every input row with all its columns, plus `<column>_private`;
//! * [`Format::JsonLines`]: every input object with all its fields, plus `<field>_private`.
//!
//! No line is dropped or merged: a blank line or a record that names no input is an error
//! naming its line ([`OnBad::Error`]), or, when asked ([`OnBad::Skip`]), a reported skip
//! whose output record has an empty release (an empty line, an empty field, `null`; a blank
//! CSV line has no row to write back and is only reported). Lines are read whole: a
//! stream's longest line must fit in memory.

use super::Sampler;
use crate::exact::f64_nearest;
use crate::metric::{MetricKind, Space};
use rand::{Rng, SeedableRng};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{BufRead, Read, Write};

/// How a record names its input.
pub enum Records<'a> {
    /// By label (the space's labels, unique).
    Labels(&'a [String]),
    /// By 0-based index (`n` inputs); only on request.
    Index(usize),
    /// By raw coordinates, snapped to the nearest input within the snapper's limit.
    Snap(&'a Snapper),
    /// Raw coordinates released by the planar Laplace (`--sampler planar-laplace`): no
    /// input to name, each record its own release ([`crate::planar_laplace`]).
    Planar(&'a crate::planar_laplace::PlanarLaplace),
}

/// What is written for an output column.
#[derive(Clone, Debug, PartialEq)]
pub enum Release {
    Label(String),
    Index(usize),
    /// Coordinates (lat, lon in degrees for haversine spaces).
    Point(Vec<f64>),
    /// Exact coordinates as decimals (the planar Laplace's grid points, printed exactly).
    Decimal(Vec<String>),
}

impl Release {
    fn text(&self) -> String {
        match self {
            Release::Label(s) => s.clone(),
            Release::Index(i) => i.to_string(),
            Release::Point(p) => p.iter().map(f64::to_string).collect::<Vec<_>>().join(","),
            Release::Decimal(p) => p.join(","),
        }
    }

    pub fn json(&self) -> Value {
        match self {
            Release::Label(s) => Value::String(s.clone()),
            Release::Index(i) => Value::from(*i),
            Release::Point(p) => Value::Array(p.iter().map(|&x| crate::io::f64_value(x)).collect()),
            Release::Decimal(p) => Value::Array(
                p.iter()
                    .map(|x| serde_json::from_str(x).unwrap_or(Value::Null))
                    .collect(),
            ),
        }
    }
}

/// How records are laid out.
#[derive(Clone, Debug, PartialEq)]
pub enum Format {
    /// One record per line (the whole line, trimmed).
    Lines,
    /// CSV with a header row; the record is the named column, or for snapping the
    /// coordinate columns (one column holding `lat,lon` also works).
    Csv { columns: Vec<String> },
    /// One JSON object per line; the record is the named field (a label string, an
    /// index, or for snapping an array of coordinates or a `"lat,lon"` string).
    JsonLines { field: String },
}

/// What to do with a record that names no input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnBad {
    /// Stop with an error naming the line (nothing is written: see `crate::atomic`).
    Error,
    /// Write the record with an empty release and report it.
    Skip,
}

/// How a stream is read and written.
pub struct Options<'a> {
    pub format: Format,
    pub records: Records<'a>,
    /// The release written for each output column of the mechanism.
    pub releases: &'a [Release],
    pub on_bad: OnBad,
    /// Keep the true record (CSV columns, the JSON field) beside its release. Off by
    /// default (issue 53): a released file holds the release in place of the secret.
    pub keep_input: bool,
}

/// Lines skipped ([`OnBad::Skip`]): how many, and the first [`SKIPS_KEPT`] with why.
pub const SKIPS_KEPT: usize = 10;

/// How far snapping moved the records, in the space's distance unit.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Moved {
    pub max: f64,
    /// The line of the record moved farthest.
    pub max_line: usize,
    pub mean: f64,
}

/// What a stream did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Records released.
    pub records: usize,
    /// Records skipped, and the first few (line, why).
    pub skipped: usize,
    pub first_skips: Vec<(usize, String)>,
    /// A first line read as a header (plain lines with coordinates) and copied.
    pub header: bool,
    /// Snapping distances, when records were snapped.
    pub moved: Option<Moved>,
    /// How many records named each input ([`count`]; indices past the last named input
    /// are not allocated: [`count`] pads to n).
    pub per_input: Vec<u64>,
}

/// A record that names no input, or a stream that cannot be read or written.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordError {
    /// 1-based line of the input (0: not tied to a line).
    pub line: usize,
    pub message: String,
}

impl std::fmt::Display for RecordError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "line {}: {}", self.line, self.message)
        } else {
            f.write_str(&self.message)
        }
    }
}

fn at(line: usize) -> impl Fn(String) -> RecordError {
    move |message| RecordError { line, message }
}

fn write_error(e: impl std::fmt::Display) -> RecordError {
    RecordError {
        line: 0,
        message: format!("cannot write: {e}"),
    }
}

/// Stream `input` → `output` under `opts`, sampling each record's release with `sampler`.
pub fn stream<R: Rng>(
    sampler: &mut Sampler,
    opts: &Options,
    input: impl BufRead,
    output: impl Write,
    rng: &mut R,
) -> Result<Summary, RecordError> {
    run(Some(sampler), opts, input, output, rng)
}

/// Stream coordinate records → their planar Laplace releases (`opts.records` is
/// [`Records::Planar`]).
pub fn stream_planar<R: Rng>(
    opts: &Options,
    input: impl BufRead,
    output: impl Write,
    rng: &mut R,
) -> Result<Summary, RecordError> {
    debug_assert!(matches!(opts.records, Records::Planar(_)));
    run(None, opts, input, output, rng)
}

/// Count how many records name each of the `n` inputs (`mdp prior`, Python's
/// `prior_from`): the records read as [`stream`] reads them (labels, indices or snapped
/// coordinates; lines, CSV or JSON lines; `on_bad`), nothing sampled or written.
pub fn count(opts: &Options, input: impl BufRead, n: usize) -> Result<Summary, RecordError> {
    // No draw is made without a sampler: the generator is never used.
    let mut unused = rand_chacha::ChaCha20Rng::seed_from_u64(0);
    let mut s = run(None, opts, input, std::io::sink(), &mut unused)?;
    s.per_input.resize(n, 0);
    Ok(s)
}

fn run<R: Rng>(
    mut sampler: Option<&mut Sampler>,
    opts: &Options,
    input: impl BufRead,
    mut output: impl Write,
    rng: &mut R,
) -> Result<Summary, RecordError> {
    let mut s = State {
        opts,
        index: match opts.records {
            Records::Labels(l) => l.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect(),
            _ => HashMap::new(),
        },
        summary: Summary::default(),
        moved_sum: 0.0,
    };
    let sampler = &mut sampler;
    match &opts.format {
        Format::Lines => s.lines(sampler, input, &mut output, rng)?,
        Format::Csv { columns } => s.csv(sampler, columns, input, &mut output, rng)?,
        Format::JsonLines { field } => s.json_lines(sampler, field, input, &mut output, rng)?,
    }
    output.flush().map_err(write_error)?;
    if let Some(m) = &mut s.summary.moved {
        m.mean = s.moved_sum / s.summary.records.max(1) as f64;
    }
    Ok(s.summary)
}

/// A record's content, by format.
enum Raw<'r> {
    Text(&'r str),
    Fields(Vec<&'r str>),
    Json(&'r Value),
}

struct State<'o, 'a> {
    opts: &'o Options<'a>,
    index: HashMap<&'a str, usize>,
    summary: Summary,
    moved_sum: f64,
}

impl<'o> State<'o, '_> {
    /// The input a record names (and how far it was snapped).
    fn resolve(&self, raw: Raw) -> Result<(usize, Option<f64>), String> {
        let text = match &raw {
            Raw::Text(t) => Some(t.trim()),
            Raw::Fields(f) if f.len() == 1 => Some(f[0].trim()),
            Raw::Fields(_) => None,
            Raw::Json(Value::String(t)) => Some(t.trim()),
            Raw::Json(Value::Number(x)) => Some(x.as_str()),
            Raw::Json(_) => None,
        };
        if text == Some("") {
            return Err("blank record".into());
        }
        match &self.opts.records {
            Records::Labels(_) => {
                let t = text.ok_or("expected a label")?;
                self.index.get(t).map(|&w| (w, None)).ok_or_else(|| {
                    format!(
                        "unknown input label {:?}",
                        t.chars().take(80).collect::<String>()
                    )
                })
            }
            Records::Index(n) => {
                let t = text.ok_or("expected an input index")?;
                match t.parse::<usize>() {
                    Ok(w) if w < *n => Ok((w, None)),
                    Ok(w) => Err(format!("input index {w} out of range 0..{n}")),
                    Err(_) => Err(format!("not an input index: {t:?}")),
                }
            }
            Records::Snap(snapper) => {
                let x = match (&raw, text) {
                    (_, Some(t)) => snapper.parse(t)?,
                    (Raw::Fields(f), None) => snapper.parse_fields(f)?,
                    (Raw::Json(Value::Array(a)), None) => snapper.parse_json(a)?,
                    _ => return Err("expected coordinates".into()),
                };
                let (w, d) = snapper.snap(&x)?;
                Ok((w, Some(d)))
            }
            Records::Planar(_) => Err("a planar Laplace record names no input".into()),
        }
    }

    /// Resolve and sample one record: the release, or why it has none (after `on_bad`).
    fn release<R: Rng>(
        &mut self,
        sampler: &mut Option<&mut Sampler>,
        line: usize,
        raw: Raw,
        rng: &mut R,
    ) -> Result<Option<Cow<'o, Release>>, RecordError> {
        if let Records::Planar(pl) = self.opts.records {
            return match planar_coordinates(&raw).and_then(|x| pl.release(&x, rng)) {
                Ok(y) => {
                    self.summary.records += 1;
                    Ok(Some(Cow::Owned(Release::Decimal(
                        y.iter().map(crate::exact::format_rational).collect(),
                    ))))
                }
                Err(why) => self.bad(line, why).map(|()| None),
            };
        }
        match self.resolve(raw) {
            Ok((w, moved)) => {
                if let Some(d) = moved {
                    let m = self.summary.moved.get_or_insert_with(Moved::default);
                    if d > m.max || m.max_line == 0 {
                        m.max = d.max(m.max);
                        m.max_line = line;
                    }
                    self.moved_sum += d;
                }
                self.summary.records += 1;
                if self.summary.per_input.len() <= w {
                    self.summary.per_input.resize(w + 1, 0);
                }
                self.summary.per_input[w] += 1;
                Ok(match sampler {
                    // Borrowed: no copy of the release on the hot path.
                    Some(sampler) => {
                        Some(Cow::Borrowed(&self.opts.releases[sampler.sample(w, rng)]))
                    }
                    None => None,
                })
            }
            Err(why) => self.bad(line, why).map(|()| None),
        }
    }

    fn bad(&mut self, line: usize, why: String) -> Result<(), RecordError> {
        match self.opts.on_bad {
            OnBad::Error => Err(RecordError { line, message: why }),
            OnBad::Skip => {
                self.summary.skipped += 1;
                if self.summary.first_skips.len() < SKIPS_KEPT {
                    self.summary.first_skips.push((line, why));
                }
                Ok(())
            }
        }
    }

    fn lines<R: Rng>(
        &mut self,
        sampler: &mut Option<&mut Sampler>,
        input: impl BufRead,
        out: &mut impl Write,
        rng: &mut R,
    ) -> Result<(), RecordError> {
        let snapping = matches!(self.opts.records, Records::Snap(_) | Records::Planar(_));
        for (i, line) in input.lines().enumerate() {
            let line = line.map_err(|e| at(i + 1)(format!("cannot read: {e}")))?;
            if i == 0 && snapping && is_header(&line) {
                writeln!(out, "{}", line.trim()).map_err(write_error)?;
                self.summary.header = true;
                continue;
            }
            let text = match self.release(sampler, i + 1, Raw::Text(&line), rng)? {
                Some(r) => r.text(),
                None => String::new(),
            };
            writeln!(out, "{text}").map_err(write_error)?;
        }
        Ok(())
    }

    fn csv<R: Rng>(
        &mut self,
        sampler: &mut Option<&mut Sampler>,
        columns: &[String],
        input: impl Read,
        out: &mut impl Write,
        rng: &mut R,
    ) -> Result<(), RecordError> {
        let blanks = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let starts = std::rc::Rc::new(std::cell::RefCell::new(std::collections::VecDeque::new()));
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(true)
            .flexible(false)
            .from_reader(BlankLines::new(input, blanks.clone(), starts.clone()));
        // The line a record starts on, from its byte offset: the csv crate's own line count
        // is one short after CRLF line ends (issue 53), so the lines are counted here.
        let line_of = |p: &csv::Position| -> usize {
            let mut q = starts.borrow_mut();
            while q.front().is_some_and(|&(at, _)| at < p.byte()) {
                q.pop_front();
            }
            q.front().map_or(p.line() as usize, |&(_, line)| line)
        };
        let headers = rdr
            .headers()
            .map_err(|e| at(1)(format!("not CSV: {e}")))?
            .clone();
        let idx: Vec<usize> = columns
            .iter()
            .map(|c| {
                headers.iter().position(|h| h.trim() == c).ok_or_else(|| {
                    at(1)(format!(
                        "no column {c:?}; the header has {}",
                        headers
                            .iter()
                            .map(|h| format!("{h:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })
            })
            .collect::<Result<_, _>>()?;
        // The release's columns: one per coordinate column when points are released into
        // as many columns (`lat_private`, `lon_private`), else one (`poi_private`).
        let split = match (self.opts.releases.first(), &self.opts.records) {
            (_, Records::Planar(_)) => columns.len() == 2,
            (Some(Release::Point(p)), _) => p.len() == columns.len() && columns.len() > 1,
            _ => false,
        };
        let added: Vec<String> = if split {
            columns.iter().map(|c| format!("{c}_private")).collect()
        } else {
            vec![format!("{}_private", columns.join("_"))]
        };
        if let Some(a) = added
            .iter()
            .find(|a| headers.iter().any(|h| h == a.as_str()))
        {
            return Err(at(1)(format!("the input already has a column {a:?}")));
        }
        // The columns written back: all, or all but the record's own.
        let kept: Vec<usize> = (0..headers.len())
            .filter(|i| self.opts.keep_input || !idx.contains(i))
            .collect();
        let mut wtr = csv::WriterBuilder::new().from_writer(out);
        let mut head: Vec<&str> = kept.iter().map(|&i| &headers[i]).collect();
        head.extend(added.iter().map(String::as_str));
        wtr.write_record(&head).map_err(write_error)?;
        // The csv reader passes over blank lines without a record: `BlankLines` notes them
        // as the bytes go by, and each is reported (or skipped) before the next record.
        // The reader reads ahead: only the blank lines before this record are reported
        // with it, in order; the rest wait for their record (or the end).
        let mut record = csv::StringRecord::new();
        loop {
            let more = rdr.read_record(&mut record);
            let upto = match &more {
                Ok(true) => record.position().map_or(usize::MAX, line_of),
                _ => usize::MAX,
            };
            let before: Vec<usize> = {
                let mut b = blanks.borrow_mut();
                let split = b.partition_point(|&l| l < upto);
                b.drain(..split).collect()
            };
            for blank in before {
                self.bad(blank, "blank line (no record to write back)".into())?;
            }
            match more {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    let line = e.position().map_or(0, line_of);
                    return Err(RecordError {
                        line,
                        message: format!("not CSV: {e}"),
                    });
                }
            }
            let line = record.position().map_or(0, line_of);
            let fields: Vec<&str> = idx.iter().map(|&i| &record[i]).collect();
            let release = self.release(sampler, line, Raw::Fields(fields), rng)?;
            let texts: Vec<String> = match release.as_deref() {
                Some(Release::Point(p)) if split => p.iter().map(f64::to_string).collect(),
                Some(Release::Decimal(p)) if split => p.clone(),
                Some(r) => vec![r.text()],
                None => vec![String::new(); added.len()],
            };
            let mut row: Vec<&str> = kept.iter().map(|&i| &record[i]).collect();
            row.extend(texts.iter().map(String::as_str));
            wtr.write_record(&row).map_err(write_error)?;
        }
        wtr.flush().map_err(write_error)?;
        Ok(())
    }

    fn json_lines<R: Rng>(
        &mut self,
        sampler: &mut Option<&mut Sampler>,
        field: &str,
        input: impl BufRead,
        out: &mut impl Write,
        rng: &mut R,
    ) -> Result<(), RecordError> {
        let added = format!("{field}_private");
        for (i, line) in input.lines().enumerate() {
            let line = line.map_err(|e| at(i + 1)(format!("cannot read: {e}")))?;
            let (mut obj, reported) = match serde_json::from_str::<Value>(&line) {
                Ok(Value::Object(o)) => (o, false),
                Ok(_) => {
                    self.bad(i + 1, "not a JSON object".into())?;
                    (Map::new(), true)
                }
                Err(_) if line.trim().is_empty() => {
                    self.bad(i + 1, "blank line".into())?;
                    (Map::new(), true)
                }
                Err(e) => {
                    self.bad(i + 1, format!("not JSON: {e}"))?;
                    (Map::new(), true)
                }
            };
            if obj.contains_key(&added) {
                return Err(at(i + 1)(format!(
                    "the object already has a field {added:?}"
                )));
            }
            let release = if reported {
                Value::Null
            } else {
                match obj.get(field) {
                    None => {
                        self.bad(i + 1, format!("no field {field:?}"))?;
                        Value::Null
                    }
                    Some(v) => {
                        let v = v.clone();
                        match self.release(sampler, i + 1, Raw::Json(&v), rng)? {
                            Some(r) => r.json(),
                            None => Value::Null,
                        }
                    }
                }
            };
            if !self.opts.keep_input {
                obj.remove(field);
            }
            obj.insert(added.clone(), release);
            serde_json::to_writer(&mut *out, &Value::Object(obj)).map_err(write_error)?;
            out.write_all(b"\n").map_err(write_error)?;
        }
        Ok(())
    }
}

/// A planar Laplace record's two coordinates, exactly: two CSV fields, one text `a,b` (a
/// line, a field), or a JSON array of two numbers.
fn planar_coordinates(raw: &Raw) -> Result<[crate::exact::Q; 2], String> {
    let texts: Vec<String> = match raw {
        Raw::Fields(f) if f.len() == 2 => f.iter().map(|s| s.trim().to_string()).collect(),
        Raw::Fields(f) if f.len() == 1 => f[0].split(',').map(|s| s.trim().to_string()).collect(),
        Raw::Text(t) => t.split(',').map(|s| s.trim().to_string()).collect(),
        Raw::Json(Value::String(t)) => t.split(',').map(|s| s.trim().to_string()).collect(),
        Raw::Json(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::Number(n) => Ok(n.as_str().to_string()),
                _ => Err("expected two numbers".to_string()),
            })
            .collect::<Result<_, _>>()?,
        _ => return Err("expected two coordinates".into()),
    };
    if texts.iter().all(String::is_empty) {
        return Err("blank record".into());
    }
    let v: Vec<crate::exact::Q> = texts
        .iter()
        .map(|t| crate::exact::parse_rational(t).map_err(|e| format!("coordinate {t:?}: {e}")))
        .collect::<Result<_, _>>()?;
    <[crate::exact::Q; 2]>::try_from(v)
        .map_err(|v| format!("expected two coordinates, got {}", v.len()))
}

/// A reader that notes the 1-based numbers of blank lines (outside quoted CSV fields) in
/// the bytes it passes on: an empty line, or one of only a carriage return; and where each
/// line's content starts outside quotes (byte offset, line), so a record's line follows
/// from its byte offset whatever the line ends (LF, CRLF, CR-free).
struct BlankLines<R> {
    inner: R,
    blanks: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
    starts: std::rc::Rc<std::cell::RefCell<std::collections::VecDeque<(u64, usize)>>>,
    /// Bytes passed on so far.
    pos: u64,
    line: usize,
    /// Bytes of the current line so far (a lone '\r' does not count).
    width: usize,
    /// Inside a quoted field (a quote opens one only at the start of a field, as in the
    /// csv crate: `Rome,5"` has a literal quote).
    quoted: bool,
    field_start: bool,
    /// The last byte was a CR (a line end unless an LF follows).
    pending_cr: bool,
}

impl<R: Read> BlankLines<R> {
    fn new(
        inner: R,
        blanks: std::rc::Rc<std::cell::RefCell<Vec<usize>>>,
        starts: std::rc::Rc<std::cell::RefCell<std::collections::VecDeque<(u64, usize)>>>,
    ) -> Self {
        BlankLines {
            inner,
            blanks,
            starts,
            pos: 0,
            line: 1,
            width: 0,
            quoted: false,
            field_start: true,
            pending_cr: false,
        }
    }
}

impl<R: Read> BlankLines<R> {
    /// A line break (LF, the LF of a CRLF, or a lone CR): a blank line is noted.
    fn end_line(&mut self) {
        if self.width == 0 && !self.quoted {
            self.blanks.borrow_mut().push(self.line);
        }
        self.line += 1;
        self.width = 0;
        self.field_start = !self.quoted;
    }
}

impl<R: Read> Read for BlankLines<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        for &b in &buf[..n] {
            // A CR not followed by LF ends a line of its own (classic Mac line ends).
            if self.pending_cr && b != b'\n' {
                self.end_line();
            }
            self.pending_cr = false;
            if self.width == 0 && !self.quoted && b != b'\n' && b != b'\r' {
                self.starts.borrow_mut().push_back((self.pos, self.line));
            }
            self.pos += 1;
            match b {
                b'"' if self.quoted || self.field_start => {
                    self.quoted = !self.quoted;
                    self.width += 1;
                    self.field_start = false;
                }
                b'\n' => self.end_line(),
                b'\r' => self.pending_cr = true,
                b',' => {
                    self.width += 1;
                    self.field_start = !self.quoted;
                }
                _ => {
                    self.width += 1;
                    self.field_start = false;
                }
            }
        }
        Ok(n)
    }
}

/// A first line of plain coordinates that holds no number: a header such as `lat,lon`.
fn is_header(line: &str) -> bool {
    let fields = coordinate_fields(line);
    !fields.is_empty() && fields.iter().all(|f| f.parse::<f64>().is_err())
}

/// The fields of a plain line of coordinates: separated by commas or white space.
fn coordinate_fields(line: &str) -> Vec<&str> {
    line.split(|c: char| c == ',' || c.is_whitespace())
        .filter(|s| !s.is_empty())
        .collect()
}

/// How far [`Snapper::default_limit`] lets a record be moved, in multiples of the largest
/// distance from an input to its nearest other input.
pub const SNAP_FACTOR: f64 = 2.0;

/// Nearest input to raw coordinates (lat, lon in degrees for haversine; a vector for the
/// other coordinate kinds), in floating point, ties to the lower index: a deterministic
/// pre-processing of the record (privacy then holds between the snapped inputs). A record
/// farther than `limit` from every input is refused: a swapped `lon,lat` or a point in
/// another city is not silently moved onto the space.
pub struct Snapper {
    kind: MetricKind,
    points: Vec<Vec<f64>>,
    /// Haversine radius (the distance unit: km for the default radius).
    radius: f64,
    /// Largest distance a record may be moved.
    pub limit: f64,
}

impl Snapper {
    /// `None` when the space has no coordinates (explicit tables and graphs). `limit`:
    /// the largest distance a record may be moved, by default [`Snapper::default_limit`].
    pub fn new(space: &Space, limit: Option<f64>) -> Option<Snapper> {
        if !space.kind().has_points() {
            return None;
        }
        let points = space.points()[..space.n()]
            .iter()
            .map(|p| p.iter().map(f64_nearest).collect())
            .collect();
        let mut s = Snapper {
            kind: space.kind(),
            points,
            radius: if space.kind() == MetricKind::Haversine {
                f64_nearest(space.radius())
            } else {
                1.0
            },
            limit: f64::INFINITY,
        };
        s.limit = limit.unwrap_or_else(|| s.default_limit());
        Some(s)
    }

    /// [`SNAP_FACTOR`] times the largest nearest-neighbour distance among the inputs (the
    /// space's spacing where it is sparsest); ∞ for a single input.
    pub fn default_limit(&self) -> f64 {
        let n = self.points.len();
        let mut widest: f64 = 0.0;
        for i in 0..n {
            let nearest = (0..n)
                .filter(|&j| j != i)
                .map(|j| self.distance(&self.points[i], &self.points[j]))
                .fold(f64::INFINITY, f64::min);
            if nearest.is_finite() {
                widest = widest.max(nearest);
            }
        }
        if n < 2 {
            f64::INFINITY
        } else {
            SNAP_FACTOR * widest
        }
    }

    /// The distance unit's name for messages.
    pub fn unit(&self) -> &'static str {
        if self.kind == MetricKind::Haversine {
            "km (haversine, the space's radius)"
        } else {
            "the space's units"
        }
    }

    /// The coordinates of one record: numbers separated by commas or white space.
    pub fn parse(&self, rec: &str) -> Result<Vec<f64>, String> {
        self.parse_fields(&coordinate_fields(rec))
    }

    /// Coordinates from separate fields (CSV columns).
    pub fn parse_fields(&self, fields: &[&str]) -> Result<Vec<f64>, String> {
        let x: Vec<f64> = fields
            .iter()
            .map(|s| {
                s.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("not a number: {s:?}"))
            })
            .collect::<Result<_, _>>()?;
        self.check(x)
    }

    /// Coordinates from a JSON array of numbers.
    pub fn parse_json(&self, a: &[Value]) -> Result<Vec<f64>, String> {
        let x: Vec<f64> = a
            .iter()
            .map(|v| {
                v.as_f64()
                    .filter(|v| v.is_finite())
                    .ok_or_else(|| format!("not a number: {v}"))
            })
            .collect::<Result<_, _>>()?;
        self.check(x)
    }

    fn check(&self, x: Vec<f64>) -> Result<Vec<f64>, String> {
        let dim = self.points.first().map_or(0, Vec::len);
        if x.len() != dim {
            return Err(format!("{} coordinates, the space has {dim}", x.len()));
        }
        if self.kind == MetricKind::Haversine
            && !((-90.0..=90.0).contains(&x[0]) && (-180.0..=180.0).contains(&x[1]))
        {
            return Err("latitude must be in [-90, 90] and longitude in [-180, 180]".into());
        }
        Ok(x)
    }

    /// The nearest input to `x`.
    pub fn nearest(&self, x: &[f64]) -> usize {
        self.nearest_with_distance(x).0
    }

    /// The nearest input to `x` and its distance.
    pub fn nearest_with_distance(&self, x: &[f64]) -> (usize, f64) {
        let mut best = (f64::INFINITY, 0);
        for (i, p) in self.points.iter().enumerate() {
            let d = self.monotone(p, x);
            if d < best.0 {
                best = (d, i);
            }
        }
        (best.1, self.distance_of_monotone(best.0))
    }

    /// The nearest input to `x`, refused past [`Snapper::limit`].
    pub fn snap(&self, x: &[f64]) -> Result<(usize, f64), String> {
        let (w, d) = self.nearest_with_distance(x);
        if d > self.limit {
            return Err(format!(
                "{d:.4} from the nearest input, beyond the snapping limit {:.4} ({}; raise it with --snap-max)",
                self.limit,
                self.unit()
            ));
        }
        Ok((w, d))
    }

    /// The distance between two points, in the space's unit.
    fn distance(&self, p: &[f64], x: &[f64]) -> f64 {
        self.distance_of_monotone(self.monotone(p, x))
    }

    /// A monotone function of the distance (squared for Euclidean, the haversine term for
    /// great circles): cheap for the nearest-input search.
    fn monotone(&self, p: &[f64], x: &[f64]) -> f64 {
        let diffs = p.iter().zip(x).map(|(a, b)| (a - b).abs());
        match self.kind {
            MetricKind::Manhattan => diffs.sum(),
            MetricKind::Chebyshev => diffs.fold(0.0, f64::max),
            MetricKind::Haversine => {
                let (la, lb) = (p[0].to_radians(), x[0].to_radians());
                let dlat = (lb - la) / 2.0;
                let dlon = (x[1] - p[1]).to_radians() / 2.0;
                dlat.sin().powi(2) + la.cos() * lb.cos() * dlon.sin().powi(2)
            }
            _ => diffs.map(|d| d * d).sum(),
        }
    }

    fn distance_of_monotone(&self, m: f64) -> f64 {
        match self.kind {
            MetricKind::Manhattan | MetricKind::Chebyshev => m,
            MetricKind::Haversine => 2.0 * self.radius * m.clamp(0.0, 1.0).sqrt().asin(),
            _ => m.sqrt(),
        }
    }
}

/// What the releases are written as: the inputs' labels, their indices, or their
/// coordinates (when records are snapped).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    Labels,
    Index,
    Coordinates,
}

/// The release written for each output column of a mechanism: an output that is an input
/// (`Outputs::Inputs`, `Outputs::OfInputs`) is named as `naming` says (labels need
/// `labels`, else its index); opaque outputs by their labels; output points by their
/// coordinates.
pub fn releases(
    space: &Space,
    outputs: &crate::mechanism::Outputs,
    labels: Option<&[String]>,
    naming: Naming,
) -> Vec<Release> {
    releases_of(space.n(), Some(space.points()), outputs, labels, naming)
}

/// [`releases`] from the number of inputs and their coordinates, if any (a graph has none:
/// sites are then named by label or index).
pub fn releases_of(
    n: usize,
    points: Option<&[Vec<crate::exact::Q>]>,
    outputs: &crate::mechanism::Outputs,
    labels: Option<&[String]>,
    naming: Naming,
) -> Vec<Release> {
    use crate::mechanism::Outputs;
    let point = |p: &[crate::exact::Q]| Release::Point(p.iter().map(f64_nearest).collect());
    let site = |i: usize| match (naming, labels, points) {
        (Naming::Coordinates, _, Some(p)) => point(&p[i]),
        (Naming::Labels, Some(l), _) => Release::Label(l[i].clone()),
        _ => Release::Index(i),
    };
    match outputs {
        Outputs::Inputs => (0..n).map(site).collect(),
        Outputs::OfInputs(v) => v.iter().map(|&i| site(i)).collect(),
        Outputs::Labels(l) => l.iter().map(|s| Release::Label(s.clone())).collect(),
        Outputs::Points(p) => p.iter().map(|x| point(x)).collect(),
    }
}
