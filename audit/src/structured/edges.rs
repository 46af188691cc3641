//! The edge-only audit of a graph's shortest-path metric (`spec/soundness.md` §7.1).
//!
//! With d the shortest-path metric of a connected graph with positive weights, M is ε·d
//! private on the pairs with d ≤ η iff every edge (a, b) with w(a, b) ≤ η satisfies
//! H\[a\]\[x\] ≤ e^{ε·w(a,b)} H\[b\]\[x\] in both directions, for every output x:
//! * if: a pair (u, v) with d(u, v) ≤ η has a shortest path of edges each of weight
//!   ≤ d(u, v) ≤ η, and the edge inequalities multiply along it to e^{ε·d(u,v)};
//! * only if: an edge with w ≤ η is a pair with d(a, b) ≤ w ≤ η, so privacy gives the
//!   bound e^{ε·d(a,b)} ≤ e^{ε·w(a,b)}.
//!
//! By the same two arguments the tight ε is the maximum over those edges of
//! ln R_ab / w(a, b). The check costs |E|·K triples instead of n²·K, and needs no table of
//! shortest paths.

use super::{eps_from_ratio, estimate, Cols, Outcome, OverBudget, Pair, Run, Structure};
use crate::dense::{Dense, Normalized};
use crate::error::InputError;
use crate::exact::float::FI;
use crate::exact::{Interval, Q};
use rayon::prelude::*;

/// A connected graph with positive rational edge weights (the `graph` metric's edges).
#[derive(Clone, Debug)]
pub struct Graph {
    pub n: usize,
    /// (a, b, w(a, b)); loops are dropped.
    edges: Vec<(u32, u32, Q)>,
    fw: Vec<FI>,
}

impl Graph {
    /// Check nodes (0-based), weights (> 0) and connectivity (a disconnected graph has
    /// infinite distances: an input error, as for the `graph` metric).
    pub fn new(n: usize, edges: Vec<(usize, usize, Q)>, path: &str) -> Result<Graph, InputError> {
        let e = |p: String, m: String| InputError {
            path: p,
            message: m,
        };
        if n == 0 || n > u32::MAX as usize {
            return Err(e(
                format!("{path}.nodes"),
                format!("must be in 1..={}", u32::MAX),
            ));
        }
        let mut parent: Vec<u32> = (0..n as u32).collect();
        fn root(p: &mut [u32], mut x: u32) -> u32 {
            while p[x as usize] != x {
                p[x as usize] = p[p[x as usize] as usize];
                x = p[x as usize];
            }
            x
        }
        let mut kept = Vec::with_capacity(edges.len());
        let mut parts = n;
        for (i, (a, b, w)) in edges.into_iter().enumerate() {
            if a >= n || b >= n {
                return Err(e(
                    format!("{path}.edges[{i}]"),
                    format!("node index out of range 0..{n}"),
                ));
            }
            if w <= 0u32 {
                return Err(e(
                    format!("{path}.edges[{i}][2]"),
                    "edge weight must be > 0".into(),
                ));
            }
            if a == b {
                continue;
            }
            let (ra, rb) = (root(&mut parent, a as u32), root(&mut parent, b as u32));
            if ra != rb {
                parent[ra as usize] = rb;
                parts -= 1;
            }
            kept.push((a as u32, b as u32, w));
        }
        if parts > 1 {
            let r0 = root(&mut parent, 0);
            let t = (1..n as u32)
                .find(|&x| root(&mut parent, x) != r0)
                .unwrap_or(0);
            return Err(e(
                format!("{path}.edges"),
                format!("graph is disconnected: node {t} is unreachable from node 0"),
            ));
        }
        let fw = kept.iter().map(|(_, _, w)| FI::from_q(w)).collect();
        Ok(Graph { n, edges: kept, fw })
    }

    /// The same metric as a [`crate::metric::Space`] without its n×n table
    /// ([`crate::metric::Roads`]): what the `lp_dual` check of a container reads.
    pub fn space(&self) -> crate::metric::Space {
        let edges: Vec<(usize, usize, Q)> = self
            .edge_list()
            .map(|(a, b, w)| (a, b, w.clone()))
            .collect();
        crate::metric::Space::from_roads(self.n, &edges)
            .expect("checked when the graph was read: nodes, weights and connectivity")
    }

    /// The edges (a, b, w(a, b)), loops dropped.
    pub fn edge_list(&self) -> impl Iterator<Item = (usize, usize, &Q)> + '_ {
        self.edges
            .iter()
            .map(|(a, b, w)| (*a as usize, *b as usize, w))
    }

    /// The smallest weight of an edge between a and b (either direction).
    pub fn weight_between(&self, a: usize, b: usize) -> Option<Q> {
        self.edges
            .iter()
            .filter(|(x, y, _)| {
                (*x as usize, *y as usize) == (a, b) || (*x as usize, *y as usize) == (b, a)
            })
            .map(|(_, _, w)| w.clone())
            .min()
    }
}

/// The edge-only audit of one mechanism on a graph, in a scope (all pairs, or d ≤ η).
pub struct Edges<'a> {
    graph: &'a Graph,
    m: &'a Dense,
    norm: &'a Normalized,
    /// The ordered edges in scope: (a, b, edge index).
    ordered: Vec<Pair>,
    max_prec: u64,
    max_exact_triples: u64,
    /// [`super::digest`] of the ordered edges before a restriction (0 before one).
    layout: u64,
}

impl<'a> Edges<'a> {
    pub fn new(
        graph: &'a Graph,
        m: &'a Dense,
        norm: &'a Normalized,
        within: Option<&Q>,
        max_prec: u64,
        max_exact_triples: u64,
    ) -> Edges<'a> {
        let ordered = graph
            .edges
            .iter()
            .enumerate()
            .filter(|(_, (_, _, w))| within.is_none_or(|eta| w <= eta))
            .flat_map(|(id, &(a, b, _))| {
                let (a, b) = (a as usize, b as usize);
                [Pair { u: a, v: b, id }, Pair { u: b, v: a, id }]
            })
            .collect();
        Edges {
            graph,
            m,
            norm,
            ordered,
            max_prec,
            max_exact_triples,
            layout: 0,
        }
    }

    /// Keep only `part`'s share of the ordered edges (round-robin).
    pub fn restrict(&mut self, part: super::Part) {
        if part.of == 1 {
            return;
        }
        self.layout = super::digest(
            [self.ordered.len() as u64].into_iter().chain(
                self.ordered
                    .iter()
                    .flat_map(|p| [p.u as u64, p.v as u64, p.id as u64]),
            ),
        );
        self.ordered = part.take(std::mem::take(&mut self.ordered));
    }

    fn weight(&self, id: usize) -> &Q {
        &self.graph.edges[id].2
    }
}

impl Structure for Edges<'_> {
    fn check(&self, t: &Q, all: bool) -> Result<Outcome, OverBudget> {
        let run = Run::new(
            self.m,
            self.norm,
            t,
            all,
            self.max_prec,
            self.max_exact_triples,
        );
        self.ordered.par_iter().for_each(|&p| {
            if run.stopped() {
                return;
            }
            let w = self.weight(p.id);
            run.decide_pair(p, Cols::All, self.graph.fw[p.id], false, |_| {
                Interval::point(w.clone())
            });
        });
        run.finish()
    }

    fn candidates(&self) -> Result<Vec<Pair>, OverBudget> {
        let est = self
            .ordered
            .par_iter()
            .map(|&p| {
                let rt = Cols::All.max_ratio(self.norm, p.u, p.v);
                let d = self.graph.fw[p.id];
                (
                    estimate(self.norm, p.u, p.v, rt, 0.5 * (d.lo + d.hi), false),
                    p,
                )
            })
            .collect();
        Ok(crate::privacy::best_candidates(est))
    }

    fn pairs(&self) -> u64 {
        self.ordered.len() as u64
    }

    fn layout(&self) -> u64 {
        self.layout
    }

    fn pair_eps(&self, p: Pair) -> Result<Option<Interval>, ()> {
        let (r, _) = self.norm.exact_ratio(self.m, p.u, p.v, 0..self.norm.k);
        let w = self.weight(p.id);
        eps_from_ratio(r, false, self.max_prec, |_| Interval::point(w.clone()))
    }
}
