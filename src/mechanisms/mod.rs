//! Mechanism families, one module each, named after the papers.

pub mod constopt;
pub mod exponential;
pub mod geometric;
pub mod madlib;
pub mod optimal;
pub mod planar_geometric_grid;
pub mod planar_laplace_grid;
pub mod randomized_response;
pub mod spanner;
pub mod tem;
