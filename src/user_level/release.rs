//! The releases of Imola, Roy Chowdhury, Chaudhuri 2024 over a stream of users, as `mdp
//! release item-wise` and `mdp release freq` run them; the command only reads users,
//! writes outputs and prints the guarantee.
//!
//! * [`ItemWise`]: PrivEMDItemWise (Algorithm 2): every item of every user randomized by an
//!   audited mechanism, sampled from its exact rows ([`crate::privatize::ExactRow`]),
//!   shuffled per user (local model) or only counted (central / shuffle model, §4), with the
//!   guarantee of Theorem 4.4 or of composition ([`shuffle::best`]).
//! * [`freq_budget`] and [`certified_randomizer`]: FreqEstLocal (Algorithm 4, §6): the
//!   item-level α₀ for a user-level target (equations 6–7, or composition where the
//!   theorem does not reach it), and the clustered k-RR randomizer certified as an `mdp/1`
//!   matrix before any item is randomized.

use super::freq::ClusteredRr;
use super::shuffle::{self, Accountant, Bound, Model};
use super::{invalid, Units, UserLevelError};
use crate::certified::{Certified, CertifyError};
use crate::exact::Q;
use crate::mechanism::Matrix;
use crate::privatize::{exact_rows, ExactRow};
use crate::progress::Silent;
use rand::seq::SliceRandom;
use rand::Rng;
use serde_json::json;

/// PrivEMDItemWise over a stream of users (Algorithm 2), one [`ItemWise::user`] call a user.
pub struct ItemWise {
    rows: Vec<ExactRow>,
    central: bool,
    counts: Vec<u64>,
    m: Option<usize>,
    largest: usize,
    sizes_differ: bool,
    users: u64,
}

/// What a finished [`ItemWise`] release guarantees.
#[derive(Clone, Debug, PartialEq)]
pub enum ItemWiseGuarantee {
    /// Users of different sizes (local model only): each user of m items is
    /// (m·ε)·d_EM-private among datasets of its own size, by composition; `largest` is the
    /// largest m seen.
    Composition { users: u64, largest: usize },
    /// Users of one size m: (α, δ)-bounded d_EM-DP.
    Bounded {
        users: u64,
        m: u64,
        /// α₀ = ε·diameter, the item-level α in normalised units.
        alpha0: Q,
        /// α per unit of distance, and δ.
        alpha_per_unit: Q,
        delta: Q,
        /// Which theorem gives it.
        by: Bound,
    },
}

impl ItemWise {
    /// A release with the (exactly normalized, audited) `matrix`; `central`: only the
    /// counts of all outputs are released (the shuffle model), else each user's outputs.
    pub fn new(matrix: &Matrix, central: bool) -> ItemWise {
        ItemWise {
            rows: exact_rows(matrix),
            central,
            counts: vec![0; matrix.cols],
            m: None,
            largest: 0,
            sizes_differ: false,
            users: 0,
        }
    }

    /// Randomize one user's items (0-based inputs of the matrix): in the local model the
    /// outputs, shuffled; in the central model `None` (they are counted).
    pub fn user<R: Rng + ?Sized>(&mut self, items: &[usize], rng: &mut R) -> Option<Vec<usize>> {
        self.users += 1;
        self.largest = self.largest.max(items.len());
        match self.m {
            None => self.m = Some(items.len()),
            Some(m) if m != items.len() => self.sizes_differ = true,
            _ => {}
        }
        let mut ys: Vec<usize> = items.iter().map(|&x| self.rows[x].sample(rng)).collect();
        if self.central {
            for y in ys {
                self.counts[y] += 1;
            }
            None
        } else {
            ys.shuffle(rng);
            Some(ys)
        }
    }

    /// The counts of every output so far (the central model's release).
    pub fn counts(&self) -> &[u64] {
        &self.counts
    }

    /// The guarantee of the release so far, for a mechanism ε·d-private at `eps` per unit
    /// of distance on a space of `units`, with the shuffle theorem's item δ `delta`.
    /// Errors: no users; users of different sizes in the central model (the accountant is
    /// for bounded d_EM-DP).
    pub fn guarantee(
        &self,
        units: &Units,
        eps: &Q,
        delta: &Q,
        accountant: Accountant,
    ) -> Result<ItemWiseGuarantee, UserLevelError> {
        if self.central && self.sizes_differ {
            return Err(invalid(
                "users",
                "users of different sizes: the shuffle accountant is for bounded d_EM-DP (equal sizes); nothing written",
            ));
        }
        if self.users == 0 {
            return Err(invalid("users", "no users"));
        }
        if self.sizes_differ {
            return Ok(ItemWiseGuarantee::Composition {
                users: self.users,
                largest: self.largest,
            });
        }
        let m = self.m.unwrap_or(0) as u64;
        let model = if self.central {
            Model::Central { n: self.users, m }
        } else {
            Model::Local { m }
        };
        let alpha0 = units.alpha0(eps);
        let (g, by) = shuffle::best(model, &alpha0, delta, accountant);
        Ok(ItemWiseGuarantee::Bounded {
            users: self.users,
            m,
            alpha_per_unit: units.per_unit(&g.alpha),
            alpha0,
            delta: g.delta,
            by,
        })
    }
}

/// The item-level budget of FreqEstLocal for a user-level target (α, δ) on `model`.
#[derive(Clone, Debug, PartialEq)]
pub struct FreqBudget {
    pub alpha0: Q,
    /// The user-level guarantee reached (≤ the target in both coordinates).
    pub alpha: Q,
    pub delta: Q,
    /// "Theorem 4.4 (… accountant)" or "composition".
    pub by: &'static str,
}

/// The largest item-level α₀ whose guarantee is within (α, δ): equations 6–7 (Theorem
/// 4.4's inverse, [`shuffle::max_alpha0`]) where that beats composition's α/m, else α/m
/// with δ = 0.
pub fn freq_budget(model: Model, alpha: &Q, delta: &Q, accountant: Accountant) -> FreqBudget {
    let m = Q::from(model.m());
    match shuffle::max_alpha0(model, alpha, delta, accountant) {
        Ok(inv) if inv.alpha0 > alpha / &m => FreqBudget {
            alpha0: inv.alpha0,
            alpha: inv.guarantee.alpha,
            delta: inv.guarantee.delta,
            by: match inv.accountant {
                Accountant::Closed => "Theorem 4.4 (closed-form accountant)",
                _ => "Theorem 4.4 (numerical accountant)",
            },
        },
        _ => {
            let a0 = alpha / &m;
            FreqBudget {
                alpha: &m * &a0,
                alpha0: a0,
                delta: Q::from(0u32),
                by: "composition",
            }
        }
    }
}

/// The clustered k-RR randomizer at its α₀ as an `mdp/1` matrix that passed its audit
/// (the randomizer of FreqEstLocal is certified before any item is randomized).
pub fn certified_randomizer(rr: &ClusteredRr, alpha0: &Q) -> Result<Certified, CertifyError> {
    let doc = crate::io::mechanism_to_value(
        alpha0,
        &rr.space.space(),
        &rr.matrix(),
        json!({"mechanism": "clustered k-RR (Imola et al. 2024, Algorithm 4)"}),
    );
    Certified::certify(&doc, &Silent)
}
