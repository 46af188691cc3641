//! Why a float LP solve, or the certified pipeline around it, produced nothing. No variant
//! is a wrong answer: a solver that fails returns no candidate, and the caller falls back
//! (a lower cap on the constants, another solver) or reports it (`mdp` exits 4). The
//! messages speak of the LP and its settings, never of command-line flags; the `mdp`
//! binary adds those.

/// A float solver failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LpError {
    /// Clarabel could not be set up, or stopped with this status.
    #[error("LP solver: clarabel: {0}")]
    Clarabel(String),
    /// microlp failed with this message.
    #[error("LP solver: microlp: {0}")]
    Microlp(String),
    /// A solve was interrupted before it finished.
    #[error("LP solver: interrupted")]
    Interrupted,
    /// The LP's form is outside what the solver supports (what).
    #[error("LP solver: {0}")]
    Unsupported(String),
    /// The structured interior point holds every privacy row: more than its limit
    /// (`block_ipm::MAX_ROWS`); `gib` is the estimated memory.
    #[error("LP solver: the structured interior point holds every privacy row ({rows} here, about {gib} GB): above its limit of {limit} rows")]
    RowLimit { rows: u64, limit: u64, gib: u64 },
    /// An interior point stopped short of its tolerances (where, gap, iteration).
    #[error("LP solver: {0}")]
    Stopped(String),
    /// Numerical breakdown: a block not positive definite, a singular or non-finite
    /// system, a non-finite iterate (what broke).
    #[error("LP solver: {0}")]
    Numerical(String),
    /// The localized LP did not apply and the whole LP's lazy rows need more memory than
    /// the budget (both in MiB): refused before it is built.
    #[error("LP solver: the localized LP does not apply here (neighbourhoods too large) and the whole LP needs about {need_mib} MiB, over the memory budget of {budget_mib} MiB")]
    OverMemory { need_mib: u64, budget_mib: u64 },
    /// A subproblem solved elsewhere (a cluster's task) failed or came back malformed
    /// (`benders::remote`): always the build's error, never a reason to stop quietly.
    #[error("subproblems elsewhere: {0}")]
    Remote(String),
}

/// Why an LP mechanism was not built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// A parameter out of its domain; `field` is its name (`k`, `prior`, `outputs`).
    #[error("{field}: {message}")]
    Invalid { field: String, message: String },
    /// The float solver failed, after its fallbacks (`context`: which LP, e.g. `benders`).
    #[error("{context}{err}", context = context.map_or(String::new(), |c| format!("{c}: ")))]
    Lp {
        context: Option<&'static str>,
        err: LpError,
    },
    /// No uniform mix up to the limit makes the float candidate pass the exact check.
    #[error("exact repair failed: no uniform mix up to the limit passes the exact check")]
    Repair,
    /// The kernel rejected the certificate this build produced (a bug, never a pass).
    #[error("own certificate rejected: {0}")]
    CertificateRejected(String),
    /// SpannerMech: the greedy spanner's stretch could not be proven at this pair.
    #[error("spanner stretch ≤ {stretch} not proven at pair ({u}, {v})")]
    StretchUnproven { stretch: f64, u: usize, v: usize },
    /// Benders found no feasible incumbent within its iteration limit.
    #[error("benders: no feasible incumbent after {iterations} iterations")]
    NoIncumbent { iterations: usize },
}

impl From<LpError> for BuildError {
    fn from(err: LpError) -> Self {
        BuildError::Lp { context: None, err }
    }
}

/// A [`BuildError::Invalid`].
pub fn invalid(field: &str, message: impl Into<String>) -> BuildError {
    BuildError::Invalid {
        field: field.into(),
        message: message.into(),
    }
}
