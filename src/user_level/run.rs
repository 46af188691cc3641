//! The user-level releases end to end (`mdp release linear | item-wise | freq`, and the
//! Python package's `release_*`): users in as JSON lines (`[items…]` or `{"id", "items"}`),
//! one JSON record per user (or the counts, or one per item) out, and the guarantee as a
//! [`Summary`] (its JSON and a sentence). The command line only opens files and prints.
//!
//! Errors are messages that name the option they concern (`--alpha: …`), as the command
//! line prints them; the Python binding maps the option to its `InputError` field.

use super::freq::{project_to_simplex, Clustered, ClusteredRr};
use super::priv_emd_linear::{LinearQuery, Norm, PrivEmdLinear, Scope};
use super::reduction;
use super::release::{certified_randomizer, freq_budget, FreqBudget, ItemWise, ItemWiseGuarantee};
use super::shuffle::{Accountant, Model};
use super::users::{for_each_user, ItemNames, User};
use super::{diameter_for_warning, weak_guarantee, Budget, Units, UserLevelError};
use crate::certified::Certified;
use crate::exact::{f64_nearest, f64_up, format_rational, parse_rational, Q};
use crate::io::MechanismFile;
use crate::metric::Space;
use crate::privatize::records::{releases, Naming, Release};
use rand_chacha::ChaCha20Rng;
use serde_json::json;
use std::io::{BufRead, Write};

/// Who sees the release: each user their own (local), or the curator all users (central).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReleaseModel {
    Local,
    Central,
}

/// Opens the users' JSON lines afresh (the frequency release reads them twice).
pub type Users<'a> = dyn FnMut() -> Result<Box<dyn BufRead + 'a>, String> + 'a;

/// Opens the output, once the settings have been checked (a bad option leaves an existing
/// output file as it was).
pub type Output<'a> = dyn FnMut() -> Result<Box<dyn Write + 'a>, String> + 'a;

/// A release's guarantee: the `--json` value and the sentence the command line prints.
#[derive(Clone, Debug)]
pub struct Summary {
    pub value: serde_json::Value,
    pub sentence: String,
}

/// BoundedEMDReduction (Algorithm 3) before a release: each user's items replaced by
/// `samples` draws with replacement; the guarantee becomes Theorem 5.3's discrete
/// (ε, τ, δ + β), τ in the space's distance unit (exact text, as `beta`).
#[derive(Clone, Debug)]
pub struct Resample {
    pub samples: Option<usize>,
    pub tau: Option<String>,
    pub beta: String,
}

impl Resample {
    /// The user's items, resampled to S when asked.
    pub fn apply<R: rand::Rng + ?Sized>(&self, items: Vec<usize>, rng: &mut R) -> Vec<usize> {
        match self.samples {
            Some(s) => reduction::sample_with_replacement(&items, s, rng),
            None => items,
        }
    }

    pub fn check(&self) -> Result<(), String> {
        if self.samples == Some(0) {
            return Err("--samples: must be ≥ 1".into());
        }
        if self.samples.is_some() && self.tau.is_none() {
            return Err(
                "--tau: required with --samples (the d_EM radius of Theorem 5.3's guarantee)"
                    .into(),
            );
        }
        Ok(())
    }

    /// Theorem 5.3 for a bounded guarantee (α per unit of distance, δ) at size S; `None`
    /// without --samples.
    pub fn discrete(
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

pub fn q(flag: &str, s: &str) -> Result<Q, String> {
    parse_rational(s).map_err(|e| format!("--{flag}: {e}"))
}

pub fn ul(e: UserLevelError) -> String {
    match e {
        UserLevelError::Invalid { field, message } => format!("--{field}: {message}"),
        e => e.to_string(),
    }
}

/// [`ul`] for the commands that take `--budget` (its exact-operation budget named).
pub fn ul_b(e: UserLevelError) -> String {
    match e {
        e @ UserLevelError::Budget { .. } => format!("{e} (raise --budget)"),
        e => ul(e),
    }
}

pub fn short(x: &Q) -> String {
    format!("{:.6e}", f64_up(x))
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
    match crate::import::distance_unit(space) {
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

/// The settings of [`linear`] (`mdp release linear`'s flags).
pub struct LinearSettings<'a> {
    pub space: &'a Space,
    pub labels: Option<&'a [String]>,
    /// `average`, `distance:SITE`, `region:SITE:RADIUS:WIDTH` or `similarity:v1,v2,…`.
    pub query: &'a str,
    /// `l1`, `l2` or `linf`.
    pub norm: &'a str,
    /// α per unit of the space's distance (exact text).
    pub alpha: &'a str,
    pub model: ReleaseModel,
    /// Largest number of exact operations.
    pub budget: u64,
    pub resample: Resample,
}

/// PrivEMDLinear (Algorithm 1): local, one record per user (`user` and the query's
/// components, Lemma 4.2's α-unbounded local guarantee); central, one record of all
/// users' mean (α-bounded central).
pub fn linear(
    a: &LinearSettings,
    users: &mut Users,
    output: &mut Output,
    rng: &mut ChaCha20Rng,
) -> Result<Summary, String> {
    let space = a.space;
    let norm = Norm::from_name(a.norm).ok_or("--norm: expected l1, l2 or linf")?;
    let query = parse_query(space, a.labels, a.query, norm)?;
    let alpha = q("alpha", a.alpha)?;
    let names = ItemNames::new(space.n(), a.labels);
    a.resample.check()?;
    let mut budget = Budget::new(a.budget);
    match a.model {
        ReleaseModel::Local => {
            let mech = PrivEmdLinear::new(space, query, &alpha, Scope::Local, &mut budget)
                .map_err(ul_b)?;
            let mut out = output()?;
            let users = for_each_user(users()?, &names, |user| {
                let z = mech.release(&user.items, rng);
                let record = labelled(&[("user", user.id)], &mech.query.components, &z);
                writeln!(out, "{record}").map_err(|e| e.to_string())
            })
            .map_err(|e| e.to_string())?;
            out.flush().map_err(write_err)?;
            let weak = linear_weakness(space, &alpha);
            Ok(Summary {
                value: json!({"mechanism": "PrivEMDLinear", "model": "local", "users": users,
                       "components": mech.query.components, "distance_unit": unit_name(space),
                       "alpha": format_rational(&alpha), "lipschitz": format_rational(&mech.l),
                       "noise_scale": mech.scale(), "granularity": format_rational(&mech.granularity()),
                       "noise_sampler": "exact (round_h of the real K-norm noise, float-safe)",
                       "guarantee": "alpha-unbounded local d_EM-DP (Lemma 4.2)",
                       "warning": weak}),
                sentence: format!(
                    "PrivEMDLinear released {users} users (one record each: user, {}): each release is {}-unbounded local d_EM-DP, α per {} of d_EM (Lemma 4.2; l ≤ {} {} per {} computed from the query, noise scale l/α = {:.6e}; values sampled exactly on the grid 2⁻⁴⁰·scale, float-safe).",
                    mech.query.components.join(", "), a.alpha, unit_name(space), short(&mech.l),
                    mech.query.components.join("/"), unit_name(space), mech.scale()
                ),
            })
        }
        ReleaseModel::Central => {
            // One pass: exact sums and the common size m; the noise needs n, known at the end.
            let mut sums = vec![Q::from(0u32); query.dim()];
            let mut m: Option<usize> = None;
            let users = for_each_user(users()?, &names, |user| {
                let items = a.resample.apply(user.items, rng);
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
                space,
                query,
                &alpha,
                Scope::Central { n: users },
                &mut budget,
            )
            .map_err(ul_b)?;
            let disc = match a.resample.samples {
                Some(_) => {
                    let units = Units::for_space(space, &mut budget).map_err(ul_b)?;
                    a.resample.discrete(&units, &alpha, &Q::from(0u32))?
                }
                None => None,
            };
            let z = mech.release_value(&value, rng);
            let mut out = output()?;
            let record = labelled(
                &[("users", json!(users)), ("items_per_user", json!(m))],
                &mech.query.components,
                &z,
            );
            writeln!(out, "{record}").map_err(write_err)?;
            out.flush().map_err(write_err)?;
            let weak = linear_weakness(space, &alpha);
            Ok(Summary {
                value: json!({"mechanism": "PrivEMDLinear", "model": "central", "users": users, "items_per_user": m,
                       "components": mech.query.components, "distance_unit": unit_name(space),
                       "alpha": format_rational(&alpha), "lipschitz": format_rational(&mech.l),
                       "noise_scale": mech.scale(), "granularity": format_rational(&mech.granularity()),
                       "noise_sampler": "exact (round_h of the real K-norm noise, float-safe)",
                       "guarantee": "alpha-bounded central d_EM-DP (Lemma 4.2)",
                       "reduction": discrete_json(&disc), "warning": weak}),
                sentence: format!(
                    "PrivEMDLinear released the mean of {users} users × {} items ({}): {}-bounded central d_EM-DP, α per {} of d_EM (Lemma 4.2; l ≤ {} {} per {}, noise scale l/(αn) = {:.6e}; sampled exactly on the grid 2⁻⁴⁰·scale, float-safe).{}",
                    m.unwrap_or(0), mech.query.components.join(", "), a.alpha, unit_name(space),
                    short(&mech.l), mech.query.components.join("/"), unit_name(space), mech.scale(),
                    disc.as_ref().map_or("", |(_, s)| s.as_str())
                ),
            })
        }
    }
}

/// The settings of [`item_wise`] (`mdp release item-wise`'s flags).
pub struct ItemWiseSettings<'a> {
    /// A mechanism that passed the pipeline's audit ([`crate::privatize::load_gated`]):
    /// its exactly normalized matrix is what is sampled.
    pub file: &'a MechanismFile,
    /// Items' names (the file's labels, or a space's).
    pub labels: Option<&'a [String]>,
    /// The ε per unit of distance the audit passed at.
    pub epsilon: &'a Q,
    /// The item-level δ of the shuffle theorem (exact text).
    pub delta: &'a str,
    pub model: ReleaseModel,
    pub resample: Resample,
    /// The shuffle accountant (closed form, numerical, or the tighter).
    pub accountant: Accountant,
}

/// The item-level δ of [`item_wise`] (exact text), in (0, 1).
pub fn item_delta(text: &str) -> Result<Q, String> {
    let delta = q("delta", text)?;
    if !(delta > 0u32 && delta < 1u32) {
        return Err("--delta: must be in (0, 1)".into());
    }
    Ok(delta)
}

/// PrivEMDItemWise (Algorithm 2): the mechanism applied to every item of every user,
/// shuffled; local, one record per user (`user`, `release`: the outputs' labels); central,
/// one record of every output's count. The guarantee is Theorem 4.4's (equal sizes) or the
/// composition bound (local, users of different sizes).
pub fn item_wise(
    a: &ItemWiseSettings,
    users: &mut Users,
    output: &mut Output,
    rng: &mut ChaCha20Rng,
) -> Result<Summary, String> {
    let file = a.file;
    let eps = a.epsilon;
    let delta = item_delta(a.delta)?;
    let units = Units::for_space(&file.space, &mut Budget::default()).map_err(ul)?;
    let names = ItemNames::new(file.space.n(), a.labels);
    let out_names: Vec<serde_json::Value> =
        releases(&file.space, &file.outputs, a.labels, Naming::Labels)
            .iter()
            .map(Release::json)
            .collect();
    a.resample.check()?;
    let mut out = output()?;
    let central = a.model == ReleaseModel::Central;
    let mut release = ItemWise::new(&file.matrix, central);
    for_each_user(users()?, &names, |user| {
        let items = a.resample.apply(user.items, rng);
        match release.user(&items, rng) {
            Some(ys) => {
                let v: Vec<&serde_json::Value> = ys.iter().map(|&y| &out_names[y]).collect();
                let record = labelled(&[("user", user.id), ("release", json!(v))], &[], &[]);
                writeln!(out, "{record}").map_err(|e| e.to_string())
            }
            None => Ok(()),
        }
    })
    .map_err(|e| e.to_string())?;
    let guarantee = release
        .guarantee(&units, eps, &delta, a.accountant)
        .map_err(ul)?;
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
        writeln!(out, "{}", json!({ "counts": counts })).map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    let unit = unit_name(&file.space);
    Ok(match guarantee {
        ItemWiseGuarantee::Composition { users, largest } => {
            // The largest user's loss at the largest distance: m·ε·D.
            let worst = Q::from(largest as u64) * eps * &units.diameter;
            let weak = weak_guarantee(f64_up(&worst), 0.0);
            Summary {
                value: json!({"mechanism": "PrivEMDItemWise", "model": scope, "users": users, "epsilon_item": format_rational(eps),
                       "distance_unit": unit, "largest_user": largest,
                       "guarantee": "each user of m items: (m·epsilon)·d_EM bounded local d_EM-DP by composition",
                       "warning": weak}),
                sentence: format!(
                    "PrivEMDItemWise released {users} users of different sizes (local): each user of m items is (m·ε)·d_EM-private among datasets of its own size (bounded local d_EM-DP, composition; item ε = {} per {unit}; largest user {largest} items).",
                    format_rational(eps)
                ),
            }
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
            let weak = weak_guarantee(f64_up(&(&per_unit * &units.diameter)), f64_up(&delta_u));
            Summary {
                value: json!({"mechanism": "PrivEMDItemWise", "model": scope, "users": users, "items_per_user": m,
                       "distance_unit": unit,
                       "epsilon_item": format_rational(eps), "diameter_upper": format_rational(&units.diameter),
                       "alpha0": f64_up(&alpha0), "alpha_per_unit": format_rational(&per_unit),
                       "alpha_per_unit_upper": f64_up(&per_unit), "delta": format_rational(&delta_u),
                       "delta_upper": f64_up(&delta_u), "by": how, "reduction": discrete_json(&disc),
                       "warning": weak}),
                sentence: format!(
                    "PrivEMDItemWise released {users} users × {m} items ({scope}): (α, δ)-bounded {scope} d_EM-DP with α ≤ {} per {unit} of d_EM and δ ≤ {} by {how} (item ε = {} per {unit}, α₀ = ε·diameter ≤ {}; diameter ≤ {} {unit}).{}",
                    short(&per_unit), short(&delta_u), format_rational(eps), short(&alpha0),
                    short(&units.diameter),
                    disc.as_ref().map_or("", |(_, s)| s.as_str())
                ),
            }
        }
    })
}

/// The settings of [`freq`] (`mdp release freq`'s flags).
pub struct FreqSettings<'a> {
    /// Clusters C and items per cluster s of the clustered space.
    pub clusters: usize,
    pub size: usize,
    /// Distance inside a cluster, r ∈ (0, 1) (exact text).
    pub r: &'a str,
    /// Target user-level α and δ (normalised units, exact text).
    pub alpha: &'a str,
    pub delta: &'a str,
    pub model: ReleaseModel,
    /// The shuffle accountant (closed form, numerical, or the tighter).
    pub accountant: Accountant,
}

/// FreqEstLocal (Algorithm 4) on a clustered metric: α₀ from the accountant, the clustered
/// k-RR randomizer certified (returned, for `--randomizer`) before any item is randomized,
/// then one record per item (`item`, `cluster`, the unbiased `estimate`, and `frequency`,
/// its projection onto the simplex). Reads the users twice (α₀ depends on n and m).
pub fn freq(
    a: &FreqSettings,
    users: &mut Users,
    out: &mut dyn Write,
    rng: &mut ChaCha20Rng,
) -> Result<(Summary, Certified), String> {
    let space = Clustered::new(a.clusters, a.size, q("r", a.r)?).map_err(ul)?;
    let (alpha, delta) = (q("alpha", a.alpha)?, q("delta", a.delta)?);
    let labels = space.labels();
    let names = ItemNames::new(space.k(), Some(&labels));
    let mut m_seen: Option<usize> = None;
    let users_n = for_each_user(users()?, &names, |User { items, .. }| {
        match m_seen {
            None => m_seen = Some(items.len()),
            Some(m) if m != items.len() => {
                return Err("users of different sizes (bounded d_EM-DP needs equal sizes)".into())
            }
            _ => {}
        }
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    if users_n == 0 {
        return Err("--users: no users".into());
    }
    let m = m_seen.unwrap_or(0) as u64;
    let model = match a.model {
        ReleaseModel::Local => Model::Local { m },
        ReleaseModel::Central => Model::Central { n: users_n, m },
    };
    let FreqBudget {
        alpha0,
        alpha: g_alpha,
        delta: g_delta,
        by: how,
    } = freq_budget(model, &alpha, &delta, a.accountant);
    let rr = ClusteredRr::new(space.clone(), &alpha0).map_err(ul)?;
    // The randomizer, certified as an mdp/1 matrix before any item is randomized.
    let cert = certified_randomizer(&rr, &alpha0).map_err(|e| format!("the randomizer: {e}"))?;
    // The randomizer applied to every item, only counted (Algorithm 4's aggregate).
    let mut release = ItemWise::new(&rr.matrix(), true);
    let again = for_each_user(users()?, &names, |User { items, .. }| {
        // The second pass must see the data the guarantee was computed for.
        if items.len() as u64 != m {
            return Err("the file changed between the two passes; nothing written".into());
        }
        release.user(&items, rng);
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    if again != users_n {
        return Err("--users: the file changed between the two passes; nothing written".into());
    }
    let p = rr.estimate(release.counts()).map_err(ul)?;
    let estimate: Vec<f64> = p.iter().map(f64_nearest).collect();
    let frequency = project_to_simplex(&estimate);
    for (x, label) in labels.iter().enumerate() {
        let record = json!({"item": label, "cluster": space.cluster(x), "estimate": estimate[x],
                            "frequency": frequency[x]});
        writeln!(out, "{record}").map_err(write_err)?;
    }
    out.flush().map_err(write_err)?;
    let weak = weak_guarantee(f64_up(&g_alpha), f64_up(&g_delta));
    let summary = Summary {
        value: json!({"mechanism": "FreqEstLocal", "users": users_n, "items_per_user": m, "alpha0": format_rational(&alpha0),
               "alpha": format_rational(&g_alpha), "delta": format_rational(&g_delta), "by": how,
               "distance_unit": "normalised (d ≤ 1)",
               "predicted_error_bound": rr.error_bound(users_n * m), "warning": weak}),
        sentence: format!(
            "FreqEstLocal on {} clusters × {} items (one record per item: item, cluster, estimate — unbiased, may be negative — and frequency, its projection onto the probability simplex): α₀ = {} (certified clustered k-RR), (α, δ)-bounded d_EM-DP with α ≤ {} per unit of the normalised metric and δ ≤ {} by {how}; Theorem 6.6 predicts E d_EM ≤ {:.4e}.",
            a.clusters, a.size, short(&alpha0), short(&g_alpha), short(&g_delta), rr.error_bound(users_n * m)
        ),
    };
    Ok((summary, cert))
}
