//! `mdp privatize --sampler planar-laplace` (issue 54 part 1): coordinate records released
//! exactly, ids and other columns kept, the true columns replaced, the region required for
//! latitude/longitude and enforced, every setting error one line with exit 2.

use crate::common;
use common::mdp_in;

const RECORDS: &str =
    "id,lat,lon,note\nc0,41.9028,12.4964,home\nc1,41.8902,12.4922,work\nc2,41.95,12.45,gym\n";
const ROME: &str = "41.8,12.4,42.0,12.6";
/// ε = 1 per km on lat,lon CSV records inside Rome's box.
const CSV_ROME: [&str; 8] = [
    "--epsilon",
    "1",
    "--format",
    "csv",
    "--column",
    "lat,lon",
    "--region",
    ROME,
];

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    let mut a = vec!["privatize", "--sampler", "planar-laplace"];
    a.extend_from_slice(args);
    mdp_in(&a, stdin)
}

#[test]
fn csv_records_are_released_in_place_of_the_true_columns() {
    let args = [&CSV_ROME[..], &["--seed", "4"]].concat();
    let (code, out, err) = run(&args, RECORDS);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "id,note,lat_private,lon_private");
    assert_eq!(lines.len(), 4);
    for (line, (id, note)) in lines[1..]
        .iter()
        .zip([("c0", "home"), ("c1", "work"), ("c2", "gym")])
    {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!((f[0], f[1]), (id, note), "{line}");
        let (lat, lon): (f64, f64) = (f[2].parse().unwrap(), f[3].parse().unwrap());
        assert!(
            (41.8..=42.0).contains(&lat) && (12.4..=12.6).contains(&lon),
            "{line}"
        );
        // On the default grid of 1e-9 degrees, printed exactly.
        assert!(
            f[2].split('.').nth(1).is_none_or(|d| d.len() <= 9),
            "{line}"
        );
    }
    assert_eq!(run(&args, RECORDS).1, out, "a seed reproduces the release");
    assert!(
        err.contains("\"epsilon_unit\":\"per great-circle km\""),
        "{err}"
    );
    assert!(
        err.contains("\"stretch\"") && err.contains("radius_at_confidence"),
        "{err}"
    );
    // --keep-input keeps them.
    let mut keep = args.to_vec();
    keep.push("--keep-input");
    let (_, out, _) = run(&keep, RECORDS);
    assert!(
        out.starts_with("id,lat,lon,note,lat_private,lon_private\n"),
        "{out}"
    );
}

#[test]
fn settings_errors_are_one_line_exit_2() {
    for (args, what) in [
        (
            vec!["--epsilon", "1", "--format", "csv", "--column", "lat,lon"],
            "--region",
        ),
        (
            vec![
                "--epsilon",
                "1",
                "--format",
                "csv",
                "--column",
                "lon,lat",
                "--region",
                ROME,
            ],
            "latitude first",
        ),
        (
            vec![
                "--epsilon",
                "0",
                "--format",
                "csv",
                "--column",
                "lat,lon",
                "--region",
                ROME,
            ],
            "--epsilon",
        ),
        (
            vec!["--format", "csv", "--column", "lat,lon", "--region", ROME],
            "--epsilon",
        ),
        (
            vec![
                "--epsilon",
                "1",
                "--format",
                "csv",
                "--column",
                "lat,lon",
                "--region",
                "10,-100,20,90",
            ],
            "antimeridian",
        ),
        (
            vec![
                "--epsilon",
                "1",
                "--format",
                "csv",
                "--column",
                "lat,lon",
                "--region",
                "41,12,42",
            ],
            "four numbers",
        ),
        (vec!["--epsilon", "1"], "--metric"),
        (
            vec![
                "--epsilon",
                "1",
                "--metric",
                "euclidean",
                "--granularity=-1",
            ],
            "--granularity",
        ),
        (
            vec![
                "--epsilon",
                "1",
                "--space",
                "builtin:rome100",
                "--metric",
                "euclidean",
            ],
            "--space",
        ),
    ] {
        let (code, _, err) = run(&args, RECORDS);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn a_record_outside_the_region_names_its_line() {
    let bad = "id,lat,lon\nc0,41.9,12.5\nc1,45.0,12.5\n";
    let args = CSV_ROME;
    let (code, _, err) = run(&args, bad);
    assert_eq!(code, 2);
    assert!(
        err.contains("line 3") && err.contains("outside --region"),
        "{err}"
    );
    let mut skip = args.to_vec();
    skip.push("--skip-bad");
    let (code, out, err) = run(&skip, bad);
    assert_eq!(code, 0, "{err}");
    assert!(out.ends_with("c1,,\n"), "{out}");
    assert!(err.contains("1 records skipped"), "{err}");
}

#[test]
fn plane_records_in_lines_and_json_lines() {
    // x,y per line with --metric euclidean; Location Guard's level/radius.
    let (code, out, err) = run(
        &[
            "--level",
            "1",
            "--radius",
            "2",
            "--metric",
            "euclidean",
            "--granularity",
            "0.01",
            "--seed",
            "1",
        ],
        "x,y\n0,0\n10,-3\n",
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "x,y");
    for l in &lines[1..] {
        let v: Vec<f64> = l.split(',').map(|s| s.parse().unwrap()).collect();
        assert_eq!(v.len(), 2);
        for x in v {
            assert!(((x * 100.0).round() - x * 100.0).abs() < 1e-6, "{l}");
        }
    }
    assert!(err.contains("\"epsilon\":\"0.5\""), "{err}");
    let (code, out, err) = run(
        &[
            "--epsilon",
            "1",
            "--metric",
            "euclidean",
            "--format",
            "jsonl",
            "--field",
            "p",
            "--seed",
            "2",
        ],
        "{\"id\": 7, \"p\": [1.5, 2]}\n",
    );
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(v["id"], 7);
    assert!(
        v.get("p").is_none() && v["p_private"].as_array().unwrap().len() == 2,
        "{out}"
    );
}

/// `--region SPACE`: the space's points bound the records and every release is one of them
/// (the nearest to the clamped release); a space in another metric is refused.
#[test]
fn a_space_as_the_region_releases_its_points() {
    let space =
        mdp::import::load_space("builtin:rome100", None, &mdp::io::Limits::default()).unwrap();
    let p0 = &space.points()[0];
    let (lat, lon) = (
        mdp::exact::format_rational(&p0[0]),
        mdp::exact::format_rational(&p0[1]),
    );
    let records = format!("id,lat,lon\nr0,{lat},{lon}\nr1,{lat},{lon}\nr2,{lat},{lon}\n");
    let args = [
        "--epsilon",
        "2",
        "--format",
        "csv",
        "--column",
        "lat,lon",
        "--region",
        "builtin:rome100",
    ];
    let (code, out, err) = run(&args, &records);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("\"region_points\":100"), "{err}");
    let points: Vec<(String, String)> = space
        .points()
        .iter()
        .map(|p| {
            (
                mdp::exact::format_rational(&p[0]),
                mdp::exact::format_rational(&p[1]),
            )
        })
        .collect();
    for line in out.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert!(
            points.contains(&(f[1].to_string(), f[2].to_string())),
            "{line} is not a point of rome100"
        );
    }
    let (code, _, err) = run(
        &[
            "--epsilon",
            "1",
            "--format",
            "csv",
            "--column",
            "x,y",
            "--metric",
            "euclidean",
            "--region",
            "builtin:rome100",
        ],
        "id,x,y\na,1,2\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--region") && err.contains("euclidean"),
        "{err}"
    );
}
