//! Benders subproblems solved by a Python callable (`metricdp.distributed.benders` maps
//! them over Dask workers): the loop's batch goes out as JSON texts and comes back as
//! texts, read and checked by `mdp::benders::remote`. Workers call [`benders_subproblem`].

use crate::errors::{Error, Result};
use mdp::benders::remote::{self, SubJob, SubSolver};
use mdp::benders::sub::SubOutput;
use mdp::lp::LpError;
use pyo3::prelude::*;

/// A Python callable `f(list[str]) -> list[str]` (job texts to output texts, in order).
pub struct PyMap(pub Py<PyAny>);

impl SubSolver for PyMap {
    fn solve(&self, jobs: Vec<SubJob>) -> std::result::Result<Vec<SubOutput>, LpError> {
        let texts: Vec<String> = jobs.iter().map(remote::job_text).collect();
        let got: Vec<String> = Python::attach(|py| {
            self.0
                .call1(py, (texts,))
                .and_then(|r| r.extract::<Vec<String>>(py))
                .map_err(|e| LpError::Remote(e.to_string()))
        })?;
        remote::outputs_of(&got, &jobs)
    }
}

/// One Benders subproblem (a job's JSON text from the driver) solved here: its output's
/// JSON text. A malformed job is an `InputError`.
#[pyfunction]
pub fn benders_subproblem(py: Python<'_>, job: &str) -> Result<String> {
    py.detach(|| {
        remote::solve_text(job).map_err(|e| match e {
            LpError::Remote(m) => Error::input("job", m),
            e => Error::Solver(e.to_string()),
        })
    })
}
