//! Mechanism families, one module each, named after the papers.

pub mod constopt;
pub mod exponential;
pub mod optimal;
pub mod spanner;
