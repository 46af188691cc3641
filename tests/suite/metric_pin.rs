//! The pipeline's metric, pinned (issue 53, `spec/threat-model.md` §2.1): a file that forges
//! its own metric passes a gate that states only ε, and fails one that states the metric
//! (`--space`, `--require-metric-digest`), through both binaries and the library; and a
//! property test that no field of a file's metric can be changed without failing a pinned
//! gate (PIN-EXACT in `spec/theorems.md`).

use mdp::audit::{audit, Options, Verdict};
use mdp::io::{self, Limits};
use mdp::pin::{MetricPin, PinnedSpace, View};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::sync::Arc;

use crate::common;
use common::{mdp_audit, mdp_in};

fn tmp(name: &str, bytes: Option<&[u8]>) -> String {
    common::tmp("metric_pin", name, bytes)
}

fn write(name: &str, doc: &Value) -> String {
    tmp(name, Some(doc.to_string().as_bytes()))
}

/// Five New York delivery points (lat, lon in degrees), labelled.
const NYC: &str = "id,lat,lng\nc0,40.7128,-74.0060\nc1,40.7306,-73.9866\nc2,40.7580,-73.9855\nc3,40.7484,-73.9857\nc4,40.7061,-74.0087\n";

/// The forgery of issue 53: the same points with the radius raised 1000× (distances in
/// metres read as km) and a 99 %-truthful matrix, which is ε = 1 private for that metric.
fn forged_radius(genuine: &Value) -> Value {
    let mut f = genuine.clone();
    f["metric"]["radius"] = json!("6371008.8");
    let n = f["matrix"].as_array().unwrap().len();
    let off = format!("1/{}", 100 * (n - 1));
    f["matrix"] = Value::Array(
        (0..n)
            .map(|i| {
                Value::Array(
                    (0..n)
                        .map(|j| {
                            json!(if i == j {
                                "99/100".to_string()
                            } else {
                                off.clone()
                            })
                        })
                        .collect(),
                )
            })
            .collect(),
    );
    f
}

fn digest_of(path: &str) -> String {
    let (code, out, err) = mdp_audit(&["--json", path]);
    assert!(code <= 1, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    v["metric_digest"].as_str().unwrap().to_string()
}

#[test]
fn a_forged_radius_passes_an_epsilon_gate_and_fails_a_pinned_one() {
    let space = tmp("nyc.csv", Some(NYC.as_bytes()));
    let mech = tmp("nyc_exp.json", None);
    let (code, _, err) = mdp_in(
        &[
            "build",
            "exponential",
            "--space",
            &space,
            "--epsilon",
            "1",
            "-o",
            &mech,
            "--quiet",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let genuine: Value = serde_json::from_str(&std::fs::read_to_string(&mech).unwrap()).unwrap();
    let forged = write("nyc_forged.json", &forged_radius(&genuine));
    let good = digest_of(&mech);

    // The hole: a gate that states only ε passes the forgery.
    let eps_gate = ["--quiet", "--require-epsilon", "1"];
    assert_eq!(
        mdp_audit(&[&eps_gate[..], &[forged.as_str()]].concat()).0,
        0
    );
    // Pinned by the pipeline's space or by the genuine digest, it fails (exit 1) and says
    // where the metrics differ; the genuine file passes both.
    let (code, out, _) = mdp_audit(&["--require-epsilon", "1", "--space", &space, &forged]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("[FAIL] metric") && out.contains("radius"),
        "{out}"
    );
    assert_eq!(
        mdp_audit(&[
            "--require-epsilon",
            "1",
            "--require-metric-digest",
            &good,
            &forged
        ])
        .0,
        1
    );
    assert_eq!(
        mdp_audit(&["--require-epsilon", "1", "--space", &space, &mech]).0,
        0
    );
    let prefixed = format!("sha256:{}", good.to_uppercase());
    assert_eq!(
        mdp_audit(&[
            "--require-epsilon",
            "1",
            "--require-metric-digest",
            &prefixed,
            &mech
        ])
        .0,
        0
    );
    assert_eq!(mdp_audit(&["--require-metric-digest", "12ab", &mech]).0, 2);

    // The sampler: no metric stated is a refusal (exit 2); the pinned space refuses the
    // forgery (exit 1) and samples the genuine file; trusting the file is explicit.
    let records = "c0\nc3\n";
    let (code, _, err) = mdp_in(&["privatize", "--mechanism", &forged], records);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--trust-file-metric"), "{err}");
    let (code, _, err) = mdp_in(
        &["privatize", "--mechanism", &forged, "--space", &space],
        records,
    );
    assert_eq!(code, 1, "{err}");
    let (code, out, err) = mdp_in(
        &[
            "privatize",
            "--mechanism",
            &mech,
            "--space",
            &space,
            "--seed",
            "4",
        ],
        records,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 2);
    let (code, _, err) = mdp_in(
        &[
            "privatize",
            "--mechanism",
            &forged,
            "--require-metric-digest",
            &good,
        ],
        records,
    );
    assert_eq!(code, 1, "{err}");
    let (code, _, err) = mdp_in(
        &[
            "privatize",
            "--mechanism",
            &mech,
            "--trust-file-metric",
            "--seed",
            "4",
        ],
        records,
    );
    assert_eq!(code, 0, "{err}");
}

#[test]
fn scaled_points_permuted_labels_and_changed_tables_fail_a_pinned_gate() {
    let pts = json!({"kind": "euclidean", "points": [[0], [1], [3]], "labels": ["a", "b", "c"]});
    let table = json!({"kind": "explicit", "distances": [[0, 1, 2], [1, 0, 1], [2, 1, 0]]});
    let graph = json!({"kind": "graph", "nodes": 3, "edges": [[0, 1, 1], [1, 2, 1]]});
    let uniform = json!([
        ["1/3", "1/3", "1/3"],
        ["1/3", "1/3", "1/3"],
        ["1/3", "1/3", "1/3"]
    ]);
    let doc = |metric: &Value| json!({"format": "mdp/1", "epsilon": 1, "metric": metric, "matrix": uniform});
    let scaled =
        json!({"kind": "euclidean", "points": [[0], [1000], [3000]], "labels": ["a", "b", "c"]});
    let permuted =
        json!({"kind": "euclidean", "points": [[0], [1], [3]], "labels": ["b", "a", "c"]});
    let wider = json!({"kind": "explicit", "distances": [[0, 1, 2], [1, 0, 5], [2, 5, 0]]});
    let heavier = json!({"kind": "graph", "nodes": 3, "edges": [[0, 1, 1], [1, 2, 7]]});
    for (pinned, genuine, forged) in [
        (&pts, &pts, &scaled),
        (&pts, &pts, &permuted),
        (&table, &table, &wider),
        // A graph pinned by its edges against a file that carries its table.
        (&graph, &table, &heavier),
    ] {
        let space = write("space.json", pinned);
        let ok = write("genuine.json", &doc(genuine));
        let bad = write("forged.json", &doc(forged));
        let (code, out, _) = mdp_audit(&["--space", &space, &ok]);
        assert_eq!(code, 0, "{pinned}: {out}");
        let (code, out, _) = mdp_audit(&["--space", &space, &bad]);
        assert_eq!(code, 1, "{forged}: {out}");
        assert!(out.contains("[FAIL] metric"), "{out}");
    }
}

/// `--label-column` (issue 53 item 7) chooses the labels a build writes, and the same
/// choice pins them: the file built with `--label-column code`, audited
/// against the CSV read with the default labels, fails the metric check.
#[test]
fn label_column_reaches_the_file_and_the_pin() {
    let csv = tmp(
        "coded.csv",
        Some(b"name,code,x\nAlpha,A-1,0\nBeta,B-2,1\nGamma,G-3,3\n"),
    );
    let out = tmp("coded.json", None);
    let build = |extra: &[&str]| {
        let mut args = vec![
            "build",
            "exponential",
            "--space",
            &csv,
            "--epsilon",
            "1",
            "-o",
            &out,
        ];
        args.extend_from_slice(extra);
        common::mdp(&args)
    };
    let (code, _, err) = build(&["--label-column", "code"]);
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert_eq!(doc["metric"]["labels"], json!(["A-1", "B-2", "G-3"]));
    let (code, stdout, _) = mdp_audit(&["--space", &csv, "--label-column", "code", &out]);
    assert_eq!(code, 0, "{stdout}");
    let (code, stdout, _) = mdp_audit(&["--space", &csv, &out]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("[FAIL] metric"), "{stdout}");
    let (code, _, err) = build(&["--label-column", "zip"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--label-column") && err.contains("zip"),
        "{err}"
    );
}

#[test]
fn a_container_is_pinned_as_its_json_form_is() {
    let space = tmp("nyc_c.csv", Some(NYC.as_bytes()));
    let header = tmp("nyc_c.json", None);
    let (code, _, err) = mdp_in(
        &[
            "build",
            "exponential",
            "--space",
            &space,
            "--epsilon",
            "1",
            "--container",
            "-o",
            &header,
            "--quiet",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(mdp_audit(&["--quiet", "--space", &space, &header]).0, 0);
    let mut h: Value = serde_json::from_str(&std::fs::read_to_string(&header).unwrap()).unwrap();
    h["metric"]["radius"] = json!("6371008.8");
    std::fs::write(&header, h.to_string()).unwrap();
    let (code, out, _) = mdp_audit(&["--space", &space, &header]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("radius"), "{out}");
    let (code, _, err) = mdp_in(
        &["privatize", "--mechanism", &header, "--space", &space],
        "c0\n",
    );
    assert_eq!(code, 1, "{err}");
}

/// A metric object of one of five kinds, with labels, and a mutation of one of its fields.
fn arb_metric() -> impl Strategy<Value = Value> {
    (0usize..5, 2usize..6).prop_flat_map(|(kind, n)| {
        (
            Just(kind),
            proptest::collection::vec(proptest::collection::vec(-9000i64..9000, 2), n),
            proptest::collection::vec(1i64..50, n),
        )
            .prop_map(move |(kind, pts, w)| {
                let labels: Vec<String> = (0..pts.len()).map(|i| format!("p{i}")).collect();
                let coord = |x: i64| json!(format!("{}/100", x));
                let lat_lon = |p: &Vec<i64>| json!([format!("{}/100", p[0] % 8000), format!("{}/100", p[1])]);
                let name = ["euclidean", "manhattan", "chebyshev"][kind.min(2)];
                match kind {
                    0..=2 => json!({
                        "kind": name,
                        "points": pts.iter().map(|p| json!([coord(p[0]), coord(p[1])])).collect::<Vec<_>>(),
                        "labels": labels}),
                    3 => json!({"kind": "haversine", "points": pts.iter().map(lat_lon).collect::<Vec<_>>(),
                                "labels": labels}),
                    _ => json!({"kind": "graph", "nodes": pts.len(),
                                // A path: every edge is a shortest path, so each weight is a distance.
                                "edges": (1..pts.len()).map(|i| json!([i - 1, i, w[i]])).collect::<Vec<_>>(),
                                "labels": labels}),
                }
            })
    })
}

/// One field of `m` changed: a coordinate, the radius, a label, the kind, or an edge weight.
fn mutate(m: &Value, which: usize, by: i64) -> Option<Value> {
    let mut m = m.clone();
    let by = if by == 0 { 1 } else { by };
    let kind = m["kind"].as_str().unwrap().to_string();
    match (which % 4, kind.as_str()) {
        (0, "graph") => {
            let e = &mut m["edges"][0][2];
            *e = json!(e.as_i64().unwrap() + by.abs());
        }
        (0, _) => {
            let s = m["points"][0][1].as_str().unwrap().to_string();
            let num: i64 = s.split_once('/').unwrap().0.parse().unwrap();
            m["points"][0][1] = json!(format!("{}/100", num + by));
        }
        (1, "haversine") => m["radius"] = json!(format!("{}", 6371 + by.abs())),
        (1, "graph") => return None,
        (1, _) => {
            m["kind"] = json!(if kind == "euclidean" {
                "manhattan"
            } else {
                "euclidean"
            })
        }
        (2, _) => m["labels"][0] = json!("forged"),
        _ => {
            let labels = m["labels"].as_array_mut().unwrap();
            labels.swap(0, 1);
        }
    }
    Some(m)
}

fn doc_on(metric: &Value) -> Value {
    let n = metric["labels"].as_array().unwrap().len();
    let row: Vec<Value> = (0..n).map(|_| json!(format!("1/{n}"))).collect();
    json!({"format": "mdp/1", "epsilon": 1, "metric": metric, "matrix": vec![row; n]})
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    /// PIN-EXACT: the uniform mechanism is private on every metric, so only the `metric`
    /// check can fail: a file on the pinned metric passes, and a file whose metric differs
    /// in any one field (a coordinate, the radius, an edge weight, the kind, a label, the
    /// labels' order) fails, and its digest differs.
    #[test]
    fn no_metric_field_changes_without_failing_a_pinned_gate(
        metric in arb_metric(), which in 0usize..4, by in -50i64..50,
    ) {
        let limits = Limits::default();
        let (space, labels) = io::space_and_labels_from_json(&metric, &limits).unwrap();
        let pinned = PinnedSpace::of_space("pinned", space, labels);
        let want = mdp::pin::digest(&View::of_geometry(&pinned.geometry, pinned.labels.as_deref()));
        let opts = Options { metric: MetricPin::Space(Arc::new(pinned)), ..Options::default() };
        let genuine = io::mechanism_from_value(&doc_on(&metric), &limits).unwrap();
        let r = audit(&genuine, &opts).unwrap();
        prop_assert_eq!(r.verdict, Verdict::Pass);
        prop_assert_eq!(&r.metric_digest, &want);
        let Some(changed) = mutate(&metric, which, by) else { return Ok(()) };
        let forged = io::mechanism_from_value(&doc_on(&changed), &limits).unwrap();
        let r = audit(&forged, &opts).unwrap();
        prop_assert_eq!(r.verdict, Verdict::Fail, "{} -> {}", metric, changed);
        prop_assert!(r.checks.iter().any(|c| c.name == "metric" && c.verdict == Verdict::Fail));
        prop_assert_ne!(&r.metric_digest, &want);
        let by_digest = Options { metric: MetricPin::Digest(want.clone()), ..Options::default() };
        prop_assert_eq!(audit(&forged, &by_digest).unwrap().verdict, Verdict::Fail);
        prop_assert_eq!(audit(&genuine, &by_digest).unwrap().verdict, Verdict::Pass);
    }
}
