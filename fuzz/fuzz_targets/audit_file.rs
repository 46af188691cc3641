//! Fuzz the `mdp/1` reader and the whole auditor: any byte string must give an input error
//! or a report, never a panic, and a report's verdict must be consistent with its checks.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp_audit::audit::{audit, Options, Verdict};
use mdp_audit::io::{read_mechanism, Limits};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_bytes: 1 << 16,
        max_entries: 400,
        max_bits: 1 << 22,
        max_number_bits: 1 << 16,
    };
    if let Ok(file) = read_mechanism(data, &limits) {
        let opts = Options {
            max_prec: 512,
            ..Options::default()
        };
        let report = audit(&file, &opts).expect("a parsed file always audits");
        let any_fail = report.checks.iter().any(|c| c.verdict == Verdict::Fail);
        assert_eq!(report.verdict == Verdict::Fail, any_fail);
        if report.verdict == Verdict::Pass {
            assert!(report.checks.iter().all(|c| c.verdict == Verdict::Pass));
        }
    }
});
