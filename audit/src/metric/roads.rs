//! A graph metric without its n×n table (issue 56 part 1, `spec/lp.md` §4.9).
//!
//! [`Space::from_graph`](super::Space::from_graph) runs an exact Dijkstra from every node
//! and keeps n² rationals: 14.2 GB and 142 s at 10⁴ road nodes, before any LP. A city's
//! LP and its certificate need far less: the privacy rows are the graph's edges (the
//! chaining argument of `structured::edges`), and the costs are the distances from the
//! inputs to K outputs. `Roads` keeps the edges and answers
//! * d(s, t) exactly by a Dijkstra from s that stops when t is settled ([`Roads::exact`]),
//! * an `f64` enclosure of d(s, t) from the rows of the sources it was asked to keep
//!   ([`Roads::keep_rows`]: K rows of 16 bytes per node), else by a point-to-point search.
//!
//! The enclosure rows are two float Dijkstras, one on weights rounded down with sums
//! rounded down, one rounded up. The "sum" a ⊕ w = fl↓(a + w↓) is monotone in a and never
//! below a (w↓ ≥ 0), so Dijkstra computes the least ⊕-fold over all paths; along a
//! shortest path the fold stays ≤ the exact prefix lengths (fl↓ is monotone and ≤ its
//! argument), hence the lower row is ≤ d. The upper row is the rounded-up length of a real
//! path, hence ≥ d.

use super::{HeapItem as Item, Ord64 as F};
use crate::error::{input_error as merr, InputError};
use crate::exact::float::FI;
use crate::exact::Q;
use rayon::prelude::*;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::sync::{Arc, RwLock};

/// A connected graph with positive rational weights, its distances computed on demand.
#[derive(Debug)]
pub struct Roads {
    /// Each node's (neighbour, exact weight).
    adj: Vec<Vec<(u32, Q)>>,
    /// Each node's (neighbour, weight rounded down, weight rounded up).
    fadj: Vec<Vec<(u32, f64, f64)>>,
    /// The edges as given (loops dropped), for the file and the pin.
    edges: Vec<(u32, u32, Q)>,
    /// Enclosure rows kept for some sources ([`Roads::keep_rows`]).
    rows: RwLock<HashMap<u32, Arc<Vec<FI>>>>,
    /// Exact distances of pairs decided by [`Roads::decide_pairs`], (min, max) order.
    pairs: RwLock<HashMap<(u32, u32), Q>>,
}

/// Nodes the point searches of one [`Roads::decide_pairs`] call may settle before the
/// caller stops with an input error: 10⁸ exact Dijkstra steps (each a rational addition and
/// comparison, about a microsecond: under two minutes). A certificate on a road network's
/// edges needs a few nodes per pair (the ball of the edge's length).
pub const MAX_SEARCH_NODES: u64 = 100_000_000;

impl Roads {
    /// Check the nodes, the weights (> 0) and connectivity, as
    /// [`Space::from_graph`](super::Space::from_graph) does, without the table.
    pub fn new(n: usize, edges: &[(usize, usize, Q)]) -> Result<Roads, InputError> {
        if n == 0 || n > u32::MAX as usize {
            return Err(merr("nodes", format!("must be in 1..={}", u32::MAX)));
        }
        let mut adj: Vec<Vec<(u32, Q)>> = vec![Vec::new(); n];
        let mut kept = Vec::with_capacity(edges.len());
        for (e, (u, v, w)) in edges.iter().enumerate() {
            if *u >= n || *v >= n {
                return Err(merr(
                    format!("edges[{e}]"),
                    format!("node index out of range 0..{n}"),
                ));
            }
            if *w <= 0u32 {
                return Err(merr(format!("edges[{e}][2]"), "edge weight must be > 0"));
            }
            if u == v {
                continue;
            }
            adj[*u].push((*v as u32, w.clone()));
            adj[*v].push((*u as u32, w.clone()));
            kept.push((*u as u32, *v as u32, w.clone()));
        }
        let mut seen = vec![false; n];
        let mut stack = vec![0usize];
        seen[0] = true;
        while let Some(x) = stack.pop() {
            for &(y, _) in &adj[x] {
                if !std::mem::replace(&mut seen[y as usize], true) {
                    stack.push(y as usize);
                }
            }
        }
        if let Some(t) = seen.iter().position(|s| !s) {
            return Err(merr(
                "edges",
                format!("graph is disconnected: node {t} is unreachable from node 0"),
            ));
        }
        let fadj = adj
            .iter()
            .map(|l| {
                l.iter()
                    .map(|(v, w)| {
                        let f = FI::from_q(w);
                        (*v, f.lo.max(0.0), f.hi)
                    })
                    .collect()
            })
            .collect();
        Ok(Roads {
            adj,
            fadj,
            edges: kept,
            rows: RwLock::new(HashMap::new()),
            pairs: RwLock::new(HashMap::new()),
        })
    }

    /// Number of nodes.
    pub fn n(&self) -> usize {
        self.adj.len()
    }

    /// The edges (a, b, w), loops dropped, in the order given.
    pub fn edges(&self) -> &[(u32, u32, Q)] {
        &self.edges
    }

    /// The exact d(s, t): Dijkstra over rationals from s, stopped when t is settled (its
    /// work is the ball of radius d(s, t)).
    pub fn exact(&self, s: usize, t: usize) -> Q {
        if s == t {
            return Q::from(0u32);
        }
        if let Some(d) = self.decided(s, t) {
            return d;
        }
        self.point(s, t, u64::MAX)
            .0
            .expect("the graph is connected (checked when built)")
    }

    /// d(s, t) from a pair decided earlier ([`Roads::decide_pairs`]).
    fn decided(&self, s: usize, t: usize) -> Option<Q> {
        let key = (s.min(t) as u32, s.max(t) as u32);
        self.pairs.read().expect("pairs lock").get(&key).cloned()
    }

    /// d(s, t) by an exact search from s settling at most `budget` nodes (`None` past
    /// it), and the nodes it settled.
    fn point(&self, s: usize, t: usize, budget: u64) -> (Option<Q>, u64) {
        let (mut found, mut settled) = (None, 0u64);
        self.search(s, None, |v, d| {
            settled += 1;
            if v == t {
                found = Some(d.clone());
                false
            } else {
                settled < budget
            }
        });
        (found, settled)
    }

    /// Decide d(u, v) exactly for every pair of `pairs` (each once), settling at most
    /// [`MAX_SEARCH_NODES`] nodes in all; afterwards [`Roads::exact`] and [`Roads::fi`] of
    /// these pairs are lookups. `Err(budget)` past it: what a file's certificate can make
    /// the auditor compute is bounded (the caller stops with exit 2).
    pub fn decide_pairs(&self, pairs: &[(usize, usize)]) -> Result<(), u64> {
        self.decide_pairs_within(pairs, MAX_SEARCH_NODES)
    }

    fn decide_pairs_within(&self, pairs: &[(usize, usize)], budget: u64) -> Result<(), u64> {
        let mut todo: Vec<(u32, u32)> = pairs
            .iter()
            .filter(|(u, v)| u != v)
            .map(|&(u, v)| (u.min(v) as u32, u.max(v) as u32))
            .filter(|&(a, b)| self.decided(a as usize, b as usize).is_none())
            .collect();
        todo.sort_unstable();
        todo.dedup();
        let mut left = budget;
        let mut found = HashMap::with_capacity(todo.len());
        for (a, b) in todo {
            let (d, settled) = self.point(a as usize, b as usize, left);
            left = left.saturating_sub(settled);
            found.insert((a, b), d.ok_or(budget)?);
        }
        self.pairs.write().expect("pairs lock").extend(found);
        Ok(())
    }

    /// Every node t with d(s, t) ≤ r, with d(s, t) exact, in order of distance.
    pub fn within(&self, s: usize, r: &Q) -> Vec<(usize, Q)> {
        let mut out = Vec::new();
        self.search(s, Some(r), |v, d| {
            out.push((v, d.clone()));
            true
        });
        out
    }

    /// Exact Dijkstra from `s`, calling `settled(node, d)` in order of d until it returns
    /// false; nodes beyond `radius` are not settled.
    fn search(&self, s: usize, radius: Option<&Q>, mut settled: impl FnMut(usize, &Q) -> bool) {
        let mut dist: HashMap<u32, Q> = HashMap::new();
        let mut done: HashMap<u32, ()> = HashMap::new();
        let mut heap = BinaryHeap::new();
        dist.insert(s as u32, Q::from(0u32));
        heap.push(Item(Q::from(0u32), s));
        while let Some(Item(d, u)) = heap.pop() {
            if done.insert(u as u32, ()).is_some() {
                continue;
            }
            if radius.is_some_and(|r| d > *r) || !settled(u, &d) {
                return;
            }
            for (v, w) in &self.adj[u] {
                if done.contains_key(v) {
                    continue;
                }
                let nd = &d + w;
                if radius.is_some_and(|r| nd > *r) {
                    continue;
                }
                if dist.get(v).is_none_or(|old| nd < *old) {
                    dist.insert(*v, nd.clone());
                    heap.push(Item(nd, *v as usize));
                }
            }
        }
    }

    /// A rigorous `f64` enclosure of d(s, t): from a kept row of s or t, else from two
    /// float searches from s stopped at t.
    pub fn fi(&self, s: usize, t: usize) -> FI {
        if s == t {
            return FI::point(0.0);
        }
        if let Some(d) = self.decided(s, t) {
            return FI::from_q(&d);
        }
        {
            let rows = self.rows.read().expect("rows lock");
            if let Some(r) = rows.get(&(s as u32)) {
                return r[t];
            }
            if let Some(r) = rows.get(&(t as u32)) {
                return r[s];
            }
        }
        FI::new(
            self.float_search(s, Some(t), false)[0],
            self.float_search(s, Some(t), true)[0],
        )
    }

    /// Keep the enclosure rows of `sources` (16 bytes a node each), computed in parallel;
    /// afterwards [`Roads::fi`] from or to them is a lookup.
    pub fn keep_rows(&self, sources: &[usize]) {
        let todo: Vec<usize> = {
            let rows = self.rows.read().expect("rows lock");
            let mut t: Vec<usize> = sources
                .iter()
                .copied()
                .filter(|s| !rows.contains_key(&(*s as u32)))
                .collect();
            t.sort_unstable();
            t.dedup();
            t
        };
        let made: Vec<(u32, Arc<Vec<FI>>)> = todo
            .par_iter()
            .map(|&s| {
                let lo = self.float_search(s, None, false);
                let hi = self.float_search(s, None, true);
                let row = lo.iter().zip(&hi).map(|(&l, &h)| FI::new(l, h)).collect();
                (s as u32, Arc::new(row))
            })
            .collect();
        self.rows.write().expect("rows lock").extend(made);
    }

    /// Drop the kept rows.
    pub fn forget_rows(&self) {
        self.rows.write().expect("rows lock").clear();
    }

    /// Float Dijkstra from s with sums rounded down on weights rounded down (`up` false:
    /// every value ≤ d) or up on weights rounded up (`up` true: every value ≥ d). With
    /// `target`, stops when it is settled and returns its value alone; else every node's.
    fn float_search(&self, s: usize, target: Option<usize>, up: bool) -> Vec<f64> {
        let n = self.n();
        let mut dist = vec![f64::INFINITY; n];
        let mut done = vec![false; n];
        let mut heap = BinaryHeap::new();
        dist[s] = 0.0;
        heap.push(Reverse((F(0.0), s as u32)));
        while let Some(Reverse((F(d), u))) = heap.pop() {
            let u = u as usize;
            if std::mem::replace(&mut done[u], true) {
                continue;
            }
            if target == Some(u) {
                return vec![d];
            }
            for &(v, lo, hi) in &self.fadj[u] {
                let v = v as usize;
                if done[v] {
                    continue;
                }
                let nd = if up {
                    FI::point(d).add(FI::point(hi)).hi
                } else {
                    FI::point(d).add(FI::point(lo)).lo.max(d)
                };
                if nd < dist[v] {
                    dist[v] = nd;
                    heap.push(Reverse((F(nd), v as u32)));
                }
            }
        }
        dist
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::{parse_rational, q_from_f64};

    fn q(s: &str) -> Q {
        parse_rational(s).unwrap()
    }

    /// A 5-node graph whose direct edge 0–4 is longer than the path through 1, 2, 3.
    fn graph() -> (usize, Vec<(usize, usize, Q)>) {
        let e = vec![
            (0, 1, q("0.1")),
            (1, 2, q("0.2")),
            (2, 3, q("0.3")),
            (3, 4, q("0.4")),
            (0, 4, q("1.5")),
            (1, 3, q("0.7")),
        ];
        (5, e)
    }

    #[test]
    fn distances_equal_the_full_table_and_rows_enclose_them() {
        let (n, e) = graph();
        let table = crate::metric::Space::from_graph(n, &e).unwrap();
        let roads = Roads::new(n, &e).unwrap();
        for s in 0..n {
            for t in 0..n {
                let crate::metric::ExactDistance::Rational(d) = table.exact(s, t) else {
                    unreachable!()
                };
                assert_eq!(roads.exact(s, t), d, "d({s}, {t})");
                let f = roads.fi(s, t);
                assert!(q_from_f64(f.lo) <= d && d <= q_from_f64(f.hi));
            }
        }
        roads.keep_rows(&[0, 3]);
        for t in 0..n {
            let crate::metric::ExactDistance::Rational(d) = table.exact(0, t) else {
                unreachable!()
            };
            let f = roads.fi(t, 0);
            assert!(q_from_f64(f.lo) <= d && d <= q_from_f64(f.hi));
            assert!(f.hi - f.lo <= 1e-15, "rows are tight: {f:?}");
        }
        assert_eq!(roads.exact(0, 4), q("1"));
        let ball: Vec<usize> = roads
            .within(0, &q("0.3"))
            .into_iter()
            .map(|x| x.0)
            .collect();
        assert_eq!(ball, vec![0, 1, 2]);
    }

    #[test]
    fn decided_pairs_are_exact_and_the_search_budget_holds() {
        let (n, e) = graph();
        let roads = Roads::new(n, &e).unwrap();
        roads
            .decide_pairs(&[(0, 4), (4, 0), (1, 3), (2, 2)])
            .unwrap();
        assert_eq!(roads.exact(4, 0), q("1"));
        assert_eq!(roads.fi(0, 4), FI::from_q(&q("1")));
        assert_eq!(roads.exact(3, 1), q("0.5"));
        // A path of 3·10⁴ nodes: one far pair fits, 10⁴ of them do not.
        let m = 30_000;
        let path: Vec<(usize, usize, Q)> = (0..m - 1).map(|i| (i, i + 1, q("1"))).collect();
        let long = Roads::new(m, &path).unwrap();
        long.decide_pairs(&[(0, m - 1)]).unwrap();
        assert_eq!(long.exact(m - 1, 0), Q::from((m - 1) as u64));
        let far: Vec<(usize, usize)> = (1..100).map(|i| (i, m - 1 - i)).collect();
        assert_eq!(long.decide_pairs_within(&far, 100_000), Err(100_000));
        assert!(
            long.decided(1, m - 2).is_none(),
            "nothing is kept from a refused call"
        );
        long.decide_pairs_within(&far[..2], 100_000).unwrap();
        // The budget is the number of nodes settled: d(0, m − 1) settles all m of them.
        let fresh = Roads::new(m, &path).unwrap();
        assert_eq!(
            fresh.decide_pairs_within(&[(0, m - 1)], m as u64 - 1),
            Err(m as u64 - 1)
        );
        fresh.decide_pairs_within(&[(0, m - 1)], m as u64).unwrap();
    }

    /// Rows are kept for the sources asked for (once each), found from either end, and
    /// dropped on request: the memory a container's audit holds is K rows, not more.
    #[test]
    fn kept_rows_are_the_sources_asked_for_until_forgotten() {
        let (n, e) = graph();
        let roads = Roads::new(n, &e).unwrap();
        let kept = |r: &Roads| {
            let mut k: Vec<u32> = r.rows.read().unwrap().keys().copied().collect();
            k.sort_unstable();
            k
        };
        roads.keep_rows(&[3, 0, 3]);
        assert_eq!(kept(&roads), vec![0, 3]);
        let row = Arc::clone(&roads.rows.read().unwrap()[&3]);
        roads.keep_rows(&[3, 4]);
        assert_eq!(kept(&roads), vec![0, 3, 4]);
        assert!(
            Arc::ptr_eq(&row, &roads.rows.read().unwrap()[&3]),
            "not computed twice"
        );
        assert_eq!(roads.fi(1, 3), row[1]);
        roads.forget_rows();
        assert!(kept(&roads).is_empty());
    }

    #[test]
    fn disconnected_and_bad_weights_are_refused() {
        assert!(Roads::new(3, &[(0, 1, q("1"))]).is_err());
        assert!(Roads::new(2, &[(0, 1, q("0"))]).is_err());
        assert!(Roads::new(2, &[(0, 2, q("1"))]).is_err());
    }
}
