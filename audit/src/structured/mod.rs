//! The sub-quadratic exact audit of pure ε·d privacy (`spec/soundness.md` §7): the same
//! verdict and tight ε as the exhaustive audit of [`crate::privacy`], from fewer than n²
//! pairs where the metric has structure.
//!
//! * [`edges`]: a graph's shortest-path metric. M is ε·d private iff every *edge* (a, b)
//!   satisfies H\[a\]\[w\] ≤ e^{ε·w(a,b)} H\[b\]\[w\] (chain along shortest paths), and the
//!   tight ε is the maximum over edges of ln R_ab / w(a,b): |E|·K work.
//! * [`tree`]: coordinate metrics. Column w is private iff ln H\[·\]\[w\] is ε-Lipschitz;
//!   a pair of k-d tree boxes (A, B) is settled for w when
//!   max_A H\[·\]\[w\] / min_B H\[·\]\[w\] ≤ e^{ε·mindist(A, B)}, both sides enclosed; the
//!   pairs and columns not settled are split, and leaf pairs are decided by the exhaustive
//!   audit's filter with its exact fallback.
//!
//! A structure answers one question, [`Structure::check`]: which ordered pairs in scope
//! break R_uv ≤ e^{T·d(u,v)} at a threshold T. The verdict is that question at the claimed
//! ε; the tight ε ([`tight_eps`]) is the exhaustive audit's scheme on top of it: exact ε of
//! the best candidate pairs, then checks at the upper end until no pair breaks it. The
//! (ε, δ) tight ε does not chain or prune (a sum over outputs per pair) and is not
//! computed here.

pub mod blocks;
pub mod edges;
pub mod report;
pub mod tree;

use crate::dense::{Dense, Normalized};
use crate::exact::float::mul_down;
use crate::exact::{Interval, Q};
use crate::privacy::{eps_of, ratio_within, Decision, EpsEnclosure, KAPPA};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

/// Share `index` of `of` disjoint shares of the ordered pairs in scope, so one audit can
/// run on several workers (`blocks::audit_block`): the shares partition the pairs, so M is
/// private iff every share is, and the tight ε is the maximum of the shares' (as for
/// blocks of columns). Graphs share their ordered edges round-robin; the k-d tree its box
/// pairs a few levels below (root, root) (`tree::Tree::restrict`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Part {
    pub index: usize,
    pub of: usize,
}

impl Part {
    /// Every pair.
    pub const WHOLE: Part = Part { index: 0, of: 1 };

    /// Share `index` of `of` (1 ≤ of ≤ 2²⁰, index < of).
    pub fn new(index: usize, of: usize) -> Result<Part, crate::error::InputError> {
        if !(1..=1 << 20).contains(&of) || index >= of {
            return Err(crate::io::input_error(
                "part",
                format!("share {index} of {of}: need 1 ≤ shares ≤ 2^20 and 0 ≤ share < shares"),
            ));
        }
        Ok(Part { index, of })
    }

    /// This share of `items` dealt round-robin (the i-th item to share i mod `of`).
    fn take<T>(&self, items: Vec<T>) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(i, _)| i % self.of == self.index)
            .map(|(_, x)| x)
            .collect()
    }
}

/// A digest of how a structure dealt its pairs into shares (the box pairs' row sets, or
/// the ordered edges), so that the combination of a split audit can refuse tasks that
/// dealt differently (another build, another file): shares partition the pairs only when
/// every task deals the same list.
pub(crate) fn digest(words: impl IntoIterator<Item = u64>) -> u64 {
    // FNV-1a over the words' bytes: stable across builds and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for w in words {
        for b in w.to_le_bytes() {
            h ^= b as u64;
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    h
}

/// An ordered pair (u, v) the structure checks; `id` is the structure's own index of it
/// (the edge for graphs).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Pair {
    pub u: usize,
    pub v: usize,
    pub id: usize,
}

/// Work done by one check (or summed over the checks of a tight-ε search).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Work {
    /// Triples (u, v, w) in scope proven at once by a box-pair test (tree only).
    pub settled_triples: u64,
    /// Triples decided pair by pair (leaf pairs, or edges).
    pub pair_triples: u64,
    /// Box-pair × column tests (tree only).
    pub box_tests: u64,
    /// Pairs that needed exact arithmetic, and their triples.
    pub exact_pairs: u64,
    pub exact_triples: u64,
    /// Checks summed here (each a whole pass over the pairs in scope): the tight-ε
    /// search's and the verdict's. A fraction of triples settled is per pass.
    pub passes: u64,
}

impl Work {
    pub fn add(&mut self, o: &Work) {
        self.passes += o.passes;
        self.settled_triples += o.settled_triples;
        self.pair_triples += o.pair_triples;
        self.box_tests += o.box_tests;
        self.exact_pairs += o.exact_pairs;
        self.exact_triples += o.exact_triples;
    }
}

/// What one [`Structure::check`] found.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Pairs proven to break the bound (all of them when asked, else at least one if any;
    /// sorted).
    pub fails: Vec<Pair>,
    /// A pair undecidable at the precision limit.
    pub undecided: Option<Pair>,
    pub work: Work,
}

/// A check stopped because the exact fallback would pass its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OverBudget {
    pub exact_triples: u64,
}

/// A structured view of a mechanism that can list the pairs breaking a threshold.
pub trait Structure: Sync {
    /// The ordered pairs in scope with R_uv > e^{T·d(u,v)}, proven (every one if `all`).
    fn check(&self, t: &Q, all: bool) -> Result<Outcome, OverBudget>;
    /// Pairs likely to attain the tight ε (float estimates; a pair whose estimate is
    /// infinite or unknown first). Only speed depends on this choice.
    fn candidates(&self) -> Result<Vec<Pair>, OverBudget>;
    /// The exact ε of one pair over all outputs: `None` = +∞, `Err` = undecidable.
    #[allow(clippy::result_unit_err)] // undecidable carries no more than the pair, known to the caller
    fn pair_eps(&self, p: Pair) -> Result<Option<Interval>, ()>;
    /// Ordered pairs this structure checks (its share's, after a restriction).
    fn pairs(&self) -> u64;
    /// The digest (`structured::digest`) of the whole list its shares are dealt from.
    fn layout(&self) -> u64;
}

/// The shared state of one check: the threshold, the early stop, the findings, the
/// counters and the exact-fallback budget.
pub(crate) struct Run<'a> {
    pub m: &'a Dense,
    pub norm: &'a Normalized,
    pub t: &'a Q,
    /// e^x for x = T·d in float intervals: T as an enclosure.
    pub tf: crate::exact::float::FI,
    pub all: bool,
    pub max_prec: u64,
    pub max_exact_triples: u64,
    stop: AtomicBool,
    over: AtomicBool,
    fails: Mutex<Vec<Pair>>,
    undecided: Mutex<Option<Pair>>,
    pub settled_triples: AtomicU64,
    pub pair_triples: AtomicU64,
    pub box_tests: AtomicU64,
    exact_pairs: AtomicU64,
    exact_triples: AtomicU64,
}

impl<'a> Run<'a> {
    pub fn new(
        m: &'a Dense,
        norm: &'a Normalized,
        t: &'a Q,
        all: bool,
        max_prec: u64,
        max_exact_triples: u64,
    ) -> Run<'a> {
        Run {
            m,
            norm,
            t,
            tf: crate::exact::float::FI::from_q(t),
            all,
            max_prec,
            max_exact_triples,
            stop: AtomicBool::new(false),
            over: AtomicBool::new(false),
            fails: Mutex::new(Vec::new()),
            undecided: Mutex::new(None),
            settled_triples: AtomicU64::new(0),
            pair_triples: AtomicU64::new(0),
            box_tests: AtomicU64::new(0),
            exact_pairs: AtomicU64::new(0),
            exact_triples: AtomicU64::new(0),
        }
    }

    /// The check is over (a failure found and not all asked for, or the budget spent).
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn fail(&self, p: Pair) {
        self.fails.lock().unwrap_or_else(|e| e.into_inner()).push(p);
        if !self.all {
            self.stop.store(true, Ordering::Relaxed);
        }
    }

    pub(crate) fn undecided(&self, p: Pair) {
        let mut u = self.undecided.lock().unwrap_or_else(|e| e.into_inner());
        if u.is_none_or(|q| p < q) {
            *u = Some(p);
        }
    }

    /// Decide one ordered pair on the given columns: the float filter of the exhaustive
    /// audit (`spec/soundness.md` §1) with distance enclosure `d` (or d = 0 exactly when
    /// `zero`), then the exact fallback with the distance's enclosures `dist`.
    pub fn decide_pair(
        &self,
        p: Pair,
        cols: Cols,
        d: crate::exact::float::FI,
        zero: bool,
        dist: impl Fn(u64) -> Interval,
    ) {
        let (u, v) = (p.u, p.v);
        let k = cols.len(self.norm.k) as u64;
        self.pair_triples.fetch_add(k, Ordering::Relaxed);
        if self.norm.safe[u] && self.norm.safe[v] {
            let rt = cols.max_ratio(self.norm, u, v);
            if rt.is_finite() {
                let r = crate::exact::float::FI::point(rt);
                let r_hi = r.mul_f64(1.0 + KAPPA).hi;
                // A cheap proof first (spec/soundness.md §7.2): for x ≤ T·d, x ≥ 0,
                // e^{T·d} ≥ 1 + x + x²/2 + x³/6, evaluated with every term positive (eight
                // roundings: relative error < 9u) and cut by 16u, rounded down. Saves the
                // interval exponential on most leaf pairs.
                if !zero {
                    let x = mul_down(self.tf.lo.max(0.0), d.lo.max(0.0));
                    if x < 700.0 {
                        let p = 1.0 + x * (1.0 + x * 0.5 * (1.0 + x / 3.0));
                        if r_hi <= mul_down(p, 1.0 - 16.0 * crate::privacy::U) {
                            return;
                        }
                    }
                }
                let c = if zero {
                    crate::exact::float::FI::point(1.0)
                } else {
                    self.tf.mul(d).exp()
                };
                if r_hi <= c.lo {
                    return;
                }
                if r.mul_f64(1.0 - KAPPA).lo > c.hi {
                    self.fail(p);
                    return;
                }
            }
        }
        let spent = self.exact_triples.fetch_add(k, Ordering::Relaxed) + k;
        self.exact_pairs.fetch_add(1, Ordering::Relaxed);
        if spent > self.max_exact_triples {
            self.over.store(true, Ordering::Relaxed);
            self.stop.store(true, Ordering::Relaxed);
            return;
        }
        let (r, _) = self.norm.exact_ratio(self.m, u, v, cols.iter(self.norm.k));
        match ratio_within(&r, zero, self.t, self.max_prec, dist) {
            Decision::Holds => {}
            Decision::Fails => self.fail(p),
            Decision::Undecided => self.undecided(p),
        }
    }

    pub fn finish(self) -> Result<Outcome, OverBudget> {
        let exact_triples = self.exact_triples.load(Ordering::Relaxed);
        if self.over.load(Ordering::Relaxed) {
            return Err(OverBudget { exact_triples });
        }
        let mut fails = self.fails.into_inner().unwrap_or_else(|e| e.into_inner());
        fails.sort();
        fails.dedup();
        Ok(Outcome {
            fails,
            undecided: self
                .undecided
                .into_inner()
                .unwrap_or_else(|e| e.into_inner()),
            work: Work {
                settled_triples: self.settled_triples.load(Ordering::Relaxed),
                pair_triples: self.pair_triples.load(Ordering::Relaxed),
                box_tests: self.box_tests.load(Ordering::Relaxed),
                exact_pairs: self.exact_pairs.load(Ordering::Relaxed),
                exact_triples,
                passes: 1,
            },
        })
    }
}

/// The columns a pair is decided on: all of them, or the ones a box pair left open.
#[derive(Clone, Copy)]
pub enum Cols<'c> {
    All,
    Some(&'c [u32]),
}

impl Cols<'_> {
    pub fn len(&self, k: usize) -> usize {
        match self {
            Cols::All => k,
            Cols::Some(c) => c.len(),
        }
    }

    pub fn iter(&self, k: usize) -> Box<dyn Iterator<Item = usize> + '_> {
        match self {
            Cols::All => Box::new(0..k),
            Cols::Some(c) => Box::new(c.iter().map(|&w| w as usize)),
        }
    }

    /// R̃ = max_w fl(h̃_uw · fl(1/h̃_vw)) over these columns (∞ where h̃_vw = 0 < h̃_uw;
    /// 0·∞ = NaN never wins), as the exhaustive filter computes it.
    pub fn max_ratio(&self, norm: &Normalized, u: usize, v: usize) -> f64 {
        let (a, rb) = (norm.hrow(u), norm.recip_row(v));
        match self {
            Cols::All => {
                let (ra, b) = (norm.recip_row(u), norm.hrow(v));
                crate::privacy::pair_ratios(a, ra, b, rb).0
            }
            Cols::Some(c) => c.iter().fold(0.0f64, |m, &w| {
                let q = a[w as usize] * rb[w as usize];
                if q > m {
                    q
                } else {
                    m
                }
            }),
        }
    }
}

/// The float estimate of a pair's ε from its filter ratio: ln(max(R̃, 1)) / d̃, ∞ for an
/// infinite ratio, a positive ratio at distance 0, or a row outside the error model.
pub(crate) fn estimate(norm: &Normalized, u: usize, v: usize, rt: f64, d: f64, zero: bool) -> f64 {
    if !norm.safe[u] || !norm.safe[v] || !rt.is_finite() {
        return f64::INFINITY;
    }
    if zero {
        return if rt > 1.0 + 1e-12 { f64::INFINITY } else { 0.0 };
    }
    rt.max(1.0).ln() / d
}

/// The exact ε of a pair from its exact ratio: `None` = +∞.
pub(crate) fn eps_from_ratio(
    r: Option<Q>,
    zero: bool,
    max_prec: u64,
    dist: impl Fn(u64) -> Interval,
) -> Result<Option<Interval>, ()> {
    let Some(r) = r else { return Ok(None) };
    if r <= 1u32 {
        return Ok(Some(Interval::point(Q::from(0u32))));
    }
    if zero {
        return Ok(None);
    }
    eps_of(&r, max_prec, dist).map(Some).ok_or(())
}

/// Why a tight-ε search stopped short.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TightError {
    Undecided(Pair),
    OverBudget(OverBudget),
}

/// The tight pure ε over the pairs in scope, enclosed to relative width ≤ 1e-10 (the
/// exhaustive audit's scheme, `privacy::tight_pure_eps`): absorb the candidates' exact ε,
/// then check at the upper end and absorb every pair that breaks it, until none does. A
/// pair breaking T' ≥ T also broke T, so this ends after few checks.
pub fn tight_eps(s: &dyn Structure) -> Result<(EpsEnclosure, Work), TightError> {
    let mut enc = EpsEnclosure::zero();
    let mut work = Work::default();
    let absorb = |p: Pair, enc: &mut EpsEnclosure| -> Result<bool, TightError> {
        match s.pair_eps(p) {
            Err(()) => Err(TightError::Undecided(p)),
            Ok(None) => {
                *enc = EpsEnclosure::infinite((p.u, p.v));
                Ok(true)
            }
            Ok(Some(e)) => {
                enc.absorb(e, (p.u, p.v));
                Ok(false)
            }
        }
    };
    for p in s.candidates().map_err(TightError::OverBudget)? {
        if absorb(p, &mut enc)? {
            return Ok((enc, work));
        }
    }
    loop {
        let t = enc.hi.clone().expect("finite");
        let out = s.check(&t, true).map_err(TightError::OverBudget)?;
        work.add(&out.work);
        if out.fails.is_empty() {
            return match out.undecided {
                None => Ok((enc, work)),
                Some(p) => Err(TightError::Undecided(p)),
            };
        }
        for p in out.fails {
            if absorb(p, &mut enc)? {
                return Ok((enc, work));
            }
        }
    }
}

/// The structure of a container's metric (edges of a graph, boxes of points), its
/// method's name and the number of ordered pairs in its scope's reach.
pub fn of_container<'a>(
    c: &'a crate::io::container::Container,
    norm: &'a Normalized,
    max_prec: u64,
    max_exact_triples: u64,
    part: Part,
) -> Result<(Box<dyn Structure + 'a>, &'static str, u64), crate::error::InputError> {
    use crate::io::container::Geometry;
    Ok(match &c.geometry {
        Geometry::Graph(g) => {
            let mut e = edges::Edges::new(
                g,
                &c.matrix,
                norm,
                c.within.as_ref(),
                max_prec,
                max_exact_triples,
            );
            e.restrict(part);
            let p = Structure::pairs(&e);
            (Box::new(e), "edges", p)
        }
        Geometry::Points(space) => {
            if !tree::supports(space.kind()) {
                return Err(crate::io::input_error(
                    "metric.kind",
                    "no structured audit for this kind",
                ));
            }
            let mut t = tree::Tree::new(
                space,
                &c.matrix,
                norm,
                c.within.as_ref(),
                max_prec,
                max_exact_triples,
            );
            t.restrict(part);
            let p = Structure::pairs(&t);
            (Box::new(t), "boxes", p)
        }
    })
}

/// The pure verdict at ε: from the tight-ε enclosure when ε lies outside it (hi ≤ ε: pass;
/// lo > ε or ε* = ∞: its pair fails), else by one check at ε. `Ok(None)` pass,
/// `Ok(Some(pair))` a pair proven to break ε, `Err(pair)` undecidable.
pub fn verdict_at(
    s: &dyn Structure,
    tight: Option<&EpsEnclosure>,
    eps: &Q,
    work: &mut Work,
) -> Result<Result<Option<Pair>, Pair>, OverBudget> {
    if let Some(e) = tight {
        if e.hi.as_ref().is_some_and(|hi| hi <= eps) {
            return Ok(Ok(None));
        }
        if e.lo > *eps || e.is_infinite() {
            if let Some((u, v)) = e.pair {
                return Ok(Ok(Some(Pair { u, v, id: 0 })));
            }
        }
    }
    let out = s.check(eps, false)?;
    work.add(&out.work);
    Ok(match (out.fails.first(), out.undecided) {
        (Some(&p), _) => Ok(Some(p)),
        (None, Some(p)) => Err(p),
        (None, None) => Ok(None),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FNV-1a 64 of the words' little-endian bytes, against the value worked out off line
    /// (`python3`: the 16 bytes of 1 and 0xff00ff00ff00ff00): the share digests that
    /// split audits compare are the same on every build and platform.
    #[test]
    fn the_share_digest_is_fnv1a_of_the_little_endian_bytes() {
        assert_eq!(digest([1, 0xff00_ff00_ff00_ff00]), 0x1b4d_4945_03b0_2f94);
        assert_eq!(digest([]), 0xcbf2_9ce4_8422_2325);
    }

    /// The work of a tight-ε search is the field-wise sum of its checks'.
    #[test]
    fn work_adds_field_by_field() {
        let a = Work {
            settled_triples: 2,
            pair_triples: 3,
            box_tests: 4,
            exact_pairs: 5,
            exact_triples: 6,
            passes: 7,
        };
        let mut b = Work {
            settled_triples: 1,
            pair_triples: 1,
            box_tests: 1,
            exact_pairs: 1,
            exact_triples: 1,
            passes: 1,
        };
        b.add(&a);
        b.add(&Work::default());
        let want = Work {
            settled_triples: 3,
            pair_triples: 4,
            box_tests: 5,
            exact_pairs: 6,
            exact_triples: 7,
            passes: 8,
        };
        assert_eq!(b, want);
    }
}
