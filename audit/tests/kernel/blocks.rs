//! The kernel's own tests of the audit by blocks of columns (`structured::blocks`, issue 35
//! part 4: what the Python package's `metricdp.distributed` runs on Dask workers). Privacy is
//! a statement per column, so the blocks' combination must give the whole audit's verdict and
//! tight ε, on passing files and on planted violations from 10⁻¹⁴ to 10 relative, whichever
//! block holds the violation and however the pairs are shared; and the combination refuses
//! results that do not tile the columns, miss a share, or come from another file.

use mdp_audit::audit::{Options, Verdict};
use mdp_audit::exact::Q;
use mdp_audit::io::{npy, Limits};
use mdp_audit::progress::Silent;
use mdp_audit::source::audit_path;
use mdp_audit::structured::blocks::{add_sums, audit_block, combine, partial_sums, shape};
use mdp_audit::structured::Part;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

const N: usize = 24;
const MEMORY: u64 = 1 << 30;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mdp-blocks-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A container on the line 0, 1, …, N−1 (euclidean) claiming ε: the header's path.
fn container(d: &Path, eps: &str, data: &[f64]) -> PathBuf {
    let mut bytes = Vec::new();
    npy::write(&mut bytes, N, N, data).unwrap();
    std::fs::write(d.join("m.npy"), bytes).unwrap();
    let pts: Vec<Value> = (0..N).map(|i| json!([i])).collect();
    let doc = json!({"format": "mdp/1", "epsilon": eps,
        "metric": {"kind": "euclidean", "points": pts}, "matrix": {"npy": "m.npy"}});
    let h = d.join("m.json");
    std::fs::write(&h, serde_json::to_vec(&doc).unwrap()).unwrap();
    h
}

/// Every entry 1 except M[0][w] = x. Row 0 sums to 23 + x, the others to 24, so the pair
/// (0, 1) at distance 1 has the ratio H[0][w] / H[1][w] = 24x / (23 + x): ε·d private at ε
/// iff x ≤ x* = 23·e^ε / (24 − e^ε); the reverse ratio (23 + x)/(24x) bounds x from below by
/// 23/(24e^ε − 1) ≈ 0.90 at ε = 1/10 (the other pairs are farther).
fn planted(x: f64, w: usize) -> Vec<f64> {
    let mut m = vec![1.0; N * N];
    m[w] = x;
    m
}

fn x_star(eps: f64) -> f64 {
    23.0 * eps.exp() / (24.0 - eps.exp())
}

/// The audit split into column blocks `cuts` (0 = c_0 < … < c_B = N), block b's pairs shared
/// among `shares[b]` tasks, combined: the combined report.
/// The whole rows' exact sums, added from the column blocks `cuts` (0 = c_0 < … < c_B = N).
fn row_sums(h: &Path, cuts: &[usize]) -> Vec<String> {
    let parts: Vec<Vec<String>> = cuts
        .windows(2)
        .map(|c| partial_sums(h, c[0], c[1], &Limits::default(), MEMORY).unwrap())
        .collect();
    add_sums(&parts).unwrap()
}

/// One task of the block audit: columns `c0..c1` on `part` of the pairs, at the header's ε
/// or `epsilon`, with at most `budget` exact triples (4096 bits, default limits).
fn task(
    h: &Path,
    c0: usize,
    c1: usize,
    part: Part,
    sums: &[String],
    epsilon: Option<&str>,
    budget: u64,
) -> Result<String, mdp_audit::error::InputError> {
    audit_block(
        h,
        c0,
        c1,
        part,
        sums,
        epsilon,
        4096,
        budget,
        &Limits::default(),
        MEMORY,
    )
}

fn by_blocks(h: &Path, cuts: &[usize], shares: &[usize], row_sum_tolerance: &Q) -> Value {
    let limits = Limits::default();
    let (n, k, eps) = shape(h, &limits).unwrap();
    assert_eq!((n, k), (N, N));
    let sums = row_sums(h, cuts);
    let mut results = Vec::new();
    for (b, c) in cuts.windows(2).enumerate() {
        for i in 0..shares[b] {
            let part = Part::new(i, shares[b]).unwrap();
            results.push(task(h, c[0], c[1], part, &sums, None, 1 << 24).unwrap());
        }
    }
    // The order results arrive in does not matter.
    results.reverse();
    combine(&results, &sums, n, k, &eps, row_sum_tolerance).unwrap()
}

/// The planted matrices' rows sum to 24 and 23 + x, not 1: privacy is a property of the
/// normalized rows, so their audits accept any row sums here.
fn loose() -> Q {
    Q::from(100u32)
}

fn whole(h: &Path) -> mdp_audit::Report {
    audit_path(
        h.to_str().unwrap(),
        &Limits::default(),
        MEMORY,
        &Options {
            row_sum_tolerance: loose(),
            ..Options::default()
        },
        &Silent,
    )
    .unwrap()
}

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Pass => "pass",
        Verdict::Fail => "fail",
        Verdict::Inconclusive => "inconclusive",
    }
}

/// The combined tight ε encloses the same value as the whole audit's: the enclosures meet.
fn same_tight(c: &Value, r: &mdp_audit::Report) {
    let t = &c["epsilon_tight"];
    let (lo, hi) = (
        t[0].as_f64().unwrap(),
        t[1].as_f64().unwrap_or(f64::INFINITY),
    );
    let (wlo, whi) = (
        r.epsilon_tight[0].unwrap(),
        r.epsilon_tight[1].unwrap_or(f64::INFINITY),
    );
    assert!(
        lo <= whi && wlo <= hi,
        "blocks [{lo}, {hi}] whole [{wlo}, {whi}]"
    );
    assert!(
        hi - lo <= 1e-9 * hi.max(1.0),
        "blocks [{lo}, {hi}] too wide"
    );
}

#[test]
fn blocks_give_the_whole_audits_verdict_and_tight_eps_at_every_scale() {
    let eps = 0.1f64;
    let xs = x_star(eps);
    let splits: [(&[usize], &[usize]); 3] = [
        (&[0, N], &[1]),
        (&[0, 7, 16, N], &[1, 2, 3]),
        (&[0, 1, 2, 12, N], &[2, 1, 4, 1]),
    ];
    let d = dir("scales");
    let mut failed = 0;
    for r in [1e-14, 1e-9, 1e-3, 1.0, 10.0] {
        for (x, want) in [(xs * (1.0 + r), "fail"), (xs * (1.0 - r.min(1e-2)), "pass")] {
            for w in [0, 5, 13, N - 1] {
                let h = container(&d, "1/10", &planted(x, w));
                let full = whole(&h);
                assert_eq!(verdict(full.verdict), want, "x = {x}, w = {w}");
                for (cuts, shares) in splits {
                    let c = by_blocks(&h, cuts, shares, &loose());
                    assert_eq!(c["verdict"], want, "x = {x}, w = {w}, cuts {cuts:?}");
                    assert_eq!(c["tasks"], shares.iter().sum::<usize>());
                    same_tight(&c, &full);
                    if want == "fail" {
                        failed += 1;
                    }
                    // Up to 10⁻³ the pair (0, 1) at the planted column is the only violation;
                    // beyond, farther pairs and other columns fail too.
                    if want == "fail" && r <= 1e-3 {
                        let wit = &c["witness"]["witness"];
                        assert_eq!(wit["w"], w, "the witness names the planted column: {c}");
                        assert_eq!((wit["u"].as_u64(), wit["v"].as_u64()), (Some(0), Some(1)));
                    } else if want == "pass" {
                        assert!(c["witness"].is_null());
                    }
                }
            }
        }
    }
    assert_eq!(failed, 5 * 4 * 3);
}

#[test]
fn sums_far_from_one_fail_the_row_sum_check() {
    let d = dir("rows");
    // Rows sum to 24: private (every ratio 1) but not stochastic.
    let h = container(&d, "1", &vec![1.0; N * N]);
    let tol = Q::from_unsigneds(1u32, 1_000_000u32);
    let c = by_blocks(&h, &[0, 10, N], &[1, 1], &tol);
    assert_eq!(c["verdict"], "fail");
    assert_eq!(c["row_sums"], "fail");
    assert!(c["witness"].is_null());
    // Normalized, it passes with tight ε 0.
    let h = container(&d, "1", &vec![1.0 / 32.0 * (32.0 / 24.0); N * N]);
    let c = by_blocks(&h, &[0, 10, N], &[1, 1], &tol);
    assert_eq!(c["row_sums"], "pass");
    assert_eq!(c["verdict"], "pass");
    assert_eq!(c["epsilon_tight"][0], 0.0);
}

#[test]
fn the_combination_refuses_results_that_are_not_one_audit() {
    let d = dir("refuse");
    let limits = Limits::default();
    let h = container(&d, "1/10", &planted(1.0, 0));
    let (n, k, eps) = shape(&h, &limits).unwrap();
    let sums = row_sums(&h, &[0, 10, N]);
    let block =
        |c0, c1, i, of| task(&h, c0, c1, Part::new(i, of).unwrap(), &sums, None, 1 << 24).unwrap();
    let tol = Q::from_unsigneds(1u32, 1_000_000u32);
    let message = |results: &[String]| {
        combine(results, &sums, n, k, &eps, &tol)
            .unwrap_err()
            .message
    };
    let (a, b) = (block(0, 10, 0, 1), block(10, N, 0, 1));
    // A task's work: its share's ordered pairs (all 24·23) × its columns × its passes.
    let work = &serde_json::from_str::<Value>(&b).unwrap()["work"];
    let passes = work["passes"].as_u64().unwrap();
    assert!(passes >= 1);
    assert_eq!(work["pass_triples"].as_u64(), Some(24 * 23 * 14 * passes));
    assert!(combine(&[a.clone(), b.clone()], &sums, n, k, &eps, &tol).is_ok());
    assert!(message(std::slice::from_ref(&a)).contains("cover columns 0..10, not 0..24"));
    assert!(message(std::slice::from_ref(&b)).contains("do not tile"));
    assert!(message(&[a.clone(), a.clone(), b.clone()]).contains("do not tile"));
    // A block shared in two, with one share missing or given twice.
    let (s0, s1) = (block(10, N, 0, 2), block(10, N, 1, 2));
    assert!(combine(
        &[a.clone(), s0.clone(), s1.clone()],
        &sums,
        n,
        k,
        &eps,
        &tol
    )
    .is_ok());
    assert!(message(&[a.clone(), s0.clone()]).contains("share 1 of 2"));
    assert!(message(&[a.clone(), s0.clone(), s0.clone()]).contains("share 1 of 2"));
    // The report counts column ranges and tasks.
    let c = combine(
        &[a.clone(), s0.clone(), s1.clone()],
        &sums,
        n,
        k,
        &eps,
        &tol,
    )
    .unwrap();
    assert_eq!(
        (c["blocks"].as_u64(), c["tasks"].as_u64()),
        (Some(2), Some(3))
    );
    // Shares dealt from another list of pairs (its layout digest changed) do not partition
    // the pairs of this one: refused.
    let mut forged: Value = serde_json::from_str(&s1).unwrap();
    forged["layout"] = json!("0000000000000000");
    let forged = forged.to_string();
    assert!(message(&[a.clone(), s0.clone(), forged]).contains("share 1 of 2"));
    // A block audited on another file (same shape, another matrix).
    let d2 = dir("refuse-other");
    let h2 = container(&d2, "1/10", &planted(2.0, 3));
    let other = task(&h2, 10, N, Part::WHOLE, &sums, None, 1 << 24).unwrap();
    assert!(message(&[a.clone(), other]).contains("another file"));
    // Sums of the wrong count, a row whose sums add to 0, garbage results.
    assert!(combine(&[a.clone(), b.clone()], &sums[1..], n, k, &eps, &tol).is_err());
    assert!(
        add_sums(&[vec!["1".into(), "0".into()], vec!["0".into(), "0".into()]])
            .unwrap_err()
            .path
            .contains("matrix[1]")
    );
    assert!(add_sums(&[vec!["1".into()], vec!["1".into(), "1".into()]]).is_err());
    assert!(combine(&["{".into()], &sums, n, k, &eps, &tol).is_err());
    // A block refuses sums of the wrong count or a sum that is not positive.
    let bad = task(&h, 0, 10, Part::WHOLE, &sums[1..], None, 1 << 24);
    assert!(bad.unwrap_err().message.contains("23 sums for 24 rows"));
    let mut zero = sums.clone();
    zero[4] = "0".into();
    let bad = task(&h, 0, 10, Part::WHOLE, &zero, None, 1 << 24);
    assert_eq!(bad.unwrap_err().path, "sums[4]");
    // A header that is not a container.
    let js = d.join("plain.json");
    std::fs::write(&js, br#"{"format": "mdp/1", "epsilon": 1, "metric": {"kind": "euclidean", "points": [[0], [1]]}, "matrix": [[1, 0], [0, 1]]}"#).unwrap();
    assert!(shape(&js, &limits)
        .unwrap_err()
        .message
        .contains("not a container"));
}

/// A pipeline's ε (not the file's claim) given to every block decides the verdict: the file
/// claims 1/10 and is private there; at 1/20 it fails.
#[test]
fn a_required_epsilon_is_what_the_blocks_check() {
    let d = dir("required");
    let h = container(&d, "1/10", &planted(x_star(0.1) * 0.999, 2));
    let sums = row_sums(&h, &[0, N]);
    for (e, want) in [("1/10", "pass"), ("1/20", "fail")] {
        let r = task(&h, 0, N, Part::WHOLE, &sums, Some(e), 1 << 24).unwrap();
        let r: Value = serde_json::from_str(&r).unwrap();
        assert_eq!(r["verdict"], want, "ε = {e}");
    }
}

/// A ratio within the float filter's resolution of its bound (10⁻¹⁶) goes to the exact
/// fallback, whose triples count against the budget: past it, a one-line input error, in a
/// block and in the whole audit alike.
#[test]
fn the_exact_fallback_counts_against_its_budget() {
    let d = dir("budget");
    // x* to 2⁻²⁰⁰, then the nearest double: its ratio is within 10⁻¹⁶ of its bound.
    let c = mdp_audit::exact::functions::exp(
        &mdp_audit::exact::Interval::point(Q::from_unsigneds(1u32, 10u32)),
        200,
    )
    .mid();
    let x = mdp_audit::exact::f64_nearest(&(Q::from(23u32) * &c / (Q::from(24u32) - &c)));
    let h = container(&d, "1/10", &planted(x, 3));
    let limits = Limits::default();
    let sums = row_sums(&h, &[0, N]);
    let block = |budget| task(&h, 0, N, Part::WHOLE, &sums, None, budget);
    let e = block(0).unwrap_err();
    assert!(
        e.message
            .contains("the exact fallback needs more than 0 exact triples"),
        "{e}"
    );
    let r: Value = serde_json::from_str(&block(1 << 24).unwrap()).unwrap();
    assert!(r["work"]["exact_triples"].as_u64().unwrap() > 0, "{r}");
    let opts = |budget| Options {
        max_exact_triples: budget,
        row_sum_tolerance: loose(),
        ..Options::default()
    };
    let path = h.to_str().unwrap();
    assert!(audit_path(path, &limits, MEMORY, &opts(0), &Silent).is_err());
    assert!(audit_path(path, &limits, MEMORY, &opts(1 << 24), &Silent).is_ok());
}

/// A block whose tight ε straddles ε but whose check passed proves ε* ≤ ε: the combined
/// upper end is ε, not the block's (a uniform, stochastic matrix; one block's result edited).
#[test]
fn a_passing_combination_clips_the_tight_upper_end_at_epsilon() {
    let d = dir("clip");
    let h = container(&d, "1/10", &vec![1.0 / 24.0; N * N]);
    let (n, k, eps) = shape(&h, &Limits::default()).unwrap();
    let sums = row_sums(&h, &[0, 10, N]);
    let block = |c0, c1| task(&h, c0, c1, Part::WHOLE, &sums, None, 1 << 24).unwrap();
    let tol = Q::from_unsigneds(1u32, 1_000_000u32);
    let mut wide: Value = serde_json::from_str(&block(10, N)).unwrap();
    wide["tight"] = json!(["0", "1/5"]);
    let c = combine(&[block(0, 10), wide.to_string()], &sums, n, k, &eps, &tol).unwrap();
    assert_eq!(c["verdict"], "pass", "{c}");
    assert_eq!(c["epsilon_tight"][1].as_f64(), Some(0.1), "{c}");
}
