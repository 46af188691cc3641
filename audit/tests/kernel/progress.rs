//! The kernel's reporting interface (`progress.rs`): `OnlyLong` forwards LP rounds, notes and
//! the summaries of phases that lasted at least its threshold, and nothing else (a producer's
//! own audit reports through it, so a build's log shows only what took time). The audit's
//! own phases are checked by the solver crate's `tests/progress.rs`.

use mdp_audit::progress::{OnlyLong, Progress, Round};
use std::sync::Mutex;

#[derive(Default)]
struct Record(Mutex<Vec<String>>);

impl Progress for Record {
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
    fn note(&self, line: &str) {
        self.0.lock().unwrap().push(format!("note {line}"));
    }
}

impl Record {
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[test]
fn only_long_phases_are_forwarded() {
    let rec = Record::default();
    let quick = OnlyLong::new(&rec, 3600.0);
    quick.start("audit: losses", Some(3));
    quick.advance(3);
    quick.finish("audit: losses (0.0 s)");
    assert!(rec.lines().is_empty(), "{:?}", rec.lines());
    quick.round(&Round {
        round: 7,
        rows: 10,
        added: 2,
        objective: 0.5,
        seconds: 0.1,
    });
    quick.note("fell back to the simplex");
    assert_eq!(
        rec.lines(),
        vec!["round 7", "note fell back to the simplex"]
    );
    let all = OnlyLong::new(&rec, 0.0);
    all.start("audit: tight ε", None);
    all.finish("audit: tight ε (0.0 s)");
    assert_eq!(rec.lines().last().unwrap(), "note audit: tight ε (0.0 s)");
    // A finish without a start forwards nothing.
    let n = rec.lines().len();
    all.finish("stray");
    assert_eq!(rec.lines().len(), n);
}
