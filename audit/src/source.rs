//! An `mdp/1` source audited whatever its form: a JSON file (or standard input, `-`) by
//! the exhaustive audit ([`crate::audit::audit_with`]), a large-mechanism container (a header whose
//! `matrix` names a `.npy` file) by the structured audit ([`crate::structured::report`]).
//! The one entry point of `mdp-audit` and of the Python package's `audit(path)`.

use crate::audit::{audit_with, Options, Report};
use crate::io::{self, container, input_error, InputError, Limits};
use crate::progress::Progress;

/// Read `path` under `limits` and audit it under `opts`; a container's audit may plan at
/// most `max_memory` bytes (checked before its matrix is read).
pub fn audit_path(
    path: &str,
    limits: &Limits,
    max_memory: u64,
    opts: &Options,
    progress: &dyn Progress,
) -> Result<Report, InputError> {
    let bytes = io::read_source(path, limits)?;
    let doc = io::parse_json(&bytes)?;
    if container::is_container(&doc) {
        if path == "-" {
            return Err(input_error(
                "$",
                "a container (matrix in a .npy file) is read from its header file, not standard input",
            ));
        }
        let c = container::read(
            std::path::Path::new(path),
            &doc,
            limits,
            max_memory,
            progress,
        )?;
        return crate::structured::report::audit_container(&c, opts, progress);
    }
    let file = io::mechanism_from_value(&doc, limits)?;
    audit_with(&file, opts, progress)
}
