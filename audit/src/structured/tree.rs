//! The box-pair audit of a coordinate metric (`spec/soundness.md` §7.2).
//!
//! Column w is ε·d private iff ln H\[·\]\[w\] is ε-Lipschitz. The inputs go into a k-d tree
//! of boxes (outward-rounded float enclosures of the coordinates; unit vectors in R³ for
//! haversine). For an ordered pair of boxes (A, B) and a column w, if
//!
//!   fl(max_A h̃\[·\]\[w\] · fl(1 / min_B h̃\[·\]\[w\])) ≤ e^{T·dist_lo(A, B)} / (1 + κ)   (rounded down)
//!
//! then every u ∈ A, v ∈ B has H\[u\]\[w\]/H\[v\]\[w\] ≤ e^{T·d(u,v)} (the filter's error model
//! applied to the two extreme rows, and dist_lo ≤ d(u, v)); a column whose rows in A are
//! all 0 is settled too. The recursion starts at (root, root) with every column (or at a
//! share's box pairs, [`Tree::restrict`]), keeps the columns not settled, and splits the
//! larger box; at two leaves each pair is decided on
//! its open columns by the exhaustive audit's filter and exact fallback. No n×n table is
//! formed: distances are enclosed when a leaf pair needs them.

use super::{eps_from_ratio, estimate, Cols, Outcome, OverBudget, Pair, Run, Structure};
use crate::dense::{Dense, Normalized};
use crate::exact::float::{div_down, FI};
use crate::exact::{f64_down, f64_up, Interval, Q};
use crate::metric::{MetricKind, Space};
use crate::privacy::KAPPA;
use std::cmp::Ordering as Cmp;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A split audit's shares start from at least this many box pairs each
/// ([`Tree::restrict`]).
const SHARE_PAIRS: usize = 16;
/// ... and from at most this many box pairs in all (2²⁰ shares would otherwise deal 2²⁴).
const MAX_SHARE_PAIRS: usize = 1 << 20;

/// Leaves hold at most this many inputs.
pub const LEAF: usize = 16;
/// Box pairs with fewer triples than this are visited on the current thread.
const SPLIT_WORK: usize = 1 << 15;

struct Node {
    /// Rows `perm[start..end]`.
    start: usize,
    end: usize,
    lo: Vec<f64>,
    hi: Vec<f64>,
    kids: Option<(usize, usize)>,
    /// Every row of the box is float-safe.
    safe: bool,
}

impl Node {
    fn len(&self) -> usize {
        self.end - self.start
    }
}

/// The k-d tree of one mechanism's inputs, with per-box column extremes of h̃.
pub struct Tree<'a> {
    space: &'a Space,
    m: &'a Dense,
    norm: &'a Normalized,
    nodes: Vec<Node>,
    perm: Vec<u32>,
    /// Per node, per column: max and min of h̃ over the box's rows (node-major).
    hmax: Vec<f64>,
    hmin: Vec<f64>,
    /// η of the scope, exactly and as [f64 below, f64 above].
    within: Option<(Q, f64, f64)>,
    max_prec: u64,
    max_exact_triples: u64,
    /// The box pairs the recursions start from: (root, root), or a share of the pairs a
    /// few levels below it ([`Tree::restrict`]).
    roots: Vec<(usize, usize)>,
    /// [`super::digest`] of the dealt box pairs (0 before a restriction).
    layout: u64,
}

/// The metric kinds the tree handles.
pub fn supports(kind: MetricKind) -> bool {
    matches!(
        kind,
        MetricKind::Euclidean
            | MetricKind::Manhattan
            | MetricKind::Chebyshev
            | MetricKind::Haversine
    )
}

/// Bytes the tree needs for n inputs and K columns (at most n/4 boxes: leaves hold at
/// least LEAF/2 inputs), for the memory estimate before any work.
pub fn bytes(n: usize, k: usize) -> u64 {
    let boxes = (n as u64 / 4).max(1);
    boxes.saturating_mul(k as u64).saturating_mul(16)
}

/// Where to split `keys` (sorted, more than [`LEAF`] of them): the position nearest the
/// middle at which the key changes, so that the two boxes are disjoint in that coordinate
/// and pairs across them have a positive distance bound; among positions leaving each side
/// at least LEAF/2 keys (so leaves keep ≥ LEAF/2 inputs and [`bytes`]' count of boxes
/// holds). Where no such position exists, the middle. Coordinates with many equal values
/// (the clustered randomizer's {0, r} and {0, 1} coordinates, `mdp build clustered-rr`)
/// were split at the median before, inside a run of equal keys: both boxes then held the
/// tied value, their distance bound stayed 0 down to the leaves, and every cross-cluster
/// column stayed open (k = 10⁴ did not finish in 5.5 min).
fn split_point(keys: &[f64]) -> usize {
    let (n, min_side) = (keys.len(), LEAF / 2);
    let mid = n / 2;
    let changes = |i: &usize| keys[*i - 1] < keys[*i];
    let below = (min_side..=mid).rev().find(changes);
    let above = (mid + 1..=n - min_side).find(changes);
    match (below, above) {
        (Some(b), Some(a)) if a - mid < mid - b => a,
        (Some(b), _) => b,
        (None, Some(a)) => a,
        (None, None) => mid,
    }
}

impl<'a> Tree<'a> {
    pub fn new(
        space: &'a Space,
        m: &'a Dense,
        norm: &'a Normalized,
        within: Option<&Q>,
        max_prec: u64,
        max_exact_triples: u64,
    ) -> Tree<'a> {
        assert!(supports(space.kind()), "tree audit of a coordinate metric");
        let n = m.rows;
        let mut t = Tree {
            space,
            m,
            norm,
            nodes: Vec::new(),
            perm: (0..n as u32).collect(),
            hmax: Vec::new(),
            hmin: Vec::new(),
            within: within.map(|e| (e.clone(), f64_down(e), f64_up(e))),
            max_prec,
            max_exact_triples,
            roots: vec![(0, 0)],
            layout: 0,
        };
        let mut perm = std::mem::take(&mut t.perm);
        t.build(&mut perm, 0);
        t.perm = perm;
        t.extremes();
        t
    }

    /// Keep only `part`'s share of the ordered pairs: (root, root) is split (as the
    /// recursion splits it) until there are at least `SHARE_PAIRS` (16) box pairs per share or
    /// only leaf pairs are left; they are ordered box with itself first, then touching
    /// boxes (distance bound 0), then the rest (a stable sort: the near pairs, which cost
    /// the most, are spread evenly), and share i takes every `of`-th from the i-th. The
    /// recursion splits a box pair into box pairs that partition its ordered pairs, so the
    /// shares partition them too. One share is the whole tree: (root, root) stays.
    pub fn restrict(&mut self, part: super::Part) {
        if part.of == 1 {
            return;
        }
        let mut pairs = vec![(0usize, 0usize)];
        let want = SHARE_PAIRS.saturating_mul(part.of).min(MAX_SHARE_PAIRS);
        while pairs.len() < want {
            let mut next = Vec::with_capacity(4 * pairs.len());
            let mut grew = false;
            for &(a, b) in &pairs {
                if self.both_leaves(a, b) {
                    next.push((a, b));
                } else {
                    next.extend(self.split(a, b));
                    grew = true;
                }
            }
            pairs = next;
            if !grew {
                break;
            }
        }
        pairs.sort_by_cached_key(|&(a, b)| match (a == b, self.box_distance(a, b) > 0.0) {
            (true, _) => 0u8,
            (false, false) => 1,
            (false, true) => 2,
        });
        // The dealt list by its boxes' rows: the same digest iff the same boxes (the
        // permutation and the node ranges) in the same order.
        let node = |x: usize| [self.nodes[x].start as u64, self.nodes[x].end as u64];
        self.layout = super::digest(
            self.perm.iter().map(|&u| u as u64).chain(
                pairs
                    .iter()
                    .flat_map(|&(a, b)| node(a).into_iter().chain(node(b))),
            ),
        );
        self.roots = part.take(pairs);
    }

    /// Build the subtree over `idx` (rows `perm[start..start + idx.len()]`), split on the
    /// widest coordinate at [`split_point`]; returns its node index.
    fn build(&mut self, idx: &mut [u32], start: usize) -> usize {
        let dims = self.space.float_coords(0).len();
        let (mut lo, mut hi) = (vec![f64::INFINITY; dims], vec![f64::NEG_INFINITY; dims]);
        let mut safe = true;
        for &u in idx.iter() {
            for (c, x) in self.space.float_coords(u as usize).iter().enumerate() {
                lo[c] = lo[c].min(x.lo);
                hi[c] = hi[c].max(x.hi);
            }
            safe &= self.norm.safe[u as usize];
        }
        let id = self.nodes.len();
        self.nodes.push(Node {
            start,
            end: start + idx.len(),
            lo: lo.clone(),
            hi: hi.clone(),
            kids: None,
            safe,
        });
        if idx.len() > LEAF {
            let dim = (0..dims)
                .max_by(|&a, &b| (hi[a] - lo[a]).total_cmp(&(hi[b] - lo[b])))
                .unwrap_or(0);
            let key = |u: &u32| {
                let x = self.space.float_coords(*u as usize)[dim];
                0.5 * x.lo + 0.5 * x.hi
            };
            let mut keyed: Vec<(f64, u32)> = idx.iter().map(|u| (key(u), *u)).collect();
            keyed.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
            for (slot, &(_, u)) in idx.iter_mut().zip(&keyed) {
                *slot = u;
            }
            let keys: Vec<f64> = keyed.iter().map(|x| x.0).collect();
            let at = split_point(&keys);
            let (left, right) = idx.split_at_mut(at);
            let l = self.build(left, start);
            let r = self.build(right, start + at);
            self.nodes[id].kids = Some((l, r));
        }
        id
    }

    /// Column extremes of every box, leaves from rows and inner boxes from their children
    /// (children have larger indices: filled from the end).
    fn extremes(&mut self) {
        let k = self.norm.k;
        let count = self.nodes.len();
        let (mut hmax, mut hmin) = (vec![0.0f64; count * k], vec![f64::INFINITY; count * k]);
        for id in (0..count).rev() {
            let node = &self.nodes[id];
            match node.kids {
                Some((l, r)) => {
                    for w in 0..k {
                        hmax[id * k + w] = hmax[l * k + w].max(hmax[r * k + w]);
                        hmin[id * k + w] = hmin[l * k + w].min(hmin[r * k + w]);
                    }
                }
                None => {
                    let (mx, mn) = (
                        &mut hmax[id * k..(id + 1) * k],
                        &mut hmin[id * k..(id + 1) * k],
                    );
                    for &u in &self.perm[node.start..node.end] {
                        for (w, &h) in self.norm.hrow(u as usize).iter().enumerate() {
                            mx[w] = mx[w].max(h);
                            mn[w] = mn[w].min(h);
                        }
                    }
                }
            }
        }
        self.hmax = hmax;
        self.hmin = hmin;
    }

    /// A lower bound on d(u, v) for u in box a and v in box b.
    fn box_distance(&self, a: usize, b: usize) -> f64 {
        if a == b {
            return 0.0;
        }
        let (x, y) = (&self.nodes[a], &self.nodes[b]);
        let gaps: Vec<f64> = (0..x.lo.len())
            .map(|c| {
                let g1 = FI::point(y.lo[c]).sub(FI::point(x.hi[c])).lo;
                let g2 = FI::point(x.lo[c]).sub(FI::point(y.hi[c])).lo;
                g1.max(g2).max(0.0)
            })
            .collect();
        self.space.gap_distance_lo(&gaps)
    }

    /// The columns of `cols` that box pair (a, b) does not settle at threshold `tf`
    /// (`None` = a box outside the error model: all stay open).
    fn open_columns(&self, a: usize, b: usize, dlo: f64, tf: FI, cols: &[u32]) -> Vec<u32> {
        let (na, nb) = (&self.nodes[a], &self.nodes[b]);
        if !(na.safe && nb.safe) {
            return cols.to_vec();
        }
        let k = self.norm.k;
        let c = tf.mul(FI::point(dlo)).exp().lo;
        let limit = div_down(c, FI::point(1.0).add(FI::point(KAPPA)).hi);
        let (amax, bmin) = (
            &self.hmax[a * k..(a + 1) * k],
            &self.hmin[b * k..(b + 1) * k],
        );
        cols.iter()
            .copied()
            .filter(|&w| {
                let x = amax[w as usize];
                x != 0.0 && !(x * (1.0 / bmin[w as usize]) <= limit)
            })
            .collect()
    }

    fn pairs_of(&self, a: usize, b: usize) -> u64 {
        let (x, y) = (self.nodes[a].len() as u64, self.nodes[b].len() as u64);
        if a == b {
            x * (x - 1)
        } else {
            x * y
        }
    }

    /// The two boxes to visit next for (a, b), or the four of a box with itself.
    fn split(&self, a: usize, b: usize) -> Vec<(usize, usize)> {
        let (na, nb) = (&self.nodes[a], &self.nodes[b]);
        if a == b {
            let (l, r) = na.kids.expect("inner box");
            return vec![(l, l), (l, r), (r, l), (r, r)];
        }
        match (na.kids, nb.kids) {
            (Some((l, r)), Some(_)) if na.len() >= nb.len() => vec![(l, b), (r, b)],
            (_, Some((l, r))) => vec![(a, l), (a, r)],
            (Some((l, r)), None) => vec![(l, b), (r, b)],
            (None, None) => unreachable!("two leaves are decided, not split"),
        }
    }

    fn both_leaves(&self, a: usize, b: usize) -> bool {
        self.nodes[a].kids.is_none() && self.nodes[b].kids.is_none()
    }

    fn rows(&self, a: usize) -> &[u32] {
        &self.perm[self.nodes[a].start..self.nodes[a].end]
    }

    /// Whether (u, v) is in scope: `Some(true/false)`, or `None` when undecidable.
    fn in_scope(&self, u: usize, v: usize, d: FI) -> Option<bool> {
        let Some((eta, elo, ehi)) = &self.within else {
            return Some(true);
        };
        if d.hi <= *elo {
            Some(true)
        } else if d.lo > *ehi {
            Some(false)
        } else {
            self.space
                .cmp_distance(u, v, eta, self.max_prec)
                .map(|o| o != Cmp::Greater)
        }
    }

    fn out_of_scope(&self, dlo: f64) -> bool {
        self.within.as_ref().is_some_and(|(_, _, ehi)| dlo > *ehi)
    }

    /// The check's recursion over box pairs.
    fn visit(&self, run: &Run, a: usize, b: usize, cols: &[u32]) {
        if run.stopped() {
            return;
        }
        let dlo = self.box_distance(a, b);
        if self.out_of_scope(dlo) {
            return;
        }
        let open = self.open_columns(a, b, dlo, run.tf, cols);
        run.box_tests
            .fetch_add(cols.len() as u64, Ordering::Relaxed);
        let settled = (cols.len() - open.len()) as u64 * self.pairs_of(a, b);
        run.settled_triples.fetch_add(settled, Ordering::Relaxed);
        if open.is_empty() {
            return;
        }
        if self.both_leaves(a, b) {
            for &u in self.rows(a) {
                for &v in self.rows(b) {
                    let (u, v) = (u as usize, v as usize);
                    if u == v {
                        continue;
                    }
                    let d = self.space.fi(u, v);
                    let pair = Pair { u, v, id: 0 };
                    match self.in_scope(u, v, d) {
                        Some(false) => continue,
                        None => {
                            run.undecided(pair);
                            continue;
                        }
                        Some(true) => {}
                    }
                    let zero = d.hi == 0.0;
                    run.decide_pair(pair, Cols::Some(&open), d, zero, |prec| {
                        self.space.enclosure(u, v, prec)
                    });
                }
            }
            return;
        }
        let next = self.split(a, b);
        let work = open.len() * self.pairs_of(a, b) as usize;
        if work < SPLIT_WORK {
            for (x, y) in next {
                self.visit(run, x, y, &open);
            }
        } else {
            rayon::scope(|s| {
                for (x, y) in next {
                    let open = &open;
                    s.spawn(move |_| self.visit(run, x, y, open));
                }
            });
        }
    }

    /// The candidate search: the same recursion at a threshold L that rises to the best
    /// float estimate seen; leaf pairs within 1e-6 of L are kept.
    fn search(&self, s: &Search, a: usize, b: usize, cols: &[u32]) {
        let dlo = self.box_distance(a, b);
        if self.out_of_scope(dlo) {
            return;
        }
        let l = f64::from_bits(s.best.load(Ordering::Relaxed));
        let open = self.open_columns(a, b, dlo, FI::point(l * (1.0 + SEARCH_SLACK)), cols);
        if open.is_empty() {
            return;
        }
        if self.both_leaves(a, b) {
            let mut found = Vec::new();
            for &u in self.rows(a) {
                for &v in self.rows(b) {
                    let (u, v) = (u as usize, v as usize);
                    let d = self.space.fi(u, v);
                    if u == v || self.in_scope(u, v, d) == Some(false) {
                        continue;
                    }
                    let rt = Cols::Some(&open).max_ratio(self.norm, u, v);
                    let e = estimate(self.norm, u, v, rt, 0.5 * (d.lo + d.hi), d.hi == 0.0);
                    found.push((e, Pair { u, v, id: 0 }));
                }
            }
            // Keep the near-ties of this leaf pair's best and of the best so far.
            let local = found
                .iter()
                .map(|x| x.0)
                .filter(|e| e.is_finite())
                .fold(0.0, f64::max);
            let now = f64::from_bits(s.best.fetch_max(local.to_bits(), Ordering::Relaxed));
            let bar = now.max(local) * (1.0 - 1e-6);
            found.retain(|x| x.0 >= bar);
            if !found.is_empty() {
                let mut all = s.found.lock().unwrap_or_else(|e| e.into_inner());
                all.extend(found);
                if all.len() > 2 * KEEP {
                    let best = f64::from_bits(s.best.load(Ordering::Relaxed)) * (1.0 - 1e-6);
                    all.retain(|x| x.0 >= best);
                    if all.len() > KEEP {
                        all.sort_by(|x, y| y.0.total_cmp(&x.0).then(x.1.cmp(&y.1)));
                        all.truncate(KEEP);
                    }
                }
            }
            return;
        }
        let next = self.split(a, b);
        if open.len() * (self.pairs_of(a, b) as usize) < SPLIT_WORK {
            for (x, y) in next {
                self.search(s, x, y, &open);
            }
        } else {
            rayon::scope(|sc| {
                for (x, y) in next {
                    let open = &open;
                    sc.spawn(move |_| self.search(s, x, y, open));
                }
            });
        }
    }
}

/// The candidate search settles a box pair whose columns all stay within e^{L·(1 + this)·d}
/// (L the best estimate so far): its pairs can beat L by at most this fraction, below the
/// tight ε's target width (`privacy::TARGET_REL_WIDTH`), and the verification pass that
/// follows catches any that do. Without it a mechanism whose every pair attains the
/// maximum (the clustered randomizer: every cross-cluster pair at ratio e^{α₀}) was
/// searched to every leaf pair and every pair kept as a near-tie.
const SEARCH_SLACK: f64 = 1e-11;

/// Near-ties the search holds at most (sorted, the largest kept); `best_candidates` uses
/// far fewer.
const KEEP: usize = 4096;

/// The state of a candidate search (the best finite estimate, as f64 bits: positive
/// doubles order as their bits).
struct Search {
    best: AtomicU64,
    found: Mutex<Vec<(f64, Pair)>>,
}

impl Structure for Tree<'_> {
    fn check(&self, t: &Q, all: bool) -> Result<Outcome, OverBudget> {
        let run = Run::new(
            self.m,
            self.norm,
            t,
            all,
            self.max_prec,
            self.max_exact_triples,
        );
        let cols: Vec<u32> = (0..self.norm.k as u32).collect();
        rayon::scope(|sc| {
            for &(a, b) in &self.roots {
                let (run, cols) = (&run, &cols);
                sc.spawn(move |_| self.visit(run, a, b, cols));
            }
        });
        run.finish()
    }

    fn candidates(&self) -> Result<Vec<Pair>, OverBudget> {
        let s = Search {
            best: AtomicU64::new(0f64.to_bits()),
            found: Mutex::new(Vec::new()),
        };
        let cols: Vec<u32> = (0..self.norm.k as u32).collect();
        rayon::scope(|sc| {
            for &(a, b) in &self.roots {
                let (s, cols) = (&s, &cols);
                sc.spawn(move |_| self.search(s, a, b, cols));
            }
        });
        Ok(crate::privacy::best_candidates(
            s.found.into_inner().unwrap_or_else(|e| e.into_inner()),
        ))
    }

    /// Ordered pairs in this tree's share (all n(n − 1) before a restriction).
    fn pairs(&self) -> u64 {
        self.roots.iter().map(|&(a, b)| self.pairs_of(a, b)).sum()
    }

    fn layout(&self) -> u64 {
        self.layout
    }

    fn pair_eps(&self, p: Pair) -> Result<Option<Interval>, ()> {
        let (r, _) = self.norm.exact_ratio(self.m, p.u, p.v, 0..self.norm.k);
        let zero = self.space.is_zero(p.u, p.v);
        eps_from_ratio(r, zero, self.max_prec, |prec| {
            self.space.enclosure(p.u, p.v, prec)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::{split_point, LEAF};

    #[test]
    fn splits_between_distinct_keys_nearest_the_middle() {
        // 36 zeros then 64 ones: the only change is at 36, not the median 50.
        let keys: Vec<f64> = (0..100).map(|i| if i < 36 { 0.0 } else { 1.0 }).collect();
        assert_eq!(split_point(&keys), 36);
        // Changes at 30 and 60 around the middle 50: the nearer one.
        let keys: Vec<f64> = (0..100).map(|i| (i / 30) as f64).collect();
        assert_eq!(split_point(&keys), 60);
        // Distinct keys: the median, as before.
        let keys: Vec<f64> = (0..101).map(|i| i as f64).collect();
        assert_eq!(split_point(&keys), 50);
        // All equal: the middle.
        assert_eq!(split_point(&[0.5; 40]), 20);
        // A change too near an end is not taken (leaves keep LEAF/2 inputs).
        let keys: Vec<f64> = (0..40)
            .map(|i| if i < LEAF / 2 - 1 { 0.0 } else { 1.0 })
            .collect();
        assert_eq!(split_point(&keys), 20);
        let keys: Vec<f64> = (0..40)
            .map(|i| if i < LEAF / 2 { 0.0 } else { 1.0 })
            .collect();
        assert_eq!(split_point(&keys), LEAF / 2);
    }
}
