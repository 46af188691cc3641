//! The kernel's own tests of the space loaders (`io::space`: every form `--space` takes, as
//! the metric pin reads them): built-in data sets, generated spaces, CSV and GeoJSON points
//! with their labels and `--label-column`, JSON metrics, and one-line errors naming what is
//! wrong. Issue 55: these paths were reached only from the solver crate's tests before.

use mdp_audit::exact::{parse_rational, Q};
use mdp_audit::io::space::{
    load_space, load_space_with_labels, space_from_csv, space_from_geojson,
};
use mdp_audit::io::Limits;
use mdp_audit::metric::{ExactDistance, MetricKind};

fn q(s: &str) -> Q {
    parse_rational(s).unwrap()
}

fn tmp(name: &str, text: &str) -> String {
    let dir = std::env::temp_dir().join(format!("mdp_audit_space_load_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

#[test]
fn builtin_and_generated_spaces() {
    let lim = Limits::default();
    let (rome, labels) = load_space_with_labels("builtin:rome100", None, &lim).unwrap();
    assert_eq!((rome.n(), rome.kind()), (100, MetricKind::Haversine));
    assert_eq!(labels.unwrap().len(), 100);
    let p = &rome.points()[0];
    assert!(p[0] > q("41") && p[0] < q("43"), "latitude first");
    let cities = load_space("builtin:cities40", None, &lim).unwrap();
    assert_eq!(cities.n(), 40);
    let e = load_space("builtin:nowhere", None, &lim)
        .unwrap_err()
        .to_string();
    assert!(e.contains("nowhere"), "{e}");

    assert_eq!(
        load_space("line:1", None, &lim).unwrap().n(),
        1,
        "one point is a space"
    );
    let line = load_space("line:4,0.5", None, &lim).unwrap();
    assert_eq!(line.points()[3], vec![q("1.5")]);
    let grid = load_space("grid:3,2,2", None, &lim).unwrap();
    assert_eq!((grid.n(), grid.kind()), (6, MetricKind::Euclidean));
    // Row-major with x fastest: point 4 is cell (1, 1).
    assert_eq!(grid.points()[4], vec![q("2"), q("2")]);
    assert_eq!(
        load_space("grid:3,2", None, &lim).unwrap().points()[5],
        vec![q("2"), q("1")]
    );
    let cats = load_space("categories:3", None, &lim).unwrap();
    assert_eq!(cats.n(), 3);
    assert!(matches!(cats.exact(0, 2), ExactDistance::Rational(d) if d == q("1")));
    for (spec, what) in [
        ("line:0", "count"),
        ("grid:3", "count"),
        ("grid:2,2,-1", "step"),
        ("line:3,x", "step"),
        ("line:3,0", "step"),
        ("categories:2,3", "categories:K"),
        ("square:3", "square:3"),
    ] {
        let e = load_space(spec, None, &lim).unwrap_err().to_string();
        assert!(e.contains(what), "{spec}: {e}");
    }
    let e = load_space("categories:3", Some("code"), &lim)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("label"),
        "a generated space has no label column: {e}"
    );
}

#[test]
fn csv_points_labels_and_the_label_column() {
    let lim = Limits::default();
    let text = "code,name,lat,lon\nA1,Colosseum,41.8902,12.4922\nB2,Pantheon,41.8986,12.4769\n";
    let (s, labels) = space_from_csv(text.as_bytes(), "stops.csv", None, &lim).unwrap();
    assert_eq!(s.kind(), MetricKind::Haversine);
    assert_eq!(labels.unwrap(), vec!["Colosseum", "Pantheon"]);
    assert_eq!(s.points()[1], vec![q("41.8986"), q("12.4769")]);
    let (_, labels) = space_from_csv(text.as_bytes(), "stops.csv", Some("code"), &lim).unwrap();
    assert_eq!(labels.unwrap(), vec!["A1", "B2"]);
    let e = space_from_csv(text.as_bytes(), "stops.csv", Some("lat"), &lim).unwrap_err();
    assert!(e.to_string().contains("lat"), "{e}");
    let e = space_from_csv(text.as_bytes(), "stops.csv", Some("zip"), &lim).unwrap_err();
    assert!(e.to_string().contains("zip"), "{e}");
    // Plane points: every numeric column a coordinate; CRLF line ends count lines right.
    let plane = "id,x,y\r\np,0,0\r\nq,3,4\r\n";
    let (s, _) = space_from_csv(plane.as_bytes(), "plane.csv", None, &lim).unwrap();
    assert_eq!(s.kind(), MetricKind::Euclidean);
    assert!(matches!(s.exact(0, 1), ExactDistance::SqrtOf(d) if d == q("25")));
    let bad = "id,x,y\r\np,0,0\r\nq,3,four\r\n";
    let e = space_from_csv(bad.as_bytes(), "plane.csv", None, &lim)
        .unwrap_err()
        .to_string();
    assert!(e.contains("plane.csv"), "{e}");
    let dup = "id,x\na,1\na,2\n";
    let e = space_from_csv(dup.as_bytes(), "dup.csv", None, &lim)
        .unwrap_err()
        .to_string();
    assert!(e.contains('a'), "{e}");
    // Through load_space by path, the same.
    let path = tmp("stops.csv", text);
    let (s, labels) = load_space_with_labels(&path, Some("code"), &lim).unwrap();
    assert_eq!((s.n(), labels.unwrap()[0].as_str()), (2, "A1"));
}

#[test]
fn geojson_points_and_json_metrics() {
    let lim = Limits::default();
    let fc = serde_json::json!({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {"name": "a", "code": "x1"},
         "geometry": {"type": "Point", "coordinates": [12.49, 41.89]}},
        {"type": "Feature", "properties": {"name": "b", "code": "x2"},
         "geometry": {"type": "Point", "coordinates": [12.48, 41.90, 20]}}]});
    let (s, labels) = space_from_geojson(&fc, "p.geojson", None, &lim).unwrap();
    assert_eq!(s.kind(), MetricKind::Haversine);
    assert_eq!(
        s.points()[0],
        vec![q("41.89"), q("12.49")],
        "[lon, lat] swapped"
    );
    assert_eq!(labels.unwrap(), vec!["a", "b"]);
    let (_, labels) = space_from_geojson(&fc, "p.geojson", Some("code"), &lim).unwrap();
    assert_eq!(labels.unwrap(), vec!["x1", "x2"]);
    let line = serde_json::json!({"type": "FeatureCollection", "features": [
        {"type": "Feature", "properties": {},
         "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}]});
    let e = space_from_geojson(&line, "l.geojson", None, &lim)
        .unwrap_err()
        .to_string();
    assert!(e.contains("l.geojson"), "{e}");
    let path = tmp("p.geojson", &fc.to_string());
    assert_eq!(load_space(&path, None, &lim).unwrap().n(), 2);
    // A JSON metric object: an explicit table.
    let table = tmp(
        "t.json",
        r#"{"kind": "explicit", "distances": [[0, 2], [2, 0]]}"#,
    );
    let s = load_space(&table, None, &lim).unwrap();
    assert!(matches!(s.exact(0, 1), ExactDistance::Rational(d) if d == q("2")));
    let e = load_space(&tmp("x.txt", "hello"), None, &lim)
        .unwrap_err()
        .to_string();
    assert!(!e.is_empty());
}

/// Every refusal of a CSV or GeoJSON point file, each naming the file and the row, column or
/// feature at fault (one line).
#[test]
fn csv_and_geojson_refusals_name_their_place() {
    let lim = Limits::default();
    let csv = |text: &str, label: Option<&str>| {
        space_from_csv(text.as_bytes(), "p.csv", label, &lim).map(|(s, _)| s.n())
    };
    let mut wrong = vec![];
    for (text, label, message) in [
        ("", None, "empty file"),
        ("1,2\n3,4\n", None, "a header row is required"),
        ("x,x\n1,2\n", None, "duplicate column name"),
        ("x,y\n1,2\n3\n", None, "has 1 fields, the header has 2"),
        ("x,y\n1,2\n3,\n", None, "empty value"),
        (
            "lat,y\n1,2\n",
            None,
            "a latitude column needs a longitude column",
        ),
        ("name,kind\na,b\n", None, "no numeric columns"),
        ("x,label\n1,\n", None, "empty label"),
        ("x\n", None, "no points"),
        ("lat,lon\n95,0\n", None, "latitude"),
        ("lat,lon\n0,200\n", None, "longitude"),
    ] {
        match csv(text, label) {
            Err(e) if e.to_string().contains(message) && !e.to_string().contains('\n') => {}
            other => wrong.push(format!("{text:?}: got {other:?}, expected {message:?}")),
        }
    }
    let geo = |v: serde_json::Value, label: Option<&str>| {
        space_from_geojson(&v, "p.geojson", label, &lim).map(|(s, _)| s.n())
    };
    let point = |x: f64, y: f64| serde_json::json!({"type": "Feature", "geometry": {"type": "Point", "coordinates": [x, y]}, "properties": {"code": "a"}});
    for (v, label, message) in [
        (
            serde_json::json!({"type": "Feature"}),
            None,
            "FeatureCollection",
        ),
        (
            serde_json::json!({"type": "FeatureCollection", "features": [{"type": "Feature"}]}),
            None,
            "geometry",
        ),
        (
            serde_json::json!({"type": "FeatureCollection", "features": [{"type": "Feature", "geometry": {"coordinates": [0, 0]}}]}),
            None,
            "geometry.type",
        ),
        (
            serde_json::json!({"type": "FeatureCollection", "features": [point(0.0, 95.0)]}),
            None,
            "[1]",
        ),
        (
            serde_json::json!({"type": "FeatureCollection", "features": [point(200.0, 0.0)]}),
            None,
            "[0]",
        ),
        (
            serde_json::json!({"type": "FeatureCollection", "features": [point(1.0, 2.0), {"type": "Feature", "geometry": {"type": "Point", "coordinates": [3, 4]}}]}),
            Some("code"),
            "has no properties.code",
        ),
    ] {
        match geo(v.clone(), label) {
            Err(e) if e.to_string().contains(message) => {}
            other => wrong.push(format!("{v}: got {other:?}, expected {message:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // A text column of a vector file labels the points; a second one is ignored with a
    // warning naming both.
    let (s, labels) = space_from_csv(
        b"word,tag,v0,v1\nrome,a,1,2\nparis,b,3,4\n",
        "v.csv",
        None,
        &lim,
    )
    .unwrap();
    assert_eq!(s.n(), 2);
    assert_eq!(labels, Some(vec!["rome".to_string(), "paris".to_string()]));
    assert!(
        s.warnings.iter().any(|w| w.contains("ignored")),
        "{:?}",
        s.warnings
    );
}

/// `builtin:blackhole:N:DELTA` (Imola et al. §3.1): d(w₁, wᵢ) = 1 and d(wᵢ, wⱼ) = δ/2 for
/// i, j ≥ 2; malformed names are refused by what is wrong.
#[test]
fn the_black_hole_space() {
    let lim = Limits::default();
    let (s, labels) = load_space_with_labels("builtin:blackhole:4:1/2", None, &lim).unwrap();
    assert_eq!(s.n(), 4);
    assert_eq!(labels.unwrap()[3], "w4");
    assert!(matches!(s.exact(0, 3), ExactDistance::Rational(d) if d == q("1")));
    assert!(matches!(s.exact(1, 2), ExactDistance::Rational(d) if d == q("1/4")));
    assert!(matches!(s.exact(2, 2), ExactDistance::Rational(d) if d == q("0")));
    for (spec, what) in [
        ("builtin:blackhole:4", "expected builtin:blackhole:N:DELTA"),
        ("builtin:blackhole:1:1/2", "N must be an integer ≥ 2"),
        ("builtin:blackhole:4:2", "DELTA must be in (0, 1]"),
        ("builtin:blackhole:4:0", "DELTA must be in (0, 1]"),
    ] {
        let e = load_space(spec, None, &lim).unwrap_err().to_string();
        assert!(e.contains(what), "{spec}: {e}");
    }
}

/// `--space` for a container's geometry: a graph file is kept as its edges (no table), any
/// other form becomes points.
#[test]
fn container_geometry_from_a_space_file() {
    use mdp_audit::io::container::Geometry;
    use mdp_audit::io::space::load_geometry;
    let lim = Limits::default();
    let g = tmp(
        "graph.json",
        r#"{"kind": "graph", "nodes": 3, "edges": [[0, 1, 1], [1, 2, 2]], "labels": ["a", "b", "c"]}"#,
    );
    let (geom, labels) = load_geometry(&g, None, &lim).unwrap();
    assert!(matches!(geom, Geometry::Graph(_)));
    assert_eq!((geom.n(), geom.kind()), (3, MetricKind::Graph));
    assert_eq!(labels.unwrap(), vec!["a", "b", "c"]);
    let (pts, _) = load_geometry("line:5", None, &lim).unwrap();
    assert!(matches!(pts, Geometry::Points(_)));
    assert_eq!((pts.n(), pts.kind()), (5, MetricKind::Euclidean));
}
