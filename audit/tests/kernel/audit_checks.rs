//! The kernel's own tests of the audit's checks beyond pure privacy (`audit.rs`), on files
//! small enough to work out by hand: the `benders` certificate (spec/benders.md §4) against
//! its `lp_dual`, the claimed loss (float enclosure, then the exact rational fallback), the
//! pipeline's scope policy, the (ε,δ) tight ε (Imola et al. eqs. 9–10) and the row sums.
//! Before these the kernel's suite reached those branches only from the solver crate.

use mdp_audit::audit::{Options, ScopePolicy, Verdict};
use mdp_audit::{audit, read_mechanism, Limits, Q};
use serde_json::{json, Value};

fn q(a: i64, b: u64) -> Q {
    Q::from_signeds(a, b as i64)
}

fn run(doc: &Value, opts: &Options) -> mdp_audit::Report {
    let text = serde_json::to_vec(doc).unwrap();
    let file = read_mechanism(&text, &Limits::default()).unwrap();
    audit(&file, opts).unwrap()
}

fn check<'a>(r: &'a mdp_audit::Report, name: &str) -> &'a mdp_audit::audit::Check {
    r.checks
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no {name} check in {:?}", r.checks))
}

/// Two inputs on a manhattan line at distance 1, ε = 1, outputs the inputs, cost the
/// distance, the uniform prior: H = [[7/10, 3/10], [3/10, 7/10]] is private (7/3 < e) and
/// its expected loss is exactly 3/10. The dual with γ = 1/8 on the rows (0, 1, k = 0) and
/// (1, 0, k = 1) proves α_u = min(1/8, ½ − c/8) = 1/8 (c = e rounded up < 3), so 1/4 in
/// all (the optimum is 1/(1 + e) ≈ 0.269).
fn two_points(lp_value: &str, objective: &str, benders: Option<Value>) -> Value {
    let mut cert = json!({"lower_bound": {"kind": "lp_dual", "objective": objective,
        "value": lp_value, "gamma": [[0, 1, 0, "1/8"], [1, 0, 1, "1/8"]]}});
    if objective == "max_loss" {
        cert["lower_bound"]["beta"] = json!([1, 1]);
    }
    if let Some(b) = benders {
        cert["benders"] = b;
    }
    json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1]]},
        "matrix": [["7/10", "3/10"], ["3/10", "7/10"]],
        "loss": {"prior": [1, 1]},
        "certificate": cert})
}

fn benders(lower: &str, upper: &str) -> Value {
    json!({"objective": "expected_loss", "lower": lower, "upper": upper})
}

#[test]
fn benders_bounds_are_checked_against_the_dual_and_the_matrix() {
    let o = Options::default();
    // Lower at the proof, upper above the loss: pass, with the gap.
    let r = run(
        &two_points("1/4", "expected_loss", Some(benders("1/4", "1/2"))),
        &o,
    );
    assert_eq!(check(&r, "lp_dual").verdict, Verdict::Pass);
    let b = check(&r, "benders");
    assert_eq!(b.verdict, Verdict::Pass, "{}", b.detail);
    let w = b.witness.as_ref().unwrap();
    assert!((w["gap"].as_f64().unwrap() - 0.25).abs() < 1e-15, "{w}");
    // The gap relative to the lower bound: (1/2 − 1/4) / (1/4).
    assert!(
        (w["relative_gap"].as_f64().unwrap() - 1.0).abs() < 1e-15,
        "{w}"
    );
    assert_eq!(r.verdict, Verdict::Pass);
    // Lower above the proven 1/4 (though below the optimum): fail.
    let r = run(
        &two_points("1/4", "expected_loss", Some(benders("26/100", "1/2"))),
        &o,
    );
    let b = check(&r, "benders");
    assert_eq!(b.verdict, Verdict::Fail);
    assert!(b.detail.contains("claimed lower bound"), "{}", b.detail);
    assert_eq!(r.verdict, Verdict::Fail);
    // Upper below this matrix's loss 3/10: fail; at exactly 3/10 the enclosure cannot tell.
    let r = run(
        &two_points("1/4", "expected_loss", Some(benders("1/4", "29/100"))),
        &o,
    );
    assert_eq!(check(&r, "benders").verdict, Verdict::Fail);
    let r = run(
        &two_points("1/4", "expected_loss", Some(benders("1/4", "3/10"))),
        &o,
    );
    assert_eq!(check(&r, "benders").verdict, Verdict::Inconclusive);
    assert_eq!(r.verdict, Verdict::Inconclusive);
    // At exactly the loss enclosure's lower end (a double below 3/10) the upper bound is not
    // shown to be below the loss: inconclusive, not a failure.
    let lo = r.expected_loss.expect("a loss")[0];
    assert!(lo < 0.3);
    let at_lo = mdp_audit::exact::format_rational(&Q::try_from(lo).unwrap());
    let r = run(
        &two_points("1/4", "expected_loss", Some(benders("1/4", &at_lo))),
        &o,
    );
    assert_eq!(
        check(&r, "benders").verdict,
        Verdict::Inconclusive,
        "{at_lo}"
    );
    // At exactly its upper end the upper bound is proven: L ≤ hi ≤ upper.
    let hi = r.expected_loss.expect("a loss")[1];
    let at_hi = mdp_audit::exact::format_rational(&Q::try_from(hi).unwrap());
    let r = run(
        &two_points("1/4", "expected_loss", Some(benders("1/4", &at_hi))),
        &o,
    );
    assert_eq!(check(&r, "benders").verdict, Verdict::Pass, "{at_hi}");
    // The dual bounds the other objective: fail, naming both.
    let mut doc = two_points("1/4", "max_loss", Some(benders("1/4", "1/2")));
    let r = run(&doc, &o);
    let b = check(&r, "benders");
    assert_eq!(b.verdict, Verdict::Fail);
    assert!(
        b.detail.contains("the lp_dual certificate bounds max_loss"),
        "{}",
        b.detail
    );
    // No dual at all, or a rejected one (its value above what it proves).
    doc["certificate"]
        .as_object_mut()
        .unwrap()
        .remove("lower_bound");
    let b = run(&doc, &o)
        .checks
        .into_iter()
        .find(|c| c.name == "benders")
        .unwrap();
    assert_eq!(b.verdict, Verdict::Fail);
    assert!(b.detail.contains("has none"), "{}", b.detail);
    let r = run(
        &two_points("26/100", "expected_loss", Some(benders("1/4", "1/2"))),
        &o,
    );
    assert_eq!(check(&r, "lp_dual").verdict, Verdict::Fail);
    assert!(check(&r, "benders").detail.contains("rejected"));
}

/// The lp_dual's own report: the proven bound and this matrix's gap to it.
#[test]
fn the_lp_dual_reports_its_bound_and_the_gap() {
    let r = run(
        &two_points("1/4", "expected_loss", None),
        &Options::default(),
    );
    let c = check(&r, "lp_dual");
    assert_eq!(c.verdict, Verdict::Pass);
    let w = c.witness.as_ref().unwrap();
    assert_eq!(w["bound"], 0.25);
    assert_eq!(w["objective"], "expected_loss");
    assert!(
        c.detail.contains("certified gap ≤ 5.000e-2"),
        "{}",
        c.detail
    );
    let e = r.expected_loss.unwrap();
    assert!(e[0] <= 0.3 && 0.3 <= e[1] && e[1] - e[0] < 1e-15);
}

fn claimed(kind: &str, claim: &str) -> Value {
    json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": kind, "points": [[0], [1]]},
        "matrix": [["7/10", "3/10"], ["3/10", "7/10"]],
        "certificate": {"claimed_loss": claim}})
}

/// L(M) = 3/10 on both metrics. With a tolerance of 0 the float enclosure of 3/10 cannot
/// decide a claim of exactly 3/10: on the manhattan line the exact rational loss does
/// (pass), on the euclidean line (distances are square roots) it stays inconclusive. A claim
/// off by 10⁻⁶ fails; within the default tolerance 10⁻⁹ it passes.
#[test]
fn claimed_losses_are_decided_by_the_enclosure_then_exactly() {
    let zero = Options {
        loss_tolerance: q(0, 1),
        ..Options::default()
    };
    let r = run(&claimed("manhattan", "3/10"), &zero);
    assert_eq!(check(&r, "claimed_loss").verdict, Verdict::Pass);
    let r = run(&claimed("euclidean", "3/10"), &zero);
    assert_eq!(check(&r, "claimed_loss").verdict, Verdict::Inconclusive);
    let r = run(&claimed("manhattan", "0.300001"), &zero);
    assert_eq!(check(&r, "claimed_loss").verdict, Verdict::Fail);
    let r = run(&claimed("manhattan", "0.2999999"), &Options::default());
    assert_eq!(check(&r, "claimed_loss").verdict, Verdict::Fail);
    let r = run(&claimed("euclidean", "0.3000000001"), &Options::default());
    assert_eq!(check(&r, "claimed_loss").verdict, Verdict::Pass);
    // Exactly: the manhattan claim 3/10 + 10⁻²⁰ at tolerance 0 fails.
    let r = run(&claimed("manhattan", "0.30000000000000000001"), &zero);
    assert_eq!(check(&r, "claimed_loss").verdict, Verdict::Fail);
}

fn scoped() -> Value {
    json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1], [5]]},
        "neighbors": {"within": 2},
        "matrix": [["7/10", "3/10", 0], ["3/10", "7/10", 0], [0, 0, 1]]})
}

/// A file private only within η = 2: the default gate (all pairs) fails its policy; an η
/// the pipeline accepts (≥ 2) passes, a larger one fails; `--allow-scoped` passes.
#[test]
fn the_scope_policy_is_the_pipelines() {
    let with = |scope: ScopePolicy| {
        let r = run(
            &scoped(),
            &Options {
                scope,
                ..Options::default()
            },
        );
        (r.verdict, check(&r, "policy").verdict)
    };
    assert_eq!(with(ScopePolicy::AllPairs), (Verdict::Fail, Verdict::Fail));
    assert_eq!(
        with(ScopePolicy::WithinAtLeast(q(2, 1))),
        (Verdict::Pass, Verdict::Pass)
    );
    assert_eq!(
        with(ScopePolicy::WithinAtLeast(q(3, 2))),
        (Verdict::Pass, Verdict::Pass)
    );
    assert_eq!(
        with(ScopePolicy::WithinAtLeast(q(201, 100))),
        (Verdict::Fail, Verdict::Fail)
    );
    assert_eq!(with(ScopePolicy::AnyScope), (Verdict::Pass, Verdict::Pass));
    assert_eq!(
        ScopePolicy::from_flags(Some(q(2, 1)), true),
        ScopePolicy::WithinAtLeast(q(2, 1))
    );
    assert_eq!(ScopePolicy::from_flags(None, true), ScopePolicy::AnyScope);
    assert_eq!(ScopePolicy::from_flags(None, false), ScopePolicy::AllPairs);
    assert_eq!(
        ScopePolicy::exactly(Some(&q(2, 1))),
        ScopePolicy::WithinAtLeast(q(2, 1))
    );
    assert_eq!(ScopePolicy::exactly(None), ScopePolicy::AllPairs);
    // A file for all pairs passes every scope policy; a required ε is checked instead of
    // the claim (7/3 > e^{1/2}: fails at ε = 1/2).
    let mut all = claimed("manhattan", "3/10");
    all["certificate"] = json!({});
    let r = run(
        &all,
        &Options {
            scope: ScopePolicy::WithinAtLeast(q(2, 1)),
            epsilon: Some(q(1, 2)),
            ..Options::default()
        },
    );
    assert_eq!(r.verdict, Verdict::Fail);
    assert_eq!(r.epsilon_required, Some(0.5));
}

/// H = [[7/10, 3/10], [3/10, 7/10]] at d = 1: the pure tight ε is ln(7/3); at δ = 1/10 the
/// (ε,δ) tight ε solves 7/10 − e^ε·3/10 = 1/10, e^ε = 2: ln 2; at δ ≥ 4/10 it is 0.
#[test]
fn the_epsilon_delta_tight_epsilon() {
    let doc = claimed("manhattan", "3/10");
    for (delta, want) in [
        (q(1, 10), 2f64.ln()),
        (q(0, 1), (7.0f64 / 3.0).ln()),
        (q(1, 2), 0.0),
    ] {
        let r = run(
            &doc,
            &Options {
                delta: Some(delta.clone()),
                ..Options::default()
            },
        );
        let [lo, hi] = r.epsilon_delta_tight;
        let (lo, hi) = (lo.unwrap(), hi.unwrap());
        assert!(
            lo <= want + 1e-15 && want <= hi + 1e-15,
            "δ = {delta}: [{lo}, {hi}]"
        );
        assert!(hi - lo <= 1e-9 * want.max(1e-300) + 1e-300 || want == 0.0);
    }
    let [lo, hi] = run(&doc, &Options::default()).epsilon_tight;
    let want = (7.0f64 / 3.0).ln();
    assert!(lo.unwrap() <= want && want <= hi.unwrap());
}

/// A row summing to 1 + 10⁻⁷ fails the default tolerance 10⁻⁹ and pass a tolerance of 10⁻⁵;
/// privacy is checked on the normalized rows either way.
#[test]
fn row_sums_are_checked_against_the_tolerance() {
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1]]},
        "matrix": [["7/10", "3000001/10000000"], ["3/10", "7/10"]]});
    let r = run(&doc, &Options::default());
    assert_eq!(r.verdict, Verdict::Fail);
    assert!((r.max_row_sum_deviation - 1e-7).abs() < 1e-20);
    let r = run(
        &doc,
        &Options {
            row_sum_tolerance: q(1, 100_000),
            ..Options::default()
        },
    );
    assert_eq!(r.verdict, Verdict::Pass);
}

/// `Certified` is made only from a passing audit under the scope the file claims: a private
/// file is certified (its text, file, matrix and report kept, written with a newline); a
/// violating one returns its failing report; one over the byte limit or unreadable under the
/// limits is refused before any audit; a scoped file is audited within its own η.
#[test]
fn only_a_passing_audit_is_certified() {
    use mdp_audit::certified::{Certified, CertifyError};
    use mdp_audit::progress::Silent;
    let ok = claimed("manhattan", "3/10");
    let c = Certified::certify(&ok, &Silent).unwrap();
    assert_eq!(c.report().verdict, Verdict::Pass);
    assert_eq!(c.matrix().get(0, 0), &q(7, 10));
    assert_eq!(c.file().epsilon, q(1, 1));
    assert_eq!(c.to_json(), ok.to_string());
    let mut out = Vec::new();
    c.write_to(&mut out).unwrap();
    assert_eq!(out, format!("{ok}\n").into_bytes());
    // 7/3 > e^{1/2}: not private at ε = 1/2.
    let mut bad = ok.clone();
    bad["epsilon"] = json!("1/2");
    match Certified::certify(&bad, &Silent) {
        Err(CertifyError::NotPrivate(r)) => assert_eq!(r.verdict, Verdict::Fail),
        other => panic!("{other:?}"),
    }
    let tiny = Limits {
        max_bytes: 20,
        ..Limits::default()
    };
    assert!(matches!(
        Certified::certify_within(&ok, &tiny, &Silent),
        Err(CertifyError::TooLarge { max: 20, .. })
    ));
    let few = Limits {
        max_entries: 2,
        ..Limits::default()
    };
    let e = Certified::certify_within(&ok, &few, &Silent).unwrap_err();
    assert!(matches!(e, CertifyError::Unreadable(_)), "{e}");
    assert!(e.to_string().contains("default limits"));
    // Scoped within 2: certified under its own scope (a gate's default would refuse it).
    let s = Certified::certify(&scoped(), &Silent).unwrap();
    assert_eq!(s.report().verdict, Verdict::Pass);
}

/// Outputs that are points of their own (`"outputs": {"points": …}`) are the space's sites
/// n, n + 1, …: the expected loss is measured to them. Inputs at 0 and 1, outputs at 0, 3
/// and 5 (manhattan), rows [1/2, 1/4, 1/4] and [1/4, 1/2, 1/4], the uniform prior:
/// L = ½(3/4 + 5/4) + ½(1/4 + 1 + 1) = 2.125. (Sites n .. n + K: with one output, or one
/// input, n·K sites would be too few.)
#[test]
fn the_loss_is_measured_to_output_points() {
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1]]},
        "outputs": {"points": [[0], [3], [5]]},
        "matrix": [["1/2", "1/4", "1/4"], ["1/4", "1/2", "1/4"]],
        "loss": {"prior": [1, 1]}});
    let r = run(&doc, &Options::default());
    assert_eq!(r.verdict, Verdict::Pass);
    let [lo, hi] = r.expected_loss.expect("the loss to the output points");
    assert!(
        lo <= 2.125 && 2.125 <= hi && hi - lo < 1e-12,
        "[{lo}, {hi}]"
    );
    assert_eq!(r.stats.triples, 2 * 3, "2 ordered pairs × 3 outputs");
    // One output point, at 3: L = ½(3 + 2).
    let one = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1]]},
        "outputs": {"points": [[3]]},
        "matrix": [[1], [1]],
        "loss": {"prior": [1, 1]}});
    let [lo, hi] = run(&one, &Options::default())
        .expected_loss
        .expect("a loss");
    assert!(lo <= 2.5 && 2.5 <= hi && hi - lo < 1e-12, "[{lo}, {hi}]");
}

/// The row-normalization budget (`Options::max_number_bits`): a row whose widest entry and
/// exact sum need b bits together is audited at a limit of b and refused (an input error,
/// before any privacy check) at b − 1. The second row sums to 9/10 (normalized, its entries
/// are divided by that sum), and is the wider.
#[test]
fn the_row_normalization_budget_is_exact_at_its_limit() {
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1]]},
        "matrix": [["1/2", "1/2"], ["2/7", "43/70"]]});
    let text = serde_json::to_vec(&doc).unwrap();
    let file = read_mechanism(&text, &Limits::default()).unwrap();
    let row = [q(2, 7), q(43, 70)];
    let sum = &row[0] + &row[1];
    assert_eq!(sum, q(9, 10));
    let widest = row.iter().map(mdp_audit::exact::bits).max().unwrap();
    let b = widest + mdp_audit::exact::bits(&sum);
    assert!(b > mdp_audit::exact::bits(&q(1, 2)) + mdp_audit::exact::bits(&q(1, 1)));
    let at = |max_number_bits| {
        let o = Options {
            max_number_bits,
            ..Options::default()
        };
        audit(&file, &o)
    };
    assert!(at(b).is_ok());
    let e = at(b - 1).expect_err("one bit over");
    assert!(e.to_string().contains("matrix[1] (row-normalized)"), "{e}");
}

/// The report's work counts: n(n − 1) ordered pairs of K outputs each, the fraction of
/// those triples the exact fallback decided, and the tight-ε search's exact pairs. Rows [2⁻¹¹⁰⁰, 1 − 2⁻¹¹⁰⁰] underflow in floats,
/// so both pairs go exact (fraction 1); the two-point mechanism's go by floats (0).
#[test]
fn the_report_counts_triples_and_the_exact_fraction() {
    let tiny = (0..1100).fold(q(1, 1), |x, _| &x / &q(2, 1));
    let rest = mdp_audit::exact::format_rational(&(&q(1, 1) - &tiny));
    let tiny = mdp_audit::exact::format_rational(&tiny);
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1]]},
        "matrix": [[tiny, rest], [tiny, rest]]});
    let r = run(&doc, &Options::default());
    assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.checks);
    let s = &r.stats;
    assert_eq!((s.pairs_in_scope, s.triples, s.exact_pairs_pure), (2, 4, 2));
    assert_eq!(s.exact_triple_fraction, 1.0);
    // The tight-ε search computes both unsafe pairs exactly, then one pass proves ε = 0.
    assert_eq!((s.exact_pairs_tight, s.passes_tight), (2, 1));
    let r = run(
        &two_points("1/4", "expected_loss", None),
        &Options::default(),
    );
    let s = &r.stats;
    assert_eq!((s.pairs_in_scope, s.triples, s.exact_pairs_pure), (2, 4, 0));
    assert_eq!(s.exact_triple_fraction, 0.0);
}

/// A scoped guarantee's unguarded pairs are a warning of the report: on `scoped()` the point
/// at 5 is in no η-path from 0 or 1, so 4 ordered pairs have no guarantee; on three points
/// one apart every pair is joined by η-steps and there is no warning. The policy's detail
/// names the required ε and the file's, as numbers.
#[test]
fn unguarded_pairs_are_a_warning_and_the_policy_names_its_epsilons() {
    let o = Options {
        scope: ScopePolicy::AnyScope,
        epsilon: Some(q(1, 2)),
        ..Options::default()
    };
    let r = run(&scoped(), &o);
    let warned: Vec<&String> = r
        .warnings
        .iter()
        .filter(|w| w.starts_with("scoped guarantee"))
        .collect();
    assert_eq!(warned.len(), 1, "{:?}", r.warnings);
    assert!(warned[0].contains("; 4 ordered pairs"), "{}", warned[0]);
    let p = check(&r, "policy");
    assert!(
        p.detail
            .starts_with("privacy checked at the required ε = 0.5 (the file claims ε = 1)"),
        "{}",
        p.detail
    );
    let nb = check(&r, "neighbors");
    assert!(
        nb.detail.contains("ε·1.000000·d(u,v)")
            && nb
                .detail
                .contains("2 component(s), 4 ordered pairs across components"),
        "{}",
        nb.detail
    );
    // Two pairs, {0, 1} and {5, 6}, within 2: two components, 8 ordered pairs across.
    let pairs = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1], [5], [6]]},
        "neighbors": {"within": 2},
        "matrix": vec![vec!["1/4"; 4]; 4]});
    let nb = run(&pairs, &o)
        .checks
        .into_iter()
        .find(|c| c.name == "neighbors");
    let d = nb.expect("a neighbors check").detail;
    assert!(d.contains("2 component(s), 8 ordered pairs"), "{d}");
    // A triangle (0, 0), (1, 1), (3, 0) within η = 2.3: the far pair (d = 3) is reached by
    // the steps √2 and √5, a stretch of (√2 + √5)/3 = 1.2167605.
    let triangle = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "euclidean", "points": [[0, 0], [1, 1], [3, 0]]},
        "neighbors": {"within": "2.3"},
        "matrix": [["1/3", "1/3", "1/3"], ["1/3", "1/3", "1/3"], ["1/3", "1/3", "1/3"]]});
    let nb = run(&triangle, &o)
        .checks
        .into_iter()
        .find(|c| c.name == "neighbors");
    let d = nb.expect("a neighbors check").detail;
    assert!(
        d.contains("ε·1.216761·d(u,v)") && d.contains("1 component(s), 0 ordered pairs"),
        "{d}"
    );
    let joined = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1], [2]]},
        "neighbors": {"within": 1},
        "matrix": [["1/3", "1/3", "1/3"], ["1/3", "1/3", "1/3"], ["1/3", "1/3", "1/3"]]});
    let r = run(&joined, &o);
    assert!(
        r.warnings
            .iter()
            .all(|w| !w.starts_with("scoped guarantee")),
        "{:?}",
        r.warnings
    );
}

/// Numbers for people (`audit::plain`): the shortest decimal that reads back, in scientific
/// notation outside [10⁻⁴, 10⁷), and 0, ±∞ and NaN as Rust writes them.
#[test]
fn plain_numbers() {
    use mdp_audit::audit::plain;
    let cases = [
        (0.0, "0"),
        (0.5, "0.5"),
        (1e-4, "0.0001"),
        (9.5e-5, "9.5e-5"),
        (-2.0, "-2"),
        (1234567.0, "1234567"),
        (1e7, "1e7"),
        (-3e-9, "-3e-9"),
        (f64::INFINITY, "inf"),
        (f64::NEG_INFINITY, "-inf"),
        (f64::NAN, "NaN"),
    ];
    for (x, want) in cases {
        assert_eq!(plain(x), want, "{x}");
    }
}

/// The unit a report states: kilometres for haversine at the default earth radius only.
#[test]
fn distances_are_in_km_only_on_the_default_earth() {
    use mdp_audit::audit::unit_of;
    use mdp_audit::metric::{default_radius, MetricKind, Space};
    let pts = || vec![vec![q(0, 1), q(0, 1)], vec![q(1, 1), q(1, 1)]];
    let earth = Space::from_points(MetricKind::Haversine, pts(), None).unwrap();
    assert_eq!(unit_of(&earth), Some("km"));
    let given = Space::from_points(MetricKind::Haversine, pts(), Some(default_radius())).unwrap();
    assert_eq!(unit_of(&given), Some("km"));
    let other = Space::from_points(MetricKind::Haversine, pts(), Some(q(1, 1))).unwrap();
    assert_eq!(unit_of(&other), None);
    let plane = Space::from_points(MetricKind::Euclidean, pts(), None).unwrap();
    assert_eq!(unit_of(&plane), None);
}

/// A loss enclosure with an infinite end decides nothing: the claimed loss is inconclusive
/// (not a panic converting ∞ to a rational, not a verdict).
#[test]
fn a_claimed_loss_against_an_unbounded_enclosure_is_inconclusive() {
    use mdp_audit::audit::claimed_loss_check;
    use mdp_audit::exact::float::FI;
    for l in [
        FI {
            lo: 1.0,
            hi: f64::INFINITY,
        },
        FI {
            lo: f64::NEG_INFINITY,
            hi: 1.0,
        },
    ] {
        let c = claimed_loss_check(&q(1, 1), l, &q(1, 1000));
        assert_eq!(c.verdict, Verdict::Inconclusive, "{l:?}");
    }
    let c = claimed_loss_check(&q(1, 1), FI { lo: 1.0, hi: 1.0 }, &q(0, 1));
    assert_eq!(c.verdict, Verdict::Pass);
    // L ∈ [1, 2], tolerance 1/10: within tolerance of every L iff 1.8 ≤ claim ≤ 1.1 (never);
    // of none iff claim < 0.9 or claim > 2.2; the ends themselves are inconclusive.
    let wide = FI { lo: 1.0, hi: 2.0 };
    let tol = q(1, 10);
    for (claim, want) in [
        (q(89, 100), Verdict::Fail),
        (q(9, 10), Verdict::Inconclusive),
        (q(3, 2), Verdict::Inconclusive),
        (q(22, 10), Verdict::Inconclusive),
        (q(221, 100), Verdict::Fail),
    ] {
        let c = claimed_loss_check(&claim, wide, &tol);
        assert_eq!(c.verdict, want, "claim {claim}");
    }
    // L ∈ [1, 1]: 0.9 and 1.1 are within tolerance of it (pass), just outside fails.
    let point = FI { lo: 1.0, hi: 1.0 };
    for (claim, want) in [
        (q(9, 10), Verdict::Pass),
        (q(11, 10), Verdict::Pass),
        (q(899, 1000), Verdict::Fail),
        (q(1101, 1000), Verdict::Fail),
    ] {
        assert_eq!(
            claimed_loss_check(&claim, point, &tol).verdict,
            want,
            "claim {claim}"
        );
    }
}

/// The claimed loss against an exact L: pass iff L(1 − tol) ≤ claim ≤ L(1 + tol), ends
/// included.
#[test]
fn a_claimed_loss_against_the_exact_loss() {
    use mdp_audit::audit::claimed_loss_exact;
    let tol = q(1, 10);
    for (claim, want) in [
        (q(9, 10), Verdict::Pass),
        (q(11, 10), Verdict::Pass),
        (q(1, 1), Verdict::Pass),
        (q(899, 1000), Verdict::Fail),
        (q(1101, 1000), Verdict::Fail),
    ] {
        assert_eq!(
            claimed_loss_exact(&claim, &q(1, 1), &tol).verdict,
            want,
            "claim {claim}"
        );
    }
}

/// A failure names its witness by index and label, in the detail and the witness's JSON:
/// inputs "home" and "work" (the outputs are the inputs, so their labels too).
#[test]
fn a_violation_names_its_inputs_and_output_by_label() {
    let doc = json!({"format": "mdp/1", "epsilon": 1,
        "metric": {"kind": "manhattan", "points": [[0], [1]], "labels": ["home", "work"]},
        "matrix": [["9/10", "1/10"], ["1/10", "9/10"]]});
    let r = run(&doc, &Options::default());
    let c = check(&r, "pure_privacy");
    assert_eq!(c.verdict, Verdict::Fail);
    let j = c.witness.as_ref().expect("a witness");
    let names = ["home", "work"];
    let idx = |k: &str| j[k].as_u64().unwrap() as usize;
    let (u, v, w) = (idx("u"), idx("v"), idx("w"));
    assert_eq!(
        (j["u_label"].as_str(), j["v_label"].as_str()),
        (Some(names[u]), Some(names[v]))
    );
    assert_eq!(j["w_label"].as_str(), Some(names[w]));
    let triple = format!(
        "({u} {:?}, {v} {:?}, {w} {:?})",
        names[u], names[v], names[w]
    );
    assert!(c.detail.contains(&triple), "{} lacks {triple}", c.detail);
}

/// The report for people (`audit::human`): the verdict line with n, K and ε, the tight ε's
/// enclosure (an unbounded one as "+inf"), the (ε,δ) line, the checks by tag, and the count
/// of triples.
#[test]
fn the_human_report_states_the_verdict_and_its_numbers() {
    use mdp_audit::audit::human;
    let r = run(
        &two_points("1/4", "expected_loss", None),
        &Options::default(),
    );
    let h = human(&r);
    assert!(
        h.starts_with("mdp-audit: PASS  (n = 2, K = 2, claimed ε = 1)\n"),
        "{h}"
    );
    let tight = h.lines().find(|l| l.contains("tight pure ε")).expect(&h);
    let (lo, hi) = (r.epsilon_tight[0].unwrap(), r.epsilon_tight[1].unwrap());
    assert!(
        tight.ends_with(&format!("[{lo:.12e}, {hi:.12e}]")),
        "{tight}"
    );
    assert!(h.contains("  tight ε at δ = "), "{h}");
    assert!(h.contains("  [ok  ] pure_privacy: "), "{h}");
    assert!(
        h.contains("  2 ordered pairs × 2 outputs = 4 triples;"),
        "{h}"
    );
    // A zero beside a positive entry: ε* = ∞, the enclosure's upper end unbounded.
    let mut doc = two_points("1/4", "expected_loss", None);
    doc["matrix"] = json!([[1, 0], [0, 1]]);
    doc["certificate"] = json!({});
    let r = run(&doc, &Options::default());
    let h = human(&r);
    assert!(h.starts_with("mdp-audit: FAIL  (n = 2, K = 2"), "{h}");
    let tight = h.lines().find(|l| l.contains("tight pure ε")).expect(&h);
    assert!(tight.ends_with(", +inf]"), "{tight}");
    assert!(h.contains("  [FAIL] pure_privacy: "), "{h}");
}

/// The packing bound (Imola et al. Theorem 3) as the audit reports it, worked by hand.
/// Points 0, 1, 10 on a line, ε = 1/10, centers 0 and 10 with r = 1. Bound (7) is
/// r·M/(1 + M) with M = e^{−ε·10} at a center: e⁻¹/(1 + e⁻¹) = 0.2689414214. Bound (8) is
/// the same with Q = 10. With `neighbors` within 9 the guarantee between the centers runs
/// along 0 – 1 – 10 (d_G = 10): the same bounds. Within 5 the point 10 is cut off
/// (d_G = ∞): both are 0.
#[test]
fn the_packing_bounds_with_and_without_a_scope() {
    let doc = |within: Option<u32>| {
        let mut d = json!({"format": "mdp/1", "epsilon": "1/10",
            "metric": {"kind": "manhattan", "points": [[0], [1], [10]]},
            "matrix": [["1/3", "1/3", "1/3"], ["1/3", "1/3", "1/3"], ["1/3", "1/3", "1/3"]],
            "certificate": {"lower_bound": {"kind": "packing", "centers": [0, 2], "radius": 1}}});
        if let Some(eta) = within {
            d["neighbors"] = json!({"within": eta});
        }
        d
    };
    let o = Options {
        scope: ScopePolicy::AnyScope,
        ..Options::default()
    };
    for (within, want) in [
        (None, "L ≥ 2.689414214e-1 (bound (8): 2.689414214e-1)"),
        (Some(9), "L ≥ 2.689414214e-1 (bound (8): 2.689414214e-1)"),
        (Some(5), "L ≥ 0.000000000e0 (bound (8): 0.000000000e0)"),
    ] {
        let r = run(&doc(within), &o);
        let c = check(&r, "packing");
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.detail);
        assert!(c.detail.contains(want), "within {within:?}: {}", c.detail);
    }
}
