//! The library's typed errors (`thiserror`). Each names the field it concerns, as a JSON
//! path of the input (`matrix[3][7]`, `metric.points[2]`) or a parameter name (`k`,
//! `prior[4]`); the command-line tools map each kind to an exit code in one place.

use thiserror::Error;

/// A malformed input: the path of the field and the problem, printed as `path: problem`.
///
/// Used by every reader of user data: the `mdp/1` format, metric spaces (with a path
/// relative to the metric object, prefixed by the caller), imports and certificates.
#[derive(Clone, Debug, PartialEq, Error)]
#[error("{}", self.shown())]
pub struct InputError {
    pub path: String,
    pub message: String,
}

impl InputError {
    /// `path: message`, or the message alone for the whole input (`$`): no stray `$:`.
    fn shown(&self) -> String {
        if self.path == "$" || self.path.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.path, self.message)
        }
    }

    /// The same problem with `prefix` before the path (`prefix.path`, or `prefix` alone
    /// when the path is empty).
    pub fn within(self, prefix: &str, separator: &str) -> InputError {
        let path = if self.path.is_empty() {
            prefix.to_string()
        } else {
            format!("{prefix}{separator}{}", self.path)
        };
        InputError { path, ..self }
    }
}

/// An [`InputError`] from its parts.
pub fn input_error(path: impl Into<String>, message: impl Into<String>) -> InputError {
    InputError {
        path: path.into(),
        message: message.into(),
    }
}
