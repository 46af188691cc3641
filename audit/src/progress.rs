//! The one reporting interface of the library: long computations (LP solves, the dual
//! certificate's exact proof, the audit's phases) report through a [`Progress`] the caller
//! passes; the library itself never prints. The CLI renders it as progress bars on a
//! terminal and as plain lines otherwise; tests and library users who want silence pass
//! [`Silent`].
//!
//! Methods take `&self` and the trait is `Sync`, so parallel loops can advance a phase.

/// Progress of a lazy or iterative LP solve, reported once per round (cutting-plane round or
/// interior point iteration).
#[derive(Clone, Debug)]
pub struct Round {
    pub round: usize,
    pub rows: usize,
    pub added: usize,
    pub objective: f64,
    pub seconds: f64,
}

/// Receives progress reports. Every method has an empty default.
pub trait Progress: Sync {
    /// A phase starts; `total` is its number of steps when known.
    fn start(&self, _phase: &str, _total: Option<u64>) {}
    /// `steps` more steps of the current phase are done.
    fn advance(&self, _steps: u64) {}
    /// The current phase ended; `summary` says what it found.
    fn finish(&self, _summary: &str) {}
    /// One round of an LP solve (cutting planes or interior point iterations).
    fn round(&self, _round: &Round) {}
    /// A one-line message a user should see (a fallback taken, a limit reached).
    fn note(&self, _line: &str) {}
}

/// Reports nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Progress for Silent {}

/// Renders progress on standard error for a person or a log: on a terminal, a bar per phase
/// (a spinner when its length is unknown) and the summary when it ends; otherwise plain
/// lines, only for phases that last at least `min_seconds` (a line every 10 s while one
/// runs, and its summary). LP rounds and notes are always printed. `quiet` prints nothing.
pub struct Console {
    quiet: bool,
    min_seconds: f64,
    bar_style: bool,
    state: std::sync::Mutex<Option<Phase>>,
}

struct Phase {
    name: String,
    total: Option<u64>,
    done: u64,
    started: std::time::Instant,
    printed: std::time::Instant,
    bar: Option<indicatif::ProgressBar>,
}

/// Seconds between two plain progress lines of one phase.
const LINE_EVERY: f64 = 10.0;

impl Console {
    /// A renderer that draws bars when standard error is a terminal.
    pub fn new(quiet: bool, min_seconds: f64) -> Self {
        use std::io::IsTerminal;
        Console {
            quiet,
            min_seconds,
            bar_style: std::io::stderr().is_terminal(),
            state: std::sync::Mutex::new(None),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Option<Phase>) -> R) -> R {
        // A poisoned lock only means another thread panicked while reporting.
        let mut g = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }
}

impl Progress for Console {
    fn start(&self, phase: &str, total: Option<u64>) {
        if self.quiet {
            return;
        }
        let now = std::time::Instant::now();
        let bar = self.bar_style.then(|| {
            let b = match total {
                Some(t) => indicatif::ProgressBar::new(t).with_style(
                    indicatif::ProgressStyle::with_template(
                        "{msg} [{bar:30}] {pos}/{len} ({elapsed}, eta {eta})",
                    )
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                    .progress_chars("=> "),
                ),
                None => indicatif::ProgressBar::new_spinner(),
            };
            b.set_message(phase.to_string());
            b.enable_steady_tick(std::time::Duration::from_millis(200));
            b
        });
        if !self.bar_style && self.min_seconds <= 0.0 {
            eprintln!("{phase}…");
        }
        self.with(|s| {
            *s = Some(Phase {
                name: phase.to_string(),
                total,
                done: 0,
                started: now,
                printed: now,
                bar,
            })
        });
    }

    fn advance(&self, steps: u64) {
        if self.quiet {
            return;
        }
        self.with(|s| {
            let Some(p) = s else { return };
            p.done += steps;
            if let Some(b) = &p.bar {
                b.inc(steps);
                return;
            }
            let since = p.printed.elapsed().as_secs_f64();
            if p.started.elapsed().as_secs_f64() >= self.min_seconds.max(LINE_EVERY)
                && since >= LINE_EVERY
            {
                p.printed = std::time::Instant::now();
                let of = p.total.map(|t| format!("/{t}")).unwrap_or_default();
                eprintln!(
                    "{}: {}{of} ({:.0} s)",
                    p.name,
                    p.done,
                    p.started.elapsed().as_secs_f64()
                );
            }
        });
    }

    fn finish(&self, summary: &str) {
        if self.quiet {
            return;
        }
        let show = self.with(|s| match s.take() {
            Some(p) => {
                if let Some(b) = p.bar {
                    b.finish_and_clear();
                }
                p.started.elapsed().as_secs_f64() >= self.min_seconds
            }
            None => true,
        });
        if show {
            eprintln!("{summary}");
        }
    }

    fn round(&self, r: &Round) {
        self.note(&format!(
            "lp: round {:>3}: {:>8} rows (+{:>6} violated), objective {:.12}, {:.2} s",
            r.round, r.rows, r.added, r.objective, r.seconds
        ));
    }

    fn note(&self, line: &str) {
        if self.quiet {
            return;
        }
        self.with(|s| match s.as_ref().and_then(|p| p.bar.as_ref()) {
            Some(b) => b.println(line),
            None => eprintln!("{line}"),
        });
    }
}

/// Forwards LP rounds, notes and the summary of a phase that lasted at least
/// `min_seconds`, and nothing else: a producer's own audit (many phases, nearly always
/// quick) reports through it, so a build's log shows only what took time.
pub struct OnlyLong<'a> {
    inner: &'a dyn Progress,
    min_seconds: f64,
    started: std::sync::Mutex<Option<std::time::Instant>>,
}

impl<'a> OnlyLong<'a> {
    pub fn new(inner: &'a dyn Progress, min_seconds: f64) -> Self {
        OnlyLong {
            inner,
            min_seconds,
            started: std::sync::Mutex::new(None),
        }
    }
}

impl Progress for OnlyLong<'_> {
    fn start(&self, _phase: &str, _total: Option<u64>) {
        *self.started.lock().unwrap_or_else(|e| e.into_inner()) = Some(std::time::Instant::now());
    }
    fn finish(&self, summary: &str) {
        let t = self
            .started
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if t.is_some_and(|t| t.elapsed().as_secs_f64() >= self.min_seconds) {
            self.inner.note(summary);
        }
    }
    fn round(&self, r: &Round) {
        self.inner.round(r);
    }
    fn note(&self, line: &str) {
        self.inner.note(line);
    }
}
