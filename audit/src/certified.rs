//! [`Certified`]: a mechanism document that passed its own audit, the only thing our
//! producers write (`spec/threat-model.md` §1: producers audit under the scope they were
//! asked for).
//!
//! A `Certified` cannot be made any other way than by [`Certified::certify`], which reads
//! the document back as any peer's file would be read (under `mdp-audit`'s default
//! limits, so what we write the auditor accepts) and audits it with the scope policy
//! [`ScopePolicy::exactly`] the file claims. A failing audit returns the report inside
//! the error, never a value that could be written.

use crate::audit::{self, Options, Report, ScopePolicy, Verdict};
use crate::error::InputError;
use crate::io::{self, Limits, MechanismFile};
use crate::mechanism::Matrix;
use crate::progress::Progress;
use thiserror::Error;

/// Why a document could not be certified.
#[derive(Debug, Error)]
pub enum CertifyError {
    /// The serialized document exceeds `mdp-audit`'s default `--max-bytes`.
    #[error("the file would be {bytes} bytes, over mdp-audit's default --max-bytes {max}")]
    TooLarge { bytes: u64, max: u64 },
    /// The document does not parse under `mdp-audit`'s default limits.
    #[error("the file would exceed mdp-audit's default limits ({0})")]
    Unreadable(InputError),
    /// The audit refused the document as input (a budget past its default).
    #[error("{0}")]
    Audit(InputError),
    /// The audit did not pass; its report says why.
    #[error("the mechanism did not pass its own audit")]
    NotPrivate(Box<Report>),
}

/// A mechanism that passed its audit: the `mdp/1` text, the parsed file (matrix,
/// metric, claim, certificates) and the audit report.
#[derive(Debug)]
pub struct Certified {
    text: String,
    file: MechanismFile,
    report: Report,
}

impl Certified {
    /// Serialize `document`, read it back under [`Limits::default`] and audit it under the
    /// scope it claims ([`ScopePolicy::exactly`]); only a pass is returned.
    pub fn certify(
        document: &serde_json::Value,
        progress: &dyn Progress,
    ) -> Result<Certified, CertifyError> {
        Self::certify_within(document, &Limits::default(), progress)
    }

    /// [`Certified::certify`] under the reader's `limits` (a producer whose space was
    /// admitted past the default `--max-entries` reads its own file back the same way; a
    /// reader then needs that flag too).
    pub fn certify_within(
        document: &serde_json::Value,
        limits: &Limits,
        progress: &dyn Progress,
    ) -> Result<Certified, CertifyError> {
        let text = document.to_string();
        let limits = *limits;
        if text.len() as u64 > limits.max_bytes {
            return Err(CertifyError::TooLarge {
                bytes: text.len() as u64,
                max: limits.max_bytes,
            });
        }
        let file =
            io::read_mechanism(text.as_bytes(), &limits).map_err(CertifyError::Unreadable)?;
        let opts = Options {
            scope: ScopePolicy::exactly(file.within.as_ref()),
            ..Options::default()
        };
        let report = audit::audit_with(&file, &opts, progress).map_err(CertifyError::Audit)?;
        if report.verdict != Verdict::Pass {
            return Err(CertifyError::NotPrivate(Box::new(report)));
        }
        Ok(Certified { text, file, report })
    }

    /// The passing audit report.
    pub fn report(&self) -> &Report {
        &self.report
    }

    /// The parsed file: matrix, metric, claimed ε and scope, certificates.
    pub fn file(&self) -> &MechanismFile {
        &self.file
    }

    /// The mechanism's matrix (rows = inputs).
    pub fn matrix(&self) -> &Matrix {
        &self.file.matrix
    }

    /// The `mdp/1` document, exactly as audited (one line of JSON).
    pub fn to_json(&self) -> &str {
        &self.text
    }

    /// Write the audited document and a newline.
    pub fn write_to(&self, w: &mut dyn std::io::Write) -> std::io::Result<()> {
        w.write_all(self.text.as_bytes())?;
        w.write_all(b"\n")
    }
}
