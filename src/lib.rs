//! # mdp: metric differential privacy (ε·d privacy) with proofs
//!
//! Mechanisms from the papers in `shared/papers/` and an auditor whose "pass" is a proof.
//! One concept per module:
//!
//! * [`exact`]: rationals, exact number parsing, rigorous enclosures (exp, ln, sqrt,
//!   haversine) and rigorous `f64` interval arithmetic;
//! * [`metric`]: finite metric spaces (euclidean, manhattan, chebyshev, haversine,
//!   explicit, graph);
//! * [`mechanism`]: the stochastic matrix and its outputs;
//! * [`error`]: the typed errors, each naming its field;
//! * [`io`]: the `mdp/1` file format (`spec/mechanism-format.md`);
//! * [`import`]: what users bring: CSV / GeoJSON spaces, external matrices (npy, JSON,
//!   CSV) as `mdp/1` documents, exact repair of near-private external matrices;
//! * [`privacy`]: pure ε·d privacy, tight ε, (ε,δ) tight ε (Imola et al. eqs. 2, 9, 10);
//! * [`loss`]: L(M), L_q, expected loss (eqs. 1, 3, 11);
//! * [`bounds`]: packing lower bounds (Theorem 3, eqs. 7, 8);
//! * [`lp`]: privacy LPs with directed rounding, a float simplex with lazy rows, exact
//!   repair and the exactly checked `lp_dual` certificate;
//! * [`audit`]: the `mdp-audit` checks and report;
//! * [`certified`]: a mechanism that passed its own audit (the only thing producers write);
//! * [`produce`]: every family built, packaged and certified through one call;
//! * [`mechanisms`]: producers (exponential and weighted exponential, OPTMech, PMO,
//!   SpannerMech, ConstOPTMech, TEM, Madlib);
//! * [`calibrate`]: a mechanism's parameter for a target (ε,δ) tight epsilon;
//! * [`privatize`]: applying a mechanism to records (seeded, streaming samplers);
//! * [`experiment`]: the papers' experiments (CSV and SVG);
//! * [`progress`]: the one reporting interface of long computations;
//! * [`user_level`]: user-level privacy via the earth mover's distance (Imola, Roy
//!   Chowdhury, Chaudhuri 2024): EMD, PrivEMDLinear, the shuffle accountant, the
//!   bounded→unbounded reduction and frequency estimation;
//! * [`builtin`]: embedded data sets.

pub mod audit;
pub mod benders;
pub mod bounds;
pub mod builtin;
pub mod calibrate;
pub mod certified;
pub mod error;
pub mod exact;
pub mod experiment;
pub mod import;
pub mod io;
pub mod loss;
pub mod lp;
pub mod mechanism;
pub mod mechanisms;
pub mod metric;
pub mod privacy;
pub mod privatize;
pub mod produce;
pub mod progress;
pub mod user_level;
