//! # mdp-audit: the trusted kernel of `mdp`
//!
//! Everything a verdict of `mdp-audit` rests on, and nothing else: no floating-point LP
//! solver is linked into this crate (`spec/architecture.md` says why and what each module
//! may import). The solvers and the producers live in the `mdp` crate, built on this one;
//! whatever they produce is trusted only after this crate's checks pass.
//!
//! * [`exact`]: rationals, exact number parsing, rigorous enclosures (exp, ln, sqrt,
//!   haversine) and rigorous `f64` interval arithmetic;
//! * [`metric`]: finite metric spaces (euclidean, manhattan, chebyshev, haversine,
//!   explicit, graph);
//! * [`mechanism`]: the stochastic matrix and its outputs;
//! * [`error`]: the typed errors, each naming its field;
//! * [`io`]: the `mdp/1` file format (`spec/mechanism-format.md`);
//! * [`privacy`]: pure ε·d privacy, tight ε, (ε,δ) tight ε (Imola et al. eqs. 2, 9, 10);
//! * [`loss`]: L(M), L_q, expected loss (eqs. 1, 3, 11);
//! * [`bounds`]: packing lower bounds (Theorem 3, eqs. 7, 8);
//! * [`certificate`]: the exact check of an `lp_dual` certificate (weak duality,
//!   `spec/lp.md` §5), which also carries the Benders bound;
//! * [`audit`]: the `mdp-audit` checks and report;
//! * [`certified`]: a mechanism that passed its own audit (the only thing producers write);
//! * [`progress`]: the one reporting interface of long computations.

pub mod audit;
pub mod bounds;
pub mod certificate;
pub mod certified;
pub mod error;
pub mod exact;
pub mod io;
pub mod loss;
pub mod mechanism;
pub mod metric;
pub mod privacy;
pub mod progress;
