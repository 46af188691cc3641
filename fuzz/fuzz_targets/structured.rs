//! Differential fuzzing of the structured audit (`spec/soundness.md` §7) against the
//! exhaustive one, plus the container's `.npy` header parser.
//!
//! Byte 0 chooses: even = a `.npy` header parse of the rest (must not panic; an accepted
//! header's data offset is inside the input's bounds claim); odd = a mechanism. For a
//! mechanism, byte 1 = metric kind (euclidean, manhattan, chebyshev, haversine, graph),
//! byte 2 = n (2..=40), byte 3 = K (1..=12), byte 4 = ε in 1/16 steps; then coordinates
//! (or edges) and entries as bytes: entries are 2^(-b/8) or 0 for b = 255, so near-ties
//! and zeros are common. The tree or edge check must give the exhaustive verdict, and
//! their tight-ε enclosures must intersect; split into 2–5 shares of the pairs (`Part`,
//! the next byte), the shares' broken pairs must be disjoint and make up the whole's.
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp_audit::dense::{Dense, Normalized};
use mdp_audit::exact::Q;
use mdp_audit::metric::{MetricKind, Space};
use mdp_audit::privacy::{self, Decision, Prepared};
use mdp_audit::structured::edges::{Edges, Graph};
use mdp_audit::structured::tree::Tree;
use mdp_audit::structured::{tight_eps, Part, Structure};

fn take(data: &[u8], i: &mut usize) -> u8 {
    let b = data.get(*i).copied().unwrap_or(0);
    *i += 1;
    b
}

fuzz_target!(|data: &[u8]| {
    if data.is_empty() {
        return;
    }
    if data[0] % 2 == 0 {
        let _ = mdp_audit::io::npy::parse_header(&data[1..], "m");
        return;
    }
    let mut i = 1;
    let kind = take(data, &mut i) % 5;
    let n = 2 + take(data, &mut i) as usize % 39;
    let k = 1 + take(data, &mut i) as usize % 12;
    let eps = Q::from_unsigneds(1 + take(data, &mut i) as u32, 16u32);
    let (space, graph) = if kind == 4 {
        let mut edges = Vec::new();
        for v in 1..n {
            let u = take(data, &mut i) as usize % v;
            edges.push((
                u,
                v,
                Q::from_unsigneds(1 + take(data, &mut i) as u32 % 8, 4u32),
            ));
        }
        for _ in 0..(take(data, &mut i) % 8) {
            let (u, v) = (
                take(data, &mut i) as usize % n,
                take(data, &mut i) as usize % n,
            );
            edges.push((
                u,
                v,
                Q::from_unsigneds(1 + take(data, &mut i) as u32 % 8, 4u32),
            ));
        }
        let Ok(space) = Space::from_graph(n, &edges) else {
            return;
        };
        let Ok(g) = Graph::new(n, edges, "metric") else {
            return;
        };
        (space, Some(g))
    } else {
        let mk = [
            MetricKind::Euclidean,
            MetricKind::Manhattan,
            MetricKind::Chebyshev,
            MetricKind::Haversine,
        ][kind as usize];
        let pts: Vec<Vec<Q>> = (0..n)
            .map(|_| {
                (0..2)
                    .map(|_| Q::from_signeds(take(data, &mut i) as i64 % 90 - 45, 8))
                    .collect()
            })
            .collect();
        let Ok(space) = Space::from_points(mk, pts, None) else {
            return;
        };
        (space, None)
    };
    let entries: Vec<f64> = (0..n * k)
        .map(|_| match take(data, &mut i) {
            255 => 0.0,
            b => 2f64.powf(-(b as f64) / 8.0),
        })
        .collect();
    let Ok(m) = Dense::new(n, k, entries, "matrix") else {
        return;
    };
    let norm = Normalized::new(&m);
    let matrix = m.to_matrix();
    let Ok(p) = Prepared::new(&space, &matrix, None, 4096) else {
        return;
    };
    let ratios = privacy::float_ratios(&p);
    let want = privacy::check_pure(&p, &ratios, &eps).decision;
    let tight = privacy::tight_pure_eps(&p, &ratios).map(|(e, _)| e);
    let tree;
    let edges;
    let s: &dyn Structure = match &graph {
        Some(g) => {
            edges = Edges::new(g, &m, &norm, None, 4096, u64::MAX);
            &edges
        }
        None => {
            tree = Tree::new(&space, &m, &norm, None, 4096, u64::MAX);
            &tree
        }
    };
    let of = 2 + take(data, &mut i) as usize % 4;
    let broken = |s: &dyn Structure| -> Vec<(usize, usize, usize)> {
        let out = s.check(&eps, true).expect("no budget");
        out.fails.iter().map(|p| (p.u, p.v, p.id)).collect()
    };
    let whole = broken(s);
    let mut union = Vec::new();
    for index in 0..of {
        let part = Part::new(index, of).expect("valid share");
        union.extend(match &graph {
            Some(g) => {
                let mut e = Edges::new(g, &m, &norm, None, 4096, u64::MAX);
                e.restrict(part);
                broken(&e)
            }
            None => {
                let mut t = Tree::new(&space, &m, &norm, None, 4096, u64::MAX);
                t.restrict(part);
                broken(&t)
            }
        });
    }
    let found = union.len();
    union.sort();
    union.dedup();
    assert_eq!(found, union.len(), "a pair broken in two shares");
    assert_eq!(union, whole, "shares against the whole");
    let out = s.check(&eps, false).expect("no budget");
    let got = if !out.fails.is_empty() {
        Decision::Fails
    } else if out.undecided.is_some() {
        Decision::Undecided
    } else {
        Decision::Holds
    };
    assert_eq!(want, got, "verdict at ε = {eps}");
    if let (Ok(a), Ok((b, _))) = (tight, tight_eps(s)) {
        match (&a.hi, &b.hi) {
            (None, None) => {}
            (Some(ah), Some(bh)) => assert!(
                a.lo <= *bh && b.lo <= *ah,
                "tight ε {:?} vs {:?}",
                a.to_f64(),
                b.to_f64()
            ),
            _ => panic!("one tight ε infinite: {:?} vs {:?}", a.to_f64(), b.to_f64()),
        }
    }
});
