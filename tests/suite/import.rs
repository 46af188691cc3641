//! What users bring (`mdp::import`, `mdp import`, `mdp repair`): CSV and GeoJSON spaces,
//! external matrices (npy, JSON, CSV), libqif's ε-in-the-metric convention and the exact
//! repair of near-private matrices.

use crate::common;
use common::mdp;
use mdp::audit::{self, Options, Verdict};
use mdp::exact::{f64_nearest, format_rational, parse_rational, q_from_f64, Q};
use mdp::import::{self, MatrixFormat};
use mdp::io::{self, Limits};
use mdp::metric::{MetricKind, Space};
use proptest::prelude::*;

/// A file `name` with `bytes` in a directory of its own for test `test`.
fn tmp(test: &str, name: &str, bytes: &[u8]) -> String {
    common::tmp(&format!("import-{test}"), name, Some(bytes))
}

fn q(s: &str) -> Q {
    parse_rational(s).unwrap()
}

/// A `.npy` file (format 1.0) built by hand: header dict padded to a multiple of 64 bytes.
fn npy(descr: &str, fortran: bool, rows: usize, cols: usize, data: &[u8]) -> Vec<u8> {
    let mut header = format!(
        "{{'descr': '{descr}', 'fortran_order': {}, 'shape': ({rows}, {cols}), }}",
        if fortran { "True" } else { "False" }
    );
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((header.len() as u16).to_le_bytes());
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

/// A row-major f64 matrix as a C-order `<f8` npy file.
fn npy_f64(m: &[Vec<f64>]) -> Vec<u8> {
    let data: Vec<u8> = m.iter().flatten().flat_map(|x| x.to_le_bytes()).collect();
    npy("<f8", false, m.len(), m[0].len(), &data)
}

fn audit_doc(text: &str, eps: Option<Q>) -> audit::Report {
    let file = io::read_mechanism(text.as_bytes(), &Limits::default()).unwrap();
    let opts = Options {
        epsilon: eps,
        ..Options::default()
    };
    audit::audit(&file, &opts).unwrap()
}

/// libqif's exponential mechanism on the metric `d` it is given: row u ∝ exp(−d(u, w)/2).
fn exp_mech(n: usize, d: impl Fn(usize, usize) -> f64) -> Vec<Vec<f64>> {
    (0..n)
        .map(|u| {
            let row: Vec<f64> = (0..n).map(|w| (-d(u, w) / 2.0).exp()).collect();
            let s: f64 = row.iter().sum();
            row.iter().map(|x| x / s).collect()
        })
        .collect()
}

#[test]
fn csv_lat_lon_with_labels_and_quoted_fields() {
    let csv = "\u{feff}Name,LAT,Lon,note\r\n\"Roma, centro\",41.9,12.5,x\r\n\"Say \"\"hi\"\"\", 41.901 ,12.501,\"two\r\nlines\"\r\n\r\nOstia,41.73,-12.28,\r\n";
    let p = tmp("latlon", "pts.csv", csv.as_bytes());
    let (s, labels) = import::load_space_with_labels(&p, None, &Limits::default()).unwrap();
    assert_eq!(s.kind(), MetricKind::Haversine);
    assert_eq!(s.n(), 3);
    assert_eq!(labels.unwrap(), vec!["Roma, centro", "Say \"hi\"", "Ostia"]);
    assert_eq!(s.points()[0], vec![q("41.9"), q("12.5")]);
    assert_eq!(s.points()[1], vec![q("41.901"), q("12.501")]);
    assert_eq!(s.points()[2], vec![q("41.73"), q("-12.28")]);
    // import::load_space reads the same file (one implementation).
    let s2 = mdp::import::load_space(&p, None, &Limits::default()).unwrap();
    assert_eq!(s2.points(), s.points());
    // Records keep quoted line breaks; row numbers are the file's lines.
    let recs = import::csv_records(csv, "x.csv").unwrap();
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[2].fields[3], "two\r\nlines");
    assert_eq!(recs[3].line, 6);
}

#[test]
fn csv_vectors_are_euclidean() {
    let csv =
        "id,x,y,z,comment\na,0,0,1/3,first\nb,1,2.5,0,\"second, with comma\"\nc,-1,1e-3,2,third\n";
    let (s, labels) =
        import::space_from_csv(csv.as_bytes(), "v.csv", None, &Limits::default()).unwrap();
    assert_eq!(s.kind(), MetricKind::Euclidean);
    assert_eq!(s.points()[1], vec![q("1"), q("2.5"), q("0")]);
    assert_eq!(s.points()[0][2], q("1/3"));
    assert_eq!(labels.unwrap(), vec!["a", "b", "c"]);
    assert!(s.warnings.iter().any(|w| w.contains("comment")));
    // Without labels; a column mixing numbers and text is an error naming the cell.
    let (s, labels) =
        import::space_from_csv(b"x,y\n0,0\n3,4\n", "v.csv", None, &Limits::default()).unwrap();
    assert!(labels.is_none());
    assert_eq!(s.approx(0, 1), 5.0);
    let e = import::space_from_csv(b"x,y\n0,0\n3,four\n", "v.csv", None, &Limits::default())
        .unwrap_err();
    assert_eq!(e.path, "v.csv:row 3, column y");
    // An unclosed quote in the label column merges the rows after it: the label's line
    // break is refused.
    let e = import::space_from_csv(
        b"x,y,label\n1,2,\"a\n3,4,b\n",
        "v.csv",
        None,
        &Limits::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("line break"), "{e}");
    // Issue 33: without a label/name/id column, the one text column (`word,v0,v1`) names
    // the points instead of being ignored.
    let (_, labels) = import::space_from_csv(
        b"word,v0,v1\nalpha,0,1\nbeta,1,0\n",
        "w.csv",
        None,
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(labels.unwrap(), vec!["alpha", "beta"]);
    // A header is required.
    let e = import::space_from_csv(b"1,2\n3,4\n", "v.csv", None, &Limits::default()).unwrap_err();
    assert!(e.message.contains("header row is required"), "{e}");
    // Limits: n² ≤ max_entries.
    let lim = Limits {
        max_entries: 3,
        ..Limits::default()
    };
    let e = import::space_from_csv(b"x\n1\n2\n", "v.csv", None, &lim).unwrap_err();
    assert!(e.message.contains("--max-entries"), "{e}");
    // Ragged rows and stray quotes name the row.
    let e =
        import::space_from_csv(b"x,y\n1,2\n3\n", "v.csv", None, &Limits::default()).unwrap_err();
    assert_eq!(e.path, "v.csv:row 3");
    // The csv crate's reader is lenient: a stray quote is text, and an unterminated quote
    // runs to the end of the file, so the record fails as a short row or a non-number.
    let e = import::space_from_csv(b"x,y\n1,2\n\"3,4\n5,6\n", "v.csv", None, &Limits::default())
        .unwrap_err();
    assert_eq!(e.path, "v.csv:row 3");
    let e = import::space_from_csv(b"x,y\n1,2\n3,4\"\n", "v.csv", None, &Limits::default())
        .unwrap_err();
    assert_eq!(e.path, "v.csv:row 3, column y");
}

#[test]
fn geojson_swaps_lon_lat() {
    let gj = r#"{"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [12.5, 41.9]},
         "properties": {"name": "Roma"}},
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [2.35, 48.85, 35]},
         "properties": {"name": "Paris"}}]}"#;
    // Detected by extension and by content.
    for file in ["pts.geojson", "pts.json"] {
        let p = tmp("geojson", file, gj.as_bytes());
        let (s, labels) = import::load_space_with_labels(&p, None, &Limits::default()).unwrap();
        assert_eq!(s.kind(), MetricKind::Haversine);
        assert_eq!(s.points()[0], vec![q("41.9"), q("12.5")]);
        assert_eq!(s.points()[1], vec![q("48.85"), q("2.35")]);
        assert_eq!(labels.unwrap(), vec!["Roma", "Paris"]);
        // Rome–Paris is about 1106 km.
        approx::assert_abs_diff_eq!(s.approx(0, 1), 1106.0, epsilon = 5.0);
    }
    let bad = r#"{"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [12.5, 41.9]}},
        {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[0, 0], [1, 1]]}}]}"#;
    let p = tmp("geojson", "bad.geojson", bad.as_bytes());
    let e = import::load_space_with_labels(&p, None, &Limits::default()).unwrap_err();
    assert!(e.path.ends_with("bad.geojson:features[1].geometry"), "{e}");
    assert!(e.message.contains("LineString"), "{e}");
    let lat = r#"{"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [41.9, 120.5]}}]}"#;
    let p = tmp("geojson", "lat.geojson", lat.as_bytes());
    let e = import::load_space_with_labels(&p, None, &Limits::default()).unwrap_err();
    assert!(
        e.path.ends_with("features[0].geometry.coordinates[1]"),
        "{e}"
    );
}

#[test]
fn out_of_range_latitude_is_exit_2_naming_row_and_column() {
    let p = tmp(
        "range",
        "pts.csv",
        b"label,lat,lon\na,41.9,12.5\nb,91,12.5\n",
    );
    let (code, _, err) = mdp(&["build", "exponential", "--space", &p, "--epsilon", "1"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("pts.csv:row 3, column lat"), "{err}");
    assert!(err.contains("latitude 91 outside [-90, 90]"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let p = tmp("range", "lon.csv", b"lat,lon\n41.9,190\n");
    let m = tmp("range", "m.json", b"[[1]]");
    let (code, _, err) = mdp(&[
        "import",
        "--matrix",
        &m,
        "--space",
        &p,
        "--epsilon",
        "1",
        "-o",
        "-",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("lon.csv:row 2, column lon"), "{err}");
}

#[test]
fn duplicate_labels_are_an_error() {
    let e = import::space_from_csv(
        b"name,x\nRoma,1\nParis,2\nRoma,3\n",
        "d.csv",
        None,
        &Limits::default(),
    )
    .unwrap_err();
    assert_eq!(e.path, "d.csv:row 4, column name");
    assert!(e.message.contains("duplicate label \"Roma\""), "{e}");
    let gj = br#"{"type": "FeatureCollection", "features": [
        {"type": "Feature", "id": 7, "geometry": {"type": "Point", "coordinates": [1, 2]}},
        {"type": "Feature", "id": 7, "geometry": {"type": "Point", "coordinates": [3, 4]}}]}"#;
    let v = io::parse_json(gj).unwrap();
    let e = import::space_from_geojson(&v, "d.geojson", None, &Limits::default()).unwrap_err();
    assert!(e.message.contains("duplicate label \"7\""), "{e}");
}

#[test]
fn npy_round_trip() {
    let m = vec![
        vec![0.5, 0.25, 0.25],
        vec![0.1, 0.7, 0.2],
        vec![1.0 / 3.0, 1.0 / 3.0, 1.0 / 3.0],
    ];
    let lim = Limits::default();
    let exact = |m: &mdp::mechanism::Matrix, want: &[Vec<f64>]| {
        for (i, row) in want.iter().enumerate() {
            for (j, x) in row.iter().enumerate() {
                assert_eq!(*m.get(i, j), q_from_f64(*x), "[{i}][{j}]");
            }
        }
    };
    // C order, float64.
    let read = |bytes: &[u8]| import::matrix_from_npy(bytes, "m.npy", &lim, &import::any_entry);
    let c = read(&npy_f64(&m)).unwrap();
    exact(&c, &m);
    // Fortran order: column-major data.
    let data: Vec<u8> = (0..3)
        .flat_map(|j| (0..3).map(move |i| (i, j)))
        .flat_map(|(i, j)| m[i][j].to_le_bytes())
        .collect();
    let f = read(&npy("<f8", true, 3, 3, &data)).unwrap();
    exact(&f, &m);
    // float32: the exact value of each f32.
    let data: Vec<u8> = m
        .iter()
        .flatten()
        .flat_map(|x| (*x as f32).to_le_bytes())
        .collect();
    let g = read(&npy("<f4", false, 3, 3, &data)).unwrap();
    let m32: Vec<Vec<f64>> = m
        .iter()
        .map(|r| r.iter().map(|x| *x as f32 as f64).collect())
        .collect();
    exact(&g, &m32);
    // Rejected: pickles, other dtypes, 1-D arrays, NaN, truncated data.
    let bad = |bytes: Vec<u8>, what: &str| {
        let e = read(&bytes).unwrap_err();
        assert!(e.to_string().contains(what), "{e}");
    };
    bad(npy("|O", false, 1, 1, &[0; 8]), "pickle");
    bad(npy("<i8", false, 1, 1, &[0; 8]), "not supported");
    // Big-endian floats are read too (npyz).
    let be: Vec<u8> = m.iter().flatten().flat_map(|x| x.to_be_bytes()).collect();
    exact(&read(&npy(">f8", false, 3, 3, &be)).unwrap(), &m);
    // Hostile headers, refused before npyz sees them: a shape whose product overflows u64
    // (npyz multiplies unchecked), a header longer than the file, deep nesting.
    let mut huge = npy("<f8", false, 1, 1, &[0; 8]);
    let at = huge.windows(6).position(|w| w == b"(1, 1)").unwrap();
    let dims = b"(4294967296, 4294967296, 2)";
    huge.splice(at..at + 6, dims.iter().copied());
    let hl = u16::from_le_bytes([huge[8], huge[9]]) + (dims.len() - 6) as u16;
    huge[8..10].copy_from_slice(&hl.to_le_bytes());
    bad(huge, "shape too large");
    let mut long = npy("<f8", false, 1, 1, &[0; 8]);
    long[8..10].copy_from_slice(&5000u16.to_le_bytes());
    bad(long.clone(), "truncated");
    long[8..10].copy_from_slice(&u16::MAX.to_le_bytes());
    bad(long, "at most 10000");
    let header = |text: &str| {
        let mut h = b"\x93NUMPY\x01\x00".to_vec();
        h.extend((text.len() as u16).to_le_bytes());
        h.extend(text.as_bytes());
        h
    };
    bad(
        header(&format!(
            "{{'descr': '<f8', 'shape': {}1{}}}\n",
            "(".repeat(500),
            ")".repeat(500)
        )),
        "brackets",
    );
    // Brackets hidden in strings count too (the parser would nest on the others).
    bad(
        header(&format!(
            "{{'descr': '<f8', 'x': {}}}\n",
            "{('))',".repeat(15)
        )),
        "brackets",
    );
    // A repeated key (npyz keeps the last one, the guard would check the first).
    let mut twice =
        header("{'descr': '<f8', 'fortran_order': False, 'shape': (2, 2), 'shape': (1,), }\n");
    twice.extend([0u8; 32]);
    bad(twice, "repeated");
    let one_d = npy("<f8", false, 1, 1, &[0; 8]);
    let at = one_d.windows(6).position(|w| w == b"(1, 1)").unwrap();
    let mut one_d = one_d.clone();
    one_d[at..at + 6].copy_from_slice(b"(1,)  ");
    bad(one_d, "2-D");
    bad(
        npy(
            "<f8",
            false,
            1,
            2,
            &[f64::NAN, 1.0]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect::<Vec<_>>(),
        ),
        "m.npy[0][0]",
    );
    bad(npy("<f8", false, 2, 2, &[0; 24]), "data bytes");
    // Through the CLI: the imported file passes and holds the same numbers.
    let space = tmp(
        "npy",
        "s.json",
        br#"{"kind": "euclidean", "points": [[0], [10], [20]]}"#,
    );
    let mp = tmp("npy", "m.npy", &npy_f64(&m));
    let out = tmp("npy", "out.json", b"");
    // m is not private at ε = 0.01 on this space.
    let (code, _, err) = mdp(&[
        "import",
        "--matrix",
        &mp,
        "--space",
        &space,
        "--epsilon",
        "0.01",
        "-o",
        &out,
        "--outputs-are-inputs",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mdp repair"), "{err}");
    let (code, _, err) = mdp(&[
        "import",
        "--matrix",
        &mp,
        "--space",
        &space,
        "--epsilon",
        "1",
        "-o",
        &out,
        "--outputs-are-inputs",
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let file = io::read_mechanism(text.as_bytes(), &lim).unwrap();
    exact(&file.matrix, &m);
    assert_eq!(audit_doc(&text, None).verdict, Verdict::Pass);
    // JSON and CSV matrices read the same numbers exactly.
    let j = tmp(
        "npy",
        "m.json",
        b"[[0.5, 0.25, 0.25], [0.1, 0.7, 0.2], [\"1/3\", \"1/3\", \"1/3\"]]",
    );
    let cs = tmp(
        "npy",
        "m.csv",
        b"a,b,c\n0.5,0.25,0.25\n0.1,\"0.7\",0.2\n1/3,1/3,1/3\n",
    );
    let jm = import::read_matrix(&j, &lim, &import::any_entry).unwrap();
    let cm = import::read_matrix(&cs, &lim, &import::any_entry).unwrap();
    assert_eq!(jm, cm);
    assert_eq!(*jm.get(1, 0), q("0.1"));
    assert_eq!(MatrixFormat::detect("x.dat", b" [[1]]"), MatrixFormat::Json);
    let e = import::read_matrix(
        &tmp("npy", "neg.csv", b"1,0\n-0.5,1.5\n"),
        &lim,
        &import::non_negative_entry,
    )
    .unwrap_err();
    assert!(e.path.ends_with("neg.csv:row 2, column 1"), "{e}");
}

/// Issue 33: a libqif matrix on plain points given with `--eps-in-metric` (the flag read as
/// "the matrix came from libqif") states 1·d instead of ε·d: it fails for ε > 1, and the
/// failure names the reading that passes; for ε < 1 it passes (a weaker statement), and the
/// note says how SPACE was read.
#[test]
fn eps_in_metric_mix_up_is_named() {
    let plain: Vec<i64> = vec![0, 1, 2, 3, 5];
    let mp = tmp("mixup", "C.npy", b"");
    let space = tmp(
        "mixup",
        "plain.json",
        br#"{"kind": "euclidean", "points": [[0], [1], [2], [3], [5]]}"#,
    );
    let out = tmp("mixup", "out.json", b"");
    let run = |eps: &str, flag: bool| {
        let e: f64 = eps.parse().unwrap();
        let c = exp_mech(plain.len(), |u, w| e * (plain[u] - plain[w]).abs() as f64);
        std::fs::write(&mp, npy_f64(&c)).unwrap();
        let mut args = vec![
            "import",
            "--matrix",
            &mp,
            "--space",
            &space,
            "--epsilon",
            eps,
            "--outputs-are-inputs",
            "-o",
            &out,
        ];
        if flag {
            args.push("--eps-in-metric");
        }
        mdp(&args)
    };
    let (code, _, err) = run("2", true);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("hint: it passes without --eps-in-metric"),
        "{err}"
    );
    let (code, _, err) = run("2", false);
    assert_eq!(code, 0, "{err}");
    assert!(!err.contains("--eps-in-metric"), "{err}");
    let (code, _, err) = run("0.5", true);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("was read as libqif's metric ε·d") && err.contains("drop the flag"),
        "{err}"
    );
}

#[test]
fn libqif_convention_eps_in_metric() {
    // libqif: C = exponential(n, eps * d) on five points of a line, eps = 2; the metric
    // the user passed to qif (and gives us) is 2·d.
    let plain: Vec<i64> = vec![0, 1, 2, 3, 5];
    let c = exp_mech(plain.len(), |u, w| 2.0 * (plain[u] - plain[w]).abs() as f64);
    let mp = tmp("libqif", "C.npy", &npy_f64(&c));
    let scaled = tmp(
        "libqif",
        "scaled.json",
        format!(
            r#"{{"kind": "euclidean", "points": [{}]}}"#,
            plain
                .iter()
                .map(|x| format!("[{}]", 2 * x))
                .collect::<Vec<_>>()
                .join(", ")
        )
        .as_bytes(),
    );
    let out = tmp("libqif", "out.json", b"");
    let (code, _, err) = mdp(&[
        "import",
        "--matrix",
        &mp,
        "--space",
        &scaled,
        "--epsilon",
        "2",
        "--eps-in-metric",
        "--outputs-are-inputs",
        "-o",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    let file = io::read_mechanism(text.as_bytes(), &Limits::default()).unwrap();
    // The file states ε = 2 with the plain metric.
    assert_eq!(file.epsilon, q("2"));
    let pts: Vec<Vec<Q>> = plain.iter().map(|x| vec![Q::from(*x)]).collect();
    assert_eq!(file.space.points(), &pts[..]);
    assert_eq!(audit_doc(&text, None).verdict, Verdict::Pass);
    // The statement is tight-ish: at ε = 0.9 (below ε/2 = 1, which the end pair needs) it fails.
    assert_eq!(audit_doc(&text, Some(q("0.9"))).verdict, Verdict::Fail);
    // Same statement, plain space, ε given separately: identical claim.
    let plain_space = tmp(
        "libqif",
        "plain.json",
        format!(
            r#"{{"kind": "euclidean", "points": [{}]}}"#,
            plain
                .iter()
                .map(|x| format!("[{x}]"))
                .collect::<Vec<_>>()
                .join(", ")
        )
        .as_bytes(),
    );
    let (code, out2, err) = mdp(&[
        "import",
        "--matrix",
        &mp,
        "--space",
        &plain_space,
        "--epsilon",
        "2",
        "--outputs-are-inputs",
        "-o",
        "-",
    ]);
    assert_eq!(code, 0, "{err}");
    let f2 = io::read_mechanism(out2.as_bytes(), &Limits::default()).unwrap();
    assert_eq!((f2.epsilon, f2.space.points().to_vec()), (q("2"), pts));
    // Haversine: the radius carries the scale.
    let (hs, _) =
        import::load_space_with_labels("builtin:rome100", None, &Limits::default()).unwrap();
    let (e, fs) = import::file_claim(&hs, &q("4"), true).unwrap();
    assert_eq!(e, q("4"));
    assert_eq!(*fs.radius(), mdp::metric::default_radius() / Q::from(4u32));
    assert_eq!(fs.points(), hs.points());
}

/// A deterministic value in [−1, 1].
fn noise(i: usize) -> f64 {
    let x = (i as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    ((x >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
}

#[test]
fn repair_of_a_perturbed_exponential_mechanism() {
    let pts: Vec<Vec<Q>> = (0..7)
        .map(|i| vec![Q::from(i % 3), Q::from((i * i) % 5)])
        .collect();
    let space = Space::from_points(MetricKind::Euclidean, pts.clone(), None).unwrap();
    let eps = q("1");
    let exact = mdp::mechanisms::exponential::exponential(&space, &eps);
    // Claim the matrix's own tight ε (upper end), so rounding-level noise breaks privacy.
    let doc = io::mechanism_to_value(&eps, &space, &exact, serde_json::json!({}));
    let r = audit_doc(&serde_json::to_string(&doc).unwrap(), None);
    let tight = q_from_f64(r.epsilon_tight[1].unwrap());
    let n = space.n();
    let m: Vec<Vec<f64>> = (0..n)
        .map(|u| {
            (0..n)
                .map(|w| {
                    let x = f64_nearest(exact.get(u, w));
                    x * (1.0 + 1e-7 * noise(u * n + w)) * (1.0 + 1e-6)
                })
                .collect()
        })
        .collect();
    let sp = tmp(
        "repair",
        "s.json",
        serde_json::to_string(&io::space_to_value(&space))
            .unwrap()
            .as_bytes(),
    );
    let mp = tmp("repair", "m.npy", &npy_f64(&m));
    let eps_s = format_rational(&tight);
    // As imported it fails (rows off 1 by 1e-6, privacy broken at the tight ε).
    let (code, _, err) = mdp(&[
        "import",
        "--matrix",
        &mp,
        "--space",
        &sp,
        "--epsilon",
        &eps_s,
        "--outputs-are-inputs",
        "-o",
        "-",
    ]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("mdp repair"), "{err}");
    let out = tmp("repair", "r.json", b"");
    let (code, _, err) = mdp(&[
        "repair",
        "--matrix",
        &mp,
        "--space",
        &sp,
        "--epsilon",
        &eps_s,
        "--outputs-are-inputs",
        "-o",
        &out,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("repair: t = "), "{err}");
    assert!(err.contains("before") && err.contains("after"), "{err}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(audit_doc(&text, None).verdict, Verdict::Pass);
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let t = v["meta"]["repair"]["uniform_mix"].as_f64().unwrap();
    assert!(t > 1e-12 && t < 1e-4, "t = {t}");
    let before = v["meta"]["repair"]["loss_before"][1].as_f64().unwrap();
    let after = v["meta"]["repair"]["loss_after"][1].as_f64().unwrap();
    approx::assert_relative_eq!(after, before, max_relative = 1e-3);
    // The same repair from an mdp/1 file (positional).
    let mut doc = io::mechanism_to_value(&tight, &space, &exact, serde_json::json!({}));
    doc["matrix"] = m
        .iter()
        .map(|r| r.iter().map(|x| io::f64_value(*x)).collect::<Vec<_>>())
        .collect();
    let mech = tmp(
        "repair",
        "mech.json",
        serde_json::to_string(&doc).unwrap().as_bytes(),
    );
    let (code, stdout, err) = mdp(&["repair", &mech]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(audit_doc(&stdout, None).verdict, Verdict::Pass);
    // A tiny negative entry (an LP solver's −1e-12 for a probability of 0) is set to 0.
    let far = Space::from_points(
        MetricKind::Euclidean,
        vec![vec![q("0")], vec![q("1")], vec![q("40")]],
        None,
    )
    .unwrap();
    let e = mdp::mechanisms::exponential::exponential(&far, &eps);
    let mut doc = io::mechanism_to_value(&eps, &far, &e, serde_json::json!({}));
    doc["matrix"][0][2] = io::f64_value(-1e-12);
    let mech = tmp(
        "repair",
        "neg.json",
        serde_json::to_string(&doc).unwrap().as_bytes(),
    );
    let (code, stdout, err) = mdp(&["repair", &mech]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(audit_doc(&stdout, None).verdict, Verdict::Pass);
    assert!(err.contains("repair: t = "), "{err}");
    // Library: the same numbers.
    let raw = import::read_matrix(&mp, &Limits::default(), &import::any_entry).unwrap();
    let ext = import::External {
        space: &space,
        matrix: &raw,
        outputs: &mdp::mechanism::Outputs::Inputs,
        cost: None,
        epsilon: &tight,
        within: None,
    };
    let rep = import::repair_external(&ext, &import::RepairOptions::default()).unwrap();
    assert!(rep.max_row_deviation > 9e-7 && rep.max_row_deviation < 2e-6);
    assert!(rep.change < 1e-4);
    assert!(rep.loss_before.is_some() && rep.loss_after.is_some());
}

#[test]
fn repair_refuses_what_rounding_cannot_explain() {
    let sp = tmp(
        "refuse",
        "s.json",
        br#"{"kind": "euclidean", "points": [[0], [1], [2], [3]]}"#,
    );
    let run = |name: &str, m: &[u8]| {
        let mp = tmp("refuse", name, m);
        let out = tmp("refuse", &format!("{name}.out"), b"");
        std::fs::remove_file(&out).unwrap();
        let r = mdp(&[
            "repair",
            "--matrix",
            &mp,
            "--space",
            &sp,
            "--epsilon",
            "1",
            "--outputs-are-inputs",
            "-o",
            &out,
        ]);
        assert!(!std::path::Path::new(&out).exists(), "nothing written");
        r
    };
    // Grossly non-private (the identity): refused as a failed privacy check, exit 1.
    let (code, _, err) = run("id.json", b"[[1,0,0,0],[0,1,0,0],[0,0,1,0],[0,0,0,1]]");
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("refused") && err.contains("not private up to rounding"),
        "{err}"
    );
    // Rows off 1 by 1e-2, or an entry of −1e-2: not a mechanism up to rounding, exit 2.
    let (code, _, err) = run(
        "rows.json",
        b"[[0.26,0.25,0.25,0.25],[0.25,0.25,0.25,0.25],[0.25,0.25,0.25,0.25],[0.25,0.25,0.25,0.25]]",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("matrix[0]: row sum"), "{err}");
    let (code, _, err) = run(
        "neg.json",
        b"[[0.26,0.25,0.25,0.25],[0.25,0.25,0.25,0.25],[0.25,0.26,0.25,0.25],[0.25,0.25,0.25,-0.01]]",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("matrix[3][3]"), "{err}");
    // A looser tolerance accepts the rows.
    let (code, _, err) = mdp(&[
        "repair",
        "--matrix",
        &tmp(
            "refuse",
            "rows2.json",
            b"[[0.26,0.25,0.25,0.25],[0.25,0.25,0.25,0.25],[0.25,0.25,0.25,0.25],[0.25,0.25,0.25,0.25]]",
        ),
        "--space",
        &sp,
        "--epsilon",
        "1",
        "--tolerance",
        "0.05",
        "-o",
        "-",
    ]);
    assert_eq!(code, 0, "{err}");
}

/// A CSV field, always quoted.
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn csv_records_round_trip(
        rows in proptest::collection::vec(
            proptest::collection::vec("[a-z ,\"\r\n\té]{0,6}", 3), 1..6),
        crlf in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let text: String = rows
            .iter()
            .map(|r| r.iter().map(|f| quote(f)).collect::<Vec<_>>().join(","))
            .collect::<Vec<_>>()
            .join(nl);
        let recs = import::csv_records(&text, "p.csv").unwrap();
        let got: Vec<Vec<String>> = recs.into_iter().map(|r| r.fields).collect();
        // Fields come back trimmed; a record of one empty field is a blank line.
        let want: Vec<Vec<String>> = rows
            .iter()
            .map(|r| r.iter().map(|f| f.trim().to_string()).collect())
            .collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn csv_space_round_trip(
        labels in proptest::collection::vec("[A-Za-z ,\"é]{0,5}", 1..6),
        coords in proptest::collection::vec((-9000i64..9000, -18000i64..18000), 6),
    ) {
        let n = labels.len();
        let labels: Vec<String> = labels.iter().enumerate().map(|(i, l)| format!("{l}#{i}")).collect();
        let mut text = String::from("label,lat,lon\n");
        for (i, l) in labels.iter().enumerate() {
            let (a, b) = coords[i];
            text.push_str(&format!("{},{},{}\n", quote(l), a as f64 / 100.0, b as f64 / 100.0));
        }
        let (s, got) = import::space_from_csv(text.as_bytes(), "p.csv", None, &Limits::default()).unwrap();
        // Labels come back trimmed (a label may not carry surrounding white space).
        let trimmed: Vec<String> = labels.iter().map(|l| l.trim().to_string()).collect();
        prop_assert_eq!(got.unwrap(), trimmed);
        for (i, &(a, b)) in coords.iter().enumerate().take(n) {
            prop_assert_eq!(&s.points()[i], &vec![Q::from_signeds(a, 100), Q::from_signeds(b, 100)]);
        }
    }
}

/// Issue 53 item 7: `--label-column` chooses the labels of a CSV or GeoJSON space (by
/// default the first of label, name, id); the chosen column is never a coordinate; a
/// missing column, a coordinate column or a non-point space is an error.
#[test]
fn label_column_chooses_the_labels() {
    let lim = Limits::default();
    let csv = b"name,id,x,code\nAlpha,a1,0,7\nBeta,b2,3,9\n";
    let (s, labels) = import::space_from_csv(csv, "v.csv", None, &lim).unwrap();
    assert_eq!(labels.unwrap(), vec!["Alpha", "Beta"]);
    assert_eq!(s.points()[1], vec![q("3"), q("9")]);
    let (_, labels) = import::space_from_csv(csv, "v.csv", Some("ID"), &lim).unwrap();
    assert_eq!(labels.unwrap(), vec!["a1", "b2"]);
    // A numeric column chosen as labels is not a coordinate; `name` then is ignored text.
    let (s, labels) = import::space_from_csv(csv, "v.csv", Some("code"), &lim).unwrap();
    assert_eq!(labels.unwrap(), vec!["7", "9"]);
    assert_eq!(s.points()[1], vec![q("3")]);
    let e = import::space_from_csv(csv, "v.csv", Some("zip"), &lim).unwrap_err();
    assert!(
        e.to_string().contains("--label-column") && e.to_string().contains("name, id, x, code"),
        "{e}"
    );
    let geo = b"id,lat,lon\na,1,2\nb,3,4\n";
    let e = import::space_from_csv(geo, "g.csv", Some("lat"), &lim).unwrap_err();
    assert!(e.to_string().contains("coordinate"), "{e}");
    let e = import::load_space_with_labels("builtin:rome100", Some("id"), &lim).unwrap_err();
    assert!(e.to_string().contains("--label-column"), "{e}");
    let v: serde_json::Value = serde_json::json!({"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [12.5, 41.9]},
         "properties": {"name": "Roma", "osm": 1}},
        {"type": "Feature", "geometry": {"type": "Point", "coordinates": [9.2, 45.5]},
         "properties": {"name": "Milano", "osm": 2}}]});
    let (_, labels) = import::space_from_geojson(&v, "d.geojson", None, &lim).unwrap();
    assert_eq!(labels.unwrap(), vec!["Roma", "Milano"]);
    let (_, labels) = import::space_from_geojson(&v, "d.geojson", Some("osm"), &lim).unwrap();
    assert_eq!(labels.unwrap(), vec!["1", "2"]);
    let e = import::space_from_geojson(&v, "d.geojson", Some("zip"), &lim).unwrap_err();
    assert!(
        e.to_string().contains("features[0] has no properties.zip"),
        "{e}"
    );
}
