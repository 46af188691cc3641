//! The kernel's own tests of its verdict paths, one module per kernel module they test, in
//! one test binary (each integration-test file is a binary of its own to build and link, on
//! both number backends in CI). Written for issue 55: `cargo mutants` on these modules found
//! faults the kernel's suite did not notice (benches/reports/mutants.md).

mod audit_checks;
mod blocks;
mod io_errors;
mod loss;
mod privacy;
mod progress;
