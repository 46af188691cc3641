use super::*;
use crate::exact::{parse_rational, q_from_f64, Interval, Q};
use proptest::prelude::*;

fn q(s: &str) -> Q {
    parse_rational(s).unwrap()
}
fn pt(s: &str) -> Interval {
    Interval::point(q(s))
}
fn two_pow(e: i64) -> Q {
    Q::from(1u32) << e
}

/// The true value of a constant truncated to 40 decimals lies in [c, c + 1e-40].
fn digits40(s: &str) -> Interval {
    let c = q(s);
    Interval::new(c.clone(), c + q("1e-40"))
}

fn check_const(name: &str, f: impl Fn(u64) -> Interval, c40: &str) {
    let truth = digits40(c40);
    let mut last_width: Option<Q> = None;
    for prec in [32u64, 64, 128, 256] {
        let r = f(prec);
        // The truth lies in `truth` (width 10⁻⁴⁰ ≈ 2⁻¹³³), irrational, so an enclosure 2⁻⁶⁴
        // wide or wider contains all of `truth`; a finer one must at least meet it.
        let sound = if r.width() >= two_pow(-64) {
            truth.is_subset_of(&r)
        } else {
            r.intersect(&truth).is_some()
        };
        assert!(sound, "{name} @ {prec}: {r:?} misses the true value");
        let mag = if r.mag() > 1u32 {
            r.mag()
        } else {
            Q::from(1u32)
        };
        assert!(
            r.width() <= mag * two_pow(-(prec as i64)),
            "{name} @ {prec}: too wide"
        );
        if prec >= 160 {
            assert!(r.is_subset_of(&truth.widen(&q("1e-40"))), "{name} @ {prec}");
        }
        if let Some(lw) = last_width {
            // width at 2p is far below width at p: at least p/2 more bits
            assert!(
                r.width() * two_pow(prec as i64 / 4) <= lw,
                "{name}: width did not shrink"
            );
        }
        last_width = Some(r.width());
    }
}

#[test]
fn constants_to_40_digits() {
    check_const("pi", pi, "3.1415926535897932384626433832795028841971");
    check_const(
        "e",
        |p| exp(&pt("1"), p),
        "2.7182818284590452353602874713526624977572",
    );
    check_const(
        "ln2",
        |p| ln(&pt("2"), p).unwrap(),
        "0.6931471805599453094172321214581765680755",
    );
    check_const("ln2c", ln2, "0.6931471805599453094172321214581765680755");
    check_const(
        "ln10",
        |p| ln(&pt("10"), p).unwrap(),
        "2.3025850929940456840179914546843642076011",
    );
    check_const(
        "sqrt2",
        |p| sqrt(&pt("2"), p).unwrap(),
        "1.4142135623730950488016887242096980785696",
    );
    check_const(
        "pi/4",
        |p| atan(&pt("1"), p),
        "0.7853981633974483096156608458198757210492",
    );
    check_const(
        "pi/2",
        |p| asin(&pt("1"), p).unwrap(),
        "1.5707963267948966192313216916397514420985",
    );
    check_const(
        "pi/6",
        |p| asin(&pt("1/2"), p).unwrap(),
        "0.5235987755982988730771072305465838140328",
    );
    check_const(
        "1/e",
        |p| exp(&pt("-1"), p),
        "0.3678794411714423215955237701614608674458",
    );
    check_const(
        "sin1",
        |p| sin(&pt("1"), p),
        "0.8414709848078965066525023216302989996225",
    );
    check_const(
        "cos1",
        |p| cos(&pt("1"), p),
        "0.5403023058681397174009366074429766037323",
    );
    check_const(
        "atan1/2",
        |p| atan(&pt("1/2"), p),
        "0.4636476090008061162142562314612144020285",
    );
    check_const(
        "e^100/1e43",
        |p| exp(&pt("100"), p + 150).scale(&q("1e-43")),
        "2.6881171418161354484126255515800135873611",
    );
}

/// Exact values that must be hit exactly or contained.
#[test]
fn exact_and_special_values() {
    let zero = Interval::zero();
    let one = Interval::one();
    assert_eq!(exp(&zero, 64), one);
    assert_eq!(ln(&one, 64).unwrap(), zero);
    assert_eq!(sin(&zero, 64), zero);
    assert_eq!(cos(&zero, 64), one);
    assert_eq!(atan(&zero, 64), zero);
    assert_eq!(asin(&zero, 64).unwrap(), zero);
    assert_eq!(sqrt(&pt("9/4"), 64).unwrap(), pt("3/2"));
    assert_eq!(sqrt(&zero, 64).unwrap(), zero);
    assert_eq!(sin_pi(&q("0"), 64), zero);
    assert_eq!(sin_pi(&q("1"), 64), zero);
    assert_eq!(sin_pi(&q("-3"), 64), zero);
    assert_eq!(sin_pi(&q("1/2"), 64), one);
    assert_eq!(cos_pi(&q("1/2"), 64), zero);
    assert_eq!(cos_pi(&q("1"), 64), one.neg());
    assert!(sin_pi(&q("1/6"), 64).contains(&q("1/2")));
    assert!(cos_pi(&q("1/3"), 64).contains(&q("1/2")));
    assert!(cos_pi(&q("-2/3"), 64).contains(&q("-1/2")));
    assert!(ln(&zero, 64).is_none());
    assert!(ln(&Interval::new(q("-1"), q("2")), 64).is_none());
    assert!(sqrt(&pt("-1/10"), 64).is_none());
    assert!(asin(&pt("11/10"), 64).is_none());
    assert!(exp_checked(&pt("3000000"), 64).is_none());
    // The largest argument accepted is 2^21 itself.
    let top = exp_checked(&pt("2097152"), 16).unwrap();
    assert!(top.lo > 0u32 && exp_checked(&pt("2097152.001"), 16).is_none());
    assert!(
        asin(&pt("-1"), 64)
            .unwrap()
            .contains(&(-(pi(200).lo >> 1u64)))
            || {
                let a = asin(&pt("-1"), 64).unwrap();
                a.intersect(&pi(200).scale(&q("-1/2"))).is_some()
            }
    );
}

/// libm value within the enclosure widened by 4 ulps of the value.
fn near_libm(r: &Interval, v: f64) -> bool {
    let u = (v.abs() * f64::EPSILON).max(f64::MIN_POSITIVE);
    let e = q_from_f64(4.0 * u);
    r.widen(&e).contains(&q_from_f64(v))
}

#[test]
fn against_libm_grid() {
    let xs = [
        -30.5, -7.25, -1.0, -0.3, -1e-5, 1e-9, 0.1, 0.5, 0.75, 1.0, 1.5, 2.0, 3.25, 6.2, 10.0,
        100.0, 700.0,
    ];
    for &x in &xs {
        let qx = Interval::point(q_from_f64(x));
        assert!(near_libm(&exp(&qx, 64), x.exp()), "exp {x}");
        assert!(near_libm(&sin(&qx, 64), x.sin()), "sin {x}");
        assert!(near_libm(&cos(&qx, 64), x.cos()), "cos {x}");
        assert!(near_libm(&atan(&qx, 64), x.atan()), "atan {x}");
        if x > 0.0 {
            assert!(near_libm(&ln(&qx, 64).unwrap(), x.ln()), "ln {x}");
            assert!(near_libm(&sqrt(&qx, 64).unwrap(), x.sqrt()), "sqrt {x}");
        }
        if x.abs() <= 1.0 {
            assert!(near_libm(&asin(&qx, 64).unwrap(), x.asin()), "asin {x}");
        }
    }
}

#[test]
fn width_contract_point_inputs() {
    for prec in [16u64, 53, 64, 100, 200] {
        for s in [
            "1/3",
            "-5/7",
            "12345/100",
            "1e-20",
            "-700.25",
            "3/1000000",
            "999999/1000000",
        ] {
            let x = pt(s);
            let tol = |r: &Interval| {
                let m = r.mag();
                let m = if m > 1u32 { m } else { Q::from(1u32) };
                r.width() <= m * two_pow(-(prec as i64))
            };
            assert!(tol(&exp(&x, prec)), "exp {s} {prec}");
            assert!(tol(&sin(&x, prec)), "sin {s} {prec}");
            assert!(tol(&cos(&x, prec)), "cos {s} {prec}");
            assert!(tol(&atan(&x, prec)), "atan {s} {prec}");
            if x.lo > 0u32 {
                assert!(tol(&ln(&x, prec).unwrap()), "ln {s} {prec}");
                assert!(tol(&sqrt(&x, prec).unwrap()), "sqrt {s} {prec}");
            }
            if x.mag() <= 1u32 {
                assert!(tol(&asin(&x, prec).unwrap()), "asin {s} {prec}");
            }
        }
    }
}

#[test]
fn large_arguments() {
    // exp near the limit: e^(2^21) = 2^(2^21·log2 e); check the exponent and the relation
    // exp(a)·exp(−a) ∋ 1.
    let a = pt("1000000.5");
    let e1 = exp(&a, 64);
    let e2 = exp(&a.neg(), 64);
    assert!(e1.mul(&e2).contains(&Q::from(1u32)));
    // The width contract holds there too: k ≈ 1.44·10⁶ multiples of ln 2 are subtracted, so
    // ln 2 must be known to k's 21 bits more than the grid.
    for e in [&e1, &e2] {
        assert!(
            e.width() <= e.mag() * two_pow(-64),
            "exp(±1000000.5) too wide"
        );
    }
    let l = ln(&e1, 64).unwrap();
    assert!(l.contains(&a.lo));
    // ln of huge and tiny numbers
    let big = Interval::point(Q::from(10u32) << 3000u64);
    let lb = ln(&big, 64).unwrap();
    let expect = ln(&pt("10"), 80)
        .unwrap()
        .add(&ln2(80).scale(&Q::from(3000u32)));
    assert!(lb.intersect(&expect).is_some());
    let tiny = Interval::point(q("1e-300"));
    let lt = ln(&tiny, 64).unwrap();
    assert!(lt
        .intersect(&ln(&pt("10"), 80).unwrap().scale(&Q::from(-300i32)))
        .is_some());
    // sin of a large argument: sin(10^20) = -0.6452512852657808...
    let s = sin(&pt("1e20"), 64);
    assert!(
        s.intersect(&Interval::new(
            q("-0.64525128526578085"),
            q("-0.64525128526578084")
        ))
        .is_some(),
        "{s:?}"
    );
    let s = sin(&pt("1e60"), 64);
    assert!(near_libm(&s, (1e60f64).sin()) || s.width() < q("1e-18"));
    // atan of large and tiny
    assert!(atan(&pt("1e30"), 64)
        .intersect(&pi(200).scale(&q("1/2")).add_q(&q("-1e-30")))
        .is_some());
    assert!(
        atan(&pt("1e-30"), 64).contains(&q("1e-30")) || atan(&pt("1e-30"), 64).width() < q("1e-19")
    );
    // asin very close to 1
    let t = Interval::point(Q::from(1u32) - two_pow(-200));
    let r = asin(&t, 128).unwrap();
    let half_pi = pi(300).scale(&q("1/2"));
    // asin(1 − ε) = π/2 − √(2ε) + O(ε^1.5), √(2ε) = 2^-99.5
    assert!(r.hi < half_pi.lo && r.lo > &half_pi.lo - two_pow(-99));
}

#[test]
fn identities() {
    for s in ["1/7", "2", "-3/2", "22/7", "-100/3", "0.001"] {
        let x = pt(s);
        let sc = sin(&x, 80).sqr().add(&cos(&x, 80).sqr());
        assert!(sc.contains(&Q::from(1u32)), "sin²+cos² {s}");
        let e = exp(&x, 80);
        assert!(ln(&e, 80).unwrap().contains(&x.lo), "ln exp {s}");
        let t = atan(&x, 80);
        // tan(atan x) = x: sin/cos of the enclosure (interval args)
        let back = sin(&t, 80).div(&cos(&t, 80)).unwrap();
        assert!(back.contains(&x.lo), "tan atan {s}");
    }
    for s in ["0.3", "0.99", "1/3", "0.999999"] {
        let x = pt(s);
        let a = asin(&x, 80).unwrap();
        assert!(sin(&a, 80).contains(&x.lo), "sin asin {s}");
    }
}

#[test]
fn interval_inputs_contain_point_values() {
    let x = Interval::new(q("-1/3"), q("5/2"));
    let r = exp(&x, 64);
    for s in ["-1/3", "5/2", "1.08333333"] {
        let p = exp(&pt(s), 64);
        assert!(p.is_subset_of(&r), "exp {s}");
    }
    let r = ln(&Interval::new(q("1/10"), q("30")), 64).unwrap();
    for s in ["1/10", "30", "1", "2.5"] {
        assert!(ln(&pt(s), 64).unwrap().is_subset_of(&r));
    }
    // sin over [0.5, 2]: contains sin at samples (the max 1 at π/2 included)
    let x = Interval::new(q("0.5"), q("2"));
    let r = sin(&x, 64);
    assert!(r.contains(&Q::from(1u32)));
    for k in 0..=30 {
        let t = q("0.5") + Q::from_unsigneds(k as u32, 20u32);
        let p = sin(&Interval::point(t.clone()), 100);
        assert!(p.is_subset_of(&r), "sin at {t}");
        let c = cos(&Interval::point(t.clone()), 100);
        assert!(c.is_subset_of(&cos(&x, 64)), "cos at {t}");
    }
    let r = atan(&Interval::new(q("-20"), q("0.1")), 64);
    assert!(atan(&pt("-3"), 64).is_subset_of(&r));
    let r = asin(&Interval::new(q("0"), q("1")), 64).unwrap();
    assert!(asin(&pt("0.7"), 64).unwrap().is_subset_of(&r));
    let r = sqrt(&Interval::new(q("0"), q("2")), 64).unwrap();
    assert!(r.contains(&Q::from(1u32)) && r.lo == 0u32);
}

#[test]
fn haversine_cities() {
    let r = q("6371.0088");
    let d = haversine(
        &q("41.9028"),
        &q("12.4964"),
        &q("48.8566"),
        &q("2.3522"),
        &r,
        64,
    );
    assert!(
        near_libm(&d, 1105.2816753920786)
            || d.intersect(&Interval::new(q("1105.2816753920"), q("1105.2816753921")))
                .is_some(),
        "{d:?}"
    );
    assert!(d.width() < q("1e-15"));
    let d = haversine(
        &q("40.7128"),
        &q("-74.0060"),
        &q("51.5074"),
        &q("-0.1278"),
        &r,
        64,
    );
    assert!(
        d.intersect(&Interval::new(q("5570.22987365"), q("5570.22987366")))
            .is_some(),
        "{d:?}"
    );
    // symmetric
    let d2 = haversine(
        &q("51.5074"),
        &q("-0.1278"),
        &q("40.7128"),
        &q("-74.0060"),
        &r,
        64,
    );
    assert!(d.intersect(&d2).is_some());
    // coincident points: exactly 0
    let z = haversine(
        &q("41.9028"),
        &q("12.4964"),
        &q("41.9028"),
        &q("12.4964"),
        &r,
        64,
    );
    assert_eq!(z, Interval::zero());
    // a sphere of radius 0: every distance is 0
    let z = haversine(&q("0"), &q("0"), &q("10"), &q("20"), &Q::from(0u32), 64);
    assert_eq!(z, Interval::zero());
    // same point with longitudes differing by 360
    let z = haversine(&q("10"), &q("-170"), &q("10"), &q("190"), &r, 64);
    assert!(z.contains(&Q::from(0u32)) && z.width() < q("1e-15"));
    // antipodal: π·R
    let d = haversine(&q("0"), &q("0"), &q("0"), &q("180"), &r, 64);
    let pr = pi(128).scale(&r);
    assert!(d.intersect(&pr).is_some(), "{d:?}");
    assert!(d.width() <= d.mag() * two_pow(-64));
    let d = haversine(&q("90"), &q("0"), &q("-90"), &q("33"), &r, 64);
    assert!(d.intersect(&pr).is_some());
    // tiny distance: 1e-9 degrees of latitude = R·π·1e-9/180
    let d = haversine(&q("0"), &q("0"), &q("1e-9"), &q("0"), &r, 64);
    let t = pi(128).scale(&(q("1e-9") / Q::from(180u32) * &r));
    assert!(d.intersect(&t).is_some(), "{d:?}");
    assert!(d.width() <= two_pow(-64));
}

#[test]
fn chord_vectors() {
    let v = chord_unit_vector(&q("41.9028"), &q("12.4964"), 64);
    let n = v[0].sqr().add(&v[1].sqr()).add(&v[2].sqr());
    assert!(n.contains(&Q::from(1u32)));
    let w = chord_unit_vector(&q("48.8566"), &q("2.3522"), 64);
    let c2 = v[0]
        .sub(&w[0])
        .sqr()
        .add(&v[1].sub(&w[1]).sqr())
        .add(&v[2].sub(&w[2]).sqr());
    // |p1 − p2|² = 4h = 4 sin²(θ/2), θ = d/R
    let r = q("6371.0088");
    let d = haversine(
        &q("41.9028"),
        &q("12.4964"),
        &q("48.8566"),
        &q("2.3522"),
        &r,
        64,
    );
    let half = d.scale(&(Q::from(1u32) / (&r << 1u64)));
    let s = sin(&half, 64).sqr().scale(&Q::from(4u32));
    assert!(c2.intersect(&s).is_some());
    // Each component is the value to the precision asked: it contains the one at 300 bits
    // and is no wider than 2^-64.
    for (lat, lon) in [
        ("41.9028", "12.4964"),
        ("-33.8688", "151.2093"),
        ("0.5", "-179.5"),
    ] {
        let fine = chord_unit_vector(&q(lat), &q(lon), 300);
        for (c, f) in chord_unit_vector(&q(lat), &q(lon), 64).iter().zip(&fine) {
            assert!(
                f.is_subset_of(c) && c.width() <= two_pow(-64),
                "{lat} {lon}: {c:?}"
            );
        }
    }
    assert_eq!(chord_unit_vector(&q("90"), &q("0"), 64)[2], Interval::one());
    assert_eq!(chord_unit_vector(&q("0"), &q("0"), 64)[0], Interval::one());
}

/// Arguments at reduction boundaries and other awkward places: every result must contain a
/// much finer enclosure of the same value (the truth lies in the fine one and is no point of
/// the coarse grid, so a coarse enclosure that leaves out part of it misses the truth by at
/// most 2⁻²⁵⁰: the test sees a lost remainder term of a single ulp) and meet the width
/// contract.
#[test]
fn awkward_arguments() {
    let l2 = ln2(300);
    let p = pi(300);
    let mut args: Vec<Q> = vec![];
    for k in [-40i64, -3, -1, 0, 1, 2, 7, 1000] {
        // (k + 1/2)·ln 2 and k·π/4 ± tiny, exactly representable nearby rationals
        let m = Q::from(k) + Q::from_signeds(1, 2);
        args.push(&l2.lo * &m);
        args.push(&p.lo * Q::from(k) / Q::from(4u32));
        args.push(&p.hi * Q::from(k) / Q::from(4u32) + two_pow(-70));
    }
    args.push(Q::from(1u32) - two_pow(-80)); // ln near 1, asin near 1
    args.push(Q::from(1u32) + two_pow(-80));
    args.push(q("1.41421356237309504880168872420969807856967187537694")); // √2 split
    args.push(q("0.70710678118654752440084436210484903928483593768847"));
    args.push(q(
        "123456789012345678901234567890/987654321098765432109876543211",
    ));
    args.push(two_pow(-300));
    for x in args {
        let xi = Interval::point(x.clone());
        let within = |a: &Interval, b: &Interval, prec: u64, name: &str| {
            assert!(
                b.is_subset_of(a),
                "{name}({x}) misses the value {b:?}: {a:?}"
            );
            let m = if a.mag() > 1u32 {
                a.mag()
            } else {
                Q::from(1u32)
            };
            assert!(
                a.width() <= m * two_pow(-(prec as i64)),
                "{name}({x}) too wide"
            );
        };
        within(&exp(&xi, 60), &exp(&xi, 250), 60, "exp");
        within(&sin(&xi, 60), &sin(&xi, 250), 60, "sin");
        within(&cos(&xi, 60), &cos(&xi, 250), 60, "cos");
        within(&atan(&xi, 60), &atan(&xi, 250), 60, "atan");
        within(&sin_pi(&x, 60), &sin_pi(&x, 250), 60, "sin_pi");
        within(&cos_pi(&x, 60), &cos_pi(&x, 250), 60, "cos_pi");
        if x > 0u32 {
            within(&ln(&xi, 60).unwrap(), &ln(&xi, 250).unwrap(), 60, "ln");
            within(
                &sqrt(&xi, 60).unwrap(),
                &sqrt(&xi, 250).unwrap(),
                60,
                "sqrt",
            );
        }
        if x.abs() <= 1u32 {
            within(
                &asin(&xi, 60).unwrap(),
                &asin(&xi, 250).unwrap(),
                60,
                "asin",
            );
        }
    }
    // near-antipodal and tiny-distance haversine meet the contract too
    let r = q("6371.0088");
    for (a, b, c, d) in [
        ("0", "0", "0", "179.9999999"),
        // 10⁻¹¹ degrees from antipodal: 1 − h ≈ 2⁻⁸⁷, whose square root the first working
        // precision cannot give to the width asked, so the refinement loop runs.
        ("0", "0", "0", "179.99999999999"),
        ("-30", "0", "30.00000000001", "180"),
        ("0", "0", "1e-12", "0"),
        ("89.9999", "10", "-89.9999", "-170"),
        ("45", "45", "45.0000000001", "45"),
    ] {
        let (a, b, c, d) = (q(a), q(b), q(c), q(d));
        let x = haversine(&a, &b, &c, &d, &r, 60);
        let y = haversine(&a, &b, &c, &d, &r, 200);
        assert!(y.is_subset_of(&x), "{x:?} misses {y:?}");
        let m = if x.mag() > 1u32 {
            x.mag()
        } else {
            Q::from(1u32)
        };
        assert!(x.width() <= m * two_pow(-60));
    }
}

/// `sin_pi` and `cos_pi` at 3202 rationals in [−2, 2] (every quadrant; the exact
/// reduction's split points k/2 among them and beside them) contain their values at 300 bits
/// and meet the width.
#[test]
fn sin_pi_and_cos_pi_on_a_grid_of_rationals() {
    for (i, off) in (-800i64..=800).flat_map(|i| [(i, 0), (i, 1)]) {
        let x = Q::from_signeds(i, 400) + Q::from_signeds(off, 7919);
        for (name, f) in [
            ("sin_pi", sin_pi as fn(&Q, u64) -> Interval),
            ("cos_pi", cos_pi),
        ] {
            let (got, fine) = (f(&x, 40), f(&x, 300));
            assert!(
                fine.is_subset_of(&got),
                "{name}({x}) = {got:?} misses {fine:?}"
            );
            assert!(got.width() <= two_pow(-40), "{name}({x}) too wide");
        }
    }
}

#[test]
fn refine_doubles() {
    let mut seen = vec![];
    let r = refine(16, 300, |p| {
        seen.push(p);
        (p >= 100).then_some(p)
    });
    assert_eq!(r, Some(128));
    assert_eq!(seen, vec![16, 32, 64, 128]);
    let mut seen = vec![];
    let r: Option<u64> = refine(16, 100, |p| {
        seen.push(p);
        None
    });
    assert_eq!(r, None);
    assert_eq!(seen, vec![16, 32, 64, 100]);
}

fn arb_rat(lo: i64, hi: i64) -> impl Strategy<Value = Q> {
    (lo..hi, 1i64..1_000_000).prop_map(|(a, b)| Q::from_signeds(a, b))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// The enclosure at 48 bits contains the one at 160 bits (the truth lies in the finer
    /// one and is no point of the coarse grid, see `awkward_arguments`) and is wider; libm
    /// within 4 ulps.
    #[test]
    fn consistent_across_precisions(x in arb_rat(-700_000_000, 700_000_000)) {
        // use the double nearest to x, so libm and we see the same argument
        let xf = crate::exact::f64_nearest(&x);
        let x = q_from_f64(xf);
        let xi = Interval::point(x.clone());
        if let (Some(a), Some(b)) = (exp_checked(&xi, 48), exp_checked(&xi, 160)) {
            prop_assert!(b.is_subset_of(&a) && b.width() < a.width());
        } else {
            prop_assert!(xf.abs() > EXP_MAX_ARG as f64);
        }
        let a = exp_checked(&xi, 48).unwrap_or_else(|| Interval::point(Q::from(0u32)));
        prop_assert!(xf.abs() > 700.0 || near_libm(&a, xf.exp()));
        let (a, b) = (sin(&xi, 48), sin(&xi, 160));
        prop_assert!(b.is_subset_of(&a), "{b:?} ⊄ {a:?}");
        prop_assert!(near_libm(&b, xf.sin()));
        prop_assert!(near_libm(&cos(&xi, 160), xf.cos()));
        prop_assert!(near_libm(&atan(&xi, 160), xf.atan()));
        let (a, b) = (cos(&xi, 48), cos(&xi, 160));
        prop_assert!(b.is_subset_of(&a), "{b:?} ⊄ {a:?}");
        let (a, b) = (atan(&xi, 48), atan(&xi, 160));
        prop_assert!(b.is_subset_of(&a), "{b:?} ⊄ {a:?}");
        if x > 0u32 {
            let (a, b) = (ln(&xi, 48).unwrap(), ln(&xi, 160).unwrap());
            prop_assert!(b.is_subset_of(&a), "{b:?} ⊄ {a:?}");
            prop_assert!(near_libm(&a, xf.ln()));
            let (a, b) = (sqrt(&xi, 48).unwrap(), sqrt(&xi, 160).unwrap());
            prop_assert!(b.is_subset_of(&a), "{b:?} ⊄ {a:?}");
        }
        let y = q_from_f64(xf / 700.0);
        if y.abs() <= 1u32 {
            let yi = Interval::point(y.clone());
            let (a, b) = (asin(&yi, 48).unwrap(), asin(&yi, 160).unwrap());
            prop_assert!(b.is_subset_of(&a), "{b:?} ⊄ {a:?}");
            prop_assert!(near_libm(&b, crate::exact::f64_nearest(&y).asin()) || (1.0 - crate::exact::f64_nearest(&y).abs()) < 1e-6);
        }
    }

    /// Interval inputs: the result contains fine enclosures at random points of the interval
    /// (its ends included).
    #[test]
    fn interval_inclusion(a in arb_rat(-8_000_000, 8_000_000), b in arb_rat(-8_000_000, 8_000_000), t in 0u32..=16) {
        let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
        let x = Interval::new(lo.clone(), hi.clone());
        let p = &lo + (&hi - &lo) * Q::from_unsigneds(t, 16u32);
        let pi_ = Interval::point(p.clone());
        // exp is enclosed only for |x| ≤ EXP_MAX_ARG (2^21; `exp` panics past it by design):
        // an interval reaching past it has no enclosure to compare (seen: [2.77, 6.8·10⁶]).
        if let (Some(wide), Some(fine)) = (exp_checked(&x, 40), exp_checked(&pi_, 120)) {
            prop_assert!(fine.is_subset_of(&wide), "exp {fine:?} ⊄ {wide:?}");
        } else {
            prop_assert!(lo.abs() > Q::from(EXP_MAX_ARG) || hi.abs() > Q::from(EXP_MAX_ARG));
        }
        prop_assert!(sin(&pi_, 120).is_subset_of(&sin(&x, 40)));
        prop_assert!(cos(&pi_, 120).is_subset_of(&cos(&x, 40)));
        // sin and cos of an interval: the midpoint's enclosure (≤ 2^-40) widened by the
        // radius on each side, rounded outward on the grid 2^-50.
        let most = x.width() + two_pow(-40) + two_pow(-49);
        prop_assert!(sin(&x, 40).width() <= most && cos(&x, 40).width() <= most);
        prop_assert!(atan(&pi_, 120).is_subset_of(&atan(&x, 40)));
    }

    #[test]
    fn haversine_consistent(la1 in -90i64..=90, lo1 in -180i64..=180, la2 in -90i64..=90, lo2 in -180i64..=180, f in 0i64..1000) {
        let fr = Q::from_signeds(f, 1000);
        let (a, b, c, d) = (Q::from(la1) - &fr, Q::from(lo1) + &fr, Q::from(la2), Q::from(lo2));
        let r = q("6371.0088");
        let d1 = haversine(&a, &b, &c, &d, &r, 40);
        let d2 = haversine(&a, &b, &c, &d, &r, 120);
        prop_assert!(d2.is_subset_of(&d1), "{d2:?} ⊄ {d1:?}");
        let m = if d1.mag() > 1u32 { d1.mag() } else { Q::from(1u32) };
        prop_assert!(d1.width() <= m * two_pow(-40));
        let (fa, fb, fc, fd) = (crate::exact::f64_nearest(&a).to_radians(), crate::exact::f64_nearest(&b).to_radians(), (la2 as f64).to_radians(), (lo2 as f64).to_radians());
        let h = ((fc - fa) / 2.0).sin().powi(2) + fa.cos() * fc.cos() * ((fd - fb) / 2.0).sin().powi(2);
        let df = 2.0 * 6371.0088 * h.sqrt().min(1.0).asin();
        let tol = q_from_f64(1e-6);
        prop_assert!(d2.widen(&tol).contains(&q_from_f64(df)), "{d2:?} vs {df}");
    }
}

/// Timing report (run with `cargo test --release -- --ignored timings --nocapture`).
#[test]
#[ignore]
fn timings() {
    use std::time::Instant;
    fn bench(name: &str, n: u32, mut f: impl FnMut()) {
        f();
        let t = Instant::now();
        for _ in 0..n {
            f();
        }
        println!(
            "{name:32} {:8.2} µs",
            t.elapsed().as_secs_f64() * 1e6 / n as f64
        );
    }
    let x = pt("0.7391");
    let y = pt("-12.345");
    let r = q("6371.0088");
    for prec in [53u64, 64, 128, 256, 1024] {
        let n = if prec > 500 { 50 } else { 2000 };
        bench(&format!("exp(0.7391) @{prec}"), n, || {
            std::hint::black_box(exp(&x, prec));
        });
        bench(&format!("exp(-12.345) @{prec}"), n, || {
            std::hint::black_box(exp(&y, prec));
        });
        bench(&format!("ln(0.7391) @{prec}"), n, || {
            std::hint::black_box(ln(&x, prec));
        });
        bench(&format!("ln(12345/1000) @{prec}"), n, || {
            std::hint::black_box(ln(&pt("12.345"), prec));
        });
        bench(&format!("sqrt(0.7391) @{prec}"), n, || {
            std::hint::black_box(sqrt(&x, prec));
        });
        bench(&format!("sin(0.7391) @{prec}"), n, || {
            std::hint::black_box(sin(&x, prec));
        });
        bench(&format!("cos(-12.345) @{prec}"), n, || {
            std::hint::black_box(cos(&y, prec));
        });
        bench(&format!("atan(0.7391) @{prec}"), n, || {
            std::hint::black_box(atan(&x, prec));
        });
        bench(&format!("asin(0.7391) @{prec}"), n, || {
            std::hint::black_box(asin(&x, prec));
        });
        bench(&format!("haversine Rome-Paris @{prec}"), n, || {
            std::hint::black_box(haversine(
                &q("41.9028"),
                &q("12.4964"),
                &q("48.8566"),
                &q("2.3522"),
                &r,
                prec,
            ));
        });
    }
    bench("exp(1e6) @64", 20, || {
        std::hint::black_box(exp(&pt("1000000"), 64));
    });
}
