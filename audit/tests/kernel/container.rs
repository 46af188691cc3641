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

/// Revision 4: an `lp_dual` in a graph container, worked out by hand. The path 0 –1– 1 –2– 2
/// (d = 0, 1, 3), outputs at inputs 0 and 2, the prior (1, 2, 1), ε = ½ and one multiplier
/// (1, 0, k = 0) with γ = 1/5 prove, as `certificate.rs`'s instance B on a line,
///   α_0 = −c/5, α_1 = min(½·1 + 1/5, ½·2) = 7/10, α_2 = min(¼·3, 0) = 0,
/// so the bound is 7/10 − e^{½}/5 ∈ (0.370255, 0.370256) (below γ = 0's, worked out below). The uniform rows are private on
/// the edges and lose Σ_u π_u Σ_k ½·d(u, site_k) = ⅜ + ¾ + ⅜ = 3/2.
#[test]
fn an_lp_dual_in_a_graph_container_proves_its_hand_computed_bound() {
    let d = dir("lpdual");
    let doc = |value: f64, gamma: Value| {
        json!({"format": "mdp/1", "epsilon": "1/2",
            "metric": {"kind": "graph", "nodes": 3, "edges": [[0, 1, 1], [1, 2, 2]]},
            "outputs": {"of_inputs": [0, 2]},
            "loss": {"prior": [1, 2, 1]},
            "certificate": {"lower_bound": {"kind": "lp_dual", "objective": "expected_loss",
                "value": value, "gamma": gamma}}})
    };
    let run = |value: f64, gamma: Value| {
        let h = write(&d, &doc(value, gamma), 3, 2, &[0.5; 6]);
        audit(&["--json", h.to_str().unwrap()])
    };
    let lp_dual = |out: &Output| -> Value {
        let r = report(out);
        let c = r["checks"].as_array().unwrap().iter();
        let c = c.clone().find(|c| c["name"] == "lp_dual").unwrap().clone();
        let l = &r["expected_loss"];
        let (lo, hi) = (l[0].as_f64().unwrap(), l[1].as_f64().unwrap());
        assert!(lo <= 1.5 && 1.5 <= hi && hi - lo < 1e-12, "{l}");
        c
    };
    let out = run(0.370255, json!([[1, 0, 0, "1/5"]]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let c = lp_dual(&out);
    assert_eq!(c["verdict"], "pass");
    let bound = c["witness"]["bound"].as_f64().unwrap();
    assert!((0.370255..0.370256).contains(&bound), "{bound}");
    // A claim above 7/10 − e^{½}/5 is refused, and so is the claim that needs γ = 0.
    let out = run(0.370256, json!([[1, 0, 0, "1/5"]]));
    assert_eq!(out.status.code(), Some(1));
    let c = lp_dual(&out);
    assert_eq!(c["verdict"], "fail");
    assert!(
        c["detail"]
            .as_str()
            .unwrap()
            .contains("below its claimed value"),
        "{c}"
    );
    // Without multipliers α_u = min_k π_u·d(u, site_k) = 0, ½, 0: the bound is ½ exactly.
    let out = run(0.5, json!([]));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lp_dual(&out)["witness"]["bound"], 0.5);
    assert_eq!(run(0.5000001, json!([])).status.code(), Some(1));
    // The multiplier of a pair outside the file's scope (d(0, 2) = 3 > 2) is refused.
    let mut far = doc(0.1, json!([[2, 0, 0, "1/5"]]));
    far["neighbors"] = json!({"within": 2});
    let h = write(&d, &far, 3, 2, &[0.5; 6]);
    let out = audit(&["--json", h.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(lp_dual(&out)["verdict"], "fail");
}
