//! Safe by default: the privatizer's randomness, exact rows and record matching, and the
//! CI gate's policy flags (`--require-epsilon`, `--require-within`, `--allow-scoped`),
//! through the two binaries as a pipeline uses them.

use serde_json::{json, Value};

use crate::common;
use common::mdp_in as mdp;

fn audit(args: &[&str]) -> i32 {
    common::mdp_audit(args).0
}

fn tmp(name: &str) -> String {
    common::tmp("safe", name, None)
}

fn write(name: &str, doc: &Value) -> String {
    common::tmp("safe", name, Some(doc.to_string().as_bytes()))
}

/// A near-identity mechanism on 3 points at mutual distance 1: the diagonal carries
/// 1 − 2t, t = 10^-15, so it is ε·d private for ε ≥ ln((1 − 2t)/t) ≈ 34.5.
fn near_identity(metric: Value, eps: &str, extra: Value) -> Value {
    let (d, t) = ("0.999999999999998", "0.000000000000001");
    let mut doc = json!({
        "format": "mdp/1",
        "epsilon": eps,
        "metric": metric,
        "matrix": [[d, t, t], [t, d, t], [t, t, d]],
    });
    if let (Some(o), Some(x)) = (doc.as_object_mut(), extra.as_object()) {
        o.extend(x.clone());
    }
    doc
}

fn explicit3() -> Value {
    json!({"kind": "explicit", "distances": [[0, 1, 1], [1, 0, 1], [1, 1, 0]]})
}

#[test]
fn privatize_is_randomized_by_default_and_warns_on_a_seed() {
    let out = tmp("demo.json");
    let (code, _, err) = mdp(&["demo", "-o", &out], "");
    assert_eq!(code, 0, "{err}");
    let records: String = (1..=100)
        .map(|i| format!("{i}\n"))
        .collect::<String>()
        .repeat(3);
    let a = mdp(
        &["privatize", "--trust-file-metric", "--mechanism", &out],
        &records,
    );
    let b = mdp(
        &["privatize", "--trust-file-metric", "--mechanism", &out],
        &records,
    );
    assert_eq!(a.0, 0, "{}", a.2);
    assert_eq!(a.1.lines().count(), 300);
    assert_ne!(a.1, b.1, "two default runs gave the same 300 outputs");
    assert!(!a.2.contains("--seed"), "{}", a.2);
    let s = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &out,
            "--seed",
            "9",
        ],
        &records,
    );
    let t = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &out,
            "--seed",
            "9",
        ],
        &records,
    );
    assert_eq!(s.1, t.1);
    assert!(s.2.contains("warning") && s.2.contains("--seed"), "{}", s.2);
}

#[test]
fn labels_and_indices_never_collide() {
    let mech = write("ident.json", &near_identity(explicit3(), "40", json!({})));
    let labels = tmp("labels.txt");
    std::fs::write(&labels, "1\n2\n3\n").unwrap();
    // Labels "1", "2", "3": "1" is the first input, "0" names nothing.
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--labels",
            &labels,
        ],
        "1\n3\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "1\n3\n");
    let (code, _, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--labels",
            &labels,
        ],
        "0\n",
    );
    assert_eq!(code, 2);
    assert!(
        err.contains("line 1") && err.contains("unknown input label"),
        "{err}"
    );
    // Indices only on request, and then indices out.
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--labels",
            &labels,
            "--by-index",
        ],
        "0\n2\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "0\n2\n");
    // No labels and no flag: refused with the way out named.
    let (code, _, err) = mdp(
        &["privatize", "--trust-file-metric", "--mechanism", &mech],
        "0\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("--by-index"), "{err}");
    // Duplicate labels are refused.
    std::fs::write(&labels, "a\nb\na\n").unwrap();
    let (code, _, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--labels",
            &labels,
        ],
        "a\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("not unique"), "{err}");
}

#[test]
fn rome100_labels_are_not_shifted() {
    // rome100's labels are "1".."100": the record "100" is the last input, "0" is none.
    let out = tmp("demo100.json");
    assert_eq!(mdp(&["demo", "-o", &out], "").0, 0);
    let (code, _, err) = mdp(
        &["privatize", "--trust-file-metric", "--mechanism", &out],
        "100\n",
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = mdp(
        &["privatize", "--trust-file-metric", "--mechanism", &out],
        "0\n",
    );
    assert_eq!(code, 2, "{err}");
}

#[test]
fn snap_maps_raw_coordinates_to_the_nearest_input() {
    let metric =
        json!({"kind": "haversine", "points": [[41.9, 12.5], [45.46, 9.19], [40.85, 14.27]]});
    // Distances ≥ 180 km: ε = 1 per km makes the near-identity private.
    let mech = write("snap.json", &near_identity(metric, "1", json!({})));
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--snap",
        ],
        "45.4,9.2\n40.9 14.3\n41.89,12.49\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "45.46,9.19\n40.85,14.27\n41.9,12.5\n");
    let (code, _, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--snap",
        ],
        "91,0\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("line 1") && err.contains("latitude"), "{err}");
    let (code, _, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--snap",
        ],
        "41.9\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("coordinates"), "{err}");
}

#[test]
fn the_gate_checks_the_pipelines_epsilon_not_the_files_claim() {
    // Claims ε = 1000: passes on its own claim, fails a gate that requires ε = 1.
    let f = write(
        "claim1000.json",
        &near_identity(explicit3(), "1000", json!({})),
    );
    assert_eq!(audit(&["--quiet", &f]), 0);
    assert_eq!(audit(&["--quiet", "--require-epsilon", "1", &f]), 1);
    assert_eq!(audit(&["--quiet", "--require-epsilon", "35", &f]), 0);
    assert_eq!(audit(&["--quiet", "--require-epsilon", "34", &f]), 1);
    // Issue 33: the report names the required ε as required, and the claim as the claim.
    let (_, out, _) = common::mdp_audit(&["--require-epsilon", "35", &f]);
    assert!(
        out.contains("claimed ε = 1000") && out.contains("required ε = 35"),
        "{out}"
    );
    let (_, out, _) = common::mdp_audit(&["--json", "--require-epsilon", "35", &f]);
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["epsilon_claimed"], 1000.0);
    assert_eq!(v["epsilon_required"], 35.0);
    // (tight ε under a pass) A pass at ε = 35 proves tight ε ≤ 35: the enclosure says so.
    assert_eq!(v["verdict"], "pass");
    let hi = v["epsilon_tight"][1].as_f64().unwrap();
    let lo = v["epsilon_tight"][0].as_f64().unwrap();
    assert!(lo <= hi && hi <= 35.0, "[{lo}, {hi}]");
    // privatize under the same policy refuses it.
    let labels = tmp("l3.txt");
    std::fs::write(&labels, "a\nb\nc\n").unwrap();
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &f,
            "--labels",
            &labels,
            "--require-epsilon",
            "1",
        ],
        "a\n",
    );
    assert_eq!(code, 1, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("refusing"), "{err}");
}

#[test]
fn scoped_claims_fail_unless_the_policy_accepts_them() {
    // within 0.5 < every distance: no pair is protected, yet the file "passes" its claim.
    let f = write(
        "scoped.json",
        &near_identity(explicit3(), "0.1", json!({"neighbors": {"within": "0.5"}})),
    );
    assert_eq!(audit(&["--quiet", &f]), 1);
    assert_eq!(audit(&["--quiet", "--require-within", "1", &f]), 1);
    assert_eq!(audit(&["--quiet", "--require-within", "0.5", &f]), 0);
    assert_eq!(audit(&["--quiet", "--allow-scoped", &f]), 0);
    let labels = tmp("l3b.txt");
    std::fs::write(&labels, "a\nb\nc\n").unwrap();
    let (code, _, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &f,
            "--labels",
            &labels,
        ],
        "a\n",
    );
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("policy"), "{err}");
    let (code, _, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &f,
            "--labels",
            &labels,
            "--allow-scoped",
        ],
        "a\n",
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn privatize_samples_the_exact_rows_of_the_file() {
    // A row whose second entry 2^-1100 is 0 in f64; a third entry 0. Privacy at ε = 800:
    // the ratio 2^1100 ≈ e^762.5 ≤ e^800. The zero column is never drawn.
    let p = num_pow2(1100);
    let tiny = format!("1/{p}");
    // 2^1100 − 1: the last decimal digit of a power of two is never 0.
    let mut m = p.clone().into_bytes();
    *m.last_mut().unwrap() -= 1;
    let big = format!("{}/{p}", String::from_utf8(m).unwrap());
    let doc = json!({
        "format": "mdp/1",
        "epsilon": "800",
        "metric": {"kind": "explicit", "distances": [[0, 1], [1, 0]]},
        "matrix": [[big.clone(), tiny.clone(), "0".to_string()], [tiny, big, "0".to_string()]],
        "outputs": {"labels": ["x", "y", "z"]},
    });
    let f = write("tiny.json", &doc);
    assert_eq!(audit(&["--quiet", &f]), 0);
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &f,
            "--by-index",
        ],
        &"0\n1\n".repeat(200),
    );
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains('z'));
    assert_eq!(out.lines().filter(|l| *l == "x").count(), 200);
}

fn num_pow2(k: u32) -> String {
    // 2^k in decimal (schoolbook doubling; test helper).
    let mut digits = vec![1u8];
    for _ in 0..k {
        let mut carry = 0;
        for d in digits.iter_mut() {
            let x = *d * 2 + carry;
            *d = x % 10;
            carry = x / 10;
        }
        if carry > 0 {
            digits.push(carry);
        }
    }
    digits.iter().rev().map(|d| char::from(b'0' + d)).collect()
}
