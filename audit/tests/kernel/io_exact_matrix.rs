//! `io::mechanism_with_matrix` (a document whose matrix is given already exact, as the
//! Python package passes float64 arrays) reads exactly what `io::mechanism_from_value`
//! reads from the same document with the matrix written as JSON numbers: the same file,
//! or the same error (field path and message).

use mdp_audit::exact::{parse_rational, Q};
use mdp_audit::io::{self, Limits, MechanismFile};
use mdp_audit::mechanism::Matrix;
use serde_json::{json, Value};

fn both(
    doc: &Value,
    rows: &[Vec<&str>],
) -> (Result<MechanismFile, String>, Result<MechanismFile, String>) {
    let q: Vec<Vec<Q>> = rows
        .iter()
        .map(|r| r.iter().map(|x| parse_rational(x).unwrap()).collect())
        .collect();
    let mut with_json = doc.clone();
    with_json["matrix"] = json!(rows
        .iter()
        .map(|r| r
            .iter()
            .map(|x| Value::String(x.to_string()))
            .collect::<Vec<_>>())
        .collect::<Vec<_>>());
    let limits = Limits::default();
    let a = io::mechanism_from_value(&with_json, &limits).map_err(|e| e.to_string());
    let cols = q.first().map_or(0, Vec::len);
    let m = Matrix::new(q.len(), cols, q.concat());
    let b = io::mechanism_with_matrix(doc, m, &limits).map_err(|e| e.to_string());
    (a, b)
}

fn same(doc: Value, rows: &[Vec<&str>]) {
    match both(&doc, rows) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a.matrix, b.matrix);
            assert_eq!(a.epsilon, b.epsilon);
            assert_eq!(a.outputs, b.outputs);
            assert_eq!(a.within, b.within);
            assert_eq!(a.labels, b.labels);
            assert_eq!(a.warnings, b.warnings);
            assert_eq!(a.delta, b.delta);
        }
        (Err(a), Err(b)) => assert_eq!(a, b),
        (a, b) => panic!("the two readers disagree: {:?} vs {:?}", a.err(), b.err()),
    }
}

#[test]
fn exact_matrix_reads_as_the_json_one() {
    let doc = json!({"format": "mdp/1", "epsilon": "1/2",
        "metric": {"kind": "euclidean", "points": [[0], [1], [3]], "labels": ["a", "b", "c"]}});
    let good = vec![
        vec!["1/2", "1/4", "1/4"],
        vec!["1/3", "1/3", "1/3"],
        vec!["0.25", "0.25", "0.5"],
    ];
    same(doc.clone(), &good);
    same(
        doc.clone(),
        &[vec!["1/2", "1/2"], vec!["1", "0"], vec!["0", "1"]],
    ); // wrong width
    same(doc.clone(), &good[..2]); // wrong height
    same(
        doc.clone(),
        &[
            vec!["1", "0", "0"],
            vec!["0", "0", "0"],
            vec!["0", "0", "1"],
        ],
    ); // zero row
    same(
        doc.clone(),
        &[
            vec!["1", "0", "0"],
            vec!["-1/8", "1", "1/8"],
            vec!["0", "0", "1"],
        ],
    ); // negative
    let mut scoped = doc.clone();
    scoped["neighbors"] = json!({"within": "2"});
    scoped["outputs"] = json!({"labels": ["x", "y", "z"]});
    same(scoped, &good);
    // A matrix in the document and another given: refused.
    let mut twice = doc;
    twice["matrix"] = json!([[1]]);
    let m = Matrix::new(1, 1, vec![Q::from(1u32)]);
    assert!(io::mechanism_with_matrix(&twice, m, &Limits::default()).is_err());
}

/// `io::mechanism_on_space` (a space handed over as it is, with its labels) reads what
/// `mechanism_from_value` reads when the same space is written into the document, and
/// refuses a document that carries its own metric or matrix, and labels of the wrong count.
#[test]
fn a_space_handed_over_reads_as_the_same_space_written() {
    let metric = json!({"kind": "euclidean", "points": [[0], [1]], "labels": ["a", "b"]});
    let limits = Limits::default();
    let (space, labels) = io::space_and_labels_from_json(&metric, &limits).unwrap();
    let q = |s: &str| parse_rational(s).unwrap();
    let m = || Matrix::new(2, 2, vec![q("3/4"), q("1/4"), q("1/4"), q("3/4")]);
    let doc = json!({"format": "mdp/1", "epsilon": 2});
    let given = io::mechanism_on_space(&doc, space.clone(), labels.clone(), m(), &limits).unwrap();
    let mut written = doc.clone();
    written["metric"] = metric.clone();
    let read = io::mechanism_with_matrix(&written, m(), &limits).unwrap();
    assert_eq!(given.labels, read.labels);
    assert_eq!(
        io::space_to_value(&given.space),
        io::space_to_value(&read.space)
    );
    let twice = |d: &Value| {
        io::mechanism_on_space(d, space.clone(), labels.clone(), m(), &limits).unwrap_err()
    };
    assert_eq!(twice(&written).path, "metric");
    let mut with_matrix = doc.clone();
    with_matrix["matrix"] = json!([[1, 0], [0, 1]]);
    assert_eq!(twice(&with_matrix).path, "metric");
    let short = io::mechanism_on_space(&doc, space.clone(), Some(vec!["a".into()]), m(), &limits)
        .unwrap_err();
    assert_eq!(short.path, "metric.labels");
    assert!(io::mechanism_on_space(&doc, space, None, m(), &limits)
        .unwrap()
        .labels
        .is_none());
}
