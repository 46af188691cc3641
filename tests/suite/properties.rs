//! Property tests named after `shared/THEOREMS.md` IDs (rows in `spec/theorems.md`), and
//! the differential test of the fast path against the all-exact reference.

use mdp::audit::{self, Options, Verdict};
use mdp::bounds;
use mdp::exact::{functions, Interval, Q};
use mdp::io::{self, Certificate, MechanismFile};
use mdp::loss::{self, Cost};
use mdp::mechanism::{Matrix, Outputs};
use mdp::mechanisms::exponential::{exponential, weighted_exponential};
use mdp::metric::{MetricKind, Space};
use mdp::privacy::{self, reference, Decision, Prepared};
use proptest::prelude::*;

fn q(a: i64, b: i64) -> Q {
    Q::from_signeds(a, b)
}

/// Random spaces of every coordinate kind with rational coordinates (hundredths).
fn arb_space(max_n: usize) -> impl Strategy<Value = Space> {
    (2..=max_n, 1usize..=3, 0usize..3).prop_flat_map(|(n, dim, kind)| {
        proptest::collection::vec(proptest::collection::vec(-500i64..500, dim), n).prop_map(
            move |pts| {
                let kind = [
                    MetricKind::Euclidean,
                    MetricKind::Manhattan,
                    MetricKind::Chebyshev,
                ][kind];
                let pts = pts
                    .into_iter()
                    .map(|p| p.into_iter().map(|x| q(x, 100)).collect())
                    .collect();
                Space::from_points(kind, pts, None).unwrap()
            },
        )
    })
}

fn arb_eps() -> impl Strategy<Value = Q> {
    (1i64..400).prop_map(|x| q(x, 100))
}

fn file(space: Space, matrix: Matrix, eps: Q) -> MechanismFile {
    MechanismFile {
        epsilon: eps,
        space,
        matrix,
        outputs: Outputs::Inputs,
        within: None,
        delta: q(1, 1000),
        quantile: q(95, 100),
        cost: None,
        prior: None,
        certificate: Certificate::default(),
        meta: None,
        warnings: vec![],
        labels: None,
    }
}

fn prepared<'a>(s: &'a Space, m: &'a Matrix) -> Prepared<'a> {
    Prepared::new(s, m, None, privacy::DEFAULT_MAX_PREC).unwrap()
}

/// A rational within relative 2^-200 of e^x.
fn exp_q(x: &Q) -> Q {
    let e = functions::exp(&Interval::point(x.clone()), 200);
    e.mid()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    /// IMO-P1 (Imola et al. Proposition 1): EXPMECH_Y is ε·d private for every Y > 0, and
    /// its tight ε is ≤ ε.
    #[test]
    fn imo_p1_weighted_exponential_is_private(space in arb_space(9), eps in arb_eps(),
                                              ys in proptest::collection::vec(1i64..100_000, 9)) {
        let n = space.n();
        let y: Vec<Q> = ys[..n].iter().map(|&v| q(v, 1000)).collect();
        let m = weighted_exponential(&space, &eps, Some(&y));
        let f = file(space, m, eps.clone());
        let r = audit::audit(&f, &Options::default()).unwrap();
        prop_assert_eq!(r.verdict, Verdict::Pass, "{}", audit::human(&r));
        let hi = r.epsilon_tight[1].unwrap();
        prop_assert!(hi <= mdp::exact::f64_up(&eps));
    }

    /// IMO-D1: Definition 1 (for all sets S of outputs, P_u(S) ≤ e^{εd} P_v(S)) holds iff
    /// the LP rows (2) M_uw ≤ e^{εd(u,v)} M_vw hold, and the auditor's verdict is that.
    #[test]
    fn imo_d1_definition_iff_lp_rows(space in arb_space(4), eps in arb_eps(),
                                      raw in proptest::collection::vec(0i64..20, 16), scale in 1i64..4) {
        let n = space.n();
        let k = 4usize;
        let mut data: Vec<Q> = raw[..n * k].iter().map(|&x| q(x + 1, scale)).collect();
        // Mix in the exponential mechanism so both verdicts occur.
        if raw[0] % 2 == 0 {
            let e = exponential(&space, &eps);
            let e = Matrix::new(n, n, e.data);
            data = (0..n).flat_map(|u| (0..k).map(|w| if w < n { e.get(u, w).clone() } else { q(1, 1_000_000) }).collect::<Vec<_>>()).collect();
        }
        let m = Matrix::new(n, k, data);
        let space2 = space.clone();
        let p = Prepared::new(&space2, &m, None, privacy::DEFAULT_MAX_PREC).unwrap();
        // Definition 1, all 2^K sets, exact.
        let mut def1 = Decision::Holds;
        for u in 0..n { for v in 0..n { if u == v { continue; }
            let c = functions::exp(&space.enclosure(u, v, 200).scale(&eps), 200);
            for set in 1u32..(1 << k) {
                let pu: Q = (0..k).filter(|w| set >> w & 1 == 1).map(|w| p.h_exact(u, w)).sum();
                let pv: Q = (0..k).filter(|w| set >> w & 1 == 1).map(|w| p.h_exact(v, w)).sum();
                if pu > &c.hi * &pv { def1 = Decision::Fails; }
                else if pu > &c.lo * &pv && def1 == Decision::Holds { def1 = Decision::Undecided; }
            }
        }}
        let rows2 = reference::check_pure(&p, &eps);
        prop_assume!(def1 != Decision::Undecided);
        prop_assert_eq!(def1, rows2);
        let ratios = privacy::float_ratios(&p);
        prop_assert_eq!(privacy::check_pure(&p, &ratios, &eps).decision, rows2);
    }

    /// IMO-EPS: ε_tight at δ = 0 equals the pure tight ε; ε_tight is non-increasing in δ.
    #[test]
    fn imo_eps_delta_zero_and_monotone(space in arb_space(7), eps in arb_eps(), d1 in 0i64..50, d2 in 0i64..50) {
        let m = exponential(&space, &eps);
        let p = prepared(&space, &m);
        let ratios = privacy::float_ratios(&p);
        let pure = privacy::tight_pure_eps(&p, &ratios).unwrap().0;
        let (at0, _) = privacy::tight_eps_delta(&p, &ratios, &q(0, 1)).unwrap();
        let (phi, zhi) = (pure.hi.clone().unwrap(), at0.hi.clone().unwrap());
        prop_assert!(pure.lo <= zhi && at0.lo <= phi, "pure [{:?}] vs δ=0 [{:?}]", pure, at0);
        let (da, db) = (q(d1.min(d2), 1000), q(d1.max(d2), 1000));
        let (ea, _) = privacy::tight_eps_delta(&p, &ratios, &da).unwrap();
        let (eb, _) = privacy::tight_eps_delta(&p, &ratios, &db).unwrap();
        prop_assert!(eb.lo <= ea.hi.clone().unwrap());
    }

    /// IMO-T3 (Theorem 3, eqs. 7 and 8): for every packing and every passing mechanism, the
    /// bound at the mechanism's ε never exceeds its loss; including the two-farthest-points
    /// packing (2, r*/2, r*).
    #[test]
    fn imo_t3_packing_bound_below_loss(space in arb_space(9), eps in arb_eps(),
                                        ys in proptest::collection::vec(1i64..1000, 9),
                                        order in proptest::collection::vec(0usize..9, 9), rdiv in 2i64..8) {
        let n = space.n();
        let y: Vec<Q> = ys[..n].iter().map(|&v| q(v, 10)).collect();
        let m = weighted_exponential(&space, &eps, Some(&y));
        let p = prepared(&space, &m);
        let sites: Vec<usize> = (0..n).collect();
        let losses = loss::losses(&p, &Cost::Distance(&sites), &q(1, 2), None);
        let ratios = privacy::float_ratios(&p);
        let tight = privacy::tight_pure_eps(&p, &ratios).unwrap().0;
        let eps_hi = mdp::exact::f64_up(tight.hi.as_ref().unwrap());
        // Greedy packing from a random center order with radius max-dist / rdiv.
        let dmax = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).map(|(a, b)| space.approx(a, b)).fold(0.0, f64::max);
        prop_assume!(dmax > 0.0);
        let r = Q::try_from(dmax / rdiv as f64).unwrap();
        let mut centers: Vec<usize> = Vec::new();
        for &c in order.iter().filter(|&&c| c < n) {
            if centers.contains(&c) { continue; }
            let mut cand = centers.clone();
            cand.push(c);
            if bounds::verify_packing(&space, &cand, &r, &sites, 256).is_ok() { centers = cand; }
        }
        prop_assume!(!centers.is_empty());
        let pk = bounds::verify_packing(&space, &centers, &r, &sites, 256).unwrap();
        let b7 = bounds::bound_eq7(&pk, n, eps_hi, &|w, s| space.fi(w, s).hi);
        let b8 = bounds::bound_eq8(&pk, pk.q.hi, eps_hi);
        prop_assert!(b7.lo <= losses.max.hi, "bound (7) {:?} above loss {:?}", b7, losses.max);
        // (8) ≤ (7) mathematically; the rigorous lower ends may differ by their rounding width.
        prop_assert!(b8.lo <= b7.hi * (1.0 + 1e-12), "(8) {:?} above (7) {:?}", b8, b7);
        // Two farthest points: S = {a, b}, r = d(a,b)/2 (balls of radius < r* / 2 are disjoint).
        let (a, b) = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).max_by(|x, y| space.approx(x.0, x.1).total_cmp(&space.approx(y.0, y.1))).unwrap();
        let half = Q::try_from(space.fi(a, b).lo / 2.0 * 0.999).unwrap();
        if let Ok(pk2) = bounds::verify_packing(&space, &[a, b], &half, &sites, 256) {
            let b2 = bounds::bound_eq7(&pk2, n, eps_hi, &|w, s| space.fi(w, s).hi);
            prop_assert!(b2.lo <= losses.max.hi);
        }
    }
}

/// Near-boundary matrices on two points: the ratio H[0][0]/H[1][0] is set to e^{εd}·(1 ± 10^-k)
/// for k up to 30, beyond the float filter's resolution; the fast path and the all-exact
/// reference must agree, and agree with the planted sign.
#[test]
fn differential_fast_vs_exact_near_boundary() {
    let space = Space::from_points(
        MetricKind::Euclidean,
        vec![vec![q(0, 1)], vec![q(3, 10)]],
        None,
    )
    .unwrap();
    let eps = q(1, 1);
    let c = exp_q(&q(3, 10)); // e^{ε d}
    for k in [3u64, 8, 12, 14, 15, 16, 17, 20, 30] {
        for sign in [-1i64, 1] {
            let tilt = Q::from(1u32) + Q::from(sign) / Q::from(mdp::exact::N::from(10u32).pow(k));
            // Row 1 = [b, 1 − b]; row 0 = [a, 1 − a] with a = c·b·tilt; b small so other rows hold.
            let b = q(1, 5);
            let a = &c * &b * &tilt;
            let m = Matrix::new(
                2,
                2,
                vec![a.clone(), Q::from(1u32) - &a, b.clone(), Q::from(1u32) - &b],
            );
            let p = prepared(&space, &m);
            let ratios = privacy::float_ratios(&p);
            let fast = privacy::check_pure(&p, &ratios, &eps).decision;
            let exact = reference::check_pure(&p, &eps);
            let want = if sign > 0 {
                Decision::Fails
            } else {
                Decision::Holds
            };
            assert_eq!(fast, exact, "k = {k}, sign = {sign}");
            assert_eq!(fast, want, "k = {k}, sign = {sign}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, .. ProptestConfig::default() })]

    /// Differential: on random matrices (including exact duplicates, zeros, rows scaled
    /// to sit on the boundary), the fast path and the all-exact path agree on the verdict,
    /// the tight pure ε and the (ε,δ) tight ε.
    #[test]
    fn differential_fast_path_agrees_with_exact(space in arb_space(6), eps in arb_eps(),
                                                raw in proptest::collection::vec(0i64..6, 36),
                                                mode in 0usize..3, delta in 0i64..30) {
        let n = space.n();
        let m = match mode {
            0 => Matrix::new(n, n, raw[..n * n].iter().map(|&x| q(x + 1, 7)).collect()),
            1 => Matrix::new(n, n, raw[..n * n].iter().map(|&x| q(x, 3)).enumerate().map(|(i, v)| if i % n == 0 { v + q(1, 1) } else { v }).collect()),
            _ => exponential(&space, &eps),
        };
        let p = prepared(&space, &m);
        let ratios = privacy::float_ratios(&p);
        prop_assert_eq!(privacy::check_pure(&p, &ratios, &eps).decision, reference::check_pure(&p, &eps));
        let fast = privacy::tight_pure_eps(&p, &ratios).unwrap().0;
        match reference::tight_pure(&p) {
            None => prop_assert!(fast.hi.is_none()),
            Some(e) => {
                let hi = fast.hi.clone().unwrap();
                prop_assert!(fast.lo <= e.hi && e.lo <= hi, "fast {:?} exact {:?}", fast, e);
            }
        }
        // At the tight ε's upper end the mechanism passes; just below the lower end it fails.
        if let Some(hi) = fast.hi.clone() {
            if hi > 0u32 {
                prop_assert_eq!(privacy::check_pure(&p, &ratios, &hi).decision, Decision::Holds);
                let below = &fast.lo * q(999_999, 1_000_000);
                if below > 0u32 {
                    prop_assert_eq!(privacy::check_pure(&p, &ratios, &below).decision, Decision::Fails);
                }
            }
        }
        let d = q(delta, 100);
        let (fd, _) = privacy::tight_eps_delta(&p, &ratios, &d).unwrap();
        match reference::tight_delta(&p, &d) {
            None => prop_assert!(fd.hi.is_none()),
            Some(e) => {
                let hi = fd.hi.clone().unwrap();
                prop_assert!(fd.lo <= e.hi && e.lo <= hi, "fast {:?} exact {:?}", fd, e);
            }
        }
    }
}

/// The exponential mechanism on both embedded real spaces passes its audit.
#[test]
fn exponential_on_builtin_real_spaces_passes() {
    for (name, eps) in [("rome100", q(1, 2)), ("cities40", q(5, 1))] {
        let (space, _) = mdp::builtin::space(name).unwrap();
        let m = exponential(&space, &eps);
        let r = audit::audit(&file(space, m, eps), &Options::default()).unwrap();
        assert_eq!(r.verdict, Verdict::Pass, "{name}: {}", audit::human(&r));
    }
}

/// Writing and reading back a mechanism is lossless.
#[test]
fn mdp1_round_trip() {
    let (space, _) = mdp::builtin::space("rome100").unwrap();
    let eps = q(1, 2);
    let m = exponential(&space, &eps);
    let v = io::mechanism_to_value(&eps, &space, &m, serde_json::json!({}));
    let text = serde_json::to_string(&v).unwrap();
    let f = io::read_mechanism(text.as_bytes(), &io::Limits::default()).unwrap();
    assert_eq!(f.matrix, m);
    assert_eq!(f.epsilon, eps);
    assert_eq!(f.space.points(), space.points());
}

proptest! {
    /// The (ε,δ) t* solve is written once over its number type (`privacy::t_star`): over
    /// Q it is the definition's smallest t ≥ 1 with Σ_w max(0, a_w − t·b_w) ≤ δ (f(t*) ≤ δ
    /// exactly, and f(t) > δ just below t* unless t* = 1); over f64 it agrees with the
    /// exact value to 1e-9 (relative), and both say ∞ on the same rows.
    #[test]
    fn t_star_float_and_exact_agree_with_the_definition(
        raw in proptest::collection::vec((0u32..50, 0u32..50), 1..12),
        d in 0u32..100,
    ) {
        let (sa, sb): (u32, u32) = (raw.iter().map(|x| x.0).sum(), raw.iter().map(|x| x.1).sum());
        prop_assume!(sa > 0 && sb > 0);
        let a: Vec<Q> = raw.iter().map(|x| q(x.0 as i64, sa as i64)).collect();
        let b: Vec<Q> = raw.iter().map(|x| q(x.1 as i64, sb as i64)).collect();
        let delta = q(d as i64, 1000);
        let f = |t: &Q| -> Q {
            a.iter().zip(&b).map(|(x, y)| {
                let z = x - t * y;
                if z > 0u32 { z } else { Q::from(0u32) }
            }).sum()
        };
        let exact = privacy::t_star(&a, &b, &delta);
        let fa: Vec<f64> = a.iter().map(mdp::exact::f64_nearest).collect();
        let fb: Vec<f64> = b.iter().map(mdp::exact::f64_nearest).collect();
        let float = privacy::t_star(&fa, &fb, &mdp::exact::f64_nearest(&delta));
        match &exact {
            None => {
                // ∞: the mass where b = 0 alone exceeds δ.
                let a0: Q = a.iter().zip(&b).filter(|(_, y)| **y == 0u32).map(|(x, _)| x.clone()).sum();
                prop_assert!(a0 > delta);
                prop_assert!(float.is_none());
            }
            Some(t) => {
                prop_assert!(*t >= 1u32);
                prop_assert!(f(t) <= delta);
                if *t > 1u32 {
                    let below = t - q(1, 1_000_000);
                    prop_assert!(f(&below) > delta || below < 1u32);
                }
                let tf = mdp::exact::f64_nearest(t);
                let got = float.expect("float finite where exact is");
                approx::assert_relative_eq!(got, tf, max_relative = 1e-9);
            }
        }
    }
}
