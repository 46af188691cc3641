//! The kernel's own tests of the privacy checks (`privacy.rs`: Imola et al. Definition 1,
//! the tight pure ε, the (ε,δ) tight ε of eqs. 9–10) through each decision path: the `f64`
//! filter on float-safe rows, the exact fallback (rows the float copy cannot represent, and
//! ratios beyond the filter's resolution), pairs at distance 0, infinite ratios, the scope
//! `within` η; planted violations from 10 down to 10⁻³⁰ relative, decided as the all-exact
//! reference (`privacy::reference`) decides them, and the same on random matrices. Before
//! these, the differential tests lived in the solver crate only (`tests/properties.rs`).

use mdp_audit::exact::{functions, Interval, N, Q};
use mdp_audit::metric::{MetricKind, Space};
use mdp_audit::privacy::{
    self, check_pure, float_ratios, pair_ratios, ratio_bounds, ratio_within, reference,
    tight_eps_delta, tight_pure_eps, Decision, Prepared, DEFAULT_MAX_PREC,
};
use mdp_audit::Matrix;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn q(a: i64, b: i64) -> Q {
    Q::from_signeds(a, b)
}

fn one() -> Q {
    Q::from(1u32)
}

fn space(kind: MetricKind, xs: &[Q]) -> Space {
    Space::from_points(kind, xs.iter().map(|x| vec![x.clone()]).collect(), None).unwrap()
}

/// A rational within relative 2⁻²⁰⁰ of e^x.
fn exp_q(x: &Q) -> Q {
    functions::exp(&Interval::point(x.clone()), 200).mid()
}

/// 1 + sign·10^-k (k = 0 with sign 1: 11, ten times over the bound).
fn tilt(k: u32, sign: i64) -> Q {
    if k == 0 {
        return Q::from(11u32);
    }
    one() + Q::from(sign) / Q::from(N::from(10u32).pow(k as u64))
}

/// The pure verdict of the fast path, checked against the reference; with the witness's
/// triple on a failure.
fn decide(p: &Prepared, eps: &Q) -> privacy::PureCheck {
    let r = float_ratios(p);
    let c = check_pure(p, &r, eps);
    assert_eq!(c.decision, reference::check_pure(p, eps));
    c
}

/// The tight ε of the fast path encloses the reference's, within 10⁻⁹ relative.
fn tight_agrees(p: &Prepared) -> privacy::EpsEnclosure {
    let r = float_ratios(p);
    let (fast, _) = tight_pure_eps(p, &r).unwrap();
    match reference::tight_pure(p) {
        None => assert!(fast.hi.is_none(), "{fast:?}"),
        Some(e) => {
            let hi = fast.hi.clone().expect("finite");
            assert!(fast.lo <= e.hi && e.lo <= hi, "fast {fast:?} exact {e:?}");
            assert!(
                &hi - &fast.lo <= &hi * q(1, 1_000_000_000),
                "{fast:?} too wide"
            );
        }
    }
    fast
}

/// Row 1 = [b, 1 − b], row 0 = [a, 1 − a] with a = e^{ε d}·b·tilt on two points at
/// d = 3/10 (ε = 1): the pair (0, 1) at output 0 exceeds its bound by the factor tilt, so it
/// fails iff tilt > 1 (at tilt 11 the pair (1, 0) fails too, by less). With b = 1/20 the rows
/// are float-safe (the filter decides down to ≈ 10⁻¹⁴, the exact fallback beyond); with
/// b = 2⁻¹⁰⁸⁰ the entries are below the smallest double, the rows unsafe, and every pair goes
/// exact. On both metric forms: a rational distance (manhattan) and a square root
/// (euclidean).
#[test]
fn planted_violations_at_every_scale_through_every_path() {
    let eps = one();
    let d = q(3, 10);
    let c = exp_q(&(&eps * &d));
    let tiny = one() >> 1080u64;
    for kind in [MetricKind::Manhattan, MetricKind::Euclidean] {
        let s = space(kind, &[q(0, 1), d.clone()]);
        for (path, b) in [("safe", q(1, 20)), ("unsafe", tiny.clone())] {
            for k in [0u32, 1, 3, 8, 12, 14, 15, 16, 17, 20, 30] {
                for sign in [-1i64, 1] {
                    if k == 0 && sign < 0 {
                        continue;
                    }
                    let t = tilt(k, sign);
                    let a = &c * &b * &t;
                    let m = Matrix::new(2, 2, vec![a.clone(), one() - &a, b.clone(), one() - &b]);
                    let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
                    assert_eq!(p.safe, vec![path == "safe"; 2]);
                    let at = format!("{kind:?} {path} k = {k} sign = {sign}");
                    let got = decide(&p, &eps);
                    let want = if sign > 0 {
                        Decision::Fails
                    } else {
                        Decision::Holds
                    };
                    assert_eq!(got.decision, want, "{at}");
                    assert_eq!(got.pairs, 2);
                    if want == Decision::Fails {
                        let w = got.witness.as_ref().expect("a witness");
                        assert_eq!((w.u, w.v, w.w), (0, 1, 0), "{at}");
                        assert!(w.lhs.0 <= w.lhs.1 && w.rhs.0 <= w.rhs.1);
                        // lhs = a > rhs = e^{εd}·b: the enclosures are ordered unless the
                        // violation is below their resolution.
                        if k <= 12 && path == "safe" {
                            assert!(w.lhs.0 > w.rhs.1, "{at}: {w:?}");
                        }
                    } else {
                        assert!(got.witness.is_none() && got.undecided.is_none());
                    }
                    // The filter decides what it can resolve: a safe pair exceeding or
                    // meeting its bound by 10⁻⁸ or more never reaches the exact path.
                    // (A failure stops the check at the first failing pair.)
                    if path == "unsafe" {
                        let all = if want == Decision::Holds { 2 } else { 1 };
                        assert_eq!(got.exact_pairs, all, "{at}");
                    } else if k <= 8 {
                        assert_eq!(got.exact_pairs, 0, "{at}");
                    } else if k >= 16 {
                        assert!(got.exact_pairs >= 1, "{at}");
                    }
                    // The tight ε: ln(c·tilt)/d = ε + ln(tilt)/d, and the check agrees with it.
                    let e = tight_agrees(&p);
                    let want_e = functions::ln(&Interval::point(&c * &t), 200).unwrap();
                    let (wlo, whi) = (&want_e.lo / &d, &want_e.hi / &d);
                    let hi = e.hi.clone().unwrap();
                    assert!(e.lo <= whi && wlo <= hi, "{at}: {e:?}");
                    assert_eq!(e.pair, Some((0, 1)), "{at}");
                    let r = float_ratios(&p);
                    assert_eq!(check_pure(&p, &r, &hi).decision, Decision::Holds, "{at}");
                    let below = &e.lo * q(999_999, 1_000_000);
                    assert_eq!(check_pure(&p, &r, &below).decision, Decision::Fails, "{at}");
                }
            }
        }
    }
}

/// Duplicate points (d = 0): equal rows hold at every ε (tight ε 0); rows that differ by
/// 10⁻³⁰ fail at every ε (tight ε +∞), through the filter and through the exact path.
#[test]
fn pairs_at_distance_zero_need_equal_rows() {
    let s = space(MetricKind::Euclidean, &[q(1, 2), q(1, 2), q(3, 1)]);
    let eps = q(7, 1);
    for b in [q(1, 5), one() >> 1080u64] {
        let row = |x: &Q| vec![x.clone(), one() - x, Q::from(0u32)];
        let far = vec![Q::from(0u32), q(1, 2), q(1, 2)];
        let equal = Matrix::new(3, 3, [row(&b), row(&b), far.clone()].concat());
        let p = Prepared::new(&s, &equal, None, DEFAULT_MAX_PREC).unwrap();
        // Pair (0, 2) and (2, 0) are infinite (zeros against positive entries): scope them
        // out to see the duplicate pair alone.
        assert_eq!(decide(&p, &eps).decision, Decision::Fails);
        let within = q(1, 1);
        let p = Prepared::new(&s, &equal, Some(&within), DEFAULT_MAX_PREC).unwrap();
        assert_eq!(p.pairs_in_scope(), 2);
        assert_eq!(decide(&p, &eps).decision, Decision::Holds);
        let e = tight_agrees(&p);
        assert_eq!(
            (e.lo.clone(), e.hi.clone()),
            (Q::from(0u32), Some(Q::from(0u32)))
        );
        let b2 = &b * tilt(30, 1);
        let differ = Matrix::new(3, 3, [row(&b2), row(&b), far].concat());
        let p = Prepared::new(&s, &differ, Some(&within), DEFAULT_MAX_PREC).unwrap();
        let got = decide(&p, &eps);
        assert_eq!(got.decision, Decision::Fails);
        let w = got.witness.unwrap();
        assert_eq!((w.u, w.v, w.w), (0, 1, 0));
        assert!(tight_agrees(&p).hi.is_none());
    }
}

/// A failure's witness encloses both sides of its row: H = [[1/10, 9/10], [1/2, 1/2]] on
/// two points at distance 1, ε = 1, fails only on the pair (1, 0) at w = 0 (5 > e), with
/// lhs = 1/2 and rhs = e·(1/10), not 1/10: the right side is scaled by e^{εd} unless the
/// pair is at distance 0 (`cargo mutants`: the index of the pair's d = 0 flag, u·n + v,
/// mutated to u + n + v or u/n + v, reads the flag of (1, 1) or (0, 0) here and left the
/// right side unscaled).
#[test]
fn a_witness_encloses_both_sides_of_its_row() {
    let s = space(MetricKind::Manhattan, &[q(0, 1), q(1, 1)]);
    let m = Matrix::new(2, 2, vec![q(1, 10), q(9, 10), q(1, 2), q(1, 2)]);
    let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
    let got = decide(&p, &one());
    assert_eq!(got.decision, Decision::Fails);
    let w = got.witness.unwrap();
    assert_eq!((w.u, w.v, w.w), (1, 0, 0));
    assert!(w.lhs.0 <= 0.5 && 0.5 <= w.lhs.1, "{:?}", w.lhs);
    let e10 = std::f64::consts::E / 10.0;
    assert!(
        w.rhs.0 <= e10 * (1.0 + 1e-15) && e10 * (1.0 - 1e-15) <= w.rhs.1,
        "{:?}",
        w.rhs
    );
    assert!(w.rhs.1 - w.rhs.0 < 1e-15, "{:?}", w.rhs);
    assert!(w.lhs.0 > w.rhs.1);
}

/// H[v][w] = 0 < H[u][w]: no finite ε (tight ε +∞, the witness at that w), in both
/// directions of the pair; the (ε,δ) tight ε is finite once δ covers that mass.
#[test]
fn a_zero_against_a_positive_entry_is_an_infinite_ratio() {
    let s = space(MetricKind::Manhattan, &[q(0, 1), q(1, 1)]);
    let m = Matrix::new(
        2,
        3,
        vec![
            q(1, 10),
            q(6, 10),
            q(3, 10),
            Q::from(0u32),
            q(5, 10),
            q(5, 10),
        ],
    );
    let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
    let got = decide(&p, &q(1000, 1));
    let w = got.witness.unwrap();
    assert_eq!((w.u, w.v, w.w), (0, 1, 0));
    let e = tight_agrees(&p);
    assert!(e.hi.is_none());
    assert_eq!(e.pair, Some((0, 1)));
    let r = float_ratios(&p);
    // δ below the mass 1/10 at w = 0: still ∞; above it: finite, and the reference agrees.
    let (d0, _) = tight_eps_delta(&p, &r, &q(1, 20)).unwrap();
    assert!(d0.hi.is_none());
    assert!(reference::tight_delta(&p, &q(1, 20)).is_none());
    let (d1, _) = tight_eps_delta(&p, &r, &q(1, 5)).unwrap();
    let want = reference::tight_delta(&p, &q(1, 5)).unwrap();
    let hi = d1.hi.unwrap();
    assert!(d1.lo <= want.hi && want.lo <= hi);
}

/// One row the float filter may use, one it may not: H[u][0] = 2⁻¹⁰⁸⁰ flushes to 0 in f64,
/// against H[v][0] = 0 exactly, so the float ratio of the pair (u, v) looks finite while the
/// exact one is ∞. The filter must leave a pair with an unsafe row to the exact path
/// (`cargo mutants`: `safe[u] && safe[v]` → `||` passed this matrix).
#[test]
fn a_pair_with_one_unsafe_row_is_decided_exactly() {
    let s = space(MetricKind::Manhattan, &[q(0, 1), q(1, 1)]);
    let tiny = one() >> 1080u64;
    let m = Matrix::new(2, 2, vec![tiny.clone(), one() - tiny, Q::from(0u32), one()]);
    let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
    let got = decide(&p, &q(1, 1));
    assert_eq!(got.decision, Decision::Fails);
    let w = got.witness.unwrap();
    assert_eq!((w.u, w.v, w.w), (0, 1, 0));
}

/// The scope: with η below the violating pair's distance the check holds (that pair is not
/// checked), with η at it (d ≤ η decided exactly) it fails.
#[test]
fn the_scope_decides_which_pairs_are_checked() {
    let eps = one();
    let d = q(3, 10);
    let s = space(MetricKind::Manhattan, &[q(0, 1), d.clone()]);
    let c = exp_q(&d);
    let a = &c * q(1, 5) * tilt(3, 1);
    let m = Matrix::new(2, 2, vec![a.clone(), one() - &a, q(1, 5), q(4, 5)]);
    for (eta, want, pairs) in [
        (q(29, 100), Decision::Holds, 0),
        (d.clone(), Decision::Fails, 2),
        (q(1, 1), Decision::Fails, 2),
    ] {
        let p = Prepared::new(&s, &m, Some(&eta), DEFAULT_MAX_PREC).unwrap();
        assert_eq!(p.pairs_in_scope(), pairs, "η = {eta}");
        assert_eq!(decide(&p, &eps).decision, want, "η = {eta}");
    }
}

/// ratio_within: R ≤ 1 holds even at distance 0; R > 1 at distance 0 fails; R = ∞ fails;
/// R within 2⁻²⁰⁰ of e^{εd} cannot be decided at 64 bits (undecided, never a pass), and is
/// decided at 4096.
#[test]
fn ratio_within_decides_ln_r_against_eps_d() {
    let d = q(3, 10);
    let dist = |_: u64| Interval::point(q(3, 10));
    let eps = one();
    assert_eq!(
        ratio_within(&Some(one()), true, &eps, 64, dist),
        Decision::Holds
    );
    assert_eq!(
        ratio_within(&Some(q(1, 2)), false, &eps, 64, dist),
        Decision::Holds
    );
    assert_eq!(
        ratio_within(&Some(q(101, 100)), true, &eps, 64, dist),
        Decision::Fails
    );
    assert_eq!(ratio_within(&None, false, &eps, 64, dist), Decision::Fails);
    assert_eq!(
        ratio_within(&Some(q(13, 10)), false, &eps, 64, dist),
        Decision::Holds
    );
    assert_eq!(
        ratio_within(&Some(q(14, 10)), false, &eps, 64, dist),
        Decision::Fails
    );
    let c = exp_q(&d);
    assert_eq!(
        ratio_within(&Some(c.clone()), false, &eps, 64, dist),
        Decision::Undecided
    );
    let above = &c * tilt(40, 1);
    assert_eq!(
        ratio_within(&Some(above.clone()), false, &eps, 64, dist),
        Decision::Undecided
    );
    assert_eq!(
        ratio_within(&Some(above), false, &eps, 4096, dist),
        Decision::Fails
    );
    let below = &c * tilt(40, -1);
    assert_eq!(
        ratio_within(&Some(below), false, &eps, 4096, dist),
        Decision::Holds
    );
}

/// The filter's pieces: the 8-lane maxima equal the plain maxima on every length (with a
/// 0·∞ lane skipped), and ratio_bounds widens by κ each side (∞ is left to the exact path).
#[test]
fn float_ratio_lanes_and_bounds() {
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    for len in [1usize, 7, 8, 9, 16, 19, 33] {
        let a: Vec<f64> = (0..len)
            .map(|i| {
                if i % 5 == 3 {
                    0.0
                } else {
                    rng.gen_range(0.01..1.0)
                }
            })
            .collect();
        let b: Vec<f64> = (0..len)
            .map(|i| {
                if i % 7 == 2 {
                    0.0
                } else {
                    rng.gen_range(0.01..1.0)
                }
            })
            .collect();
        let (ra, rb): (Vec<f64>, Vec<f64>) = (
            a.iter().map(|x| 1.0 / x).collect(),
            b.iter().map(|x| 1.0 / x).collect(),
        );
        let plain = |x: &[f64], ry: &[f64]| {
            x.iter()
                .zip(ry)
                .map(|(p, r)| p * r)
                .filter(|v| !v.is_nan())
                .fold(0.0f64, f64::max)
        };
        assert_eq!(
            pair_ratios(&a, &ra, &b, &rb),
            (plain(&a, &rb), plain(&b, &ra)),
            "len {len}"
        );
    }
    let r = ratio_bounds(2.0).unwrap();
    assert!(r.lo < 2.0 && r.hi > 2.0);
    assert!(r.lo >= 2.0 * (1.0 - privacy::KAPPA) * (1.0 - 1e-16));
    assert!(r.hi <= 2.0 * (1.0 + privacy::KAPPA) * (1.0 + 1e-16));
    assert!(ratio_bounds(f64::INFINITY).is_none());
}

/// Random 2–5-point spaces of every coordinate kind and random matrices (rationals, some
/// zeros, duplicate points, rows tilted onto their bound): the fast path agrees with the
/// all-exact reference on the verdict, the tight ε and the (ε,δ) tight ε.
#[test]
fn the_fast_path_agrees_with_the_exact_reference_on_random_matrices() {
    let mut rng = ChaCha8Rng::seed_from_u64(2026);
    let kinds = [
        MetricKind::Euclidean,
        MetricKind::Manhattan,
        MetricKind::Chebyshev,
    ];
    for case in 0..120 {
        let n = rng.gen_range(2..=5);
        let kind = kinds[case % 3];
        let pts: Vec<Vec<Q>> = (0..n)
            .map(|i| {
                if i == 0 || rng.gen_bool(0.15) {
                    vec![q(0, 1), q(0, 1)] // point 0, and duplicates of it
                } else {
                    vec![
                        q(rng.gen_range(-300..300), 100),
                        q(rng.gen_range(-300..300), 100),
                    ]
                }
            })
            .collect();
        let s = Space::from_points(kind, pts, None).unwrap();
        let eps = q(rng.gen_range(1..300), 100);
        let mode = case % 4;
        let mut data = Vec::with_capacity(n * n);
        for u in 0..n {
            for w in 0..n {
                let x = match mode {
                    0 => q(rng.gen_range(1..8), 7),
                    1 => q(rng.gen_range(0..4) + (w == u) as i64, 3),
                    // Exponential-like rows e^{-ε d(u, w)/2} (rounded to 2⁻²⁰⁰), private.
                    _ => exp_q(
                        &(Q::from(0u32) - &eps * s.enclosure(u, w, 200).mid() / Q::from(2u32)),
                    ),
                };
                data.push(x);
            }
        }
        if mode == 3 {
            // Tilt one entry onto its bound against row 1 (±10⁻²⁰).
            let (u, v) = (0, 1);
            let dist = s.enclosure(u, v, 200).mid();
            let c = exp_q(&(&eps * &dist));
            data[u * n] = &c * &data[v * n] * tilt(20, if rng.gen_bool(0.5) { 1 } else { -1 });
        }
        let m = Matrix::new(n, n, data);
        let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
        decide(&p, &eps);
        tight_agrees(&p);
        let r = float_ratios(&p);
        let delta = q(rng.gen_range(0..30), 100);
        let (fd, _) = tight_eps_delta(&p, &r, &delta).unwrap();
        match reference::tight_delta(&p, &delta) {
            None => assert!(fd.hi.is_none(), "case {case}"),
            Some(e) => {
                let hi = fd.hi.clone().unwrap();
                assert!(
                    fd.lo <= e.hi && e.lo <= hi,
                    "case {case}: fast {fd:?} exact {e:?}"
                );
            }
        }
    }
}

/// f(t) = Σ_w max(0, a_w − t·b_w), exactly.
fn hockey_exact(a: &[Q], b: &[Q], t: &Q) -> Q {
    a.iter()
        .zip(b)
        .map(|(x, y)| {
            let z = x - t * y;
            if z > 0u32 {
                z
            } else {
                Q::from(0u32)
            }
        })
        .fold(Q::from(0u32), |s, z| s + z)
}

/// t* (Imola et al. eq. 10, per pair) over Q is the definition's smallest t ≥ 1 with
/// f(t) ≤ δ: f(t*) ≤ δ, and f just below t* exceeds δ unless t* = 1; ∞ exactly when the mass
/// against zeros exceeds δ; over f64 the same to 10⁻⁹ and ∞ on the same rows.
#[test]
fn t_star_is_the_smallest_t_with_f_at_most_delta() {
    let mut rng = ChaCha8Rng::seed_from_u64(10);
    let mut seen = [0usize; 3]; // t* = 1, t* > 1, ∞
    for _ in 0..400 {
        let k = rng.gen_range(1..12);
        let raw: Vec<(i64, i64)> = (0..k)
            .map(|_| (rng.gen_range(0..5), rng.gen_range(0..5)))
            .collect();
        let (sa, sb) = (
            raw.iter().map(|x| x.0).sum::<i64>(),
            raw.iter().map(|x| x.1).sum::<i64>(),
        );
        if sa == 0 || sb == 0 {
            continue;
        }
        let a: Vec<Q> = raw.iter().map(|x| q(x.0, sa)).collect();
        let b: Vec<Q> = raw.iter().map(|x| q(x.1, sb)).collect();
        let delta = q(rng.gen_range(0..100), 1000);
        let exact = privacy::t_star(&a, &b, &delta);
        let fa: Vec<f64> = a.iter().map(mdp_audit::exact::f64_nearest).collect();
        let fb: Vec<f64> = b.iter().map(mdp_audit::exact::f64_nearest).collect();
        let float = privacy::t_star(&fa, &fb, &mdp_audit::exact::f64_nearest(&delta));
        match &exact {
            None => {
                let a0 = a
                    .iter()
                    .zip(&b)
                    .filter(|(_, y)| **y == 0u32)
                    .fold(Q::from(0u32), |s, (x, _)| s + x);
                assert!(a0 > delta);
                assert!(float.is_none());
                seen[2] += 1;
            }
            Some(t) => {
                assert!(*t >= 1u32);
                assert!(hockey_exact(&a, &b, t) <= delta, "f(t*) > δ");
                if *t > 1u32 {
                    let below = t * q(999_999_999, 1_000_000_000);
                    assert!(
                        hockey_exact(&a, &b, &below) > delta,
                        "t* is not the smallest"
                    );
                    seen[1] += 1;
                } else {
                    seen[0] += 1;
                }
                let f = float.expect("finite in f64 too");
                let tf = mdp_audit::exact::f64_nearest(t);
                assert!((f - tf).abs() <= 1e-9 * tf, "{f} vs {tf}");
            }
        }
    }
    assert!(seen.iter().all(|&c| c > 5), "{seen:?}");
}

/// The float hockey-stick value is the plain sum on every length (eight lanes and the
/// rest), and its proven upper bound is above the exact f(t) for every t ≥ t_lo, by at
/// most a few units of 10⁻¹⁵.
#[test]
fn hockey_and_its_proven_upper_bound() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    for len in [1usize, 7, 8, 9, 17, 40] {
        for _ in 0..20 {
            let raw_a: Vec<u32> = (0..len).map(|_| rng.gen_range(0..20)).collect();
            let raw_b: Vec<u32> = (0..len).map(|_| rng.gen_range(0..20)).collect();
            let (sa, sb) = (
                raw_a.iter().sum::<u32>().max(1),
                raw_b.iter().sum::<u32>().max(1),
            );
            let a: Vec<Q> = raw_a.iter().map(|&x| Q::from_unsigneds(x, sa)).collect();
            let b: Vec<Q> = raw_b.iter().map(|&x| Q::from_unsigneds(x, sb)).collect();
            let fa: Vec<f64> = a.iter().map(mdp_audit::exact::f64_nearest).collect();
            let fb: Vec<f64> = b.iter().map(mdp_audit::exact::f64_nearest).collect();
            for t in [1.0f64, 1.25, 2.0, 7.5] {
                let plain: f64 = fa.iter().zip(&fb).map(|(x, y)| (x - t * y).max(0.0)).sum();
                let h = privacy::hockey(&fa, &fb, t);
                assert!(
                    (h - plain).abs() <= 1e-14 * plain.max(1.0),
                    "len {len} t {t}"
                );
                let up = privacy::hockey_upper(&fa, &fb, t);
                let exact = hockey_exact(&a, &b, &mdp_audit::exact::q_from_f64(t));
                assert!(mdp_audit::exact::q_from_f64(up) >= exact, "len {len} t {t}");
                assert!(
                    up <= mdp_audit::exact::f64_nearest(&exact) + 1e-14,
                    "len {len} t {t}: {up}"
                );
                // Above t_lo the bound still holds (f is non-increasing).
                let later = hockey_exact(&a, &b, &mdp_audit::exact::q_from_f64(t * 1.5));
                assert!(mdp_audit::exact::q_from_f64(up) >= later);
            }
        }
    }
}

/// Two rows [a, 1 − a] and [b, 1 − b] with a > b at distance d: for t ≥ 1, f(t) = a − t·b, so
/// the (ε,δ) tight ε of the pair (0, 1) is ln((a − δ)/b)/d when δ < a − b, and 0 from
/// δ = a − b on; the pair (1, 0) needs ln((1 − b − δ)/(1 − a))/d. The larger is the tight
/// ε, on the filter's path (safe rows) and the exact one (an entry of 2⁻¹⁰⁸⁰).
#[test]
fn the_eps_delta_tight_eps_of_two_rows() {
    let d = q(1, 2);
    let s = space(MetricKind::Manhattan, &[q(0, 1), d.clone()]);
    for (a, b) in [(q(7, 10), q(2, 10)), (q(1, 3), one() >> 1080u64)] {
        let m = Matrix::new(2, 2, vec![a.clone(), one() - &a, b.clone(), one() - &b]);
        let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
        let r = float_ratios(&p);
        for delta in [
            q(0, 1),
            q(1, 100),
            q(1, 10),
            &a - &b,
            q(1, 1) - q(1, 1_000_000),
        ] {
            let (e, _) = tight_eps_delta(&p, &r, &delta).unwrap();
            let ln = |x: Q| {
                if x <= 1u32 {
                    Interval::point(Q::from(0u32))
                } else {
                    let l = functions::ln(&Interval::point(x), 200).unwrap();
                    Interval::new(&l.lo / &d, &l.hi / &d)
                }
            };
            let e01 = if delta >= &a - &b {
                Interval::point(Q::from(0u32))
            } else {
                ln((&a - &delta) / &b)
            };
            let rest = one() - &b - &delta;
            let e10 = if rest <= one() - &a {
                Interval::point(Q::from(0u32))
            } else {
                ln(rest / (one() - &a))
            };
            let want = if e01.lo >= e10.lo { e01 } else { e10 };
            let hi = e.hi.clone().expect("finite");
            assert!(
                e.lo <= want.hi && want.lo <= hi,
                "δ = {delta}: {e:?} vs {want:?}"
            );
            assert!(
                &hi - &e.lo <= &hi * q(1, 1_000_000_000) + q(1, 1_000_000_000_000),
                "{e:?}"
            );
        }
    }
    // At distance 0: rows that differ need f(1) ≤ δ (then 0), else ∞.
    let s0 = space(MetricKind::Manhattan, &[q(0, 1), q(0, 1)]);
    let m = Matrix::new(2, 2, vec![q(7, 10), q(3, 10), q(6, 10), q(4, 10)]);
    let p = Prepared::new(&s0, &m, None, DEFAULT_MAX_PREC).unwrap();
    let r = float_ratios(&p);
    let (e, _) = tight_eps_delta(&p, &r, &q(1, 20)).unwrap();
    assert!(e.hi.is_none());
    let (e, _) = tight_eps_delta(&p, &r, &q(1, 10)).unwrap();
    assert_eq!(e.hi, Some(Q::from(0u32)));
}

/// The ordered pairs in scope, counted over the whole n × n table (not its first rows): all
/// n(n − 1) pairs, or those within η; a check visits exactly these.
#[test]
fn every_ordered_pair_in_scope_is_counted_and_checked() {
    let s = space(
        MetricKind::Manhattan,
        &[q(0, 1), q(1, 1), q(3, 1), q(4, 1), q(9, 1)],
    );
    let n = 5;
    let m = Matrix::new(n, n, vec![q(1, 5); n * n]);
    let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
    assert_eq!(p.pairs_in_scope(), n * (n - 1));
    assert_eq!(decide(&p, &one()).pairs, n * (n - 1));
    // Within η = 1: (0, 1), (2, 3) and their reverses; η = 5 adds (0, 2), (0, 3), (1, 2),
    // (1, 3), (3, 4) and their reverses.
    for (eta, want) in [(q(1, 1), 4), (q(5, 1), 14)] {
        let p = Prepared::new(&s, &m, Some(&eta), DEFAULT_MAX_PREC).unwrap();
        assert_eq!(p.pairs_in_scope(), want, "η = {eta}");
        assert_eq!(decide(&p, &one()).pairs, want, "η = {eta}");
    }
}

/// A random 2–5-point manhattan space (duplicates of point 0 included) and a random matrix
/// of k/7 entries with zeros; in `unsafe_row` mode one row's first entry is 2⁻¹⁰⁸⁰ of the
/// row (flushed to 0 in f64: that row is not float-safe, every pair touching it must go
/// exact).
fn random_case(rng: &mut ChaCha8Rng, unsafe_row: bool) -> (Space, Matrix) {
    let n = rng.gen_range(2..=5);
    let pts: Vec<Q> = (0..n)
        .map(|i| {
            if i == 0 || rng.gen_bool(0.15) {
                q(0, 1)
            } else {
                q(rng.gen_range(-300..300), 100)
            }
        })
        .collect();
    let s = space(MetricKind::Manhattan, &pts);
    let mut data: Vec<Q> = (0..n * n)
        .map(|i| q(rng.gen_range(0..5) + (i % (n + 1) == 0) as i64, 7))
        .collect();
    if unsafe_row {
        let u = rng.gen_range(0..n);
        data[u * n] = one() >> 1080u64;
    }
    (s, Matrix::new(n, n, data))
}

/// The verification pass of the (ε,δ) search (`eps_delta_unproven`) at many T: every pair in
/// scope whose ε_uv(δ) ≤ T the exact arithmetic does not prove (t* against e^{T d} by
/// `ratio_within`, ∞ when t* is) is returned, and so is every pair touching an unsafe row
/// (soundness: a pair left out is taken as proven); pairs pure-private at T(1 − 10⁻⁶) on
/// safe rows are not (power); no pair outside the scope is. At T = 0, T below, at and above
/// the reference's tight ε, with and without a scope η, with δ = 0 among the δ.
#[test]
fn the_eps_delta_verification_returns_every_pair_it_cannot_prove() {
    let mut rng = ChaCha8Rng::seed_from_u64(55);
    let mut seen = [0usize; 3]; // must be returned, must not, either
    for case in 0..160 {
        let (s, m) = random_case(&mut rng, case % 4 == 3);
        let n = m.rows;
        let eta = q(rng.gen_range(50..400), 100);
        let within = (case % 3 == 0).then_some(&eta);
        let p = Prepared::new(&s, &m, within, DEFAULT_MAX_PREC).unwrap();
        let r = float_ratios(&p);
        let delta = if case % 5 == 0 {
            q(0, 1)
        } else {
            q(rng.gen_range(1..30), 100)
        };
        let tight = reference::tight_delta(&p, &delta).map(|e| e.lo);
        let mut ts = vec![q(0, 1), q(1, 1)];
        if let Some(e) = tight.filter(|e| *e > 0u32) {
            for f in [
                q(1, 2),
                q(999_999, 1_000_000),
                q(1_000_001, 1_000_000),
                q(2, 1),
            ] {
                ts.push(&e * &f);
            }
        }
        for t in &ts {
            let got = privacy::eps_delta_unproven(&p, &r, &delta, t);
            let t_less = t * q(999_999, 1_000_000);
            for u in 0..n {
                for v in 0..n {
                    let at = format!("case {case} T = {t} δ = {delta} pair ({u}, {v})");
                    let returned = got.contains(&(u, v));
                    if u == v || !p.scope[u * n + v] {
                        assert!(!returned, "{at}: out of scope");
                        continue;
                    }
                    let dist = |prec| s.enclosure(u, v, prec);
                    let zero = p.zero[u * n + v];
                    let proven = privacy::exact_t_star(&p, u, v, &delta).is_some_and(|ts| {
                        ratio_within(&Some(ts), zero, t, DEFAULT_MAX_PREC, dist) == Decision::Holds
                    });
                    if !(proven && p.safe[u] && p.safe[v]) {
                        assert!(returned, "{at}: not proven, not returned");
                        seen[0] += 1;
                        continue;
                    }
                    let (ratio, _) = privacy::exact_ratio(&p, u, v);
                    if *t > 0u32
                        && ratio_within(&ratio, zero, &t_less, DEFAULT_MAX_PREC, dist)
                            == Decision::Holds
                    {
                        assert!(!returned, "{at}: pure-private with a margin, returned");
                        seen[1] += 1;
                    } else {
                        seen[2] += 1;
                    }
                }
            }
        }
    }
    assert!(seen.iter().all(|&c| c > 20), "{seen:?}");
}

/// The (ε,δ) search's work on two rows [7/10, 3/10], [2/10, 8/10] at d = 1/2: the pair (0, 1)
/// leads on the pure estimate (2 ln 3.5) and its (ε,δ) value at δ = 1/100 (2 ln 3.45) is above
/// the other pair's pure ε (2 ln(8/3)), so the search stops after one pair, computes it
/// exactly, and the verification proves (1, 0) in floats: one pair searched, one exact. At
/// δ = a − b = 1/2, f(1) = δ on both pairs: both searched, both t* = 1, ε = 0, and at T = 0
/// neither f(1) ≤ δ is provable in floats: 1 + 2 exact. With row 1 not float-safe (2⁻¹⁰⁸⁰),
/// both pairs are returned by the verification: 1 + 2 exact, one searched.
#[test]
fn the_eps_delta_search_counts_its_work() {
    let s = space(MetricKind::Manhattan, &[q(0, 1), q(1, 2)]);
    for (b, delta, searched, exact) in [
        (q(2, 10), q(1, 100), 1, 1),
        (q(2, 10), q(1, 2), 2, 3),
        (one() >> 1080u64, q(1, 100), 1, 3),
    ] {
        let a = q(7, 10);
        let m = Matrix::new(2, 2, vec![a.clone(), one() - &a, b.clone(), one() - &b]);
        let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
        let r = float_ratios(&p);
        let (e, stats) = tight_eps_delta(&p, &r, &delta).unwrap();
        let at = format!("b = {b}, δ = {delta}: {e:?} {stats:?}");
        assert_eq!(stats.pairs_searched, searched, "{at}");
        assert_eq!(stats.exact_pairs, exact, "{at}");
        assert_eq!(e.pair, Some((0, 1)), "{at}");
    }
}

/// ln(t)/d to the target relative width 10⁻¹⁰ (a distance whose enclosure at precision p
/// has relative width 2^{−p/4} needs p = 256: the search stops at the first precision that
/// meets the target, not before, not after), the widest enclosure `max_prec` allows when it
/// cannot (not `None`; at `max_prec` itself, also between two doublings), 0 exactly at
/// t = 1, and a lower end ≥ 0 for t just above 1.
#[test]
fn eps_of_meets_its_width_or_stops_at_max_prec() {
    use std::cell::Cell;
    let asked = Cell::new(0u64);
    let dist = |prec: u64| {
        asked.set(asked.get().max(prec));
        let w = one() >> (prec / 4);
        Interval::new(one() - &w, one() + &w)
    };
    let t = q(3, 1);
    let e = privacy::eps_of(&t, DEFAULT_MAX_PREC, dist).unwrap();
    let target = Q::try_from(privacy::TARGET_REL_WIDTH).unwrap();
    assert!(e.relative_width().unwrap() <= target, "{e:?}");
    assert_eq!(asked.get(), 256);
    let ln3 = functions::ln(&Interval::point(t.clone()), 200).unwrap();
    assert!(e.lo <= ln3.hi && ln3.lo <= e.hi);
    // At most 128 bits: the width 2⁻³² cannot be met; the 128-bit enclosure is returned.
    asked.set(0);
    let e = privacy::eps_of(&t, 128, dist).unwrap();
    assert_eq!(asked.get(), 128);
    assert!(e.relative_width().unwrap() > target);
    assert!(e.lo <= ln3.hi && ln3.lo <= e.hi);
    // A limit between two steps of the doubling is still reached (64, then 100).
    asked.set(0);
    privacy::eps_of(&t, 100, dist).unwrap();
    assert_eq!(asked.get(), 100);
    assert_eq!(
        privacy::eps_of(&one(), 128, dist),
        Some(Interval::point(q(0, 1)))
    );
    let near_one = one() + (one() >> 300u64);
    let e = privacy::eps_of(&near_one, 128, |_| Interval::point(one())).unwrap();
    assert!(e.lo >= 0u32 && e.hi > 0u32, "{e:?}");
}

/// [`privacy::hockey_upper`] is above the worst true f(t) the error model allows for the
/// floats it is given: Σ_w max(0, ã_w(1 + ρ') − t·b̃_w(1 − ρ)), ρ' = ρ/(1 − ρ), exactly
/// (`spec/soundness.md` §5): on one entry against a zero (where the bound's factor on a is
/// all that stands above it), and on random rows.
#[test]
fn hockey_upper_covers_the_error_model() {
    let rho = mdp_audit::exact::q_from_f64(privacy::RHO);
    let rho1 = &rho / (one() - &rho);
    // The worst true rows: a scaled up by 1 + ρ', b (through t) down by 1 − ρ.
    let worst = |a: &[f64], b: &[f64], t: f64| -> Q {
        let up = one() + &rho1;
        let a: Vec<Q> = a
            .iter()
            .map(|&x| mdp_audit::exact::q_from_f64(x) * &up)
            .collect();
        let b: Vec<Q> = b.iter().map(|&y| mdp_audit::exact::q_from_f64(y)).collect();
        hockey_exact(&a, &b, &(mdp_audit::exact::q_from_f64(t) * (one() - &rho)))
    };
    let mut rng = ChaCha8Rng::seed_from_u64(12);
    let mut cases: Vec<(Vec<f64>, Vec<f64>)> =
        vec![(vec![1.0], vec![0.0]), (vec![0.75, 0.25], vec![0.0, 1.0])];
    for len in [1usize, 3, 9, 20] {
        for _ in 0..20 {
            let a: Vec<f64> = (0..len).map(|_| rng.gen_range(0.0..1.0)).collect();
            let b: Vec<f64> = (0..len)
                .map(|_| {
                    if rng.gen_bool(0.3) {
                        0.0
                    } else {
                        rng.gen_range(0.0..1.0)
                    }
                })
                .collect();
            cases.push((a, b));
        }
    }
    for (a, b) in &cases {
        for t in [1.0f64, 1.5, 3.0] {
            let up = mdp_audit::exact::q_from_f64(privacy::hockey_upper(a, b, t));
            assert!(up >= worst(a, b, t), "{a:?} {b:?} t = {t}");
        }
    }
}

/// ε of one pair from its exact ratio or t*: 0 at t = 1, ∞ (`None`) when t = ∞ or t > 1 at
/// distance 0, else ln(t)/d at the kernel's width.
fn pair_eps(p: &Prepared, u: usize, v: usize, t: Option<Q>) -> Option<Interval> {
    match t {
        None => None,
        Some(t) if t <= 1u32 => Some(Interval::point(q(0, 1))),
        Some(_) if p.zero[u * p.n + v] => None,
        Some(t) => Some(privacy::eps_of_ratio(p, u, v, &t).unwrap()),
    }
}

/// The (ε,δ) search on random float-safe matrices visits exactly the pairs its order
/// promises: every pair whose pure ε exceeds the tight (ε,δ) ε by 10⁻⁶ (the pure ε bounds the
/// (ε,δ) one, so none of them can be passed over), and none whose pure ε is below it by
/// 10⁻⁶ (they cannot hold the arg max); the enclosure's pair attains the tight ε; a pair is
/// computed exactly exactly when some pair has a positive pure ε.
#[test]
fn the_eps_delta_search_visits_the_pairs_its_order_promises() {
    let mut rng = ChaCha8Rng::seed_from_u64(56);
    let (up, down) = (q(1_000_001, 1_000_000), q(999_999, 1_000_000));
    let mut visited_some_not_all = 0;
    for case in 0..200 {
        let (s, m) = random_case(&mut rng, false);
        let n = m.rows;
        let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
        let r = float_ratios(&p);
        let delta = q(rng.gen_range(0..30), 100);
        let (e, stats) = tight_eps_delta(&p, &r, &delta).unwrap();
        let at = format!("case {case} δ = {delta}: {e:?} {stats:?}");
        let Some(tight) = reference::tight_delta(&p, &delta) else {
            assert!(e.hi.is_none(), "{at}");
            continue;
        };
        let (mut must, mut may, mut positive) = (0, 0, 0);
        for u in 0..n {
            for v in (0..n).filter(|&v| v != u) {
                let pure = pair_eps(&p, u, v, privacy::exact_ratio(&p, u, v).0);
                positive += pure.as_ref().is_none_or(|e| e.hi > 0u32) as usize;
                match pure {
                    None => must += 1,
                    Some(pure) if pure.lo > &tight.hi * &up => must += 1,
                    Some(pure) if pure.hi >= &tight.lo * &down => may += 1,
                    Some(_) => {}
                }
            }
        }
        assert!(stats.pairs_searched >= must, "{at}: {must} must");
        assert_eq!(stats.exact_pairs >= 1, positive > 0, "{at}");
        assert!(
            stats.pairs_searched <= must + may,
            "{at}: {must} + {may} may"
        );
        if stats.pairs_searched < n * (n - 1) {
            visited_some_not_all += 1;
        }
        let Some((u, v)) = e.pair else {
            // No pair has a positive pure ε: nothing was searched, ε = 0.
            assert_eq!((positive, e.hi.clone()), (0, Some(q(0, 1))), "{at}");
            continue;
        };
        let mine = pair_eps(&p, u, v, privacy::exact_t_star(&p, u, v, &delta)).unwrap();
        let hi = e.hi.clone().unwrap();
        assert!(
            mine.lo <= hi && e.lo <= mine.hi,
            "{at}: pair ({u}, {v}) at {mine:?}"
        );
        assert!(
            mine.hi >= &tight.lo * &down,
            "{at}: pair ({u}, {v}) below the max"
        );
    }
    assert!(visited_some_not_all >= 10, "{visited_some_not_all}");
}

/// The pure tight-ε search's work on random matrices (float-safe, and with one row that is
/// not), with and without a scope η: the float estimates only propose pairs, so a wrong
/// estimate or a pair outside the scope shows in the work, not in the ε. When some pair is
/// infinite, the first candidates find it (every pair touching an unsafe row is a candidate,
/// then the infinite ones) and nothing is verified; otherwise the search computes exactly
/// every pair touching an unsafe row, then the float-safe pairs whose ε is within 10⁻⁶ of the
/// largest of theirs (at most 16), and one verification pass proves the rest. The enclosure's
/// pair is an ordered pair in scope that attains the tight ε.
#[test]
fn the_pure_search_computes_the_pairs_its_estimates_promise() {
    let mut rng = ChaCha8Rng::seed_from_u64(57);
    let (up, down) = (q(1_000_000 - 5, 1_000_000), q(1_000_000 - 20, 1_000_000));
    let mut seen = [0usize; 3]; // infinite; finite, some pair left to the verification; unsafe
    for case in 0..300 {
        let unsafe_row = case % 3 == 2;
        let (s, m) = random_case(&mut rng, unsafe_row);
        let n = m.rows;
        let eta = (case % 2 == 1).then(|| q(rng.gen_range(0..400), 100));
        let p = Prepared::new(&s, &m, eta.as_ref(), DEFAULT_MAX_PREC).unwrap();
        let r = float_ratios(&p);
        let (e, stats) = tight_pure_eps(&p, &r).unwrap();
        let at = format!("case {case} η = {eta:?}: {e:?} {stats:?}");
        let mut touching_unsafe = 0;
        let mut safe_eps = Vec::new();
        for u in 0..n {
            for v in (0..n).filter(|&v| v != u && p.scope[u * n + v]) {
                if p.safe[u] && p.safe[v] {
                    safe_eps.push(pair_eps(&p, u, v, privacy::exact_ratio(&p, u, v).0));
                } else {
                    touching_unsafe += 1;
                }
            }
        }
        seen[2] += (touching_unsafe > 0) as usize;
        let Some(tight) = reference::tight_pure(&p) else {
            assert!(e.hi.is_none(), "{at}");
            let (u, v) = e.pair.expect("the infinite pair");
            assert!(u != v && p.scope[u * n + v], "{at}");
            assert!(
                pair_eps(&p, u, v, privacy::exact_ratio(&p, u, v).0).is_none(),
                "{at}"
            );
            assert_eq!(stats.passes, 0, "{at}");
            assert!(stats.exact_pairs >= 1, "{at}");
            assert!(stats.exact_pairs <= touching_unsafe + 1, "{at}");
            seen[0] += 1;
            continue;
        };
        assert_eq!(stats.passes, 1, "{at}");
        let safe_eps: Vec<Interval> = safe_eps.into_iter().map(|e| e.expect(&at)).collect();
        let (lo, hi) = safe_eps.iter().fold((q(0, 1), q(0, 1)), |(lo, hi), e| {
            (lo.max(e.lo.clone()), hi.max(e.hi.clone()))
        });
        let must = safe_eps.iter().filter(|e| e.lo >= &hi * &up).count();
        let may = safe_eps.iter().filter(|e| e.hi >= &lo * &down).count();
        let at = format!("{at}: {touching_unsafe} touching an unsafe row, {must} must, {may} may");
        assert!(stats.exact_pairs >= touching_unsafe + must.min(16), "{at}");
        assert!(stats.exact_pairs <= touching_unsafe + may.min(16), "{at}");
        if stats.exact_pairs < touching_unsafe + safe_eps.len() {
            seen[1] += 1;
        }
        match e.pair {
            None => assert_eq!((stats.exact_pairs, e.hi), (0, Some(q(0, 1))), "{at}"),
            Some((u, v)) => {
                assert!(u != v && p.scope[u * n + v], "{at}");
                let mine = pair_eps(&p, u, v, privacy::exact_ratio(&p, u, v).0).unwrap();
                assert!(
                    mine.hi >= tight.lo && e.lo <= mine.hi,
                    "{at}: ({u}, {v}) {mine:?}"
                );
            }
        }
    }
    assert!(seen.iter().all(|&s| s >= 20), "{seen:?}");
}

/// The pure search's work on planted cases, each of which a wrong estimate would send to a
/// second verification pass or to more exact pairs (the ε itself stays right: the
/// verification decides every pair). Rows [p, 1 − p] on manhattan points:
/// - points 0, 0, 1 with equal rows at distance 0: their estimate is 0, not ∞, so only the two
///   tied pairs at ln 2 are computed;
/// - the same with rows 0 and 1 apart by 2⁻⁷⁰ (equal in floats): the estimate of the pair at
///   distance 0 is 0, the verification finds R > 1 there and absorbs it: ∞, three exact;
/// - row 0 holding 2⁻¹⁰⁸⁰ (not float-safe) against row 1 = [0, 1] at distance 0: ∞ at the first
///   candidate, no verification;
/// - points 0, 2/5, 9/10 with p = 3/5, 9/20, 3/10: the arg max (1, 2) (ε = 2 ln(3/2)) leads
///   only on ln R / d (on ln R / (½ + 2d) the pair (0, 2) would, on ln R / (d²/2) the pair
///   (1, 0)), so one pair is computed and one pass proves the rest.
#[test]
fn the_pure_search_work_on_planted_cases() {
    let rows = |ps: &[Q]| -> Matrix {
        let data = ps.iter().flat_map(|p| [p.clone(), one() - p]).collect();
        Matrix::new(ps.len(), 2, data)
    };
    let tiny = one() >> 70u64;
    let half = q(1, 2);
    let cases = [
        (
            vec![q(0, 1), q(0, 1), one()],
            vec![half.clone(), half.clone(), q(1, 4)],
            2,
            1,
            true,
        ),
        (
            vec![q(0, 1), q(0, 1), one()],
            vec![half.clone(), &half + &tiny, q(1, 4)],
            3,
            1,
            false,
        ),
        (
            vec![q(0, 1), q(0, 1), one()],
            vec![one() >> 1080u64, q(0, 1), q(1, 4)],
            1,
            0,
            false,
        ),
        (
            vec![q(0, 1), q(2, 5), q(9, 10)],
            vec![q(3, 5), q(9, 20), q(3, 10)],
            1,
            1,
            true,
        ),
    ];
    for (xs, ps, exact, passes, finite) in cases {
        let s = space(MetricKind::Manhattan, &xs);
        let m = rows(&ps);
        let p = Prepared::new(&s, &m, None, DEFAULT_MAX_PREC).unwrap();
        let r = float_ratios(&p);
        let (e, stats) = tight_pure_eps(&p, &r).unwrap();
        let at = format!("points {xs:?}, p {ps:?}: {e:?}");
        assert_eq!(
            stats,
            privacy::PureStats {
                exact_pairs: exact,
                passes
            },
            "{at}"
        );
        assert_eq!(e.hi.is_some(), finite, "{at}");
        tight_agrees(&p);
    }
}
