//! # mdp: metric differential privacy (ε·d privacy) with proofs
//!
//! Mechanisms from the papers in `shared/papers/` and an auditor whose "pass" is a proof.
//! This crate is the solver side; the trusted kernel it builds on, the crate `mdp_audit`
//! (folder `audit/`, no LP solver in it), is re-exported here module by module, so
//! `mdp::exact`, `mdp::metric`, … are the kernel's (`spec/architecture.md`).
//!
//! The kernel:
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
//! * [`certificate`]: the exact check of an `lp_dual` certificate (`spec/lp.md` §5);
//! * [`audit`]: the `mdp-audit` checks and report;
//! * [`certified`]: a mechanism that passed its own audit (the only thing producers write);
//! * [`progress`]: the one reporting interface of long computations.
//!
//! This crate:
//!
//! * [`import`]: what users bring: CSV / GeoJSON spaces, external matrices (npy, JSON,
//!   CSV) as `mdp/1` documents, exact repair of near-private external matrices;
//! * [`lp`]: privacy LPs with directed rounding, float solvers with lazy rows and exact
//!   repair;
//! * [`produce`]: every family built, packaged and certified through one call;
//! * [`mechanisms`]: producers (exponential and weighted exponential, OPTMech, PMO,
//!   SpannerMech, ConstOPTMech, TEM, Madlib);
//! * [`benders`]: Benders decomposition of the PMO LP (Qiu 2024);
//! * [`calibrate`]: a mechanism's parameter for a target (ε,δ) tight epsilon;
//! * [`privatize`]: applying a mechanism to records (seeded, streaming samplers);
//! * [`experiment`]: the papers' experiments (CSV and SVG);
//! * [`user_level`]: user-level privacy via the earth mover's distance (Imola, Roy
//!   Chowdhury, Chaudhuri 2024): EMD, PrivEMDLinear, the shuffle accountant, the
//!   bounded→unbounded reduction and frequency estimation;
//! * [`builtin`]: embedded data sets.

pub use mdp_audit::{
    audit, bounds, certificate, certified, error, exact, io, loss, mechanism, metric, privacy,
    progress,
};

pub mod benders;
pub mod builtin;
pub mod calibrate;
pub mod experiment;
pub mod import;
pub mod lp;
pub mod mechanisms;
pub mod privatize;
pub mod produce;
pub mod user_level;
