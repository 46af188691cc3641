//! The experiments of Imola et al. 2022 §5 (`mdp experiment …`), written as CSV and SVG:
//!
//! * utility: L_q (q = 0.95, eq. 11) versus ε_tight (δ = 0.001, eq. 10) for EXPMECH,
//!   ConstOPTMech, SpannerMech, OPTMech, TEM and Madlib, each calibrated to every target
//!   ε_tight ([`crate::calibrate`]), with the packing lower bound (Theorem 3 at ε = the
//!   target) and the uniform mechanism's L_q;
//! * scalability: time and LP non-zeros versus n;
//! * ablation: L_q, rows and time of ConstOPTMech over r and λ (Table 3).
//!
//! Every certified mechanism is audited (its verdict is a CSV column); Madlib's matrix is a
//! Monte Carlo estimate and its rows say so.

use crate::audit::{self, Options, Verdict};
use crate::bounds::PackingCandidates;
use crate::calibrate::{calibrate, eps_tight, Calibrated, CalibrationError};
use crate::exact::{f64_up, q_from_f64, Q};
use crate::io::{Certificate, MechanismFile};
use crate::mechanism::{Matrix, Outputs};
use crate::mechanisms::madlib::Madlib;
use crate::metric::Space;
use crate::produce;
use rand::SeedableRng;
use std::time::Instant;

use produce::MAX_PREC as PREC;

/// A mechanism family with one privacy parameter (its claimed ε, or Madlib's noise ε):
/// a family of the one registry [`produce::Family`], or the Madlib estimate (a sampled
/// matrix, not certified).
#[derive(Clone, Debug)]
pub enum Family {
    Built(produce::Family),
    Madlib { samples: usize, seed: u64 },
}

impl Family {
    /// The name the papers use.
    pub fn name(&self) -> String {
        match self {
            Family::Built(f) => f.paper_name(),
            Family::Madlib { .. } => "Madlib (estimate)".into(),
        }
    }

    pub fn certified(&self) -> bool {
        !matches!(self, Family::Madlib { .. })
    }

    /// ConstOPTMech with I_NN,r and the given λ sweep (the experiments' ConstOPTMech).
    pub fn constopt(r: usize, lambdas: Vec<f64>) -> Family {
        Family::Built(produce::Family::Constopt(produce::ConstOptMech {
            replacement: produce::ReplacementSpec::NearestNeighbours { r },
            lambdas,
            solver: crate::lp::Solver::Auto,
        }))
    }
}

/// A built mechanism and what building it measured.
pub struct Instance {
    pub matrix: Matrix,
    pub seconds: f64,
    /// LP size (non-zeros, rows) when the family solves an LP.
    pub lp: Option<(usize, usize)>,
}

/// Build `family` at parameter `p` on `space`.
pub fn build(space: &Space, family: &Family, p: f64) -> Result<Instance, String> {
    let eps = q_from_f64(p);
    let t = Instant::now();
    let mut lp = None;
    let matrix = match family {
        Family::Built(f) => {
            let a = produce::build(
                &produce::Request::new(space, "experiment", eps.clone()),
                f,
                &crate::progress::Silent,
            )
            .map_err(|e| e.to_string())?;
            lp = a.lp_size;
            a.matrix
        }
        Family::Madlib { samples, seed } => {
            let m = Madlib::new(space, &eps)?;
            let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(*seed);
            let n = space.n();
            let mut data = vec![Q::from(0u32); n * n];
            let mut counts = vec![0u64; n];
            for w in 0..n {
                counts.iter_mut().for_each(|c| *c = 0);
                for _ in 0..*samples {
                    counts[m.sample(w, &mut rng)] += 1;
                }
                for y in 0..n {
                    data[w * n + y] = Q::from_unsigneds(counts[y], *samples as u64);
                }
            }
            Matrix::new(n, n, data)
        }
    };
    Ok(Instance {
        matrix,
        seconds: t.elapsed().as_secs_f64(),
        lp,
    })
}

/// The audit of `matrix` at claimed ε = `p` (δ, q as given): verdict, L_q upper end, L.
pub fn measure(
    space: &Space,
    matrix: &Matrix,
    p: f64,
    delta: &Q,
    quantile: &Q,
) -> Result<(Verdict, f64, f64), String> {
    let file = MechanismFile {
        epsilon: q_from_f64(p),
        space: space.clone(),
        matrix: matrix.clone(),
        outputs: Outputs::Inputs,
        within: None,
        delta: delta.clone(),
        quantile: quantile.clone(),
        cost: None,
        prior: None,
        certificate: Certificate::default(),
        meta: None,
        warnings: vec![],
        labels: None,
    };
    let r = audit::audit(&file, &Options::default()).map_err(|e| e.to_string())?;
    let lq = r.loss_quantile.map_or(f64::NAN, |x| x[1]);
    let l = r.loss_max.map_or(f64::NAN, |x| x[1]);
    Ok((r.verdict, lq, l))
}

/// Calibrate `family` to ε_tight = `target` at δ (relative tolerance 1e-3, or 1e-2 for a
/// Monte Carlo estimate, whose ε_tight is itself noisy at that level; p from 1e-3·target to
/// 1e3·target, starting at `p0`).
pub fn calibrated(
    space: &Space,
    family: &Family,
    target: f64,
    delta: &Q,
    p0: f64,
) -> Result<(Calibrated, Instance), CalibrationError> {
    let mut last: Option<(f64, Instance)> = None;
    let rel_tol = if matches!(family, Family::Madlib { .. }) {
        1e-2
    } else {
        1e-3
    };
    let c = calibrate(target, rel_tol, p0, 1e-3 * target, 1e3 * target, |p| {
        let inst = build(space, family, p)?;
        // The enclosure's upper end: the calibrated tight ε is proved ≤ the target.
        let v = eps_tight(space, &inst.matrix, delta, PREC)?[1];
        last = Some((p, inst));
        Ok(v)
    })?;
    let inst = match last {
        Some((p, inst)) if p == c.param => inst,
        _ => build(space, family, c.param).map_err(CalibrationError::Failed)?,
    };
    Ok((c, inst))
}

/// One row of the utility experiment.
#[derive(Clone, Debug, serde::Serialize)]
pub struct UtilityRow {
    pub mechanism: String,
    pub target_eps_tight: f64,
    pub param: f64,
    pub eps_tight: f64,
    pub loss_q: f64,
    pub loss_max: f64,
    pub verdict: String,
    pub seconds: f64,
}

/// The uniform mechanism's L_q (ε_tight = 0): the q-quantile over inputs of the mean
/// distance to a uniformly random output (float; a reference line).
pub fn uniform_loss_q(space: &Space, q: f64) -> f64 {
    let n = space.n();
    let mut v: Vec<f64> = (0..n)
        .map(|w| {
            (0..n)
                .filter(|&y| y != w)
                .map(|y| space.approx(w, y))
                .sum::<f64>()
                / n as f64
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[((q * n as f64).ceil() as usize).clamp(1, n) - 1]
}

/// The best verified k-center packing bound at each ε (Theorem 3, eq. 7; 0 if none).
pub fn packing_bounds(space: &Space, eps: &[f64]) -> Vec<f64> {
    let outputs: Vec<usize> = (0..space.n()).collect();
    let cands = PackingCandidates::new(space, &outputs);
    eps.iter()
        .map(|&e| {
            cands
                .best(space, &outputs, f64_up(&q_from_f64(e)), PREC)
                .map_or(0.0, |b| b.bound.lo)
        })
        .collect()
}

/// A multi-series line chart as a standalone SVG (linear x, linear or log y), drawn with
/// `plotters` like `mdp plot` (issue 33): each series a line with point markers, named in
/// the legend; points that are not finite (or ≤ 0 on a log axis) are left out.
pub fn svg_chart(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    series: &[(String, Vec<(f64, f64)>)],
    log_y: bool,
) -> String {
    use plotters::prelude::*;
    let keep = |&(x, y): &(f64, f64)| x.is_finite() && y.is_finite() && (!log_y || y > 0.0);
    let series: Vec<(String, Vec<(f64, f64)>)> = series
        .iter()
        .map(|(name, p)| {
            let mut p: Vec<(f64, f64)> = p.iter().copied().filter(keep).collect();
            p.sort_by(|a, b| a.0.total_cmp(&b.0));
            (name.clone(), p)
        })
        .collect();
    let all = series.iter().flat_map(|(_, p)| p.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    for &(x, y) in all {
        (x0, x1, y0, y1) = (x0.min(x), x1.max(x), y0.min(y), y1.max(y));
    }
    if x0 > x1 {
        (x0, x1, y0, y1) = (0.0, 1.0, 1.0, 10.0);
    }
    if !log_y {
        y0 = y0.min(0.0);
    }
    if x1 <= x0 {
        x1 = x0 + 1.0;
    }
    if y1 <= y0 {
        y1 = if log_y { y0 * 10.0 } else { y0 + 1.0 };
    }
    let padx = (x1 - x0) * 0.03;
    let colours = [
        RGBColor(31, 119, 180),
        RGBColor(214, 39, 40),
        RGBColor(44, 160, 44),
        RGBColor(148, 103, 189),
        RGBColor(255, 127, 14),
        RGBColor(140, 86, 75),
        RGBColor(23, 190, 207),
        RGBColor(127, 127, 127),
        RGBColor(227, 119, 194),
    ];
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (760, 460)).into_drawing_area();
        let _ = root.fill(&WHITE);
        macro_rules! builder {
            () => {
                ChartBuilder::on(&root)
                    .caption(title, ("sans-serif", 16))
                    .margin(12)
                    .x_label_area_size(40)
                    .y_label_area_size(70)
            };
        }
        // One drawing routine for both kinds of y axis.
        macro_rules! draw {
            ($chart:expr) => {{
                let mut chart = $chart;
                let _ = chart
                    .configure_mesh()
                    .x_desc(xlabel)
                    .y_desc(ylabel)
                    .axis_desc_style(("sans-serif", 13))
                    .light_line_style(WHITE)
                    .draw();
                for (i, (name, p)) in series.iter().enumerate() {
                    let c = colours[i % colours.len()];
                    if let Ok(a) =
                        chart.draw_series(LineSeries::new(p.iter().copied(), c.stroke_width(2)))
                    {
                        a.label(name.as_str()).legend(move |(x, y)| {
                            PathElement::new(vec![(x, y), (x + 18, y)], c.stroke_width(2))
                        });
                    }
                    let _ = chart.draw_series(p.iter().map(|&q| Circle::new(q, 3, c.filled())));
                }
                let _ = chart
                    .configure_series_labels()
                    .background_style(WHITE.mix(0.85))
                    .border_style(BLACK)
                    .label_font(("sans-serif", 12))
                    .position(SeriesLabelPosition::UpperRight)
                    .draw();
            }};
        }
        if log_y {
            if let Ok(chart) = builder!()
                .build_cartesian_2d((x0 - padx)..(x1 + padx), (y0 / 1.5..y1 * 1.5).log_scale())
            {
                draw!(chart);
            }
        } else if let Ok(chart) =
            builder!().build_cartesian_2d((x0 - padx)..(x1 + padx), y0..(y1 + (y1 - y0) * 0.05))
        {
            draw!(chart);
        }
        let _ = root.present();
    }
    out
}

/// Write `rows` as CSV (header from the first row's field names).
pub fn write_csv<T: serde::Serialize>(path: &std::path::Path, rows: &[T]) -> Result<(), String> {
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let v = serde_json::to_value(r).map_err(|e| e.to_string())?;
        let obj = v.as_object().ok_or("a CSV row must be an object")?;
        if i == 0 {
            out += &obj.keys().cloned().collect::<Vec<_>>().join(",");
            out.push('\n');
        }
        let cells: Vec<String> = obj
            .values()
            .map(|x| match x {
                serde_json::Value::String(s) => format!("\"{}\"", s.replace('"', "\"\"")),
                other => other.to_string(),
            })
            .collect();
        out += &cells.join(",");
        out.push('\n');
    }
    std::fs::write(path, out).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// The utility experiment on one space: every family calibrated to every target; the CSV
/// rows (a family that fails at a target gets a row with its error as the verdict), plus
/// rows for the packing lower bound and the uniform mechanism.
pub fn utility(
    space: &Space,
    families: &[Family],
    targets: &[f64],
    delta: &Q,
    quantile: f64,
    progress: &mut dyn FnMut(&UtilityRow),
) -> Vec<UtilityRow> {
    let qq = q_from_f64(quantile);
    let mut rows = vec![];
    for f in families {
        let mut p0 = targets.first().copied().unwrap_or(1.0);
        for &t in targets {
            let start = Instant::now();
            let row = match calibrated(space, f, t, delta, p0).and_then(|(c, inst)| {
                let (verdict, lq, l) = if f.certified() {
                    measure(space, &inst.matrix, c.param, delta, &qq)?
                } else {
                    let (_, lq, l) = measure(space, &inst.matrix, c.param, delta, &qq)?;
                    (Verdict::Inconclusive, lq, l)
                };
                Ok(UtilityRow {
                    mechanism: f.name(),
                    target_eps_tight: t,
                    param: c.param,
                    eps_tight: c.eps_tight,
                    loss_q: lq,
                    loss_max: l,
                    verdict: if f.certified() {
                        format!("{verdict:?}").to_lowercase()
                    } else {
                        "estimate".into()
                    },
                    seconds: start.elapsed().as_secs_f64(),
                })
            }) {
                Ok(r) => {
                    p0 = r.param * 1.5;
                    r
                }
                Err(e) => UtilityRow {
                    mechanism: f.name(),
                    target_eps_tight: t,
                    param: f64::NAN,
                    eps_tight: f64::NAN,
                    loss_q: f64::NAN,
                    loss_max: f64::NAN,
                    verdict: format!("error: {e}"),
                    seconds: start.elapsed().as_secs_f64(),
                },
            };
            progress(&row);
            rows.push(row);
        }
    }
    let bounds = packing_bounds(space, targets);
    let uni = uniform_loss_q(space, quantile);
    for (&t, &b) in targets.iter().zip(&bounds) {
        for (name, v) in [
            ("lower bound (Theorem 3, L at ε = target)", b),
            ("uniform", uni),
        ] {
            rows.push(UtilityRow {
                mechanism: name.into(),
                target_eps_tight: t,
                param: t,
                eps_tight: if name == "uniform" { 0.0 } else { t },
                loss_q: v,
                loss_max: v,
                verdict: "reference".into(),
                seconds: 0.0,
            });
        }
    }
    rows
}

/// The utility chart: L_q versus ε_tight per mechanism (certified rows that passed, and
/// estimates), with the reference lines against the target.
pub fn utility_svg(title: &str, rows: &[UtilityRow]) -> String {
    let mut names: Vec<String> = vec![];
    for r in rows {
        if !names.contains(&r.mechanism) {
            names.push(r.mechanism.clone());
        }
    }
    let series: Vec<(String, Vec<(f64, f64)>)> = names
        .into_iter()
        .map(|n| {
            let p = rows
                .iter()
                .filter(|r| r.mechanism == n && !r.verdict.starts_with("error"))
                .map(|r| {
                    (
                        if r.verdict == "reference" {
                            r.target_eps_tight
                        } else {
                            r.eps_tight
                        },
                        r.loss_q,
                    )
                })
                .collect();
            (n, p)
        })
        .collect();
    svg_chart(
        title,
        "ε_tight (δ = 0.001)",
        "L_q (q = 0.95)",
        &series,
        false,
    )
}

/// One row of the scalability experiment.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ScaleRow {
    pub mechanism: String,
    pub n: usize,
    pub param: f64,
    pub eps_tight: f64,
    pub seconds: f64,
    pub lp_nonzeros: Option<usize>,
    pub lp_rows: Option<usize>,
    pub verdict: String,
}

/// Scalability: each family at a fixed parameter on the first n points of `space` for every
/// n (time, LP size, the achieved ε_tight, the audit's verdict). A family is dropped for the
/// larger n once one build takes more than `budget` seconds, or would at the next n by an n³
/// extrapolation.
pub fn scalability(
    space_of: &dyn Fn(usize) -> Result<Space, String>,
    families: &[(Family, f64)],
    sizes: &[usize],
    delta: &Q,
    budget: f64,
    progress: &mut dyn FnMut(&ScaleRow),
) -> Result<Vec<ScaleRow>, String> {
    let mut rows = vec![];
    for (f, p) in families {
        for (idx, &n) in sizes.iter().enumerate() {
            let space = space_of(n)?;
            let row = match build(&space, f, *p) {
                Ok(inst) => {
                    let e = eps_tight(&space, &inst.matrix, delta, PREC)
                        .map(|e| 0.5 * (e[0] + e[1]))
                        .unwrap_or(f64::NAN);
                    let verdict = measure(&space, &inst.matrix, *p, delta, &q_from_f64(0.95))
                        .map(|v| format!("{:?}", v.0).to_lowercase())
                        .unwrap_or_else(|e| e);
                    ScaleRow {
                        mechanism: f.name(),
                        n,
                        param: *p,
                        eps_tight: e,
                        seconds: inst.seconds,
                        lp_nonzeros: inst.lp.map(|x| x.0),
                        lp_rows: inst.lp.map(|x| x.1),
                        verdict,
                    }
                }
                Err(e) => ScaleRow {
                    mechanism: f.name(),
                    n,
                    param: *p,
                    eps_tight: f64::NAN,
                    seconds: f64::NAN,
                    lp_nonzeros: None,
                    lp_rows: None,
                    verdict: format!("error: {e}"),
                },
            };
            // Stop a family once it exceeds the budget, or once its time extrapolated as n³
            // to the next size would (LP mechanisms grow at least that fast here).
            let next = sizes
                .get(idx + 1)
                .map_or(1.0, |&m| (m as f64 / n as f64).powi(3));
            let over = !(row.seconds * next <= budget);
            progress(&row);
            rows.push(row);
            if over {
                break;
            }
        }
    }
    Ok(rows)
}

/// One row of the ablation (Imola et al. Table 3).
#[derive(Clone, Debug, serde::Serialize)]
pub struct AblationRow {
    pub r: usize,
    pub lambda: f64,
    pub param: f64,
    pub eps_tight: f64,
    pub loss_q: f64,
    pub lp_rows: usize,
    pub lp_nonzeros: usize,
    pub seconds: f64,
    pub verdict: String,
}

/// Table 3: ConstOPTMech at ε_tight = `target` for r ∈ `rs` at λ = `lambda_fixed`, and for
/// λ ∈ `lambdas` at r = `r_fixed`.
#[allow(clippy::too_many_arguments)] // Table 3's parameters, named as in the paper
pub fn ablation(
    space: &Space,
    target: f64,
    rs: &[usize],
    lambda_fixed: f64,
    lambdas: &[f64],
    r_fixed: usize,
    delta: &Q,
    progress: &mut dyn FnMut(&AblationRow),
) -> Vec<AblationRow> {
    let configs: Vec<(usize, f64)> = rs
        .iter()
        .map(|&r| (r, lambda_fixed))
        .chain(lambdas.iter().map(|&l| (r_fixed, l)))
        .collect();
    let mut rows = vec![];
    for (r, lambda) in configs {
        let f = Family::constopt(r, vec![lambda]);
        let row = match calibrated(space, &f, target, delta, target).and_then(|(c, inst)| {
            let t = Instant::now();
            let rebuilt = build(space, &f, c.param)?;
            let seconds = t.elapsed().as_secs_f64();
            let (v, lq, _) = measure(space, &inst.matrix, c.param, delta, &q_from_f64(0.95))?;
            let (nnz, lp_rows) = rebuilt.lp.unwrap_or((0, 0));
            Ok(AblationRow {
                r,
                lambda,
                param: c.param,
                eps_tight: c.eps_tight,
                loss_q: lq,
                lp_rows,
                lp_nonzeros: nnz,
                seconds,
                verdict: format!("{v:?}").to_lowercase(),
            })
        }) {
            Ok(r) => r,
            Err(e) => AblationRow {
                r,
                lambda,
                param: f64::NAN,
                eps_tight: f64::NAN,
                loss_q: f64::NAN,
                lp_rows: 0,
                lp_nonzeros: 0,
                seconds: f64::NAN,
                verdict: format!("error: {e}"),
            },
        };
        progress(&row);
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every series is drawn and named, on a linear and on a log axis; points a log axis
    /// cannot show are left out instead of breaking the chart.
    #[test]
    fn svg_chart_draws_every_series() {
        let series = vec![
            (
                "exponential".to_string(),
                vec![(0.5, 3.0), (1.0, 2.0), (2.0, 1.2), (4.0, 0.7)],
            ),
            (
                "optimal".to_string(),
                vec![(0.5, 2.5), (1.0, 1.5), (2.0, 0.9), (4.0, 0.0)],
            ),
        ];
        for log_y in [false, true] {
            let svg = svg_chart(
                "L_q vs ε_tight: test",
                "ε_tight",
                "L_q (km)",
                &series,
                log_y,
            );
            assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
            assert!(svg.contains("exponential") && svg.contains("optimal"));
            assert!(svg.contains("ε_tight") && svg.contains("L_q (km)"));
            assert!(svg.matches("<polyline").count() >= 2, "{log_y}");
            std::fs::write(
                std::env::temp_dir().join(format!("mdp-chart-{log_y}.svg")),
                &svg,
            )
            .unwrap();
        }
    }
}
