//! The adversary's measures (issue 54 part 3, `mdp::measure`) against their definitions,
//! computed by brute force in exact rationals (QIF-* rows in `spec/theorems.md`).

use mdp::exact::{sum_tree, Q};
use mdp::io::{self, Limits};
use mdp::measure::{measures, prior_of, Gain};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common;

/// A channel on n points of a line (manhattan: rational distances), K = n outputs, with
/// entries 0..=9 (each row with a positive entry), and a prior with weights 0..=5.
fn arb_case() -> impl Strategy<Value = (Value, Vec<i64>)> {
    (2usize..6).prop_flat_map(|n| {
        (
            proptest::collection::vec(-20i64..20, n),
            proptest::collection::vec(proptest::collection::vec(0i64..10, n), n),
            proptest::collection::vec(0i64..6, n),
        )
            .prop_map(|(xs, mut m, mut prior)| {
                for r in &mut m {
                    if r.iter().all(|&e| e == 0) {
                        r[0] = 1;
                    }
                }
                if prior.iter().all(|&w| w == 0) {
                    prior[0] = 1;
                }
                (line_doc(&xs, m), prior)
            })
    })
}

/// A private channel: n ≤ 4 distinct integer points of a line (d ≥ 1 between any two) and
/// entries 1..=9, so every ratio is ≤ 9 < e^{100·d}: ε = 100 holds.
fn arb_private_case() -> impl Strategy<Value = (Value, Vec<i64>)> {
    (2usize..5).prop_flat_map(|n| {
        (
            proptest::sample::subsequence((-20i64..20).collect::<Vec<_>>(), n),
            proptest::collection::vec(proptest::collection::vec(1i64..10, n), n),
            proptest::collection::vec(1i64..6, n),
        )
            .prop_map(|(xs, m, prior)| (line_doc(&xs, m), prior))
    })
}

/// An `mdp/1` document at ε = 100 on points `xs` of a line (manhattan) with matrix `m`.
fn line_doc(xs: &[i64], m: Vec<Vec<i64>>) -> Value {
    json!({"format": "mdp/1", "epsilon": 100,
        "metric": {"kind": "manhattan", "points": xs.iter().map(|x| json!([x])).collect::<Vec<_>>()},
        "matrix": m})
}

fn q(i: i64) -> Q {
    Q::from_signeds(i, 1)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    /// QIF-BAYES, QIF-CAP, QIF-G, QIF-ERROR: every measure equals its definition computed by
    /// brute force (exact values exactly, enclosures containing the exact value or, for the
    /// entropy, the f64 value within 1e-9); posterior vulnerability ≥ prior; leakage ≤
    /// capacity, with equality at the uniform prior; the identity gain's g-vulnerability is
    /// Bayes vulnerability.
    #[test]
    fn measures_match_their_definitions((doc, w) in arb_case()) {
        let file = io::mechanism_from_value(&doc, &Limits::default()).unwrap();
        let n = file.space.n();
        let given: Vec<Q> = w.iter().map(|&x| q(x)).collect();
        let prior = prior_of(&file, Some(&given)).unwrap();
        let identity = Gain { rows: (0..n).map(|a| (0..n).map(|b| q(i64::from(a == b))).collect()).collect() };
        let m = measures(&file, &prior, Some(&identity)).unwrap();
        // Brute force.
        let h: Vec<Vec<Q>> = (0..n).map(|x| {
            let s = sum_tree(file.matrix.row(x).to_vec());
            file.matrix.row(x).iter().map(|e| e / &s).collect()
        }).collect();
        let j = |x: usize, y: usize| &prior[x] * &h[x][y];
        let pv = prior.iter().max().unwrap().clone();
        let post: Q = sum_tree((0..n).map(|y| (0..n).map(|x| j(x, y)).max().unwrap()).collect());
        let cap: Q = sum_tree((0..n).map(|y| (0..n).map(|x| h[x][y].clone()).max().unwrap()).collect());
        prop_assert_eq!(&m.prior_vulnerability, &pv);
        prop_assert_eq!(&m.posterior_vulnerability, &post);
        prop_assert!(post >= pv);
        prop_assert_eq!(&m.multiplicative_capacity, &cap);
        prop_assert!(m.multiplicative_leakage <= cap);
        prop_assert_eq!(m.g_vulnerability.clone().unwrap(), (pv.clone(), post.clone()));
        let bits = (mdp::exact::f64_nearest(&post) / mdp::exact::f64_nearest(&pv)).log2();
        prop_assert!(m.min_entropy_leakage_bits.lo <= bits + 1e-12 && bits - 1e-12 <= m.min_entropy_leakage_bits.hi);
        // The adversary's error: exact (manhattan distances are rational).
        let d = |a: usize, b: usize| file.space.points()[a][0].clone() - &file.space.points()[b][0];
        let dist = |a: usize, b: usize| { let v = d(a, b); if v < 0u32 { -v } else { v } };
        let err: Q = sum_tree((0..n).map(|y| {
            (0..n).map(|g| sum_tree((0..n).map(|x| j(x, y) * dist(x, g)).collect())).min().unwrap()
        }).collect());
        let e = mdp::exact::f64_nearest(&err);
        prop_assert!(m.adversary_error.lo <= e && e <= m.adversary_error.hi, "{:?} {}", m.adversary_error, e);
        // Each guess achieves its output's minimum.
        for (y, &g) in m.guesses.iter().enumerate() {
            let mine = sum_tree((0..n).map(|x| j(x, y) * dist(x, g)).collect());
            let best = (0..n).map(|g2| sum_tree((0..n).map(|x| j(x, y) * dist(x, g2)).collect())).min().unwrap();
            prop_assert!(mine == best || (0..n).all(|x| j(x, y) == 0u32));
        }
        // Conditional entropy in f64.
        let mut hf = 0.0f64;
        for y in 0..n {
            let py: f64 = (0..n).map(|x| mdp::exact::f64_nearest(&j(x, y))).sum();
            for x in 0..n {
                let jf = mdp::exact::f64_nearest(&j(x, y));
                if jf > 0.0 { hf += jf * (py / jf).log2(); }
            }
        }
        prop_assert!((m.conditional_entropy_bits.lo - 1e-9..=m.conditional_entropy_bits.hi + 1e-9).contains(&hf));
        // The uniform prior leaks the capacity.
        let uniform = prior_of(&file, None).unwrap();
        prop_assert_eq!(measures(&file, &uniform, None).unwrap().multiplicative_leakage, cap);
    }
}

#[test]
fn the_command_line_reports_every_field() {
    let mech = common::tmp("measure", "exp.json", None);
    let (code, _, err) = common::mdp(&[
        "build",
        "exponential",
        "--space",
        "builtin:rome100",
        "--epsilon",
        "1",
        "-o",
        &mech,
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = common::mdp(&["measure", &mech, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    for f in [
        "/bayes_vulnerability/prior",
        "/bayes_vulnerability/posterior",
        "/multiplicative_leakage",
        "/min_entropy_leakage_bits",
        "/multiplicative_capacity",
        "/adversary_error",
        "/guesses",
        "/conditional_entropy_bits",
        "/expected_loss",
        "/worst_loss",
        "/exact/multiplicative_leakage",
    ] {
        assert!(v.pointer(f).is_some(), "{f} missing: {out}");
    }
    assert_eq!(v["unit"], "km");
    assert_eq!(v["bayes_vulnerability"]["prior"], 0.01);
    assert_eq!(v["guesses"].as_array().unwrap().len(), 100);
    // The expected loss under the uniform prior is the audit's, within the enclosures.
    let (_, audit, _) = common::mdp_audit(&["--json", &mech]);
    let a: Value = serde_json::from_str(&audit).unwrap();
    let (lo, hi) = (
        v["expected_loss"][0].as_f64().unwrap(),
        v["expected_loss"][1].as_f64().unwrap(),
    );
    let (alo, ahi) = (
        a["loss_max"][0].as_f64().unwrap(),
        a["loss_max"][1].as_f64().unwrap(),
    );
    assert!(
        lo <= hi
            && v["worst_loss"][0].as_f64().unwrap() <= ahi
            && alo <= v["worst_loss"][1].as_f64().unwrap()
    );
    let gain = common::tmp("measure", "gain.json", Some(b"[[1, 0], [0, 1]]"));
    let (code, _, err) = common::mdp(&["measure", &mech, "--gain", &gain]);
    assert_eq!(code, 2);
    assert!(err.contains("gain[0]"), "{err}");
    let (code, out, _) = common::mdp(&["measure", &mech]);
    assert_eq!(code, 0);
    assert!(
        out.contains("adversary's error") && out.contains(" km"),
        "{out}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// REMAP: the Bayesian remap of a private mechanism passes its audit at the same ε, its
    /// expected loss (distance to the release) is the adversary's error, never above the
    /// original's, and equals the least expected loss over every deterministic map of the
    /// outputs to inputs (all n^n maps enumerated, exactly).
    #[test]
    fn remapping_is_private_and_optimal_among_all_maps((doc, w) in arb_private_case()) {
        let file = io::mechanism_from_value(&doc, &Limits::default()).unwrap();
        let n = file.space.n();
        let given: Vec<Q> = w.iter().map(|&x| q(x)).collect();
        let prior = prior_of(&file, Some(&given)).unwrap();
        let r = mdp::remap::remap(&file, &prior, &mdp::progress::Silent).unwrap();
        prop_assert_eq!(r.certified.report().verdict, mdp::audit::Verdict::Pass);
        let (after, err) = (r.expected_loss_after, r.before.adversary_error);
        prop_assert!(after.lo <= err.hi && err.lo <= after.hi, "{:?} {:?}", after, err);
        let before = r.expected_loss_before.unwrap();
        prop_assert!(after.lo <= before.hi);
        // Brute force over all maps, exactly.
        let h: Vec<Vec<Q>> = (0..n).map(|x| {
            let s = sum_tree(file.matrix.row(x).to_vec());
            file.matrix.row(x).iter().map(|e| e / &s).collect()
        }).collect();
        let dist = |a: usize, b: usize| { let v = file.space.points()[a][0].clone() - &file.space.points()[b][0]; if v < 0u32 { -v } else { v } };
        let mut best: Option<Q> = None;
        for code in 0..n.pow(n as u32) {
            let map: Vec<usize> = (0..n).map(|y| (code / n.pow(y as u32)) % n).collect();
            let loss = sum_tree((0..n).flat_map(|x| { let (h, prior, map) = (&h, &prior, &map); (0..n).map(move |y| &prior[x] * &h[x][y] * dist(x, map[y])) }).collect());
            best = Some(match best { Some(b) if b <= loss => b, _ => loss });
        }
        let b = mdp::exact::f64_nearest(&best.unwrap());
        prop_assert!(after.lo <= b && b <= after.hi, "{:?} {}", after, b);
    }
}

#[test]
fn remap_on_the_command_line_writes_an_audited_file() {
    let mech = common::tmp("measure", "remap_in.json", None);
    let (code, _, err) = common::mdp(&[
        "build",
        "exponential",
        "--space",
        "builtin:rome100",
        "--epsilon",
        "1",
        "-o",
        &mech,
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    let out = common::tmp("measure", "remap_out.json", None);
    let (code, summary, err) = common::mdp(&["remap", &mech, "-o", &out, "--json"]);
    assert_eq!(code, 0, "{err}");
    let s: Value = serde_json::from_str(&summary).unwrap();
    let (before, after) = (
        s["expected_loss_before"][1].as_f64().unwrap(),
        s["expected_loss_after"][0].as_f64().unwrap(),
    );
    assert!(after <= before, "{summary}");
    assert_eq!(s["map"].as_array().unwrap().len(), 100);
    // The remapped file is private at the original ε on the original space.
    let (code, _, err) = common::mdp_audit(&[
        "--quiet",
        "--require-epsilon",
        "1",
        "--space",
        "builtin:rome100",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    // Outputs that are opaque labels cannot be remapped.
    let labels = common::tmp("measure", "labels.json", Some(br#"{"epsilon": 1, "metric": {"kind": "euclidean", "points": [[0], [1]]}, "outputs": {"labels": ["p", "q"]}, "loss": {"cost": [[0, 1], [1, 0]]}, "matrix": [[0.6, 0.4], [0.4, 0.6]]}"#));
    let (code, _, err) = common::mdp(&["remap", &labels, "-o", &out]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("outputs") || err.contains("loss.cost"),
        "{err}"
    );
}
