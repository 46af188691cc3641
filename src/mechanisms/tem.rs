//! TEM, the metric truncated exponential mechanism (Carvalho et al., Algorithms 2 and 3,
//! Lemma 4.1, Theorems 4.1 and 4.2, Lemma 4.2).
//!
//! For input w, L(w) = {y : d(w, y) ≤ γ} keep the score −d(w, y); the rest, L̄(w), are
//! aggregated into ⊥ with score −γ + 2 ln|L̄(w)|/ε; the exponential mechanism (Gumbel noise
//! of scale 2/ε) picks an element of L(w) ∪ {⊥}, and ⊥ is resolved uniformly in L̄(w).
//! Hence (the proof of Lemma 4.2):
//!
//!   Pr[TEM(w) = y] = e^{−ε·d̃(w,y)/2} / Σ_z e^{−ε·d̃(w,z)/2},   d̃ = min(d, γ),
//!
//! the exponential mechanism on the truncated metric d̃ (a metric, ≤ d). The score
//! −d̃(·, y) has sensitivity ≤ d (Lemma 4.1: min(·, γ) is 1-Lipschitz), so TEM is ε·d private
//! (Theorem 4.1). [`tem_matrix`] writes that matrix (proved private by the auditor);
//! [`TemSampler`] is Algorithm 3 (precomputed L(w), Gumbel noise, aggregated ⊥).
//!
//! Membership d(w, y) ≤ γ is decided exactly (γ is a rational).

use super::exponential::softmax_rows;
use crate::exact::float::FI;
use crate::exact::{f64_nearest, functions, Interval, Q};
use crate::mechanism::Matrix;
use crate::metric::Space;
use rand::Rng;
use std::cmp::Ordering;

/// Theorem 4.2: γ = (2/ε) ln((1−β)(|W|−1)/β) makes Pr[d(w, TEM(w)) ≤ γ] ≥ 1 − β for every
/// w. Returned rounded up (relative 1e-12), as a rational: a larger γ keeps the guarantee.
/// `None` when β ∉ (0, 1) or γ overflows; 0 when the logarithm is ≤ 0 (γ = 0 already suffices).
pub fn gamma_for_beta(eps: &Q, n: usize, beta: f64) -> Option<Q> {
    if !(beta > 0.0 && beta < 1.0) {
        return None;
    }
    let x = (1.0 - beta) * (n as f64 - 1.0) / beta;
    let g = if x <= 1.0 {
        0.0
    } else {
        2.0 / f64_nearest(eps) * x.ln()
    };
    let g = g * (1.0 + 1e-12) + f64::MIN_POSITIVE;
    // A γ beyond f64 (ε below ~1e-300) is no truncation at all: refused, not a panic.
    g.is_finite().then(|| crate::exact::q_from_f64(g))
}

/// An upper estimate of the size in bits of TEM's exact matrix on n inputs (as
/// [`super::exponential::exact_bits`]): every score is ≥ −ε·γ/2, so every entry is
/// ≥ e^{−εγ/2}/n and takes at most 64 + (εγ/2 + ln n)/ln 2 bits.
pub fn exact_bits(n: usize, eps: &Q, gamma: &Q) -> super::exponential::EntryBits {
    let nf = n as f64;
    let per_entry = 64.0
        + (crate::exact::f64_up(eps) * crate::exact::f64_up(gamma) / 2.0 + nf.ln())
            / std::f64::consts::LN_2;
    super::exponential::EntryBits {
        total: nf * nf * per_entry,
        largest: per_entry,
    }
}

/// The truncated score f(w, y) = −min(d(w, y), γ) of Lemma 4.1, for exact rational
/// distances (the Lipschitz property is tested on it).
pub fn truncated_score(d: &Q, gamma: &Q) -> Q {
    -(if d <= gamma { d.clone() } else { gamma.clone() })
}

/// L(w) for every w: the inputs y with d(w, y) ≤ γ, decided exactly. `Err((w, y))` when a
/// comparison is undecided at `max_prec` (d(w, y) transcendental and = γ to 2^-max_prec).
pub fn within_gamma(
    space: &Space,
    gamma: &Q,
    max_prec: u64,
) -> Result<Vec<Vec<usize>>, (usize, usize)> {
    use rayon::prelude::*;
    let n = space.n();
    (0..n)
        .into_par_iter()
        .map(|w| {
            let mut l = vec![];
            for y in 0..n {
                let inside = w == y
                    || space.is_zero(w, y)
                    || match space.cmp_distance(w, y, gamma, max_prec) {
                        Some(o) => o != Ordering::Greater,
                        None => return Err((w, y)),
                    };
                if inside {
                    l.push(y);
                }
            }
            Ok(l)
        })
        .collect()
}

/// Algorithm 2's transition matrix (the formula in the module doc).
pub fn tem_matrix(space: &Space, eps: &Q, lists: &[Vec<usize>], gamma: &Q) -> Matrix {
    let n = space.n();
    let e = f64_nearest(eps);
    let g = f64_nearest(gamma);
    let mut inside = vec![false; n * n];
    for (w, l) in lists.iter().enumerate() {
        for &y in l {
            inside[w * n + y] = true;
        }
    }
    softmax_rows(n, n, |w, y| {
        let d = if inside[w * n + y] {
            if w == y {
                0.0
            } else {
                space.approx(w, y).min(g)
            }
        } else {
            g
        };
        -e * d / 2.0
    })
}

/// [`tem_matrix`] as shipped: proved private at ε by the exact check, or, where float
/// rounding oversteps a tight ratio by an ulp, repaired exactly by a uniform mix
/// ([`crate::lp::repair::certify_or_repair`]). Returns the matrix and the mix t (0: the
/// formula's matrix itself). `None` if no repair passes (never observed).
pub fn tem_matrix_certified(
    space: &Space,
    eps: &Q,
    lists: &[Vec<usize>],
    gamma: &Q,
    max_prec: u64,
) -> Option<(Matrix, f64)> {
    let m = tem_matrix(space, eps, lists, gamma);
    crate::lp::repair::certify_or_repair(space, m, eps, max_prec).map(|r| (r.matrix, r.t))
}

/// Algorithm 3, sampled exactly: for input w the candidates are L(w) (logit −ε/2·d(w, y))
/// and ⊥ (logit −εγ/2 + ln|L̄(w)|, when L̄(w) is not empty), drawn by the exact Gumbel-max
/// ([`crate::privatize::gumbel::argmax`]: exact uniforms, enclosed logits, no float
/// sampler); ⊥ then takes a uniform element of L̄(w) (an unbiased integer draw).
pub struct TemSampler {
    space: Space,
    /// −ε/2, exact and as an `f64` enclosure.
    half_eps: (Q, FI),
    /// L(w), for each w, with an `f64` enclosure of each logit −ε/2·d(w, y) (computed once).
    lists: Vec<Vec<usize>>,
    fast_logits: Vec<Vec<FI>>,
    /// L̄(w) and ⊥'s logit −εγ/2 + ln|L̄(w)| as the exact −εγ/2 (none if L̄(w) is empty).
    outside: Vec<Vec<usize>>,
    /// −εγ/2, exact and as an `f64` enclosure.
    bot: (Q, FI),
}

/// The logits of one input's draw: L(w), then ⊥ if any.
struct TemLogits<'a> {
    t: &'a TemSampler,
    w: usize,
}

impl crate::privatize::gumbel::Logits for TemLogits<'_> {
    fn count(&self) -> usize {
        self.t.lists[self.w].len() + usize::from(!self.t.outside[self.w].is_empty())
    }

    fn fast(&self, j: usize) -> FI {
        let (w, list) = (self.w, &self.t.lists[self.w]);
        match list.get(j) {
            Some(_) => self.t.fast_logits[w][j],
            None => self
                .t
                .bot
                .1
                .add(FI::point(self.t.outside[w].len() as f64).ln()),
        }
    }

    fn exact(&self, j: usize, prec: u64) -> Interval {
        let (w, list) = (self.w, &self.t.lists[self.w]);
        match list.get(j) {
            Some(&y) if y == w => Interval::point(Q::from(0u32)),
            Some(&y) => self
                .t
                .space
                .enclosure(w, y, prec)
                .mul(&Interval::point(self.t.half_eps.0.clone())),
            None => {
                let m = Interval::point(Q::from(self.t.outside[w].len() as u64));
                Interval::point(self.t.bot.0.clone())
                    .add(&functions::ln(&m, prec).expect("|L̄(w)| ≥ 1"))
            }
        }
    }
}

impl TemSampler {
    pub fn new(space: &Space, eps: &Q, lists: &[Vec<usize>], gamma: &Q) -> TemSampler {
        let n = space.n();
        let outside = lists
            .iter()
            .map(|l| {
                let mut it = l.iter().peekable();
                (0..n)
                    .filter(|&y| {
                        if it.peek() == Some(&&y) {
                            it.next();
                            false
                        } else {
                            true
                        }
                    })
                    .collect()
            })
            .collect();
        let half = -(eps / Q::from(2u32));
        let bot = &half * gamma;
        let half_f = FI::from_q(&half);
        let fast_logits = lists
            .iter()
            .enumerate()
            .map(|(w, l)| {
                l.iter()
                    .map(|&y| {
                        if y == w {
                            FI::point(0.0)
                        } else {
                            space.fi(w, y).mul(half_f)
                        }
                    })
                    .collect()
            })
            .collect();
        TemSampler {
            space: space.clone(),
            half_eps: (half.clone(), half_f),
            lists: lists.to_vec(),
            fast_logits,
            outside,
            bot: (bot.clone(), FI::from_q(&bot)),
        }
    }

    /// One exact draw of TEM(w).
    pub fn sample<R: Rng>(&self, w: usize, rng: &mut R) -> usize {
        let j = crate::privatize::gumbel::argmax(&TemLogits { t: self, w }, rng);
        match self.lists[w].get(j) {
            Some(&y) => y,
            None => {
                let bar = &self.outside[w];
                bar[rng.gen_range(0..bar.len())]
            }
        }
    }
}

/// TEM's truncation threshold (Carvalho et al. Theorem 4.2).
#[derive(Clone, Debug)]
pub enum Truncation {
    /// γ ≥ 0 given.
    Gamma(Q),
    /// γ such that the output is within γ with probability ≥ 1 − β, β ∈ (0, 1).
    Beta(f64),
}

/// TEM's β of Theorem 4.2: in (0, 1).
pub fn check_beta(beta: f64) -> Result<(), crate::produce::ProduceError> {
    if !(beta > 0.0 && beta < 1.0) {
        return Err(crate::produce::invalid("beta", "must be in (0, 1)"));
    }
    Ok(())
}

/// TEM's γ for the settings.
pub fn tem_gamma(
    space: &Space,
    eps: &Q,
    t: &Truncation,
) -> Result<Q, crate::produce::ProduceError> {
    tem_gamma_for(space.n(), eps, t)
}

/// [`tem_gamma`] for n inputs.
pub fn tem_gamma_for(n: usize, eps: &Q, t: &Truncation) -> Result<Q, crate::produce::ProduceError> {
    use crate::produce::invalid;
    match t {
        Truncation::Gamma(g) if *g < 0u32 => Err(invalid("gamma", "must be ≥ 0")),
        Truncation::Gamma(g) => Ok(g.clone()),
        Truncation::Beta(beta) => {
            check_beta(*beta)?;
            gamma_for_beta(eps, n, *beta)
                .ok_or_else(|| invalid("beta", "γ = (2/ε)·ln((1−β)(n−1)/β) is not finite"))
        }
    }
}

/// TEM as a family of [`produce`](mod@crate::produce): the exponential mechanism on min(d, γ)
/// (Carvalho et al. Algorithm 2), written with a k-center `packing` bound.
///
/// ```
/// # use mdp::exact::{parse_rational, Q};
/// # use mdp::metric::{MetricKind, Space};
/// # use mdp::produce::*;
/// # use mdp::progress::Silent;
/// # let pts = (0..6).map(|i| vec![Q::from(i * i)]).collect();
/// # let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
/// let req = Request::new(&space, "points", parse_rational("0.5").unwrap());
/// let family = Family::Tem(TemMech { truncation: Truncation::Beta(0.01) });
/// let out = produce(&req, &family, &Silent).unwrap();
/// assert_eq!(out.certified.report().verdict, mdp::audit::Verdict::Pass);
/// ```
#[derive(Clone, Debug)]
pub struct TemMech {
    pub truncation: Truncation,
}

impl crate::produce::MechanismFamily for TemMech {
    fn name(&self) -> &'static str {
        "tem"
    }

    fn paper_name(&self) -> String {
        match self.truncation {
            Truncation::Beta(b) => format!("TEM(β={b})"),
            Truncation::Gamma(_) => "TEM".into(),
        }
    }

    fn check(
        &self,
        req: &crate::produce::Request,
        progress: &dyn crate::progress::Progress,
    ) -> Result<(), crate::produce::ProduceError> {
        let n = req.space.n();
        crate::produce::check_dense_memory("TEM", n, || None, req.max_memory, progress)?;
        let gamma = tem_gamma(req.space, &req.eps, &self.truncation)?;
        crate::produce::check_size_budget(exact_bits(n, &req.eps, &gamma))
    }

    fn build(
        &self,
        req: &crate::produce::Request,
        _progress: &dyn crate::progress::Progress,
    ) -> Result<crate::produce::Assembled, crate::produce::ProduceError> {
        use crate::produce::{invalid, MAX_PREC};
        let (space, eps, n) = (req.space, &req.eps, req.space.n());
        let gamma = tem_gamma(space, eps, &self.truncation)?;
        let lists = within_gamma(space, &gamma, MAX_PREC)
            .map_err(|(u, v)| invalid("gamma", format!("d({u},{v}) ≤ γ cannot be decided")))?;
        let (matrix, t) = tem_matrix_certified(space, eps, &lists, &gamma, MAX_PREC).ok_or(
            crate::produce::ProduceError::Build(crate::lp::BuildError::Repair),
        )?;
        let beta = match self.truncation {
            Truncation::Beta(b) => Some(b),
            Truncation::Gamma(_) => None,
        };
        let (certificate, lower_bound) = crate::produce::packing_certificate(space, eps).unzip();
        let mean_list_size = lists.iter().map(Vec::len).sum::<usize>() as f64 / n as f64;
        Ok(crate::produce::Assembled {
            meta: serde_json::json!({"tem": {"gamma": crate::io::number_value(&gamma), "beta": beta, "uniform_mix": t,
                "mean_list_size": mean_list_size}}),
            certificate,
            lower_bound,
            ..crate::produce::Assembled::matrix(matrix)
        })
    }
}
