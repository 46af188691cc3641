//! Fuzz the record stream of `mdp privatize` (`mdp::privatize::stream`) on a fixed 3×3
//! exact mechanism over a 3-point haversine space.
//!
//! Input: byte 0 picks how records name inputs (labels, 0-based index, coordinates
//! snapped to the nearest input within an unbounded limit), byte 1 the generator's seed
//! and whether bad records are skipped, the rest is a plain-lines record stream.
//! Invariants: no panic; Ok ⇒ the output has exactly one line per input line (no line
//! dropped or merged): the name of an output column with positive mass in that record's
//! row (exact sampling never draws a zero entry), or empty for a skipped record, and the
//! summary counts both; Err (never when skipping) ⇒ its line is in 1..=(number of input
//! lines) and every line before it was a valid record.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp::exact::Q;
use mdp::io::{space_from_json, Limits};
use mdp::mechanism::Matrix;
use mdp::metric::Space;
use mdp::privatize::{rng, stream, Format, OnBad, Options, Records, Release, Sampler, Snapper};
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
    let skip = seed % 2 == 1;
    let m = matrix();
    let mut sampler = Sampler::from_matrix(m.clone());
    let labels: Vec<String> = LABELS.iter().map(|s| s.to_string()).collect();
    let snapper = Snapper::new(space(), Some(f64::INFINITY)).expect("haversine has coordinates");
    let (records, releases): (Records, Vec<Release>) = match mode {
        0 => (
            Records::Labels(&labels),
            labels.iter().cloned().map(Release::Label).collect(),
        ),
        1 => (Records::Index(3), (0..3).map(Release::Index).collect()),
        _ => (
            Records::Snap(&snapper),
            vec![
                Release::Point(vec![41.9, 12.5]),
                Release::Point(vec![48.86, 2.35]),
                Release::Point(vec![40.71, -74.0]),
            ],
        ),
    };
    let names: Vec<String> = ["41.9,12.5", "48.86,2.35", "40.71,-74"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let names: Vec<String> = match mode {
        0 => labels.clone(),
        1 => (0..3).map(|i| i.to_string()).collect(),
        _ => names,
    };
    let opts = Options {
        format: Format::Lines,
        records,
        releases: &releases,
        on_bad: if skip { OnBad::Skip } else { OnBad::Error },
        keep_input: false,
    };
    let mut out = Vec::new();
    let mut r = rng(Some(u64::from(seed)));
    let result = stream(&mut sampler, &opts, input, &mut out, &mut r);

    let lines = input_lines(input);
    let written = String::from_utf8(out).expect("output names are UTF-8");
    let written: Vec<&str> = written.lines().collect();
    let by_name: HashMap<&str, usize> = names
        .iter()
        .enumerate()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    let header = |i: usize, l: &[u8]| {
        mode == 2
            && i == 0
            && std::str::from_utf8(l).is_ok_and(|t| {
                let f: Vec<&str> = t
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .collect();
                !f.is_empty() && f.iter().all(|x| x.parse::<f64>().is_err())
            })
    };
    match result {
        Ok(summary) => {
            assert_eq!(written.len(), lines.len(), "one output line per input line");
            let mut released = 0;
            let mut skipped = 0;
            for (i, (line, name)) in lines.iter().zip(&written).enumerate() {
                if header(i, line) {
                    assert!(summary.header);
                    continue;
                }
                if name.is_empty() {
                    assert!(skip, "an empty release without --skip-bad");
                    skipped += 1;
                    continue;
                }
                released += 1;
                let rec = std::str::from_utf8(line)
                    .expect("a released record is UTF-8")
                    .trim();
                let w = match mode {
                    0 => LABELS.iter().position(|l| *l == rec).expect("valid label"),
                    1 => rec.parse().expect("valid index"),
                    _ => snapper.nearest(&snapper.parse(rec).expect("valid coordinates")),
                };
                let col = *by_name
                    .get(name)
                    .unwrap_or_else(|| panic!("unknown output name {name:?}"));
                assert!(
                    *m.get(w, col) > 0u32,
                    "drew column {col} of row {w}, whose mass is 0"
                );
            }
            assert_eq!(summary.records, released);
            assert_eq!(summary.skipped, skipped);
        }
        Err(e) => {
            // Reading a line that is not UTF-8 fails in either mode.
            let unreadable = e.message.starts_with("cannot read");
            assert!(
                !skip || unreadable,
                "an error while skipping: {}",
                e.message
            );
            assert!(
                e.line >= 1 && e.line <= lines.len(),
                "error line {} outside 1..={} ({})",
                e.line,
                lines.len(),
                e.message
            );
        }
    }
});
