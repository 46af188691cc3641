//! `mdp emd`, `mdp account` and `mdp release`: the user-level commands (Imola, Roy
//! Chowdhury, Chaudhuri 2024; `spec/user-level.md`). Parsing and dispatch only: the work
//! is `mdp::user_level`.

use clap::{Args, Subcommand, ValueEnum};
use mdp::audit::{self, Verdict};
use mdp::exact::{f64_nearest, f64_up, format_rational, parse_rational, Q};
use mdp::metric::Space;
use mdp::privatize::{self, records::releases, records::Naming, Release};
use mdp::user_level::emd::{self, Histogram};
use mdp::user_level::freq::{project_to_simplex, Clustered, ClusteredRr};
use mdp::user_level::priv_emd_linear::{LinearQuery, Norm, PrivEmdLinear, Scope};
use mdp::user_level::release::{
    certified_randomizer, freq_budget, FreqBudget, ItemWise, ItemWiseGuarantee,
};
use mdp::user_level::shuffle::{self, Model};
use mdp::user_level::users::{for_each_user, ItemNames, User};
use mdp::user_level::{
    diameter_for_warning, experiments, reduction, weak_guarantee, Budget, Units, UserLevelError,
};
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

impl ResampleArgs {
    /// The user's items, resampled to S when asked.
    fn apply<R: rand::Rng + ?Sized>(&self, items: Vec<usize>, rng: &mut R) -> Vec<usize> {
        match self.samples {
            Some(s) => reduction::sample_with_replacement(&items, s, rng),
            None => items,
        }
    }

    fn check(&self) -> Result<(), String> {
        if self.samples == Some(0) {
            return Err("--samples: must be ≥ 1".into());
        }
        Ok(())
    }

    /// Theorem 5.3 for a bounded guarantee (α per unit of distance, δ) at size S; `None`
    /// without --samples.
    fn discrete(
        &self,
        units: &Units,
        alpha_per_unit: &Q,
        delta: &Q,
    ) -> Result<Option<(reduction::Discrete, String)>, String> {
        let Some(s) = self.samples else {
            return Ok(None);
        };
        let tau = q("tau", self.tau.as_deref().unwrap_or_default())?;
        let tau_norm = &tau / &units.diameter;
        if tau_norm > 1u32 {
            return Err("--tau: larger than the diameter (every pair has d_EM ≤ τ)".into());
        }
        let alpha_norm = alpha_per_unit * &units.diameter;
        let d = reduction::theorem_5_3(
            &alpha_norm,
            delta,
            s as u64,
            &tau_norm,
            &q("beta", &self.beta)?,
        )
        .map_err(ul)?;
        let sentence = format!(
            " With Algorithm 3 ({s} samples per user), users of any size: (ε, τ, δ)-discrete d_EM-DP with ε ≤ {}, τ = {}, δ ≤ {} (Theorem 5.3).",
            short(&d.epsilon),
            format_rational(&tau),
            short(&d.delta)
        );
        Ok(Some((d, sentence)))
    }
}

fn discrete_json(d: &Option<(reduction::Discrete, String)>) -> serde_json::Value {
    d.as_ref().map_or(serde_json::Value::Null, |(d, _)| {
        json!({"epsilon": format_rational(&d.epsilon), "epsilon_upper": f64_up(&d.epsilon),
               "tau_normalised": format_rational(&d.tau), "delta": format_rational(&d.delta), "delta_upper": f64_up(&d.delta)})
    })
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
    /// A space with labels equal to the mechanism's metric (items named by label).
    #[arg(long)]
    space: Option<String>,
    /// The item-level δ of the shuffle theorem.
    #[arg(long, default_value = "1e-9")]
    delta: String,
    /// Local (each user's shuffled outputs) or central (the counts of all outputs).
    #[arg(long, value_enum, default_value = "central")]
    model: ModelArg,
    #[command(flatten)]
    resample: ResampleArgs,
    #[command(flatten)]
    io: UsersIo,
}

#[derive(Args)]
pub(crate) struct FreqArgs {
    /// Clusters C.
    #[arg(long)]
    clusters: usize,
    /// Items per cluster s (items are `c<cluster>-<i>` or indices cluster·s + i).
    #[arg(long)]
    size: usize,
    /// Distance inside a cluster, r ∈ (0, 1).
    #[arg(long)]
    r: String,
    /// Target user-level α (bounded d_EM-DP, normalised units).
    #[arg(long)]
    alpha: String,
    /// Target user-level δ.
    #[arg(long, default_value = "1e-6")]
    delta: String,
    /// Local (α₀ for each user's m items) or central (shuffled across all n·m items).
    #[arg(long, value_enum, default_value = "central")]
    model: ModelArg,
    /// Also write the certified randomizer (an mdp/1 file at ε = α₀) here, for
    /// `mdp-audit`.
    #[arg(long)]
    randomizer: Option<String>,
    #[command(flatten)]
    io: UsersIo,
}

fn q(flag: &str, s: &str) -> Result<Q, String> {
    parse_rational(s).map_err(|e| format!("--{flag}: {e}"))
}

fn ul(e: UserLevelError) -> String {
    match e {
        UserLevelError::Invalid { field, message } => format!("--{field}: {message}"),
        e => e.to_string(),
    }
}

/// [`ul`] for the commands that take `--budget` (its exact-operation budget named).
fn ul_b(e: UserLevelError) -> String {
    match e {
        e @ UserLevelError::Budget { .. } => format!("{e} (raise --budget)"),
        e => ul(e),
    }
}

fn short(x: &Q) -> String {
    format!("{:.6e}", f64_up(x))
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
            let acc = shuffle::account(model, &target, &delta, distance.as_ref()).map_err(ul)?;
            let scope = if users.is_some() { "central" } else { "local" };
            if *json {
                println!("{}", acc.json());
            } else {
                println!(
                    "PrivEMDItemWise ({scope}, m = {items}{}) with α₀ = {} (item δ = {}) is (α, δ)-bounded {scope} d_EM-DP with α ≤ {} per unit of the normalised metric (d ≤ 1) and δ ≤ {} (Theorem 4.4, proven upper bounds). Compare: composition α = m·α₀ = {}; FMT per item with group privacy ε ≤ {} for every pair of users.",
                    users.map(|n| format!(", n = {n}")).unwrap_or_default(),
                    short(&acc.alpha0),
                    short(&acc.item_delta),
                    short(&acc.guarantee.alpha),
                    short(&acc.guarantee.delta),
                    short(&acc.composition),
                    short(&acc.fmt_group.alpha)
                );
                if let Some(w) = &acc.warning {
                    println!("{w}");
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

/// A release's guarantee on stderr: `value` as JSON, or the sentence followed by the
/// value's `"warning"` line (a weak guarantee, [`weak_guarantee`]), if any.
fn say(json: bool, value: serde_json::Value, sentence: String) {
    if json {
        eprintln!("{value}");
    } else {
        eprintln!("{sentence}");
        if let Some(w) = value.get("warning").and_then(|w| w.as_str()) {
            eprintln!("{w}");
        }
    }
}

/// One output record as a JSON object whose keys keep their order: the `fixed` fields (the
/// user's id, a release, or the counts of a central release), then one field per query
/// component (named with its unit, e.g. `lat_deg`).
fn labelled(fixed: &[(&str, serde_json::Value)], components: &[String], values: &[f64]) -> String {
    let fields: Vec<String> = fixed
        .iter()
        .map(|(k, v)| format!("{}:{v}", json!(k)))
        .chain(
            components
                .iter()
                .zip(values)
                .map(|(k, v)| format!("{}:{}", json!(k), json!(v))),
        )
        .collect();
    format!("{{{}}}", fields.join(","))
}

/// The unit of d_EM on `space` for messages: `km`, or `unit` (the space's own).
fn unit_name(space: &Space) -> &'static str {
    match mdp::import::distance_unit(space) {
        "" => "unit",
        u => u,
    }
}

/// The weak-guarantee warning of an α-private linear release on `space`: its loss between
/// two users at the largest distance is α·diameter.
fn linear_weakness(space: &Space, alpha: &Q) -> Option<String> {
    weak_guarantee(f64_up(alpha) * diameter_for_warning(space), 0.0)
}

fn write_err(e: std::io::Error) -> String {
    format!("--output: cannot write: {e}")
}

fn parse_query(
    space: &Space,
    labels: Option<&[String]>,
    spec: &str,
    norm: Norm,
) -> Result<LinearQuery, String> {
    let names = ItemNames::new(space.n(), labels);
    let site = |s: &str| -> Result<usize, String> {
        names
            .parse(&if s.parse::<u64>().is_ok() {
                format!("[{s}]")
            } else {
                format!("[{s:?}]")
            })
            .map(|v| v[0])
            .map_err(|e| format!("--query: {e}"))
    };
    let parts: Vec<&str> = spec.split(':').collect();
    let query = match parts.as_slice() {
        ["average"] => LinearQuery::average(space, norm),
        ["distance", c] => LinearQuery::distance_to(space, site(c)?),
        ["region", c, r, w] => LinearQuery::region(space, site(c)?, &q("query", r)?, &q("query", w)?),
        ["similarity", v] => {
            let c = v.split(',').map(|x| q("query", x)).collect::<Result<Vec<_>, _>>()?;
            LinearQuery::similarity(space, &c)
        }
        _ => return Err(format!("--query: unknown query {spec:?} (average, distance:SITE, region:SITE:RADIUS:WIDTH, similarity:v1,v2,…)")),
    };
    query.map_err(ul)
}

pub(crate) fn release(k: &ReleaseKind) -> Result<i32, String> {
    match k {
        ReleaseKind::Linear(a) => linear(a),
        ReleaseKind::ItemWise(a) => item_wise(a),
        ReleaseKind::Freq(a) => freq(a),
    }
}

fn linear(a: &LinearArgs) -> Result<i32, String> {
    let (space, labels) = crate::suite::space_with_labels(&a.space)?;
    let norm = Norm::from_name(&a.norm).ok_or("--norm: expected l1, l2 or linf")?;
    let query = parse_query(&space, labels.as_deref(), &a.query, norm)?;
    let alpha = q("alpha", &a.alpha)?;
    let names = ItemNames::new(space.n(), labels.as_deref());
    let mut rng = privatize::rng(a.io.seed);
    let mut out = open_output(&a.io.output)?;
    let mut budget = Budget::new(a.budget);
    match a.model {
        ModelArg::Local => {
            let mech = PrivEmdLinear::new(&space, query, &alpha, Scope::Local, &mut budget)
                .map_err(ul_b)?;
            let users = for_each_user(open_users(&a.io.users)?, &names, |user| {
                let z = mech.release(&user.items, &mut rng);
                let record = labelled(&[("user", user.id)], &mech.query.components, &z);
                writeln!(out, "{record}").map_err(|e| e.to_string())
            })
            .map_err(|e| e.to_string())?;
            out.flush().map_err(write_err)?;
            let weak = linear_weakness(&space, &alpha);
            say(
                a.io.json,
                json!({"mechanism": "PrivEMDLinear", "model": "local", "users": users,
                       "components": mech.query.components, "distance_unit": unit_name(&space),
                       "alpha": format_rational(&alpha), "lipschitz": format_rational(&mech.l),
                       "noise_scale": mech.scale(), "guarantee": "alpha-unbounded local d_EM-DP (Lemma 4.2)",
                       "warning": weak}),
                format!(
                    "PrivEMDLinear released {users} users (one record each: user, {}): each release is {}-unbounded local d_EM-DP, α per {} of d_EM (Lemma 4.2; l ≤ {} {} per {} computed from the query, noise scale l/α = {:.6e}).",
                    mech.query.components.join(", "), a.alpha, unit_name(&space), short(&mech.l),
                    mech.query.components.join("/"), unit_name(&space), mech.scale()
                ),
            );
        }
        ModelArg::Central => {
            // One pass: exact sums and the common size m; the noise needs n, known at the end.
            let mut sums = vec![Q::from(0u32); query.dim()];
            let mut m: Option<usize> = None;
            a.resample.check()?;
            let users = for_each_user(open_users(&a.io.users)?, &names, |user| {
                let items = a.resample.apply(user.items, &mut rng);
                match m {
                    None => m = Some(items.len()),
                    Some(m) if m != items.len() => {
                        return Err(format!("user has {} items, others {m}: the central release is bounded d_EM-DP (equal sizes); give --samples S --tau T (Algorithm 3)", items.len()))
                    }
                    _ => {}
                }
                for x in items {
                    for (s, v) in sums.iter_mut().zip(&query.columns[x]) {
                        *s += v;
                    }
                }
                Ok(())
            })
            .map_err(|e| e.to_string())?;
            if users == 0 {
                return Err("--users: no users".into());
            }
            let total = Q::from(users * m.unwrap_or(0) as u64);
            let value: Vec<Q> = sums.into_iter().map(|s| s / &total).collect();
            let mech = PrivEmdLinear::new(
                &space,
                query,
                &alpha,
                Scope::Central { n: users },
                &mut budget,
            )
            .map_err(ul_b)?;
            let disc = match a.resample.samples {
                Some(_) => {
                    let units = Units::for_space(&space, &mut budget).map_err(ul_b)?;
                    a.resample.discrete(&units, &alpha, &Q::from(0u32))?
                }
                None => None,
            };
            let z = mech.release_value(&value, &mut rng);
            let record = labelled(
                &[("users", json!(users)), ("items_per_user", json!(m))],
                &mech.query.components,
                &z,
            );
            writeln!(out, "{record}").map_err(write_err)?;
            out.flush().map_err(write_err)?;
            let weak = linear_weakness(&space, &alpha);
            say(
                a.io.json,
                json!({"mechanism": "PrivEMDLinear", "model": "central", "users": users, "items_per_user": m,
                       "components": mech.query.components, "distance_unit": unit_name(&space),
                       "alpha": format_rational(&alpha), "lipschitz": format_rational(&mech.l),
                       "noise_scale": mech.scale(), "guarantee": "alpha-bounded central d_EM-DP (Lemma 4.2)",
                       "reduction": discrete_json(&disc), "warning": weak}),
                format!(
                    "PrivEMDLinear released the mean of {users} users × {} items ({}): {}-bounded central d_EM-DP, α per {} of d_EM (Lemma 4.2; l ≤ {} {} per {}, noise scale l/(αn) = {:.6e}).{}",
                    m.unwrap_or(0), mech.query.components.join(", "), a.alpha, unit_name(&space),
                    short(&mech.l), mech.query.components.join("/"), unit_name(&space), mech.scale(),
                    disc.as_ref().map_or("", |(_, s)| s.as_str())
                ),
            );
        }
    }
    Ok(0)
}

fn item_wise(a: &ItemWiseArgs) -> Result<i32, String> {
    let opts = audit::Options {
        epsilon: a
            .require_epsilon
            .as_deref()
            .map(|e| q("require-epsilon", e))
            .transpose()?,
        ..audit::Options::default()
    };
    let refusal = "does not pass the audit; refusing to use it";
    let file = match crate::gated(&a.mechanism, &opts, refusal)? {
        Ok(file) => file,
        Err(code) => return Ok(code),
    };
    let eps = opts.epsilon.clone().unwrap_or_else(|| file.epsilon.clone());
    let delta = q("delta", &a.delta)?;
    if !(delta > 0u32 && delta < 1u32) {
        return Err("--delta: must be in (0, 1)".into());
    }
    let labels = crate::suite::file_labels(&file, a.space.as_deref())?;
    let units = Units::for_space(&file.space, &mut Budget::default()).map_err(ul)?;
    let names = ItemNames::new(file.space.n(), labels.as_deref());
    let out_names: Vec<serde_json::Value> = releases(
        &file.space,
        &file.outputs,
        labels.as_deref(),
        Naming::Labels,
    )
    .iter()
    .map(Release::json)
    .collect();
    let mut rng = privatize::rng(a.io.seed);
    let mut out = open_output(&a.io.output)?;
    let central = matches!(a.model, ModelArg::Central);
    let mut release = ItemWise::new(&file.matrix, central);
    a.resample.check()?;
    for_each_user(open_users(&a.io.users)?, &names, |user| {
        let items = a.resample.apply(user.items, &mut rng);
        match release.user(&items, &mut rng) {
            Some(ys) => {
                let v: Vec<&serde_json::Value> = ys.iter().map(|&y| &out_names[y]).collect();
                let record = labelled(&[("user", user.id), ("release", json!(v))], &[], &[]);
                writeln!(out, "{record}").map_err(|e| e.to_string())
            }
            None => Ok(()),
        }
    })
    .map_err(|e| e.to_string())?;
    let guarantee = release.guarantee(&units, &eps, &delta).map_err(ul)?;
    let scope = if central { "central" } else { "local" };
    let disc = match &guarantee {
        ItemWiseGuarantee::Bounded {
            alpha_per_unit,
            delta,
            ..
        } => a.resample.discrete(&units, alpha_per_unit, delta)?,
        ItemWiseGuarantee::Composition { .. } => None,
    };
    if central {
        // Written only now that the guarantee is known: each output with its count.
        let counts: Vec<serde_json::Value> = out_names
            .iter()
            .zip(release.counts())
            .map(|(o, c)| json!({"output": o, "count": c}))
            .collect();
        writeln!(out, "{}", json!({"counts": counts})).map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    match guarantee {
        ItemWiseGuarantee::Composition { users, largest } => {
            let unit = unit_name(&file.space);
            // The largest user's loss at the largest distance: m·ε·D.
            let worst = Q::from(largest as u64) * &eps * &units.diameter;
            let weak = weak_guarantee(f64_up(&worst), 0.0);
            say(
                a.io.json,
                json!({"mechanism": "PrivEMDItemWise", "model": scope, "users": users, "epsilon_item": format_rational(&eps),
                       "distance_unit": unit, "largest_user": largest,
                       "guarantee": "each user of m items: (m·epsilon)·d_EM bounded local d_EM-DP by composition",
                       "warning": weak}),
                format!(
                    "PrivEMDItemWise released {users} users of different sizes (local): each user of m items is (m·ε)·d_EM-private among datasets of its own size (bounded local d_EM-DP, composition; item ε = {} per {unit}; largest user {largest} items).",
                    format_rational(&eps)
                ),
            )
        }
        ItemWiseGuarantee::Bounded {
            users,
            m,
            alpha0,
            alpha_per_unit: per_unit,
            delta: delta_u,
            by,
        } => {
            let how = by.describe();
            let unit = unit_name(&file.space);
            let weak = weak_guarantee(f64_up(&(&per_unit * &units.diameter)), f64_up(&delta_u));
            say(
                a.io.json,
                json!({"mechanism": "PrivEMDItemWise", "model": scope, "users": users, "items_per_user": m,
                       "distance_unit": unit,
                       "epsilon_item": format_rational(&eps), "diameter_upper": format_rational(&units.diameter),
                       "alpha0": f64_up(&alpha0), "alpha_per_unit": format_rational(&per_unit),
                       "alpha_per_unit_upper": f64_up(&per_unit), "delta": format_rational(&delta_u),
                       "delta_upper": f64_up(&delta_u), "by": how, "reduction": discrete_json(&disc),
                       "warning": weak}),
                format!(
                    "PrivEMDItemWise released {users} users × {m} items ({scope}): (α, δ)-bounded {scope} d_EM-DP with α ≤ {} per {unit} of d_EM and δ ≤ {} by {how} (item ε = {} per {unit}, α₀ = ε·diameter ≤ {}; diameter ≤ {} {unit}).{}",
                    short(&per_unit), short(&delta_u), format_rational(&eps), short(&alpha0),
                    short(&units.diameter),
                    disc.as_ref().map_or("", |(_, s)| s.as_str())
                ),
            )
        }
    }
    Ok(0)
}

fn freq(a: &FreqArgs) -> Result<i32, String> {
    let space = Clustered::new(a.clusters, a.size, q("r", &a.r)?).map_err(ul)?;
    let (alpha, delta) = (q("alpha", &a.alpha)?, q("delta", &a.delta)?);
    // Two passes over the file (constant memory): α₀ depends on n and m, known after the
    // first.
    if a.io.users == "-" {
        return Err(
            "--users: the frequency release reads its file twice; give a file, not -".into(),
        );
    }
    let labels = space.labels();
    let names = ItemNames::new(space.k(), Some(&labels));
    let mut m_seen: Option<usize> = None;
    let users = for_each_user(
        open_users(&a.io.users)?,
        &names,
        |User { items, .. }| {
            match m_seen {
                None => m_seen = Some(items.len()),
                Some(m) if m != items.len() => {
                    return Err(
                        "users of different sizes (bounded d_EM-DP needs equal sizes)".into(),
                    )
                }
                _ => {}
            }
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    if users == 0 {
        return Err("--users: no users".into());
    }
    let m = m_seen.unwrap_or(0) as u64;
    let model = match a.model {
        ModelArg::Local => Model::Local { m },
        ModelArg::Central => Model::Central { n: users, m },
    };
    let FreqBudget {
        alpha0,
        alpha: g_alpha,
        delta: g_delta,
        by: how,
    } = freq_budget(model, &alpha, &delta);
    let rr = ClusteredRr::new(space.clone(), &alpha0).map_err(ul)?;
    // The randomizer, certified as an mdp/1 matrix before any item is randomized.
    let cert = certified_randomizer(&rr, &alpha0).map_err(|e| format!("the randomizer: {e}"))?;
    if let Some(path) = &a.randomizer {
        let mut buf = Vec::new();
        cert.write_to(&mut buf)
            .map_err(|e| format!("--randomizer: {e}"))?;
        std::fs::write(path, buf).map_err(|e| format!("--randomizer: {path}: {e}"))?;
    }
    debug_assert_eq!(cert.report().verdict, Verdict::Pass);
    let mut rng = privatize::rng(a.io.seed);
    // The randomizer applied to every item, only counted (Algorithm 4's aggregate).
    let mut release = ItemWise::new(&rr.matrix(), true);
    let again = for_each_user(
        open_users(&a.io.users)?,
        &names,
        |User { items, .. }| {
            // The second pass must see the data the guarantee was computed for.
            if items.len() as u64 != m {
                return Err("the file changed between the two passes; nothing written".into());
            }
            release.user(&items, &mut rng);
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    if again != users {
        return Err("--users: the file changed between the two passes; nothing written".into());
    }
    let p = rr.estimate(release.counts()).map_err(ul)?;
    let estimate: Vec<f64> = p.iter().map(f64_nearest).collect();
    let frequency = project_to_simplex(&estimate);
    let mut out = open_output(&a.io.output)?;
    for (x, label) in labels.iter().enumerate() {
        let record = json!({"item": label, "cluster": space.cluster(x), "estimate": estimate[x],
                            "frequency": frequency[x]});
        writeln!(out, "{record}").map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    let weak = weak_guarantee(f64_up(&g_alpha), f64_up(&g_delta));
    say(
        a.io.json,
        json!({"mechanism": "FreqEstLocal", "users": users, "items_per_user": m, "alpha0": format_rational(&alpha0),
               "alpha": format_rational(&g_alpha), "delta": format_rational(&g_delta), "by": how,
               "distance_unit": "normalised (d ≤ 1)",
               "predicted_error_bound": rr.error_bound(users * m), "warning": weak}),
        format!(
            "FreqEstLocal on {} clusters × {} items (one record per item: item, cluster, estimate — unbiased, may be negative — and frequency, its projection onto the probability simplex): α₀ = {} (certified clustered k-RR), (α, δ)-bounded d_EM-DP with α ≤ {} per unit of the normalised metric and δ ≤ {} by {how}; Theorem 6.6 predicts E d_EM ≤ {:.4e}.",
            a.clusters, a.size, short(&alpha0), short(&g_alpha), short(&g_delta), rr.error_bound(users * m)
        ),
    );
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
