//! The finite channels of location privacy's everyday tools (issue 54 part 2): the
//! truncated geometric mechanism and k-ary randomized response, exact and certified, equal
//! to libqif's formulas up to the rounding of e^{−ε·s} (outward, so never less private), on
//! the generated spaces `line:N,STEP` and `categories:K`; and the planar Laplace on a grid
//! (`grid:W,H,STEP`), each entry an enclosed integral.

use crate::common;
use common::{mdp, mdp_audit};
use mdp::exact::{f64_nearest, parse_rational, Q};
use mdp::io::Limits;
use mdp::produce::{
    produce, Family, GeometricMech, PlanarGeometricGridMech, PlanarLaplaceGridMech,
    RandomizedResponseMech, Request,
};
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
        let out = build(spec, eps, Family::Geometric(GeometricMech));
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
    let out = build(
        "categories:5",
        "1",
        Family::RandomizedResponse(RandomizedResponseMech),
    );
    assert_eq!(out.certified.report().verdict, mdp::Verdict::Pass);
    let m = &out.certified.file().matrix;
    let e = std::f64::consts::E;
    assert!((f64_nearest(m.get(0, 0)) - e / (e + 4.0)).abs() < 1e-15);
    assert!((f64_nearest(m.get(0, 3)) - 1.0 / (e + 4.0)).abs() < 1e-15);
    // On a space whose least distance is 0.5, the ratio is e^{ε/2}.
    let out = build(
        "line:3,0.5",
        "2",
        Family::RandomizedResponse(RandomizedResponseMech),
    );
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

/// PL-GRID: the planar Laplace grid channel is certified at ε, its rows sum to exactly 1, it
/// has the grid's symmetries (mirroring input and output together leaves an entry as it
/// is), its corner cells hold the mass outside the grid, and more ε means more mass on the
/// diagonal.
#[test]
fn planar_laplace_grid_is_certified_symmetric_and_lumps_the_outside() {
    for (spec, eps, w, h) in [
        ("grid:4,3,1", "1", 4usize, 3usize),
        ("grid:3,3,0.5", "3", 3, 3),
    ] {
        let out = build(spec, eps, Family::PlanarLaplaceGrid(PlanarLaplaceGridMech));
        let report = out.certified.report();
        assert_eq!(report.verdict, mdp::Verdict::Pass, "{spec}");
        assert!(
            report.epsilon_tight[1].unwrap() <= f64_nearest(&q(eps)),
            "{spec}"
        );
        let m = &out.certified.file().matrix;
        let n = w * h;
        let mirror_x = |i: usize| (w - 1 - i % w) + w * (i / w);
        let mirror_y = |i: usize| i % w + w * (h - 1 - i / w);
        for x in 0..n {
            let row: Q = (0..n).map(|c| m.get(x, c).clone()).sum();
            assert_eq!(row, Q::from(1u32), "{spec}: row {x}");
            for c in 0..n {
                for (a, b) in [(mirror_x(x), mirror_x(c)), (mirror_y(x), mirror_y(c))] {
                    let (u, v) = (f64_nearest(m.get(x, c)), f64_nearest(m.get(a, b)));
                    assert!(
                        (u - v).abs() <= 1e-15 * u.max(v),
                        "{spec}: [{x}][{c}] {u} vs [{a}][{b}] {v}"
                    );
                }
            }
        }
        // The corner cell holds the quadrant beyond it: seen from its own centre that is more
        // than the quarter of the plane behind the centre (a finite cell of these sizes holds
        // less than a quarter at these ε).
        assert!(
            *m.get(0, 0) > q("1/4"),
            "{spec}: {}",
            f64_nearest(m.get(0, 0))
        );
        assert!(*m.get(w + 1, w + 1) < q("1/4"), "{spec}: an interior cell");
    }
    let lo = build(
        "grid:3,3,1",
        "1/2",
        Family::PlanarLaplaceGrid(PlanarLaplaceGridMech),
    );
    let hi = build(
        "grid:3,3,1",
        "2",
        Family::PlanarLaplaceGrid(PlanarLaplaceGridMech),
    );
    let (lo, hi) = (&lo.certified.file().matrix, &hi.certified.file().matrix);
    for x in 0..9 {
        assert!(
            hi.get(x, x) > lo.get(x, x),
            "more ε, more mass at home ({x})"
        );
    }
    // Not a grid: refused naming the form.
    let space = mdp::import::load_space("line:4", None, &Limits::default()).unwrap();
    let err = produce(
        &Request::new(&space, "line:4", q("1")),
        &Family::PlanarLaplaceGrid(PlanarLaplaceGridMech),
        &Silent,
    )
    .unwrap_err();
    assert!(err.to_string().contains("grid:W,H,STEP"), "{err}");
}

#[test]
fn planar_laplace_grid_on_the_command_line_is_pinned_to_its_grid() {
    let out = common::tmp("geo_families", "plg.json", None);
    let (code, _, err) = mdp(&[
        "build",
        "planar-laplace",
        "--space",
        "grid:3,2,0.5",
        "--epsilon",
        "2",
        "-o",
        &out,
        "--quiet",
    ]);
    assert_eq!(code, 0, "{err}");
    let (code, report, _) = mdp_audit(&["--require-epsilon", "2", "--space", "grid:3,2,0.5", &out]);
    assert_eq!(code, 0, "{report}");
    let (code, report, _) = mdp_audit(&["--require-epsilon", "2", "--space", "grid:2,3,0.5", &out]);
    assert_eq!(code, 1, "a transposed grid is another metric: {report}");
    let (code, _, err) = mdp(&[
        "build",
        "planar-laplace",
        "--space",
        "grid:3",
        "--epsilon",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("count"), "{err}");
}

/// PL-GEOM: the planar geometric grid channel is certified at ε, rows sum to exactly 1, it has
/// the grid's mirror symmetries, and its ratios between neighbouring inputs reach e^{ε·s} only
/// in the limit (tight ε below ε); a too fine ε·step is refused naming the bound.
#[test]
fn planar_geometric_grid_is_certified_and_symmetric() {
    let (w, h) = (4usize, 3usize);
    let out = build(
        "grid:4,3,1/2",
        "2",
        Family::PlanarGeometricGrid(PlanarGeometricGridMech),
    );
    let report = out.certified.report();
    assert_eq!(report.verdict, mdp::Verdict::Pass);
    assert!(report.epsilon_tight[1].unwrap() <= 2.0);
    let m = &out.certified.file().matrix;
    let n = w * h;
    let mirror_x = |i: usize| (w - 1 - i % w) + w * (i / w);
    for x in 0..n {
        let row: Q = (0..n).map(|c| m.get(x, c).clone()).sum();
        assert_eq!(row, Q::from(1u32), "row {x}");
        for c in 0..n {
            let (u, v) = (
                f64_nearest(m.get(x, c)),
                f64_nearest(m.get(mirror_x(x), mirror_x(c))),
            );
            assert!((u - v).abs() <= 1e-15 * u.max(v), "[{x}][{c}] {u} vs {v}");
        }
    }
    // Interior entries are c·e^{−ε_noise·d}: from cell (1, 1), itself and its interior
    // neighbour (2, 1) at distance 1/2 differ by e^{ε_noise/2}, ε_noise within 10⁻³ of ε.
    let ratio = f64_nearest(m.get(5, 5)) / f64_nearest(m.get(5, 6));
    assert!((ratio - 1f64.exp()).abs() < 3e-3, "{ratio}");
    // At the smallest ε·s accepted, 0.05 (sums of about 10⁶ enclosed terms), still certified.
    let fine = build(
        "grid:3,3,0.05",
        "1",
        Family::PlanarGeometricGrid(PlanarGeometricGridMech),
    );
    assert_eq!(fine.certified.report().verdict, mdp::Verdict::Pass);
    let (code, _, err) = mdp(&[
        "build",
        "planar-geometric",
        "--space",
        "grid:3,3,0.01",
        "--epsilon",
        "1",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("0.05"), "{err}");
}
