//! The kernel's own tests of the loss enclosures (`loss.rs`: Imola et al. eqs. 1, 3 and 11,
//! the prior-weighted expected loss) on a mechanism small enough to work out by hand. The PMO
//! certificate's upper end and the `benders` certificate rest on these figures; `cargo
//! mutants -p mdp-audit -f loss.rs` found 32 of 50 mutants unchecked by the kernel's suite
//! before these (benches/reports/mutants.md).

use crate::line;
use mdp_audit::exact::float::FI;
use mdp_audit::exact::Q;
use mdp_audit::loss::{exact_max_loss, h_fi, losses, quantile_fi, Cost, EXACT_LOSS_ENTRIES};
use mdp_audit::metric::{MetricKind, Space};
use mdp_audit::privacy::Prepared;
use mdp_audit::Matrix;

fn q(a: i64, b: u64) -> Q {
    Q::from_signeds(a, b as i64)
}

fn qs(v: &[i64]) -> Vec<Q> {
    v.iter().map(|&x| Q::from(x)).collect()
}

/// `x` encloses `want` and is no wider than `rel` relative to it (or `rel` absolute at 0).
fn encloses(x: FI, want: &Q, rel: f64) {
    assert!(x.contains_q(want), "{x:?} does not enclose {want}");
    let w = mdp_audit::exact::f64_nearest(want).abs().max(1.0);
    assert!(x.width() <= rel * w, "{x:?} is wider than {rel} relative");
}

/// The line 0, 1, 3 (manhattan), outputs at the inputs (cost = distance), rows that are not
/// normalized (sums 4, 2, 4):
///   H = [[1/2, 1/4, 1/4], [1/2, 0, 1/2], [0, 1/4, 3/4]],
///   L(M, 0) = ¼·1 + ¼·3 = 1,  L(M, 1) = ½·1 + ½·2 = 3/2,  L(M, 2) = ¼·2 = 1/2,
/// so L(M) = 3/2 (the middle row: neither the first nor the last wins), the sorted losses are
/// 1/2, 1, 3/2, and under the prior (1, 2, 1) the expected loss is ¼·1 + ½·3/2 + ¼·½ = 9/8.
fn instance() -> (Space, Matrix) {
    let m = Matrix::new(3, 3, qs(&[2, 1, 1, 1, 0, 1, 0, 1, 3]));
    (line(&[0, 1, 3]), m)
}

const SITES: [usize; 3] = [0, 1, 2];

#[test]
fn per_input_worst_expected_and_median_losses_are_the_hand_computed_values() {
    let (space, m) = instance();
    let p = Prepared::new(&space, &m, None, 256).unwrap();
    let prior = qs(&[1, 2, 1]);
    let l = losses(&p, &Cost::Distance(&SITES), &q(1, 2), Some(&prior));
    for (u, want) in [q(1, 1), q(3, 2), q(1, 2)].iter().enumerate() {
        encloses(l.per_input[u], want, 1e-14);
    }
    encloses(l.max, &q(3, 2), 1e-14);
    encloses(l.quantile, &q(1, 1), 1e-14);
    encloses(l.expected.unwrap(), &q(9, 8), 1e-14);
    // Without a prior there is no expected loss.
    assert!(losses(&p, &Cost::Distance(&SITES), &q(1, 2), None)
        .expected
        .is_none());
}

/// Explicit costs (not distances) on the same matrix: c = [[0, 4, 8], [2, 6, 10], [1, 1, 1]]
/// gives L(M, 0) = 0 + 1 + 2 = 3, L(M, 1) = 1 + 5 = 6, L(M, 2) = ¼ + ¾ = 1; L(M) = 6; the
/// exact worst-case loss agrees.
#[test]
fn explicit_costs_replace_the_distances() {
    let (space, m) = instance();
    let p = Prepared::new(&space, &m, None, 256).unwrap();
    let c = Matrix::new(3, 3, qs(&[0, 4, 8, 2, 6, 10, 1, 1, 1]));
    let l = losses(&p, &Cost::Matrix(&c), &q(0, 1), None);
    for (u, want) in [q(3, 1), q(6, 1), q(1, 1)].iter().enumerate() {
        encloses(l.per_input[u], want, 1e-14);
    }
    encloses(l.max, &q(6, 1), 1e-14);
    encloses(l.quantile, &q(1, 1), 1e-14); // q = 0: the smallest
    assert_eq!(exact_max_loss(&m, &Cost::Matrix(&c), &space), Some(q(6, 1)));
    assert_eq!(
        exact_max_loss(&m, &Cost::Distance(&SITES), &space),
        Some(q(3, 2))
    );
}

/// The type-7 quantile of the losses 1/2, 1, 3/2 at h = 2q: q = 1/3 (h = 2/3, weight 2/3 on
/// the upper statistic: 5/6, where swapped weights give 2/3), 1/4 (3/4), 3/4 (5/4), 1 (the
/// largest, the index past the end clamped), 0 (the smallest).
#[test]
fn quantiles_interpolate_between_order_statistics() {
    let (space, m) = instance();
    let p = Prepared::new(&space, &m, None, 256).unwrap();
    for (qq, want) in [
        (q(1, 3), q(5, 6)),
        (q(1, 4), q(3, 4)),
        (q(3, 4), q(5, 4)),
        (q(1, 1), q(3, 2)),
        (q(0, 1), q(1, 2)),
    ] {
        let l = losses(&p, &Cost::Distance(&SITES), &qq, None);
        encloses(l.quantile, &want, 1e-14);
    }
}

/// Enclosures, not points: the j-th order statistic lies between the j-th smallest lower end
/// and the j-th smallest upper end. Values [1, 2], [0, 5], [3, 4]: lower ends sorted 0, 1, 3,
/// upper ends 2, 4, 5. The median (h = 1, g = 0) is [1, 4] exactly; q = 1/4 (h = 1/2) is
/// [½·0 + ½·1, ½·2 + ½·4] = [1/2, 3]; q = 1 is [3, 5].
#[test]
fn the_quantile_of_enclosures_takes_order_statistics_of_each_end() {
    let v = [FI::new(1.0, 2.0), FI::new(0.0, 5.0), FI::new(3.0, 4.0)];
    let m = quantile_fi(&v, &q(1, 2));
    assert_eq!((m.lo, m.hi), (1.0, 4.0));
    let a = quantile_fi(&v, &q(1, 4));
    assert!(
        a.lo <= 0.5 && a.lo > 0.5 - 1e-15 && a.hi >= 3.0 && a.hi < 3.0 + 1e-15,
        "{a:?}"
    );
    let top = quantile_fi(&v, &q(1, 1));
    assert_eq!((top.lo, top.hi), (3.0, 5.0));
    // One value: every quantile is it.
    let one = quantile_fi(&[FI::new(2.0, 7.0)], &q(1, 3));
    assert_eq!((one.lo, one.hi), (2.0, 7.0));
}

/// h_fi encloses the exact normalized entry H[u][k] = M[u][k] / Σ_k M[u][k] within a few
/// ulps on a safe row, is exactly 0 at a 0 entry, and on a row the float copy cannot
/// represent (an entry of 2⁻¹¹⁰⁰, below the smallest double) still encloses the exact value
/// from the rationals.
#[test]
fn normalized_entries_are_enclosed_on_safe_and_unsafe_rows() {
    let (space, m) = instance();
    let p = Prepared::new(&space, &m, None, 256).unwrap();
    assert!(p.safe.iter().all(|&s| s));
    for u in 0..3 {
        for k in 0..3 {
            let want = p.h_exact(u, k);
            let x = h_fi(&p, u, k);
            encloses(x, &want, 1e-15);
            if want == 0u32 {
                assert_eq!((x.lo, x.hi), (0.0, 0.0));
            } else {
                assert!(x.lo < x.hi, "a rigorous enclosure of {want}: {x:?}");
            }
        }
    }
    let tiny = Q::from(1u32) >> 1100u64;
    let m2 = Matrix::new(2, 2, vec![Q::from(1u32), tiny.clone(), q(1, 2), q(1, 2)]);
    let s2 = line(&[0, 1]);
    let p2 = Prepared::new(&s2, &m2, None, 256).unwrap();
    assert_eq!(p2.safe, vec![false, true]);
    let want = &tiny / (Q::from(1u32) + &tiny);
    let x = h_fi(&p2, 0, 1);
    assert!(x.contains_q(&want) && x.hi > 0.0, "{x:?}");
    // Its per-input loss is the tiny weight times d = 1: positive, enclosed.
    let l = losses(&p2, &Cost::Distance(&[0, 1]), &q(1, 2), None);
    assert!(l.per_input[0].contains_q(&want) && l.per_input[0].hi > 0.0);
    encloses(l.per_input[1], &q(1, 2), 1e-15);
}

/// The exact worst-case loss: `None` where a cost is not rational (euclidean distances are
/// square roots) unless the entry weighing it is 0, where a row sums to 0, and past
/// [`EXACT_LOSS_ENTRIES`]; at that many entries exactly it is computed.
#[test]
fn the_exact_worst_case_loss_and_where_it_declines() {
    // Euclidean (0, 0), (3, 4), (1, 1): d = 5 is rational in value but a square root in form.
    let pts = |v: &[(i64, i64)]| {
        Space::from_points(
            MetricKind::Euclidean,
            v.iter()
                .map(|&(x, y)| vec![Q::from(x), Q::from(y)])
                .collect(),
            None,
        )
        .unwrap()
    };
    let e = pts(&[(0, 0), (3, 4), (1, 1)]);
    let m = Matrix::new(3, 3, qs(&[1, 1, 0, 1, 1, 0, 1, 1, 0]));
    assert_eq!(exact_max_loss(&m, &Cost::Distance(&SITES), &e), None);
    // An explicit cost matrix is rational whatever the metric; a zero entry's cost is not read.
    let c = Matrix::new(3, 3, qs(&[1, 3, 100, 2, 0, 100, 7, 5, 100]));
    assert_eq!(exact_max_loss(&m, &Cost::Matrix(&c), &e), Some(q(6, 1)));
    // Only the weighed outputs count: the line's zero column changes nothing.
    let (space, _) = instance();
    let m0 = Matrix::new(3, 3, qs(&[1, 1, 0, 0, 1, 0, 0, 1, 0]));
    assert_eq!(
        exact_max_loss(&m0, &Cost::Distance(&SITES), &space),
        Some(q(2, 1))
    );
    // A row of zeros: no loss is defined.
    let z = Matrix::new(2, 2, qs(&[1, 1, 0, 0]));
    assert_eq!(
        exact_max_loss(&z, &Cost::Distance(&[0, 1]), &line(&[0, 2])),
        None
    );
    // The budget: one row of EXACT_LOSS_ENTRIES outputs is computed, one more is not.
    let one = line(&[0]);
    let wide = |k: usize| {
        let m = Matrix::new(1, k, vec![Q::from(1u32); k]);
        let c = Matrix::new(1, k, (0..k as i64).map(|i| Q::from(i % 3)).collect());
        exact_max_loss(&m, &Cost::Matrix(&c), &one)
    };
    assert_eq!(wide(EXACT_LOSS_ENTRIES), Some(q(99_999, 100_000)));
    assert_eq!(wide(EXACT_LOSS_ENTRIES + 1), None);
}
