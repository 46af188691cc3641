//! The finite channels of location privacy's everyday tools (issue 54 part 2): the
//! truncated geometric mechanism and k-ary randomized response, exact and certified, equal
//! to libqif's formulas up to the rounding of e^{−ε·s} (outward, so never less private), on
//! the generated spaces `line:N,STEP` and `categories:K`.

mod common;
use common::{mdp, mdp_audit};
use mdp::exact::{f64_nearest, parse_rational, Q};
use mdp::io::Limits;
use mdp::produce::{produce, Family, Request};
use mdp::progress::Silent;

fn q(s: &str) -> Q {
    parse_rational(s).unwrap()
}

fn build(spec: &str, eps: &str, family: Family) -> mdp::Produced {
    let space = mdp::import::load_space(spec, None, &Limits::default()).unwrap();
    produce(&Request::new(&space, spec, q(eps)), &family, &Silent).unwrap()
}

#[test]
fn geometric_is_the_truncated_geometric_and_certified() {
    for (spec, eps, step) in [
        ("line:7,1", "1", 1.0),
        ("line:12,0.25", "3/2", 0.25),
        ("line:2", "1/10", 1.0),
    ] {
        let out = build(spec, eps, Family::Geometric);
        let report = out.certified.report();
        assert_eq!(report.verdict, mdp::Verdict::Pass, "{spec}");
        let m = &out.certified.file().matrix;
        let n = m.rows;
        let a = (-f64_nearest(&q(eps)) * step).exp();
        for i in 0..n {
            let row: Q = (0..n).map(|j| m.get(i, j).clone()).sum();
            assert_eq!(row, Q::from(1u32), "{spec}: row {i} sums exactly to 1");
            for j in 0..n {
                let expect = if j == 0 {
                    a.powi(i as i32)
                } else if j == n - 1 {
                    a.powi((n - 1 - i) as i32)
                } else {
                    (1.0 - a) * a.powi(i.abs_diff(j) as i32)
                } / (1.0 + a);
                let got = f64_nearest(m.get(i, j));
                assert!(
                    (got - expect).abs() <= 1e-15,
                    "{spec} [{i}][{j}]: {got} vs {expect}"
                );
            }
        }
        // The tight ε is ε itself, up to α's rounding (never above).
        let hi = report.epsilon_tight[1].unwrap();
        let e = f64_nearest(&q(eps));
        assert!(
            hi <= e * (1.0 + 1e-15) && hi > e * (1.0 - 1e-12),
            "{spec}: {hi}"
        );
    }
}

#[test]
fn randomized_response_is_k_rr_at_the_least_distance() {
    let out = build("categories:5", "1", Family::RandomizedResponse);
    assert_eq!(out.certified.report().verdict, mdp::Verdict::Pass);
    let m = &out.certified.file().matrix;
    let e = std::f64::consts::E;
    assert!((f64_nearest(m.get(0, 0)) - e / (e + 4.0)).abs() < 1e-15);
    assert!((f64_nearest(m.get(0, 3)) - 1.0 / (e + 4.0)).abs() < 1e-15);
    // On a space whose least distance is 0.5, the ratio is e^{ε/2}.
    let out = build("line:3,0.5", "2", Family::RandomizedResponse);
    let m = &out.certified.file().matrix;
    let ratio = f64_nearest(m.get(1, 1)) / f64_nearest(m.get(1, 0));
    assert!((ratio - 1f64.exp()).abs() < 1e-12, "{ratio}");
}

#[test]
fn the_command_line_builds_pins_and_refuses() {
    let dir = common::tmp("geo_families", "g.json", None);
    let (code, _, err) = mdp(&[
        "build",
        "geometric",
        "--space",
        "line:9,0.5",
        "--epsilon",
        "2",
        "-o",
        &dir,
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, out, _) = mdp_audit(&["--require-epsilon", "2", "--space", "line:9,0.5", &dir]);
    assert_eq!(code, 0, "{out}");
    let (code, out, _) = mdp_audit(&["--require-epsilon", "2", "--space", "line:9,1", &dir]);
    assert_eq!(code, 1, "a different step is a different metric: {out}");
    for (args, what) in [
        (
            vec![
                "build",
                "geometric",
                "--space",
                "categories:3",
                "--epsilon",
                "1",
            ],
            "line",
        ),
        (
            vec!["build", "geometric", "--space", "line:0", "--epsilon", "1"],
            "count",
        ),
        (
            vec![
                "build",
                "geometric",
                "--space",
                "line:3,-1",
                "--epsilon",
                "1",
            ],
            "step",
        ),
        (
            vec![
                "build",
                "randomized-response",
                "--space",
                "categories:2,3",
                "--epsilon",
                "1",
            ],
            "categories:K",
        ),
    ] {
        let (code, _, err) = mdp(&args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
}
