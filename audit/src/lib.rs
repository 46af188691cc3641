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
//! * [`io`]: the `mdp/1` file format (`spec/mechanism-format.md`), the large-mechanism
//!   container (`io::container`, `io::npy`) and the spaces users bring (`io::space`: CSV,
//!   GeoJSON, JSON, [`builtin`]) included;
//! * [`builtin`]: the embedded data sets;
//! * [`pin`]: the pipeline's metric pinned (a canonical form, its digest, the comparison);
//! * [`dense`]: float64 matrices (exact dyadics) with exact row sums;
//! * [`structured`]: the sub-quadratic exact audit of containers (edges of a graph, k-d
//!   box pairs of points; `spec/soundness.md` §7) and its column blocks;
//! * [`source`]: any `mdp/1` source (JSON or container) to its audit;
//! * [`privacy`]: pure ε·d privacy, tight ε, (ε,δ) tight ε (Imola et al. eqs. 2, 9, 10);
//! * [`loss`]: L(M), L_q, expected loss (eqs. 1, 3, 11);
//! * [`bounds`]: packing lower bounds (Theorem 3, eqs. 7, 8);
//! * [`certificate`]: the exact check of an `lp_dual` certificate (weak duality,
//!   `spec/lp.md` §5), which also carries the Benders bound;
//! * [`mod@audit`]: the `mdp-audit` checks and report;
//! * [`certified`]: a mechanism that passed its own audit (the only thing producers write);
//! * [`progress`]: the one reporting interface of long computations.
//!
//! ```
//! // A 2-point mechanism at ε = ln 3 per unit of distance, audited as mdp-audit does.
//! let text = br#"{"format": "mdp/1", "epsilon": 1.1,
//!   "metric": {"kind": "euclidean", "points": [[0], [1]]},
//!   "matrix": [[0.75, 0.25], [0.25, 0.75]]}"#;
//! let file = mdp_audit::read_mechanism(text, &mdp_audit::Limits::default()).unwrap();
//! let report = mdp_audit::audit(&file, &mdp_audit::AuditOptions::default()).unwrap();
//! assert_eq!(report.verdict, mdp_audit::Verdict::Pass);
//! ```

pub mod audit;
pub mod bounds;
pub mod builtin;
pub mod certificate;
pub mod certified;
pub mod dense;
pub mod error;
pub mod exact;
pub mod io;
pub mod loss;
pub mod mechanism;
pub mod metric;
pub mod pin;
pub mod pipe;
pub mod privacy;
pub mod progress;
pub mod source;
pub mod structured;

pub use audit::{audit, Options as AuditOptions, Report, Verdict};
pub use certified::Certified;
pub use exact::{parse_rational, Q};
pub use io::{read_mechanism, Limits, MechanismFile};
pub use mechanism::Matrix;
pub use metric::{MetricKind, Space};
