//! `mdp emd`, `mdp account` and `mdp release`: the user-level commands (Imola, Roy
//! Chowdhury, Chaudhuri 2024; `spec/user-level.md`). Parsing and dispatch only: the work
//! is `mdp::user_level`.

use clap::{Args, Subcommand, ValueEnum};
use mdp::audit;
use mdp::exact::{f64_nearest, f64_up, format_rational, Q};
use mdp::privatize;
use mdp::user_level::emd::{self, Histogram};
use mdp::user_level::run::{self, q, short, ul, ul_b};
use mdp::user_level::shuffle::{self, Accountant, Model};
use mdp::user_level::users::ItemNames;
use mdp::user_level::{experiments, reduction, Budget};
use serde_json::json;
use std::io::{BufReader, Write};

#[derive(Args)]
pub(crate) struct EmdArgs {
    /// The space: `builtin:NAME`, a JSON space, CSV or GeoJSON.
    #[arg(long)]
    space: String,
    /// Dataset A: a file holding a JSON array of items (labels or 0-based site indices),
    /// or the array itself.
    a: String,
    /// Dataset B, the same way.
    b: String,
    /// Also give the permutation of Lemma 2.1 (equal sizes, rational distances).
    #[arg(long)]
    assignment: bool,
    /// Largest number of exact operations.
    #[arg(long, default_value_t = Budget::DEFAULT)]
    budget: u64,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
pub(crate) enum AccountKind {
    /// PrivEMDItemWise with shuffling (Theorem 4.4): the user-level (α, δ) for α₀, or the
    /// largest α₀ for a target (α, δ) (equations 6–7). Normalised units (d ≤ 1).
    ItemWise {
        /// Items per user m.
        #[arg(long)]
        items: u64,
        /// Users n (central / shuffle model); omit for the local model.
        #[arg(long)]
        users: Option<u64>,
        /// The item-level α₀ (forward).
        #[arg(long, conflicts_with = "alpha")]
        alpha0: Option<String>,
        /// Target user-level α (inverse).
        #[arg(long)]
        alpha: Option<String>,
        /// δ: the item δ of the theorem (forward), the user-level target (inverse).
        #[arg(long)]
        delta: String,
        /// Also give Theorem 4.3's loss m·F_N(t) for two users at d_EM = t ∈ [0, 1]
        /// (tighter than α·t away from t = 0: F_N is concave).
        #[arg(long)]
        distance: Option<String>,
        /// The accountant used (the JSON gives both).
        #[arg(long, default_value = "tighter", value_parser = accountant_value)]
        accountant: Accountant,
        /// The diameter D of the space the metric was normalized by (d/D ≤ 1), in the
        /// space's unit (km for haversine): the guarantee is then also given per unit of
        /// distance, α/D (`alpha_per_unit_upper`).
        #[arg(long, value_name = "D")]
        diameter: Option<String>,
        /// Print JSON instead of a sentence.
        #[arg(long)]
        json: bool,
    },
    /// BoundedEMDReduction (Theorem 5.3): the discrete (ε, τ, δ + β) guarantee of sampling
    /// s items with replacement before an (α, δ)-bounded mechanism. Normalised units.
    Reduction {
        /// The inner mechanism's α (bounded d_EM-DP at size s, normalised units).
        #[arg(long)]
        alpha: String,
        /// The inner mechanism's δ ∈ [0, 1).
        #[arg(long)]
        delta: String,
        /// Samples per user s.
        #[arg(long)]
        samples: u64,
        /// The d_EM radius τ ∈ (0, 1] of the discrete guarantee.
        #[arg(long)]
        tau: String,
        /// β ∈ (0, 1).
        #[arg(long)]
        beta: String,
        /// Print JSON instead of a sentence.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
pub(crate) enum ReleaseKind {
    /// PrivEMDLinear (Algorithm 1): a linear query of each user (local) or of all users
    /// (central), with K-norm noise.
    Linear(LinearArgs),
    /// PrivEMDItemWise (Algorithm 2): an audited mechanism applied to every item, shuffled.
    ItemWise(ItemWiseArgs),
    /// FreqEstLocal (Algorithm 4) on a clustered metric: α₀ from the accountant, the
    /// randomizer certified, the unbiased estimate of the item frequencies.
    Freq(FreqArgs),
}

/// `--accountant`: `closed` (FMT21's closed form), `numerical` (the clones divergence with
/// directed rounding) or `tighter` (both proven, the better used).
fn accountant_value(s: &str) -> Result<Accountant, String> {
    Accountant::from_name(s).ok_or_else(|| "expected closed, numerical or tighter".into())
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum ModelArg {
    Local,
    Central,
}

#[derive(Args)]
pub(crate) struct UsersIo {
    /// Users: JSON lines, one array of items per line; `-` for standard input.
    #[arg(long, default_value = "-")]
    users: String,
    /// Where to write the release; `-` for standard output.
    #[arg(short, long, default_value = "-")]
    output: String,
    /// Reproducible randomness from this seed (tests only); default: the operating system.
    #[arg(long)]
    seed: Option<u64>,
    /// Print the guarantee as JSON on standard error instead of a sentence.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub(crate) struct LinearArgs {
    /// The space: `builtin:NAME`, a JSON space, CSV or GeoJSON.
    #[arg(long)]
    space: String,
    /// `average`, `distance:SITE`, `region:SITE:RADIUS:WIDTH` or `similarity:v1,v2,…`.
    #[arg(long, default_value = "average")]
    query: String,
    /// Norm of the range: l1, l2, linf (average only; the others are 1-dimensional).
    #[arg(long, default_value = "l2")]
    norm: String,
    /// User-level α per unit of the space's distance.
    #[arg(long)]
    alpha: String,
    /// Local (one release per user) or central (one release of all users' mean).
    #[arg(long, value_enum, default_value = "local")]
    model: ModelArg,
    /// Largest number of exact operations (the Lipschitz constant: k² pairs).
    #[arg(long, default_value_t = Budget::DEFAULT)]
    budget: u64,
    /// Algorithm 3 before the central release (users of any size).
    #[command(flatten)]
    resample: ResampleArgs,
    #[command(flatten)]
    io: UsersIo,
}

/// BoundedEMDReduction (Algorithm 3) on the command line.
#[derive(Args)]
pub(crate) struct ResampleArgs {
    /// Replace each user's items by S draws with replacement (Algorithm 3): users of any
    /// size, and the guarantee becomes Theorem 5.3's discrete (ε, τ, δ + β).
    #[arg(long, requires = "tau")]
    samples: Option<usize>,
    /// τ of the discrete guarantee, in the space's distance unit: pairs of users with
    /// d_EM ≤ τ are protected at ε.
    #[arg(long)]
    tau: Option<String>,
    /// β of Theorem 5.3 (added to δ).
    #[arg(long, default_value = "1e-9")]
    beta: String,
}

#[derive(Args)]
pub(crate) struct ItemWiseArgs {
    /// An mdp/1 mechanism: it must pass the audit at --require-epsilon (or its claim)
    /// for all pairs before one item is read.
    #[arg(long)]
    mechanism: String,
    /// The ε per unit of distance the pipeline requires.
    #[arg(long)]
    require_epsilon: Option<String>,
    /// The pipeline's metric (builtin, CSV, GeoJSON, JSON): the mechanism's metric,
    /// points and labels must equal it exactly (items are named by its labels).
    #[arg(long)]
    space: Option<String>,
    #[command(flatten)]
    pin: crate::cli::PinArgs,
    /// The item-level δ of the shuffle theorem.
    #[arg(long, default_value = "1e-9")]
    delta: String,
    /// Local (each user's shuffled outputs) or central (the counts of all outputs).
    #[arg(long, value_enum, default_value = "central")]
    model: ModelArg,
    /// The shuffle accountant of the guarantee.
    #[arg(long, default_value = "tighter", value_parser = accountant_value)]
    accountant: Accountant,
    #[command(flatten)]
    resample: ResampleArgs,
    #[command(flatten)]
    io: UsersIo,
}

/// The clustered metric of FreqEstLocal (§6.2): C clusters of s items, distance r inside a
/// cluster and 1 across (`mdp release freq`, `mdp build clustered-rr`).
#[derive(Args)]
pub(crate) struct ClusteredArgs {
    /// Clusters C.
    #[arg(long)]
    pub(crate) clusters: usize,
    /// Items per cluster s (items are `c<cluster>-<i>` or indices cluster·s + i).
    #[arg(long)]
    pub(crate) size: usize,
    /// Distance inside a cluster, r ∈ (0, 1).
    #[arg(long)]
    pub(crate) r: String,
}

#[derive(Args)]
pub(crate) struct FreqArgs {
    #[command(flatten)]
    clustered: ClusteredArgs,
    /// Target user-level α (bounded d_EM-DP, normalised units).
    #[arg(long)]
    alpha: String,
    /// Target user-level δ.
    #[arg(long, default_value = "1e-6")]
    delta: String,
    /// Local (α₀ for each user's m items) or central (shuffled across all n·m items).
    #[arg(long, value_enum, default_value = "central")]
    model: ModelArg,
    /// The shuffle accountant of the item-level α₀.
    #[arg(long, default_value = "tighter", value_parser = accountant_value)]
    accountant: Accountant,
    /// Also write the certified randomizer (an mdp/1 file at ε = α₀) here, for
    /// `mdp-audit`.
    #[arg(long)]
    randomizer: Option<String>,
    #[command(flatten)]
    io: UsersIo,
}

/// A dataset argument: an inline JSON array, else the path of a file holding one.
fn items_of(names: &ItemNames, s: &str, flag: &str) -> Result<Vec<usize>, String> {
    let text = if s.trim_start().starts_with('[') {
        s.to_string()
    } else {
        let bytes = mdp::io::read_source(s, &mdp::io::Limits::default())
            .map_err(|e| format!("{flag}: {s}: {e}"))?;
        String::from_utf8(bytes).map_err(|_| format!("{flag}: {s}: not UTF-8 text"))?
    };
    names.parse(&text).map_err(|e| format!("{flag}: {e}"))
}

pub(crate) fn emd_cmd(a: &EmdArgs) -> Result<i32, String> {
    let (space, labels) = crate::suite::space_with_labels(&a.space)?;
    let names = ItemNames::new(space.n(), labels.as_deref());
    let (x, y) = (items_of(&names, &a.a, "A")?, items_of(&names, &a.b, "B")?);
    let mut budget = Budget::new(a.budget);
    let hx = Histogram::from_items(&x, space.n()).map_err(ul_b)?;
    let hy = Histogram::from_items(&y, space.n()).map_err(ul_b)?;
    let v = emd::emd(&space, &hx, &hy, &mut budget).map_err(ul_b)?;
    let perm = if a.assignment {
        Some(emd::assignment(&space, &x, &y, &mut budget).map_err(ul_b)?)
    } else {
        None
    };
    if a.json {
        let mut out = json!({
            "emd": if v.is_point() { json!(format_rational(&v.lo)) } else {
                json!({"lo": format_rational(&v.lo), "hi": format_rational(&v.hi)}) },
            "approx": f64_nearest(&v.mid()),
        });
        if let Some((val, sigma)) = &perm {
            out["assignment"] = json!({"value": format_rational(val), "sigma": sigma});
        }
        println!("{out}");
    } else {
        if v.is_point() {
            println!("d_EM = {} ≈ {}", format_rational(&v.lo), f64_nearest(&v.lo));
        } else {
            println!(
                "d_EM ∈ [{}, {}] (enclosure: irrational distances)",
                f64_mdown(&v.lo),
                f64_up(&v.hi)
            );
        }
        if let Some((val, sigma)) = &perm {
            println!(
                "Lemma 2.1: (1/m)·Σ d(x_i, y_σ(i)) = {} with σ = {sigma:?}",
                format_rational(val)
            );
        }
    }
    Ok(0)
}

fn f64_mdown(x: &Q) -> f64 {
    mdp::exact::f64_down(x)
}

pub(crate) fn account(k: &AccountKind) -> Result<i32, String> {
    match k {
        AccountKind::ItemWise {
            items,
            users,
            alpha0,
            alpha,
            delta,
            distance,
            accountant,
            diameter,
            json,
        } => {
            let model = match users {
                None => Model::Local { m: *items },
                Some(n) => Model::Central { n: *n, m: *items },
            };
            let delta = q("delta", delta)?;
            let target = match (alpha0, alpha) {
                (Some(a0), None) => shuffle::Target::Alpha0(q("alpha0", a0)?),
                (None, Some(al)) => shuffle::Target::Alpha(q("alpha", al)?),
                _ => return Err("--alpha0 or --alpha: give exactly one".into()),
            };
            let distance = distance.as_deref().map(|t| q("distance", t)).transpose()?;
            let all = shuffle::account(model, &target, &delta, distance.as_ref(), *accountant)
                .map_err(ul)?;
            let acc = &all.used;
            let scope = if users.is_some() { "central" } else { "local" };
            let diameter = diameter.as_deref().map(|d| q("diameter", d)).transpose()?;
            if diameter.as_ref().is_some_and(|d| *d <= 0u32) {
                return Err("--diameter: must be a distance > 0".into());
            }
            // α per unit of the normalized metric d/D is α/D per unit of d (rounded up).
            let per_unit = diameter
                .as_ref()
                .map(|d| mdp::exact::f64_up(&(&acc.guarantee.alpha / d)));
            if *json {
                let mut v = all.json();
                if let Some(p) = per_unit {
                    v["alpha_per_unit_upper"] = json!(p);
                    v["diameter"] =
                        json!(mdp::exact::f64_nearest(diameter.as_ref().expect("given")));
                }
                println!("{v}");
            } else {
                println!(
                    "PrivEMDItemWise ({scope}, m = {items}{}) with α₀ = {} (item δ = {}) is (α, δ)-bounded {scope} d_EM-DP with α ≤ {} per unit of the normalised metric (d ≤ 1) and δ ≤ {} (Theorem 4.4, {} accountant, proven upper bounds). Compare: composition α = m·α₀ = {}; FMT per item with group privacy ε ≤ {} for every pair of users.",
                    users.map(|n| format!(", n = {n}")).unwrap_or_default(),
                    short(&acc.alpha0),
                    short(&acc.item_delta),
                    short(&acc.guarantee.alpha),
                    short(&acc.guarantee.delta),
                    acc.accountant.name(),
                    short(&acc.composition),
                    short(&acc.fmt_group.alpha)
                );
                if let Some(w) = &acc.warning {
                    println!("{w}");
                }
                match per_unit {
                    Some(p) => println!(
                        "The guarantee: α ≤ {p:e} per unit of distance of the space (α/D, D = {}), with δ ≤ {}; the composition and FMT figures are comparisons, not guarantees.",
                        short(diameter.as_ref().expect("given")),
                        short(&acc.guarantee.delta)
                    ),
                    None => println!(
                        "The guarantee is α and δ above, per unit of the normalised metric (give --diameter D, the space's largest distance, for α per unit of distance); the composition and FMT figures are comparisons, not guarantees."
                    ),
                }
                for (name, other) in [("closed-form", &all.closed), ("numerical", &all.numerical)] {
                    match other {
                        Ok(o) if o.accountant != acc.accountant => println!(
                            "The {name} accountant: α₀ = {}, α ≤ {}, δ ≤ {}, FMT ε ≤ {}.",
                            short(&o.alpha0),
                            short(&o.guarantee.alpha),
                            short(&o.guarantee.delta),
                            short(&o.fmt_group.alpha)
                        ),
                        Err(e) => println!("The {name} accountant gives nothing here: {e}."),
                        _ => {}
                    }
                }
                if let Some((t, g)) = &acc.at_distance {
                    println!(
                        "At d_EM = {}: loss ε ≤ {} with δ ≤ {} (Theorem 4.3, κ = m).",
                        format_rational(t),
                        short(&g.alpha),
                        short(&g.delta)
                    );
                }
            }
            Ok(0)
        }
        AccountKind::Reduction {
            alpha,
            delta,
            samples,
            tau,
            beta,
            json,
        } => {
            let d = reduction::theorem_5_3(
                &q("alpha", alpha)?,
                &q("delta", delta)?,
                *samples,
                &q("tau", tau)?,
                &q("beta", beta)?,
            )
            .map_err(ul)?;
            if *json {
                println!(
                    "{}",
                    json!({"epsilon": format_rational(&d.epsilon), "epsilon_upper": f64_up(&d.epsilon),
                           "tau": format_rational(&d.tau), "delta": format_rational(&d.delta)})
                );
            } else {
                println!(
                    "BoundedEMDReduction with s = {samples} is (ε, τ, δ)-discrete d_EM-DP with ε ≤ {}, τ = {}, δ = {} (Theorem 5.3, proven upper bound).",
                    short(&d.epsilon),
                    format_rational(&d.tau),
                    short(&d.delta)
                );
            }
            Ok(0)
        }
    }
}

fn open_users(path: &str) -> Result<Box<dyn std::io::BufRead>, String> {
    if path == "-" {
        Ok(Box::new(BufReader::new(std::io::stdin())))
    } else {
        let f = std::fs::File::open(path).map_err(|e| format!("--users: {path}: {e}"))?;
        Ok(Box::new(BufReader::new(f)))
    }
}

fn open_output(path: &str) -> Result<Box<dyn Write>, String> {
    if path == "-" {
        Ok(Box::new(std::io::BufWriter::new(std::io::stdout())))
    } else {
        let f = std::fs::File::create(path).map_err(|e| format!("--output: {path}: {e}"))?;
        Ok(Box::new(std::io::BufWriter::new(f)))
    }
}

/// A release's guarantee on stderr: its JSON value, or the sentence followed by the
/// value's `"warning"` line (a weak guarantee, [`weak_guarantee`]), if any.
fn say(json: bool, summary: run::Summary) {
    if json {
        eprintln!("{}", summary.value);
    } else {
        eprintln!("{}", summary.sentence);
        if let Some(w) = summary.value.get("warning").and_then(|w| w.as_str()) {
            eprintln!("{w}");
        }
    }
}

pub(crate) fn release(k: &ReleaseKind) -> Result<i32, String> {
    match k {
        ReleaseKind::Linear(a) => linear(a),
        ReleaseKind::ItemWise(a) => item_wise(a),
        ReleaseKind::Freq(a) => freq(a),
    }
}

impl ResampleArgs {
    fn settings(&self) -> run::Resample {
        run::Resample {
            samples: self.samples,
            tau: self.tau.clone(),
            beta: self.beta.clone(),
        }
    }
}

impl ModelArg {
    fn model(self) -> run::ReleaseModel {
        match self {
            ModelArg::Local => run::ReleaseModel::Local,
            ModelArg::Central => run::ReleaseModel::Central,
        }
    }
}

fn linear(a: &LinearArgs) -> Result<i32, String> {
    let (space, labels) = crate::suite::space_with_labels(&a.space)?;
    let settings = run::LinearSettings {
        space: &space,
        labels: labels.as_deref(),
        query: &a.query,
        norm: &a.norm,
        alpha: &a.alpha,
        model: a.model.model(),
        budget: a.budget,
        resample: a.resample.settings(),
    };
    let mut rng = privatize::rng(a.io.seed);
    let summary = run::linear(
        &settings,
        &mut || open_users(&a.io.users),
        &mut || open_output(&a.io.output),
        &mut rng,
    )?;
    say(a.io.json, summary);
    Ok(0)
}

fn item_wise(a: &ItemWiseArgs) -> Result<i32, String> {
    let opts = audit::Options {
        epsilon: a
            .require_epsilon
            .as_deref()
            .map(|e| q("require-epsilon", e))
            .transpose()?,
        metric: a.pin.pin(a.space.as_deref())?,
        ..audit::Options::default()
    };
    let refusal = "does not pass the audit; refusing to use it";
    let file = match crate::gated(&a.mechanism, &opts, refusal)? {
        Ok(file) => file,
        Err(code) => return Ok(code),
    };
    let eps = opts.epsilon.clone().unwrap_or_else(|| file.epsilon.clone());
    // δ is checked before the labels are looked up (the order of the checks before the
    // flow moved into the library).
    run::item_delta(&a.delta)?;
    let labels = crate::suite::file_labels(&file, a.space.as_deref())?;
    let settings = run::ItemWiseSettings {
        file: &file,
        labels: labels.as_deref(),
        epsilon: &eps,
        delta: &a.delta,
        model: a.model.model(),
        resample: a.resample.settings(),
        accountant: a.accountant,
    };
    let mut rng = privatize::rng(a.io.seed);
    let summary = run::item_wise(
        &settings,
        &mut || open_users(&a.io.users),
        &mut || open_output(&a.io.output),
        &mut rng,
    )?;
    say(a.io.json, summary);
    Ok(0)
}

fn freq(a: &FreqArgs) -> Result<i32, String> {
    let settings = run::FreqSettings {
        clusters: a.clustered.clusters,
        size: a.clustered.size,
        r: &a.clustered.r,
        alpha: &a.alpha,
        delta: &a.delta,
        model: a.model.model(),
        accountant: a.accountant,
    };
    let mut rng = privatize::rng(a.io.seed);
    // The records are written once the estimate is known (one per item: a small buffer).
    let mut records = Vec::new();
    let (summary, cert) = run::freq(
        &settings,
        // Two passes over the file (constant memory): α₀ depends on n and m, known
        // after the first. Checked when the library first opens it, after the
        // settings (the order of the checks before the flow moved).
        &mut || {
            if a.io.users == "-" {
                return Err(
                    "--users: the frequency release reads its file twice; give a file, not -"
                        .into(),
                );
            }
            open_users(&a.io.users)
        },
        &mut records,
        &mut rng,
    )?;
    if let Some(path) = &a.randomizer {
        let mut buf = Vec::new();
        cert.write_to(&mut buf)
            .map_err(|e| format!("--randomizer: {e}"))?;
        std::fs::write(path, buf).map_err(|e| format!("--randomizer: {path}: {e}"))?;
    }
    let mut out = open_output(&a.io.output)?;
    out.write_all(&records)
        .and_then(|_| out.flush())
        .map_err(|e| format!("--output: cannot write: {e}"))?;
    say(a.io.json, summary);
    Ok(0)
}

#[derive(Args)]
pub(crate) struct ExperimentArgs {
    /// Space of the linear-query experiment (points; the average location is the query).
    #[arg(long)]
    space: String,
    /// Item probabilities of the clustered space (a JSON array of clusters × size numbers).
    #[arg(long)]
    prior: String,
    /// Clusters C of the clustered item space.
    #[arg(long, default_value_t = 16)]
    clusters: usize,
    /// Items per cluster s.
    #[arg(long, default_value_t = 8)]
    size: usize,
    /// Distance inside a cluster (normalised).
    #[arg(long, default_value = "0.2")]
    r: String,
    /// Users n (comma-separated).
    #[arg(long, value_delimiter = ',', default_values = ["1000", "10000", "100000"])]
    users: Vec<usize>,
    /// Items per user m.
    #[arg(long, default_value_t = 30)]
    items: usize,
    /// α values (normalised units; the baselines' ε equals α).
    #[arg(long, value_delimiter = ',', default_values = ["0.5", "1", "2", "4", "8"])]
    alphas: Vec<f64>,
    /// δ of the user-level guarantees.
    #[arg(long, default_value = "1e-6")]
    delta: f64,
    /// Trials per point.
    #[arg(long, default_value_t = 10)]
    trials: usize,
    /// Seed of the simulation (utility experiments only).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Directory of the CSV and SVG outputs.
    #[arg(long, default_value = "experiments")]
    out_dir: std::path::PathBuf,
    /// Suffix of the frequency files (user_level_freq_NAME.csv/.svg); the accountant and
    /// linear files are written only without it.
    #[arg(long)]
    name: Option<String>,
}

pub(crate) fn experiment(a: &ExperimentArgs) -> Result<i32, String> {
    let prior = serde_json::from_slice::<Vec<f64>>(
        &std::fs::read(&a.prior).map_err(|e| format!("--prior: {e}"))?,
    )
    .map_err(|e| format!("--prior: {e}"))?;
    let settings = experiments::Settings {
        prior,
        clusters: a.clusters,
        size: a.size,
        r: q("r", &a.r)?,
        r_text: a.r.clone(),
        users: a.users.clone(),
        items: a.items,
        alphas: a.alphas.clone(),
        delta: a.delta,
        trials: a.trials,
        seed: a.seed,
        out_dir: a.out_dir.clone(),
        name: a.name.clone(),
    };
    // The linear-query experiment's space (read only when its files are written).
    let space = match a.name {
        None => Some(crate::suite::space_with_labels(&a.space)?.0),
        Some(_) => None,
    };
    let progress = mdp::progress::Console::new(false, 0.0);
    experiments::run(&settings, space.as_ref(), &progress).map_err(|e| match e {
        experiments::ExperimentError::Invalid(e) => ul(e),
        experiments::ExperimentError::Write(m) => format!("--out-dir: {m}"),
    })?;
    Ok(0)
}
