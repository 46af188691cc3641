//! The library's typed errors as the Python package's exceptions (`metricdp.errors`):
//! `InputError(field, message)`, `NotPrivate(report)`, `Inconclusive(report)`,
//! `SolverError(message)`. The field paths are the library's, the same the command line
//! prints (`prior[3]`, `matrix[2][7]`).

use mdp::produce::ProduceError;
use mdp_audit::audit::{self, Report, Verdict};
use mdp_audit::certified::CertifyError;
use mdp_audit::error::InputError;
use pyo3::prelude::*;

/// An error on its way to Python.
pub enum Error {
    /// A malformed input or a parameter out of its domain: its field path and the problem.
    Input { field: String, message: String },
    /// The audit did not pass (verdict fail or inconclusive): the report says why.
    Audit(Box<Report>),
    /// Not private, known without an audit report (a repair that would move too much).
    Refused(String),
    /// A float solver, the exact repair or a certificate failed.
    Solver(String),
    /// A Python exception already raised (Ctrl-C, a progress callback's own error).
    Python(PyErr),
}

impl Error {
    pub fn input(field: impl Into<String>, message: impl Into<String>) -> Error {
        Error::Input {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl From<InputError> for Error {
    fn from(e: InputError) -> Self {
        Error::Input {
            field: e.path,
            message: e.message,
        }
    }
}

impl From<mdp::user_level::UserLevelError> for Error {
    fn from(e: mdp::user_level::UserLevelError) -> Self {
        match e {
            mdp::user_level::UserLevelError::Invalid { field, message } => {
                Error::Input { field, message }
            }
            e => Error::input("budget", e.to_string()),
        }
    }
}

impl From<PyErr> for Error {
    fn from(e: PyErr) -> Self {
        Error::Python(e)
    }
}

impl From<CertifyError> for Error {
    fn from(e: CertifyError) -> Self {
        match e {
            CertifyError::NotPrivate(report) => Error::Audit(report),
            CertifyError::Unreadable(e) | CertifyError::Audit(e) => e.into(),
            e @ CertifyError::TooLarge { .. } => Error::input("$", e.to_string()),
        }
    }
}

impl From<ProduceError> for Error {
    fn from(e: ProduceError) -> Self {
        match e {
            ProduceError::Invalid { field, message } => Error::Input { field, message },
            ProduceError::LpMemory(m) => {
                Error::input("max_memory", m.message("the block solver", "max_memory"))
            }
            ProduceError::Certify(c) => c.into(),
            e @ ProduceError::Build(_) => Error::Solver(e.to_string()),
        }
    }
}

impl From<Error> for PyErr {
    fn from(e: Error) -> PyErr {
        Python::attach(|py| match e {
            Error::Python(err) => err,
            Error::Input { field, message } => raise(py, "InputError", (field, message)),
            Error::Solver(message) => raise(py, "SolverError", (message,)),
            Error::Refused(message) => raise(py, "NotPrivate", (py.None(), message)),
            Error::Audit(report) => {
                let class = match report.verdict {
                    Verdict::Inconclusive => "Inconclusive",
                    _ => "NotPrivate",
                };
                raise(py, class, (audit::json(&report), audit::human(&report)))
            }
        })
    }
}

/// An instance of `metricdp.errors.<class>(*args)` as the error to raise.
fn raise<'py, A: pyo3::call::PyCallArgs<'py>>(py: Python<'py>, class: &str, args: A) -> PyErr {
    let made = py
        .import("metricdp.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1(args));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

pub type Result<T> = std::result::Result<T, Error>;
