//! The one reporting interface (`mdp::progress`): the audit and the LP producers report
//! their long phases through it, balanced (every phase started is finished) and with
//! the counts the report states.

use mdp::audit::{self, Options, Verdict};
use mdp::exact::Q;
use mdp::io::{self, Limits};
use mdp::lp::Solver;
use mdp::mechanisms::optimal;
use mdp::metric::{MetricKind, Space};
use mdp::progress::Progress;
use mdp::progress::Round;
use std::sync::Mutex;

/// Records every report.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl Progress for Recorder {
    fn start(&self, phase: &str, total: Option<u64>) {
        self.0
            .lock()
            .unwrap()
            .push(format!("start {phase} {total:?}"));
    }
    fn advance(&self, steps: u64) {
        self.0.lock().unwrap().push(format!("advance {steps}"));
    }
    fn finish(&self, summary: &str) {
        self.0.lock().unwrap().push(format!("finish {summary}"));
    }
    fn round(&self, r: &Round) {
        self.0.lock().unwrap().push(format!("round {}", r.round));
    }
}

impl Recorder {
    fn events(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

/// Phases nest at most one deep and every one started is finished.
fn balanced(events: &[String]) {
    let mut open = false;
    for e in events {
        if e.starts_with("start ") {
            assert!(!open, "phase started inside another: {events:#?}");
            open = true;
        } else if e.starts_with("finish ") {
            assert!(open, "finish without start: {events:#?}");
            open = false;
        } else if e.starts_with("advance ") {
            assert!(open, "advance outside a phase: {events:#?}");
        }
    }
    assert!(!open, "unfinished phase: {events:#?}");
}

#[test]
fn audit_reports_balanced_phases_and_counts_exact_pairs() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/corpus/pass/lp_optimal_planar20.json"
    );
    let bytes = std::fs::read(path).unwrap();
    let file = io::read_mechanism(&bytes, &Limits::default()).unwrap();
    let rec = Recorder::default();
    let report = audit::audit_with(&file, &Options::default(), &rec).unwrap();
    assert_eq!(report.verdict, Verdict::Pass);
    let ev = rec.events();
    balanced(&ev);
    for phase in [
        "audit: pure privacy",
        "audit: tight ε",
        "audit: lp_dual certificate",
    ] {
        assert!(
            ev.iter().any(|e| e.starts_with(&format!("start {phase}"))),
            "no phase {phase}: {ev:#?}"
        );
    }
    // One advance per pair of the exact fallback, as many as the report counts.
    let advanced = ev.iter().filter(|e| *e == "advance 1").count();
    assert_eq!(advanced, report.stats.exact_pairs_pure);
    // The same audit without a reporter gives the same report.
    let silent = audit::audit(&file, &Options::default()).unwrap();
    assert_eq!(silent.verdict, report.verdict);
    assert_eq!(silent.checks.len(), report.checks.len());
}

#[test]
fn lp_producer_reports_rounds_and_the_dual_proof() {
    let space = Space::from_points(
        MetricKind::Euclidean,
        (0..6).map(|i| vec![Q::from(i * i)]).collect(),
        None,
    )
    .unwrap();
    let rec = Recorder::default();
    let b = optimal::optimal(&space, &Q::from(1u32), Solver::Ipm, 4096, &rec).unwrap();
    assert!(b.certificate.is_some());
    let ev = rec.events();
    balanced(&ev);
    assert!(ev.iter().any(|e| e.starts_with("round ")), "{ev:#?}");
    assert!(
        ev.iter()
            .any(|e| e.starts_with("finish lp: dual certificate proves loss ≥")),
        "{ev:#?}"
    );
}
