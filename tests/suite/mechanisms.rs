//! The mechanism suite's statements (spec/theorems.md): IMO-L1 (the black-hole space),
//! TEM-L41, TEM-T41, TEM-T42, TEM-L42 (Carvalho et al.) and TEM-MADLIB.

use crate::common;

use common::{arb_eps, arb_space, audit_matrix, q};
use mdp::audit::Verdict;
use mdp::exact::{f64_down, f64_nearest, q_from_f64, Q};
use mdp::mechanisms::exponential::{entry_digits, weighted_exponential};
use mdp::mechanisms::madlib::{normal_quantile, Madlib};
use mdp::mechanisms::tem::{self, TemSampler};
use mdp::metric::{MetricKind, Space};
use proptest::prelude::*;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde_json::json;

const PREC: u64 = 4096;

/// γ ∈ [0, 4].
fn arb_gamma() -> impl Strategy<Value = Q> {
    (0i64..400).prop_map(|x| q(x, 100))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

    /// (exponential slack, spec/theorems.md) EXPMECH_Y's entries are written with the
    /// digits its slack covers: every row sums to exactly 1, every entry but the row's
    /// largest has at most `entry_digits` significant digits, and the exact audit passes.
    #[test]
    fn exponential_entries_are_short_exact_and_private(
        space in arb_space(2, 12), eps in arb_eps(), weighted: bool,
    ) {
        let n = space.n();
        let w: Vec<Q> = (0..n).map(|i| q(1 + (i as i64 * 7) % 5, 3)).collect();
        let weights = weighted.then_some(&w[..]);
        let m = weighted_exponential(&space, &eps, weights);
        let r = audit_matrix(&space, &eps, &m, json!({}));
        prop_assert_eq!(r.verdict, Verdict::Pass);
        let digits = entry_digits(&space, &eps, weights);
        prop_assert!(digits.is_some(), "no rounding on a space with points ≥ 0.01 apart");
        let s = digits.unwrap();
        for u in 0..n {
            let row = m.row(u);
            prop_assert_eq!(row.iter().sum::<Q>(), Q::from(1u32));
            // One entry per row (the largest in floats) takes the remainder.
            let long: Vec<String> = row
                .iter()
                .map(mdp::exact::format_rational)
                .filter(|text| {
                    let mantissa = text.split('e').next().unwrap().replace(['.', '-'], "");
                    mantissa.trim_start_matches('0').trim_end_matches('0').len() > s
                })
                .collect();
            prop_assert!(long.len() <= 1, "row {}: {:?} have more than {} digits", u, long, s);
        }
    }

    /// TEM-L41: the truncated score −min(d, γ) has sensitivity ≤ d(w, w'), exactly, on
    /// Manhattan and Chebyshev spaces (rational distances).
    #[test]
    fn tem_l41_truncated_score_sensitivity(space in arb_space(2, 8), gamma in arb_gamma()) {
        prop_assume!(space.kind() != MetricKind::Euclidean);
        let n = space.n();
        let d = |a: usize, b: usize| match space.exact(a, b) {
            mdp::metric::ExactDistance::Rational(x) => x,
            _ => unreachable!(),
        };
        for i in 0..n {
            for w in 0..n {
                for w2 in 0..n {
                    let diff = tem::truncated_score(&d(i, w), &gamma) - tem::truncated_score(&d(i, w2), &gamma);
                    let abs = if diff < 0u32 { -diff } else { diff };
                    prop_assert!(abs <= d(w, w2));
                }
            }
        }
    }

    /// TEM-T41: Algorithm 2's matrix, as shipped, passes the exact audit at ε for any metric
    /// and γ. Where TEM's ratio bound is tight (e.g. inputs whose other points all lie
    /// beyond γ) the float softmax can overstep it by an ulp; then the exact repair mixes in
    /// the uniform mechanism, with t ≤ 1e-12 (regression: a 6-point Manhattan space found
    /// by this test).
    #[test]
    fn tem_t41_matrix_is_private(space in arb_space(2, 9), eps in arb_eps(), gamma in arb_gamma()) {
        let lists = tem::within_gamma(&space, &gamma, PREC).unwrap();
        let (m, t) = tem::tem_matrix_certified(&space, &eps, &lists, &gamma, PREC).unwrap();
        prop_assert!(t <= 1e-12, "uniform mix {}", t);
        let r = audit_matrix(&space, &eps, &m, json!({}));
        prop_assert_eq!(r.verdict, Verdict::Pass, "{:?}", r.checks);
    }

    /// TEM-T42: with Theorem 4.2's γ for β, every row puts mass ≥ 1 − β within γ (exact sum
    /// of the matrix's rationals over the exactly decided ball).
    #[test]
    fn tem_t42_utility_guarantee(space in arb_space(2, 9), eps in arb_eps(), b in 1u32..500) {
        let beta = b as f64 / 1000.0;
        let n = space.n();
        let gamma = tem::gamma_for_beta(&eps, n, beta).unwrap();
        let lists = tem::within_gamma(&space, &gamma, PREC).unwrap();
        let m = tem::tem_matrix(&space, &eps, &lists, &gamma);
        let need = Q::from(1u32) - q_from_f64(beta);
        for (w, l) in lists.iter().enumerate() {
            let mass: Q = l.iter().map(|&y| m.get(w, y).clone()).sum();
            let total: Q = m.row(w).iter().sum();
            prop_assert!(mass >= &need * total, "row {w}");
        }
    }
}

/// TEM-T42 is tight: on a space where every other point lies beyond γ (the proof's worst
/// case), the mass within γ is 1 − β up to the rounding of γ.
#[test]
fn tem_t42_worst_case_is_tight() {
    let n = 50;
    let eps = q(1, 1);
    let beta = 0.01;
    let gamma = tem::gamma_for_beta(&eps, n, beta).unwrap();
    // n points pairwise 2γ apart: a simplex-like explicit metric.
    let g2 = &gamma * Q::from(2u32);
    let rows = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| if i == j { Q::from(0u32) } else { g2.clone() })
                .collect()
        })
        .collect();
    let space = Space::from_table(rows).unwrap();
    let lists = tem::within_gamma(&space, &gamma, PREC).unwrap();
    let m = tem::tem_matrix(&space, &eps, &lists, &gamma);
    for w in 0..n {
        let p = f64_nearest(m.get(w, w));
        assert!(p >= 1.0 - beta && p <= 1.0 - beta + 1e-9, "row {w}: {p}");
    }
}

/// Pearson's χ² statistic of `counts` against probabilities `p` (cells with expected count
/// < 5 pooled) and the Wilson–Hilferty critical value at false-alarm rate `alpha`.
fn chi_square(counts: &[u64], p: &[f64], alpha: f64) -> (f64, f64) {
    let total: u64 = counts.iter().sum();
    let (mut stat, mut cells, mut pool_o, mut pool_e) = (0.0, 0usize, 0.0, 0.0);
    for (&c, &pi) in counts.iter().zip(p) {
        let e = pi * total as f64;
        if e < 5.0 {
            pool_o += c as f64;
            pool_e += e;
        } else {
            stat += (c as f64 - e).powi(2) / e;
            cells += 1;
        }
    }
    if pool_e > 0.0 {
        stat += (pool_o - pool_e).powi(2) / pool_e.max(1e-300);
        cells += 1;
    }
    let df = (cells.max(2) - 1) as f64;
    let z = normal_quantile(1.0 - alpha);
    let crit = df * (1.0 - 2.0 / (9.0 * df) + z * (2.0 / (9.0 * df)).sqrt()).powi(3);
    (stat, crit)
}

/// TEM-L42: Algorithm 3's sampler (exact Gumbel-max, aggregated ⊥) has Algorithm 2's output
/// distribution: a seeded χ² goodness-of-fit test per input against the exact matrix, at a
/// false-alarm rate of 1e-6 per input (Bonferroni: ≤ 1e-6·n·cases over the whole test). A
/// sampler that drops the ln|L̄| term of ⊥ (or uses scale 1/ε) fails it.
#[test]
#[ignore = "full tier (.ci/run, --include-ignored): about 60 s (2.4 M exact draws)"]
fn tem_l42_sampler_matches_matrix() {
    let (space, _) = mdp::builtin::space("cities40").unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(42);
    for (eps, gamma) in [(q(2, 1), q(1, 1)), (q(6, 1), q(12, 10)), (q(1, 2), q(5, 1))] {
        let lists = tem::within_gamma(&space, &gamma, PREC).unwrap();
        let m = tem::tem_matrix(&space, &eps, &lists, &gamma);
        let s = TemSampler::new(&space, &eps, &lists, &gamma);
        for w in 0..space.n() {
            let p: Vec<f64> = m.row(w).iter().map(f64_nearest).collect();
            let mut counts = vec![0u64; space.n()];
            for _ in 0..20_000 {
                counts[s.sample(w, &mut rng)] += 1;
            }
            let (stat, crit) = chi_square(&counts, &p, 1e-6);
            assert!(stat <= crit, "ε={eps} γ={gamma} w={w}: χ² {stat} > {crit}");
        }
    }
}

/// TEM-MADLIB (Theorem 3.1, statistical): Madlib's sampler is ε·d private for the Euclidean
/// metric. On a 1-d vocabulary, for every pair (u, v) and output y, a one-sided test of
/// p_u(y) > e^{εd(u,v)} p_v(y) (Wilson bounds, Bonferroni over all triples, false-alarm rate
/// 1e-6) must not reject; the same test run against a sampler with twice the privacy loss
/// (noise ∝ exp(−2ε‖z‖)) must reject (the power check).
#[test]
fn tem_madlib_sampler_is_private() {
    let pts: Vec<Vec<Q>> = [0i64, 1, 2, 4, 7].iter().map(|&x| vec![q(x, 2)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let n = space.n();
    let eps = q(1, 1);
    let k = 200_000usize;
    let violations = |claimed_eps: f64, sampler_eps: &Q, seed: u64| -> usize {
        let m = Madlib::new(&space, sampler_eps).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let freq: Vec<Vec<f64>> = (0..n)
            .map(|w| {
                let mut c = vec![0.0; n];
                for _ in 0..k {
                    c[m.sample(w, &mut rng)] += 1.0;
                }
                c
            })
            .collect();
        let z = normal_quantile(1.0 - 1e-6 / (n * n * n) as f64);
        // Wilson score interval for a binomial proportion.
        let wilson = |c: f64, lower: bool| {
            let kf = k as f64;
            let p = c / kf;
            let centre = p + z * z / (2.0 * kf);
            let half = z * (p * (1.0 - p) / kf + z * z / (4.0 * kf * kf)).sqrt();
            let den = 1.0 + z * z / kf;
            if lower {
                (centre - half) / den
            } else {
                (centre + half) / den
            }
        };
        let mut bad = 0;
        for u in 0..n {
            for v in 0..n {
                for y in 0..n {
                    let c = (claimed_eps * space.approx(u, v)).exp();
                    if wilson(freq[u][y], true) > c * wilson(freq[v][y], false) {
                        bad += 1;
                    }
                }
            }
        }
        bad
    };
    assert_eq!(violations(1.0, &eps, 7), 0);
    assert!(violations(1.0, &q(2, 1), 8) > 0, "the test has no power");
}

/// IMO-L1 (Imola et al. Lemma 1, black-hole space: d(w1, wi) = 1, d(wi, wj) = δ' for
/// i, j ≥ 2; our `builtin:blackhole:N:DELTA` has δ' = DELTA/2), Y = (1, 1/(n−1), …),
/// e = e^{−ε/2}, A = (1/(n−1) + e)/(1 + e):
/// * the appendix's L(EXPMECH_Y) ≤ A·L(EXPMECH) is the δ' → 0 limit of (16)/(17): for
///   every δ' > 0 the ratio is strictly above A (the rows i ≥ 2 of EXPMECH_Y lose more than
///   e/(1+e)), and it tends to A;
/// * what holds for δ' > 0 (our proof, spec/theorems.md): ratio ≤ A·(1 + δ'/e)/(1 − εδ'/(2(1+e)));
/// * the main text's printed form L(EXPMECH_Y) ≤ 1/(n−1) + e·L(EXPMECH) (the fraction
///   bar lost) is not the lemma the proof derives, and fails for larger δ' (witnessed).
#[test]
fn imo_l1_black_hole() {
    let mut main_text_counterexamples = vec![];
    for n in [3usize, 5, 20, 60] {
        let ln_n = (n as f64).ln();
        for eps_f in [0.5, 2.0, 2.0 * ln_n, 8.0] {
            let eps = mdp::exact::q_from_f64(eps_f);
            let eps_f = f64_down(&eps);
            for delta in [q(1, 10), q(1, 1000), q(1, 1_000_000)] {
                let dp = f64_down(&delta) / 2.0;
                let name = format!("blackhole:{n}:{}", mdp::exact::f64_down(&delta));
                let (space, _) = mdp::builtin::space(&name).unwrap();
                let loss = |weights: Option<&[Q]>| {
                    let m = weighted_exponential(&space, &eps, weights);
                    let r = audit_matrix(&space, &eps, &m, json!({}));
                    assert_eq!(r.verdict, Verdict::Pass);
                    r.loss_max.unwrap()
                };
                let l_em = loss(None);
                let y: Vec<Q> = (0..n)
                    .map(|i| {
                        if i == 0 {
                            q(1, 1)
                        } else {
                            Q::from_signeds(1, n as i64 - 1)
                        }
                    })
                    .collect();
                let l_y = loss(Some(&y));
                let e = (-eps_f / 2.0).exp();
                let a = (1.0 / (n as f64 - 1.0) + e) / (1.0 + e);
                let (r_lo, r_hi) = (l_y[0] / l_em[1], l_y[1] / l_em[0]);
                let ctx = format!("n={n} ε={eps_f} δ'={dp}: ratio [{r_lo}, {r_hi}], A={a}");
                // (17): the limit of L(EXPMECH_Y) is e/(1+e); for δ' > 0 it is above.
                assert!(l_y[0] > e / (1.0 + e) * (1.0 + 1e-12), "{ctx}");
                if dp <= 1e-3 {
                    assert!(r_lo > a * (1.0 + 1e-12), "Lemma 1 as stated held: {ctx}");
                }
                let corrected = a * (1.0 + dp / e) / (1.0 - eps_f * dp / (2.0 * (1.0 + e)));
                assert!(
                    r_hi <= corrected * (1.0 + 1e-12),
                    "corrected bound fails: {ctx}"
                );
                if dp <= 1e-6 && eps_f >= 2.0 * ln_n {
                    // The lemma's second claim, in the limit: ≤ 2/(n−1) (up to the δ' term).
                    assert!(
                        r_hi <= 2.0 / (n as f64 - 1.0) * (1.0 + dp / e) * (1.0 + 1e-5),
                        "{ctx}"
                    );
                }
                if l_y[0] > 1.0 / (n as f64 - 1.0) + e * l_em[1] {
                    main_text_counterexamples.push(ctx);
                }
            }
        }
    }
    // Measured: it fails at δ' = 0.05 for n = 20, 60 and ε ≥ 2 ln n (e.g. n = 20, ε = 8:
    // ratio 0.261, A = 0.070).
    assert!(
        !main_text_counterexamples.is_empty(),
        "the main text's form held everywhere"
    );
}

/// Found by the Python package's hostile-argument test: at ε = 1000 the entries e^{−500·d}
/// of far outputs underflow to 0 in f64; the rounded row kept those zeros (an infinite
/// privacy loss), so the build failed its own audit. Underflowed entries now keep their
/// exact scaled floats, and the mechanism certifies. At ε = 10⁶ an entry would need
/// 6.9·10⁵ digits: refused up front, naming ε.
#[test]
fn exponential_at_large_epsilon_keeps_underflowed_entries() {
    let p = |s: &str| mdp::exact::parse_rational(s).unwrap();
    let pts = vec![
        vec![p("0"), p("0")],
        vec![p("1"), p("0")],
        vec![p("0"), p("2")],
        vec![p("3"), p("1")],
    ];
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let family = mdp::produce::Family::Exponential(mdp::produce::ExpMech { weights: None });
    let req = mdp::produce::Request::new(&space, "points", p("1000"));
    let out = mdp::produce::produce(&req, &family, &mdp::progress::Silent).unwrap();
    assert_eq!(out.certified.report().verdict, Verdict::Pass);
    assert!(out.certified.matrix().data.iter().all(|x| *x > 0u32));
    let req = mdp::produce::Request::new(&space, "points", p("1000000"));
    match mdp::produce::produce(&req, &family, &mdp::progress::Silent) {
        Err(mdp::produce::ProduceError::Invalid { field, .. }) => assert_eq!(field, "epsilon"),
        other => panic!("expected a refusal naming ε, got {other:?}"),
    }
}

/// Weights 10³⁰ apart at ε = 10⁻⁹ leave a relative slack of ≈ 10⁻³⁹, far below the f64
/// softmax's error: the producer refuses with the reason (field `weights`) instead of
/// building a matrix that fails its own audit.
#[test]
fn exponential_without_float_slack_is_refused_with_its_cause() {
    let pts = vec![
        vec![mdp::exact::parse_rational("0").unwrap()],
        vec![mdp::exact::parse_rational("1").unwrap()],
        vec![mdp::exact::parse_rational("3").unwrap()],
    ];
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let req = mdp::produce::Request::new(
        &space,
        "points",
        mdp::exact::parse_rational("1e-9").unwrap(),
    );
    let family = mdp::produce::Family::Exponential(mdp::produce::ExpMech {
        weights: Some(vec![
            mdp::exact::parse_rational("1e30").unwrap(),
            mdp::exact::parse_rational("1").unwrap(),
            mdp::exact::parse_rational("1").unwrap(),
        ]),
    });
    match mdp::produce::produce(&req, &family, &mdp::progress::Silent) {
        Err(mdp::produce::ProduceError::Invalid { field, .. }) => assert_eq!(field, "weights"),
        other => panic!("expected a refusal naming the weights, got {other:?}"),
    }
}
