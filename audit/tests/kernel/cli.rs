//! The `mdp-audit` binary on the committed corpus (`tests/corpus/manifest.json`): exit
//! codes, witnesses and one-line error messages; plus inputs too big to commit.

use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/corpus")
}

fn audit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mdp-audit"))
        .args(args)
        .output()
        .expect("run mdp-audit")
}

fn manifest() -> Vec<Value> {
    let text = std::fs::read_to_string(corpus().join("manifest.json")).expect("manifest");
    serde_json::from_str::<Value>(&text)
        .expect("json")
        .as_array()
        .expect("array")
        .clone()
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("json report: {e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn corpus_exit_codes_witnesses_and_messages() {
    let mut checked = 0;
    for entry in manifest() {
        let file = corpus().join(entry["file"].as_str().unwrap());
        let want = entry["exit"].as_i64().unwrap() as i32;
        // Per-file policy flags (scoped files pass only when the policy accepts them).
        let mut args: Vec<&str> = entry
            .get("args")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(|x| x.as_str().unwrap()).collect())
            .unwrap_or_default();
        args.extend(["--json", file.to_str().unwrap()]);
        let out = audit(&args);
        let code = out.status.code().expect("exit code");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(
            code,
            want,
            "{}: exit {code}, stderr {stderr}, stdout {}",
            file.display(),
            String::from_utf8_lossy(&out.stdout)
        );
        if want == 2 {
            let msg = entry["message"].as_str().unwrap();
            assert_eq!(
                stderr.lines().count(),
                1,
                "{}: not one line: {stderr}",
                file.display()
            );
            assert!(
                stderr.contains(msg),
                "{}: message {stderr:?} lacks {msg:?}",
                file.display()
            );
            assert!(out.stdout.is_empty());
        } else {
            let r = report(&out);
            assert_eq!(r["verdict"], if want == 0 { "pass" } else { "fail" });
            if let Some(p) = entry.get("policy") {
                let c = r["checks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["name"] == "policy");
                assert_eq!(c.map(|c| &c["verdict"]), Some(p), "{}", file.display());
            }
            if let Some(w) = entry.get("witness") {
                let pure = r["checks"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|c| c["name"] == "pure_privacy")
                    .unwrap();
                assert_eq!(pure["verdict"], "fail");
                let got = &pure["witness"];
                assert_eq!(
                    [&got["u"], &got["v"], &got["w"]],
                    [&w[0], &w[1], &w[2]],
                    "{}",
                    file.display()
                );
                // both sides' enclosures are reported and separated
                assert!(got["lhs"][0].as_f64().unwrap() > got["rhs"][1].as_f64().unwrap());
            }
        }
        checked += 1;
    }
    assert!(checked >= 50);
}

#[test]
fn claim_below_tight_fails_at_claim_and_passes_at_tight() {
    let file = corpus().join("fail/claim_below_tight.json");
    let f = file.to_str().unwrap();
    let out = audit(&["--json", f]);
    assert_eq!(out.status.code(), Some(1));
    let r = report(&out);
    let hi = r["epsilon_tight"][1].as_f64().unwrap();
    let lo = r["epsilon_tight"][0].as_f64().unwrap();
    assert!((hi - lo) / hi <= 1e-9, "enclosure too wide: [{lo}, {hi}]");
    // the generator's 30-digit value of the tight ε lies in the enclosure
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let t: f64 = doc["meta"]["tight_epsilon"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(
        lo <= t * (1.0 + 1e-15) && t <= hi * (1.0 + 1e-15),
        "{t} not in [{lo}, {hi}]"
    );
    let at = format!("{hi:e}");
    assert_eq!(
        audit(&["--quiet", "--epsilon", &at, f]).status.code(),
        Some(0)
    );
}

#[test]
fn quiet_prints_nothing_and_stdin_works() {
    let file = corpus().join("pass/exp_euclidean.json");
    let out = audit(&["-q", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty() && out.stderr.is_empty());
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdp-audit"))
        .args(["--json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(&std::fs::read(&file).unwrap())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(report(&out)["verdict"], "pass");
}

/// `--max-bytes` on a pipe (no file size to check first): exactly the limit is read, one
/// byte over it is refused with exit 2.
#[test]
fn max_bytes_holds_on_standard_input() {
    let text = std::fs::read(corpus().join("pass/exp_euclidean.json")).unwrap();
    let piped = |max: usize| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mdp-audit"))
            .args(["-q", "--max-bytes", &max.to_string(), "-"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(&text).unwrap();
        child.wait_with_output().unwrap()
    };
    assert_eq!(piped(text.len()).status.code(), Some(0));
    let out = piped(text.len() - 1);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-bytes"));
}

#[test]
fn deep_nesting_is_an_input_error() {
    let dir = std::env::temp_dir().join(format!("mdp-deep-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("deep.json");
    std::fs::write(&p, "[".repeat(1_000_000)).unwrap();
    let out = audit(&[p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("mdp-audit: invalid JSON: recursion limit exceeded"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_gigabyte_file_is_refused_before_reading() {
    let dir = std::env::temp_dir().join(format!("mdp-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("big.json");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(2 << 30).unwrap(); // sparse: no disk used
    let out = audit(&[p.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(e.contains("mdp-audit: file larger than the limit"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn entry_limit_and_bad_flags() {
    let file = corpus().join("pass/exp_euclidean.json");
    let f = file.to_str().unwrap();
    let out = audit(&["--max-entries", "100", f]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("exceed the limit of 100"));
    assert_eq!(audit(&["--epsilon", "0", f]).status.code(), Some(2));
    assert_eq!(audit(&["--epsilon", "NaN", f]).status.code(), Some(2));
    assert_eq!(audit(&["/nonexistent/file.json"]).status.code(), Some(2));
    assert_eq!(audit(&[]).status.code(), Some(2));
}

#[test]
fn bit_budget_stops_huge_exact_numbers() {
    let dir = std::env::temp_dir().join(format!("mdp-bits-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join("bits.json");
    let write = |tiny: &str| {
        std::fs::write(
            &p,
            format!(
                r#"{{"epsilon": 1, "metric": {{"kind": "euclidean", "points": [[0], [1]]}},
                    "matrix": [["{tiny}", "1"], ["1", "{tiny}"]]}}"#
            ),
        )
        .unwrap()
    };
    let f = p.to_str().unwrap();
    // File-wide budget: two numbers of ≈ 16 600 bits each.
    write("1e-5000");
    let out = audit(&["--max-bits", "30000", f]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("matrix: exact numbers need more than 30000 bits"),
        "{e}"
    );
    // Within the default budgets the same file is audited: a proven failure (the rows
    // differ by a factor 10^5000 at distance 1).
    assert_eq!(audit(&["--quiet", f]).status.code(), Some(1));
    // Per-number budget: one number of ≈ 299 000 bits is refused by default (fuzz
    // finding F1), and audited when the limit is raised.
    write("1e-90000");
    let out = audit(&[f]);
    assert_eq!(out.status.code(), Some(2));
    let e = String::from_utf8_lossy(&out.stderr);
    assert!(
        e.contains("matrix[0][0]") && e.contains("--max-number-bits"),
        "{e}"
    );
    assert_eq!(
        audit(&["--quiet", "--max-number-bits", "1000000", f])
            .status
            .code(),
        Some(1)
    );
    std::fs::remove_dir_all(&dir).ok();
}
