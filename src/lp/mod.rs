//! The LP engine's front door (`spec/lp.md`, `spec/architecture.md`): privacy LPs
//! assembled with directed rounding ([`model`]), the float solvers that find candidates
//! (Clarabel's interior point with lazy rows, [`ipm`]; the structured interior point,
//! [`block_ipm`], and its localized form, [`local`]; the block-angular interior point of
//! ConstOPTMech, [`block_angular`]; microlp's simplex, [`simplex`]), the choice among them
//! ([`Solver`]; `auto` resolved for OPTMech and PMO by [`Solver::resolve`]), the exact repair of
//! their primal ([`repair`]) and the certified pipeline every LP family shares
//! ([`certified`]: solve → repair → prove the dual → the caller's self-audit), and MPS
//! export ([`mps`]). Floats find answers; exact rationals prove them: the dual certificate
//! is checked by the kernel, [`crate::certificate`].
//!
//! What callers need is re-exported here: the solutions ([`Primal`], [`Dual`], [`Row`],
//! [`Round`]), the solver choice and the pipeline ([`Solver`], [`certified`], [`Built`],
//! [`BuildError`], [`TARGET_GAP`]).

pub mod block_angular;
pub mod block_ipm;
pub mod compact;
pub mod error;
pub mod ipm;
pub mod local;
pub mod model;
pub mod mps;
pub mod pipeline;
pub mod repair;
pub mod simplex;
pub mod solution;
pub mod solver;
pub mod sparse;
pub mod support;
mod used;
mod vector;

pub use crate::progress::Round;
pub use error::{invalid, BuildError, LpError};
pub use pipeline::{certified, lp_dual_of, Built, TARGET_GAP};
pub use solution::{Dual, Primal, Row};
pub use solver::{memory_need, LpKind, Solver};
