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

/// `mdp-audit ARGS` refuses with exit 2 and one line of stderr that contains `want`.
fn refuse(what: &str, args: &[&str], want: &str) {
    let out = audit(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{what}: {err}");
    assert_eq!(err.lines().count(), 1, "{what}: {err}");
    assert!(err.contains(want), "{what}: {err}");
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
        // The share of triples the box pairs settled, per pass.
        let st = &ra["stats"]["structured"];
        let settled = st["triples_settled_by_boxes"].as_f64().unwrap();
        let all = ra["stats"]["triples"].as_f64().unwrap() * st["passes"].as_f64().unwrap();
        assert!(settled > 0.0, "{st}");
        assert_eq!(st["settled_fraction"].as_f64(), Some(settled / all), "{st}");
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
    assert!(
        r["epsilon_required"].is_null(),
        "ε required only when it differs"
    );
    let out = audit(&["--json", "--require-epsilon", "0.5", h.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let r = report(&out);
    assert_eq!(r["epsilon_required"], 0.5);
    assert_eq!(r["stats"]["triples"], 48, "n(n − 1)·K triples");
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
    // The plan's bytes fit a budget of exactly that many, not one less.
    let need = mdp_audit::io::container::audit_bytes(8, 8);
    let out = audit(&["--max-memory", &need.to_string(), &hs]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    refuse(
        "memory",
        &["--max-memory", &(need - 1).to_string(), &hs],
        "--max-memory",
    );
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
    // The gap: 3/2 − 0.3702557 (the loss's upper end minus the bound).
    let detail = c["detail"].as_str().unwrap();
    assert!(detail.contains("certified gap ≤ 1.130e0"), "{detail}");
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

/// Header refusals and limits of `io::container` that cargo-mutants found unchecked: the
/// matrix file named "." or "..", an explicit table, a packing or benders certificate alone,
/// unknown fields (warned, known ones not), the column block's bounds and memory, the
/// progress of a read (every row once), and a coordinate space above the JSON files'
/// entry limit (a container is for large spaces: n² is not formed).
#[test]
fn container_headers_blocks_and_limits() {
    use mdp_audit::io::container::{audit_bytes, read, read_columns, shape};
    use mdp_audit::io::Limits;
    let d = dir("headers");
    let (doc, data) = line(8, 0.3);
    let h = write(&d, &doc, 8, 8, &data);
    let hs = h.to_str().unwrap().to_string();
    let with = |f: &dyn Fn(&mut Value)| {
        let mut v = doc.clone();
        v["matrix"] = json!({"npy": "m.npy"});
        f(&mut v);
        std::fs::write(&h, serde_json::to_vec(&v).unwrap()).unwrap();
    };
    for name in [".", ".."] {
        with(&|v| v["matrix"] = json!({ "npy": name }));
        refuse(name, &[&hs], "must be a file name");
    }
    with(&|v| v["metric"] = json!({"kind": "explicit", "distances": [[0]]}));
    refuse("explicit", &[&hs], "explicit table is not supported");
    let packing = json!({"lower_bound": {"kind": "packing", "centers": [0, 7], "radius": 1}});
    with(&|v| v["certificate"] = packing.clone());
    refuse("packing", &[&hs], "an lp_dual lower bound only");
    let benders = json!({"benders": {"objective": "max_loss", "lower": 0, "upper": 1}});
    with(&|v| v["certificate"] = benders.clone());
    refuse("benders", &[&hs], "lp_dual");
    with(&|v| v["extra"] = json!(1));
    let out = audit(&["--json", &hs]);
    assert_eq!(out.status.code(), Some(0));
    let warnings = report(&out)["warnings"].to_string();
    assert!(
        warnings.contains("extra: unknown field ignored"),
        "{warnings}"
    );
    assert!(!warnings.contains("epsilon"), "{warnings}");
    with(&|_| {});
    // A block of columns: bounds, its own memory, named in the refusal.
    let v: Value = serde_json::from_slice(&std::fs::read(&h).unwrap()).unwrap();
    let limits = Limits::default();
    assert!(read_columns(&h, &v, &limits, u64::MAX, 2, 5).is_ok());
    for (c0, c1) in [(5, 2), (3, 3), (0, 9)] {
        let e = read_columns(&h, &v, &limits, u64::MAX, c0, c1).unwrap_err();
        assert!(
            e.message.contains("is not a block of 0..8"),
            "{c0}..{c1}: {e:?}"
        );
    }
    let need = audit_bytes(8, 3);
    assert!(read_columns(&h, &v, &limits, need, 2, 5).is_ok());
    let e = read_columns(&h, &v, &limits, need - 1, 2, 5).unwrap_err();
    assert!(e.message.contains("auditing 8 × 3 entries"), "{e:?}");
    // Progress: each of the 8 rows advanced once.
    struct Rows(std::sync::Mutex<u64>);
    impl mdp_audit::progress::Progress for Rows {
        fn advance(&self, steps: u64) {
            *self.0.lock().unwrap() += steps;
        }
    }
    let rows = Rows(std::sync::Mutex::new(0));
    read(&h, &v, &limits, u64::MAX, &rows).unwrap();
    assert_eq!(*rows.0.lock().unwrap(), 8);
    // 600 rows arrive in blocks of 256: 256 + 256 + 88, each row once.
    let pts: Vec<Value> = (0..600).map(|i| json!([i])).collect();
    let tall = json!({"format": "mdp/1", "epsilon": 1, "metric": {"kind": "euclidean", "points": pts},
                      "outputs": {"of_inputs": [0]}});
    let th = write(&d, &tall, 600, 1, &[1.0; 600]);
    let tv: Value = serde_json::from_slice(&std::fs::read(&th).unwrap()).unwrap();
    let rows = Rows(std::sync::Mutex::new(0));
    read(&th, &tv, &limits, u64::MAX, &rows).unwrap();
    assert_eq!(*rows.0.lock().unwrap(), 600);
    // 4 001 points: n² = 16 008 001 is over a JSON file's 16·10⁶ entries, not a container's.
    let pts: Vec<Value> = (0..4001).map(|i| json!([i])).collect();
    let big = json!({"format": "mdp/1", "epsilon": 1, "metric": {"kind": "euclidean", "points": pts},
                     "matrix": {"npy": "m.npy"}});
    assert_eq!(shape(&h, &big, &limits).unwrap().0, 4001);
}

/// A graph container's witness names its pair, output and their labels, and encloses both
/// sides of the broken inequality, the right side with the edge's own weight: on the path
/// a –1– b –2– c, only the edge of weight 2 breaks ε = 1 (ratios 19 and 10.5 > e²).
#[test]
fn a_graph_witness_encloses_both_sides_with_its_edge_weight() {
    let d = dir("witness");
    let rows = [[10.0, 10.0, 1.0], [10.0, 10.0, 1.0], [1.0, 1.0, 20.0]];
    let data: Vec<f64> = rows.iter().flatten().copied().collect();
    let labels = ["a", "b", "c"];
    let doc = json!({"epsilon": 1, "metric": {"kind": "graph", "nodes": 3,
        "edges": [[0, 1, 1], [1, 2, 2]], "labels": labels}});
    let h = write(&d, &doc, 3, 3, &data);
    let out = audit(&["--json", h.to_str().unwrap()]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report(&out);
    let c = r["checks"].as_array().unwrap().iter();
    let c = c.clone().find(|c| c["name"] == "pure_privacy").unwrap();
    let wit = &c["witness"];
    let at = |f: &str| wit[f].as_u64().unwrap() as usize;
    let (u, v, w) = (at("u"), at("v"), at("w"));
    assert_eq!((u.min(v), u.max(v)), (1, 2), "{wit}");
    for (key, i) in [("u_label", u), ("v_label", v), ("w_label", w)] {
        assert_eq!(wit[key], labels[i], "{wit}");
    }
    let h_of = |x: usize| rows[x][w] / rows[x].iter().sum::<f64>();
    let (lhs, rhs) = (&wit["lhs"], &wit["rhs"]);
    let want = [h_of(u), (2.0f64).exp() * h_of(v)];
    for (got, want) in [(lhs, want[0]), (rhs, want[1])] {
        let (lo, hi) = (got[0].as_f64().unwrap(), got[1].as_f64().unwrap());
        assert!(
            lo <= hi && (lo - want).abs() <= 1e-12 * want,
            "{got} vs {want}"
        );
    }
    assert!(lhs[0].as_f64().unwrap() > rhs[1].as_f64().unwrap());
}

/// Near-ties go exact, and the report counts them: on the path 0 – 1 – 2, rows 0 and 2 are
/// planted at e^{ε·1}·H\[1\]\[0\], so 2 pairs × 2 columns of the 3·2·2 triples are decided
/// in exact arithmetic.
#[test]
fn exact_triples_are_counted_against_all_triples() {
    let d = dir("exact");
    let h = f64::exp(1.0) / 4.0;
    let a = h / (1.0 - h);
    let doc = json!({"epsilon": 1, "metric": {"kind": "graph", "nodes": 3, "edges": [[0, 1, 1], [1, 2, 1]]}, "outputs": {"of_inputs": [0, 1]}});
    let hdr = write(&d, &doc, 3, 2, &[a, 1.0, 1.0, 3.0, a, 1.0]);
    let out = audit(&["--json", hdr.to_str().unwrap()]);
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stats = &report(&out)["stats"];
    assert_eq!(stats["triples"], 12);
    assert_eq!(stats["structured"]["exact_pairs"], 2, "{stats}");
    assert_eq!(stats["structured"]["exact_triples"], 4, "{stats}");
    assert_eq!(stats["exact_triple_fraction"].as_f64(), Some(4.0 / 12.0));
}
