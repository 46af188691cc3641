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
