//! The kernel's own tests (spec/architecture.md), one module per kernel module or binary
//! they test, in one test binary: each integration-test file is a binary of its own to build
//! and link, on both number backends in CI. Issue 55: `cargo mutants` on the kernel found
//! faults its suite did not notice (benches/reports/mutants.md); these modules kill them.

mod audit_checks;
mod blocks;
mod certificate;
mod cli;
mod container;
mod io_errors;
mod io_exact_matrix;
mod loss;
mod privacy;
mod progress;
mod space_load;
mod structured;

use mdp_audit::exact::Q;
use mdp_audit::metric::{MetricKind, Space};

/// Points on a line, with the manhattan metric: d(i, j) = |xs\[i\] − xs\[j\]|.
pub fn line(xs: &[i64]) -> Space {
    Space::from_points(
        MetricKind::Manhattan,
        xs.iter().map(|&x| vec![Q::from(x)]).collect(),
        None,
    )
    .unwrap()
}
