//! The user-level experiments of Imola, Roy Chowdhury, Chaudhuri 2024 §7 as `mdp
//! experiment user-level` runs them (`EXPERIMENTS.md`): the accountant's α₀ against N
//! (Theorem 4.4 against FMT + group privacy and composition), linear queries on a space
//! (PrivEMDLinear against item-level baselines) and frequency estimation on a clustered
//! space (FreqEstLocal against k-RR and Hadamard response). Each writes a CSV and an SVG
//! to `out_dir`; progress goes through [`Progress`].

use super::evaluation;
use super::freq::Clustered;
use super::priv_emd_linear::{LinearQuery, Norm};
use super::{invalid, Budget, Units, UserLevelError};
use crate::exact::Q;
use crate::experiment::{svg_chart, write_csv};
use crate::metric::Space;
use crate::privatize;
use crate::progress::Progress;
use std::path::{Path, PathBuf};

/// Settings of the user-level experiments (the flags of `mdp experiment user-level`).
#[derive(Clone, Debug)]
pub struct Settings {
    /// Item probabilities of the clustered space (clusters × size numbers ≥ 0).
    pub prior: Vec<f64>,
    /// Clusters C and items per cluster s of the clustered item space.
    pub clusters: usize,
    pub size: usize,
    /// Distance inside a cluster (normalised), and its text for the chart's title.
    pub r: Q,
    pub r_text: String,
    /// Users n of each point.
    pub users: Vec<usize>,
    /// Items per user m.
    pub items: usize,
    /// α values (normalised units; the baselines' ε equals α).
    pub alphas: Vec<f64>,
    /// δ of the user-level guarantees.
    pub delta: f64,
    /// Trials per point.
    pub trials: usize,
    /// Seed of the simulation.
    pub seed: u64,
    /// Directory of the CSV and SVG outputs.
    pub out_dir: PathBuf,
    /// Suffix of the frequency files (user_level_freq_NAME.csv/.svg); the accountant and
    /// linear files are written only without it.
    pub name: Option<String>,
}

/// Why the experiments stopped.
#[derive(Debug, thiserror::Error)]
pub enum ExperimentError {
    /// A setting out of its range, or a user-level computation past its budget.
    #[error(transparent)]
    Invalid(#[from] UserLevelError),
    /// An output could not be written (the file and the reason).
    #[error("{0}")]
    Write(String),
}

/// Run the experiments: the accountant and the linear queries on `space` (only without
/// `name`), then frequency estimation.
pub fn run(
    a: &Settings,
    space: Option<&Space>,
    progress: &dyn Progress,
) -> Result<(), ExperimentError> {
    if a.alphas.iter().any(|x| !(*x > 0.0 && x.is_finite())) {
        return Err(invalid("alphas", "every α must be finite and > 0").into());
    }
    if !(a.delta > 0.0 && a.delta < 1.0) {
        return Err(invalid("delta", "must be in (0, 1)").into());
    }
    for (field, zero) in [
        ("users", a.users.contains(&0)),
        ("items", a.items == 0),
        ("trials", a.trials == 0),
    ] {
        if zero {
            return Err(invalid(field, "must be ≥ 1").into());
        }
    }
    std::fs::create_dir_all(&a.out_dir).map_err(|e| ExperimentError::Write(e.to_string()))?;
    if a.name.is_none() {
        if let Some(space) = space {
            accountant(a, progress)?;
            linear(a, space, progress)?;
        }
    }
    frequency(a, progress)
}

fn write(dir: &Path, name: &str, text: String) -> Result<(), ExperimentError> {
    std::fs::write(dir.join(name), text).map_err(|e| ExperimentError::Write(format!("{name}: {e}")))
}

fn csv<T: serde::Serialize>(dir: &Path, name: &str, rows: &[T]) -> Result<(), ExperimentError> {
    write_csv(&dir.join(name), rows).map_err(ExperimentError::Write)
}

/// Rows grouped into named series of (x, y) points, in first-seen order.
fn series<T>(
    rows: &[T],
    key: impl Fn(&T) -> Option<(String, f64, f64)>,
) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut out: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in rows {
        if let Some((name, x, y)) = key(r) {
            match out.iter_mut().find(|(n, _)| *n == name) {
                Some((_, v)) => v.push((x, y)),
                None => out.push((name, vec![(x, y)])),
            }
        }
    }
    out
}

/// 3. Frequency estimation on the clustered space.
fn frequency(a: &Settings, progress: &dyn Progress) -> Result<(), ExperimentError> {
    let t = std::time::Instant::now();
    let freq_name = a
        .name
        .as_ref()
        .map(|n| format!("user_level_freq_{n}"))
        .unwrap_or("user_level_freq".into());
    let clustered = Clustered::new(a.clusters, a.size, a.r.clone())?;
    if a.prior.len() != clustered.k() || a.prior.iter().any(|x| !(*x >= 0.0 && x.is_finite())) {
        return Err(invalid(
            "prior",
            format!("expected {} non-negative numbers", clustered.k()),
        )
        .into());
    }
    let mut rng = privatize::rng(Some(a.seed));
    let max_n = *a.users.iter().max().unwrap_or(&1);
    let rows = evaluation::frequency(
        &clustered, &a.prior, &a.users, a.items, &a.alphas, a.delta, a.trials, &mut rng,
    )?;
    csv(&a.out_dir, &format!("{freq_name}.csv"), &rows)?;
    let ser = series(&rows, |r| {
        (r.users as usize == max_n).then(|| (format!("{} {}", r.model, r.method), r.alpha, r.error))
    });
    write(
        &a.out_dir,
        &format!("{freq_name}.svg"),
        svg_chart(
            &format!(
                "Frequency estimation, {} × {} clustered items (r = {}), n = {max_n}",
                a.clusters, a.size, a.r_text
            ),
            "α (baselines: ε = α or α·r)",
            "mean d_EM(p̂, p)",
            &ser,
            true,
        ),
    )?;
    progress.note(&format!(
        "frequency: {} rows, {:.2} s",
        rows.len(),
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// 1. The accountant: α₀ for a target α versus N.
fn accountant(a: &Settings, progress: &dyn Progress) -> Result<(), ExperimentError> {
    let t = std::time::Instant::now();
    let users: Vec<u64> = vec![
        100,
        1_000,
        10_000,
        100_000,
        1_000_000,
        10_000_000,
        100_000_000,
    ];
    let rows = evaluation::accountant(&users, &[a.items as u64], &[1.0, 10.0], a.delta)?;
    csv(&a.out_dir, "user_level_accountant.csv", &rows)?;
    let mut ser = Vec::new();
    for (label, f) in [
        (
            "shuffle (Thm 4.4)",
            (|r: &evaluation::AccountRow| r.alpha0_shuffle) as fn(&evaluation::AccountRow) -> f64,
        ),
        ("FMT + group privacy", |r| r.alpha0_fmt),
        ("composition α/m", |r| r.alpha0_composition),
    ] {
        for alpha in [1.0, 10.0] {
            let pts: Vec<(f64, f64)> = rows
                .iter()
                .filter(|r| r.model == "central" && r.alpha == alpha)
                .map(|r| ((r.n_items as f64).log10(), f(r)))
                .collect();
            ser.push((format!("{label}, α = {alpha}"), pts));
        }
    }
    write(
        &a.out_dir,
        "user_level_accountant.svg",
        svg_chart(
            &format!(
                "Item-level α₀ allowed for user-level α (central, m = {}, δ = {})",
                a.items, a.delta
            ),
            "log10 N = n·m",
            "α₀",
            &ser,
            true,
        ),
    )?;
    progress.note(&format!(
        "accountant: {} rows, {:.2} s",
        rows.len(),
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}

/// 2. Linear queries on the space: the average location.
fn linear(a: &Settings, space: &Space, progress: &dyn Progress) -> Result<(), ExperimentError> {
    let t = std::time::Instant::now();
    let query = LinearQuery::average(space, Norm::L2)?;
    let diameter = Units::for_space(space, &mut Budget::default())?.diameter;
    let mut rng = privatize::rng(Some(a.seed));
    let max_n = *a.users.iter().max().unwrap_or(&1);
    let all_users = evaluation::neighbourhood_users(space, max_n, a.items, 20, &mut rng);
    let rows = evaluation::linear(
        space, &query, &diameter, &all_users, &a.users, &a.alphas, a.trials, &mut rng,
    )?;
    csv(&a.out_dir, "user_level_linear.csv", &rows)?;
    let ser = series(&rows, |r| {
        (r.users as usize == max_n).then(|| (format!("{} {}", r.model, r.method), r.alpha, r.error))
    });
    write(
        &a.out_dir,
        "user_level_linear.svg",
        svg_chart(
            &format!("Average location, n = {max_n} users × {} items", a.items),
            "α (= ε of the baselines), per diameter",
            "mean error",
            &ser,
            true,
        ),
    )?;
    progress.note(&format!(
        "linear: {} rows, {:.2} s",
        rows.len(),
        t.elapsed().as_secs_f64()
    ));
    Ok(())
}
