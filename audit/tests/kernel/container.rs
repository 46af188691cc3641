//! `mdp-audit` on large-mechanism containers (an `mdp/1` header beside a float64 `.npy`,
//! `spec/mechanism-format.md` revision 3): the same verdict and tight ε as the JSON form of
//! the same matrix, exit codes, a witness, and one-line refusals of hostile files.

use mdp_audit::io::npy;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn audit(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mdp-audit"))
        .args(args)
        .output()
        .expect("run mdp-audit")
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mdp-container-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A header (`doc` plus `matrix: {npy}`) and its `.npy` in `d`; returns the header path.
fn write(d: &Path, doc: &Value, rows: usize, cols: usize, data: &[f64]) -> PathBuf {
    let mut bytes = Vec::new();
    npy::write(&mut bytes, rows, cols, data).unwrap();
    std::fs::write(d.join("m.npy"), bytes).unwrap();
    let mut doc = doc.clone();
    doc["matrix"] = json!({"npy": "m.npy"});
    let h = d.join("m.json");
    std::fs::write(&h, serde_json::to_vec(&doc).unwrap()).unwrap();
    h
}

/// Exponential-like rows on a line: entries e^{-a|x_u - x_w|}, normalized in floats.
fn line(n: usize, a: f64) -> (Value, Vec<f64>) {
    let xs: Vec<f64> = (0..n)
        .map(|i| (i * i % 17) as f64 * 0.25 + i as f64 * 0.5)
        .collect();
    let mut data = Vec::new();
    for &x in &xs {
        let row: Vec<f64> = xs.iter().map(|&y| (-a * (x - y).abs()).exp()).collect();
        let s: f64 = row.iter().sum();
        data.extend(row.into_iter().map(|v| v / s));
    }
    let pts: Vec<Value> = xs.iter().map(|x| json!([x])).collect();
    (
        json!({"format": "mdp/1", "epsilon": 1, "metric": {"kind": "euclidean", "points": pts}}),
        data,
    )
}

fn report(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {} {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn container_and_json_forms_agree() {
    let d = dir("agree");
    let (doc, data) = line(60, 0.45);
    let h = write(&d, &doc, 60, 60, &data);
    let mut js = doc.clone();
    js["matrix"] = Value::Array(data.chunks(60).map(|r| json!(r)).collect());
    let j = d.join("m-json.json");
    std::fs::write(&j, serde_json::to_vec(&js).unwrap()).unwrap();
    for eps in ["1", "0.9", "0.5"] {
        let a = audit(&["--json", "--require-epsilon", eps, h.to_str().unwrap()]);
        let b = audit(&["--json", "--require-epsilon", eps, j.to_str().unwrap()]);
        assert_eq!(a.status.code(), b.status.code(), "ε = {eps}");
        let (ra, rb) = (report(&a), report(&b));
        let (ta, tb) = (&ra["epsilon_tight"], &rb["epsilon_tight"]);
        let lo = ta[0].as_f64().unwrap().max(tb[0].as_f64().unwrap());
        let hi = ta[1].as_f64().unwrap().min(tb[1].as_f64().unwrap());
        assert!(lo <= hi, "tight ε {ta} vs {tb}");
        assert_eq!(ra["stats"]["structured"]["method"], "boxes");
    }
    // Below the tight ε: a failure with a witness that names a real triple.
    let out = audit(&["--json", "--require-epsilon", "0.5", h.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let r = report(&out);
    let w = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "pure_privacy")
        .unwrap();
    let wit = &w["witness"];
    assert!(wit["lhs"][0].as_f64().unwrap() > wit["rhs"][1].as_f64().unwrap());
}

#[test]
fn graph_container_is_audited_on_edges() {
    let d = dir("graph");
    // A path 0 - 1 - 2 - 3 with unit weights; rows e^{-0.5·|i - j|}.
    let n = 4;
    let mut data = Vec::new();
    for i in 0..n {
        let row: Vec<f64> = (0..n)
            .map(|j| (-0.5 * (i as f64 - j as f64).abs()).exp())
            .collect();
        let s: f64 = row.iter().sum();
        data.extend(row.into_iter().map(|v| v / s));
    }
    let doc = json!({"epsilon": 1, "metric": {"kind": "graph", "nodes": 4, "edges": [[0, 1, 1], [1, 2, 1], [2, 3, 1]], "labels": ["a", "b", "c", "d"]}});
    let h = write(&d, &doc, n, n, &data);
    let out = audit(&["--json", h.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    assert_eq!(r["stats"]["structured"]["method"], "edges");
    assert_eq!(r["stats"]["structured"]["pairs_checked"], 6);
    let out = audit(&["--json", "--require-epsilon", "0.5", h.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let r = report(&out);
    let c = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "pure_privacy")
        .unwrap();
    assert!(c["witness"]["u_label"].is_string());
}

#[test]
fn hostile_containers_are_refused_in_one_line() {
    let d = dir("hostile");
    let (doc, data) = line(8, 0.3);
    let h = write(&d, &doc, 8, 8, &data);
    let hs = h.to_str().unwrap().to_string();
    let refuse = |what: &str, args: &[&str], want: &str| {
        let out = audit(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert_eq!(err.lines().count(), 1, "{what}: {err}");
        assert!(err.contains(want), "{what}: {err}");
    };
    // The .npy changed behind the header.
    let npy_path = d.join("m.npy");
    let good = std::fs::read(&npy_path).unwrap();
    std::fs::write(&npy_path, &good[..good.len() - 8]).unwrap();
    refuse("truncated", &[&hs], "bytes");
    let mut wrong_shape = Vec::new();
    npy::write(&mut wrong_shape, 8, 4, &data[..32]).unwrap();
    std::fs::write(&npy_path, wrong_shape).unwrap();
    refuse("shape", &[&hs], "8 × 4");
    let dict = b"{'descr': '<f4', 'fortran_order': False, 'shape': (8, 8), }\n";
    let mut f4 = b"\x93NUMPY\x01\x00".to_vec();
    f4.extend((dict.len() as u16).to_le_bytes());
    f4.extend(dict);
    f4.extend([0u8; 256]);
    std::fs::write(&npy_path, f4).unwrap();
    refuse("dtype", &[&hs], "float64");
    std::fs::remove_file(&npy_path).unwrap();
    refuse("missing", &[&hs], "cannot open");
    // Entries that are not a mechanism.
    let mut bad = data.clone();
    bad[3] = f64::NAN;
    write(&d, &doc, 8, 8, &bad);
    refuse("NaN", &[&hs], "matrix[0][3]");
    let mut bad = data.clone();
    bad[9] = -0.5;
    write(&d, &doc, 8, 8, &bad);
    refuse("negative", &[&hs], "matrix[1][1]");
    let mut bad = data.clone();
    bad[16..24].fill(0.0);
    write(&d, &doc, 8, 8, &bad);
    refuse("zero row", &[&hs], "matrix[2]");
    write(&d, &doc, 8, 8, &data);
    // Header problems.
    let mut h2 = doc.clone();
    h2["matrix"] = json!({"npy": "../m.npy"});
    std::fs::write(&h, serde_json::to_vec(&h2).unwrap()).unwrap();
    refuse("path", &[&hs], "file name");
    let mut h3 = doc.clone();
    h3["matrix"] = json!({"npy": "m.npy"});
    h3["certificate"] = json!({"claimed_loss": 1});
    std::fs::write(&h, serde_json::to_vec(&h3).unwrap()).unwrap();
    refuse("certificate", &[&hs], "an lp_dual lower bound only");
    h3.as_object_mut().unwrap().remove("certificate");
    h3["loss"] = json!({"cost": [[0]]});
    std::fs::write(&h, serde_json::to_vec(&h3).unwrap()).unwrap();
    refuse("loss", &[&hs], "not supported in a container");
    h3.as_object_mut().unwrap().remove("loss");
    std::fs::write(&h, serde_json::to_vec(&h3).unwrap()).unwrap();
    refuse("memory", &["--max-memory", "100", &hs], "--max-memory");
    let out = Command::new(env!("CARGO_BIN_EXE_mdp-audit"))
        .arg("-")
        .stdin(std::fs::File::open(&h).unwrap())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("standard input"));
    let out = audit(&[&hs]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
