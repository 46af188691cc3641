//! Benders decomposition of the PMO LP (Qiu 2024 §3; spec/theorems.md rows QIU-*): the
//! bounds bracket the whole LP's optimum at every iteration, components solve apart, the
//! loop terminates under every iteration limit, and no tampered `benders` certificate
//! passes the audit.

use crate::common;

use common::{mdp, q, tmp};
use mdp::audit::{self, Verdict};
use mdp::benders::partition::{self, MasterSet, Method};
use mdp::benders::{self, Options, Status};
use mdp::exact::Q;
use mdp::io::{self, Limits};
use mdp::loss::{self, Cost};
use mdp::lp::model::RowForm;
use mdp::lp::Solver;
use mdp::mechanism::Matrix;
use mdp::mechanisms::optimal::{self, PmoParams};
use mdp::metric::{MetricKind, Space};
use mdp::privacy::Prepared;
use mdp::produce::{produce, BendersMech, Family, Pmo, Request};
use mdp::progress::Silent;
use proptest::prelude::*;
use serde_json::Value;

const PREC: u64 = 4096;

/// Points in two or three clusters 100 apart (so η < 50 separates them), coordinates /10.
fn arb_clustered(max_n: usize) -> impl Strategy<Value = Space> {
    (4..=max_n, 1usize..=3).prop_flat_map(|(n, clusters)| {
        proptest::collection::vec((0i64..60, 0i64..60), n).prop_map(move |pts| {
            let pts = pts
                .into_iter()
                .enumerate()
                .map(|(i, (x, y))| vec![q(x + 1000 * (i % clusters) as i64, 10), q(y, 10)])
                .collect();
            Space::from_points(MetricKind::Euclidean, pts, None).unwrap()
        })
    })
}

fn arb_options() -> impl Strategy<Value = Options> {
    (
        1usize..=4,
        0usize..4,
        any::<bool>(),
        any::<u64>(),
        prop_oneof![Just(0.0), Just(0.5)],
        any::<bool>(),
        prop_oneof![Just(1usize), Just(2), Just(usize::MAX)],
        any::<bool>(),
    )
        .prop_map(
            |(c, m, cover, seed, stabilize, chains, master_neighbours, copies)| Options {
                partitions: Some(c),
                method: [Method::KmRec, Method::KmDv, Method::KmAdj, Method::Bsc][m],
                master: if cover {
                    MasterSet::Cover
                } else {
                    MasterSet::Boundary
                },
                gap: 1e-6,
                max_iter: 100,
                seed,
                stabilize,
                chains,
                master_neighbours,
                copies,
                ..Options::default()
            },
        )
}

/// A certified enclosure [lo, hi] of the whole PMO LP's optimum, every row at once (the
/// reference Benders is checked against): lo is the `lp_dual` lower bound of the
/// undecomposed LP, hi an upper end of the expected-loss enclosure of its exactly private
/// matrix (a feasible point). Also the float optimum of the undecomposed LP.
fn whole_lp_optimum(space: &Space, eps: &Q, p: &PmoParams) -> (f64, f64, f64) {
    let lp = optimal::pmo_lp(space, eps, p, PREC).unwrap();
    let rows: Vec<(u32, u32, u32)> = lp
        .pairs
        .iter()
        .flat_map(|&(u, v)| (0..lp.k() as u32).map(move |k| (u as u32, v as u32, k)))
        .collect();
    let float = lp
        .to_sparse(&rows, RowForm::Scaled)
        .solve_ipm()
        .unwrap()
        .objective;
    let whole = optimal::pmo(space, eps, p, Solver::Ipm, None, u64::MAX, PREC, &Silent).unwrap();
    let lo = whole.lower_bound.expect("a certified lower bound");
    (
        lo,
        expected_loss_upper(space, &whole.matrix, p.within),
        float,
    )
}

/// The upper end of a matrix's expected loss under the uniform prior and c = d (the PMO
/// objective of [`params`]), enclosed as the auditor encloses it.
fn expected_loss_upper(space: &Space, m: &Matrix, within: Option<&Q>) -> f64 {
    let n = space.n();
    let prep = Prepared::new(space, m, within, PREC).unwrap();
    let sites: Vec<usize> = (0..n).collect();
    let ones = vec![Q::from(1u32); n];
    loss::losses(&prep, &Cost::Distance(&sites), &q(1, 2), Some(&ones))
        .expected
        .unwrap()
        .hi
}

/// Benders's certified bounds [LB, UB] (the `lp_dual` bound, the upper end of its exact
/// matrix's loss) bracket the whole LP's certified optimum with no tolerance; returned.
fn certified_bounds_bracket(space: &Space, eps: &Q, eta: &Q, built: &mdp::lp::Built) -> (f64, f64) {
    let (opt_lo, opt_hi, _) = whole_lp_optimum(space, eps, &params(eta));
    let lb = built.lower_bound.expect("a certified lower bound");
    let ub = expected_loss_upper(space, &built.matrix, Some(eta));
    assert!(
        lb <= opt_hi && ub >= opt_lo,
        "[{lb}, {ub}] vs [{opt_lo}, {opt_hi}]"
    );
    (lb, ub)
}

fn params(eta: &Q) -> PmoParams<'_> {
    PmoParams {
        within: Some(eta),
        prior: None,
        cost: None,
        outputs: None,
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, max_shrink_iters: 64, .. ProptestConfig::default() })]

    /// QIU-P33: the certified bounds bracket the whole LP's certified optimum with no
    /// tolerance (Benders's `lp_dual` bound ≤ OPT ≤ the loss of its exactly private
    /// matrix), and at every iteration the float LB ≤ OPT ≤ UB to the float solver's
    /// accuracy; the final matrix is exactly private (it passed its audit inside
    /// `benders`'s repair). QIU-P31: with η below the clusters' distance, the components are
    /// solved apart and the result is the whole LP's optimum. QIU-FIN: the loop ends within
    /// max_iter.
    #[test]
    fn qiu_p33_bounds_bracket_the_optimum(space in arb_clustered(10), opts in arb_options(),
                                          eps in (50i64..300).prop_map(|x| q(x, 100)),
                                          eta in (15i64..45).prop_map(|x| q(x, 10))) {
        let p = params(&eta);
        let (opt_lo, opt_hi, opt) = whole_lp_optimum(&space, &eps, &p);
        prop_assert!(opt_lo <= opt_hi);
        let (built, report) = benders::benders(&space, &eps, &p, &opts, PREC, &Silent).unwrap();
        prop_assert!(report.iterations <= opts.max_iter);
        // Certified against certified: no tolerance.
        let lb = built.lower_bound.expect("a certified lower bound");
        prop_assert!(lb <= opt_hi, "certified LB {lb} > certified OPT upper end {opt_hi}");
        let ub = expected_loss_upper(&space, &built.matrix, Some(&eta));
        prop_assert!(ub >= opt_lo, "certified UB {ub} < certified OPT lower end {opt_lo}");
        // The trace is float: master objectives rest on cuts from float subproblem duals,
        // which Clarabel accepts as "almost solved" at a relative gap of 5·10⁻⁵ (seen: an LB
        // 4.6·10⁻⁷ above OPT). Certified bounds above carry the soundness claim.
        let tol = 5e-5 * opt.abs() + 1e-9;
        for it in &report.trace {
            prop_assert!(it.lb <= opt_hi + tol, "iter {}: LB {} > OPT {opt_hi}", it.iter, it.lb);
            if let Some(ub) = it.ub {
                prop_assert!(ub >= opt_lo - tol, "iter {}: UB {ub} < OPT {opt_lo}", it.iter);
            }
        }
        // The incumbent is within the loop's own final gap of the optimum; the loop stops at
        // 10⁻⁶, or with no violated cut when the subproblems' duals are only as accurate as
        // Clarabel's "almost solved" (seen: 3·10⁻⁶).
        // The loop's absolute tolerance is 10⁻⁹ of Σ π_u max_k c(u,k) ≤ the largest distance;
        // both float optima are only that accurate near 0 (seen: 4 isolated records, the
        // whole LP's float optimum 1.1·10⁻⁹, Benders's 1.4·10⁻¹⁰, the exact optimum 0).
        let n = space.n();
        let dmax = (0..n).flat_map(|a| (0..n).map(move |b| (a, b))).map(|(a, b)| space.approx(a, b)).fold(0.0, f64::max);
        let tol = 1e-7 * opt.abs() + 1e-9 * dmax.max(1.0);
        prop_assert!(report.ub_float >= opt - tol, "UB {} < OPT {opt}", report.ub_float);
        // Relative to UB, as the loop's own gap (UB − LB)/UB is: with LB ≤ OPT the loop's
        // gap is then ≥ this one (relative to OPT it was not: seen 9.75 % against 9.52 %).
        let gap = (report.ub_float - opt) / report.ub_float.abs().max(1e-12);
        let abs = 1e-9 * dmax / report.ub_float.abs().max(1e-12);
        let limit = match report.status {
            Status::Converged => 1e-6 + 1e-7 + abs,
            Status::NoCut => 1e-4,
            // Honestly reported: the gap reached so far (bounds still certified).
            Status::IterationLimit | Status::SolverFailed => report.trace.last().map_or(f64::INFINITY, |t| t.gap) + 1e-6 + abs,
        };
        prop_assert!(gap <= limit || report.ub_float - opt <= 1e-8,
            "UB {} vs OPT {opt}: {:?} {:?}", report.ub_float, report.status,
            &report.trace[report.trace.len().saturating_sub(3)..]);
    }

    /// QIU-P31 directly: the decomposition never puts a row across components, and the
    /// component labels partition the records so that no LP pair crosses them.
    #[test]
    fn qiu_p31_components_are_independent(space in arb_clustered(12),
                                          eta in (15i64..45).prop_map(|x| q(x, 10)), c in 1usize..=5) {
        let eps = q(1, 1);
        let lp = optimal::pmo_lp(&space, &eps, &params(&eta), PREC).unwrap();
        let comp = mdp::metric::components(space.n(), &lp.pairs);
        prop_assert!(lp.pairs.iter().all(|&(u, v)| comp[u] == comp[v]));
        let method = if c % 2 == 0 { Method::Bsc } else { Method::KmRec };
        let part = partition::partition(&space, &lp.pairs, c.min(space.n()), method, 7).unwrap();
        // A subset never spans two components.
        for u in 0..space.n() {
            for v in 0..space.n() {
                if part[u] == part[v] {
                    prop_assert_eq!(comp[u], comp[v]);
                }
            }
        }
        for mode in [MasterSet::Cover, MasterSet::Boundary] {
            let dec = partition::decompose(space.n(), &lp.pairs, &part, mode);
            // Every row is in exactly one place: the master or one subproblem.
            let mut rows: Vec<(usize, usize)> = dec.master_pairs.clone();
            for s in &dec.subsets {
                rows.extend(s.pairs.iter().copied());
                prop_assert!(s.free.iter().all(|&u| !dec.is_master[u]));
            }
            rows.sort_unstable();
            let mut want = lp.pairs.clone();
            want.sort_unstable();
            prop_assert_eq!(rows, want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, .. ProptestConfig::default() })]

    /// QIU-P32: every feasible matrix (here the certified Benders output, private only for
    /// pairs within η) satisfies the chained bound H[i][k] ≤ e^{ε·d_G(i,j)}·H[j][k] along
    /// shortest η-paths, decided exactly against an upper enclosure of e^{ε·d_G}.
    #[test]
    fn qiu_p32_chained_bound(space in arb_clustered(9), opts in arb_options(),
                             eta in (15i64..45).prop_map(|x| q(x, 10))) {
        use mdp::exact::float::FI;
        let eps = q(1, 1);
        let p = params(&eta);
        let (built, _) = benders::benders(&space, &eps, &p, &opts, PREC, &Silent).unwrap();
        let lp = optimal::pmo_lp(&space, &eps, &p, PREC).unwrap();
        let n = space.n();
        let mut edge = vec![None; n * n];
        for &(u, v) in &lp.pairs {
            edge[u * n + v] = Some(space.fi(u, v).hi);
        }
        let m = &built.matrix;
        let adj = space.upper_adjacency(&|u, v| edge[u * n + v]);
        for i in 0..n {
            let dg = space.shortest_paths_upper(i, &adj);
            for j in (0..n).filter(|&j| j != i && dg[j].is_finite()) {
                let c = FI::from_q(&eps).mul(FI::point(dg[j])).exp().hi;
                let c = mdp::exact::q_from_f64(c);
                for k in 0..m.cols {
                    prop_assert!(m.get(i, k) <= &(&c * m.get(j, k)), "({i}, {j}, {k})");
                }
            }
        }
    }
}

/// QIU-P32 as master rows (`benders::chain`): on a zig-zag of points split in three
/// subsets, every chain joins two master records through free ones only, its constant is
/// ≥ the exact product of its path's c_up (each ≥ e^{ε·d}, so the row is implied by the LP)
/// and ≥ the upper end of an enclosure of e^{ε·Σd}, the
/// exactly private Benders output satisfies every chain row, the loop adds chain rows, and
/// the certified bound (whose Γ carries the chain rows' multipliers spread on their paths)
/// stays ≤ the whole LP's certified optimum.
#[test]
fn qiu_p32_chain_rows_are_implied_and_certified() {
    use mdp::benders::master::Master;
    use mdp::exact::float::FI;
    let pts = (0..12).map(|i| vec![q(i, 1), q((i * i) % 3, 2)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let (eps, eta) = (q(1, 2), q(3, 2));
    let p = params(&eta);
    let lp = optimal::pmo_lp(&space, &eps, &p, PREC).unwrap();
    let part = partition::partition(&space, &lp.pairs, 3, Method::KmRec, 1).unwrap();
    let dec = partition::decompose(space.n(), &lp.pairs, &part, MasterSet::Cover);
    let master = Master::new(&lp, &dec, true, false, usize::MAX);
    assert!(!master.chains.is_empty(), "no chain on the line");
    let n = space.n();
    for ch in &master.chains {
        let (a, b) = (dec.master[ch.i], dec.master[ch.j]);
        assert_eq!((ch.path[0], *ch.path.last().unwrap()), (a, b));
        assert!(ch.path.len() >= 3);
        assert!(ch.path[1..ch.path.len() - 1]
            .iter()
            .all(|&u| !dec.is_master[u]));
        let product = ch.path.windows(2).fold(Q::from(1u32), |acc, w| {
            acc * mdp::exact::q_from_f64(lp.c_up[w[0] * n + w[1]])
        });
        assert!(
            mdp::exact::q_from_f64(ch.c) >= product,
            "chain {a}->{b}: C below Π c_up"
        );
        let d = ch
            .path
            .windows(2)
            .fold(FI::point(0.0), |acc, w| acc.add(space.fi(w[0], w[1])));
        let e_hi = FI::from_q(&eps).mul(d).exp().hi;
        assert!(ch.c >= e_hi, "chain {a}->{b}: {} < e^(eps d) {e_hi}", ch.c);
    }
    let opts = Options {
        partitions: Some(3),
        seed: 1,
        stabilize: 0.0,
        ..Options::default()
    };
    let (built, report) = benders::benders(&space, &eps, &p, &opts, PREC, &Silent).unwrap();
    let m = &built.matrix;
    for ch in &master.chains {
        let c = mdp::exact::q_from_f64(ch.c);
        let (a, b) = (dec.master[ch.i], dec.master[ch.j]);
        for k in 0..m.cols {
            assert!(m.get(a, k) <= &(&c * m.get(b, k)), "chain ({a}, {b}, {k})");
        }
    }
    let added: usize = report.trace.iter().map(|t| t.chain_rows).sum();
    assert!(added > 0, "no chain row was added");
    let (_, opt_hi, _) = whole_lp_optimum(&space, &eps, &p);
    let lb = built.lower_bound.expect("a certified lower bound");
    assert!(lb <= opt_hi, "certified LB {lb} > OPT {opt_hi}");
    // And the chain rows' multipliers, spread on their paths, lose nothing of the master's
    // bound (spec/benders.md §3 with chain rows).
    assert!(
        lb >= report.lb_float * (1.0 - 1e-6) - 1e-9,
        "certified LB {lb} below the master's {}",
        report.lb_float
    );
}

/// QIU-P33 at the optimum: the master's point ŷ reaches the optimum (LB = OPT) while one
/// subproblem is left a slack of 1.08·10⁻⁹, just above the fit tolerance, by the solves'
/// accuracy. No cut is violated, and raising the penalty ×10 six times made Clarabel fail
/// (InsufficientProgress: the whole build errored, found by the QIU-P33 proptest). The
/// uniform mix of that point is an incumbent within 10⁻⁶ of the optimum, and the loop
/// converges (iteration 76).
#[test]
fn qiu_p33_slack_at_the_optimum_converges() {
    let pts = [
        (53, 11),
        (44, 49),
        (57, 12),
        (2, 37),
        (10, 43),
        (39, 39),
        (25, 22),
        (45, 33),
        (27, 36),
        (0, 19),
    ];
    let pts = pts.iter().map(|&(x, y)| vec![q(x, 10), q(y, 10)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let (eps, eta) = (q(113, 100), q(5, 2));
    let opts = Options {
        partitions: Some(4),
        method: Method::KmRec,
        master: MasterSet::Cover,
        gap: 1e-6,
        max_iter: 100,
        seed: 4831391947068778960,
        stabilize: 0.5,
        chains: false,
        master_neighbours: 1,
        ..Options::default()
    };
    converges_certified(&space, &eps, &eta, &opts);
}

/// QIU-CONV (layer copies): 20 random planar points in [0, 2]², ε = 2, η = 1, three subsets
/// (8 master records): without the layer's copies in the master the loop stalled, 150
/// iterations ending at a relative gap of 8·10⁻⁶ against the 10⁻⁶ asked (the lower bound
/// creeping after the cuts; measured 2026-11-27). With them the master holds the
/// subproblems' rows to the master records and the loop converges in 2 iterations; the
/// bound here leaves room for solver noise.
#[test]
fn qiu_conv_layer_copies_converge() {
    let pts = [
        (6477, 3017),
        (13019, 1449),
        (10718, 7314),
        (1160, 10149),
        (750, 8673),
        (1397, 1814),
        (8490, 16537),
        (2476, 4465),
        (12549, 18954),
        (11542, 7934),
        (19525, 932),
        (17169, 5792),
        (2885, 2356),
        (6170, 16323),
        (3615, 11632),
        (12778, 7448),
        (10955, 1256),
        (1192, 4119),
        (13608, 8552),
        (6283, 11711),
    ];
    let pts = pts
        .iter()
        .map(|&(x, y)| vec![q(x, 10000), q(y, 10000)])
        .collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let (eps, eta) = (q(2, 1), q(1, 1));
    let opts = Options {
        partitions: Some(3),
        gap: 1e-6,
        max_iter: 10,
        copies: true,
        ..Options::default()
    };
    let report = converges_certified(&space, &eps, &eta, &opts);
    assert!(report.iterations <= 5, "{} iterations", report.iterations);
}

/// Benders on `space` within `eta` converges (status) and its certified bounds bracket the
/// whole LP's optimum within 10⁻⁵ relative.
fn converges_certified(space: &Space, eps: &Q, eta: &Q, opts: &Options) -> benders::Report {
    let (built, report) = benders::benders(space, eps, &params(eta), opts, PREC, &Silent).unwrap();
    assert_eq!(
        report.status,
        Status::Converged,
        "{:?}",
        report.trace.last()
    );
    let (lb, ub) = certified_bounds_bracket(space, eps, eta, &built);
    assert!(ub - lb <= 1e-5 * ub, "certified gap [{lb}, {ub}]");
    report
}

/// QIU-P31 in the loop: each component of the η-graph keeps its own bounds. A lone record
/// 100 away from a 9-point cluster split in 3 subsets has its gap closed as soon as its
/// cut is in the master (its subproblem is then no longer solved) while the cluster's is
/// still open, and the certified bounds bracket the whole LP's optimum.
#[test]
fn qiu_p31_components_close_apart() {
    let mut pts: Vec<Vec<Q>> = (0..9).map(|i| vec![q(i, 1), q((i * i) % 5, 1)]).collect();
    pts.push(vec![q(100, 1), q(0, 1)]);
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let (eps, eta) = (q(1, 1), q(4, 1));
    let p = params(&eta);
    let opts = Options {
        partitions: Some(4),
        seed: 3,
        ..Options::default()
    };
    let (built, report) = benders::benders(&space, &eps, &p, &opts, PREC, &Silent).unwrap();
    assert_eq!(report.shape.components, 2);
    assert!(
        report.trace.iter().any(|t| t.closed == 1),
        "{:?}",
        report.trace.iter().map(|t| t.closed).collect::<Vec<_>>()
    );
    assert!(report.trace.windows(2).all(|w| w[0].closed <= w[1].closed));
    certified_bounds_bracket(&space, &eps, &eta, &built);
}

/// QIU-FIN: every iteration limit ends the loop (1 included: then either an incumbent
/// with valid bounds or the documented error).
#[test]
fn qiu_fin_terminates_under_every_limit() {
    let pts = (0..9).map(|i| vec![q(i, 1), q((i * i) % 5, 1)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let eta = q(3, 1);
    for max_iter in [1, 2, 5, 500] {
        let opts = Options {
            partitions: Some(3),
            max_iter,
            ..Options::default()
        };
        match benders::benders(&space, &q(1, 1), &params(&eta), &opts, PREC, &Silent) {
            Ok((_, r)) => assert!(r.iterations <= max_iter),
            Err(e) => assert!(e.to_string().contains("no feasible incumbent"), "{e}"),
        }
    }
}

/// Twelve planar points and PMO within η = 3: the small Benders instance of the file tests.
fn twelve_points() -> (Space, Pmo) {
    let pts = (0..12).map(|i| vec![q(i, 1), q((i * 7) % 5, 1)]).collect();
    let space = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
    let pmo = Pmo {
        within: Some(q(3, 1)),
        ..Pmo::default()
    };
    (space, pmo)
}

fn produced_file() -> Value {
    let (space, pmo) = twelve_points();
    let req = Request::new(&space, "points", q(1, 1));
    let options = Options {
        partitions: Some(3),
        ..Options::default()
    };
    let out = produce(
        &req,
        &Family::Benders(BendersMech { pmo, options }),
        &Silent,
    )
    .unwrap();
    let doc: Value = serde_json::from_str(out.certified.to_json()).unwrap();
    assert!(
        doc["certificate"]["benders"].is_object(),
        "{}",
        doc["certificate"]
    );
    doc
}

fn verdict(doc: &Value) -> (Verdict, String) {
    let file = io::mechanism_from_value(doc, &Limits::default()).unwrap();
    let opts = audit::Options {
        scope: audit::ScopePolicy::exactly(file.within.as_ref()),
        ..audit::Options::default()
    };
    let r = audit::audit(&file, &opts).unwrap();
    let detail = r
        .checks
        .iter()
        .find(|c| c.name == "benders")
        .map(|c| format!("{:?}: {}", c.verdict, c.detail))
        .unwrap_or_default();
    (r.verdict, detail)
}

/// A produced file passes with a verified gap; raising `lower` above the proof, lowering
/// `upper` below the matrix's loss, or removing / weakening the `lp_dual` it rests on never
/// passes.
#[test]
fn benders_certificate_tampering_never_passes() {
    let doc = produced_file();
    let (v, detail) = verdict(&doc);
    assert_eq!(v, Verdict::Pass, "{detail}");
    assert!(detail.contains("verified gap"), "{detail}");
    let lower = io::number(&doc["certificate"]["benders"]["lower"], "lower").unwrap();
    let upper = io::number(&doc["certificate"]["benders"]["upper"], "upper").unwrap();
    let tweak = |f: &dyn Fn(&mut Value)| {
        let mut d = doc.clone();
        f(&mut d);
        verdict(&d)
    };
    let above = &lower * (Q::from(1u32) + q(1, 1_000_000_000));
    for (what, (v, detail)) in [
        (
            "lower above the proof",
            tweak(&|d| d["certificate"]["benders"]["lower"] = io::q_value(&above)),
        ),
        (
            "upper below the loss",
            tweak(&|d| {
                d["certificate"]["benders"]["upper"] =
                    io::q_value(&(&upper * q(999_999, 1_000_000)))
            }),
        ),
        (
            "no lp_dual",
            tweak(&|d| {
                d["certificate"]
                    .as_object_mut()
                    .unwrap()
                    .remove("lower_bound");
            }),
        ),
        (
            "lp_dual emptied",
            tweak(&|d| {
                d["certificate"]["lower_bound"]["gamma"] = serde_json::json!([]);
            }),
        ),
    ] {
        assert_ne!(v, Verdict::Pass, "{what}: {detail}");
    }
}

/// Bad input: one line, exit 2, naming the field.
#[test]
fn benders_bad_input_is_one_line_exit_2() {
    let space = tmp(
        "benders",
        "pts.json",
        Some(br#"{"kind":"euclidean","points":[[0],[1],[2],[3]]}"#),
    );
    for (args, field) in [
        (vec!["--within", "2", "--partitions", "0"], "--partitions"),
        (vec!["--within", "2", "--partitions", "5"], "--partitions"),
        (vec!["--partitions", "2"], "--within"),
        (vec!["--within", "0", "--partitions", "2"], "--within"),
        (vec!["--within", "2", "--gap", "0"], "--gap"),
        (vec!["--within", "2", "--prior", "[1,2]"], "--prior"),
    ] {
        let mut a = vec![
            "build",
            "benders",
            "--space",
            &space,
            "--epsilon",
            "1",
            "-o",
            "-",
        ];
        a.extend(args.iter().copied());
        let (code, _, err) = mdp(&a);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert_eq!(err.trim().lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(field), "{args:?}: {err}");
    }
}

/// A solver "elsewhere" that sends every job through its JSON text and the worker's entry
/// point, as the Python package's Dask tasks do (`benders::remote`), and counts them.
struct ByText(std::sync::atomic::AtomicUsize);

impl benders::remote::SubSolver for ByText {
    fn solve(
        &self,
        jobs: Vec<benders::remote::SubJob>,
    ) -> Result<Vec<benders::sub::SubOutput>, mdp::lp::LpError> {
        self.0
            .fetch_add(jobs.len(), std::sync::atomic::Ordering::Relaxed);
        let texts = jobs
            .iter()
            .map(|j| benders::remote::solve_text(&benders::remote::job_text(j)))
            .collect::<Result<Vec<_>, _>>()?;
        benders::remote::outputs_of(&texts, &jobs)
    }
}

/// A solver elsewhere that fails (a lost worker), or answers with a forged result.
struct Broken(bool);

impl benders::remote::SubSolver for Broken {
    fn solve(
        &self,
        jobs: Vec<benders::remote::SubJob>,
    ) -> Result<Vec<benders::sub::SubOutput>, mdp::lp::LpError> {
        if self.0 {
            return Err(mdp::lp::LpError::Remote("worker lost".into()));
        }
        let mut out: Vec<_> = jobs
            .iter()
            .map(benders::remote::solve_job)
            .collect::<Result<_, _>>()?;
        // One entry too few in the primal: refused by its shape.
        let text = serde_json::to_string(&{
            let mut o = out[0].clone();
            o.x.pop();
            o
        })
        .unwrap();
        out[0] = benders::remote::output_of(&text, &jobs[0])?;
        Ok(out)
    }
}

/// Subproblems solved elsewhere (issue 36 part 3): through their JSON texts and the
/// worker's entry point the build writes the same bytes as here, and a failing or forged
/// answer is the build's error (never a quiet stop with an incumbent).
#[test]
fn subproblems_elsewhere_give_the_same_file() {
    let (space, pmo) = twelve_points();
    let req = Request::new(&space, "points", q(1, 1));
    let run = |subproblems| {
        let options = Options {
            partitions: Some(3),
            max_iter: 6,
            subproblems,
            ..Options::default()
        };
        produce(
            &req,
            &Family::Benders(BendersMech {
                pmo: pmo.clone(),
                options,
            }),
            &Silent,
        )
    };
    let here = run(benders::remote::Subproblems::Here).unwrap();
    let solver = std::sync::Arc::new(ByText(0.into()));
    let there = run(benders::remote::Subproblems::Elsewhere(solver.clone())).unwrap();
    assert!(solver.0.load(std::sync::atomic::Ordering::Relaxed) > 0);
    assert_eq!(here.certified.to_json(), there.certified.to_json());
    for broken in [true, false] {
        let err = run(benders::remote::Subproblems::Elsewhere(
            std::sync::Arc::new(Broken(broken)),
        ))
        .expect_err("a broken solver elsewhere is an error");
        assert!(err.to_string().contains("subproblems elsewhere"), "{err}");
    }
}

/// A worker refuses malformed jobs before any work (`remote::check`): wrong lengths, pair
/// ends out of range, non-finite or negative numbers, a constant below 1, two fixed ends,
/// sizes past the bound, and text that is not a job.
#[test]
fn malformed_jobs_are_refused() {
    use benders::remote::{job_text, solve_text, SubJob};
    use benders::sub::{End, SubInput, SubPair};
    let good = SubJob {
        input: SubInput {
            k: 2,
            n_free: 2,
            n_fixed: 1,
            cost: vec![0.0, 1.0, 1.0, 0.0],
            pairs: vec![
                SubPair {
                    a: End::Free(0),
                    b: End::Free(1),
                    c: 2.0,
                },
                SubPair {
                    a: End::Free(1),
                    b: End::Free(0),
                    c: 2.0,
                },
                SubPair {
                    a: End::Free(0),
                    b: End::Fixed(0),
                    c: 2.0,
                },
            ],
            y: vec![0.5, 0.5],
            penalty: 10.0,
        },
        cuts: true,
    };
    assert!(solve_text(&job_text(&good)).is_ok());
    let bad: Vec<Box<dyn Fn(&mut SubJob)>> = vec![
        Box::new(|j| j.input.cost.pop().map(drop).unwrap_or(())),
        Box::new(|j| j.input.y.push(0.1)),
        Box::new(|j| j.input.pairs[0].b = End::Free(2)),
        Box::new(|j| j.input.pairs[2].b = End::Fixed(1)),
        Box::new(|j| j.input.pairs[2].a = End::Fixed(0)),
        Box::new(|j| j.input.pairs[0].c = 0.5),
        Box::new(|j| j.input.pairs[0].c = f64::NAN),
        Box::new(|j| j.input.cost[0] = -1.0),
        Box::new(|j| j.input.y[0] = f64::INFINITY),
        Box::new(|j| j.input.penalty = 0.0),
        Box::new(|j| j.input.k = 0),
        Box::new(|j| j.input.n_free = usize::MAX),
        Box::new(|j| j.input.n_fixed = 1 << 40),
    ];
    for (i, f) in bad.iter().enumerate() {
        let mut j = good.clone();
        f(&mut j);
        let text = serde_json::to_string(&j).unwrap_or_default();
        let err = solve_text(&text).expect_err(&format!("mutation {i} accepted"));
        assert!(err.to_string().contains("malformed"), "{i}: {err}");
    }
    assert!(solve_text("{\"input\": 3}").is_err());
    assert!(solve_text("").is_err());
    // Answers: the cut is recomputed from γ on the driver (a forged constant or
    // coefficient is replaced); a value below the primal's cost, γ off its rows or
    // negative, or a primal of the wrong size is refused.
    let out = benders::remote::solve_job(&good).unwrap();
    assert!(!out.cut.gamma.is_empty());
    let read = |o: &benders::sub::SubOutput| {
        benders::remote::output_of(&serde_json::to_string(o).unwrap(), &good)
    };
    assert_eq!(read(&out).unwrap(), out);
    let mut forged = out.clone();
    forged.cut.constant += 1.0;
    forged.cut.coef[0] -= 5.0;
    assert_eq!(read(&forged).unwrap().cut, out.cut);
    let refused: Vec<Box<dyn Fn(&mut benders::sub::SubOutput)>> = vec![
        Box::new(|o| o.value = -1.0),
        Box::new(|o| o.slack = -1.0),
        Box::new(|o| o.cut.gamma.push((u32::MAX, 1.0))),
        Box::new(|o| o.cut.gamma[0].1 = -1.0),
        Box::new(|o| o.x.push(0.0)),
    ];
    for (i, f) in refused.iter().enumerate() {
        let mut o = out.clone();
        f(&mut o);
        assert!(read(&o).is_err(), "forged answer {i} accepted");
    }
}
