//! The kernel's own tests of the `lp_dual` verifier (`certificate.rs`, spec/lp.md §5) on
//! instances small enough to work out by hand: the bound Σ_u α_u each pass proves, exactly;
//! which claims are accepted and which rejected; and the bound it returns. `cargo mutants
//! -p mdp-audit -f certificate.rs` found every arithmetic, index and comparison of the
//! verifier unchecked by the kernel's suite before these (benches/reports/mutants.md).

use crate::line;
use mdp_audit::certificate::{proven_bound, refined_bound, safe_f64_bound, verify, Problem};
use mdp_audit::exact::{q_from_f64, Q};
use mdp_audit::io::lp_dual::{Bounded, LpDual};
use mdp_audit::metric::Space;
use mdp_audit::privacy::exp_eps_d;

fn q(a: i64, b: u64) -> Q {
    Q::from_signeds(a, b as i64)
}

/// Instance A: two inputs at one point (d = 0, so c_up = e^0 = 1 on every pass), explicit
/// costs [[1, 3], [2, 1]], the max loss with β = (1, 1) (w = ½, ½) and one row (0, 1, k = 1)
/// with γ = 1/3:
///   α_0 = min(½·1, ½·3 + 1/3) = ½ (output 0),
///   α_1 = min(½·2, ½·1 − 1·1/3) = 1/6 (output 1),
/// so every pass proves exactly 2/3 (not a double: the f64 pass falls just below it).
fn instance_a(value: Q) -> (Space, Vec<Q>, LpDual) {
    let cost = vec![q(1, 1), q(3, 1), q(2, 1), q(1, 1)];
    let dual = LpDual {
        bounded: Bounded::MaxLoss,
        value,
        beta: Some(vec![q(1, 1), q(1, 1)]),
        gamma: vec![(0, 1, 1, q(1, 3))],
    };
    (line(&[0, 0]), cost, dual)
}

fn problem_a<'a>(space: &'a Space, eps: &'a Q, cost: &'a [Q]) -> Problem<'a> {
    Problem {
        space,
        eps,
        within: None,
        sites: None,
        cost: Some(cost),
        prior: None,
        max_prec: 256,
    }
}

#[test]
fn every_pass_proves_the_hand_computed_bound() {
    let eps = q(1, 2);
    let (space, cost, dual) = instance_a(q(0, 1));
    let pb = problem_a(&space, &eps, &cost);
    assert_eq!(proven_bound(&dual, &pb, 2, 2), Ok(q(2, 3)));
    assert_eq!(refined_bound(&dual, &pb, 2, 2), Ok(q(2, 3)));
    let fast = safe_f64_bound(&dual, &pb, 2, 2).unwrap();
    assert!(
        q_from_f64(fast) <= q(2, 3) && fast > 2.0 / 3.0 - 1e-12,
        "{fast}"
    );
}

/// The claim 2/3 is above the f64 pass (which rounds down) and equal to the exact one: it is
/// accepted, and the bound returned is 2/3; any claim above 2/3 is refused, naming both.
#[test]
fn a_claim_equal_to_the_exact_bound_passes_and_one_above_fails() {
    let eps = q(1, 2);
    let (space, cost, dual) = instance_a(q(2, 3));
    let pb = problem_a(&space, &eps, &cost);
    assert_eq!(verify(&dual, &pb, 2, 2), Ok(q(2, 3)));
    let (_, _, above) = instance_a(q(2, 3) + (Q::from(1u32) >> 200u64));
    let err = verify(&above, &pb, 2, 2).unwrap_err();
    assert!(err.0.contains("below its claimed value"), "{}", err.0);
    // A claim the f64 pass already proves returns that pass's bound.
    let (_, _, low) = instance_a(q(1, 2));
    let got = verify(&low, &pb, 2, 2).unwrap();
    assert!(got >= q(1, 2) && got <= q(2, 3));
}

/// Instance B: the line 0, 1, 3 (manhattan), outputs at inputs 0 and 2 (cost = distance,
/// 0 at the output's own input), the expected loss under the prior (1, 2, 1)
/// (w = ¼, ½, ¼), ε = 1/2 and one row (1, 0, k = 0) with γ = 1/5, whose constant c is
/// e^{ε·1} rounded up (the f64 enclosure's upper end on the first pass):
///   α_0 = min(¼·0 − c/5, ¼·3) = −c/5,  α_1 = min(½·1 + 1/5, ½·2) = 7/10,  α_2 = min(¼·3, 0) = 0.
#[test]
fn sites_prior_and_a_constant_above_one() {
    let space = line(&[0, 1, 3]);
    let eps = q(1, 2);
    let prior = [q(1, 1), q(2, 1), q(1, 1)];
    let sites = [0usize, 2];
    let pb = Problem {
        space: &space,
        eps: &eps,
        within: None,
        sites: Some(&sites),
        cost: None,
        prior: Some(&prior),
        max_prec: 256,
    };
    let dual = |value: Q| LpDual {
        bounded: Bounded::ExpectedLoss,
        value,
        beta: None,
        gamma: vec![(1, 0, 0, q(1, 5))],
    };
    let c = q_from_f64(exp_eps_d(&space, &eps, 1, 0).hi);
    let want = q(7, 10) - c * q(1, 5);
    assert_eq!(proven_bound(&dual(q(0, 1)), &pb, 3, 2), Ok(want.clone()));
    // The refined pass's constant is a 128-bit enclosure, below the f64 one: a larger
    // bound, still below the true one (e^{1/2} > 1.6487212707).
    let refined = refined_bound(&dual(q(0, 1)), &pb, 3, 2).unwrap();
    assert!(refined > want, "the refined constant is tighter");
    assert!(refined < q(7, 10) - q(16_487_212_707, 10_000_000_000) * q(1, 5));
    let fast = safe_f64_bound(&dual(q(0, 1)), &pb, 3, 2).unwrap();
    let exact = mdp_audit::exact::f64_nearest(&want);
    assert!(
        q_from_f64(fast) <= want && fast > exact - 1e-12,
        "{fast} vs {exact}"
    );
    // A claim equal to the first exact pass's bound returns that bound (not the refined one).
    assert_eq!(verify(&dual(want.clone()), &pb, 3, 2), Ok(want.clone()));
    // One between the two passes is accepted by the refined pass, and returns its bound.
    let between = (&want + &refined) / Q::from(2u32);
    assert_eq!(verify(&dual(between), &pb, 3, 2), Ok(refined.clone()));
    assert!(verify(&dual(&refined + q(1, 1_000_000_000)), &pb, 3, 2).is_err());
}

/// A row outside the scope (d(0, 2) = 3 > η = 2) and a negative multiplier's effect: the
/// scoped row is refused by name; the expected loss without a prior is refused.
#[test]
fn rows_outside_the_scope_and_missing_priors_are_refused() {
    let space = line(&[0, 1, 3]);
    let (eps, eta) = (q(1, 2), q(2, 1));
    let sites = [0usize, 2];
    let prior = [q(1, 1), q(1, 1), q(1, 1)];
    let mut pb = Problem {
        space: &space,
        eps: &eps,
        within: Some(&eta),
        sites: Some(&sites),
        cost: None,
        prior: Some(&prior),
        max_prec: 256,
    };
    let dual = |gamma| LpDual {
        bounded: Bounded::ExpectedLoss,
        value: q(0, 1),
        beta: None,
        gamma,
    };
    let err = verify(&dual(vec![(0, 2, 0, q(1, 5))]), &pb, 3, 2).unwrap_err();
    assert!(
        err.0.contains("gamma[0]") && err.0.contains("within η"),
        "{}",
        err.0
    );
    assert!(verify(&dual(vec![(0, 1, 0, q(1, 5))]), &pb, 3, 2).is_ok());
    pb.prior = None;
    let err = verify(&dual(vec![]), &pb, 3, 2).unwrap_err();
    assert!(err.0.contains("loss.prior"), "{}", err.0);
}
