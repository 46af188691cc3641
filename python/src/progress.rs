//! Long calls from Python: the GIL released, progress forwarded to a Python callable, and
//! Ctrl-C (or an exception in the callable) stopping the computation.
//!
//! [`run`] computes on a scoped worker thread while the calling thread (the one Python
//! delivers signals to) waits, checking for a pending signal every [`CHECK_EVERY`]. The
//! library reports through [`mdp_audit::progress::Progress`] and never polls for cancellation:
//! once a stop is requested (Ctrl-C on the caller, or an exception raised by the
//! callable), every later report, on any thread, unwinds with [`Stopped`] as its payload
//! (`resume_unwind`: no panic message), rayon carries the unwind to the worker, and [`run`]
//! raises the stored exception. A computation stops at its next report: an LP round, an
//! audit phase's step.

use crate::errors::{Error, Result};
use mdp_audit::progress::{Progress, Round};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the caller checks for Ctrl-C, and the least interval between two `advance`
/// reports to the callable (the others' steps are added to the next one).
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// The unwind payload that stops a computation.
struct Stopped;

/// A [`Progress`] that forwards to `callback(event, phase, value)`:
/// `("start", phase, total or None)`, `("advance", phase, steps)`, `("finish", phase,
/// summary)`, `("round", "lp", {round, rows, added, objective, seconds})`, `("note", "",
/// line)`.
pub struct PyProgress {
    callback: Option<Py<PyAny>>,
    started: Instant,
    /// Nanoseconds after `started` of the last `advance` given to the callable.
    last_advance: AtomicU64,
    phase: Mutex<String>,
    /// Steps advanced and not yet reported.
    pending: AtomicU64,
    stop: AtomicBool,
    error: Mutex<Option<PyErr>>,
}

impl PyProgress {
    pub fn new(callback: Option<Py<PyAny>>) -> PyProgress {
        PyProgress {
            callback,
            started: Instant::now(),
            last_advance: AtomicU64::new(0),
            phase: Mutex::new(String::new()),
            pending: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    /// Ask the computation to stop at its next report, raising `e` to the caller.
    fn request_stop(&self, e: PyErr) {
        if let Ok(mut slot) = self.error.lock() {
            slot.get_or_insert(e);
        }
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Unwind if a stop was requested; else give the event to the callable (`advance`
    /// events at most every [`CHECK_EVERY`]).
    fn report(&self, event: &str, value: impl FnOnce(Python<'_>) -> Py<PyAny>, throttled: bool) {
        if self.stop.load(Ordering::Relaxed) {
            panic::resume_unwind(Box::new(Stopped));
        }
        let Some(cb) = self.callback.as_ref() else {
            return;
        };
        if throttled {
            let now = self.started.elapsed().as_nanos() as u64;
            let last = self.last_advance.load(Ordering::Relaxed);
            if now.saturating_sub(last) < CHECK_EVERY.as_nanos() as u64 {
                return;
            }
            self.last_advance.store(now, Ordering::Relaxed);
        }
        let phase = self.phase.lock().map(|p| p.clone()).unwrap_or_default();
        if let Err(e) = Python::attach(|py| cb.call1(py, (event, phase, value(py))).map(drop)) {
            self.request_stop(e);
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
            true,
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
            false,
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

/// Run `f` with the GIL released, on a worker thread, reporting to `callback`; Ctrl-C
/// (checked by the calling thread every [`CHECK_EVERY`]) or an exception raised by
/// `callback` stops it and is raised here.
pub fn run<T: Send>(
    py: Python<'_>,
    callback: Option<Py<PyAny>>,
    f: impl FnOnce(&PyProgress) -> Result<T> + Send,
) -> Result<T> {
    let progress = PyProgress::new(callback);
    let out = py.detach(|| {
        let caller = std::thread::current();
        let done = AtomicBool::new(false);
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let r = panic::catch_unwind(AssertUnwindSafe(|| f(&progress)));
                done.store(true, Ordering::Release);
                caller.unpark();
                r
            });
            // `done` (not the thread's end, which follows it) decides: an unpark that
            // arrives before the park is kept as a token, so the wait ends at once.
            while !done.load(Ordering::Acquire) {
                std::thread::park_timeout(CHECK_EVERY);
                if done.load(Ordering::Acquire) {
                    break;
                }
                if let Err(e) = Python::attach(|py| py.check_signals()) {
                    progress.request_stop(e);
                }
            }
            worker.join().unwrap_or_else(Err)
        })
    });
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
