//! The `mdp` crate's integration tests, as one binary: each module was a file of its own
//! under `tests/`, and so a binary of its own, built and linked against the whole crate
//! (21 binaries; one builds in 205 s instead of 227 s after a change to the library,
//! benches/reports/ci_timing.md). `common` holds the modules' shared helpers.

mod benders;
mod cli_build;
mod cli_suite;
#[allow(dead_code)]
mod common;
mod constopt;
mod geo_families;
mod hostile_input;
mod import;
mod large;
mod lp;
mod measure;
mod mechanisms;
mod metric_pin;
mod planar_laplace;
mod progress;
mod properties;
mod readme_commands;
mod records;
mod reproducible;
mod safe_default;
mod shuffle_accountant;
mod user_level;
