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
/// middle at which the key changes (the lower of two equally near), so that the two boxes
/// are disjoint in that coordinate and pairs across them have a positive distance bound;
/// among positions leaving each side
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
            let mut keyed: Vec<(f64, u32)> =
                idx.iter().map(|&u| (self.split_key(u, dim), u)).collect();
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

    /// The key input `u` is sorted by when a box is split on coordinate `dim`: the midpoint
    /// of its coordinate's enclosure.
    fn split_key(&self, u: u32, dim: usize) -> f64 {
        let x = self.space.float_coords(u as usize)[dim];
        0.5 * x.lo + 0.5 * x.hi
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
    use super::{bytes, split_point, supports, Node, Tree, LEAF};
    use crate::dense::{Dense, Normalized};
    use crate::exact::Q;
    use crate::metric::{MetricKind, Space};
    use crate::structured::{Part, Structure};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// n points in `dim` coordinates: uniform on a 1/1000 grid in [−5, 5) (negative too: a
    /// key that is not monotone in the coordinate shows), or (`clustered`) on {0, 1} per
    /// coordinate (runs of equal keys, as the clustered randomizer's), some duplicated; and
    /// a random positive n × k matrix.
    fn instance(seed: u64, n: usize, dim: usize, k: usize, clustered: bool) -> (Space, Dense) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut pts: Vec<Vec<Q>> = Vec::with_capacity(n);
        for i in 0..n {
            if i > 0 && rng.gen_bool(0.05) {
                let j = rng.gen_range(0..i);
                pts.push(pts[j].clone());
                continue;
            }
            pts.push(
                (0..dim)
                    .map(|_| match clustered {
                        true => Q::from(rng.gen_range(0u32..2)),
                        false => Q::from_signeds(rng.gen_range(-5_000i64..5_000), 1000),
                    })
                    .collect(),
            );
        }
        let space = Space::from_points(MetricKind::Euclidean, pts, None).expect("points");
        let data = (0..n * k).map(|_| rng.gen_range(0.01..1.0)).collect();
        (space, Dense::new(n, k, data, "matrix").expect("matrix"))
    }

    /// The tree's shape as its doc states it. Every row is in exactly one leaf; a box's
    /// children split its rows; a box of more than LEAF rows is split and no leaf holds
    /// more than LEAF (nor fewer than LEAF/2 once n > LEAF: [`bytes`] counts on it); a box
    /// is the tightest box around its rows' enclosures (the distance bounds rest on it);
    /// the split is on a widest coordinate, every left key at most every right one; the
    /// column extremes are its rows' max and min of h̃; and [`bytes`] bounds the extremes'
    /// storage from above, by at most 4×.
    #[test]
    fn the_tree_partitions_its_rows_into_tight_boxes_split_on_the_widest_coordinate() {
        for (seed, &n) in [1usize, 2, 16, 17, 40, 300, 1000].iter().enumerate() {
            for dim in 1..=3 {
                for clustered in [false, true] {
                    let k = 3;
                    let (space, m) = instance(seed as u64, n, dim, k, clustered);
                    let norm = Normalized::new(&m);
                    let t = Tree::new(&space, &m, &norm, None, 256, u64::MAX);
                    let mut seen = t.perm.clone();
                    seen.sort_unstable();
                    assert_eq!(seen, (0..n as u32).collect::<Vec<_>>(), "a permutation");
                    assert_eq!((t.nodes[0].start, t.nodes[0].end), (0, n));
                    for (id, node) in t.nodes.iter().enumerate() {
                        let rows = t.rows(id);
                        for c in 0..dim {
                            let xs = rows.iter().map(|&u| space.float_coords(u as usize)[c]);
                            let lo = xs.clone().map(|x| x.lo).fold(f64::INFINITY, f64::min);
                            let hi = xs.map(|x| x.hi).fold(f64::NEG_INFINITY, f64::max);
                            assert_eq!((node.lo[c], node.hi[c]), (lo, hi), "box {id}");
                        }
                        for w in 0..k {
                            let hs = rows.iter().map(|&u| norm.hrow(u as usize)[w]);
                            let mx = hs.clone().fold(0.0, f64::max);
                            let mn = hs.fold(f64::INFINITY, f64::min);
                            assert_eq!(t.hmax[id * k + w], mx, "max of box {id}");
                            assert_eq!(t.hmin[id * k + w], mn, "min of box {id}");
                        }
                        match node.kids {
                            None => {
                                assert!(node.len() <= LEAF, "leaf {id}: {}", node.len());
                                assert!(n <= LEAF || node.len() >= LEAF / 2, "leaf {id}");
                            }
                            Some((l, r)) => {
                                let (nl, nr): (&Node, &Node) = (&t.nodes[l], &t.nodes[r]);
                                assert!(node.len() > LEAF, "box {id} split");
                                assert_eq!(
                                    (nl.start, nl.end, nr.end),
                                    (node.start, nr.start, node.end)
                                );
                                let width = |c: usize| node.hi[c] - node.lo[c];
                                let widest = (0..dim).map(width).fold(0.0, f64::max);
                                let separated = (0..dim).filter(|&c| width(c) == widest).any(|c| {
                                    let left = t.rows(l).iter().map(|&u| t.split_key(u, c));
                                    let right = t.rows(r).iter().map(|&u| t.split_key(u, c));
                                    left.fold(f64::NEG_INFINITY, f64::max)
                                        <= right.fold(f64::INFINITY, f64::min)
                                });
                                assert!(separated, "box {id} split on a widest coordinate");
                            }
                        }
                    }
                    let stored = (t.nodes.len() * k * 16) as u64;
                    assert!(stored <= bytes(n, k), "n = {n}: {stored} > {}", bytes(n, k));
                    assert!(
                        bytes(n, k) <= 4 * stored,
                        "n = {n}: estimate {}",
                        bytes(n, k)
                    );
                }
            }
        }
    }

    /// A split audit's shares: each starts from some box pairs (none is left idle), no box
    /// pair is dealt twice, their ordered pairs add up to n(n − 1) (as the whole tree's do),
    /// and each share's list starts with the boxes paired with themselves, then touching
    /// boxes (boxes of clustered points), then the rest.
    #[test]
    fn shares_deal_every_box_pair_once_self_pairs_first() {
        for clustered in [false, true] {
            shares_of(600, clustered);
        }
    }

    fn shares_of(n: usize, clustered: bool) {
        let (space, m) = instance(7, n, 2, 2, clustered);
        let norm = Normalized::new(&m);
        let whole = Tree::new(&space, &m, &norm, None, 256, u64::MAX);
        let all = (n * (n - 1)) as u64;
        assert_eq!(whole.pairs(), all);
        assert_eq!(whole.roots, vec![(0, 0)]);
        let mut layouts = vec![whole.layout()];
        for of in 2..6 {
            let mut dealt = Vec::new();
            let mut total = 0;
            for i in 0..of {
                let mut t = Tree::new(&space, &m, &norm, None, 256, u64::MAX);
                t.restrict(Part::new(i, of).unwrap());
                // Every share of one split names the same dealt list; another split another.
                if i == 0 {
                    layouts.push(t.layout());
                }
                assert_eq!(t.layout(), *layouts.last().unwrap(), "share {i} of {of}");
                assert!(!t.roots.is_empty(), "share {i} of {of} is empty");
                let class = |&(a, b): &(usize, usize)| match (a == b, t.box_distance(a, b) > 0.0) {
                    (true, _) => 0,
                    (false, false) => 1,
                    (false, true) => 2,
                };
                let classes: Vec<u8> = t.roots.iter().map(class).collect();
                assert_eq!(
                    classes[0], 0,
                    "share {i} of {of} starts with a box and itself"
                );
                assert!(
                    classes.windows(2).all(|w| w[0] <= w[1]),
                    "share {i} of {of}"
                );
                assert!(classes.contains(&2), "share {i} of {of} holds apart boxes");
                // Clustered points fill boxes of equal points: touching boxes.
                assert_eq!(classes.contains(&1), clustered, "share {i} of {of}");
                total += t.pairs();
                dealt.extend(t.roots.iter().copied());
            }
            assert_eq!(total, all, "{of} shares");
            let count = dealt.len();
            dealt.sort_unstable();
            dealt.dedup();
            assert_eq!(dealt.len(), count, "a box pair dealt twice");
        }
        // A tree not restricted has no dealt list (layout 0); a split's digest is of its
        // boxes (two splits dealing the same list share it).
        assert_eq!(layouts[0], 0);
        assert!(layouts[1..].iter().all(|&l| l != 0), "{layouts:?}");
    }

    #[test]
    fn only_coordinate_metrics_have_boxes() {
        for kind in [
            MetricKind::Euclidean,
            MetricKind::Manhattan,
            MetricKind::Chebyshev,
            MetricKind::Haversine,
        ] {
            assert!(supports(kind));
        }
        assert!(!supports(MetricKind::Explicit) && !supports(MetricKind::Graph));
    }

    #[test]
    fn splits_between_distinct_keys_nearest_the_middle() {
        // 36 zeros then 64 ones: the only change is at 36, not the median 50.
        let keys: Vec<f64> = (0..100).map(|i| if i < 36 { 0.0 } else { 1.0 }).collect();
        assert_eq!(split_point(&keys), 36);
        // Changes at 30 and 60 around the middle 50: the nearer one.
        let keys: Vec<f64> = (0..100).map(|i| (i / 30) as f64).collect();
        assert_eq!(split_point(&keys), 60);
        // Changes at 45 and 90: the nearer one, 45; at 40 and 60, equally near: the lower.
        let keys: Vec<f64> = (0..100).map(|i| (i / 45) as f64).collect();
        assert_eq!(split_point(&keys), 45);
        let keys: Vec<f64> = (0..100)
            .map(|i| ((i >= 40) as u8 + (i >= 60) as u8) as f64)
            .collect();
        assert_eq!(split_point(&keys), 40);
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
