//! The `mdp` binary's commands of the mechanism suite: `privatize`, `estimate madlib`,
//! `calibrate` and `experiment` (part of the binary, declared in `main.rs`; the work is
//! done by the library's [`mdp::privatize`], [`mdp::calibrate`] and [`mdp::experiment`]).

use crate::{emit, epsilon, lp_space, require_metric, MAX_PREC};
use mdp::audit::{self, Verdict};
use mdp::calibrate::CalibrationError;
use mdp::exact::{f64_nearest, parse_rational, q_from_f64, Q};
use mdp::experiment::{self, Family};
use mdp::io::{self, Limits};
use mdp::mechanism::Outputs;
use mdp::mechanisms::{madlib, tem};
use mdp::metric::Space;
use mdp::privatize::{self, Sampler};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct PrivatizeArgs {
    /// An mdp/1 mechanism file, or a large-mechanism container's header (its matrix in a
    /// .npy file beside it): its rows, normalized exactly (a container: its float64 rows,
    /// exact dyadics), must pass the audit under the policy below (a container: the
    /// structured audit) before one record is read.
    #[arg(long, conflicts_with = "sampler")]
    mechanism: Option<String>,
    /// A container's audit is planned before its matrix is read and refused past this
    /// (bytes, or with a K, M, G suffix).
    #[arg(long, default_value = "8G", value_parser = crate::cli::memory_value)]
    max_memory: u64,
    /// Or a sampler without a matrix: TEM's Algorithm 3 (exactly sampled) or Madlib (a
    /// floating-point sampler), both on --space at --epsilon; or the planar Laplace on
    /// coordinate records (exactly sampled; needs --epsilon or --level/--radius).
    #[arg(long, value_enum)]
    sampler: Option<SamplerArg>,
    /// The space: for --sampler, the space to sample on (required); with --mechanism,
    /// the pipeline's metric (builtin, CSV, GeoJSON, JSON): the file's metric, points and
    /// labels must equal it exactly, or the file is refused (a file's metric is a claim).
    #[arg(long)]
    space: Option<String>,
    #[command(flatten)]
    pin: crate::cli::PinArgs,
    /// Privacy level ε > 0 of --sampler (planar-laplace: per km for lat,lon records, per
    /// unit for x,y).
    #[arg(long)]
    epsilon: Option<String>,
    /// planar-laplace in Location Guard's terms: privacy level L within radius R (km for
    /// lat,lon), ε = L/R. Instead of --epsilon.
    #[arg(
        long,
        value_name = "L",
        requires = "radius",
        conflicts_with = "epsilon"
    )]
    level: Option<String>,
    /// planar-laplace: the radius R of --level.
    #[arg(long, value_name = "R", requires = "level")]
    radius: Option<String>,
    /// planar-laplace: the records' metric (default: haversine when --column names lat,lon).
    #[arg(long, value_enum)]
    metric: Option<PlaneMetric>,
    /// planar-laplace: the box records lie in and releases are clamped to,
    /// MIN0,MIN1,MAX0,MAX1 (lat_min,lon_min,lat_max,lon_max in degrees; required for
    /// lat,lon: the projection's bound is the region's, never the data's); or a space
    /// (builtin, CSV, GeoJSON, JSON): its points' box, releases then snapped to the
    /// nearest point.
    #[arg(long, value_name = "BOX|SPACE")]
    region: Option<String>,
    /// planar-laplace: the output grid, in the records' unit (degrees or the unit);
    /// default 10^(⌊log10 θ⌋ − 6) for the noise scale θ (printed in the summary).
    #[arg(long, value_name = "H")]
    granularity: Option<String>,
    /// planar-laplace: the summary's radius holds the noise with this probability.
    #[arg(long, default_value = "0.95", value_name = "C")]
    confidence: f64,
    /// TEM's β (Theorem 4.2).
    #[arg(long, default_value = "0.001")]
    beta: f64,
    #[command(flatten)]
    rec: RecordArgs,
    /// With --format csv or jsonl: keep the true record (its columns, its field) beside the
    /// release. By default the release replaces it: a released file does not carry the
    /// secret it protects.
    #[arg(long)]
    keep_input: bool,
    /// Reproducible sampling from this seed. For tests only: the output is then a
    /// deterministic function of the input. Default: seeded by the operating system.
    #[arg(long)]
    seed: Option<u64>,
    /// Refuse the mechanism unless it is proven private at this ε (default: its claim).
    #[arg(long, value_name = "E")]
    require_epsilon: Option<String>,
    /// Accept a mechanism that claims privacy only within η when η ≥ ETA.
    #[arg(long, value_name = "ETA", conflicts_with = "allow_scoped")]
    require_within: Option<String>,
    /// Accept a mechanism that claims privacy only within any η.
    #[arg(long)]
    allow_scoped: bool,
    /// Where to write the sampled outputs; `-` for standard output.
    #[arg(short, long, default_value = "-")]
    output: String,
}

/// How records are read and name their inputs (`mdp privatize`, `mdp prior`).
#[derive(clap::Args)]
pub struct RecordArgs {
    /// Input labels, one per line (n unique lines). Records then name inputs by label and
    /// outputs are written as labels. Without it, the labels of --space, or of a built-in
    /// space named in the file's meta.space when it equals the file's metric.
    #[arg(long)]
    labels: Option<String>,
    /// Records name inputs by 0-based index (and outputs are written as indices), even
    /// when the space has labels.
    #[arg(long, conflicts_with = "snap")]
    by_index: bool,
    /// Records are raw coordinates (`lat,lon` in degrees for haversine spaces, a vector
    /// otherwise), snapped to the nearest input; outputs are written as coordinates.
    #[arg(long)]
    snap: bool,
    /// With --snap: refuse a record farther than this from every input (the space's
    /// distance unit: km for haversine spaces). Default: twice the largest distance from
    /// an input to its nearest other input.
    #[arg(long, value_name = "DIST", requires = "snap")]
    snap_max: Option<String>,
    /// How records are laid out: `lines` (one record per line; output line i is the
    /// release of input line i), `csv` (a header row; the record is --column; every row is
    /// written back with its other columns plus COLUMN_private, or LAT_private and
    /// LON_private for coordinates), `jsonl` (one JSON object per line; the record is
    /// --field; every object is written back with FIELD_private in place of FIELD).
    #[arg(long, value_enum, default_value = "lines")]
    format: FormatArg,
    /// With --format csv: the record's column (for --snap, the coordinate columns,
    /// comma-separated: `lat,lon`).
    #[arg(long, value_name = "NAME")]
    column: Option<String>,
    /// With --format jsonl: the record's field.
    #[arg(long, value_name = "NAME")]
    field: Option<String>,
    /// A record that names no input (blank, unknown label, index out of range, beyond
    /// --snap-max) is skipped and reported, its output record left with an empty release,
    /// instead of stopping with an error.
    #[arg(long)]
    skip_bad: bool,
    /// Records (one per line); `-` for standard input.
    #[arg(long, default_value = "-")]
    input: String,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Eq)]
pub enum FormatArg {
    Lines,
    Csv,
    Jsonl,
}

#[derive(clap::ValueEnum, Clone, Copy)]
pub enum SamplerArg {
    Tem,
    Madlib,
    /// Geo-indistinguishability's planar Laplace on coordinate records, exactly sampled.
    PlanarLaplace,
}

/// The metric of planar Laplace records.
#[derive(clap::ValueEnum, Clone, Copy)]
pub enum PlaneMetric {
    /// Latitude, longitude in degrees; ε per great-circle km.
    Haversine,
    /// Plane coordinates; ε per unit.
    Euclidean,
}

/// A space and its labels (built-in spaces, CSV and GeoJSON files bring their own).
pub(crate) fn space_with_labels(spec: &str) -> Result<(Space, Option<Vec<String>>), String> {
    mdp::import::load_space_with_labels(spec, crate::label_column(), &Limits::default())
        .map_err(|e| format!("--space: {e}"))
}

/// Labels from a file: one per line, n of them, unique.
fn labels_file(path: &str, n: usize) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("--labels: {path}: {e}"))?;
    let l: Vec<String> = text
        .lines()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if l.len() != n {
        return Err(format!("--labels: {} labels for {n} inputs", l.len()));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(d) = l.iter().find(|x| !seen.insert(x.as_str())) {
        return Err(format!("--labels: label {d:?} is not unique"));
    }
    Ok(l)
}

/// The audit policy of `privatize` (the same flags as `mdp-audit`'s gate).
fn privatize_policy(a: &PrivatizeArgs) -> Result<audit::Options, String> {
    let positive = |flag: &str, s: &str| -> Result<Q, String> {
        let q = parse_rational(s).map_err(|e| format!("--{flag}: {e}"))?;
        if q <= 0u32 {
            return Err(format!("--{flag}: must be > 0"));
        }
        Ok(q)
    };
    Ok(audit::Options {
        epsilon: a
            .require_epsilon
            .as_deref()
            .map(|e| positive("require-epsilon", e))
            .transpose()?,
        scope: audit::ScopePolicy::from_flags(
            a.require_within
                .as_deref()
                .map(|e| positive("require-within", e))
                .transpose()?,
            a.allow_scoped,
        ),
        metric: a.pin.pin(a.space.as_deref())?,
        ..audit::Options::default()
    })
}

/// The sampler, its space, the output sites of its columns (`None`: output labels) and
/// the labels that come with it.
struct Source {
    sampler: Sampler,
    /// The number of inputs.
    n: usize,
    /// The space, when it has one as a table of points or distances (a graph container has
    /// only its edges: no coordinates to snap to or to name outputs by).
    space: Option<Space>,
    outputs: Outputs,
    labels: Option<Vec<String>>,
}

/// The labels of a mechanism file's inputs: those of `space` (a space with labels that
/// must equal the file's metric), else the file's own (`metric.labels`), else those of a
/// space named in the producer's meta, if it is this metric.
pub(crate) fn file_labels(
    file: &io::MechanismFile,
    space: Option<&str>,
) -> Result<Option<Vec<String>>, String> {
    if space.is_none() && file.labels.is_some() {
        return Ok(file.labels.clone());
    }
    let named = file
        .meta
        .as_ref()
        .and_then(|m| m.get("space"))
        .and_then(|s| s.as_str())
        .map(str::to_string);
    Ok(match (space, named) {
        (Some(spec), _) => labels_of_space(file, spec)?,
        (None, Some(spec)) => match space_with_labels(&spec) {
            Ok((s, l)) if io::space_to_value(&s) == io::space_to_value(&file.space) => l,
            _ => None,
        },
        (None, None) => None,
    })
}

/// The labels of `--space SPEC`, which must be the mechanism file's metric.
pub(crate) fn labels_of_space(
    file: &io::MechanismFile,
    spec: &str,
) -> Result<Option<Vec<String>>, String> {
    let (s, l) = space_with_labels(spec)?;
    if io::space_to_value(&s) != io::space_to_value(&file.space) {
        return Err(format!("--space: {spec} is not the mechanism's metric"));
    }
    Ok(l)
}

#[derive(clap::Args)]
pub struct PlotArgs {
    /// An mdp/1 mechanism file (`-` for standard input). Drawn as it is: a picture, not a
    /// verdict (mdp-audit gives that).
    file: String,
    /// The SVG file to write.
    #[arg(short, long)]
    output: String,
    /// The inputs whose output distributions the map shows: labels or 0-based indices
    /// (repeat or comma-separate, at most 6). Default: the input nearest the space's centre.
    #[arg(long, value_delimiter = ',')]
    input: Vec<String>,
    /// A heat map of the matrix (rows: inputs, columns: outputs) instead of a map; the
    /// default where the space is not 2-D coordinates or haversine.
    #[arg(long)]
    heatmap: bool,
    /// A space with labels (builtin, CSV, GeoJSON) equal to the file's metric, to name the
    /// inputs; default: the space named in the file's meta.space, if it is this metric.
    #[arg(long)]
    space: Option<String>,
    /// Width and height in pixels.
    #[arg(long, default_value = "900,700", value_name = "W,H")]
    size: String,
}

pub fn plot(a: &PlotArgs) -> Result<i32, String> {
    use mdp::plot::{self, Kind, PlotError};
    let bytes =
        io::read_source(&a.file, &Limits::default()).map_err(|e| format!("{}: {e}", a.file))?;
    let file =
        io::read_mechanism(&bytes, &Limits::default()).map_err(|e| format!("{}: {e}", a.file))?;
    let labels = file_labels(&file, a.space.as_deref())?;
    let n = file.space.n();
    let inputs: Vec<usize> = a
        .input
        .iter()
        .map(|s| {
            labels
                .as_ref()
                .and_then(|l| l.iter().position(|x| x == s))
                .or_else(|| s.parse::<usize>().ok().filter(|&i| i < n))
                .ok_or_else(|| format!("--input: {s:?} is neither a label nor an index in 0..{n}"))
        })
        .collect::<Result<_, _>>()?;
    let inputs = if inputs.is_empty() {
        vec![plot::central_input(&file)]
    } else {
        inputs
    };
    let size = a
        .size
        .split_once(',')
        .and_then(|(w, h)| Some((w.trim().parse::<u32>().ok()?, h.trim().parse::<u32>().ok()?)))
        .filter(|&(w, h)| (200..=8000).contains(&w) && (200..=8000).contains(&h))
        .ok_or("--size: expected W,H in pixels, each in 200..=8000")?;
    let title = file
        .meta
        .as_ref()
        .and_then(|m| m.get("mechanism"))
        .and_then(|m| m.as_str())
        .unwrap_or("mechanism")
        .to_string();
    let mut opts = plot::Options {
        kind: if a.heatmap { Kind::Heatmap } else { Kind::Map },
        inputs: &inputs,
        labels: labels.as_deref(),
        title,
        size,
    };
    let out = std::path::Path::new(&a.output);
    match plot::plot(&file, &opts, out) {
        Err(PlotError::NotAMap) if !a.heatmap => {
            eprintln!("plot: not a map (the space is not 2-D coordinates or haversine, or the outputs are not sites): drawing a heat map");
            opts.kind = Kind::Heatmap;
            plot::plot(&file, &opts, out).map_err(|e| format!("--output: {e}"))?;
        }
        Err(e @ (PlotError::Input(_) | PlotError::TooManyInputs)) => {
            return Err(format!("--input: {e}"))
        }
        Err(e) => return Err(format!("{}: {e}", a.file)),
        Ok(()) => {}
    }
    eprintln!("plot: wrote {}", a.output);
    Ok(0)
}

fn mechanism_source(path: &str, a: &PrivatizeArgs) -> Result<Result<Source, i32>, String> {
    use mdp::privatize::GatedSource;
    let refusal = "does not pass the audit under this policy; refusing to sample from it";
    let policy = privatize_policy(a)?;
    let progress = mdp::progress::Console::new(false, 2.0);
    let loaded = mdp::privatize::load_gated_any(path, &policy, a.max_memory, &progress);
    let source = match crate::gate_outcome(path, refusal, loaded)? {
        Ok(source) => source,
        Err(code) => return Ok(Err(code)),
    };
    match source {
        GatedSource::File(g) => {
            let file = g.file;
            let labels = file_labels(&file, a.space.as_deref())?;
            Ok(Ok(Source {
                sampler: Sampler::from_matrix(file.matrix),
                n: file.space.n(),
                space: Some(file.space),
                outputs: file.outputs,
                labels,
            }))
        }
        GatedSource::Container(c) => {
            let n = c.container.geometry.n();
            let space = match &c.container.geometry {
                mdp::io::container::Geometry::Points(s) => Some(s.clone()),
                mdp::io::container::Geometry::Graph(_) => None,
            };
            Ok(Ok(Source {
                n,
                space,
                outputs: c.container.outputs.clone(),
                labels: c.container.labels.clone(),
                sampler: Sampler::Container(c),
            }))
        }
    }
}

fn sampler_source(kind: SamplerArg, a: &PrivatizeArgs) -> Result<Source, String> {
    let eps = epsilon(
        a.epsilon
            .as_deref()
            .ok_or("--epsilon: required with --sampler")?,
    )?;
    let spec = a
        .space
        .as_deref()
        .ok_or("--space: required with --sampler (e.g. builtin:rome100, a CSV of points)")?;
    let (space, labels) = space_with_labels(spec)?;
    let space = require_metric(space)?;
    let n = space.n();
    let sampler = match kind {
        SamplerArg::Tem => {
            let gamma = tem::gamma_for_beta(&eps, n, a.beta)
                .ok_or("--beta: must be in (0, 1), with γ = (2/ε)·ln((1−β)(n−1)/β) finite")?;
            let lists = tem::within_gamma(&space, &gamma, MAX_PREC)
                .map_err(|(u, v)| format!("--beta: d({u},{v}) ≤ γ cannot be decided"))?;
            Sampler::Tem(Box::new(tem::TemSampler::new(&space, &eps, &lists, &gamma)))
        }
        SamplerArg::Madlib => Sampler::Madlib(madlib::Madlib::new(&space, &eps)?),
        SamplerArg::PlanarLaplace => unreachable!("dispatched to planar()"),
    };
    Ok(Source {
        sampler,
        n,
        space: Some(space),
        outputs: Outputs::Inputs,
        labels,
    })
}

pub fn privatize(a: &PrivatizeArgs) -> Result<i32, String> {
    let mut src = match (&a.mechanism, a.sampler) {
        (Some(path), _) => match mechanism_source(path, a)? {
            Ok(s) => s,
            Err(code) => return Ok(code),
        },
        (None, Some(SamplerArg::PlanarLaplace)) => return planar(a),
        (None, Some(kind)) => sampler_source(kind, a)?,
        (None, None) => return Err("--mechanism or --sampler: one is required".into()),
    };
    let n = src.n;
    let setup = RecordSetup::new(&a.rec, n, src.space.as_ref(), src.labels.take())?;
    let releases = privatize::records::releases_of(
        n,
        src.space.as_ref().map(|s| s.points()),
        &src.outputs,
        setup.labels.as_deref(),
        setup.naming(&a.rec),
    );
    let opts = privatize::Options {
        format: setup.format.clone(),
        records: setup.records(&a.rec, n)?,
        keep_input: a.keep_input,
        releases: &releases,
        on_bad: setup.on_bad,
    };
    let input = open_input(&a.rec.input)?;
    if a.seed.is_some() {
        eprintln!("mdp: warning: --seed makes the output a deterministic function of the input (for tests only; no privacy)");
    }
    let mut rng = privatize::rng(a.seed);
    let summary = write_records(&a.output, |out| {
        privatize::stream(&mut src.sampler, &opts, input, out, &mut rng)
    })?;
    report_records("privatize", "released", &summary, setup.snapper.as_ref());
    Ok(0)
}

/// Run a record stream into `--output` (`-`: standard output; a file is written whole or
/// not at all: no partial output on failure).
fn write_records(
    output: &str,
    run: impl FnOnce(&mut dyn std::io::Write) -> Result<privatize::Summary, privatize::RecordError>,
) -> Result<privatize::Summary, String> {
    let line_error = |e: privatize::RecordError| format!("--input {e}");
    if output == "-" {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        return run(&mut out).map_err(line_error);
    }
    let path = std::path::Path::new(output);
    let mut out =
        mdp::atomic::AtomicFile::create(path).map_err(|e| format!("--output: {output}: {e}"))?;
    let summary = run(&mut out).map_err(line_error)?;
    out.commit()
        .map_err(|e| format!("--output: {output}: {e}"))?;
    Ok(summary)
}

/// `mdp privatize --sampler planar-laplace`: each coordinate record released by the
/// planar Laplace, exactly sampled ([`mdp::planar_laplace`]).
fn planar(a: &PrivatizeArgs) -> Result<i32, String> {
    use mdp::planar_laplace::{PlanarLaplace, Region};
    if a.space.is_some() {
        return Err("--space: not used by --sampler planar-laplace (records are coordinates; bound them with --region)".into());
    }
    let q = |flag: &str, v: &str| parse_rational(v).map_err(|e| format!("{flag}: {e}"));
    let eps = match (&a.epsilon, &a.level, &a.radius) {
        (Some(e), None, None) => crate::epsilon(e)?,
        (None, Some(l), Some(r)) => {
            PlanarLaplace::epsilon_of_level(&q("--level", l)?, &q("--radius", r)?)
                .map_err(|e| e.to_string())?
        }
        _ => return Err("--epsilon E, or --level L with --radius R (ε = L/R): one is required with --sampler planar-laplace".into()),
    };
    let format = record_format(&a.rec)?;
    let geographic = match (a.metric, &format) {
        (Some(PlaneMetric::Haversine), _) => true,
        (Some(PlaneMetric::Euclidean), _) => false,
        (None, privatize::Format::Csv { columns }) if columns.len() == 2 => {
            let is = |c: &str, names: &[&str]| names.contains(&c.to_lowercase().as_str());
            let lat = ["lat", "latitude"];
            let lon = ["lon", "lng", "long", "longitude"];
            if is(&columns[0], &lat) && is(&columns[1], &lon) {
                true
            } else if is(&columns[0], &lon) && is(&columns[1], &lat) {
                return Err("--column: give latitude first (lat,lon)".into());
            } else {
                return Err(format!("--metric: columns {:?} are not lat,lon; say --metric euclidean for plane coordinates (or haversine for degrees)", columns.join(",")));
            }
        }
        (None, _) => return Err("--metric: haversine (lat,lon in degrees, ε per km) or euclidean (x,y, ε per unit) is required unless --column names lat,lon".into()),
    };
    let region = a
        .region
        .as_deref()
        .map(|text| {
            Region::from_arg(text, geographic, |spec| {
                mdp::import::load_space(spec, crate::label_column(), &Limits::default())
                    .map_err(|e| e.to_string())
            })
        })
        .transpose()
        .map_err(|e| e.to_string())?;
    let granularity = a
        .granularity
        .as_deref()
        .map(|g| q("--granularity", g))
        .transpose()?;
    let pl = PlanarLaplace::new(eps, geographic, region, granularity).map_err(|e| e.to_string())?;
    let opts = privatize::Options {
        format,
        records: privatize::Records::Planar(&pl),
        keep_input: a.keep_input,
        releases: &[],
        on_bad: on_bad(&a.rec),
    };
    let input = open_input(&a.rec.input)?;
    if a.seed.is_some() {
        eprintln!("mdp: warning: --seed makes the output a deterministic function of the input (for tests only; no privacy)");
    }
    let mut rng = privatize::rng(a.seed);
    let summary = write_records(&a.output, |out| {
        privatize::records::stream_planar(&opts, input, out, &mut rng)
    })?;
    report_records("privatize", "released", &summary, None);
    let mut stats = pl.summary(a.confidence);
    stats["records"] = json!(summary.records);
    stats["skipped"] = json!(summary.skipped);
    eprintln!("stats: {stats}");
    Ok(0)
}

/// The stream's summary on standard error: records, skips with their lines, snapping.
/// How `rec` reads records over `n` inputs (of `space`, with the source's `labels` unless
/// --labels names others): what `privatize` and `prior` share.
struct RecordSetup {
    labels: Option<Vec<String>>,
    snapper: Option<privatize::Snapper>,
    format: privatize::Format,
    on_bad: privatize::OnBad,
}

impl RecordSetup {
    fn new(
        rec: &RecordArgs,
        n: usize,
        space: Option<&Space>,
        labels: Option<Vec<String>>,
    ) -> Result<RecordSetup, String> {
        let labels = match &rec.labels {
            Some(path) => Some(labels_file(path, n)?),
            None => labels,
        };
        let snap_max = rec
            .snap_max
            .as_deref()
            .map(|s| match s.parse::<f64>() {
                Ok(x) if x > 0.0 && x.is_finite() => Ok(x),
                _ => Err(format!("--snap-max: expected a distance > 0, got {s:?}")),
            })
            .transpose()?;
        let snapper = if rec.snap {
            Some(
                space
                    .and_then(|s| privatize::Snapper::new(s, snap_max))
                    .ok_or("--snap: the space has no coordinates (explicit table or graph)")?,
            )
        } else {
            None
        };
        Ok(RecordSetup {
            labels,
            snapper,
            format: record_format(rec)?,
            on_bad: on_bad(rec),
        })
    }

    /// How records name their inputs.
    fn records(&self, rec: &RecordArgs, n: usize) -> Result<privatize::Records<'_>, String> {
        Ok(match (&self.snapper, rec.by_index, &self.labels) {
            (Some(s), _, _) => privatize::Records::Snap(s),
            (None, true, _) => privatize::Records::Index(n),
            (None, false, Some(l)) => privatize::Records::Labels(l),
            (None, false, None) => {
                return Err("--by-index: the space has no labels; name inputs by 0-based index with --by-index, give --labels, or pass coordinates with --snap".into())
            }
        })
    }

    /// How releases are written: as the records name inputs.
    fn naming(&self, rec: &RecordArgs) -> privatize::records::Naming {
        match (&self.snapper, rec.by_index, &self.labels) {
            (Some(_), _, _) => privatize::records::Naming::Coordinates,
            (None, false, Some(_)) => privatize::records::Naming::Labels,
            _ => privatize::records::Naming::Index,
        }
    }
}

/// How records are laid out (`--format`, `--column`, `--field`).
fn record_format(rec: &RecordArgs) -> Result<privatize::Format, String> {
    Ok(match (rec.format, &rec.column, &rec.field) {
        (FormatArg::Lines, None, None) => privatize::Format::Lines,
        (FormatArg::Csv, Some(c), None) => privatize::Format::Csv {
            columns: c.split(',').map(|s| s.trim().to_string()).collect(),
        },
        (FormatArg::Jsonl, None, Some(f)) => privatize::Format::JsonLines { field: f.clone() },
        (FormatArg::Csv, _, _) => {
            return Err(
                "--format csv: name the record's column with --column (and no --field)".into(),
            )
        }
        (FormatArg::Jsonl, _, _) => {
            return Err(
                "--format jsonl: name the record's field with --field (and no --column)".into(),
            )
        }
        (FormatArg::Lines, _, _) => {
            return Err("--column and --field need --format csv or --format jsonl".into())
        }
    })
}

fn on_bad(rec: &RecordArgs) -> privatize::OnBad {
    if rec.skip_bad {
        privatize::OnBad::Skip
    } else {
        privatize::OnBad::Error
    }
}

/// `--input`: a file, or standard input for `-`.
fn open_input(path: &str) -> Result<Box<dyn std::io::BufRead>, String> {
    Ok(if path == "-" {
        Box::new(std::io::stdin().lock())
    } else {
        Box::new(std::io::BufReader::new(
            std::fs::File::open(path).map_err(|e| format!("--input: {path}: {e}"))?,
        ))
    })
}

#[derive(clap::Args)]
pub struct PriorArgs {
    /// The space whose inputs the records are counted on (builtin, CSV, GeoJSON, JSON).
    #[arg(long)]
    space: String,
    #[command(flatten)]
    rec: RecordArgs,
    /// Added to every input's count (a uniform pseudo-count, so no input has weight 0).
    #[arg(long, default_value = "0", value_name = "A")]
    pseudocount: String,
    /// Where to write the prior (a JSON array of n weights in input order, as
    /// `mdp build pmo` reads a prior); `-` for standard output.
    #[arg(short, long, default_value = "-")]
    output: String,
}

/// `mdp prior`: a prior from records, each snapped to (or naming) an input and counted.
pub fn prior(a: &PriorArgs) -> Result<i32, String> {
    let (space, labels) = space_with_labels(&a.space)?;
    let n = space.n();
    let setup = RecordSetup::new(&a.rec, n, Some(&space), labels)?;
    let pseudo = parse_rational(&a.pseudocount).map_err(|e| format!("--pseudocount: {e}"))?;
    if pseudo < 0u32 {
        return Err("--pseudocount: must be ≥ 0".into());
    }
    let opts = privatize::Options {
        format: setup.format.clone(),
        records: setup.records(&a.rec, n)?,
        keep_input: false,
        releases: &[],
        on_bad: setup.on_bad,
    };
    let summary = privatize::records::count(&opts, open_input(&a.rec.input)?, n)
        .map_err(|e| format!("--input {e}"))?;
    let weights: Vec<Q> = summary
        .per_input
        .iter()
        .map(|&c| Q::from(c) + &pseudo)
        .collect();
    if weights.iter().all(|w| *w == 0u32) {
        return Err(
            "--input: no record was counted (give --pseudocount A > 0 for a uniform part)".into(),
        );
    }
    report_records("prior", "counted", &summary, setup.snapper.as_ref());
    let empty = summary.per_input.iter().filter(|&&c| c == 0).count();
    eprintln!("prior: {n} inputs, {empty} named by no record");
    let text = serde_json::to_string(&weights.iter().map(io::number_value).collect::<Vec<_>>())
        .map_err(|e| e.to_string())?;
    write_text(&a.output, &text)?;
    Ok(0)
}

fn report_records(
    cmd: &str,
    did: &str,
    s: &privatize::Summary,
    snapper: Option<&privatize::Snapper>,
) {
    eprintln!("{cmd}: {} records {did}", s.records);
    if s.header {
        let copied = if cmd == "privatize" {
            " and copied"
        } else {
            ""
        };
        eprintln!("{cmd}: line 1 read as a header{copied}");
    }
    if s.skipped > 0 {
        let lines: Vec<String> = s
            .first_skips
            .iter()
            .map(|(l, why)| format!("line {l}: {why}"))
            .collect();
        eprintln!(
            "{cmd}: warning: {} records skipped{}{}{}",
            s.skipped,
            if cmd == "privatize" {
                " (their release is empty)"
            } else {
                ""
            },
            if lines.is_empty() { "" } else { ": " },
            lines.join("; ")
        );
    }
    if let (Some(m), Some(sn)) = (&s.moved, snapper) {
        eprintln!(
            "{cmd}: snapped to the nearest input: mean {:.4}, max {:.4} (line {}), limit {:.4}, in {}",
            m.mean,
            m.max,
            m.max_line,
            sn.limit,
            sn.unit()
        );
    }
}

pub fn estimate_madlib(
    space_spec: &str,
    eps: &Q,
    samples: usize,
    seed: u64,
    confidence: f64,
    output: &str,
) -> Result<i32, String> {
    if samples < 2 {
        return Err("--samples: must be ≥ 2".into());
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err("--confidence: must be in (0, 1)".into());
    }
    let space = lp_space(space_spec)?;
    let m = madlib::Madlib::new(&space, eps)?;
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let est = madlib::estimate(&space, samples, confidence, &mut rng, |w, r| m.sample(w, r));
    eprintln!(
        "madlib: {} (worst-case loss ≈ {:.6}, {:.0}% interval [{:.6}, {:.6}])",
        est.note,
        est.loss_max.0,
        100.0 * confidence,
        est.loss_max.1[0],
        est.loss_max.1[1]
    );
    let text = serde_json::to_string(&json!({"mechanism": "madlib", "epsilon": f64_nearest(eps), "space": space_spec, "estimate": est}))
        .map_err(|e| e.to_string())?;
    write_text(output, &text)?;
    Ok(0)
}

fn write_text(output: &str, text: &str) -> Result<(), String> {
    if output == "-" {
        println!("{text}");
        Ok(())
    } else {
        std::fs::write(output, format!("{text}\n"))
            .map_err(|e| format!("{output}: cannot write: {e}"))
    }
}

#[derive(clap::Args)]
pub struct CalibrateArgs {
    /// Mechanism family.
    #[arg(value_enum)]
    mechanism: FamilyArg,
    /// Space: `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric object, or an mdp/1 file.
    #[arg(long, required = true)]
    space: String,
    /// The target: the pure tight ε (default; the file then claims ε = TARGET, which a gate
    /// requiring ε = TARGET proves), or with --delta the (ε,δ) tight ε.
    #[arg(long)]
    target: f64,
    /// Calibrate the (ε,δ) tight epsilon at this δ ∈ [0, 1) instead of the pure tight ε
    /// (Imola et al. §5 compare mechanisms at δ = 0.001); the file then claims its family's
    /// own ε and this δ.
    #[arg(long)]
    delta: Option<String>,
    #[command(flatten)]
    fam: FamilyParams,
    /// Where to write the calibrated mechanism (not for madlib).
    #[arg(short, long, default_value = "-")]
    output: String,
}

#[derive(clap::Args, Clone)]
pub struct FamilyParams {
    /// ConstOPTMech's r.
    #[arg(long, default_value = "10")]
    r: usize,
    /// ConstOPTMech's λ candidates.
    #[arg(long, value_delimiter = ',', default_values = ["0.001", "0.1", "1"])]
    lambda: Vec<f64>,
    /// SpannerMech's k.
    #[arg(long, default_value = "2")]
    k: u32,
    /// TEM's β.
    #[arg(long, default_value = "0.001")]
    beta: f64,
    /// Madlib's draws per input (its matrix is estimated).
    #[arg(long, default_value = "2000")]
    samples: usize,
    /// Seed of the draws (an estimate for experiments, not a privacy path).
    #[arg(long, default_value = "1")]
    seed: u64,
}

#[derive(clap::ValueEnum, Clone, Copy, PartialEq, Debug)]
pub enum FamilyArg {
    Exponential,
    Constopt,
    Spanner,
    Optimal,
    Tem,
    Madlib,
}

/// The experiments' family for a `--mechanism` flag, its parameters checked by the same
/// functions `mdp build` uses.
fn family(f: FamilyArg, p: &FamilyParams, n: usize) -> Result<Family, String> {
    use mdp::produce::{Family as F, ReplacementSpec, Truncation};
    let flag = |e: mdp::produce::ProduceError| crate::flag_error(&e);
    // `mdp build`'s default: the block hybrid for OPTMech when it fits the memory budget.
    let solver = mdp::lp::Solver::Auto;
    Ok(Family::Built(match f {
        FamilyArg::Exponential => F::Exponential(mdp::produce::ExpMech { weights: None }),
        FamilyArg::Constopt => {
            mdp::produce::check_r(p.r, n).map_err(flag)?;
            mdp::mechanisms::constopt::check_lambdas(&p.lambda).map_err(|e| flag(e.into()))?;
            F::Constopt(mdp::produce::ConstOptMech {
                replacement: ReplacementSpec::NearestNeighbours { r: p.r },
                lambdas: p.lambda.clone(),
                solver,
            })
        }
        FamilyArg::Spanner => {
            mdp::produce::check_spanner_k(u64::from(p.k), n).map_err(flag)?;
            F::Spanner(mdp::produce::SpannerMech {
                k: u64::from(p.k),
                solver,
            })
        }
        FamilyArg::Optimal => F::Optimal(mdp::produce::OptMech {
            solver,
            outputs: None,
        }),
        FamilyArg::Tem => {
            mdp::produce::check_beta(p.beta).map_err(flag)?;
            F::Tem(mdp::produce::TemMech {
                truncation: Truncation::Beta(p.beta),
            })
        }
        FamilyArg::Madlib => {
            return Ok(Family::Madlib {
                samples: p.samples.max(2),
                seed: p.seed,
            })
        }
    }))
}

fn delta_arg(s: &str) -> Result<Q, String> {
    let d = parse_rational(s).map_err(|e| format!("--delta: {e}"))?;
    if d < 0u32 || d >= 1u32 {
        return Err("--delta: must be in [0, 1)".into());
    }
    Ok(d)
}

pub fn calibrate(a: &CalibrateArgs) -> Result<i32, String> {
    if !(a.target > 0.0 && a.target.is_finite()) {
        return Err("--target: must be a finite ε_tight > 0".into());
    }
    // Without --delta the pure tight ε (δ = 0: the (ε,δ) tight ε at δ = 0 is the pure one,
    // IMO-EPS).
    let pure = a.delta.is_none();
    let delta = match &a.delta {
        Some(d) => delta_arg(d)?,
        None => Q::from(0u32),
    };
    let space = lp_space(&a.space)?;
    let f = family(a.mechanism, &a.fam, space.n())?;
    let (c, inst) = match experiment::calibrated(&space, &f, a.target, &delta, a.target) {
        Ok(x) => x,
        Err(e @ CalibrationError::Unreachable { .. }) => return Err(format!("--target: {e}")),
        Err(e) => {
            eprintln!("mdp: {e}");
            return Ok(crate::EXIT_SOLVER);
        }
    };
    eprintln!(
        "calibrate: {}",
        json!({"mechanism": f.name(), "target": a.target, "calibrated": c, "certified": f.certified()})
    );
    if !f.certified() {
        eprintln!("calibrate: Madlib's ε_tight is measured on a Monte Carlo estimate of its matrix: NOT a certificate");
        println!(
            "{}",
            json!({"mechanism": f.name(), "noise_epsilon": c.param, "eps_tight_estimate": c.eps_tight})
        );
        return Ok(0);
    }
    let what = if pure {
        "pure tight ε".to_string()
    } else {
        format!("tight ε at δ = {}", f64_nearest(&delta))
    };
    eprintln!(
        "calibrate: {what} is at most {:.6} (proven upper end), {:.2e} below the target {}",
        c.eps_tight,
        a.target - c.eps_tight,
        a.target
    );
    let meta = mdp::produce::producer_meta(
        json!({"mechanism": f.name(), "space": a.space, "parameter": c.param}),
        &json!({"calibration": {"target": a.target, "of": if pure { "pure tight ε" } else { "(ε,δ) tight ε" },
                                "delta": f64_nearest(&delta), "eps_tight": c.eps_tight, "evaluations": c.evaluations}}),
    );
    // The claim is what the calibration proved: pure, ε = the target (the tight ε's upper
    // end is ≤ it); at δ, the family's own ε and δ.
    let claim = if pure {
        q_from_f64(a.target)
    } else {
        q_from_f64(c.param)
    };
    let mut doc = io::mechanism_to_value(&claim, &space, &inst.matrix, meta);
    if !pure {
        doc["delta"] = io::number_value(&delta);
    }
    let report = emit(doc, &a.output)?;
    Ok(if report.verdict == Verdict::Pass {
        0
    } else {
        1
    })
}

#[derive(clap::Subcommand)]
pub enum ExperimentKind {
    /// L_q versus ε_tight for every mechanism, calibrated (Imola et al. Figures 1–2).
    Utility {
        /// Space: `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric object, or an mdp/1 file.
        #[arg(long)]
        space: String,
        /// A name for the output files (default: the space's built-in or file name).
        #[arg(long)]
        name: Option<String>,
        /// Target ε_tight values: comma- or space-separated ("0.5,1,2", "0.5, 1, 2" or
        /// `--targets 0.5 1 2`), each finite and > 0.
        #[arg(long, value_delimiter = ',', num_args = 1.., value_parser = target_value,
              default_values = ["0.5", "1", "2", "4", "8"])]
        targets: Vec<f64>,
        /// Mechanism families (comma-separated).
        #[arg(long, value_delimiter = ',', value_enum,
              default_values = ["exponential", "constopt", "spanner", "optimal", "tem"])]
        mechanisms: Vec<FamilyArg>,
        #[command(flatten)]
        fam: FamilyParams,
        /// Directory of the CSV and SVG outputs.
        #[arg(long, default_value = "experiments")]
        out_dir: PathBuf,
    },
    /// Time and LP size versus n at a fixed parameter (Table 2).
    Scalability {
        /// A JSON metric with points; the first n points are used for each n.
        #[arg(long)]
        space: String,
        /// A name for the output files (default: the space's built-in or file name).
        #[arg(long)]
        name: Option<String>,
        /// The n values (first n points of the space each).
        #[arg(long, value_delimiter = ',', default_values = ["50", "100", "200", "300", "400"])]
        sizes: Vec<usize>,
        /// The ε_tight each family is calibrated to at the smallest n (its parameter is then
        /// kept for every n).
        #[arg(long, default_value = "2", value_parser = target_value)]
        target: f64,
        /// Mechanism families (comma-separated).
        #[arg(long, value_delimiter = ',', value_enum, default_values = ["constopt", "spanner", "optimal"])]
        mechanisms: Vec<FamilyArg>,
        /// ConstOPTMech's r values (one family each).
        #[arg(long, value_delimiter = ',', default_values = ["5", "10"])]
        rs: Vec<usize>,
        /// Seconds after which a family is not run at larger n (also when its time,
        /// extrapolated as n³, would exceed this at the next n).
        #[arg(long, default_value = "300")]
        budget: f64,
        /// Directory of the CSV and SVG outputs.
        #[arg(long, default_value = "experiments")]
        out_dir: PathBuf,
    },
    /// User-level d_EM privacy (Imola et al. 2024): the accountant, linear queries and
    /// frequency estimation against their user-level DP baselines.
    UserLevel(crate::user::ExperimentArgs),
    /// ConstOPTMech over r and λ at a fixed ε_tight (Table 3).
    Ablation {
        /// Space: `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric object, or an mdp/1 file.
        #[arg(long)]
        space: String,
        /// A name for the output files (default: the space's built-in or file name).
        #[arg(long)]
        name: Option<String>,
        /// The target (ε,δ) tight epsilon.
        #[arg(long, default_value = "2", value_parser = target_value)]
        target: f64,
        /// ConstOPTMech's r values (swept at λ = 50).
        #[arg(long, value_delimiter = ',', default_values = ["1", "3", "5", "7", "9"])]
        rs: Vec<usize>,
        /// ConstOPTMech's λ values (swept at r = 5; the r sweep uses λ = 50).
        #[arg(long, value_delimiter = ',', default_values = ["0.1", "1", "10", "50", "250"])]
        lambdas: Vec<f64>,
        /// Directory of the CSV and SVG outputs.
        #[arg(long, default_value = "experiments")]
        out_dir: PathBuf,
    },
}

/// A target ε_tight: a finite number > 0 (surrounding spaces allowed).
fn target_value(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(t) if t > 0.0 && t.is_finite() => Ok(t),
        _ => Err(format!("{s:?} is not a finite ε_tight > 0")),
    }
}

fn prepare(dir: &std::path::Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("--out-dir: {}: {e}", dir.display()))
}

/// An experiment's output name: `--name`, else the space's built-in name or file stem
/// (issue 33: `--name` was required and undocumented in the README).
fn output_name(name: &Option<String>, space: &str) -> String {
    if let Some(n) = name {
        return n.clone();
    }
    let base = space.strip_prefix("builtin:").unwrap_or(space);
    std::path::Path::new(base)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "space".to_string())
}

pub fn experiment(kind: &ExperimentKind) -> Result<i32, String> {
    let delta = Q::from_unsigneds(1u32, 1000u32);
    match kind {
        ExperimentKind::Utility {
            space,
            name,
            targets,
            mechanisms,
            fam,
            out_dir,
        } => {
            let name = &output_name(name, space);
            prepare(out_dir)?;
            let s = lp_space(space)?;
            let fams: Vec<Family> = mechanisms
                .iter()
                .map(|&m| family(m, fam, s.n()))
                .collect::<Result<_, _>>()?;
            let rows = experiment::utility(&s, &fams, targets, &delta, 0.95, &mut |r| {
                eprintln!(
                    "utility: {} target {} → ε_tight {:.4} (param {:.4}), L_q {:.6}, {}, {:.1} s",
                    r.mechanism,
                    r.target_eps_tight,
                    r.eps_tight,
                    r.param,
                    r.loss_q,
                    r.verdict,
                    r.seconds
                )
            });
            experiment::write_csv(&out_dir.join(format!("utility_{name}.csv")), &rows)?;
            let svg =
                experiment::utility_svg(&format!("L_q vs ε_tight: {name} (n = {})", s.n()), &rows);
            std::fs::write(out_dir.join(format!("utility_{name}.svg")), svg)
                .map_err(|e| e.to_string())?;
        }
        ExperimentKind::Scalability {
            space,
            name,
            sizes,
            target,
            mechanisms,
            rs,
            budget,
            out_dir,
        } => {
            let name = &output_name(name, space);
            prepare(out_dir)?;
            let full = lp_space(space)?;
            let space_of = |n: usize| -> Result<mdp::metric::Space, String> {
                if n > full.n() || full.points().is_empty() {
                    return Err(format!(
                        "--sizes: {n} needs a points space with ≥ {n} points"
                    ));
                }
                mdp::metric::Space::from_points(
                    full.kind(),
                    full.points()[..n].to_vec(),
                    Some(full.radius().clone()),
                )
                .map_err(|e| e.message)
            };
            let n0 = *sizes.iter().min().ok_or("--sizes: empty")?;
            let s0 = space_of(n0)?;
            let mut fams = vec![];
            for &m in mechanisms {
                let list: Vec<Family> = if m == FamilyArg::Constopt {
                    rs.iter()
                        .map(|&r| Family::constopt(r, vec![0.001, 0.1, 1.0]))
                        .collect()
                } else {
                    vec![family(
                        m,
                        &FamilyParams {
                            r: 10,
                            lambda: vec![0.001, 0.1, 1.0],
                            k: 2,
                            beta: 0.001,
                            samples: 2000,
                            seed: 1,
                        },
                        n0,
                    )?]
                };
                for f in list {
                    let (c, _) = experiment::calibrated(&s0, &f, *target, &delta, *target)
                        .map_err(|e| match e {
                            CalibrationError::Unreachable { .. } => format!("--target: {e}"),
                            e => e.to_string(),
                        })?;
                    eprintln!(
                        "scalability: {} calibrated at n = {n0}: parameter {:.6} (ε_tight {:.4})",
                        f.name(),
                        c.param,
                        c.eps_tight
                    );
                    fams.push((f, c.param));
                }
            }
            let rows =
                experiment::scalability(&space_of, &fams, sizes, &delta, *budget, &mut |r| {
                    eprintln!(
                        "scalability: {} n = {}: {:.2} s, nnz {:?}, rows {:?}, ε_tight {:.4}, {}",
                        r.mechanism,
                        r.n,
                        r.seconds,
                        r.lp_nonzeros,
                        r.lp_rows,
                        r.eps_tight,
                        r.verdict
                    )
                })?;
            experiment::write_csv(&out_dir.join(format!("scalability_{name}.csv")), &rows)?;
            let mut names: Vec<String> = vec![];
            for r in &rows {
                if !names.contains(&r.mechanism) {
                    names.push(r.mechanism.clone());
                }
            }
            let series: Vec<(String, Vec<(f64, f64)>)> = names
                .iter()
                .map(|m| {
                    (
                        m.clone(),
                        rows.iter()
                            .filter(|r| &r.mechanism == m)
                            .map(|r| (r.n as f64, r.seconds))
                            .collect(),
                    )
                })
                .collect();
            let svg = experiment::svg_chart(
                &format!("Time vs n: {name}"),
                "n",
                "seconds (log)",
                &series,
                true,
            );
            std::fs::write(out_dir.join(format!("scalability_{name}.svg")), svg)
                .map_err(|e| e.to_string())?;
        }
        ExperimentKind::Ablation {
            space,
            name,
            target,
            rs,
            lambdas,
            out_dir,
        } => {
            let name = &output_name(name, space);
            prepare(out_dir)?;
            let s = lp_space(space)?;
            if rs.iter().any(|&r| r < 1 || r >= s.n()) {
                return Err(format!("--rs: every r must be in 1..{}", s.n() - 1));
            }
            if lambdas.iter().any(|&l| !(l > 0.0)) {
                return Err("--lambdas: every λ must be > 0".into());
            }
            let rows = experiment::ablation(&s, *target, rs, 50.0, lambdas, 5, &delta, &mut |r| {
                eprintln!(
                    "ablation: r = {} λ = {}: L_q {:.6}, rows {}, {:.2} s, {}",
                    r.r, r.lambda, r.loss_q, r.lp_rows, r.seconds, r.verdict
                )
            });
            experiment::write_csv(&out_dir.join(format!("ablation_{name}.csv")), &rows)?;
        }
        ExperimentKind::UserLevel(a) => return crate::user::experiment(a),
    }
    Ok(0)
}

#[derive(clap::Args)]
pub struct MeasureArgs {
    /// An mdp/1 mechanism file (`-` for standard input): its rows divided by their exact
    /// sums are the channel measured.
    file: String,
    /// The adversary's prior: a JSON array of n weights (normalized exactly). Default: the
    /// file's loss.prior, else uniform.
    #[arg(long, value_name = "P.json")]
    prior: Option<String>,
    /// A gain function for g-vulnerability: a JSON array of rows g(w, ·), one per guess w,
    /// each with one entry per input.
    #[arg(long, value_name = "G.json")]
    gain: Option<String>,
    /// Print the measures as JSON.
    #[arg(long)]
    json: bool,
}

/// A mechanism file read under the default limits, and the adversary's prior: `--prior`,
/// else the file's, else uniform ([`mdp::measure::prior_of`]).
fn file_and_prior(path: &str, prior: Option<&str>) -> Result<(io::MechanismFile, Vec<Q>), String> {
    let bytes = io::read_source(path, &Limits::default()).map_err(|e| format!("{path}: {e}"))?;
    let file =
        io::read_mechanism(&bytes, &Limits::default()).map_err(|e| format!("{path}: {e}"))?;
    let given = prior
        .map(|p| crate::q_array(&crate::json_file(p, "--prior")?, "--prior"))
        .transpose()?;
    let prior = mdp::measure::prior_of(&file, given.as_deref()).map_err(|e| format!("--{e}"))?;
    Ok((file, prior))
}

/// `mdp measure`: the adversary's view of a mechanism ([`mdp::measure`]).
pub fn measure(a: &MeasureArgs) -> Result<i32, String> {
    let (file, prior) = file_and_prior(&a.file, a.prior.as_deref())?;
    let gain = a
        .gain
        .as_deref()
        .map(|g| -> Result<mdp::measure::Gain, String> {
            let v = crate::json_file(g, "--gain")?;
            let rows = v
                .as_array()
                .ok_or("--gain: expected a JSON array of rows")?;
            Ok(mdp::measure::Gain {
                rows: rows
                    .iter()
                    .enumerate()
                    .map(|(w, r)| crate::q_array(r, &format!("--gain[{w}]")))
                    .collect::<Result<_, _>>()?,
            })
        })
        .transpose()?;
    let m = mdp::measure::measures(&file, &prior, gain.as_ref()).map_err(|e| format!("--{e}"))?;
    if a.json {
        println!("{}", mdp::measure::to_json(&m, &file));
    } else {
        print!("{}", mdp::measure::human(&m, &file));
    }
    Ok(0)
}

#[derive(clap::Args)]
pub struct RemapArgs {
    /// An mdp/1 mechanism file whose outputs are inputs (`-` for standard input).
    file: String,
    /// The prior the remap is optimal for: a JSON array of n weights (default: the file's
    /// loss.prior, else uniform).
    #[arg(long, value_name = "P.json")]
    prior: Option<String>,
    /// Where to write the remapped mechanism (written only once its own audit passes).
    #[arg(short, long)]
    output: String,
    /// Print what remapping did as JSON on standard output (expected_loss_before,
    /// expected_loss_after, adversary_error, map).
    #[arg(long)]
    json: bool,
}

/// `mdp remap`: Bayesian remapping ([`mdp::remap`]).
pub fn remap(a: &RemapArgs) -> Result<i32, String> {
    if a.json && a.output == "-" {
        return Err(
            "--output: give a file with --json (standard output carries the summary)".into(),
        );
    }
    let (file, prior) = file_and_prior(&a.file, a.prior.as_deref())?;
    let r = match mdp::remap::remap(&file, &prior, &mdp::progress::Console::new(false, 2.0)) {
        Ok(r) => r,
        Err(mdp::remap::RemapError::NotPrivate(report)) => {
            eprint!(
                "mdp: the remapped mechanism does not pass its audit (not written)\n{}",
                audit::human(&report)
            );
            return Ok(audit::EXIT_FAIL);
        }
        Err(e) => return Err(e.to_string()),
    };
    crate::write_certified(&r.certified, &a.output)?;
    let unit = audit::unit_of(&file.space).map_or(String::new(), |u| format!(" {u}"));
    if a.json {
        println!("{}", mdp::remap::summary_json(&r, &file));
    }
    eprintln!(
        "remap: wrote {} ({} of {} outputs remapped); expected loss {}{unit} before, [{:.9e}, {:.9e}]{unit} after (audited at ε = {})",
        a.output,
        r.remapped,
        r.map.len(),
        r.expected_loss_before.map_or("not defined".into(), |e| format!("[{:.9e}, {:.9e}]", e.lo, e.hi)),
        r.expected_loss_after.lo,
        r.expected_loss_after.hi,
        mdp::exact::f64_nearest(&file.epsilon)
    );
    Ok(0)
}
