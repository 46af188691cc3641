//! Records in, records out (issue 33): `mdp privatize` reads plain lines, CSV and JSON
//! lines, writes every record back with its release (so the output joins to the input),
//! never drops a line, writes atomically, and snaps coordinates only within a limit.

use serde_json::{json, Value};

use crate::common;
use common::mdp_in as mdp;

fn write(name: &str, bytes: &str) -> String {
    common::tmp("records", name, Some(bytes.as_bytes()))
}

/// Rome, Milan and Naples: a near-identity mechanism (diagonal 1 − 2·10⁻¹⁵), private at
/// ε = 1 per km since the cities are ≥ 180 km apart; labels rome, milan, naples. `tag`
/// keeps each test's files apart (tests run in parallel).
fn cities(tag: &str) -> (String, String) {
    let t = "0.000000000000001";
    let d = "0.999999999999998";
    let doc = json!({
        "format": "mdp/1",
        "epsilon": "1",
        "metric": {"kind": "haversine", "points": [[41.9, 12.5], [45.46, 9.19], [40.85, 14.27]]},
        "matrix": [[d, t, t], [t, d, t], [t, t, d]],
    });
    (
        write(&format!("cities-{tag}.json"), &doc.to_string()),
        write(&format!("cities-{tag}.labels"), "rome\nmilan\nnaples\n"),
    )
}

/// `mdp privatize --mechanism MECH --labels LABELS EXTRA…` with `input` on standard input.
fn privatize(mech: &str, labels: &str, extra: &[&str], input: &str) -> (i32, String, String) {
    let mut args = vec![
        "privatize",
        "--trust-file-metric",
        "--mechanism",
        mech,
        "--labels",
        labels,
    ];
    args.extend_from_slice(extra);
    mdp(&args, input)
}

#[test]
fn csv_rows_come_back_whole_with_their_release() {
    let (mech, labels) = cities("csv_rows_come_back_whole_with_their_release");
    let input = "user_id,poi,note\nu1,milan,a\nu2,rome,\"b, quoted\"\nu3,naples,c\n";
    let (code, out, err) = privatize(
        &mech,
        &labels,
        &["--format", "csv", "--column", "poi"],
        input,
    );
    assert_eq!(code, 0, "{err}");
    // The release replaces the secret column (issue 53); --keep-input keeps it beside.
    assert_eq!(
        out,
        "user_id,note,poi_private\nu1,a,milan\nu2,\"b, quoted\",rome\nu3,c,naples\n"
    );
    assert!(err.contains("3 records released"), "{err}");
    let (code, out, err) = privatize(
        &mech,
        &labels,
        &["--format", "csv", "--column", "poi", "--keep-input"],
        input,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "user_id,poi,note,poi_private\nu1,milan,a,milan\nu2,rome,\"b, quoted\",rome\nu3,naples,c,naples\n"
    );
    // A column that is not there is named with the header it has.
    let (code, _, err) = privatize(
        &mech,
        &labels,
        &["--format", "csv", "--column", "place"],
        input,
    );
    assert_eq!(code, 2);
    assert!(err.contains("line 1") && err.contains("\"poi\""), "{err}");
}

#[test]
fn json_lines_keep_every_field() {
    let (mech, labels) = cities("json_lines_keep_every_field");
    let input = "{\"id\": 7, \"poi\": \"naples\", \"t\": [1, 2]}\n{\"id\": 8, \"poi\": \"rome\"}\n";
    let (code, out, err) = privatize(
        &mech,
        &labels,
        &["--format", "jsonl", "--field", "poi"],
        input,
    );
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(
        rows[0],
        json!({"id": 7, "t": [1, 2], "poi_private": "naples"})
    );
    assert_eq!(rows[1]["id"], 8);
    assert_eq!(rows[1]["poi_private"], "rome");
    let (code, out, err) = privatize(
        &mech,
        &labels,
        &["--format", "jsonl", "--field", "poi", "--keep-input"],
        input,
    );
    assert_eq!(code, 0, "{err}");
    let first: Value = serde_json::from_str(out.lines().next().unwrap()).unwrap();
    assert_eq!(
        first,
        json!({"id": 7, "poi": "naples", "t": [1, 2], "poi_private": "naples"})
    );
}

#[test]
fn no_line_is_dropped_and_a_failure_writes_nothing() {
    let (mech, labels) = cities("no_line_is_dropped_and_a_failure_writes_nothing");
    let dest = common::tmp("records", "out.txt", Some(b"earlier output\n"));
    // A blank line is an error naming it; the output file is left as it was.
    let (code, _, err) = privatize(&mech, &labels, &["-o", &dest], "rome\n\nmilan\n");
    assert_eq!(code, 2);
    assert!(err.contains("line 2") && err.contains("blank"), "{err}");
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "earlier output\n");
    // An unknown label on line 2: the same.
    let (code, _, err) = privatize(&mech, &labels, &["-o", &dest], "rome\nparis\nmilan\n");
    assert_eq!(code, 2);
    assert!(err.contains("line 2") && err.contains("paris"), "{err}");
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "earlier output\n");
    let dir = std::path::Path::new(&dest).parent().unwrap();
    assert!(
        std::fs::read_dir(dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains(".tmp-")),
        "a temporary file was left behind"
    );
    // With --skip-bad, line i of the output is still the release of line i.
    let (code, _, err) = privatize(
        &mech,
        &labels,
        &["-o", &dest, "--skip-bad"],
        "rome\n\nparis\nmilan\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(std::fs::read_to_string(&dest).unwrap(), "rome\n\n\nmilan\n");
    assert!(
        err.contains("2 records skipped") && err.contains("line 2") && err.contains("line 3"),
        "{err}"
    );
}

#[test]
fn csv_blank_lines_are_reported_not_silently_dropped() {
    let (mech, labels) = cities("csv_blank_lines_are_reported_not_silently_dropped");
    let input = "id,poi\n1,rome\n\n2,milan\n";
    let args = [
        "privatize",
        "--trust-file-metric",
        "--mechanism",
        &mech,
        "--labels",
        &labels,
        "--format",
        "csv",
        "--column",
        "poi",
    ];
    let (code, _, err) = mdp(&args, input);
    assert_eq!(code, 2);
    assert!(err.contains("line 3") && err.contains("blank"), "{err}");
    let mut skip = args.to_vec();
    skip.push("--skip-bad");
    let (code, out, err) = mdp(&skip, input);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "id,poi_private\n1,rome\n2,milan\n");
    assert!(
        err.contains("1 records skipped") && err.contains("line 3"),
        "{err}"
    );
}

/// Issue 53: CSV written by Python's `csv` module or Excel ends lines with CRLF (or, rarely,
/// a lone CR); errors and the `--skip-bad` report name the same line as for LF.
#[test]
fn line_numbers_are_the_same_for_lf_crlf_and_cr() {
    let (mech, labels) = cities("line_numbers_are_the_same_for_lf_crlf_and_cr");
    let args = [
        "privatize",
        "--trust-file-metric",
        "--mechanism",
        &mech,
        "--labels",
        &labels,
        "--format",
        "csv",
        "--column",
        "poi",
        "--skip-bad",
    ];
    for end in ["\n", "\r\n", "\r"] {
        let input = ["id,poi", "1,rome", "", "2,\"paris\"", "3,milan", ""].join(end);
        let (code, out, err) = mdp(&args, &input);
        assert_eq!(code, 0, "{end:?}: {err}");
        assert!(
            err.contains("2 records skipped")
                && err.contains("line 3: blank")
                && err.contains("line 4: unknown"),
            "{end:?}: {err}"
        );
        assert_eq!(out.lines().count(), 4, "{end:?}: {out}");
    }
}

#[test]
fn snapping_has_a_limit_reads_a_header_and_reports_distances() {
    let (mech, _) = cities("snapping_has_a_limit_reads_a_header_and_reports_distances");
    // A header, a point near Milan, then New York and a swapped (lon, lat) for Rome.
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--snap",
        ],
        "lat,lon\n45.4,9.2\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "lat,lon\n45.46,9.19\n");
    assert!(
        err.contains("header") && err.contains("max") && err.contains("km"),
        "{err}"
    );
    for bad in ["40.71,-74.0\n", "12.5,41.9\n"] {
        let (code, _, err) = mdp(
            &[
                "privatize",
                "--trust-file-metric",
                "--mechanism",
                &mech,
                "--snap",
            ],
            bad,
        );
        assert_eq!(code, 2, "{bad}");
        assert!(
            err.contains("line 1") && err.contains("snapping limit"),
            "{err}"
        );
    }
    // The limit is the user's to raise.
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--snap",
            "--snap-max",
            "20000",
        ],
        "40.71,-74.0\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 1);
    // CSV with coordinate columns.
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--snap",
            "--format",
            "csv",
            "--column",
            "lat,lon",
        ],
        "id,lat,lon\na,40.9,14.3\n",
    );
    assert_eq!(code, 0, "{err}");
    // The released point in columns of its own, in place of the true ones.
    assert_eq!(out, "id,lat_private,lon_private\na,40.85,14.27\n");
}

/// Issue 33: the space's labels are stored in the file (`metric.labels`) and used: the
/// privatizer names records by them without --labels, and a failing audit's witness names
/// its inputs.
#[test]
fn labels_travel_in_the_file() {
    let space = write(
        "labelled.json",
        r#"{"kind": "haversine", "points": [[41.9, 12.5], [45.46, 9.19], [40.85, 14.27]], "labels": ["rome", "milan", "naples"]}"#,
    );
    let mech = common::tmp("records", "labelled-mech.json", None);
    let (code, _, err) = mdp(
        &[
            "build",
            "exponential",
            "--space",
            &space,
            "--epsilon",
            "0.01",
            "-o",
            &mech,
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&mech).unwrap()).unwrap();
    assert_eq!(doc["metric"]["labels"], json!(["rome", "milan", "naples"]));
    let (code, out, err) = mdp(
        &[
            "privatize",
            "--trust-file-metric",
            "--mechanism",
            &mech,
            "--seed",
            "3",
        ],
        "naples\nrome\n",
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.lines()
            .all(|l| ["rome", "milan", "naples"].contains(&l)),
        "{out}"
    );
    // Claim a far smaller ε than holds: the witness names the inputs.
    let mut bad = doc.clone();
    bad["epsilon"] = json!("0.0001");
    let bad = write("labelled-bad.json", &bad.to_string());
    let (code, out, _) = common::mdp_audit(&[&bad]);
    assert_eq!(code, 1);
    assert!(
        out.contains("\"rome\"") || out.contains("\"milan\"") || out.contains("\"naples\""),
        "{out}"
    );
    // Labels must match the points.
    let short = write(
        "labelled-short.json",
        r#"{"kind": "euclidean", "points": [[0], [1]], "labels": ["a"]}"#,
    );
    let (code, _, err) = mdp(
        &["build", "exponential", "--space", &short, "--epsilon", "1"],
        "",
    );
    assert_eq!(code, 2);
    assert!(err.contains("labels") && err.contains("2 points"), "{err}");
}

/// Review findings: an empty JSON object is a record without the field (an error, not a
/// silent null); a literal quote inside an unquoted CSV field does not hide a later blank
/// line; `-o /dev/null` is written, never replaced.
#[test]
fn edge_records_are_reported() {
    let (mech, labels) = cities("edge_records_are_reported");
    let (code, _, err) = privatize(
        &mech,
        &labels,
        &["--format", "jsonl", "--field", "poi"],
        "{\"poi\": \"rome\"}\n{}\n",
    );
    assert_eq!(code, 2);
    assert!(err.contains("line 2") && err.contains("no field"), "{err}");
    let (code, _, err) = privatize(
        &mech,
        &labels,
        &["--format", "csv", "--column", "poi"],
        "id,poi,note\n1,rome,5\"\n\n2,milan,x\n",
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("line 3") && err.contains("blank"), "{err}");
    let (code, _, err) = privatize(&mech, &labels, &["-o", "/dev/null"], "rome\n");
    assert_eq!(code, 0, "{err}");
    assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
}

/// Issue 53 item 7: a prior from records, read as `privatize` reads them.
#[test]
fn a_prior_counts_records_on_their_inputs() {
    let space = write(
        "prior_space.csv",
        "id,lat,lon\nc0,40.7128,-74.0060\nc1,40.7306,-73.9866\nc2,40.7580,-73.9855\n",
    );
    let recs = "lat,lon\n40.7128,-74.006\n40.7130,-74.0061\n40.758,-73.9855\n";
    let (code, out, err) = mdp(
        &[
            "prior", "--space", &space, "--format", "csv", "--column", "lat,lon", "--snap",
        ],
        recs,
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "[2,0,1]");
    assert!(
        err.contains("3 records counted") && err.contains("1 named by no record"),
        "{err}"
    );
    let (code, out, err) = mdp(
        &[
            "prior",
            "--space",
            &space,
            "--skip-bad",
            "--pseudocount",
            "1/2",
        ],
        "c0\nc0\nc2\nzz\n",
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "[2.5,0.5,1.5]");
    assert!(err.contains("line 4"), "{err}");
    // The prior feeds PMO.
    let prior = write("prior.json", &out);
    let (code, _, err) = mdp(
        &[
            "build",
            "pmo",
            "--space",
            &space,
            "--epsilon",
            "1",
            "--prior",
            &prior,
            "-o",
            "-",
            "--quiet",
        ],
        "",
    );
    assert_eq!(code, 0, "{err}");
    let (code, _, err) = mdp(&["prior", "--space", &space], "");
    assert_eq!(code, 2);
    assert!(err.contains("no record"), "{err}");
}
