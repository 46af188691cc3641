//! Hostile input (issue "Safe by default", item 3): one regression per defect class and a
//! property test where the class has a law — tolerances decided outward, bound (8) under
//! `neighbors`, coordinate ranges, resource budgets (exit 2, one line), extreme values on
//! the command line.

use mdp::audit::{claimed_loss_check, Verdict};
use mdp::exact::float::FI;
use mdp::exact::{q_from_f64, Q};
use proptest::prelude::*;
use serde_json::{json, Value};

use crate::common;

fn run(name: &str, args: &[&str]) -> (i32, String, String) {
    match name {
        "mdp" => common::mdp(args),
        _ => common::mdp_audit(args),
    }
}

fn write(name: &str, doc: &Value) -> String {
    common::tmp("hostile", name, Some(doc.to_string().as_bytes()))
}

/// Exit 2 with one line on stderr containing `needle`.
fn refused(name: &str, args: &[&str], needle: &str) {
    let (code, out, err) = run(name, args);
    assert_eq!(code, 2, "{args:?}: {err}");
    assert!(out.is_empty(), "{args:?}: {out}");
    assert_eq!(err.lines().count(), 1, "{args:?}: not one line: {err}");
    assert!(err.contains(needle), "{args:?}: {err:?} lacks {needle:?}");
}

fn uniform(n: usize) -> Value {
    let row: Vec<Value> = (0..n).map(|_| json!(format!("1/{n}"))).collect();
    Value::Array(vec![Value::Array(row); n])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// `claimed_loss` passes only if the claim is within tolerance of every L in the
    /// enclosure, and fails only if it is within tolerance of none (decided exactly).
    #[test]
    fn claimed_loss_is_decided_outward(
        lo in 1e-6f64..1e6, width in 0f64..1e-6, tol_ppb in 0u32..10_000, off in -2e-5f64..2e-5
    ) {
        let hi = lo * (1.0 + width);
        let tol = Q::from_unsigneds(tol_ppb, 1_000_000_000u32);
        let claim = q_from_f64(lo * (1.0 + off));
        let c = claimed_loss_check(&claim, FI::new(lo, hi), &tol);
        let within = |l: f64| {
            let l = q_from_f64(l);
            let d = if claim > l { &claim - &l } else { &l - &claim };
            d <= &tol * &l
        };
        // |claim − L| ≤ tol·L is convex in L: the endpoints decide the whole enclosure.
        match c.verdict {
            Verdict::Pass => prop_assert!(within(lo) && within(hi)),
            Verdict::Fail => prop_assert!(!within(lo) && !within(hi)),
            Verdict::Inconclusive => prop_assert!(!(within(lo) && within(hi))),
        }
    }

    /// Bound (8) never grows with Q, and is 0 when the chained distance is +∞.
    #[test]
    fn bound_eq8_decreases_in_q(q1 in 0f64..50.0, dq in 0f64..50.0, eps in 0.01f64..5.0) {
        let space = mdp::metric::Space::from_table(vec![
            vec![Q::from(0u32), Q::from(3u32)],
            vec![Q::from(3u32), Q::from(0u32)],
        ]).unwrap();
        let p = mdp::bounds::verify_packing(&space, &[0, 1], &Q::from(1u32), &[0, 1], 256).unwrap();
        let a = mdp::bounds::bound_eq8(&p, q1, eps);
        let b = mdp::bounds::bound_eq8(&p, q1 + dq, eps);
        prop_assert!(b.lo <= a.lo);
        prop_assert_eq!(mdp::bounds::bound_eq8(&p, f64::INFINITY, eps).lo, 0.0);
    }
}

#[test]
fn claimed_loss_just_outside_the_tolerance_never_passes() {
    // The old float test rounded 1 ± tol to nearest and the tolerance up: a claim a hair
    // beyond L(1 + tol) could pass.
    let l = 0.3;
    let tol = Q::from_unsigneds(1u32, 1_000_000_000u32);
    let edge = q_from_f64(l) * (Q::from(1u32) + &tol);
    let beyond =
        &edge + Q::from_unsigneds(1u32, 1u32 << 31) * &tol * q_from_f64(l) / Q::from(1u32 << 20);
    assert_eq!(
        claimed_loss_check(&edge, FI::point(l), &tol).verdict,
        Verdict::Pass
    );
    assert_ne!(
        claimed_loss_check(&beyond, FI::point(l), &tol).verdict,
        Verdict::Pass
    );
}

#[test]
fn bound_8_under_neighbors_uses_the_chained_distance() {
    // Two clusters {0,1}, {2,3} 10 apart; privacy claimed within η = 1 only: no guarantee
    // links the clusters, so bound (8) with the plain Q = 10 would be a false lower bound.
    let d = json!([
        [0, 1, 10, 11],
        [1, 0, 11, 10],
        [10, 11, 0, 1],
        [11, 10, 1, 0]
    ]);
    let doc = json!({
        "format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "explicit", "distances": d},
        "matrix": uniform(4),
        "neighbors": {"within": 1},
        "certificate": {"lower_bound": {"kind": "packing", "centers": [0, 2], "radius": "1/2"}},
    });
    let f = write("eq8.json", &doc);
    let (code, out, err) = run("mdp-audit", &["--json", "--allow-scoped", &f]);
    assert_eq!(code, 0, "{err}{out}");
    let r: Value = serde_json::from_str(&out).unwrap();
    let packing = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "packing")
        .unwrap();
    let detail = packing["detail"].as_str().unwrap();
    assert!(detail.contains("bound (8): 0.000000000e0"), "{detail}");
    assert!(detail.contains("Q ≤ inf"), "{detail}");
}

#[test]
fn coordinates_are_range_checked_for_outputs_and_radius() {
    let metric = json!({"kind": "haversine", "points": [[41.9, 12.5], [45.4, 9.2]]});
    let doc = json!({
        "format": "mdp/1", "epsilon": 1, "metric": metric,
        "matrix": [["1/2", "1/2"], ["1/2", "1/2"]],
        "outputs": {"points": [[100, 0], [0, 0]]},
    });
    refused(
        "mdp-audit",
        &[&write("outlat.json", &doc)],
        "outputs.points[0][0]: latitude",
    );
    let doc = json!({
        "format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "haversine", "points": [[41.9, 12.5], [45.4, 9.2]], "radius": "1e99999"},
        "matrix": [["1/2", "1/2"], ["1/2", "1/2"]],
    });
    refused("mdp-audit", &[&write("radius.json", &doc)], "metric.radius");
}

#[test]
fn budgets_refuse_with_one_line() {
    // A graph of 4000 nodes and no edges: refused before a 16M-entry table is allocated.
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "graph", "nodes": 4000, "edges": []}, "matrix": [[1]]});
    refused("mdp-audit", &[&write("graph.json", &doc)], "disconnected");
    // n² distances of a coordinate space count against --max-entries, even with K = 1.
    let pts: Vec<Value> = (0..11).map(|i| json!([i, 0])).collect();
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "euclidean", "points": pts},
        "outputs": {"of_inputs": [0]}, "matrix": vec![json!([1]); 11]});
    refused(
        "mdp-audit",
        &["--max-entries", "100", &write("n2.json", &doc)],
        "metric.points",
    );
    // A certificate number counts against --max-bits.
    let big = format!("1{}", "0".repeat(20_000));
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "explicit", "distances": [[0, 1], [1, 0]]},
        "matrix": uniform(2), "certificate": {"claimed_loss": big}});
    refused(
        "mdp-audit",
        &["--max-bits", "10000", &write("bits.json", &doc)],
        "--max-bits",
    );
    // One multiplier per privacy row.
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "explicit", "distances": [[0, 1], [1, 0]]},
        "matrix": uniform(2), "certificate": {"lower_bound": {"kind": "lp_dual",
            "objective": "max_loss", "value": 0, "beta": [1, 1],
            "gamma": [[0, 1, 0, "1/3"], [0, 1, 0, "1/5"]]}}});
    refused("mdp-audit", &[&write("dup.json", &doc)], "listed twice");
}

#[test]
fn extreme_command_line_values_are_input_errors() {
    for e in ["1e300", "1e10", "1e-400", "0"] {
        refused(
            "mdp",
            &[
                "build",
                "exponential",
                "--space",
                "builtin:rome100",
                "--epsilon",
                e,
                "-o",
                "/dev/null",
            ],
            "--epsilon",
        );
    }
    refused(
        "mdp",
        &[
            "build",
            "spanner",
            "--space",
            "builtin:rome100",
            "--epsilon",
            "1",
            "--k",
            "3000000000",
            "-o",
            "/dev/null",
        ],
        "--k",
    );
    refused(
        "mdp",
        &[
            "build",
            "optimal",
            "--space",
            "builtin:rome100",
            "--epsilon",
            "1",
            "--max-memory",
            "10M",
            "-o",
            "/dev/null",
        ],
        "--max-memory",
    );
    // ConstOPTMech counts its dense factorizations against the budget too (rome100, three
    // λ: about 20 MiB).
    refused(
        "mdp",
        &[
            "build",
            "constopt",
            "--space",
            "builtin:rome100",
            "--epsilon",
            "1",
            "--max-memory",
            "1M",
            "-o",
            "/dev/null",
        ],
        "--max-memory",
    );
    // A limit at u64::MAX does not wrap.
    let f = write(
        "ok.json",
        &json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "explicit", "distances": [[0, 1], [1, 0]]}, "matrix": uniform(2)}),
    );
    let (code, _, err) = run(
        "mdp-audit",
        &["--quiet", "--max-bytes", "18446744073709551615", &f],
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, _) = run(
        "mdp-audit",
        &["--quiet", "--max-precision", "1000000000000", &f],
    );
    assert_eq!(code, 2);
}

/// `--solver block` holds every privacy row of an expected loss (PMO): past its row limit
/// it refuses before allocating (one line, exit 2), instead of exhausting memory. (For the
/// max loss it solves cold working sets of at most that many rows, spec/lp.md §4.7.)
#[test]
fn block_solver_refuses_lps_past_its_row_limit() {
    let pts: Vec<Value> = (0..400).map(|i| json!([i, (i * 7) % 13])).collect();
    let space = write(
        "block400.json",
        &json!({"kind": "euclidean", "points": pts}),
    );
    refused(
        "mdp",
        &[
            "build",
            "pmo",
            "--space",
            &space,
            "--epsilon",
            "1",
            "--solver",
            "block",
            "-o",
            "/dev/null",
        ],
        "--solver",
    );
}

/// `--max-memory` counts `--solver block`'s every-row iterate too: on the default space
/// (100 inputs, 990 000 rows, ≈ 121 MiB of it) a budget the lazy-row interior point fits
/// in is refused for block, with one line naming the option, before anything is built.
#[test]
fn max_memory_counts_the_block_solver() {
    use mdp::lp::Solver;
    use mdp::produce::check_lp_memory;
    let ipm = mdp::lp::model::memory_estimate(100, 100);
    let budget = ipm + (50 << 20);
    assert!(check_lp_memory(100, 100, Solver::Ipm, budget).is_ok());
    assert!(check_lp_memory(100, 100, Solver::Block, budget).is_err());
    let budget = format!("{budget}");
    let (code, _, err) = run(
        "mdp",
        &[
            "build",
            "optimal",
            "--space",
            "builtin:rome100",
            "--epsilon",
            "1",
            "--solver",
            "block",
            "--max-memory",
            &budget,
            "-o",
            "/dev/null",
        ],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--max-memory") && err.contains("--solver block"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}

/// Issue 33: a misspelt field of a metric is an error naming it, not silently ignored.
#[test]
fn unknown_metric_fields_are_errors() {
    for (name, metric) in [
        (
            "lables.json",
            json!({"kind": "euclidean", "points": [[0], [1]], "lables": ["a", "b"]}),
        ),
        (
            "radious.json",
            json!({"kind": "haversine", "points": [[0, 0], [1, 1]], "radious": 6371}),
        ),
        (
            "explicit.json",
            json!({"kind": "explicit", "distances": [[0, 1], [1, 0]], "points": [[0], [1]]}),
        ),
    ] {
        let f = write(name, &metric);
        refused(
            "mdp",
            &["build", "exponential", "--space", &f, "--epsilon", "1"],
            "unknown field",
        );
        let mech = json!({"format": "mdp/1", "epsilon": 1, "metric": metric, "matrix": [[0.5, 0.5], [0.5, 0.5]]});
        let m = write(&format!("mech-{name}"), &mech);
        refused("mdp-audit", &[&m], "unknown field");
    }
}

/// Issue 33: a claimed loss whose float enclosure straddles the tolerance is decided by
/// the exact rational L(M) when the costs are rational (here L = 1 exactly, Manhattan).
#[test]
fn a_claimed_loss_is_decided_exactly_where_floats_cannot() {
    let third = "1/3";
    let doc = |claim: &str| {
        json!({
            "format": "mdp/1",
            "epsilon": 1,
            "metric": {"kind": "manhattan", "points": [[0], [1], [2]]},
            "matrix": [[third, third, third], [third, third, third], [third, third, third]],
            "certificate": {"claimed_loss": claim},
        })
    };
    // 10⁻¹⁶ above the tolerance band: the float enclosure cannot tell, the exact value can.
    let f = write("claim-just-over.json", &doc("1.0000000010000000001"));
    let (code, out, _) = run("mdp-audit", &["--loss-tolerance", "1e-9", &f]);
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("claimed_loss") && out.contains("exactly"),
        "{out}"
    );
    // At the edge of the band: a pass.
    let f = write("claim-at-edge.json", &doc("1.000000001"));
    let (code, out, _) = run("mdp-audit", &["--loss-tolerance", "1e-9", &f]);
    assert_eq!(code, 0, "{out}");
}
