//! Helpers shared by the mechanism-suite tests: generated spaces and auditing a matrix as a
//! peer's file.

use mdp::audit::{self, Options};
use mdp::exact::Q;
use mdp::io::{self, Limits};
use mdp::mechanism::Matrix;
use mdp::metric::{MetricKind, Space};
use proptest::prelude::*;
use serde_json::json;

pub fn q(a: i64, b: i64) -> Q {
    Q::from_signeds(a, b)
}

/// n points with coordinates in [−3, 3] (multiples of 1/100), 1 or 2 dimensions, under
/// the Euclidean, Manhattan or Chebyshev metric.
pub fn arb_space(min_n: usize, max_n: usize) -> impl Strategy<Value = Space> {
    (min_n..=max_n, 1usize..=2, 0usize..3).prop_flat_map(|(n, dim, kind)| {
        proptest::collection::vec(proptest::collection::vec(-300i64..300, dim), n).prop_map(
            move |pts| {
                let kind = [
                    MetricKind::Euclidean,
                    MetricKind::Manhattan,
                    MetricKind::Chebyshev,
                ][kind];
                let pts = pts
                    .into_iter()
                    .map(|p| p.into_iter().map(|x| q(x, 100)).collect())
                    .collect();
                Space::from_points(kind, pts, None).unwrap()
            },
        )
    })
}

/// ε ∈ [0.2, 3].
pub fn arb_eps() -> impl Strategy<Value = Q> {
    (20i64..300).prop_map(|x| q(x, 100))
}

/// Write `matrix` as an `mdp/1` file (plus `extra` top-level fields) and audit it.
pub fn audit_matrix(
    space: &Space,
    eps: &Q,
    matrix: &Matrix,
    extra: serde_json::Value,
) -> audit::Report {
    let mut doc = io::mechanism_to_value(eps, space, matrix, json!({"producer": "test"}));
    if let (Some(d), Some(x)) = (doc.as_object_mut(), extra.as_object()) {
        d.extend(x.clone());
    }
    let text = serde_json::to_string(&doc).unwrap();
    let file = io::read_mechanism(text.as_bytes(), &Limits::default()).unwrap();
    audit::audit(&file, &Options::default()).unwrap()
}

/// Run the binary at `bin` with `args` and `stdin`: (exit code, stdout, stderr).
pub fn run(bin: &std::path::Path, args: &[&str], stdin: &str) -> (i32, String, String) {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(bin)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that exits before reading its input (an early refusal) closes the pipe:
    // that is its answer, not a test failure (this write raced with it and panicked).
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `mdp` with `args` and `stdin`.
pub fn mdp_in(args: &[&str], stdin: &str) -> (i32, String, String) {
    run(std::path::Path::new(env!("CARGO_BIN_EXE_mdp")), args, stdin)
}

/// `mdp` with `args` and an empty standard input.
pub fn mdp(args: &[&str]) -> (i32, String, String) {
    mdp_in(args, "")
}

/// `mdp-audit` (built beside `mdp` by `cargo test --workspace`) with `args`.
pub fn mdp_audit(args: &[&str]) -> (i32, String, String) {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_mdp"))
        .with_file_name(format!("mdp-audit{}", std::env::consts::EXE_SUFFIX));
    run(&bin, args, "")
}

/// The path of `name` in this test process's directory `dir` (created); with `bytes`,
/// the file is written.
pub fn tmp(dir: &str, name: &str, bytes: Option<&[u8]>) -> String {
    let d = std::env::temp_dir().join(format!("mdp-{dir}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    if let Some(b) = bytes {
        std::fs::write(&p, b).unwrap();
    }
    p.to_string_lossy().into_owned()
}
