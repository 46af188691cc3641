//! `mdp build optimal|pmo|spanner` and `mdp lp export`: produced files pass the audit, bad
//! input is one line on standard error with exit 2.

use crate::common;
use common::mdp;

fn tmp(name: &str, text: &str) -> String {
    common::tmp("cli-build", name, Some(text.as_bytes()))
}

const SPACE: &str =
    r#"{"kind": "euclidean", "points": [[0, 0], [1, 0], [0, 1], [1, 1.5], [2, 0.5], [0.3, 0.2]]}"#;

#[test]
fn lp_mechanisms_are_written_and_pass_the_audit() {
    let space = tmp("space.json", SPACE);
    for (mech, extra) in [
        ("optimal", vec![]),
        ("pmo", vec!["--within", "1.2"]),
        ("spanner", vec!["--k", "2"]),
    ] {
        let out = tmp(&format!("{mech}.json"), "");
        let mut args = vec![
            "build",
            mech,
            "--space",
            &space,
            "--epsilon",
            "1.5",
            "-o",
            &out,
            "--quiet",
        ];
        args.extend(extra.iter());
        let (code, _, err) = mdp(&args);
        assert_eq!(code, 0, "{mech}: {err}");
        let text = std::fs::read_to_string(&out).unwrap();
        let file = mdp::io::read_mechanism(text.as_bytes(), &mdp::io::Limits::default()).unwrap();
        // A scoped mechanism passes under a policy that accepts its η (and only then).
        let scope = mdp::audit::ScopePolicy::exactly(file.within.as_ref());
        let opts = mdp::audit::Options {
            scope,
            ..Default::default()
        };
        let r = mdp::audit::audit(&file, &opts).unwrap();
        assert_eq!(r.verdict, mdp::audit::Verdict::Pass, "{mech}");
        if file.within.is_some() {
            let strict = mdp::audit::audit(&file, &Default::default()).unwrap();
            assert_eq!(
                strict.verdict,
                mdp::audit::Verdict::Fail,
                "{mech}: scoped by default"
            );
        }
        assert_eq!(
            file.certificate.lp_dual.is_some(),
            mech != "spanner",
            "{mech}"
        );
        assert!(err.contains("stats: "), "{mech}: {err}");
    }
}

#[test]
fn lp_export_writes_every_row() {
    let space = tmp("space_export.json", SPACE);
    let out = tmp("lp.mps", "");
    let (code, _, err) = mdp(&[
        "lp",
        "export",
        "optimal",
        "--space",
        &space,
        "--epsilon",
        "1",
        "-o",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    // 6 points, no collinear triple with rational distances: 30 ordered pairs × 6 outputs.
    assert_eq!(text.lines().filter(|l| l.starts_with(" L p_")).count(), 180);
    assert!(text.starts_with("NAME") && text.trim_end().ends_with("ENDATA"));
    assert!(err.contains("180 privacy rows"), "{err}");
}

#[test]
fn bad_input_is_one_line_exit_2() {
    let space = tmp("space_bad.json", SPACE);
    let prior = tmp("prior.json", "[1, 2, 3]");
    let cost = tmp("cost.json", "[[0, 1], [1, 0]]");
    let outputs = tmp("outputs.json", "[0, 9]");
    let nonmetric = tmp(
        "nonmetric.json",
        r#"{"kind": "explicit", "distances": [[0, 1, 5], [1, 0, 1], [5, 1, 0]]}"#,
    );
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["build", "optimal", "--space", &space, "--epsilon", "0"],
            "--epsilon",
        ),
        (
            vec!["build", "optimal", "--space", &space, "--epsilon=-1"],
            "--epsilon",
        ),
        (
            vec![
                "build",
                "pmo",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--within",
                "0",
            ],
            "--within",
        ),
        (
            vec![
                "build",
                "spanner",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--k",
                "0",
            ],
            "--k",
        ),
        (
            vec![
                "build",
                "pmo",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--prior",
                &prior,
            ],
            "--prior",
        ),
        (
            vec![
                "build",
                "pmo",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--cost",
                &cost,
            ],
            "--cost",
        ),
        (
            vec![
                "build",
                "pmo",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--outputs",
                &outputs,
            ],
            "--outputs",
        ),
        (
            vec![
                "build",
                "pmo",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--gap",
                "0",
            ],
            "--gap",
        ),
        (
            vec![
                "build",
                "pmo",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--gap",
                "NaN",
            ],
            "--gap",
        ),
        (
            vec!["build", "optimal", "--space", &nonmetric, "--epsilon", "1"],
            "not a metric",
        ),
        // 6 points: a 36-entry table over a limit of 35 (the flag the message names exists).
        (
            vec![
                "build",
                "benders",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--within",
                "1",
                "--max-entries",
                "35",
            ],
            "--max-entries",
        ),
        (
            vec![
                "lp",
                "export",
                "pmo",
                "--space",
                &space,
                "--epsilon",
                "1",
                "--prior",
                &prior,
            ],
            "--prior",
        ),
    ];
    for (args, needle) in cases {
        let (code, _, err) = mdp(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// `--solver auto`, `build optimal`'s default (spec/lp.md §4.3), runs the block hybrid when
/// its every-row iterate fits `--max-memory` and the lazy-row interior point otherwise:
/// the hybrid's working set is a part of the rows, the interior point solves this small LP
/// whole; both builds are certified and pass.
#[test]
fn auto_solver_picks_block_only_within_the_memory_budget() {
    use mdp::lp::Solver;
    use mdp::produce::check_lp_memory;
    let pts: Vec<String> = (0..20)
        .map(|i| format!("[{}, {}]", i % 5, (i * 7) % 11))
        .collect();
    let space = tmp(
        "auto20.json",
        &format!(r#"{{"kind": "euclidean", "points": [{}]}}"#, pts.join(", ")),
    );
    // The block iterate adds 56 bytes for each of the 7 600 rows.
    let tight = mdp::lp::model::memory_estimate(20, 20) + 1000;
    assert!(check_lp_memory(20, 20, Solver::Ipm, tight).is_ok());
    assert!(check_lp_memory(20, 20, Solver::Block, tight).is_err());
    let rows = |budget: &str| -> (u64, u64) {
        let out = tmp("auto.json", "");
        let (code, _, err) = mdp(&[
            "build",
            "optimal",
            "--space",
            &space,
            "--epsilon",
            "1",
            "--max-memory",
            budget,
            "-o",
            &out,
            "--quiet",
        ]);
        assert_eq!(code, 0, "{err}");
        let line = err.lines().find(|l| l.starts_with("stats: ")).unwrap();
        let v: serde_json::Value = serde_json::from_str(&line["stats: ".len()..]).unwrap();
        assert_eq!(v["verdict"], "pass", "{err}");
        (
            v["lp"]["rows_generated"].as_u64().unwrap(),
            v["lp"]["rows_total"].as_u64().unwrap(),
        )
    };
    let (generated, total) = rows(&tight.to_string());
    assert_eq!(generated, total, "ipm solves the whole LP");
    let (generated, total) = rows("8G");
    assert!(
        generated < total,
        "block's working set: {generated} of {total}"
    );
}

/// Issue 33: no silent default ships the wrong space. Every build, calibration, bound and
/// sampler needs `--space`; only the demo keeps its embedded default.
#[test]
fn every_build_requires_a_space() {
    for args in [
        vec!["build", "exponential", "--epsilon", "1"],
        vec!["build", "optimal", "--epsilon", "1"],
        vec!["build", "pmo", "--epsilon", "1"],
        vec!["build", "constopt", "--epsilon", "1"],
        vec!["bound", "packing", "--epsilon", "1"],
        vec!["calibrate", "exponential", "--target", "1"],
        vec!["privatize", "--sampler", "madlib", "--epsilon", "1"],
    ] {
        let (code, _, err) = mdp(&args);
        assert_eq!(code, 2, "{args:?} ran without --space");
        assert!(err.contains("--space"), "{args:?}: {err}");
    }
}

/// Issue 33: dense exact builds (exponential, TEM) estimate their memory before any work
/// and refuse past --max-memory with a one-line error naming the flag; nothing is written.
#[test]
fn dense_builds_refuse_early_naming_the_flag() {
    for family in ["exponential", "tem"] {
        let out = tmp(&format!("dense-{family}.json"), "");
        std::fs::remove_file(&out).unwrap();
        let (code, _, err) = mdp(&[
            "build",
            family,
            "--space",
            "builtin:rome100",
            "--epsilon",
            "1",
            "--max-memory",
            "1M",
            "-o",
            &out,
        ]);
        assert_eq!(code, 2, "{family}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("raise --max-memory") && err.contains("n² = 10000"),
            "{err}"
        );
        assert!(!std::path::Path::new(&out).exists());
        let (code, _, err) = mdp(&[
            "build",
            family,
            "--space",
            "builtin:rome100",
            "--epsilon",
            "1",
            "--max-memory",
            "8M",
            "-o",
            &out,
        ]);
        assert_eq!(code, 0, "{family}: {err}");
    }
}

/// Issue 33: the PMO memory estimate within η is the localized LP's, not the whole LP's:
/// 300 points on a line within η = 2 are refused by the whole LP's lazy-row estimate
/// (≈ 405 MB against a 200 MB budget) but the localized LP fits and is built.
#[test]
fn pmo_within_eta_is_budgeted_by_its_localized_lp() {
    let pts: Vec<String> = (0..300).map(|i| format!("[{i}]")).collect();
    let space = tmp(
        "line300.json",
        &format!(r#"{{"kind": "euclidean", "points": [{}]}}"#, pts.join(",")),
    );
    let out = tmp("line300-pmo.json", "");
    let (code, _, err) = mdp(&[
        "build",
        "pmo",
        "--space",
        &space,
        "--epsilon",
        "1",
        "--within",
        "2",
        "--max-memory",
        "200M",
        "--quiet",
        "-o",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = common::mdp_audit(&["--quiet", "--allow-scoped", &out]);
    assert_eq!(code, 0, "{err}");
    // The whole LP (no η, so no localized LP) is still refused before it is built.
    let (code, _, err) = mdp(&[
        "build",
        "optimal",
        "--space",
        &space,
        "--epsilon",
        "1",
        "--max-memory",
        "200M",
        "-o",
        &out,
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-memory"), "{err}");
}

/// `mdp build optimal --outputs` (issue 53 item 7): OPTMech over a subset of the inputs as
/// outputs, certified by its own `lp_dual`; its worst-case loss is no better than OPTMech's
/// over every input (fewer columns, the same constraints); a repeated or foreign index is
/// exit 2 naming `--outputs`.
#[test]
fn optimal_takes_outputs() {
    let space = tmp("space-o.json", SPACE);
    let read = |p: &str| {
        let text = std::fs::read_to_string(p).unwrap();
        mdp::io::read_mechanism(text.as_bytes(), &mdp::io::Limits::default()).unwrap()
    };
    let loss = |p: &str| {
        let (code, out, err) = common::mdp_audit(&["--json", p]);
        assert_eq!(code, 0, "{out}{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        v["loss_max"][0].as_f64().unwrap()
    };
    let all = tmp("opt-all.json", "");
    let (code, _, err) = mdp(&[
        "build",
        "optimal",
        "--space",
        &space,
        "--epsilon",
        "1.5",
        "-o",
        &all,
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    let out = tmp("opt-sub.json", "");
    let outputs = tmp("outputs.json", "[0, 3, 4]");
    let (code, _, err) = mdp(&[
        "build",
        "optimal",
        "--space",
        &space,
        "--epsilon",
        "1.5",
        "--outputs",
        &outputs,
        "-o",
        &out,
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    let file = read(&out);
    assert_eq!((file.matrix.rows, file.matrix.cols), (6, 3));
    assert!(file.certificate.lp_dual.is_some());
    let text = std::fs::read_to_string(&out).unwrap();
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["outputs"]["of_inputs"], serde_json::json!([0, 3, 4]));
    assert!(
        loss(&out) >= loss(&all) - 1e-9,
        "{} < {}",
        loss(&out),
        loss(&all)
    );
    for (bad, what) in [
        ("[0, 3, 3]", "twice"),
        ("[0, 9]", "not an input"),
        ("[]", "at least one"),
    ] {
        let p = tmp("bad-outputs.json", bad);
        let (code, _, err) = mdp(&[
            "build",
            "optimal",
            "--space",
            &space,
            "--epsilon",
            "1",
            "--outputs",
            &p,
        ]);
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(
            err.contains("--outputs") && err.contains(what),
            "{bad}: {err}"
        );
    }
}

/// `--outputs spread:K` (issue 56 part 3): PMO within η over K = 12 of rome100's inputs,
/// those of the farthest-first traversal (`mdp::outputs::farthest_first` on the same space),
/// the rule stated in `meta.outputs`, the file certified and passing `mdp-audit`; K past n,
/// K = 0 and a rule that is not one are exit 2 naming `--outputs`.
#[test]
fn pmo_spreads_its_outputs() {
    let out = tmp("pmo-spread.json", "");
    let base = [
        "build",
        "pmo",
        "--space",
        "builtin:rome100",
        "--epsilon",
        "1",
        "--within",
        "2",
        "--quiet",
    ];
    let (code, _, err) = mdp(&[&base[..], &["--outputs", "spread:12", "-o", &out]].concat());
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let (space, _) = mdp::builtin::space("rome100").unwrap();
    let want = mdp::outputs::farthest_first(&space, 12);
    assert_eq!(doc["outputs"]["of_inputs"], serde_json::json!(want));
    assert_eq!(doc["meta"]["outputs"]["rule"], "farthest-first");
    assert_eq!(doc["meta"]["outputs"]["k"], 12);
    let (code, outp, err) = common::mdp_audit(&["--quiet", "--require-within", "2", &out]);
    assert_eq!(code, 0, "{outp}{err}");
    for (bad, what) in [
        ("spread:101", "only 100 inputs"),
        ("spread:0", "≥ 1"),
        ("spread:many", "≥ 1"),
    ] {
        let (code, _, err) = mdp(&[&base[..], &["--outputs", bad]].concat());
        assert_eq!(code, 2, "{bad}: {err}");
        assert!(
            err.contains("--outputs") && err.contains(what),
            "{bad}: {err}"
        );
    }
}
