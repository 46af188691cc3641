//! The kernel's own tests of the `mdp/1` reader's refusals and of the writers
//! (`io/mod.rs`, spec/mechanism-format.md): every refusal names the JSON path of the field at
//! fault (a one-line error, exit 2 at the command line); every document the writers make
//! reads back as the same numbers, space and matrix. The committed corpus
//! (`tests/corpus/bad`) covers one file per class through the binary; these check the path
//! of each refusal in-process.

use mdp_audit::exact::{bits, q_from_f64, Q};
use mdp_audit::io::{
    f64_value, matrix_value, mechanism_to_value, mechanism_with_matrix, number, number_matrix,
    number_value, q_value, read_mechanism, read_source, set_labels, space_from_json,
    space_to_value, Limits,
};
use mdp_audit::metric::{MetricKind, Space};
use mdp_audit::Matrix;
use serde_json::{json, Value};

fn base() -> Value {
    json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "euclidean", "points": [[0], [1]]},
        "matrix": [[0.5, 0.5], [0.5, 0.5]]})
}

/// `doc` with `edit` applied (a JSON pointer and the value to put there; `null` removes).
fn with(edits: &[(&str, Value)]) -> Value {
    let mut d = base();
    for (ptr, v) in edits {
        let (parent, key) = ptr.rsplit_once('/').unwrap();
        let target = if parent.is_empty() {
            &mut d
        } else {
            d.pointer_mut(parent).unwrap()
        };
        match (target, v) {
            (Value::Object(o), Value::Null) => {
                o.remove(key);
            }
            (Value::Object(o), v) => {
                o.insert(key.into(), v.clone());
            }
            (Value::Array(a), v) => a[key.parse::<usize>().unwrap()] = v.clone(),
            _ => panic!("bad pointer {ptr}"),
        }
    }
    d
}

fn refused(doc: &Value) -> mdp_audit::error::InputError {
    let text = serde_json::to_vec(doc).unwrap();
    match read_mechanism(&text, &Limits::default()) {
        Ok(_) => panic!("accepted: {doc}"),
        Err(e) => e,
    }
}

#[test]
fn every_refusal_names_its_field() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            with(&[("/format", json!(1))]),
            "format",
            "expected a string",
        ),
        (with(&[("/format", json!("mdp/2"))]), "format", ""),
        (with(&[("/epsilon", Value::Null)]), "epsilon", ""),
        (with(&[("/epsilon", json!(0))]), "epsilon", ""),
        (with(&[("/epsilon", json!(true))]), "epsilon", ""),
        (
            with(&[("/metric/kind", json!(3))]),
            "metric.kind",
            "expected a string, found a number",
        ),
        (
            with(&[("/metric/kind", json!("taxicab"))]),
            "metric.kind",
            "",
        ),
        (
            with(&[("/metric/radius", json!(2))]),
            "metric.radius",
            "unknown field for a euclidean metric",
        ),
        (
            with(&[("/metric/points", json!([[0], [0, 1]]))]),
            "metric.points",
            "",
        ),
        (
            with(&[("/matrix", json!([]))]),
            "matrix",
            "must have at least one row",
        ),
        (
            with(&[("/matrix", json!([[], []]))]),
            "matrix[0]",
            "has 0 entries, expected 2",
        ),
        (
            with(&[("/matrix", json!([[0.5, 0.5], [0.5]]))]),
            "matrix[1]",
            "",
        ),
        (
            with(&[("/matrix/0", json!([-0.5, 1.5]))]),
            "matrix[0][0]",
            "",
        ),
        (with(&[("/matrix/1", json!([0, 0]))]), "matrix[1]", ""),
        (
            with(&[("/matrix", json!([[1, 0, 0], [0, 1, 0]]))]),
            "matrix",
            "",
        ),
        (
            with(&[("/outputs", json!({"of_inputs": [0], "labels": ["a"]}))]),
            "outputs",
            "expected exactly one of of_inputs, points, labels",
        ),
        (
            with(&[("/outputs", json!({"of_inputs": []}))]),
            "outputs.of_inputs",
            "must list at least one input",
        ),
        (
            with(&[("/outputs", json!({"of_inputs": [0, 2]}))]),
            "outputs.of_inputs[1]",
            "",
        ),
        (
            with(&[("/outputs", json!({"of_inputs": [0, -1]}))]),
            "outputs.of_inputs[1]",
            "expected a non-negative integer index",
        ),
        (
            with(&[("/outputs", json!({"labels": []}))]),
            "outputs.labels",
            "must list at least one label",
        ),
        (
            with(&[("/outputs", json!({"labels": ["a", true]}))]),
            "outputs.labels[1]",
            "expected a string label, found a boolean",
        ),
        (
            with(&[("/outputs", json!({"voronoi": 1}))]),
            "outputs",
            "unknown outputs kind",
        ),
        (
            with(&[("/loss", json!({"prior": [1, -1]}))]),
            "loss.prior[1]",
            "negative weight",
        ),
        (
            with(&[("/loss", json!({"prior": [0, 0]}))]),
            "loss.prior",
            "weights sum to 0",
        ),
        (with(&[("/loss", json!({"prior": [1]}))]), "loss.prior", ""),
        (
            with(&[("/loss", json!({"cost": [[1, 1]]}))]),
            "loss.cost",
            "",
        ),
        (
            with(&[("/certificate", json!({"claimed_loss": -1}))]),
            "certificate.claimed_loss",
            "a loss is ≥ 0",
        ),
        (
            with(&[(
                "/certificate",
                json!({"lower_bound": {"centers": [0], "radius": 1}}),
            )]),
            "certificate.lower_bound.kind",
            "missing or not a string",
        ),
        (
            with(&[(
                "/certificate",
                json!({"lower_bound": {"kind": "packing", "centers": [], "radius": 1}}),
            )]),
            "certificate.lower_bound.centers",
            "must list at least one center",
        ),
        (
            with(&[("/certificate", json!({"lower_bound": {"kind": "volume"}}))]),
            "certificate.lower_bound.kind",
            "unknown lower bound kind",
        ),
        (
            with(&[("/certificate", json!({"signature": 1}))]),
            "certificate.signature",
            "unknown certificate",
        ),
        (
            with(&[("/certificate", json!({"benders": 1}))]),
            "certificate.benders",
            "expected an object",
        ),
        (
            with(&[(
                "/certificate",
                json!({"benders": {"objective": "max_loss", "lower": 0, "upper": 1, "gap": 1}}),
            )]),
            "certificate.benders.gap",
            "unknown field of a benders certificate",
        ),
        (
            with(&[(
                "/certificate",
                json!({"benders": {"objective": "max_loss", "lower": 0}}),
            )]),
            "certificate.benders.upper",
            "missing",
        ),
        (
            with(&[(
                "/certificate",
                json!({"benders": {"objective": "volume", "lower": 0, "upper": 1}}),
            )]),
            "certificate.benders.objective",
            "",
        ),
        (
            with(&[("/metric/labels", json!(["a"]))]),
            "metric.labels",
            "has 1 labels, the metric has 2 points",
        ),
        (
            with(&[("/metric/labels", json!(["a", 7]))]),
            "metric.labels[1]",
            "expected a string label, found a number",
        ),
        (
            with(&[("/metric/labels", json!(["a", " b"]))]),
            "metric.labels[1]",
            "a label must be non-empty",
        ),
        (
            with(&[("/metric/labels", json!(["a", "a"]))]),
            "metric.labels[1]",
            "label",
        ),
        (
            with(&[("/neighbors", json!({"within": 0}))]),
            "neighbors.within",
            "",
        ),
        (with(&[("/delta", json!(1))]), "delta", ""),
        (with(&[("/quantile", json!("3/2"))]), "quantile", ""),
        (
            json!({"format": "mdp/1", "epsilon": 1, "metric": {"kind": "explicit", "distances": [[0, 1], [1, 0], [0, 0]]}, "matrix": [[1, 0], [0, 1]]}),
            "metric.distances",
            "expected a square matrix",
        ),
        (
            json!({"format": "mdp/1", "epsilon": 1, "metric": {"kind": "graph", "nodes": 2, "edges": [[0, 1]]}, "matrix": [[1, 0], [0, 1]]}),
            "metric.edges[0]",
            "expected [u, v, w]",
        ),
        (json!([1, 2]), "$", ""),
    ];
    let mut wrong = vec![];
    for (doc, path, message) in &cases {
        let e = refused(doc);
        if !e.path.starts_with(path) || !e.message.contains(message) || e.to_string().contains('\n')
        {
            wrong.push(format!("{doc}: got {e:?}, expected {path:?} {message:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Unknown top-level fields and unknown `loss` fields are accepted with a warning (forward
/// compatibility), naming the field.
#[test]
fn unknown_fields_are_warnings() {
    // `cost` and `prior` are known, so beside them only `units` warns.
    let loss = json!({"cost": [[0, 1], [1, 0]], "prior": [1, 1], "units": "km"});
    let doc = with(&[("/colour", json!("red")), ("/loss", loss)]);
    let f = read_mechanism(&serde_json::to_vec(&doc).unwrap(), &Limits::default()).unwrap();
    assert_eq!(f.warnings.len(), 2, "{:?}", f.warnings);
    assert!(f.warnings.iter().any(|w| w.contains("colour")));
    assert!(f.warnings.iter().any(|w| w.contains("loss.units")));
}

/// Labelled outputs have no metric, so without a `loss.cost` there is no loss to report: one
/// warning says so. With a cost, or with the inputs as outputs (the default), none.
#[test]
fn labelled_outputs_without_a_cost_warn() {
    let labels = ("/outputs", json!({"labels": ["a", "b"]}));
    let cost = ("/loss", json!({"cost": [[0, 1], [1, 0]]}));
    for (edits, warns) in [
        (vec![labels.clone()], true),
        (vec![labels, cost.clone()], false),
        (vec![cost], false),
        (vec![], false),
    ] {
        let doc = with(&edits);
        let f = read_mechanism(&serde_json::to_vec(&doc).unwrap(), &Limits::default()).unwrap();
        let w = f
            .warnings
            .iter()
            .filter(|w| w.contains("losses are not reported"));
        assert_eq!(w.count(), warns as usize, "{doc}: {:?}", f.warnings);
    }
}

/// The limits: a matrix of more entries than `max_entries`, more bits than `max_bits` or a
/// number wider than `max_number_bits` is refused before it is built; output points count
/// against the entries too.
#[test]
fn limits_refuse_before_building() {
    let text = serde_json::to_vec(&base()).unwrap();
    let tight = |f: &dyn Fn(&mut Limits)| {
        let mut l = Limits::default();
        f(&mut l);
        read_mechanism(&text, &l)
    };
    assert!(tight(&|l| l.max_entries = 3).is_err());
    assert!(tight(&|l| l.max_entries = 4).is_ok());
    assert!(tight(&|l| l.max_bits = 4).is_err());
    assert!(tight(&|l| l.max_number_bits = 1).is_err());
    let wide = with(&[("/matrix/0", json!(["1/3", "2/3"]))]);
    let e = read_mechanism(
        &serde_json::to_vec(&wide).unwrap(),
        &Limits {
            max_number_bits: 2,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert!(e.path.starts_with("matrix[0]"), "{e}");
    let pts = with(&[
        ("/outputs", json!({"points": [[0], [1], [2]]})),
        ("/matrix", json!([[1, 0, 0], [0, 1, 0]])),
    ]);
    let ptext = serde_json::to_vec(&pts).unwrap();
    assert!(read_mechanism(&ptext, &Limits::default()).is_ok());
    let e = read_mechanism(
        &ptext,
        &Limits {
            max_entries: 20,
            ..Limits::default()
        },
    )
    .unwrap_err();
    assert_eq!(e.path, "outputs.points", "{e}");
    // A file larger than max_bytes, and a directory, are refused by the reader.
    let d = std::env::temp_dir().join(format!("mdp-io-errors-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("m.json");
    std::fs::write(&f, &text).unwrap();
    let small = Limits {
        max_bytes: 10,
        ..Limits::default()
    };
    assert!(read_source(f.to_str().unwrap(), &small).is_err());
    assert_eq!(
        read_source(f.to_str().unwrap(), &Limits::default()).unwrap(),
        text
    );
    let e = read_source(d.to_str().unwrap(), &Limits::default()).unwrap_err();
    assert!(e.message.contains("is a directory"), "{e}");
}

/// Each budget at its edge: a file exactly at a limit is read, one unit under it is refused
/// (one test a side, so `>` written as `>=` or `==` fails one of them).
#[test]
fn limits_hold_exactly_at_their_edge() {
    let at = |f: &dyn Fn(&mut Limits)| {
        let mut l = Limits::default();
        f(&mut l);
        l
    };
    // Output points: n + k sites, (n + k)² distances (2 inputs, 3 outputs: 25).
    let pts = with(&[
        ("/outputs", json!({"points": [[0], [1], [2]]})),
        ("/matrix", json!([[1, 0, 0], [0, 1, 0]])),
    ]);
    let ptext = serde_json::to_vec(&pts).unwrap();
    assert!(read_mechanism(&ptext, &at(&|l| l.max_entries = 25)).is_ok());
    let e = read_mechanism(&ptext, &at(&|l| l.max_entries = 24)).unwrap_err();
    assert_eq!(e.path, "outputs.points", "{e}");

    // The bytes of a file: exactly max_bytes is read, one more is refused.
    let text = serde_json::to_vec(&base()).unwrap();
    let len = text.len() as u64;
    let d = std::env::temp_dir().join(format!("mdp-io-edge-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    let f = d.join("m.json");
    std::fs::write(&f, &text).unwrap();
    let path = f.to_str().unwrap();
    assert_eq!(
        read_source(path, &at(&|l| l.max_bytes = len)).unwrap(),
        text
    );
    assert!(read_source(path, &at(&|l| l.max_bytes = len - 1)).is_err());
    std::fs::remove_dir_all(&d).ok();

    // The bits of a parsed matrix: bits(1) = 2, so [[1, 1]] needs 4.
    let ones = json!([[1, 1]]);
    let nm = |max_bits: u64| {
        number_matrix(
            &ones,
            "m",
            None,
            None,
            &at(&|l| l.max_bits = max_bits),
            &|_| None,
        )
    };
    assert!(nm(4).is_ok());
    assert_eq!(nm(3).unwrap_err().path, "m");
    // The pre-check stops a row only once the budget is exceeded, not when it is used up: a
    // later entry's own error is still the one reported.
    let e = number_matrix(
        &json!([[1, "x"]]),
        "m",
        None,
        None,
        &at(&|l| l.max_bits = 2),
        &|_| None,
    )
    .unwrap_err();
    assert_eq!(e.path, "m[0][1]", "{e}");

    // An exact matrix given in memory (the Python path): four halves, 3 bits each.
    let doc = with(&[("/matrix", Value::Null)]);
    let half = Q::from_unsigneds(1u32, 2u32);
    let m = || Matrix::new(2, 2, vec![half.clone(); 4]);
    let given = |l: Limits| mechanism_with_matrix(&doc, m(), &l);
    assert!(given(at(&|l| l.max_number_bits = 3)).is_ok());
    let e = given(at(&|l| l.max_number_bits = 2)).unwrap_err();
    assert_eq!(e.path, "matrix[0][0]", "{e}");
    assert_eq!(given(at(&|l| l.max_bits = 11)).unwrap_err().path, "matrix");
    // At 12 the matrix fits; the file's other numbers then exceed the budget.
    assert_eq!(given(at(&|l| l.max_bits = 12)).unwrap_err().path, "$");
}

/// The file-wide budget counts every exact number the file brings: a file is read at
/// exactly its total, and refused one bit under it. The total is summed here from the
/// document's own number leaves, not from the reader's fields (a euclidean file brings no
/// radius, so the default one the space holds is not charged).
#[test]
fn the_file_budget_counts_every_number() {
    let doc = json!({"format": "mdp/1", "epsilon": "1/3",
        "metric": {"kind": "euclidean", "points": [[0, "1/2"], [5, 3]]},
        "outputs": {"points": [[0, 0], [2, "7/2"], [7, 1]]},
        "matrix": [["1/2", "1/4", "1/4"], ["1/8", "3/8", "1/2"]],
        "delta": "1/1000", "quantile": "19/20",
        "loss": {"cost": [[0, 2, 7], [5, 3, "9/4"]], "prior": [1, 3]},
        "neighbors": {"within": "3/2"},
        "certificate": {"claimed_loss": "7/3"}});
    fn leaves(v: &Value, out: &mut u64) {
        match v {
            Value::Number(_) => *out += bits(&number(v, "").unwrap()),
            Value::String(s) => {
                if let Ok(q) = number(v, "") {
                    *out += bits(&q);
                } else {
                    assert!(
                        ["mdp/1", "euclidean", "haversine"].contains(&s.as_str()),
                        "{s}"
                    );
                }
            }
            Value::Array(a) => a.iter().for_each(|x| leaves(x, out)),
            Value::Object(o) => o.values().for_each(|x| leaves(x, out)),
            _ => {}
        }
    }
    let mut total = 0;
    leaves(&doc, &mut total);
    let text = serde_json::to_vec(&doc).unwrap();
    let read = |max_bits| {
        read_mechanism(
            &text,
            &Limits {
                max_bits,
                ..Limits::default()
            },
        )
    };
    let f = read(total).unwrap();
    // Every field was read (none ignored with a warning), so each number above is one the
    // reader holds.
    assert!(f.warnings.is_empty(), "{:?}", f.warnings);
    assert!(f.certificate.claimed_loss.is_some());
    assert!(f.cost.is_some() && f.prior.is_some() && f.within.is_some());
    assert_eq!(read(total - 1).unwrap_err().path, "$");

    // A haversine file brings its radius, and it is charged.
    let hav = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "haversine", "points": [["41/1", "12"], [45, 9]], "radius": "6371/2"},
        "matrix": [[1, 0], [0, 1]], "delta": "1/7", "quantile": "1/3"});
    let mut total = 0;
    leaves(&hav, &mut total);
    let text = serde_json::to_vec(&hav).unwrap();
    let l = |max_bits| Limits {
        max_bits,
        ..Limits::default()
    };
    let r = read_mechanism(&text, &l(total));
    assert!(r.is_ok(), "{:?}", r.err());
    assert_eq!(read_mechanism(&text, &l(total - 1)).unwrap_err().path, "$");
}

/// `delta` ∈ [0, 1) and `quantile` ∈ [0, 1]: both ends, a value inside, and one just
/// outside each end.
#[test]
fn delta_and_quantile_ranges_are_exact() {
    let read = |doc: &Value| read_mechanism(&serde_json::to_vec(doc).unwrap(), &Limits::default());
    let q = |s: &str| number(&json!(s), "").unwrap();
    for d in ["0", "1/2", "999/1000"] {
        let f = read(&with(&[("/delta", json!(d))])).unwrap();
        assert_eq!(f.delta, q(d));
    }
    for d in ["-1/10", "1", "11/10"] {
        assert_eq!(
            read(&with(&[("/delta", json!(d))])).unwrap_err().path,
            "delta"
        );
    }
    for p in ["0", "1/2", "1"] {
        let f = read(&with(&[("/quantile", json!(p))])).unwrap();
        assert_eq!(f.quantile, q(p));
    }
    for p in ["-1/10", "11/10"] {
        let e = read(&with(&[("/quantile", json!(p))])).unwrap_err();
        assert_eq!(e.path, "quantile");
    }
}

/// What the writers make reads back exactly: numbers (terminating decimals as JSON numbers,
/// the rest as `p/q`), every metric kind (graphs as their exact table), the matrix, labels.
#[test]
fn written_documents_read_back_exactly() {
    assert_eq!(number_value(&Q::from_unsigneds(1u32, 4u32)), json!(0.25));
    assert_eq!(number_value(&Q::from_unsigneds(1u32, 3u32)), json!("1/3"));
    assert_eq!(q_value(&Q::from_unsigneds(1u32, 3u32)), json!("1/3"));
    assert_eq!(q_value(&Q::from_unsigneds(1u32, 4u32)), json!("0.25"));
    for x in [0.1, 1e-7, 3e20, 0.0, 123.5, 2f64.powi(-1074)] {
        let v = f64_value(x);
        assert!(v.is_number(), "{v}");
        let back: f64 = v.to_string().parse().unwrap();
        assert_eq!(back, x, "{v}");
    }
    let third = Q::from_unsigneds(1u32, 3u32);
    let spaces = vec![
        Space::from_points(
            MetricKind::Euclidean,
            vec![vec![Q::from(0u32)], vec![third.clone()]],
            None,
        )
        .unwrap(),
        Space::from_points(
            MetricKind::Manhattan,
            vec![
                vec![Q::from(0u32), Q::from(1u32)],
                vec![third.clone(), Q::from(2u32)],
            ],
            None,
        )
        .unwrap(),
        Space::from_points(
            MetricKind::Chebyshev,
            vec![vec![Q::from(5u32)], vec![third.clone()]],
            None,
        )
        .unwrap(),
        Space::from_points(
            MetricKind::Haversine,
            vec![
                vec![Q::from(41u32), Q::from(12u32)],
                vec![Q::from(45u32), Q::from(9u32)],
            ],
            Some(Q::from(6371u32)),
        )
        .unwrap(),
    ];
    let m = Matrix::new(
        2,
        2,
        vec![
            third.clone(),
            Q::from_unsigneds(2u32, 3u32),
            Q::from_unsigneds(1u32, 2u32),
            Q::from_unsigneds(1u32, 2u32),
        ],
    );
    let eps = Q::from_unsigneds(7u32, 10u32);
    for s in &spaces {
        let mut doc = mechanism_to_value(&eps, s, &m, json!({"producer": "test"}));
        set_labels(&mut doc, &["a".to_string(), "b".to_string()]);
        let f = read_mechanism(&serde_json::to_vec(&doc).unwrap(), &Limits::default()).unwrap();
        assert_eq!(f.epsilon, eps);
        assert_eq!(f.matrix, m);
        assert_eq!(f.space.kind(), s.kind());
        assert_eq!(f.space.points(), s.points());
        assert_eq!(f.space.radius(), s.radius());
        assert_eq!(f.labels, Some(vec!["a".to_string(), "b".to_string()]));
        assert_eq!(doc["meta"]["producer"], "test");
        let back = space_from_json(&space_to_value(s), &Limits::default()).unwrap();
        assert_eq!(back.points(), s.points());
    }
    // A graph is written as its exact distance table.
    let g = json!({"kind": "graph", "nodes": 3, "edges": [[0, 1, "1/3"], [1, 2, 2]]});
    let gs = space_from_json(&g, &Limits::default()).unwrap();
    let w = space_to_value(&gs);
    assert_eq!(w["kind"], "explicit");
    assert_eq!(w["distances"][0][2], json!("7/3"));
    let back = space_from_json(&w, &Limits::default()).unwrap();
    assert_eq!(back.table(), gs.table());
    // A graph without its table (issue 56) is written as its edges, and reads back as the
    // same metric.
    let third = Q::from_unsigneds(1u32, 3u32);
    let roads = mdp_audit::metric::Space::from_roads(3, &[(0, 1, third), (1, 2, Q::from(2u32))]);
    let w = space_to_value(&roads.unwrap());
    assert_eq!(
        w,
        json!({"kind": "graph", "nodes": 3, "edges": [[0, 1, "1/3"], [1, 2, "2"]]})
    );
    assert_eq!(
        space_from_json(&w, &Limits::default()).unwrap().table(),
        gs.table()
    );
    assert_eq!(matrix_value(&m)[0][0], json!("1/3"));
    assert_eq!(q_from_f64(0.5), Q::from_unsigneds(1u32, 2u32));
}

/// The metric's refusals, each naming its field: through the reader (JSON: coordinates,
/// haversine's ranges and radius, explicit tables, graphs), and the constructors' own checks
/// (`metric.rs`), which the reader's earlier checks shadow for JSON but which guard every
/// space a producer builds in Rust.
#[test]
fn metric_refusals_name_their_field() {
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            json!({"kind": "haversine", "points": [[0, 400]]}),
            "$.points[0][1]",
            "longitude outside [-360, 360]",
        ),
        (
            json!({"kind": "euclidean", "points": []}),
            "$.points",
            "must have at least one row",
        ),
        (
            json!({"kind": "euclidean", "points": [[]]}),
            "$.points[0]",
            "must have at least one column",
        ),
        (
            json!({"kind": "manhattan", "points": [[0], [0, 1]]}),
            "$.points[1]",
            "has 2 entries, expected 1",
        ),
        (
            json!({"kind": "haversine", "points": [[1, 2, 3]]}),
            "$.points",
            "haversine points are [lat, lon]",
        ),
        (
            json!({"kind": "haversine", "points": [[1, 2]], "radius": 0}),
            "$.radius",
            "must be > 0, got 0",
        ),
        (
            json!({"kind": "explicit", "distances": []}),
            "$.distances",
            "must have at least one row",
        ),
        (
            json!({"kind": "explicit", "distances": [[0, 1], [1]]}),
            "$.distances",
            "has 1 entries, expected 2",
        ),
        (
            json!({"kind": "explicit", "distances": [[0, -1], [-1, 0]]}),
            "$.distances[0][1]",
            "negative distance",
        ),
        (
            json!({"kind": "graph", "nodes": 0, "edges": []}),
            "$.nodes",
            "must be ≥ 1",
        ),
        (
            json!({"kind": "graph", "nodes": 2, "edges": [[0, 5, 1]]}),
            "$.edges[0][1]",
            "index 5 out of range 0..2",
        ),
        (
            json!({"kind": "graph", "nodes": 2, "edges": [[0, 1, 0]]}),
            "$.edges[0][2]",
            "must be > 0, got 0",
        ),
        (
            json!({"kind": "graph", "nodes": 3, "edges": [[0, 1, 1]]}),
            "$.edges",
            "graph is disconnected",
        ),
    ];
    let mut wrong = vec![];
    for (m, path, message) in &cases {
        match space_from_json(m, &Limits::default()) {
            Err(e) if e.message.contains(message) && e.path.starts_with(path) => {}
            other => wrong.push(format!("{m}: got {other:?}, expected {path} {message:?}")),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let z = || Q::from(0u32);
    let rust: Vec<(Result<Space, mdp_audit::error::InputError>, &str)> = vec![
        (
            Space::from_points(MetricKind::Euclidean, vec![], None),
            "must hold at least one point",
        ),
        (
            Space::from_points(MetricKind::Euclidean, vec![vec![]], None),
            "a point needs at least one coordinate",
        ),
        (
            Space::from_points(MetricKind::Manhattan, vec![vec![z()], vec![z(), z()]], None),
            "has 2 coordinates, points[0] has 1",
        ),
        (
            Space::from_points(
                MetricKind::Haversine,
                vec![vec![z(), Q::from(400u32)]],
                None,
            ),
            "longitude outside [-360, 360]",
        ),
        (
            Space::from_points(MetricKind::Haversine, vec![vec![z()]], None),
            "haversine points are [lat, lon]",
        ),
        (
            Space::from_points(MetricKind::Haversine, vec![vec![z(), z()]], Some(z())),
            "must be in (0,",
        ),
        (Space::from_table(vec![]), "must hold at least one row"),
        (
            Space::from_table(vec![vec![z(), z()], vec![z()]]),
            "has 1 entries, expected 2 (square matrix)",
        ),
        (Space::from_graph(0, &[]), "must be ≥ 1"),
        (
            Space::from_graph(2, &[(0, 5, Q::from(1u32))]),
            "node index out of range 0..2",
        ),
        (
            Space::from_graph(2, &[(0, 1, z())]),
            "edge weight must be > 0",
        ),
        (
            Space::from_graph(3, &[(0, 1, Q::from(1u32)), (0, 1, Q::from(2u32))]),
            "graph is disconnected",
        ),
    ];
    let mut wrong = vec![];
    for (r, message) in rust {
        match r {
            Err(e) if e.message.contains(message) => {}
            other => wrong.push(format!(
                "got {:?}, expected {message:?}",
                other.map(|s| s.n())
            )),
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let line = Space::from_points(MetricKind::Manhattan, vec![vec![z()]], None).unwrap();
    let e = line.with_extra_points(vec![vec![z(), z()]]).unwrap_err();
    assert!(
        e.message
            .contains("has 2 coordinates, the metric's points have 1"),
        "{e}"
    );
    let table = Space::from_table(vec![vec![z()]]).unwrap();
    let e = table.with_extra_points(vec![vec![z()]]).unwrap_err();
    assert!(
        e.message.contains("output points need a coordinate metric"),
        "{e}"
    );
    // Output points on a table metric: read, then refused by the audit (exit 2), by name.
    let pts = with(&[
        (
            "/metric",
            json!({"kind": "explicit", "distances": [[0, 1], [1, 0]]}),
        ),
        ("/outputs", json!({"points": [[0]]})),
        ("/matrix", json!([[1], [1]])),
    ]);
    let f = read_mechanism(&serde_json::to_vec(&pts).unwrap(), &Limits::default()).unwrap();
    let e = mdp_audit::audit(&f, &mdp_audit::AuditOptions::default()).unwrap_err();
    assert!(e.path.starts_with("outputs.points"), "{e}");
    assert!(
        e.message.contains("output points need a coordinate metric"),
        "{e}"
    );
    let dims = with(&[
        ("/outputs", json!({"points": [[0, 1]]})),
        ("/matrix", json!([[1], [1]])),
    ]);
    let f = read_mechanism(&serde_json::to_vec(&dims).unwrap(), &Limits::default()).unwrap();
    let e = mdp_audit::audit(&f, &mdp_audit::AuditOptions::default()).unwrap_err();
    assert_eq!(e.path, "outputs.points[0]", "{e}");
    assert!(
        e.message
            .contains("has 2 coordinates, the metric's points have 1"),
        "{e}"
    );
}

/// The η-graph's components, numbered by smallest member; the nearest inputs by distance,
/// ties by index.
#[test]
fn components_and_nearest_neighbours() {
    use mdp_audit::metric::components;
    assert_eq!(
        components(6, &[(4, 1), (2, 5), (1, 3)]),
        vec![0, 1, 2, 1, 1, 2]
    );
    assert_eq!(components(3, &[]), vec![0, 1, 2]);
    let s = Space::from_points(
        MetricKind::Manhattan,
        [0i64, 5, 1, 4, 6]
            .iter()
            .map(|&x| vec![Q::from(x)])
            .collect(),
        None,
    )
    .unwrap();
    assert_eq!(s.nearest_neighbours(0, 2), vec![2, 3]);
    // 5 is at distance 1 from both 4 and 6: the smaller index first.
    assert_eq!(s.nearest_neighbours(1, 3), vec![3, 4, 2]);
    assert_eq!(s.nearest_neighbours(1, 10).len(), 4);
}

/// The `lp_dual` certificate's own refusals (`io/lp_dual.rs`, spec/lp.md §5), by path; and
/// its writer reads back as the same certificate.
#[test]
fn lp_dual_refusals_and_round_trip() {
    use mdp_audit::io::lp_dual::to_value;
    let dual = |extra: Value| {
        let mut c = json!({"kind": "lp_dual", "objective": "max_loss", "value": "1/4",
            "beta": [1, 1], "gamma": [[0, 1, 0, "1/8"]]});
        for (k, v) in extra.as_object().unwrap() {
            if v.is_null() {
                c.as_object_mut().unwrap().remove(k);
            } else {
                c[k] = v.clone();
            }
        }
        with(&[("/certificate", json!({"lower_bound": c}))])
    };
    let cases: Vec<(Value, &str, &str)> = vec![
        (
            dual(json!({"sign": 1})),
            "certificate.lower_bound.sign",
            "unknown field of an lp_dual certificate",
        ),
        (
            dual(json!({"beta": [1]})),
            "certificate.lower_bound.beta",
            "has 1 entries, expected n = 2",
        ),
        (
            dual(json!({"beta": [1, -1]})),
            "certificate.lower_bound.beta[1]",
            "negative weight",
        ),
        (
            dual(json!({"beta": [0, 0]})),
            "certificate.lower_bound.beta",
            "all weights are 0",
        ),
        (
            dual(json!({"objective": "expected_loss"})),
            "certificate.lower_bound.beta",
            "expected_loss uses loss.prior, not beta",
        ),
        (
            dual(json!({"gamma": [[0, 1, 0, "1/8"], [0, 1, 0, "1/9"]]})),
            "certificate.lower_bound.gamma[1]",
            "listed twice",
        ),
    ];
    let mut wrong = vec![];
    for (doc, path, message) in &cases {
        let e = refused(doc);
        if !e.path.starts_with(path) || !e.message.contains(message) {
            wrong.push(format!("{doc}: got {e:?}, expected {path:?} {message:?}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let doc = dual(json!({}));
    let f = read_mechanism(&serde_json::to_vec(&doc).unwrap(), &Limits::default()).unwrap();
    let c = f.certificate.lp_dual.clone().unwrap();
    let back = with(&[("/certificate", json!({"lower_bound": to_value(&c)}))]);
    let g = read_mechanism(&serde_json::to_vec(&back).unwrap(), &Limits::default()).unwrap();
    let d = g.certificate.lp_dual.unwrap();
    assert_eq!((d.value, d.beta, d.gamma), (c.value, c.beta, c.gamma));
}

/// A refused number is named in its message: in full when it is short (up to 30
/// characters), in scientific notation when longer or wider than 200 bits, never empty.
#[test]
fn refused_numbers_are_named_in_full_or_in_scientific_notation() {
    let message = |x: &str| {
        let doc = with(&[("/matrix/0", json!([x, 1]))]);
        let e = read_mechanism(&serde_json::to_vec(&doc).unwrap(), &Limits::default());
        let e = e.unwrap_err();
        assert_eq!(e.path, "matrix[0][0]", "{e}");
        e.message
    };
    let ones = |k: usize| format!("-1/{}", "1".repeat(k));
    assert_eq!(message("-1/3"), "negative entry -1/3");
    assert_eq!(ones(27).len(), 30);
    assert_eq!(message(&ones(27)), format!("negative entry {}", ones(27)));
    // 31 characters: -1/(10²⁸/9) ≈ −9·10⁻²⁸.
    assert_eq!(message(&ones(28)), "negative entry -9e-28");
    // 1/10⁷⁰ holds 234 bits.
    let wide = format!("-1/1{}", "0".repeat(70));
    assert_eq!(message(&wide), "negative entry -1e-70");
}

/// A claimed loss of 0 is a claim like any other (≥ 0); below 0 it is refused.
#[test]
fn a_claimed_loss_is_at_least_zero() {
    for (loss, ok) in [
        (json!(0), true),
        (json!("1/2"), true),
        (json!("-1/10"), false),
    ] {
        let doc = with(&[("/certificate", json!({"claimed_loss": loss}))]);
        let f = read_mechanism(&serde_json::to_vec(&doc).unwrap(), &Limits::default());
        match f {
            Ok(f) => assert!(ok && f.certificate.claimed_loss.is_some(), "{loss}"),
            Err(e) => assert!(!ok && e.path == "certificate.claimed_loss", "{loss}: {e}"),
        }
    }
}

/// Written doubles: plain decimals from 10⁻⁵ up to (not including) 10¹⁶, scientific notation
/// beyond on either side (5·10⁻³²⁴ is not 324 zeros), 0 as 0; every one reads back exactly.
#[test]
fn doubles_are_written_plain_or_scientific_by_magnitude() {
    for (x, text) in [
        (0.0, "0"),
        (0.5, "0.5"),
        (-0.5, "-0.5"),
        (1e-5, "0.00001"),
        (-1e-5, "-0.00001"),
        (9.9e-6, "9.9e-6"),
        (-9.9e-6, "-9.9e-6"),
        (5e-324, "5e-324"),
        (1e15, "1000000000000000"),
        (9999999999999998.0, "9999999999999998"),
        (1e16, "1e+16"),
        (-1e16, "-1e+16"),
    ] {
        let v = f64_value(x);
        assert_eq!(v.to_string(), text, "{x:e}");
        assert_eq!(v.as_f64(), Some(x), "{x:e}");
    }
}

/// A space's label errors are named where they are: `labels` in a bare metric object,
/// `metric.labels` in a document that holds one.
#[test]
fn label_errors_name_the_field_where_it_is() {
    let metric = json!({"kind": "euclidean", "points": [[0], [1]], "labels": ["a"]});
    for (doc, path) in [
        (metric.clone(), "labels"),
        (json!({"metric": metric}), "metric.labels"),
    ] {
        let e = mdp_audit::io::space_and_labels_from_json(&doc, &Limits::default()).unwrap_err();
        assert_eq!(e.path, path, "{e}");
        assert!(e.message.contains("has 1 labels"), "{e}");
    }
}
