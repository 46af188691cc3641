//! The adversary's view of a mechanism (issue 54 part 3): how much a Bayesian adversary
//! who knows the prior π and the channel H (the matrix with each row divided by its exact
//! sum, what the auditor proves and the sampler draws from) learns from one release.
//!
//! Quantitative information flow (Alvim, Chatzikokolakis, McIver, Morgan, Palamidessi,
//! Smith, *The Science of Quantitative Information Flow*, 2020, chapters 2–7), with
//! J(x, y) = π_x H\[x\]\[y\] and p(y) = Σ_x J(x, y):
//!
//! * Bayes vulnerability, prior V(π) = max_x π_x; posterior V(π, H) = Σ_y max_x J(x, y)
//!   (the probability that the best single guess is right, before and after);
//! * multiplicative Bayes leakage L = V(π, H) / V(π), min-entropy leakage log₂ L bits;
//! * multiplicative Bayes capacity ML(H) = Σ_y max_x H\[x\]\[y\] (L's maximum over priors,
//!   reached at the uniform prior, Theorem 7.2), and log₂ ML bits;
//! * g-vulnerability for a gain g(w, x) (guesses w, secrets x): prior max_w Σ_x π_x g(w, x),
//!   posterior Σ_y max_w Σ_x J(x, y) g(w, x);
//! * the **adversary's error** (Shokri, Theodorakopoulos, Le Boudec, Hubaux, *Quantifying
//!   location privacy*, S&P 2011, "correctness"): the expected distance between the secret
//!   and the Bayes-optimal guess among the inputs, Σ_y min_{x'} Σ_x J(x, y) d(x, x'), with
//!   the guess for each output;
//! * conditional Shannon entropy H(X | Y) = Σ_{x,y} J(x, y) log₂(p(y) / J(x, y)) bits;
//! * the expected loss Σ_x π_x Σ_y H\[x\]\[y\] c(x, y) and the worst loss max_x Σ_y …
//!   (c = the file's cost, else the distance to the output: Imola et al. eqs. 1, 3).
//!
//! Every quantity that is rational (the vulnerabilities, leakage, capacity) is exact; the
//! others (a logarithm, an irrational distance) are rigorous enclosures [lo, hi] in
//! directed-rounding `f64` interval arithmetic ([`FI`]).

use crate::audit::output_sites;
use crate::exact::float::FI;
use crate::exact::{functions, sum_tree, Q};
use crate::io::MechanismFile;
use crate::loss::Cost;
use crate::mechanism::{Matrix, Outputs};
use crate::privacy::Prepared;
use rayon::prelude::*;

/// Why the measures cannot be computed.
#[derive(Debug, thiserror::Error)]
pub enum MeasureError {
    /// A prior or gain of the wrong shape or with a negative entry.
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
}

fn invalid(field: &str, message: impl Into<String>) -> MeasureError {
    MeasureError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}

/// A gain function g(w, x): one row per guess w, one column per secret (input) x.
pub struct Gain {
    pub rows: Vec<Vec<Q>>,
}

/// The measures of a channel under a prior (see the module's doc).
#[derive(Clone, Debug)]
pub struct Measures {
    pub prior_vulnerability: Q,
    pub posterior_vulnerability: Q,
    pub multiplicative_leakage: Q,
    pub min_entropy_leakage_bits: FI,
    pub multiplicative_capacity: Q,
    pub capacity_bits: FI,
    /// (prior, posterior) g-vulnerability, when a gain was given.
    pub g_vulnerability: Option<(Q, Q)>,
    /// The adversary's expected error (in the space's distance unit) and, for each output,
    /// the input guessed (the one whose posterior expected distance has the least upper
    /// end; an output no input reaches is guessed as input 0 and adds nothing).
    pub adversary_error: FI,
    pub guesses: Vec<usize>,
    pub conditional_entropy_bits: FI,
    /// The prior-weighted and the worst expected loss (`None` without a cost: opaque
    /// output labels and no `loss.cost`).
    pub expected_loss: Option<FI>,
    pub worst_loss: Option<FI>,
}

/// The prior the measures use: `given`, else the file's `loss.prior`, else uniform;
/// normalized exactly.
pub fn prior_of(file: &MechanismFile, given: Option<&[Q]>) -> Result<Vec<Q>, MeasureError> {
    let n = file.space.n();
    let raw: Vec<Q> = match given.or(file.prior.as_deref()) {
        Some(p) => p.to_vec(),
        None => vec![Q::from(1u32); n],
    };
    if raw.len() != n {
        return Err(invalid(
            "prior",
            format!("has {} weights, the mechanism has {n} inputs", raw.len()),
        ));
    }
    if let Some(i) = raw.iter().position(|w| *w < 0u32) {
        return Err(invalid(&format!("prior[{i}]"), "negative weight"));
    }
    let total = sum_tree(raw.clone());
    if total == 0u32 {
        return Err(invalid("prior", "weights sum to 0"));
    }
    Ok(raw.into_iter().map(|w| w / &total).collect())
}

fn ln2() -> FI {
    FI::from_interval(&functions::ln2(64))
}

/// log₂ of a rational q > 0, enclosed.
fn log2(q: &Q) -> FI {
    FI::from_q(q).ln().div(ln2())
}

/// The measures of `file`'s channel (its rows divided by their exact sums) under `prior`
/// (normalized; [`prior_of`]) and an optional gain.
pub fn measures(
    file: &MechanismFile,
    prior: &[Q],
    gain: Option<&Gain>,
) -> Result<Measures, MeasureError> {
    let h = crate::privatize::normalized(&file.matrix);
    let (n, k) = (h.rows, h.cols);
    if prior.len() != n {
        return Err(invalid(
            "prior",
            format!("has {} weights, expected {n}", prior.len()),
        ));
    }
    let joint = |x: usize, y: usize| &prior[x] * h.get(x, y);
    // Bayes vulnerability, leakage and capacity: exact.
    let prior_v = prior.iter().max().expect("n ≥ 1").clone();
    let column_max = |f: &(dyn Fn(usize, usize) -> Q + Sync)| -> Q {
        sum_tree(
            (0..k)
                .into_par_iter()
                .map(|y| (0..n).map(|x| f(x, y)).max().expect("n ≥ 1"))
                .collect(),
        )
    };
    let post_v = column_max(&|x, y| joint(x, y));
    let capacity = column_max(&|x, y| h.get(x, y).clone());
    let leakage = &post_v / &prior_v;
    let g_vulnerability = gain.map(|g| g_vulnerabilities(g, &h, prior)).transpose()?;
    // Conditional entropy: Σ_y Σ_x J log₂(p(y)/J), J > 0.
    let entropy = (0..k)
        .into_par_iter()
        .map(|y| {
            let col: Vec<Q> = (0..n).map(|x| joint(x, y)).collect();
            let py = sum_tree(col.clone());
            let mut s = FI::point(0.0);
            for j in col.iter().filter(|j| **j > 0u32) {
                s = s.add(FI::from_q(j).mul(log2(&(&py / j))));
            }
            s
        })
        .reduce(|| FI::point(0.0), FI::add);
    // The adversary's error: per output, the least posterior expected distance.
    let jf: Vec<FI> = (0..n * k)
        .map(|i| FI::from_q(&joint(i / k, i % k)))
        .collect();
    let per_output: Vec<(usize, FI)> = (0..k)
        .into_par_iter()
        .map(|y| {
            let reached: Vec<usize> = (0..n).filter(|&x| jf[x * k + y].hi > 0.0).collect();
            if reached.is_empty() {
                return (0, FI::point(0.0));
            }
            let mut best: Option<(usize, FI)> = None;
            for g in 0..n {
                let mut s = FI::point(0.0);
                for &x in &reached {
                    s = s.add(jf[x * k + y].mul(file.space.fi(x, g)));
                }
                best = match best {
                    Some((bg, bs)) if bs.hi <= s.hi => Some((bg, FI::new(bs.lo.min(s.lo), bs.hi))),
                    Some((_, bs)) => Some((g, FI::new(s.lo.min(bs.lo), s.hi))),
                    None => Some((g, s)),
                };
            }
            best.expect("n ≥ 1")
        })
        .collect();
    let guesses = per_output.iter().map(|(g, _)| *g).collect();
    let error = per_output
        .iter()
        .fold(FI::point(0.0), |a, (_, e)| a.add(*e));
    let (expected_loss, worst_loss) = losses(file, prior);
    Ok(Measures {
        min_entropy_leakage_bits: log2(&leakage),
        capacity_bits: log2(&capacity),
        prior_vulnerability: prior_v,
        posterior_vulnerability: post_v,
        multiplicative_leakage: leakage,
        multiplicative_capacity: capacity,
        g_vulnerability,
        adversary_error: error,
        guesses,
        conditional_entropy_bits: entropy,
        expected_loss,
        worst_loss,
    })
}

/// (prior, posterior) g-vulnerability, exactly.
fn g_vulnerabilities(g: &Gain, h: &Matrix, prior: &[Q]) -> Result<(Q, Q), MeasureError> {
    let n = prior.len();
    if g.rows.is_empty() {
        return Err(invalid("gain", "needs at least one guess (row)"));
    }
    if let Some(w) = g.rows.iter().position(|r| r.len() != n) {
        return Err(invalid(
            &format!("gain[{w}]"),
            format!(
                "has {} entries, expected one per input ({n})",
                g.rows[w].len()
            ),
        ));
    }
    let best = |weights: &dyn Fn(usize) -> Q| -> Q {
        g.rows
            .iter()
            .map(|r| sum_tree((0..n).map(|x| weights(x) * &r[x]).collect()))
            .max()
            .expect("a guess")
    };
    let prior_g = best(&|x| prior[x].clone());
    let post_g = sum_tree(
        (0..h.cols)
            .into_par_iter()
            .map(|y| best(&|x| &prior[x] * h.get(x, y)))
            .collect(),
    );
    Ok((prior_g, post_g))
}

/// The expected (prior-weighted) and worst loss, as the audit computes them
/// ([`crate::loss::losses`]: the file's cost, else the distance to the output site; `None`
/// without either).
fn losses(file: &MechanismFile, prior: &[Q]) -> (Option<FI>, Option<FI>) {
    let space = match &file.outputs {
        Outputs::Points(p) => match file.space.with_extra_points(p.clone()) {
            Ok(s) => s,
            Err(_) => return (None, None),
        },
        _ => file.space.clone(),
    };
    let sites = output_sites(file, &space);
    let cost = match (&file.cost, &sites) {
        (Some(c), _) => Cost::Matrix(c),
        (None, Some(s)) => Cost::Distance(s),
        (None, None) => return (None, None),
    };
    let Ok(prep) = Prepared::new(&space, &file.matrix, None, crate::privacy::DEFAULT_MAX_PREC)
    else {
        return (None, None);
    };
    let l = crate::loss::losses(&prep, &cost, &Q::from_unsigneds(1u32, 2u32), Some(prior));
    (l.expected, Some(l.max))
}

/// The measures as JSON, fields a script can rely on: exact values as the nearest double
/// (their exact rationals under `exact`), enclosures as `[lo, hi]`, `guesses` by label
/// when the inputs have labels, `unit` the distance unit (km for haversine).
pub fn to_json(m: &Measures, file: &MechanismFile) -> serde_json::Value {
    use crate::exact::{f64_nearest, format_rational};
    use serde_json::json;
    let enc = |x: FI| json!([x.lo, x.hi]);
    let guess = |g: usize| match &file.labels {
        Some(l) => json!(l[g]),
        None => json!(g),
    };
    let mut v = json!({
        "bayes_vulnerability": {
            "prior": f64_nearest(&m.prior_vulnerability),
            "posterior": f64_nearest(&m.posterior_vulnerability),
        },
        "multiplicative_leakage": f64_nearest(&m.multiplicative_leakage),
        "min_entropy_leakage_bits": enc(m.min_entropy_leakage_bits),
        "multiplicative_capacity": f64_nearest(&m.multiplicative_capacity),
        "capacity_bits": enc(m.capacity_bits),
        "adversary_error": enc(m.adversary_error),
        "guesses": m.guesses.iter().map(|&g| guess(g)).collect::<Vec<_>>(),
        "conditional_entropy_bits": enc(m.conditional_entropy_bits),
        "expected_loss": m.expected_loss.map(enc),
        "worst_loss": m.worst_loss.map(enc),
        "unit": crate::audit::unit_of(&file.space),
        "exact": {
            "bayes_vulnerability": {
                "prior": format_rational(&m.prior_vulnerability),
                "posterior": format_rational(&m.posterior_vulnerability),
            },
            "multiplicative_leakage": format_rational(&m.multiplicative_leakage),
            "multiplicative_capacity": format_rational(&m.multiplicative_capacity),
        },
    });
    if let Some((p, q)) = &m.g_vulnerability {
        v["g_vulnerability"] = json!({"prior": f64_nearest(p), "posterior": f64_nearest(q)});
        v["exact"]["g_vulnerability"] =
            json!({"prior": format_rational(p), "posterior": format_rational(q)});
    }
    v
}

/// The measures for people, one per line, with units.
pub fn human(m: &Measures, file: &MechanismFile) -> String {
    use crate::exact::f64_nearest;
    let unit = crate::audit::unit_of(&file.space).map_or(String::new(), |u| format!(" {u}"));
    let iv = |x: FI| format!("[{:.9e}, {:.9e}]", x.lo, x.hi);
    let mut s = format!(
        "Bayes vulnerability      prior {:.9e}, posterior {:.9e} (the chance the best single guess is right)\n\
         multiplicative leakage   {:.9e} (min-entropy leakage {} bits)\n\
         multiplicative capacity  {:.9e} (the most any prior can leak: {} bits)\n\
         adversary's error        {}{unit} (expected distance from the secret to the Bayes-optimal guess)\n\
         conditional entropy      {} bits\n",
        f64_nearest(&m.prior_vulnerability),
        f64_nearest(&m.posterior_vulnerability),
        f64_nearest(&m.multiplicative_leakage),
        iv(m.min_entropy_leakage_bits),
        f64_nearest(&m.multiplicative_capacity),
        iv(m.capacity_bits),
        iv(m.adversary_error),
        iv(m.conditional_entropy_bits),
    );
    if let Some((p, q)) = &m.g_vulnerability {
        s.push_str(&format!(
            "g-vulnerability          prior {:.9e}, posterior {:.9e}\n",
            f64_nearest(p),
            f64_nearest(q)
        ));
    }
    if let (Some(e), Some(w)) = (m.expected_loss, m.worst_loss) {
        s.push_str(&format!(
            "expected loss            {}{unit} (prior-weighted); worst input {}{unit}\n",
            iv(e),
            iv(w)
        ));
    }
    s
}
