//! Fuzz the record stream of `mdp privatize` (`mdp::privatize::privatize`) on a fixed 3×3
//! exact mechanism over a 3-point haversine space.
//!
//! Input: byte 0 picks how records name inputs (labels, 0-based index, coordinates
//! snapped to the nearest input), byte 1 the generator's seed, the rest is the record
//! stream. Invariants: no panic; Ok(count) ⇒ the output has exactly `count` lines, one
//! per non-empty input line, each the name of an output column that has positive mass in
//! that record's row (exact sampling never draws a zero entry); Err ⇒ its line is in
//! 1..=(number of input lines), every line before it was a valid record and exactly
//! those were written.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp::exact::Q;
use mdp::io::{space_from_json, Limits};
use mdp::mechanism::Matrix;
use mdp::metric::Space;
use mdp::privatize::{privatize, rng, Records, Sampler, Snapper};
use std::collections::HashMap;
use std::sync::OnceLock;

const LABELS: [&str; 3] = ["Rome", "Paris", "New York"];

fn space() -> &'static Space {
    static S: OnceLock<Space> = OnceLock::new();
    S.get_or_init(|| {
        let v = serde_json::json!({"kind": "haversine", "points": [[41.9, 12.5], [48.86, 2.35], [40.71, -74.0]]});
        space_from_json(&v, &Limits::default()).expect("space")
    })
}

fn matrix() -> Matrix {
    let q = |p: u32, d: u32| Q::from_unsigneds(p, d);
    let tiny = Q::from(1u32) >> 100u64;
    Matrix::new(
        3,
        3,
        vec![
            q(1, 2),
            q(1, 2),
            q(0, 1),
            q(1, 3),
            q(1, 3),
            q(1, 3),
            q(0, 1),
            tiny.clone(),
            Q::from(1u32) - tiny,
        ],
    )
}

/// The lines `BufRead::lines` yields: split at '\n', a final empty piece dropped.
fn input_lines(data: &[u8]) -> Vec<&[u8]> {
    let mut v: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if v.last().is_some_and(|l| l.is_empty()) {
        v.pop();
    }
    v
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (mode, seed, input) = (data[0] % 3, data[1], &data[2..]);
    let m = matrix();
    let mut sampler = Sampler::from_matrix(m.clone());
    let labels: Vec<String> = LABELS.iter().map(|s| s.to_string()).collect();
    let snapper = Snapper::new(space()).expect("haversine has coordinates");
    let (records, names): (Records, Vec<String>) = match mode {
        0 => (Records::Labels(&labels), labels.clone()),
        1 => (Records::Index(3), (0..3).map(|i| i.to_string()).collect()),
        _ => (
            Records::Snap(&snapper),
            vec!["41.9,12.5".into(), "48.86,2.35".into(), "40.71,-74".into()],
        ),
    };
    let mut out = Vec::new();
    let mut r = rng(Some(u64::from(seed)));
    let result = privatize(&mut sampler, &records, &names, input, &mut out, &mut r);

    let lines = input_lines(input);
    let written = String::from_utf8(out).expect("output names are UTF-8");
    let written: Vec<&str> = written.lines().collect();
    let by_name: HashMap<&str, usize> = names.iter().enumerate().map(|(i, s)| (s.as_str(), i)).collect();
    // The input index a (valid) record names.
    let w_of = |rec: &str| -> usize {
        match mode {
            0 => LABELS.iter().position(|l| *l == rec).expect("valid label"),
            1 => rec.parse().expect("valid index"),
            _ => snapper.nearest(&snapper.parse(rec).expect("valid coordinates")),
        }
    };
    let valid_before = |end: usize| -> Vec<usize> {
        lines[..end]
            .iter()
            .map(|l| std::str::from_utf8(l).expect("lines before the error are UTF-8").trim())
            .filter(|s| !s.is_empty())
            .map(w_of)
            .collect()
    };
    let (ws, end) = match result {
        Ok(count) => {
            let ws = valid_before(lines.len());
            assert_eq!(count, ws.len(), "count = the number of non-empty records");
            (ws, lines.len())
        }
        Err(e) => {
            assert!(
                e.line >= 1 && e.line <= lines.len(),
                "error line {} outside 1..={} ({})",
                e.line,
                lines.len(),
                e.message
            );
            (valid_before(e.line - 1), e.line - 1)
        }
    };
    assert_eq!(written.len(), ws.len(), "one output line per record before line {}", end + 1);
    for (w, name) in ws.iter().zip(&written) {
        let col = *by_name.get(name).unwrap_or_else(|| panic!("unknown output name {name:?}"));
        assert!(*m.get(*w, col) > 0u32, "drew column {col} of row {w}, whose mass is 0");
    }
});
