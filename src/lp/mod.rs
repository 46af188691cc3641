//! The LP engine (issue 3): privacy LPs assembled with directed rounding ([`model`]),
//! a floating-point simplex with lazy rows ([`simplex`], microlp), the exact repair of
//! its primal ([`repair`]), the exactly checked dual certificate ([`certificate`]) and
//! MPS export ([`mps`]). Floats find answers; exact rationals prove them
//! (`spec/lp.md`).

pub mod certificate;
pub mod model;
pub mod mps;
pub mod repair;
pub mod simplex;
