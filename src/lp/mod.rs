//! The LP engine (issue 3): privacy LPs assembled with directed rounding ([`model`]),
//! floating-point solvers with lazy rows (an interior point method, [`ipm`], Clarabel,
//! the default; and a simplex, [`simplex`], microlp), the exact repair of their primal ([`repair`]) and
//! MPS export ([`mps`]). Floats find answers; exact rationals prove them
//! (`spec/lp.md`); the dual certificate is checked by the kernel, [`crate::certificate`].

pub mod block_angular;
pub mod block_ipm;
pub mod ipm;
pub mod local;
pub mod model;
pub mod mps;
pub mod repair;
pub mod simplex;
pub mod sparse;
pub mod support;
mod used;
mod vector;
