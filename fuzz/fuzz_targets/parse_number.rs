//! Fuzz exact number parsing: never panics; what parses prints back to the same rational.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp_audit::exact::{format_rational, parse_rational};

fuzz_target!(|data: &[u8]| {
    if let Ok(s) = std::str::from_utf8(data) {
        if let Ok(q) = parse_rational(s) {
            let back = parse_rational(&format_rational(&q)).expect("printed numbers parse");
            assert_eq!(back, q);
        }
    }
});
