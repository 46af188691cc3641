//! Long calls from Python: the GIL released, progress forwarded to a Python callable, and
//! Ctrl-C (or an exception in the callable) stopping the computation.
//!
//! The library reports through [`mdp::progress::Progress`] and never polls for
//! cancellation. [`PyProgress`] checks for a pending signal (on the calling thread, at most
//! every [`CHECK_EVERY`]) at each report; once one is pending, every later report, on any
//! thread, unwinds with [`Stopped`] as its payload (`resume_unwind`: no panic message),
//! rayon carries the unwind to the caller, and [`run`] turns it back into the Python
//! exception. A computation stops at its next report: an LP round, an audit phase's step.

use crate::errors::{Error, Result};
use mdp::progress::{Progress, Round};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::thread::{self, ThreadId};
use std::time::Instant;

/// How often (at most) a report takes the GIL to check for Ctrl-C when there is no
/// callable to call.
const CHECK_EVERY: std::time::Duration = std::time::Duration::from_millis(100);

/// The unwind payload that stops a computation.
struct Stopped;

/// A [`Progress`] that forwards to `callback(event, phase, value)`:
/// `("start", phase, total or None)`, `("advance", phase, steps)`, `("finish", phase,
/// summary)`, `("round", "lp", {round, rows, added, objective, seconds})`, `("note", "",
/// line)`.
pub struct PyProgress {
    callback: Option<Py<PyAny>>,
    /// The thread Python called from: the only one where signals are delivered.
    caller: ThreadId,
    started: Instant,
    /// Nanoseconds after `started` of the last signal check.
    last_check: AtomicU64,
    phase: Mutex<String>,
    /// Steps advanced and not yet reported (reports from other threads are throttled).
    pending: AtomicU64,
    stop: AtomicBool,
    error: Mutex<Option<PyErr>>,
}

impl PyProgress {
    pub fn new(callback: Option<Py<PyAny>>) -> PyProgress {
        PyProgress {
            callback,
            caller: thread::current().id(),
            started: Instant::now(),
            last_check: AtomicU64::new(0),
            phase: Mutex::new(String::new()),
            pending: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    /// Unwind if the computation is to stop; else call the callable (every report from the
    /// calling thread, throttled ones from others are dropped) and check for Ctrl-C.
    fn report(&self, event: &str, value: impl FnOnce(Python<'_>) -> Py<PyAny>, force: bool) {
        if self.stop.load(Ordering::Relaxed) {
            panic::resume_unwind(Box::new(Stopped));
        }
        let now = self.started.elapsed().as_nanos() as u64;
        let last = self.last_check.load(Ordering::Relaxed);
        let due = now.saturating_sub(last) >= CHECK_EVERY.as_nanos() as u64;
        let on_caller = thread::current().id() == self.caller;
        if !(force || due) || (self.callback.is_none() && !on_caller) {
            return;
        }
        self.last_check.store(now, Ordering::Relaxed);
        let failed = Python::attach(|py| -> Option<PyErr> {
            if on_caller {
                if let Err(e) = py.check_signals() {
                    return Some(e);
                }
            }
            let cb = self.callback.as_ref()?;
            let phase = self.phase.lock().map(|p| p.clone()).unwrap_or_default();
            cb.call1(py, (event, phase, value(py))).err()
        });
        if let Some(e) = failed {
            if let Ok(mut slot) = self.error.lock() {
                slot.get_or_insert(e);
            }
            self.stop.store(true, Ordering::Relaxed);
            panic::resume_unwind(Box::new(Stopped));
        }
    }
}

impl Progress for PyProgress {
    fn start(&self, phase: &str, total: Option<u64>) {
        if let Ok(mut p) = self.phase.lock() {
            *p = phase.to_string();
        }
        self.report(
            "start",
            |py| total.into_pyobject(py).unwrap().unbind(),
            true,
        );
    }

    fn advance(&self, steps: u64) {
        self.pending.fetch_add(steps, Ordering::Relaxed);
        self.report(
            "advance",
            |py| {
                let steps = self.pending.swap(0, Ordering::Relaxed);
                steps.into_pyobject(py).unwrap().into_any().unbind()
            },
            false,
        );
    }

    fn finish(&self, summary: &str) {
        self.report(
            "finish",
            |py| summary.into_pyobject(py).unwrap().into_any().unbind(),
            true,
        );
    }

    fn round(&self, r: &Round) {
        self.report(
            "round",
            |py| {
                let d = PyDict::new(py);
                let _ = d.set_item("round", r.round);
                let _ = d.set_item("rows", r.rows);
                let _ = d.set_item("added", r.added);
                let _ = d.set_item("objective", r.objective);
                let _ = d.set_item("seconds", r.seconds);
                d.into_any().unbind()
            },
            true,
        );
    }

    fn note(&self, line: &str) {
        self.report(
            "note",
            |py| line.into_pyobject(py).unwrap().into_any().unbind(),
            true,
        );
    }
}

/// Run `f` with the GIL released, reporting to `callback`; Ctrl-C or an exception raised
/// by `callback` stops it and is raised again here.
pub fn run<T: Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    f: impl FnOnce(&PyProgress) -> Result<T> + Send,
) -> Result<T> {
    let progress = PyProgress::new(callback);
    let out = py.detach(|| panic::catch_unwind(AssertUnwindSafe(|| f(&progress))));
    match out {
        Ok(r) => r,
        Err(payload) if payload.is::<Stopped>() => {
            let e = progress.error.lock().ok().and_then(|mut s| s.take());
            Err(Error::Python(e.unwrap_or_else(|| {
                pyo3::exceptions::PyKeyboardInterrupt::new_err("stopped")
            })))
        }
        Err(payload) => {
            let what = payload
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "a panic".into());
            Err(Error::Solver(format!(
                "internal error (a bug, please report): {what}"
            )))
        }
    }
}
