//! A picture of a mechanism (`mdp plot`, issue 33), drawn with `plotters` (SVG backend:
//! text is left to the viewer, no font files; `spec/crates.md`).
//!
//! * **Map** (2-D coordinate and haversine spaces whose outputs are sites): every input
//!   as a grey dot; for each chosen input u, its output distribution H\[u\]\[·\] as discs at
//!   the output sites, area ∝ probability (the largest of each input's row at full size),
//!   and u itself as a cross of the same colour. Haversine spaces are drawn with longitude
//!   across and latitude up, the longitude axis scaled by cos(mean latitude) so distances
//!   look as they are.
//! * **Heat map** (any mechanism): row u, column k coloured by H\[u\]\[k\] (rows normalized),
//!   on a viridis scale from 0 to the matrix's largest entry, labelled when there are few.
//!
//! Probabilities are the nearest doubles of the exactly normalized rows: a picture, not a
//! proof (the audit is the proof).

use crate::exact::{f64_nearest, Q};
use crate::io::MechanismFile;
use crate::mechanism::Outputs;
use crate::metric::MetricKind;
use plotters::prelude::*;
use std::path::Path;

/// Which picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Map,
    Heatmap,
}

/// What to draw.
pub struct Options<'a> {
    pub kind: Kind,
    /// The inputs whose output distributions the map shows (at most [`MAX_INPUTS`]).
    pub inputs: &'a [usize],
    /// The inputs' labels, if the space has them.
    pub labels: Option<&'a [String]>,
    /// The title's first part (e.g. the mechanism's name).
    pub title: String,
    /// Width and height in pixels.
    pub size: (u32, u32),
}

/// Most inputs one map shows (one colour each).
pub const MAX_INPUTS: usize = 6;

/// Largest matrix a heat map draws cell by cell (n·K).
pub const MAX_HEATMAP_CELLS: usize = 250_000;

/// Why no picture was drawn.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    #[error(
        "a map needs a 2-D coordinate or haversine space whose outputs are sites; use --heatmap"
    )]
    NotAMap,
    #[error("the heat map would have {0} cells, over the limit of {MAX_HEATMAP_CELLS}")]
    TooLarge(usize),
    #[error("input {0} is out of range")]
    Input(usize),
    #[error("at most {MAX_INPUTS} inputs on one map")]
    TooManyInputs,
    #[error("cannot draw: {0}")]
    Draw(String),
}

fn draw_err(e: impl std::fmt::Display) -> PlotError {
    PlotError::Draw(e.to_string())
}

/// The colours of the chosen inputs.
const COLOURS: [RGBColor; MAX_INPUTS] = [
    RGBColor(213, 94, 0),
    RGBColor(0, 114, 178),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(230, 159, 0),
    RGBColor(86, 180, 233),
];

/// Row u of the matrix, normalized, as doubles.
fn row(file: &MechanismFile, u: usize) -> Vec<f64> {
    let r = file.matrix.row(u);
    let total: Q = r.iter().sum();
    r.iter()
        .map(|x| {
            if total > 0u32 {
                f64_nearest(&(x / &total))
            } else {
                0.0
            }
        })
        .collect()
}

/// The input that is nearest the centre of the space (the default input of a map).
pub fn central_input(file: &MechanismFile) -> usize {
    let n = file.space.n();
    let total = |a: usize| -> f64 { (0..n).map(|v| file.space.approx(a, v)).sum() };
    (0..n)
        .map(|a| (total(a), a))
        .min_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)))
        .map_or(0, |(_, a)| a)
}

/// Draw `file` into the SVG file `out`.
pub fn plot(file: &MechanismFile, opts: &Options, out: &Path) -> Result<(), PlotError> {
    match opts.kind {
        Kind::Map => map(file, opts, out),
        Kind::Heatmap => heatmap(file, opts, out),
    }
}

fn name(opts: &Options, u: usize) -> String {
    opts.labels
        .map_or_else(|| format!("input {u}"), |l| l[u].clone())
}

fn map(file: &MechanismFile, opts: &Options, out: &Path) -> Result<(), PlotError> {
    let space = &file.space;
    let kind = space.kind();
    if !kind.has_points() || space.points().first().map_or(0, Vec::len) != 2 {
        return Err(PlotError::NotAMap);
    }
    if opts.inputs.len() > MAX_INPUTS {
        return Err(PlotError::TooManyInputs);
    }
    let n = space.n();
    if let Some(&u) = opts.inputs.iter().find(|&&u| u >= n) {
        return Err(PlotError::Input(u));
    }
    // (x, y) of a point: (lon, lat) for haversine, else (p0, p1).
    let xy = |p: &[Q]| -> (f64, f64) {
        let (a, b) = (f64_nearest(&p[0]), f64_nearest(&p[1]));
        if kind == MetricKind::Haversine {
            (b, a)
        } else {
            (a, b)
        }
    };
    let inputs: Vec<(f64, f64)> = space.points()[..n].iter().map(|p| xy(p)).collect();
    let sites: Vec<(f64, f64)> = match &file.outputs {
        Outputs::Inputs => inputs.clone(),
        Outputs::OfInputs(v) => v.iter().map(|&i| inputs[i]).collect(),
        Outputs::Points(p) => p.iter().map(|x| xy(x)).collect(),
        Outputs::Labels(_) => return Err(PlotError::NotAMap),
    };
    if inputs
        .iter()
        .chain(&sites)
        .any(|&(x, y)| !(x.is_finite() && y.is_finite()))
    {
        return Err(PlotError::Draw(
            "a coordinate is outside the range of doubles".into(),
        ));
    }
    let all = inputs.iter().chain(&sites);
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        x0 = x0.min(x);
        x1 = x1.max(x);
        y0 = y0.min(y);
        y1 = y1.max(y);
    }
    // Equal scales on both axes (longitude degrees shrunk by cos(latitude)): widen the
    // narrower range around its centre to the plotting area's aspect.
    let shrink = if kind == MetricKind::Haversine {
        ((y0 + y1) / 2.0).to_radians().cos().max(0.05)
    } else {
        1.0
    };
    let aspect = (opts.size.0.saturating_sub(96).max(1) as f64)
        / (opts.size.1.saturating_sub(94).max(1) as f64);
    let (dx, dy) = ((x1 - x0).max(1e-9), (y1 - y0).max(1e-9));
    if dx * shrink / dy < aspect {
        let half = (dy * aspect / shrink - dx) / 2.0;
        (x0, x1) = (x0 - half, x1 + half);
    } else {
        let half = (dx * shrink / aspect - dy) / 2.0;
        (y0, y1) = (y0 - half, y1 + half);
    }
    let pad = |a: f64, b: f64| ((b - a).abs() * 0.04).max(1e-9);
    let (px, py) = (pad(x0, x1), pad(y0, y1));
    let (unit, xdesc, ydesc) = match kind {
        MetricKind::Haversine => ("km", "longitude (°)", "latitude (°)"),
        _ => ("units", "x", "y"),
    };
    let eps = f64_nearest(&file.epsilon);
    let per = if kind == MetricKind::Haversine {
        " per km"
    } else {
        ""
    };
    let root = SVGBackend::new(out, opts.size).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let caption = format!(
        "{}: ε = {eps}{per}, n = {n}, output distributions",
        opts.title
    );
    let mut chart = ChartBuilder::on(&root)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d((x0 - px)..(x1 + px), (y0 - py)..(y1 + py))
        .map_err(draw_err)?;
    chart
        .configure_mesh()
        .x_desc(xdesc)
        .y_desc(ydesc)
        .light_line_style(WHITE)
        .draw()
        .map_err(draw_err)?;
    chart
        .draw_series(
            inputs
                .iter()
                .map(|&p| Circle::new(p, 2, RGBColor(150, 150, 150).filled())),
        )
        .map_err(draw_err)?;
    let radius = 6.0 + 14.0 * (200.0 / (n as f64 + 200.0));
    for (i, &u) in opts.inputs.iter().enumerate() {
        let colour = COLOURS[i];
        let h = row(file, u);
        let top = h.iter().cloned().fold(0.0, f64::max);
        let mut loss = 0.0;
        for (k, &p) in h.iter().enumerate() {
            if let Outputs::Inputs = file.outputs {
                loss += p * space.approx(u, k);
            }
            let r = radius * (p / top).sqrt();
            if r >= 0.5 {
                chart
                    .draw_series(std::iter::once(Circle::new(
                        sites[k],
                        r.round() as i32,
                        colour.mix(0.45).filled(),
                    )))
                    .map_err(draw_err)?;
            }
        }
        let legend = match file.outputs {
            Outputs::Inputs => format!("{}: expected distance {loss:.3} {unit}", name(opts, u)),
            _ => name(opts, u),
        };
        chart
            .draw_series(std::iter::once(Cross::new(
                inputs[u],
                7,
                colour.stroke_width(3),
            )))
            .map_err(draw_err)?
            .label(legend)
            .legend(move |(x, y)| Cross::new((x + 6, y), 5, colour.stroke_width(3)));
    }
    if !opts.inputs.is_empty() {
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.85))
            .border_style(BLACK)
            .label_font(("sans-serif", 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(draw_err)?;
    }
    root.present().map_err(draw_err)
}

fn heatmap(file: &MechanismFile, opts: &Options, out: &Path) -> Result<(), PlotError> {
    let (n, k) = (file.matrix.rows, file.matrix.cols);
    if n.saturating_mul(k) > MAX_HEATMAP_CELLS {
        return Err(PlotError::TooLarge(n.saturating_mul(k)));
    }
    let rows: Vec<Vec<f64>> = (0..n).map(|u| row(file, u)).collect();
    let top = rows
        .iter()
        .flatten()
        .cloned()
        .fold(0.0, f64::max)
        .max(1e-300);
    let eps = f64_nearest(&file.epsilon);
    let root = SVGBackend::new(out, opts.size).into_drawing_area();
    root.fill(&WHITE).map_err(draw_err)?;
    let (main, bar) = root.split_horizontally(opts.size.0.saturating_sub(120));
    // Names where they fit: rows up to 40, columns (written across) up to 12.
    let few = n <= 40;
    let few_cols = k <= 12;
    let caption = format!(
        "{}: ε = {eps}, H[u][k] (rows: inputs, columns: outputs)",
        opts.title
    );
    // Segmented axes: a label names the cell it is centred on. Row 0 is drawn at the top.
    let mut chart = ChartBuilder::on(&main)
        .caption(caption, ("sans-serif", 18))
        .margin(12)
        .x_label_area_size(45)
        .y_label_area_size(if few { 100 } else { 50 })
        .build_cartesian_2d((0..k).into_segmented(), (0..n).into_segmented())
        .map_err(draw_err)?;
    let out_name = |c: usize| -> String {
        match &file.outputs {
            Outputs::Labels(l) => l[c].clone(),
            Outputs::OfInputs(v) => name(opts, v[c]),
            Outputs::Inputs => name(opts, c),
            Outputs::Points(_) => format!("output {c}"),
        }
    };
    let centre = |v: &SegmentValue<usize>| match v {
        SegmentValue::CenterOf(i) => Some(*i),
        _ => None,
    };
    chart
        .configure_mesh()
        .disable_mesh()
        .x_desc(if few_cols {
            "output"
        } else {
            "output (0-based index)"
        })
        .y_desc(if few {
            "input"
        } else {
            "input (0-based index)"
        })
        .x_labels(if few_cols { k } else { 10 })
        .y_labels(if few { n } else { 10 })
        .x_label_style(("sans-serif", 11))
        .axis_desc_style(("sans-serif", 14))
        .y_label_style(("sans-serif", 11))
        .x_label_formatter(&|v| match centre(v) {
            Some(c) if c < k && few_cols => out_name(c),
            Some(c) if c < k => c.to_string(),
            _ => String::new(),
        })
        .y_label_formatter(&|v| match centre(v) {
            Some(y) if y < n && few => name(opts, n - 1 - y),
            Some(y) if y < n => (n - 1 - y).to_string(),
            _ => String::new(),
        })
        .draw()
        .map_err(draw_err)?;
    chart
        .draw_series((0..n).flat_map(|u| {
            let rows = &rows;
            (0..k).map(move |c| {
                let v = rows[u][c] / top;
                let y = n - 1 - u;
                Rectangle::new(
                    [
                        (SegmentValue::Exact(c), SegmentValue::Exact(y)),
                        (SegmentValue::Exact(c + 1), SegmentValue::Exact(y + 1)),
                    ],
                    ViridisRGB::get_color(v).filled(),
                )
            })
        }))
        .map_err(draw_err)?;
    // The colour bar: 0 … the largest entry.
    let mut scale = ChartBuilder::on(&bar)
        .margin_top(40)
        .margin_bottom(50)
        .margin_right(10)
        .y_label_area_size(75)
        .build_cartesian_2d(0..1, 0f64..top)
        .map_err(draw_err)?;
    scale
        .configure_mesh()
        .disable_mesh()
        .disable_x_axis()
        .y_labels(6)
        .y_label_style(("sans-serif", 12))
        .axis_desc_style(("sans-serif", 14))
        .y_desc("probability")
        .y_label_formatter(&|v| format!("{v:.2}"))
        .draw()
        .map_err(draw_err)?;
    let steps = 100;
    scale
        .draw_series((0..steps).map(|i| {
            let (a, b) = (
                top * i as f64 / steps as f64,
                top * (i + 1) as f64 / steps as f64,
            );
            Rectangle::new(
                [(0, a), (1, b)],
                ViridisRGB::get_color((i as f64 + 0.5) / steps as f64).filled(),
            )
        }))
        .map_err(draw_err)?;
    root.present().map_err(draw_err)
}
