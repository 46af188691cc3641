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
//! * [`mod@audit`]: the `mdp-audit` checks and report;
//! * [`certified`]: a mechanism that passed its own audit (the only thing producers write);
//! * [`progress`]: the one reporting interface of long computations.
//!
//! This crate:
//!
//! * [`import`]: what users bring: CSV / GeoJSON spaces, external matrices (npy, JSON,
//!   CSV) as `mdp/1` documents, exact repair of near-private external matrices;
//! * [`lp`]: privacy LPs with directed rounding, float solvers with lazy rows and exact
//!   repair;
//! * [`mod@produce`]: every family built, packaged and certified through one call;
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

//!
//! ## In five lines
//!
//! Certify the least-loss mechanism (OPTMech) on your own points, then audit a file the way
//! `mdp-audit` does. The types a user needs are re-exported at the crate root.
//!
//! ```
//! use mdp::{produce, Family, MetricKind, Request, Silent, Solver, Space, Verdict, Q};
//! let pts = vec![vec![Q::from(0u32)], vec![Q::from(1u32)], vec![Q::from(3u32)]];
//! let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
//! let req = Request::new(&space, "my points", mdp::parse_rational("0.5").unwrap());
//! let built = produce(&req, &Family::Optimal(mdp::produce::OptMech { solver: Solver::Auto, outputs: None }), &Silent).unwrap();
//! assert_eq!(built.certified.report().verdict, Verdict::Pass);
//!
//! // Any mdp/1 file, ours or a peer's, is audited by the trusted kernel alone.
//! let mut bytes = Vec::new();
//! built.certified.write_to(&mut bytes).unwrap();
//! let file = mdp::read_mechanism(&bytes, &mdp::Limits::default()).unwrap();
//! let report = mdp::audit(&file, &mdp::AuditOptions::default()).unwrap();
//! assert_eq!(report.verdict, Verdict::Pass);
//! ```

pub use mdp_audit::{
    audit, bounds, builtin, certificate, certified, dense, error, exact, io, loss, mechanism,
    metric, pin, pipe, privacy, progress, source, structured,
};

pub mod atomic;
pub mod benders;
pub mod calibrate;
pub mod experiment;
pub mod heap;
pub mod import;
pub mod large;
pub mod lp;
pub mod measure;
pub mod mechanisms;
pub mod outputs;
pub mod planar_laplace;
pub mod plot;
pub mod privatize;
pub mod produce;
pub mod quadrature;
pub mod remap;
pub mod user_level;

pub use audit::{Options as AuditOptions, Report, Verdict};
pub use certified::{Certified, CertifyError};
pub use error::InputError;
pub use exact::{parse_rational, Q};
pub use io::{read_mechanism, Limits, MechanismFile};
pub use lp::Solver;
pub use mechanism::{Matrix, Outputs};
pub use metric::{MetricKind, Space};
pub use privatize::{load_gated, Sampler};
pub use produce::{produce, Family, ProduceError, Produced, Request};
pub use progress::{Console, Progress, Silent};
