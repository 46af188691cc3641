//! The structured audits (edge-only for graphs, box pairs for coordinate metrics) against
//! the exhaustive audit on the same exact matrices (`spec/soundness.md` §7): the same
//! verdict at every ε tried, and overlapping tight-ε enclosures (both are proofs, so they
//! must intersect). Instances: random points and graphs, smooth (exponential-like) and
//! random matrices, zeros, duplicate points, a scope η, and violations planted next to the
//! boundary (a few ulps either side of H\[u\]\[w\] = e^{ε·d}·H\[v\]\[w\]) at pairs across the
//! whole tree.

use mdp_audit::dense::{Dense, Normalized};
use mdp_audit::exact::{functions, Interval, Q};
use mdp_audit::metric::{MetricKind, Space};
use mdp_audit::privacy::{self, Decision, EpsEnclosure, Prepared};
use mdp_audit::structured::edges::{Edges, Graph};
use mdp_audit::structured::tree::Tree;
use mdp_audit::structured::{tight_eps, Part, Structure};
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const PREC: u64 = 4096;
const BUDGET: u64 = u64::MAX;

fn exhaustive(
    space: &Space,
    m: &Dense,
    eps: &Q,
    within: Option<&Q>,
) -> (Decision, Result<EpsEnclosure, (usize, usize)>) {
    let matrix = m.to_matrix();
    let p = Prepared::new(space, &matrix, within, PREC).expect("scope decidable");
    let ratios = privacy::float_ratios(&p);
    let d = privacy::check_pure(&p, &ratios, eps).decision;
    (d, privacy::tight_pure_eps(&p, &ratios).map(|(e, _)| e))
}

fn structured(s: &dyn Structure, eps: &Q) -> (Decision, Option<EpsEnclosure>) {
    let out = s.check(eps, false).expect("no budget");
    let d = if !out.fails.is_empty() {
        Decision::Fails
    } else if out.undecided.is_some() {
        Decision::Undecided
    } else {
        Decision::Holds
    };
    (d, tight_eps(s).ok().map(|x| x.0))
}

fn overlap(a: &EpsEnclosure, b: &EpsEnclosure) -> bool {
    match (&a.hi, &b.hi) {
        (None, None) => true,
        (Some(ah), Some(bh)) => a.lo <= *bh && b.lo <= *ah,
        _ => false,
    }
}

fn agree(space: &Space, s: &dyn Structure, m: &Dense, eps: &Q, within: Option<&Q>) {
    let (de, te) = exhaustive(space, m, eps, within);
    let (ds, ts) = structured(s, eps);
    assert_eq!(de, ds, "verdict at ε = {eps}");
    let (te, ts) = (
        te.expect("exhaustive tight ε"),
        ts.expect("structured tight ε"),
    );
    assert!(
        overlap(&te, &ts),
        "tight ε: exhaustive {:?} structured {:?}",
        te.to_f64(),
        ts.to_f64()
    );
}

fn kind_of(i: u8) -> MetricKind {
    [
        MetricKind::Euclidean,
        MetricKind::Manhattan,
        MetricKind::Chebyshev,
        MetricKind::Haversine,
    ][i as usize % 4]
}

/// n random points of metric `kind`: coordinates in [0, 10·`scale`) on a grid of 10⁻³·`scale`
/// (`scale` a power of ten; latitude and longitude for haversine, where it is ignored).
fn random_space(rng: &mut ChaCha8Rng, kind: MetricKind, n: usize, dups: bool, scale: i32) -> Space {
    let dim = if kind == MetricKind::Haversine {
        2
    } else {
        rng.gen_range(1..=3)
    };
    let mut pts: Vec<Vec<Q>> = Vec::with_capacity(n);
    for i in 0..n {
        if dups && i > 0 && rng.gen_bool(0.1) {
            let j = rng.gen_range(0..i);
            pts.push(pts[j].clone());
            continue;
        }
        let p = (0..dim)
            .map(|c| {
                let x: f64 = if kind == MetricKind::Haversine {
                    if c == 0 {
                        rng.gen_range(-80.0..80.0)
                    } else {
                        rng.gen_range(-180.0..180.0)
                    }
                } else {
                    rng.gen_range(0.0..10.0)
                };
                let q = Q::from_signeds((x * 1000.0).round() as i64, 1000);
                match kind == MetricKind::Haversine {
                    true => q,
                    false if scale >= 0 => q * Q::from_unsigneds(10u64.pow(scale as u32), 1),
                    false => q * Q::from_unsigneds(1, 10u64.pow(-scale as u32)),
                }
            })
            .collect();
        pts.push(p);
    }
    Space::from_points(kind, pts, None).expect("valid points")
}

/// A mechanism: exponential-like (smooth, ε0-private by construction up to rounding), or
/// random positive entries, with optional zero columns.
fn random_matrix(
    rng: &mut ChaCha8Rng,
    n: usize,
    k: usize,
    dist: impl Fn(usize, usize) -> f64,
    smooth: bool,
    zeros: bool,
) -> Dense {
    let a: f64 = rng.gen_range(0.05..1.5);
    let centers: Vec<usize> = (0..k).map(|_| rng.gen_range(0..n)).collect();
    let mut data = Vec::with_capacity(n * k);
    for u in 0..n {
        for (w, &c) in centers.iter().enumerate() {
            let x = if smooth {
                (-a * dist(u, c)).exp() * (1.0 + 1e-3 * ((u * 7 + w * 13) % 5) as f64)
            } else {
                rng.gen_range(0.01..1.0)
            };
            data.push(if zeros && w % 7 == 3 { 0.0 } else { x });
        }
    }
    for u in 0..n {
        if data[u * k..(u + 1) * k].iter().all(|&x| x == 0.0) {
            data[u * k] = 1.0;
        }
    }
    Dense::new(n, k, data, "matrix").unwrap()
}

/// ε values to check at: the exact tight ε's neighbourhood and far from it.
fn epsilons(tight: &EpsEnclosure) -> Vec<Q> {
    let mut out = vec![Q::from_unsigneds(1u32, 10u32), Q::from(3u32)];
    if tight.hi.is_some() && tight.lo > 0u32 {
        let lo = tight.lo.clone();
        out.push(&lo * Q::from_unsigneds(999_999u32, 1_000_000u32));
        out.push(tight.hi.clone().unwrap() * Q::from_unsigneds(1_000_001u32, 1_000_000u32));
    }
    out
}

/// Move entry (u, w) to a few ulps around the value x* where row u's H[u][w] equals
/// e^{ε·d(u,v)}·H[v][w] (x/(R + x) = c): the plant is on whichever side rounding puts it.
fn plant(m: &Dense, u: usize, v: usize, w: usize, eps: f64, d: f64, ulps: i64) -> Option<Dense> {
    let k = m.cols;
    let hv = m.row(v)[w] / m.row(v).iter().sum::<f64>();
    let c = (eps * d).exp() * hv;
    if !(c > 0.0 && c < 0.9) || u == v {
        return None;
    }
    let rest: f64 = m
        .row(u)
        .iter()
        .enumerate()
        .filter(|(j, _)| *j != w)
        .map(|(_, x)| x)
        .sum();
    let mut x = c * rest / (1.0 - c);
    for _ in 0..ulps.abs() {
        x = if ulps > 0 {
            f64::from_bits(x.to_bits() + 1)
        } else {
            f64::from_bits(x.to_bits() - 1)
        };
    }
    let mut data = m.data().to_vec();
    data[u * k + w] = x;
    Dense::new(m.rows, k, data, "matrix").ok()
}

/// A smooth random mechanism on random points of metric `kind` (`seed`), and the same with a
/// violation planted `ulps` from the boundary at ε = `eps` on a random triple (`None` when
/// the plant is not representable). ε = 4 is well above the base's own ε0 (≤ 2a ≤ 3), so
/// the plant is the tightest triple.
fn planted_instance(
    seed: u64,
    kind: u8,
    scale: i32,
    n: usize,
    k: usize,
    eps: f64,
    ulps: i64,
) -> (Space, Dense, Option<Dense>) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let space = random_space(&mut rng, kind_of(kind), n, false, scale);
    let base = random_matrix(&mut rng, n, k, |u, v| space.approx(u, v), true, false);
    let (u, v, w) = (
        rng.gen_range(0..n),
        rng.gen_range(0..n),
        rng.gen_range(0..k),
    );
    let planted = plant(&base, u, v, w, eps, space.approx(u, v), ulps);
    (space, base, planted)
}

/// A connected random graph on n nodes (a random tree plus `extra` edges, parallel edges
/// and loops allowed; weights in eighths) as its shortest-path space and its edges.
fn random_graph(rng: &mut ChaCha8Rng, n: usize, extra: usize) -> (Space, Graph) {
    let mut edges = Vec::new();
    for v in 1..n {
        let u = rng.gen_range(0..v);
        edges.push((u, v, Q::from_unsigneds(rng.gen_range(1u32..40), 8u32)));
    }
    for _ in 0..extra {
        let (u, v) = (rng.gen_range(0..n), rng.gen_range(0..n));
        edges.push((u, v, Q::from_unsigneds(rng.gen_range(1u32..80), 8u32)));
    }
    let space = Space::from_graph(n, &edges).unwrap();
    (space, Graph::new(n, edges, "metric").unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn tree_matches_exhaustive(seed in any::<u64>(), kind in 0u8..4, n in 2usize..70, k in 1usize..24,
                               smooth in any::<bool>(), zeros in any::<bool>(), dups in any::<bool>(),
                               scoped in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let kind = kind_of(kind);
        let space = random_space(&mut rng, kind, n, dups, 0);
        let m = random_matrix(&mut rng, n, k, |u, v| space.approx(u, v), smooth, zeros);
        let norm = Normalized::new(&m);
        let within = scoped.then(|| {
            let d = space.approx(0, n - 1).max(1e-3);
            Q::try_from(d * 0.6).unwrap()
        });
        let tree = Tree::new(&space, &m, &norm, within.as_ref(), PREC, BUDGET);
        let (_, tight) = exhaustive(&space, &m, &Q::from(1u32), within.as_ref());
        let tight = tight.expect("decidable");
        for eps in epsilons(&tight) {
            agree(&space, &tree, &m, &eps, within.as_ref());
        }
    }

    /// Also with every distance below 1 (coordinates scaled by 10⁻¹ … 10⁻³): a box-pair
    /// bound of e^{T/d} in place of e^{T·d} agrees with it at d = 1 and is found only here.
    #[test]
    fn tree_matches_exhaustive_on_planted_near_ties(seed in any::<u64>(), kind in 0u8..4, n in 20usize..120,
                                                    k in 2usize..12, ulps in -3i64..4, scale in 0i32..4) {
        let eps = 4.0;
        let (space, _, planted) = planted_instance(seed, kind, -scale, n, k, eps, ulps);
        let Some(m) = planted else { return Ok(()) };
        let norm = Normalized::new(&m);
        let tree = Tree::new(&space, &m, &norm, None, PREC, BUDGET);
        let q = Q::try_from(eps).unwrap();
        let (de, _) = exhaustive(&space, &m, &q, None);
        let (ds, _) = structured(&tree, &q);
        prop_assert_eq!(de, ds);
    }

    #[test]
    fn edges_match_exhaustive(seed in any::<u64>(), n in 2usize..40, k in 1usize..16, extra in 0usize..40,
                              smooth in any::<bool>(), zeros in any::<bool>(), scoped in any::<bool>()) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (space, graph) = random_graph(&mut rng, n, extra);
        let m = random_matrix(&mut rng, n, k, |u, v| space.approx(u, v), smooth, zeros);
        let norm = Normalized::new(&m);
        let within = scoped.then(|| Q::from_unsigneds(rng.gen_range(1u32..60), 8u32));
        let s = Edges::new(&graph, &m, &norm, within.as_ref(), PREC, BUDGET);
        let (_, tight) = exhaustive(&space, &m, &Q::from(1u32), within.as_ref());
        for eps in epsilons(&tight.expect("decidable")) {
            agree(&space, &s, &m, &eps, within.as_ref());
        }
    }
}

#[test]
fn edges_catch_a_violation_only_a_far_pair_would_show_if_edges_were_not_shortest() {
    // A triangle whose long edge (0, 2) is not a shortest path (d(0, 2) = 2 < 3): the edge
    // check at w = 3 is weaker than privacy at d = 2, and the path edges decide instead.
    let edges = vec![
        (0, 1, Q::from(1u32)),
        (1, 2, Q::from(1u32)),
        (0, 2, Q::from(3u32)),
    ];
    let space = Space::from_graph(3, &edges).unwrap();
    let graph = Graph::new(3, edges, "metric").unwrap();
    let e = std::f64::consts::E;
    // Ratios e^1 per unit step: exactly at ε = 1 in floats' reach, so use ε = 1.01.
    let m = Dense::new(3, 2, vec![1.0, e * e, e, e, e * e, 1.0], "matrix").unwrap();
    let norm = Normalized::new(&m);
    let s = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
    agree(&space, &s, &m, &Q::try_from(1.01).unwrap(), None);
    agree(&space, &s, &m, &Q::try_from(0.99).unwrap(), None);
}

#[test]
fn one_ulp_violation_in_a_large_smooth_mechanism_is_found() {
    // 400 planar points, the violation planted one ulp past the boundary at a far pair:
    // the box tests must not settle it.
    let mut rng = ChaCha8Rng::seed_from_u64(7);
    let space = random_space(&mut rng, MetricKind::Euclidean, 400, false, 0);
    let base = random_matrix(&mut rng, 400, 30, |u, v| space.approx(u, v), true, false);
    let (u, v, w) = (3, 398, 5);
    let eps = 4.0;
    for ulps in [-1, 1, 2] {
        let Some(m) = plant(&base, u, v, w, eps, space.approx(u, v), ulps) else {
            continue;
        };
        let norm = Normalized::new(&m);
        let tree = Tree::new(&space, &m, &norm, None, PREC, BUDGET);
        let q = Q::try_from(eps).unwrap();
        let (de, _) = exhaustive(&space, &m, &q, None);
        let (ds, _) = structured(&tree, &q);
        assert_eq!(de, ds, "ulps {ulps}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Ties everywhere: clusters of nearly equal points and columns e^{±ε·x}, so every box
    /// pair's test is within float rounding of its bound at every level of the tree, and
    /// float rounding of the entries alone decides which triples break ε.
    #[test]
    fn tree_matches_exhaustive_on_tight_clusters(seed in any::<u64>(), clusters in 2usize..6, per in 1usize..40,
                                                 k in 1usize..6, spread_exp in 3i32..12) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let spread = 10f64.powi(-spread_exp);
        let mut xs = Vec::new();
        for c in 0..clusters {
            for i in 0..per {
                xs.push(c as f64 + spread * i as f64 * rng.gen_range(0.5..1.0));
            }
        }
        let pts: Vec<Vec<Q>> = xs.iter().map(|&x| vec![mdp_audit::exact::q_from_f64(x)]).collect();
        let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        let eps = 0.75;
        let signs: Vec<f64> = (0..k).map(|_| if rng.gen_bool(0.5) { 1.0 } else { -1.0 }).collect();
        let n = xs.len();
        // Rows sum to 1 up to rounding (a slack column), so normalization keeps the ties.
        let t = 1.0 / (200.0 * k as f64);
        let data: Vec<f64> = xs
            .iter()
            .flat_map(|&x| {
                let row: Vec<f64> = signs.iter().map(|s| t * (eps * s * x).exp()).collect();
                let slack = 1.0 - row.iter().sum::<f64>();
                row.into_iter().chain([slack])
            })
            .collect();
        let m = Dense::new(n, k + 1, data, "matrix").unwrap();
        let norm = Normalized::new(&m);
        let tree = Tree::new(&space, &m, &norm, None, PREC, BUDGET);
        for e in [eps, eps * (1.0 - 1e-12), eps * (1.0 + 1e-12), eps * (1.0 + 1e-6)] {
            let q = Q::try_from(e).unwrap();
            let (de, _) = exhaustive(&space, &m, &q, None);
            let (ds, _) = structured(&tree, &q);
            prop_assert_eq!(de, ds, "ε = {}", e);
        }
    }
}

/// Every pair breaking `t` in `s`, proven (`check` with `all`).
fn breaking(s: &dyn Structure, t: &Q) -> Vec<(usize, usize, usize)> {
    let out = s.check(t, true).expect("no budget");
    assert!(out.undecided.is_none());
    out.fails.iter().map(|p| (p.u, p.v, p.id)).collect()
}

/// The shares of a split audit (`Part`, issue 35) partition the ordered pairs: at every
/// threshold the pairs each share proves broken are disjoint and their union is the whole
/// audit's (pairs with their edge: parallel edges are separate pairs), and the largest of
/// the shares' tight ε encloses the whole's. Violations are
/// planted next to the boundary at a random pair, so some share must find each.
fn shares_agree(whole: &dyn Structure, shares: &[Box<dyn Structure + '_>], thresholds: &[Q]) {
    for t in thresholds {
        let all = breaking(whole, t);
        let mut union: Vec<(usize, usize, usize)> = shares
            .iter()
            .flat_map(|s| breaking(s.as_ref(), t))
            .collect();
        let found = union.len();
        union.sort();
        union.dedup();
        assert_eq!(union.len(), found, "a pair broken in two shares at {t}");
        assert_eq!(union, all, "shares against the whole audit at {t}");
    }
    let w = tight_eps(whole).expect("decidable").0;
    let mut lo = Q::from(0u32);
    let mut hi = Some(Q::from(0u32));
    for s in shares {
        let e = tight_eps(s.as_ref()).expect("decidable").0;
        lo = lo.max(e.lo.clone());
        hi = match (hi, e.hi) {
            (Some(a), Some(b)) => Some(a.max(b)),
            _ => None,
        };
    }
    let combined = EpsEnclosure { lo, hi, pair: None };
    assert!(
        overlap(&w, &combined),
        "tight ε: whole {:?}, shares {:?}",
        w.to_f64(),
        combined.to_f64()
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    #[test]
    fn tree_shares_partition_the_pairs(seed in any::<u64>(), kind in 0u8..4, n in 2usize..90, k in 1usize..10,
                                       of in 1usize..7, ulps in -2i64..3, scoped in any::<bool>()) {
        let eps = 4.0;
        let (space, base, planted) = planted_instance(seed, kind, 0, n, k, eps, ulps);
        let m = planted.unwrap_or(base);
        let norm = Normalized::new(&m);
        let within = scoped.then(|| Q::try_from(space.approx(0, n - 1).max(1e-3) * 0.6).unwrap());
        let whole = Tree::new(&space, &m, &norm, within.as_ref(), PREC, BUDGET);
        let shares: Vec<Box<dyn Structure>> = (0..of)
            .map(|i| {
                let mut t = Tree::new(&space, &m, &norm, within.as_ref(), PREC, BUDGET);
                t.restrict(Part::new(i, of).unwrap());
                Box::new(t) as Box<dyn Structure>
            })
            .collect();
        let (_, tight) = exhaustive(&space, &m, &Q::from(1u32), within.as_ref());
        let mut ts = epsilons(&tight.expect("decidable"));
        ts.push(Q::try_from(eps).unwrap());
        shares_agree(&whole, &shares, &ts);
    }

    #[test]
    fn edge_shares_partition_the_pairs(seed in any::<u64>(), n in 2usize..40, k in 1usize..8, extra in 0usize..30,
                                       of in 1usize..7) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (space, graph) = random_graph(&mut rng, n, extra);
        let m = random_matrix(&mut rng, n, k, |u, v| space.approx(u, v), false, true);
        let norm = Normalized::new(&m);
        let whole = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
        let shares: Vec<Box<dyn Structure>> = (0..of)
            .map(|i| {
                let mut e = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
                e.restrict(Part::new(i, of).unwrap());
                Box::new(e) as Box<dyn Structure>
            })
            .collect();
        let (_, tight) = exhaustive(&space, &m, &Q::from(1u32), None);
        shares_agree(&whole, &shares, &epsilons(&tight.expect("decidable")));
    }
}

#[test]
fn part_refuses_an_empty_or_outside_share() {
    assert!(Part::new(0, 0).is_err());
    assert!(Part::new(3, 3).is_err());
    assert!(Part::new(0, (1 << 20) + 1).is_err());
    assert!(Part::new(2, 3).is_ok());
}

/// The two structures on two sites at distance 1: a one-edge graph and two points on a line.
fn two_sites() -> (Space, Graph) {
    let pts = vec![vec![Q::from(0u32)], vec![Q::from(1u32)]];
    let line = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    (
        line,
        Graph::new(2, vec![(0, 1, Q::from(1u32))], "metric").unwrap(),
    )
}

/// Two rows whose ratio at column 0 is `target`: row 1 = [1, M] puts H\[1\]\[0\] = 1/(1 + M),
/// row 0 = [a, 1] has H\[0\]\[0\] = a/(a + 1) = target·H\[1\]\[0\] (M = 10³⁰, so targets up to
/// e^50 fit and column 1's ratios stay near 1).
fn ratio_planted(target: f64) -> Dense {
    let big = 1e30;
    let h = target / (1.0 + big);
    let a = h / (1.0 - h);
    Dense::new(2, 2, vec![a, 1.0, 1.0, big], "matrix").unwrap()
}

/// Every decision path of a pair (`structured::Run::decide_pair`: the cheap Taylor proof,
/// the interval exponential, the float failure, the exact fallback) at ε·d = x from 10⁻⁴ to
/// 50, with the ratio H\[0\]\[0\]/H\[1\]\[0\] planted at e^x·(1 ± δ), δ from 10⁻¹⁵ to 1: both
/// structures give the exhaustive audit's verdict, which is the planted side; a ratio off
/// the bound by 10⁻³ or more is decided in floats (no exact pair: cargo-mutants found the
/// float failure `>` → `==` unnoticed). A series above e^x (x·3 for x/3) fails it.
#[test]
fn planted_ratios_at_every_scale_through_each_decision_path() {
    let (line, graph) = two_sites();
    for x in [1e-4, 0.01, 0.1, 0.5, 1.0, 2.0, 4.0, 5.5, 10.0, 50.0] {
        for delta in [1e-15, 1e-12, 1e-6, 1e-3, 0.1, 1.0] {
            for above in [true, false] {
                // Below the bound, the reverse ratio 1/target must stay ≤ e^x too.
                if !above && 1.0 - delta / 2.0 <= f64::exp(-2.0 * x) {
                    continue;
                }
                let target = f64::exp(x)
                    * if above {
                        1.0 + delta
                    } else {
                        1.0 - delta / 2.0
                    };
                let m = ratio_planted(target);
                let eps = Q::try_from(x).unwrap();
                let (want, _) = exhaustive(&line, &m, &eps, None);
                let planted = if above {
                    Decision::Fails
                } else {
                    Decision::Holds
                };
                assert_eq!(want, planted, "x = {x}, δ = {delta}, above = {above}");
                let norm = Normalized::new(&m);
                let tree = Tree::new(&line, &m, &norm, None, PREC, BUDGET);
                let edges = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
                for s in [&tree as &dyn Structure, &edges] {
                    let out = s.check(&eps, true).unwrap();
                    let got = if out.fails.is_empty() {
                        Decision::Holds
                    } else {
                        Decision::Fails
                    };
                    assert_eq!(got, want, "x = {x}, δ = {delta}, above = {above}");
                    assert!(out.undecided.is_none());
                    if delta >= 1e-3 {
                        assert_eq!(out.work.exact_pairs, 0, "x = {x}, δ = {delta}");
                    }
                }
            }
        }
    }
}

/// A row whose entry underflows when normalized (2⁻¹⁰⁷⁴/10 is 0 in `f64`) is not float-safe:
/// the pair (0, 1) must go to exact arithmetic, where H\[0\]\[0\] > 0 = H\[1\]\[0\] makes the
/// ratio infinite. With the filter on a pair with *one* safe row (`&&` → `||`), the float
/// ratios 0/0 and 1 would pass it.
#[test]
fn a_pair_with_one_unsafe_row_is_decided_exactly() {
    let (line, graph) = two_sites();
    let tiny = f64::from_bits(1);
    let m = Dense::new(2, 2, vec![tiny, 10.0, 0.0, 1.0], "matrix").unwrap();
    let norm = Normalized::new(&m);
    assert_eq!(norm.safe, vec![false, true]);
    let eps = Q::from(1u32);
    assert_eq!(exhaustive(&line, &m, &eps, None).0, Decision::Fails);
    let tree = Tree::new(&line, &m, &norm, None, PREC, BUDGET);
    let edges = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
    for s in [&tree as &dyn Structure, &edges] {
        let out = s.check(&eps, true).unwrap();
        assert_eq!(out.fails.len(), 1, "{:?}", out.fails);
        assert_eq!((out.fails[0].u, out.fails[0].v), (0, 1));
    }
}

/// Pairs within rounding of their bound at a precision limit too low to decide them are
/// undecided, never passed; the report names the least of them. On the path 0 – 1 – 2, rows
/// 0 and 2 are planted at e^{ε·1}·H\[1\]\[0\] (two near-ties), and the exact fallback may
/// use 8 bits.
#[test]
fn undecidable_pairs_are_reported_least_first_not_passed() {
    let edges = vec![(0, 1, Q::from(1u32)), (1, 2, Q::from(1u32))];
    let graph = Graph::new(3, edges, "metric").unwrap();
    let h = f64::exp(1.0) / 4.0;
    let a = h / (1.0 - h);
    let m = Dense::new(3, 2, vec![a, 1.0, 1.0, 3.0, a, 1.0], "matrix").unwrap();
    let norm = Normalized::new(&m);
    let s = Edges::new(&graph, &m, &norm, None, 8, BUDGET);
    let out = s.check(&Q::from(1u32), true).unwrap();
    assert!(out.fails.is_empty(), "{:?}", out.fails);
    let p = out.undecided.expect("a near-tie at 8 bits is undecided");
    assert_eq!((p.u, p.v), (0, 1));
    // 4 ordered pairs of 2 columns; the two near-ties went exact.
    assert_eq!(out.work.pair_triples, 8);
    assert_eq!((out.work.exact_pairs, out.work.exact_triples), (2, 4));
    // The exact fallback's budget counts triples: 4 fit in a budget of 4, not of 3.
    assert!(Edges::new(&graph, &m, &norm, None, 8, 4)
        .check(&Q::from(1u32), true)
        .is_ok());
    assert!(Edges::new(&graph, &m, &norm, None, 8, 3)
        .check(&Q::from(1u32), true)
        .is_err());
    // At the suite's precision both are decided, as the exhaustive audit decides them.
    let space = Space::from_graph(3, &[(0, 1, Q::from(1u32)), (1, 2, Q::from(1u32))]).unwrap();
    let (want, _) = exhaustive(&space, &m, &Q::from(1u32), None);
    let s = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
    assert_eq!(structured(&s, &Q::from(1u32)).0, want);
}

/// A check that is not asked for every failure stops at the first ones: of 2·399 failing
/// edges of a path, a handful are reported (each worker's first), all of them with `all`.
#[test]
fn a_check_stops_early_unless_every_failure_is_asked_for() {
    let n = 400;
    let edges: Vec<(usize, usize, Q)> = (0..n - 1).map(|i| (i, i + 1, Q::from(1u32))).collect();
    let graph = Graph::new(n, edges, "metric").unwrap();
    let mut data = vec![1e-9; n * n];
    for u in 0..n {
        data[u * n + u] = 1.0;
    }
    let m = Dense::new(n, n, data, "matrix").unwrap();
    let norm = Normalized::new(&m);
    let s = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
    let eps = Q::from(1u32);
    assert_eq!(s.check(&eps, true).unwrap().fails.len(), 2 * (n - 1));
    let first = s.check(&eps, false).unwrap().fails.len();
    assert!((1..100).contains(&first), "{first} failures reported");
}

/// The tight-ε search starts from the pairs its float estimates ln R̃ / d̃ rank first: on a
/// path of 100 unit edges whose tightest pair is at its far end (H\[98\]\[1\]/H\[99\]\[1\] = 2,
/// ε = ln 2) and whose largest ratios are on long edges (H\[49\]\[1\]/H\[50\]\[1\] = 5/2 over
/// d = 10 either side of node 50, ε = 0.09), that pair is absorbed before the first check, so one check at the
/// upper end closes the search. (With every estimate equal, or ranked by ln R̃·d̃, a second
/// check is needed: cargo-mutants found `estimate` unchecked.)
#[test]
fn the_tight_search_absorbs_the_estimated_tightest_pair_first() {
    let (n, m) = far_end_tightest();
    let edges: Vec<(usize, usize, Q)> = (0..n - 1)
        .map(|i| (i, i + 1, Q::from(far_end_edge(i))))
        .collect();
    let graph = Graph::new(n, edges, "metric").unwrap();
    let norm = Normalized::new(&m);
    let s = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
    let (enc, work) = tight_eps(&s).unwrap();
    assert_eq!(enc.pair, Some((n - 2, n - 1)));
    let (lo, hi) = enc.to_f64();
    assert!(lo <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= hi);
    assert_eq!(work.passes, 1, "one check after the candidates");
}

/// The path of [`the_tight_search_absorbs_the_estimated_tightest_pair_first`]: edge i joins
/// nodes i and i + 1, of length 10 either side of node 50, else 1.
fn far_end_edge(i: usize) -> u32 {
    if i == 49 || i == 50 {
        10
    } else {
        1
    }
}

/// Its mechanism on 100 nodes: rows [1, 1] but for row 50, [4, 1], and row 99, [3, 1].
fn far_end_tightest() -> (usize, Dense) {
    let n = 100;
    let mut data = vec![1.0; n * 2];
    data[2 * (n - 1)] = 3.0;
    data[2 * 50] = 4.0;
    (n, Dense::new(n, 2, data, "matrix").unwrap())
}

/// A positive ratio at distance 0 has ε = ∞, and its estimate says so: the search ends on
/// the candidates, before any check (20 points on a line, the last two equal).
#[test]
fn an_infinite_pair_at_distance_zero_ends_the_search_before_any_check() {
    let n = 20;
    let pts: Vec<Vec<Q>> = (0..n).map(|i| vec![Q::from(i.min(n - 2) as u32)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let mut data = vec![1.0; n * 2];
    data[2 * (n - 1)] = 3.0;
    let m = Dense::new(n, 2, data, "matrix").unwrap();
    let norm = Normalized::new(&m);
    let tree = Tree::new(&space, &m, &norm, None, PREC, BUDGET);
    let (enc, work) = tight_eps(&tree).unwrap();
    assert!(enc.is_infinite());
    assert_eq!(work.passes, 0);
}

/// The layout digest of a shared edge audit's pair list differs between graphs (a split
/// audit's shares are refused when their tasks dealt different lists).
#[test]
fn edge_layouts_tell_graphs_apart() {
    let path = Graph::new(3, vec![(0, 1, Q::from(1u32)), (1, 2, Q::from(1u32))], "m").unwrap();
    let star = Graph::new(3, vec![(0, 1, Q::from(1u32)), (0, 2, Q::from(1u32))], "m").unwrap();
    let m = Dense::new(3, 1, vec![1.0; 3], "matrix").unwrap();
    let norm = Normalized::new(&m);
    let share = |g| {
        let mut e = Edges::new(g, &m, &norm, None, PREC, BUDGET);
        e.restrict(Part::new(0, 2).unwrap());
        e.layout()
    };
    assert_ne!(share(&path), share(&star));
    assert_eq!(share(&path), share(&path));
}

/// Plants whose float ratio rounds down into the cheap proof's margin. The proof
/// (`Run::decide_pair`) passes a pair when the filter ratio's upper end is at most
/// (1 + x + x²/2 + x³/6)·(1 − 16u) rounded down; a cut of 1 + 16u instead would pass an
/// exact ratio above e^x only where x⁴/24 is below an ulp (x ≤ 3·10⁻⁴) and the float ratio
/// h̃_u·fl(1/h̃_v) rounds down by more than the ratio's excess plus the products' own
/// rounding (`cargo mutants`: that cut survived
/// `ratios_ulps_above_the_bound_where_the_series_meets_it`). A seeded search over rows
/// [a, b], [c, d] with H\[0\]\[0\]/H\[1\]\[0\] planted within 3u above e^x simulates the
/// filter's floats exactly (the rounded row sums, quotients, reciprocal and product, the
/// directed products of the cut) and keeps the plants that cut would pass although the
/// exact ratio exceeds e^x: each fails on both structures as in the exhaustive audit.
#[test]
fn ratios_rounded_down_into_the_proofs_margin_still_fail() {
    use mdp_audit::exact::float::{mul_down, FI};
    let (line, graph) = two_sites();
    let u = mdp_audit::privacy::U;
    let mut rng = ChaCha8Rng::seed_from_u64(1616);
    let mut found = 0;
    for x in [1e-7, 1e-6, 1e-5, 1e-4] {
        let eps = Q::try_from(x).unwrap();
        let e_hi = functions::exp(&Interval::point(eps.clone()), 200).hi;
        let series = 1.0 + x * (1.0 + x * 0.5 * (1.0 + x / 3.0));
        let cut = mul_down(series, 1.0 + 16.0 * u);
        let mut here = 0;
        for _ in 0..400_000 {
            if here == 4 {
                break;
            }
            let (c, d, b): (f64, f64, f64) = (
                rng.gen_range(0.01..0.3),
                rng.gen_range(0.7..1.0),
                rng.gen_range(0.1..1.0),
            );
            let h1 = c / (c + d);
            let t = h1 * f64::exp(x) * (1.0 + rng.gen_range(0.0..3.0) * u);
            let a = t * b / (1.0 - t);
            let (s0, s1) = (a + b, c + d);
            let rt = (a / s0) * (1.0 / (c / s1));
            if FI::point(rt).mul_f64(1.0 + mdp_audit::privacy::KAPPA).hi > cut {
                continue;
            }
            let qs = [a, b, c, d].map(|v| Q::try_from(v).unwrap());
            let exact = (&qs[0] / &(&qs[0] + &qs[1])) / (&qs[2] / &(&qs[2] + &qs[3]));
            if exact <= e_hi {
                continue;
            }
            here += 1;
            let m = Dense::new(2, 2, vec![a, b, c, d], "matrix").unwrap();
            let (want, _) = exhaustive(&line, &m, &eps, None);
            assert_eq!(
                want,
                Decision::Fails,
                "x = {x}, rows [{a:e}, {b:e}], [{c:e}, {d:e}]"
            );
            let norm = Normalized::new(&m);
            assert_eq!(
                norm.h(0, 0) * norm.recip_row(1)[0],
                rt,
                "the filter's ratio"
            );
            let tree = Tree::new(&line, &m, &norm, None, PREC, BUDGET);
            let edges = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
            for s in [&tree as &dyn Structure, &edges] {
                assert_eq!(
                    structured(s, &eps).0,
                    want,
                    "x = {x}, rows [{a:e}, {b:e}], [{c:e}, {d:e}]"
                );
            }
        }
        found += here;
    }
    assert!(found > 0, "no plant in the margin");
}

/// Ratios planted 1 to 12 ulps above e^x where the cheap proof's series meets e^x (x⁴/24
/// below an ulp, x from 10⁻¹⁰ to 10⁻⁴) fail on both structures exactly as in the exhaustive
/// audit. (A cut of 1 + 16u for the proof's 1 − 16u survives this test: none of these
/// plants' float ratios rounds down far enough; benches/reports/mutants.md.)
#[test]
fn ratios_ulps_above_the_bound_where_the_series_meets_it() {
    let (line, graph) = two_sites();
    let mut fails = 0;
    for x in [1e-10, 1e-8, 1e-6, 1e-5, 1e-4] {
        for ulps in 1..=12 {
            let target = f64::exp(x) * (1.0 + ulps as f64 * f64::EPSILON / 2.0);
            let m = ratio_planted(target);
            let eps = Q::try_from(x).unwrap();
            let (want, _) = exhaustive(&line, &m, &eps, None);
            fails += usize::from(want == Decision::Fails);
            let norm = Normalized::new(&m);
            let tree = Tree::new(&line, &m, &norm, None, PREC, BUDGET);
            let edges = Edges::new(&graph, &m, &norm, None, PREC, BUDGET);
            for s in [&tree as &dyn Structure, &edges] {
                assert_eq!(structured(s, &eps).0, want, "x = {x}, {ulps} ulps");
            }
        }
    }
    assert!(
        fails >= 40,
        "the plants are above the bound: {fails} of 60 fail"
    );
}

/// 40 points on a line at spacing `gap` (0, gap, …, 39·gap); rows 0–19 are [a, 1 − a] and
/// rows 20–39 [b, 1 − b] with a/b = e^{ε·gap}·`tilt` (ε·gap = 1). The tree splits them into
/// the two halves (distinct keys: at the median), so the only pairs at distance gap across
/// the halves are (19, 20) and (20, 19).
fn two_halves(gap: &Q, tilt: f64) -> (Space, Dense) {
    let pts = (0..40u32).map(|i| vec![gap * Q::from(i)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let a = 0.5;
    let b = a / (1f64.exp() * tilt);
    let data = (0..40)
        .flat_map(|u| if u < 20 { [a, 1.0 - a] } else { [b, 1.0 - b] })
        .collect();
    (space, Dense::new(40, 2, data, "matrix").unwrap())
}

/// A scope η equal to the distance of the one violating pair keeps it in scope (d ≤ η), at
/// the tree's three scope tests: the box pair's (its distance bound is exactly η at spacing
/// 1: a box pair skipped at dist_lo ≥ η would hide it), and the leaf pair's float and exact
/// ones (at spacing 1/10 the pair's float enclosure straddles η, so only the exact
/// comparison places it). Tilted 10⁻³ below the bound, the same mechanism passes.
#[test]
fn a_pair_at_exactly_the_scopes_distance_is_in_scope() {
    for (gap, eps) in [
        (Q::from(1u32), Q::from(1u32)),
        (Q::from_unsigneds(1u32, 10), Q::from(10u32)),
    ] {
        let (space, m) = two_halves(&gap, 1.001);
        let norm = Normalized::new(&m);
        let (want, _) = exhaustive(&space, &m, &eps, Some(&gap));
        assert_eq!(want, Decision::Fails, "spacing {gap}");
        let tree = Tree::new(&space, &m, &norm, Some(&gap), PREC, BUDGET);
        let fails: Vec<(usize, usize)> = breaking(&tree, &eps).iter().map(|p| (p.0, p.1)).collect();
        assert_eq!(fails, vec![(19, 20)], "spacing {gap}");
        let (space, m) = two_halves(&gap, 0.999);
        let norm = Normalized::new(&m);
        let tree = Tree::new(&space, &m, &norm, Some(&gap), PREC, BUDGET);
        assert!(breaking(&tree, &eps).is_empty(), "spacing {gap}, private");
    }
}

/// Rows whose entries underflow when normalized are outside the float error model in a box
/// pair too: box A (rows 0–19, each [2⁻¹⁰⁷⁴, 10]: h̃ = [0, 1] in floats) against box B (rows
/// 20–39, [0, 1]) must go to the leaves' exact path, where H\[u\]\[0\] > 0 = H\[v\]\[0\]
/// makes every (u ∈ A, v ∈ B) ratio infinite. A box test that trusted A's floats because B
/// is safe (`&&` → `||`) would settle column 0 as "all zero in A" and column 1 at ratio 1.
#[test]
fn a_box_with_unsafe_rows_is_decided_at_its_leaves() {
    let pts = (0..40u32).map(|i| vec![Q::from(i)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let tiny = f64::from_bits(1);
    let data = (0..40)
        .flat_map(|u| if u < 20 { [tiny, 10.0] } else { [0.0, 1.0] })
        .collect();
    let m = Dense::new(40, 2, data, "matrix").unwrap();
    let norm = Normalized::new(&m);
    assert!(norm.safe[..20].iter().all(|s| !s) && norm.safe[20..].iter().all(|&s| s));
    let eps = Q::from(1u32);
    assert_eq!(exhaustive(&space, &m, &eps, None).0, Decision::Fails);
    let tree = Tree::new(&space, &m, &norm, None, PREC, BUDGET);
    let fails = breaking(&tree, &eps);
    assert_eq!(fails.len(), 20 * 20, "every (A, B) pair, no (B, A) one");
    assert!(fails.iter().all(|&(u, v, _)| u < 20 && v >= 20));
}

/// The tree's work accounts for every triple of every pass: the triples settled by box
/// pairs and those decided pair by pair add up to n(n − 1)·K (no scope). On a smooth
/// private mechanism over 300 spread points most of them are settled by box pairs (the
/// pruning the structure exists for: a distance bound of 0, or a box ratio mis-formed,
/// settles none).
#[test]
fn the_trees_work_accounts_for_every_triple_and_far_boxes_settle() {
    let mut rng = ChaCha8Rng::seed_from_u64(11);
    let (n, k) = (300, 6);
    let space = random_space(&mut rng, MetricKind::Euclidean, n, false, 0);
    let m = random_matrix(&mut rng, n, k, |u, v| space.approx(u, v), true, false);
    let norm = Normalized::new(&m);
    let tree = Tree::new(&space, &m, &norm, None, PREC, BUDGET);
    assert_eq!(tree.pairs(), (n * (n - 1)) as u64);
    let out = tree.check(&Q::from(4u32), true).unwrap();
    assert!(out.fails.is_empty() && out.undecided.is_none());
    let w = out.work;
    assert_eq!(
        w.settled_triples + w.pair_triples,
        (n * (n - 1) * k) as u64,
        "{w:?}"
    );
    assert!(w.settled_triples > 4 * w.pair_triples, "{w:?}");
    assert!(
        w.box_tests > 0 && w.exact_triples <= w.pair_triples,
        "{w:?}"
    );
}

/// The box tree's candidate search finds the tightest pair (`Tree::candidates`, the leaf
/// pairs' estimates ranked): on the points of the path of
/// `the_tight_search_absorbs_the_estimated_tightest_pair_first` laid on a line (the
/// tightest pair (98, 99) at ln 2 over d = 1; the largest ratio 5/2 over d = 10), it is
/// absorbed before the first check, and one check at the upper end closes the search.
#[test]
fn the_trees_search_absorbs_the_tightest_pair_first() {
    let (n, m) = far_end_tightest();
    // Node i at the path's length from node 0.
    let pts = (0..n)
        .map(|i| vec![Q::from((0..i).map(far_end_edge).sum::<u32>())])
        .collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let norm = Normalized::new(&m);
    let tree = Tree::new(&space, &m, &norm, None, PREC, BUDGET);
    let (enc, work) = tight_eps(&tree).unwrap();
    assert_eq!(enc.pair, Some((n - 2, n - 1)));
    let (lo, hi) = enc.to_f64();
    assert!(lo <= std::f64::consts::LN_2 && std::f64::consts::LN_2 <= hi);
    assert_eq!(work.passes, 1, "one check after the candidates");
    assert_eq!(
        exhaustive(&space, &m, &Q::from(1u32), None).1.unwrap().pair,
        enc.pair
    );
}
