//! `metricdp._core`: the Python binding of the `mdp` library (spec/python.md).
//!
//! This layer only converts: Python values in (numpy arrays, strings, numbers as exact
//! decimal strings), library calls, Python values out (numpy arrays, JSON text the Python
//! package turns into objects). Every decision (privacy, certificates, sampling) is the
//! library's. Long calls release the GIL (`progress::run`) and report through `progress::PyProgress`,
//! which also lets Ctrl-C stop them.

use pyo3::prelude::*;

mod blocks;
mod errors;
mod mechanism;
mod progress;
mod remote;
mod space;
mod tools;
mod user;

pub use errors::Error;

/// The extension module.
#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<space::Space>()?;
    m.add_function(wrap_pyfunction!(space::snap, m)?)?;
    m.add_class::<mechanism::Mechanism>()?;
    m.add_function(wrap_pyfunction!(mechanism::build, m)?)?;
    m.add_function(wrap_pyfunction!(mechanism::load, m)?)?;
    m.add_function(wrap_pyfunction!(tools::audit_file, m)?)?;
    m.add_function(wrap_pyfunction!(tools::audit_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(tools::import_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(tools::repair_matrix, m)?)?;
    m.add_function(wrap_pyfunction!(user::emd, m)?)?;
    m.add_function(wrap_pyfunction!(user::account_item_wise, m)?)?;
    m.add_function(wrap_pyfunction!(user::release_linear, m)?)?;
    m.add_function(wrap_pyfunction!(user::release_item_wise, m)?)?;
    m.add_function(wrap_pyfunction!(user::release_freq, m)?)?;
    m.add_function(wrap_pyfunction!(remote::benders_subproblem, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::container_shape, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::container_metric, m)?)?;
    m.add_function(wrap_pyfunction!(tools::measure, m)?)?;
    m.add_function(wrap_pyfunction!(tools::remap, m)?)?;
    m.add_function(wrap_pyfunction!(tools::planar_laplace, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::block_sums, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::add_sums, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::audit_block, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::combine_blocks, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::write_container, m)?)?;
    m.add_function(wrap_pyfunction!(blocks::privatize_container, m)?)?;
    Ok(())
}
