//! Finite metric spaces (`spec/mechanism-format.md`, "metric"): the six kinds of the
//! `mdp/1` contract, with exact distances, rigorous enclosures, validation, nearest
//! neighbours and shortest paths.
//!
//! Distances come in three exact forms ([`ExactDistance`]): rationals (manhattan,
//! chebyshev, explicit, graph), square roots of rationals (euclidean) and transcendental
//! values (haversine). Every form has a rigorous `f64` enclosure ([`Space::fi`]) for the
//! fast filters and a rational enclosure refinable to any width ([`Space::enclosure`]) for
//! the exact fallback. `spec/soundness.md` explains why these suffice for proofs.

use crate::exact::float::{add_down, add_up, mul_up, sqrt_up, FI};
use crate::exact::{functions, Interval, Q};
use std::cmp::Ordering;
use std::collections::BinaryHeap;

pub mod roads;
pub use roads::Roads;

/// The `kind` of a metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MetricKind {
    Euclidean,
    Manhattan,
    Chebyshev,
    Haversine,
    Explicit,
    Graph,
}

impl MetricKind {
    pub fn name(self) -> &'static str {
        match self {
            MetricKind::Euclidean => "euclidean",
            MetricKind::Manhattan => "manhattan",
            MetricKind::Chebyshev => "chebyshev",
            MetricKind::Haversine => "haversine",
            MetricKind::Explicit => "explicit",
            MetricKind::Graph => "graph",
        }
    }
    pub fn from_name(s: &str) -> Option<Self> {
        Some(match s {
            "euclidean" => MetricKind::Euclidean,
            "manhattan" => MetricKind::Manhattan,
            "chebyshev" => MetricKind::Chebyshev,
            "haversine" => MetricKind::Haversine,
            "explicit" => MetricKind::Explicit,
            "graph" => MetricKind::Graph,
            _ => return None,
        })
    }
    /// Kinds whose sites are coordinate vectors.
    pub fn has_points(self) -> bool {
        !matches!(self, MetricKind::Explicit | MetricKind::Graph)
    }
}

/// The exact value of a distance.
#[derive(Clone, Debug, PartialEq)]
pub enum ExactDistance {
    /// A rational number.
    Rational(Q),
    /// √q for a rational q ≥ 0 (euclidean).
    SqrtOf(Q),
    /// A transcendental value known only through enclosures (haversine).
    Transcendental,
}

// Validation problems of a metric are `InputError`s with a path relative to the metric
// object (the caller prefixes it).
use crate::error::{input_error as merr, InputError};

/// Default earth radius of the contract, in km (IUGG mean radius).
pub fn default_radius() -> Q {
    Q::from_unsigneds(63710088u64, 10000u64)
}

/// A finite metric space. Sites `0..n_inputs` are the mechanism's inputs; coordinate kinds
/// may carry extra sites (output points) after them, see [`Space::with_extra_points`].
#[derive(Clone, Debug)]
pub struct Space {
    kind: MetricKind,
    n_inputs: usize,
    /// Coordinates of every site (coordinate kinds), `[lat, lon]` in degrees for haversine.
    coords: Vec<Vec<Q>>,
    radius: Q,
    /// Exact n×n table (explicit: as given; graph: shortest-path lengths), empty for a
    /// graph read without it ([`Space::from_roads`]).
    table: Vec<Q>,
    /// A graph metric's edges when it has no table: distances on demand ([`Roads`]).
    roads: Option<std::sync::Arc<Roads>>,
    /// Float enclosures of `coords` (euclidean/manhattan/chebyshev) or of the unit vectors
    /// (haversine).
    fcoords: Vec<Vec<FI>>,
    /// Float enclosure of the radius (haversine).
    fradius: FI,
    /// Euclidean only: a float point m_x near every site x, and ρ_x ≥ ‖x − m_x‖ (rounded
    /// up), for [`Space::euclidean_fi`].
    fmid: Vec<Vec<f64>>,
    frho: Vec<f64>,
    /// Haversine only: every site pair's `fi`, computed on first use (an enclosure costs
    /// an asin series, and LP builders and the auditor ask for each pair many times).
    /// Reset when sites are added.
    fcache: std::sync::OnceLock<Vec<FI>>,
    /// Float enclosures of `table`.
    ftable: Vec<FI>,
    /// Warnings found during validation (e.g. a triangle inequality violation).
    pub warnings: Vec<String>,
    /// A triple (i, j, k) with d(i, k) > d(i, j) + d(j, k), searched once, on first use
    /// (explicit tables only: see [`Space::triangle_violation`]).
    triangle: std::sync::OnceLock<Option<(usize, usize, usize)>>,
}

const UNIT_VECTOR_PREC: u64 = 80;
/// Largest accepted haversine radius (10^12: a light-year is ~10^13 km, and metres on
/// Earth are 6.4·10^6).
const MAX_RADIUS: u64 = 1_000_000_000_000;

/// Haversine coordinates: latitude in [-90, 90], longitude in [-360, 360] (degrees), for
/// input points and output points alike.
fn check_lat_lon(points: &[Vec<Q>], path: &str) -> Result<(), InputError> {
    for (i, p) in points.iter().enumerate() {
        if p[0] > 90u32 || p[0] < -90i32 {
            return Err(merr(
                format!("{path}[{i}][0]"),
                "latitude outside [-90, 90]",
            ));
        }
        if p[1] > 360u32 || p[1] < -360i32 {
            return Err(merr(
                format!("{path}[{i}][1]"),
                "longitude outside [-360, 360]",
            ));
        }
    }
    Ok(())
}
/// Haversine spaces up to this many sites keep a table of enclosures (16 B each: 64 MiB).
const HAVERSINE_CACHE_SITES: usize = 2048;

impl Space {
    /// A coordinate space (euclidean, manhattan, chebyshev or haversine).
    pub fn from_points(
        kind: MetricKind,
        points: Vec<Vec<Q>>,
        radius: Option<Q>,
    ) -> Result<Space, InputError> {
        assert!(kind.has_points());
        if points.is_empty() {
            return Err(merr("points", "must hold at least one point"));
        }
        let dim = points[0].len();
        if dim == 0 {
            return Err(merr("points[0]", "a point needs at least one coordinate"));
        }
        for (i, p) in points.iter().enumerate() {
            if p.len() != dim {
                return Err(merr(
                    format!("points[{i}]"),
                    format!("has {} coordinates, points[0] has {dim}", p.len()),
                ));
            }
        }
        let radius = radius.unwrap_or_else(default_radius);
        if kind == MetricKind::Haversine {
            if dim != 2 {
                return Err(merr(
                    "points[0]",
                    format!("haversine points are [lat, lon], got {dim} coordinates"),
                ));
            }
            // The radius's size sets the working precision of every exact enclosure.
            if radius <= 0u32 || radius > Q::from(MAX_RADIUS) || crate::exact::bits(&radius) > 256 {
                return Err(merr(
                    "radius",
                    format!("must be in (0, {MAX_RADIUS}] with at most 256 bits (a sphere's radius in the distance unit)"),
                ));
            }
            check_lat_lon(&points, "points")?;
        }
        let n = points.len();
        let mut s = Space {
            kind,
            n_inputs: n,
            coords: Vec::new(),
            fradius: FI::from_q(&radius),
            radius,
            table: Vec::new(),
            roads: None,
            fcoords: Vec::new(),
            ftable: Vec::new(),
            fmid: Vec::new(),
            frho: Vec::new(),
            fcache: Default::default(),
            warnings: Vec::new(),
            triangle: std::sync::OnceLock::new(),
        };
        s.push_points(points);
        Ok(s)
    }

    fn push_points(&mut self, points: Vec<Vec<Q>>) {
        self.fcache = Default::default();
        for p in points {
            let f = if self.kind == MetricKind::Haversine {
                functions::chord_unit_vector(&p[0], &p[1], UNIT_VECTOR_PREC)
                    .iter()
                    .map(|iv| {
                        let (lo, hi) = iv.to_f64_bounds();
                        FI::new(lo, hi)
                    })
                    .collect()
            } else {
                p.iter().map(FI::from_q).collect::<Vec<FI>>()
            };
            if self.kind == MetricKind::Euclidean {
                let mid: Vec<f64> = f.iter().map(|x| 0.5 * x.lo + 0.5 * x.hi).collect();
                let mut acc = 0.0;
                for (x, m) in f.iter().zip(&mid) {
                    let h = add_up(*m, -x.lo).max(add_up(x.hi, -*m));
                    acc = add_up(acc, mul_up(h, h));
                }
                self.frho.push(sqrt_up(acc));
                self.fmid.push(mid);
            }
            self.fcoords.push(f);
            self.coords.push(p);
        }
    }

    /// The same space with extra sites (output points) appended after the inputs.
    pub fn with_extra_points(&self, points: Vec<Vec<Q>>) -> Result<Space, InputError> {
        if !self.kind.has_points() {
            return Err(merr(
                "",
                format!(
                    "output points need a coordinate metric, not {}",
                    self.kind.name()
                ),
            ));
        }
        let dim = self.coords[0].len();
        for (i, p) in points.iter().enumerate() {
            if p.len() != dim {
                return Err(merr(
                    format!("[{i}]"),
                    format!(
                        "has {} coordinates, the metric's points have {dim}",
                        p.len()
                    ),
                ));
            }
        }
        if self.kind == MetricKind::Haversine {
            check_lat_lon(&points, "")?;
        }
        let mut s = self.clone();
        s.push_points(points);
        Ok(s)
    }

    /// An explicit distance table: validated for shape, zero diagonal, non-negativity and
    /// symmetry (errors); the triangle inequality is checked and a violation recorded as a
    /// warning with its witness, as the contract asks.
    pub fn from_table(rows: Vec<Vec<Q>>) -> Result<Space, InputError> {
        let mut s = Self::from_table_unscanned(rows)?;
        if let Some((i, j, k)) = s.triangle_violation() {
            s.warnings.push(format!(
                "metric.distances: triangle inequality fails: d({i},{k}) > d({i},{j}) + d({j},{k})"
            ));
        }
        Ok(s)
    }

    /// [`Space::from_table`] in O(n²): validated the same way, but the O(n³) search for a
    /// triangle-inequality violation waits for the first [`Space::triangle_violation`] (the
    /// producers' `require_metric` asks; an audit does not need it, issue 53), and no
    /// warning is recorded.
    pub fn from_table_unscanned(rows: Vec<Vec<Q>>) -> Result<Space, InputError> {
        let n = rows.len();
        if n == 0 {
            return Err(merr("distances", "must hold at least one row"));
        }
        for (i, r) in rows.iter().enumerate() {
            if r.len() != n {
                return Err(merr(
                    format!("distances[{i}]"),
                    format!("has {} entries, expected {n} (square matrix)", r.len()),
                ));
            }
        }
        for i in 0..n {
            if rows[i][i] != 0u32 {
                return Err(merr(
                    format!("distances[{i}][{i}]"),
                    "diagonal entry is not 0",
                ));
            }
            for j in 0..n {
                if rows[i][j] < 0u32 {
                    return Err(merr(format!("distances[{i}][{j}]"), "negative distance"));
                }
                if j > i && rows[i][j] != rows[j][i] {
                    return Err(merr(
                        format!("distances[{i}][{j}]"),
                        format!("not symmetric: differs from distances[{j}][{i}]"),
                    ));
                }
            }
        }
        let table: Vec<Q> = rows.into_iter().flatten().collect();
        Ok(Self::from_exact_table(MetricKind::Explicit, n, table))
    }

    /// A graph metric: shortest-path lengths over undirected weighted edges (exact rational
    /// Dijkstra from every node). A disconnected graph is an error: its distance would be ∞.
    pub fn from_graph(n: usize, edges: &[(usize, usize, Q)]) -> Result<Space, InputError> {
        Self::from_graph_within(n, edges, u64::MAX)
    }

    /// [`Space::from_graph`] with a budget: the exact shortest-path table (n² rationals,
    /// whose sizes grow along paths) may use at most `max_bits` bits in total. A
    /// disconnected graph is refused before the table is allocated.
    pub fn from_graph_within(
        n: usize,
        edges: &[(usize, usize, Q)],
        max_bits: u64,
    ) -> Result<Space, InputError> {
        if n == 0 {
            return Err(merr("nodes", "must be ≥ 1"));
        }
        if edges.len() < n - 1 {
            return Err(merr(
                "edges",
                format!(
                    "graph is disconnected: {} edges cannot connect {n} nodes",
                    edges.len()
                ),
            ));
        }
        let mut adj: Vec<Vec<(usize, Q)>> = vec![Vec::new(); n];
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
            adj[*u].push((*v, w.clone()));
            adj[*v].push((*u, w.clone()));
        }
        // Connectivity first (cheap), then the table.
        let mut seen = vec![false; n];
        let mut stack = vec![0];
        seen[0] = true;
        while let Some(x) = stack.pop() {
            for &(y, _) in &adj[x] {
                if !seen[y] {
                    seen[y] = true;
                    stack.push(y);
                }
            }
        }
        if let Some(t) = seen.iter().position(|s| !s) {
            return Err(merr(
                "edges",
                format!("graph is disconnected: node {t} is unreachable from node 0"),
            ));
        }
        let mut table = vec![Q::from(0u32); n * n];
        let mut used: u64 = 0;
        for src in 0..n {
            let dist = dijkstra_exact(&adj, src);
            used = dist
                .iter()
                .flatten()
                .map(crate::exact::bits)
                .fold(used, u64::saturating_add);
            if used > max_bits {
                return Err(merr(
                    "edges",
                    format!(
                        "exact shortest-path distances need more than {max_bits} bits (--max-bits)"
                    ),
                ));
            }
            for (t, d) in dist.into_iter().enumerate() {
                table[src * n + t] = d.expect("every node is reachable (checked above)");
            }
        }
        Ok(Self::from_exact_table(MetricKind::Graph, n, table))
    }

    /// A graph metric without its n×n table (issue 56): the same distances as
    /// [`Space::from_graph`], computed on demand ([`Roads`]). Callers must not ask for all
    /// n² pairs: the privacy rows are the edges ([`Space::roads`]), and the enclosures
    /// from a few sources are kept by [`Space::keep_rows`].
    pub fn from_roads(n: usize, edges: &[(usize, usize, Q)]) -> Result<Space, InputError> {
        let roads = Roads::new(n, edges)?;
        let mut s = Self::from_exact_table(MetricKind::Graph, n, Vec::new());
        s.roads = Some(std::sync::Arc::new(roads));
        Ok(s)
    }

    /// The graph's edges and distances when the space has no n×n table.
    pub fn roads(&self) -> Option<&Roads> {
        self.roads.as_deref()
    }

    /// Keep the distance enclosures from `sources` (a graph without its table: 16 bytes
    /// a node per source; no-op for every other space), so that [`Space::fi`] from or to
    /// them is a lookup.
    pub fn keep_rows(&self, sources: &[usize]) {
        if let Some(r) = &self.roads {
            r.keep_rows(sources);
        }
    }

    fn from_exact_table(kind: MetricKind, n: usize, table: Vec<Q>) -> Space {
        let ftable = table.iter().map(FI::from_q).collect();
        Space {
            kind,
            n_inputs: n,
            coords: Vec::new(),
            radius: Q::from(0u32),
            fradius: FI::point(0.0),
            table,
            roads: None,
            fcoords: Vec::new(),
            ftable,
            fmid: Vec::new(),
            frho: Vec::new(),
            fcache: Default::default(),
            warnings: Vec::new(),
            triangle: std::sync::OnceLock::new(),
        }
    }

    pub fn kind(&self) -> MetricKind {
        self.kind
    }
    /// Number of inputs (rows of a mechanism).
    pub fn n(&self) -> usize {
        self.n_inputs
    }
    /// Number of sites (inputs plus extra output points).
    pub fn sites(&self) -> usize {
        if self.kind.has_points() {
            self.coords.len()
        } else {
            self.n_inputs
        }
    }
    pub fn points(&self) -> &[Vec<Q>] {
        &self.coords
    }
    pub fn radius(&self) -> &Q {
        &self.radius
    }
    /// Rigorous float enclosures of site `i`'s coordinates (coordinate kinds; for
    /// haversine the unit vector of [lat, lon] in R³): the space in which
    /// [`Space::gap_distance_lo`] bounds distances from below.
    pub fn float_coords(&self, i: usize) -> &[FI] {
        &self.fcoords[i]
    }

    /// A lower bound on d(x, y) for any two sites whose [`Space::float_coords`] differ by
    /// at least `gaps[c] ≥ 0` in every coordinate c (two boxes `gaps` apart), rounded
    /// down: √Σg² (euclidean), Σg (manhattan), max g (chebyshev), and for haversine the
    /// great-circle distance 2R·asin(c/2) of the chord c ≥ √Σg² between unit vectors
    /// (`spec/soundness.md` §7). 0 for the other kinds.
    pub fn gap_distance_lo(&self, gaps: &[f64]) -> f64 {
        let sum_sq = || {
            gaps.iter()
                .fold(FI::point(0.0), |s, &g| s.add(FI::point(g).sqr()))
                .sqrt()
                .lo
        };
        match self.kind {
            MetricKind::Euclidean => sum_sq(),
            MetricKind::Manhattan => {
                gaps.iter()
                    .fold(FI::point(0.0), |s, &g| s.add(FI::point(g)))
                    .lo
            }
            MetricKind::Chebyshev => gaps.iter().fold(0.0, |m: f64, &g| m.max(g)),
            MetricKind::Haversine => {
                let half = FI::point(sum_sq()).mul_f64(0.5).lo.min(1.0);
                match asin_unit(FI::point(half.max(0.0))) {
                    Some(a) => a.mul(self.fradius).mul_f64(2.0).lo.max(0.0),
                    None => 0.0,
                }
            }
            MetricKind::Explicit | MetricKind::Graph => 0.0,
        }
    }

    /// The exact n×n table of explicit / graph metrics (row-major); empty for a graph
    /// without one ([`Space::roads`]).
    pub fn table(&self) -> &[Q] {
        &self.table
    }

    /// The exact form of d(i, j).
    pub fn exact(&self, i: usize, j: usize) -> ExactDistance {
        if let Some(r) = &self.roads {
            return ExactDistance::Rational(r.exact(i, j));
        }
        let (a, b) = match self.kind {
            MetricKind::Explicit | MetricKind::Graph => {
                return ExactDistance::Rational(self.table[i * self.n_inputs + j].clone())
            }
            _ => (&self.coords[i], &self.coords[j]),
        };
        match self.kind {
            MetricKind::Euclidean => {
                let mut s = Q::from(0u32);
                for (x, y) in a.iter().zip(b) {
                    let d = x - y;
                    s += &d * &d;
                }
                ExactDistance::SqrtOf(s)
            }
            MetricKind::Manhattan => {
                let mut s = Q::from(0u32);
                for (x, y) in a.iter().zip(b) {
                    s += q_abs(x - y);
                }
                ExactDistance::Rational(s)
            }
            MetricKind::Chebyshev => {
                let mut s = Q::from(0u32);
                for (x, y) in a.iter().zip(b) {
                    let d = q_abs(x - y);
                    if d > s {
                        s = d;
                    }
                }
                ExactDistance::Rational(s)
            }
            MetricKind::Haversine => {
                if self.is_zero(i, j) {
                    ExactDistance::Rational(Q::from(0u32))
                } else {
                    ExactDistance::Transcendental
                }
            }
            MetricKind::Explicit | MetricKind::Graph => unreachable!(),
        }
    }

    /// Whether d(i, j) = 0, decided exactly.
    pub fn is_zero(&self, i: usize, j: usize) -> bool {
        if i == j {
            return true;
        }
        match self.kind {
            // Weights are > 0: distinct nodes are apart.
            MetricKind::Graph if self.roads.is_some() => false,
            MetricKind::Explicit | MetricKind::Graph => self.table[i * self.n_inputs + j] == 0u32,
            MetricKind::Haversine => {
                let (a, b) = (&self.coords[i], &self.coords[j]);
                if a[0] != b[0] {
                    return false;
                }
                if a[0] == 90u32 || a[0] == -90i32 {
                    return true; // a pole: longitude is irrelevant
                }
                let dl = &a[1] - &b[1];
                let turns = dl / Q::from(360u32);
                turns.is_integer()
            }
            _ => self.coords[i] == self.coords[j],
        }
    }

    /// A rational enclosure of d(i, j), of width about 2^-prec (relative for d > 1).
    pub fn enclosure(&self, i: usize, j: usize, prec: u64) -> Interval {
        match self.exact(i, j) {
            ExactDistance::Rational(q) => Interval::point(q),
            ExactDistance::SqrtOf(q) => {
                functions::sqrt(&Interval::point(q), prec).expect("a sum of squares is ≥ 0")
            }
            ExactDistance::Transcendental => {
                let (a, b) = (&self.coords[i], &self.coords[j]);
                functions::haversine(&a[0], &a[1], &b[0], &b[1], &self.radius, prec)
            }
        }
    }

    /// A rigorous `f64` enclosure of d(i, j) (outward-rounded interval arithmetic; for
    /// Euclidean spaces plain float arithmetic with an a-priori error bound).
    pub fn fi(&self, i: usize, j: usize) -> FI {
        let f = self.fi_raw(i, j);
        // Duplicate sites whose coordinates are not floats get an enclosure [0, tiny]; they
        // are given the exact 0 that callers test for (equal rows, zero costs).
        if f.lo == 0.0 && f.hi != 0.0 && self.is_zero(i, j) {
            FI::point(0.0)
        } else {
            f
        }
    }

    fn fi_raw(&self, i: usize, j: usize) -> FI {
        match self.kind {
            MetricKind::Graph if self.roads.is_some() => {
                self.roads.as_ref().expect("checked").fi(i, j)
            }
            MetricKind::Explicit | MetricKind::Graph => self.ftable[i * self.n_inputs + j],
            MetricKind::Euclidean => self
                .euclidean_fi(i, j)
                .unwrap_or_else(|| self.euclidean_fi_interval(i, j)),
            MetricKind::Manhattan => {
                let mut s = FI::point(0.0);
                for (x, y) in self.fcoords[i].iter().zip(&self.fcoords[j]) {
                    s = s.add(x.sub(*y).abs());
                }
                s
            }
            MetricKind::Chebyshev => {
                let mut s = FI::point(0.0);
                for (x, y) in self.fcoords[i].iter().zip(&self.fcoords[j]) {
                    let d = x.sub(*y).abs();
                    s = FI::new(s.lo.max(d.lo), s.hi.max(d.hi));
                }
                s
            }
            MetricKind::Haversine => {
                let m = self.sites();
                if m <= HAVERSINE_CACHE_SITES {
                    let t = self.fcache.get_or_init(|| self.haversine_table(m));
                    return t[i * m + j];
                }
                self.haversine_fi(i, j)
            }
        }
    }

    /// Every pair's haversine enclosure (≈ 4 µs each), on plain scoped threads, never rayon:
    /// `fi` is called from rayon tasks, and a rayon-parallel initializer, while it waits,
    /// steals a task that re-enters the `OnceLock` on the same thread, which then waits for
    /// itself (seen: `mdp build optimal` on 50 Rome records hung in 1 run of 8 with 16
    /// threads; regression test `haversine_table_under_rayon_does_not_deadlock`).
    fn haversine_table(&self, m: usize) -> Vec<FI> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let mut table = vec![FI::point(0.0); m * m];
        // The enclosure is symmetric bit for bit (the coordinate differences' intervals
        // are negatives of each other under directed rounding, and are squared): the
        // upper triangle is computed (rows handed out one at a time from a shared counter)
        // and mirrored. Each entry is computed alone: the table is the same on any number
        // of threads.
        let rows: Vec<std::sync::Mutex<&mut [FI]>> = table
            .chunks_mut(m.max(1))
            .map(std::sync::Mutex::new)
            .collect();
        let next = AtomicUsize::new(0);
        let threads = std::thread::available_parallelism()
            .map_or(1, |t| t.get())
            .min(m.max(1));
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= rows.len() {
                        break;
                    }
                    let mut row = rows[i].lock().unwrap_or_else(|e| e.into_inner());
                    for (j, slot) in row.iter_mut().enumerate().skip(i) {
                        *slot = self.haversine_fi(i, j);
                    }
                });
            }
        });
        drop(rows);
        for i in 0..m {
            for j in 0..i {
                table[i * m + j] = table[j * m + i];
            }
        }
        table
    }

    /// The haversine enclosure (spec/soundness.md §2).
    fn haversine_fi(&self, i: usize, j: usize) -> FI {
        if self.is_zero(i, j) {
            return FI::point(0.0);
        }
        let mut s = FI::point(0.0);
        for (x, y) in self.fcoords[i].iter().zip(&self.fcoords[j]) {
            s = s.add(x.sub(*y).sqr());
        }
        let half_chord = s.sqrt().mul_f64(0.5);
        match asin_unit(half_chord) {
            Some(a) => a.mul(self.fradius).mul_f64(2.0),
            None => {
                let (lo, hi) = self.enclosure(i, j, 64).to_f64_bounds();
                FI::new(lo, hi)
            }
        }
    }

    /// The Euclidean enclosure without directed rounding in the loop (spec/soundness.md
    /// §2): d̃ = fl(√Σ fl(fl(m_i − m'_i)²)) over the float points m, m' of the two sites,
    /// and |d − d̃| ≤ ρ + ρ' + 2(k+4)u·d̃ + 2^-498 (k coordinates, u = 2^-53): the
    /// midpoints are within ρ of the sites (triangle inequality in R^k), and the float
    /// evaluation of a norm has relative error ≤ γ_{k+4} (Higham, Accuracy and Stability,
    /// §3.1 and §4.2: a sum of non-negative terms, any order) plus the underflow term.
    /// `None` on overflow or k ≥ 2^40 (the caller then uses interval arithmetic).
    fn euclidean_fi(&self, i: usize, j: usize) -> Option<FI> {
        let (a, b) = (&self.fmid[i], &self.fmid[j]);
        let k = a.len();
        if k >= 1 << 40 {
            return None;
        }
        // Four partial sums (the bound holds for any summation order).
        let mut acc = [0.0f64; 4];
        let (ca, cb) = (a.chunks_exact(4), b.chunks_exact(4));
        let (ra, rb) = (ca.remainder(), cb.remainder());
        for (x, y) in ca.zip(cb) {
            for l in 0..4 {
                let t = x[l] - y[l];
                acc[l] += t * t;
            }
        }
        for (x, y) in ra.iter().zip(rb) {
            let t = x - y;
            acc[0] += t * t;
        }
        let d = ((acc[0] + acc[1]) + (acc[2] + acc[3])).sqrt();
        if !d.is_finite() {
            return None;
        }
        let rel = mul_up(2.0 * (k as f64 + 4.0), f64::EPSILON / 2.0);
        let err = add_up(
            add_up(self.frho[i], self.frho[j]),
            add_up(mul_up(rel, d), 2f64.powi(-498)),
        );
        if !err.is_finite() {
            return None;
        }
        Some(FI::new(add_down(d, -err).max(0.0), add_up(d, err)))
    }

    /// The Euclidean enclosure by outward-rounded interval arithmetic (the fallback of
    /// [`Space::euclidean_fi`], and its reference in the tests).
    fn euclidean_fi_interval(&self, i: usize, j: usize) -> FI {
        let mut s = FI::point(0.0);
        for (x, y) in self.fcoords[i].iter().zip(&self.fcoords[j]) {
            s = s.add(x.sub(*y).sqr());
        }
        s.sqrt()
    }

    /// Compare d(i, j) with a rational `r` exactly, refining enclosures up to `max_prec`
    /// bits. `None` only if undecided at `max_prec` (a transcendental distance equal to, or
    /// within 2^-max_prec of, `r`).
    pub fn cmp_distance(&self, i: usize, j: usize, r: &Q, max_prec: u64) -> Option<Ordering> {
        let f = self.fi(i, j);
        let (rlo, rhi) = (crate::exact::f64_down(r), crate::exact::f64_up(r));
        if f.hi < rlo {
            return Some(Ordering::Less);
        }
        if f.lo > rhi {
            return Some(Ordering::Greater);
        }
        match self.exact(i, j) {
            ExactDistance::Rational(q) => Some(q.cmp(r)),
            ExactDistance::SqrtOf(q) => {
                if *r < 0u32 {
                    Some(Ordering::Greater)
                } else {
                    Some(q.cmp(&(r * r)))
                }
            }
            ExactDistance::Transcendental => functions::refine(64, max_prec, |p| {
                let e = self.enclosure(i, j, p);
                if e.hi < *r {
                    Some(Ordering::Less)
                } else if e.lo > *r {
                    Some(Ordering::Greater)
                } else {
                    None
                }
            }),
        }
    }

    /// A float estimate of d(i, j) (midpoint of the enclosure), for ordering only.
    pub fn approx(&self, i: usize, j: usize) -> f64 {
        let f = self.fi(i, j);
        0.5 * f.lo + 0.5 * f.hi
    }

    /// The `r` nearest other inputs of input `u` by distance (ties by index).
    pub fn nearest_neighbours(&self, u: usize, r: usize) -> Vec<usize> {
        let mut v: Vec<(f64, usize)> = (0..self.n_inputs)
            .filter(|&x| x != u)
            .map(|x| (self.approx(u, x), x))
            .collect();
        v.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        v.into_iter().take(r).map(|x| x.1).collect()
    }

    /// The graph on the inputs whose edges are the pairs (u, v) with `edge_upper(u, v)` =
    /// `Some(w)`, w ≥ d(u, v): each input's list of (neighbour, w), for
    /// [`Space::shortest_paths_upper`]. O(n²) calls, once.
    pub fn upper_adjacency(
        &self,
        edge_upper: &dyn Fn(usize, usize) -> Option<f64>,
    ) -> Vec<Vec<(u32, f64)>> {
        let n = self.n_inputs;
        (0..n)
            .map(|u| {
                (0..n)
                    .filter(|&v| v != u)
                    .filter_map(|v| edge_upper(u, v).map(|w| (v as u32, w)))
                    .collect()
            })
            .collect()
    }

    /// Upper bounds on shortest-path lengths from `src` in the graph `adj`
    /// ([`Space::upper_adjacency`]). Each value is ≥ the true shortest-path length
    /// (Dijkstra with a binary heap on the upper bounds, with upward-rounded sums: every
    /// value is the rounded-up length of a real path); `f64::INFINITY` marks unreachable
    /// inputs. O(E log n) per source.
    pub fn shortest_paths_upper(&self, src: usize, adj: &[Vec<(u32, f64)>]) -> Vec<f64> {
        debug_assert_eq!(adj.len(), self.n_inputs);
        shortest_paths_upper(adj, src)
    }

    /// A witness (i, j, k) with d(i,k) > d(i,j) + d(j,k), if one exists. Only an explicit
    /// table can have one: every other kind is a metric by construction (a norm's distance,
    /// the great-circle distance, shortest-path lengths), so no O(n³) pass is spent on it.
    pub fn triangle_violation(&self) -> Option<(usize, usize, usize)> {
        *self.triangle.get_or_init(|| {
            (self.kind == MetricKind::Explicit)
                .then(|| self.find_triangle_violation())
                .flatten()
        })
    }

    /// The O(n³) search behind [`Space::triangle_violation`], decided exactly. The n²
    /// float enclosures are read once from the table, then the triples are filtered in
    /// parallel; only undecided triples reach exact rationals.
    fn find_triangle_violation(&self) -> Option<(usize, usize, usize)> {
        use rayon::prelude::*;
        let n = self.n_inputs;
        let d = |a: usize, b: usize| self.ftable[a * n + b];
        (0..n).into_par_iter().find_map_first(|i| {
            for k in (i + 1)..n {
                let dik = d(i, k);
                for j in 0..n {
                    if j == i || j == k {
                        continue;
                    }
                    let s = d(i, j).add(d(j, k));
                    if dik.lo <= s.hi {
                        if dik.hi <= s.lo {
                            continue; // certainly fine
                        }
                        // undecided: exact (rational tables only reach here).
                        if let (
                            ExactDistance::Rational(a),
                            ExactDistance::Rational(b),
                            ExactDistance::Rational(c),
                        ) = (self.exact(i, k), self.exact(i, j), self.exact(j, k))
                        {
                            if a > b + c {
                                return Some((i, j, k));
                            }
                        }
                        continue;
                    }
                    return Some((i, j, k));
                }
            }
            None
        })
    }
}

fn q_abs(q: Q) -> Q {
    if q < 0u32 {
        -q
    } else {
        q
    }
}

/// Upper bounds on shortest-path lengths from `src` over the graph `adj` (each node's list
/// of (neighbour, weight)): Dijkstra with a binary heap and upward-rounded sums, so every
/// value is the rounded-up length of a real path; `f64::INFINITY` marks unreachable nodes.
/// O(E log n). Used by [`Space::shortest_paths_upper`] and by producers on a graph's edges.
pub fn shortest_paths_upper(adj: &[Vec<(u32, f64)>], src: usize) -> Vec<f64> {
    use std::cmp::Reverse;
    let n = adj.len();
    let mut dist = vec![f64::INFINITY; n];
    let mut done = vec![false; n];
    let mut heap = BinaryHeap::new();
    dist[src] = 0.0;
    heap.push(Reverse((Ord64(0.0), src)));
    while let Some(Reverse((Ord64(d), u))) = heap.pop() {
        if done[u] {
            continue;
        }
        done[u] = true;
        for &(v, w) in &adj[u] {
            let v = v as usize;
            if done[v] {
                continue;
            }
            let nd = FI::point(d).add(FI::point(w)).hi;
            if nd < dist[v] {
                dist[v] = nd;
                heap.push(Reverse((Ord64(nd), v)));
            }
        }
    }
    dist
}

/// Rigorous enclosure of asin(x) for x ∈ [0, 1/2] from its Maclaurin series
/// asin x = Σ c_k x^{2k+1}, c_0 = 1, c_{k+1} = c_k (2k+1)² / ((2k+2)(2k+3)): all c_k ∈ (0, 1],
/// so the partial sum to k = K is a lower bound and adding x^{2K+3}/(1−x²) an upper bound.
/// Returns `None` outside [0, 1/2] (the caller falls back to the exact enclosure).
fn asin_fi(x: FI) -> Option<FI> {
    if !(x.lo >= 0.0) || !(x.hi <= 0.5) {
        return None;
    }
    const K: usize = 22;
    // The series' coefficients c_k = (2k)!/(4^k (k!)² (2k + 1)), enclosed once by the
    // recurrence c_{k+1} = c_k·(2k + 1)²/((2k + 2)(2k + 3)) (they were recomputed for every
    // distance: half of a 500-site haversine table's time).
    static COEFFS: std::sync::OnceLock<[FI; K + 1]> = std::sync::OnceLock::new();
    let coeffs = COEFFS.get_or_init(|| {
        let mut cs = [FI::point(1.0); K + 1];
        for k in 0..K {
            let kf = k as f64;
            cs[k + 1] = cs[k]
                .mul(FI::point((2.0 * kf + 1.0) * (2.0 * kf + 1.0)))
                .div(FI::point((2.0 * kf + 2.0) * (2.0 * kf + 3.0)));
        }
        cs
    });
    let eval = |t: f64, upper: bool| -> f64 {
        let t = FI::point(t);
        let t2 = t.sqr();
        let mut term = t; // x^{2k+1}
        let mut sum = FI::point(0.0);
        for c in coeffs {
            sum = sum.add(c.mul(term));
            term = term.mul(t2);
        }
        if upper {
            // remainder ≤ x^{2K+3} / (1 − x²); `term` is now x^{2K+3}.
            let rem = term.div(FI::point(1.0).sub(t2));
            sum.add(rem).hi
        } else {
            sum.lo
        }
    };
    Some(FI::new(eval(x.lo, false), eval(x.hi, true)))
}

/// Rigorous enclosure of asin(x) for x ⊆ [0, 1] (a larger upper end is clamped to 1, so
/// only for quantities known to be ≤ 1, like a half chord of unit vectors): [`asin_fi`] up
/// to 1/2, and beyond it asin t = π/2 − 2·asin(√((1 − t)/2)), whose inner argument is in
/// [0, 1/2] (spec/soundness.md §2). Each end is enclosed alone (asin is increasing).
/// `None` for a lower end < 0 or NaN.
fn asin_unit(x: FI) -> Option<FI> {
    if !(x.lo >= 0.0) || x.hi.is_nan() {
        return None;
    }
    // π/2 lies in [fl(π/2), next_up(fl(π/2))]: fl(π/2) = 1.5707963267948965580… < π/2.
    const HALF_PI: f64 = std::f64::consts::FRAC_PI_2;
    let at = |t: f64| -> Option<FI> {
        let t = t.min(1.0);
        if t <= 0.5 {
            return asin_fi(FI::point(t));
        }
        let y = FI::point(1.0).sub(FI::point(t)).mul_f64(0.5).sqrt();
        let y = FI::new(y.lo.max(0.0), y.hi.min(0.5));
        let a = asin_fi(y)?;
        Some(FI::new(HALF_PI, crate::exact::float::next_up(HALF_PI)).sub(a.mul_f64(2.0)))
    };
    Some(FI::new(at(x.lo)?.lo.max(0.0), at(x.hi)?.hi))
}

/// A heap entry of the exact Dijkstras (this module's and [`Roads`]'): the least distance
/// first, ties by node.
#[derive(PartialEq, Eq)]
struct HeapItem(Q, usize);
impl Ord for HeapItem {
    fn cmp(&self, other: &Self) -> Ordering {
        other.0.cmp(&self.0).then(other.1.cmp(&self.1))
    }
}
impl PartialOrd for HeapItem {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// Exact single-source shortest paths (Dijkstra over rationals).
fn dijkstra_exact(adj: &[Vec<(usize, Q)>], src: usize) -> Vec<Option<Q>> {
    let mut dist: Vec<Option<Q>> = vec![None; adj.len()];
    let mut done = vec![false; adj.len()];
    let mut heap = BinaryHeap::new();
    dist[src] = Some(Q::from(0u32));
    heap.push(HeapItem(Q::from(0u32), src));
    while let Some(HeapItem(d, u)) = heap.pop() {
        if done[u] {
            continue;
        }
        done[u] = true;
        for (v, w) in &adj[u] {
            let nd = &d + w;
            if dist[*v].as_ref().is_none_or(|old| nd < *old) {
                dist[*v] = Some(nd.clone());
                heap.push(HeapItem(nd, *v));
            }
        }
    }
    dist
}

/// The connected component of each record in the graph of `pairs` (the η-graph of a
/// `--within` LP), numbered in order of each component's smallest member. No privacy row
/// joins two components, so the PMO LP is their direct sum (Qiu 2024, Proposition 3.1):
/// Benders partitions within them and `lp::block_ipm` factorizes each apart.
pub fn components(n: usize, pairs: &[(usize, usize)]) -> Vec<u32> {
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for &(u, v) in pairs {
        let (a, b) = (find(&mut parent, u), find(&mut parent, v));
        if a != b {
            parent[a.max(b)] = a.min(b);
        }
    }
    let mut id = vec![u32::MAX; n];
    let mut next = 0;
    let mut out = vec![0u32; n];
    for (u, o) in out.iter_mut().enumerate() {
        let r = find(&mut parent, u);
        if id[r] == u32::MAX {
            id[r] = next;
            next += 1;
        }
        *o = id[r];
    }
    out
}

/// f64 ordered by `total_cmp`, for the Dijkstra heaps ([`Space::shortest_paths_upper`],
/// `benders::chain` and `lp::local` of the `mdp` crate).
pub struct Ord64(pub f64);

impl PartialEq for Ord64 {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl Eq for Ord64 {}

impl PartialOrd for Ord64 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ord64 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(a: i64, b: i64) -> Q {
        Q::from_signeds(a, b)
    }

    /// The haversine table is built inside a `OnceLock` that rayon tasks enter: built with
    /// rayon it deadlocked (1 run in 8 of a 50-record OPTMech on 16 threads). Fresh spaces,
    /// first touched from 16 rayon threads at once, 40 times; a watchdog fails the test
    /// instead of hanging CI. The table equals the direct enclosures.
    #[test]
    fn haversine_table_under_rayon_does_not_deadlock() {
        use rayon::prelude::*;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(16)
                .build()
                .unwrap();
            for t in 0..40i64 {
                let pts = (0..60i64)
                    .map(|i| {
                        vec![
                            q(41_000 + (i * 37 + t) % 900, 1000),
                            q(12_300 + (i * 53) % 700, 1000),
                        ]
                    })
                    .collect();
                let s = Space::from_points(MetricKind::Haversine, pts, None).unwrap();
                let total: f64 = pool.install(|| {
                    (0..60 * 60)
                        .into_par_iter()
                        .map(|p| s.fi(p / 60, p % 60).hi)
                        .sum()
                });
                assert!(total > 0.0);
                for (i, j) in [(0, 1), (7, 59), (33, 2)] {
                    assert_eq!(s.fi(i, j), s.haversine_fi(i, j));
                }
            }
            tx.send(()).unwrap();
        });
        rx.recv_timeout(std::time::Duration::from_secs(120))
            .expect("the haversine table deadlocked under rayon");
    }

    /// The heap Dijkstra of `shortest_paths_upper` against Floyd–Warshall on graphs whose
    /// lengths are small integers (every sum exact in f64, so the two must agree exactly),
    /// with unreachable inputs at +∞.
    #[test]
    fn shortest_paths_agree_with_floyd_warshall() {
        let n = 14;
        let pts = (0..n as i64).map(|i| vec![q((i * 7) % 23, 1)]).collect();
        let s = Space::from_points(MetricKind::Euclidean, pts, None).unwrap();
        for seed in 0..20u64 {
            // A deterministic pseudo-random symmetric edge set.
            let on = |u: usize, v: usize| {
                let (a, b) = (u.min(v) as u64, u.max(v) as u64);
                (a * 31 + b * 17 + seed * 13) % 5 < 2
            };
            // Integer lengths (the function takes any upper bounds).
            let w = |u: usize, v: usize| ((u * v + seed as usize) % 7 + 1) as f64;
            let adj = s.upper_adjacency(&|u, v| on(u, v).then(|| w(u, v)));
            let mut fw = vec![f64::INFINITY; n * n];
            for u in 0..n {
                fw[u * n + u] = 0.0;
                for v in (0..n).filter(|&v| v != u && on(u, v)) {
                    fw[u * n + v] = w(u, v);
                }
            }
            for m in 0..n {
                for u in 0..n {
                    for v in 0..n {
                        let t = fw[u * n + m] + fw[m * n + v];
                        if t < fw[u * n + v] {
                            fw[u * n + v] = t;
                        }
                    }
                }
            }
            for u in 0..n {
                assert_eq!(
                    s.shortest_paths_upper(u, &adj),
                    fw[u * n..(u + 1) * n].to_vec()
                );
            }
        }
    }

    #[test]
    fn euclidean_is_exact_sqrt() {
        let s = Space::from_points(
            MetricKind::Euclidean,
            vec![vec![q(0, 1), q(0, 1)], vec![q(3, 1), q(4, 1)]],
            None,
        )
        .unwrap();
        assert_eq!(s.exact(0, 1), ExactDistance::SqrtOf(q(25, 1)));
        assert!(s.fi(0, 1).contains(5.0));
        assert_eq!(s.cmp_distance(0, 1, &q(5, 1), 256), Some(Ordering::Equal));
        assert_eq!(
            s.cmp_distance(0, 1, &q(49999, 10000), 256),
            Some(Ordering::Greater)
        );
    }

    /// Duplicate sites with coordinates that are not floats (−1.43) have the exact 0
    /// enclosure, in every coordinate kind (regression: TEM rows of duplicates differed by
    /// an ulp through a [0, 2e-16] enclosure).
    #[test]
    fn duplicate_sites_have_exact_zero_enclosure() {
        for kind in [
            MetricKind::Euclidean,
            MetricKind::Manhattan,
            MetricKind::Chebyshev,
        ] {
            let p = vec![q(-143, 100), q(7, 3)];
            let s =
                Space::from_points(kind, vec![p.clone(), vec![q(0, 1), q(0, 1)], p], None).unwrap();
            assert_eq!(s.fi(0, 2), FI::point(0.0), "{kind:?}");
            assert_eq!(s.approx(2, 0), 0.0, "{kind:?}");
            assert!(s.fi(0, 1).lo > 0.0);
        }
    }

    #[test]
    fn graph_shortest_paths() {
        let s = Space::from_graph(3, &[(0, 1, q(1, 1)), (1, 2, q(1, 2)), (0, 2, q(2, 1))]).unwrap();
        assert_eq!(s.exact(0, 2), ExactDistance::Rational(q(3, 2)));
        assert!(Space::from_graph(3, &[(0, 1, q(1, 1))]).is_err());
    }

    #[test]
    fn explicit_validation() {
        let ok = vec![vec![q(0, 1), q(1, 1)], vec![q(1, 1), q(0, 1)]];
        assert!(Space::from_table(ok).unwrap().warnings.is_empty());
        let asym = vec![vec![q(0, 1), q(1, 1)], vec![q(2, 1), q(0, 1)]];
        assert!(Space::from_table(asym)
            .unwrap_err()
            .message
            .contains("symmetric"));
        let tri = vec![
            vec![q(0, 1), q(1, 1), q(5, 1)],
            vec![q(1, 1), q(0, 1), q(1, 1)],
            vec![q(5, 1), q(1, 1), q(0, 1)],
        ];
        let s = Space::from_table(tri).unwrap();
        assert_eq!(s.triangle_violation(), Some((0, 1, 2)));
        assert_eq!(s.warnings.len(), 1);
    }

    #[test]
    fn haversine_enclosures_agree() {
        // Rome (41.9028, 12.4964) and Paris (48.8566, 2.3522): ≈ 1105.8 km.
        let pts = vec![
            vec![q(419028, 10000), q(124964, 10000)],
            vec![q(488566, 10000), q(23522, 10000)],
        ];
        let s = Space::from_points(MetricKind::Haversine, pts, None).unwrap();
        let f = s.fi(0, 1);
        let e = s.enclosure(0, 1, 80);
        let (elo, ehi) = e.to_f64_bounds();
        assert!(f.lo <= elo && ehi <= f.hi, "{f:?} vs [{elo}, {ehi}]");
        assert!((f.lo - 1105.8).abs() < 1.0);
        assert!(f.hi - f.lo < 1e-9 * f.hi);
        // The cached table is rebuilt when sites are added (Paris appended again: d = that).
        let t = s
            .with_extra_points(vec![vec![q(488566, 10000), q(23522, 10000)]])
            .unwrap();
        assert_eq!(t.fi(0, 2), f);
        assert_eq!(t.fi(1, 2), FI::point(0.0));
        assert_eq!(t.fi(0, 1), s.haversine_fi(0, 1));
        // The table mirrors its upper triangle: the enclosure is symmetric bit for bit.
        assert_eq!(s.haversine_fi(1, 0), s.haversine_fi(0, 1));
        assert_eq!(t.fi(2, 0), t.fi(0, 2));
    }

    /// Past 60° of arc (half chord > 1/2) the float enclosure uses asin's reflection
    /// identity instead of the rational fallback: it contains the exact enclosure at 200
    /// bits for pairs up to antipodal, and stays narrow.
    #[test]
    fn haversine_far_pairs_are_enclosed_in_floats() {
        let pts = vec![
            vec![q(0, 1), q(0, 1)],
            vec![q(0, 1), q(61, 1)],
            vec![q(30, 1), q(120, 1)],
            vec![q(-45, 1), q(179, 1)],
            vec![q(0, 1), q(180, 1)],
            vec![q(1, 1000), q(-17999, 100)],
            vec![q(89, 1), q(3, 1)],
        ];
        let s = Space::from_points(MetricKind::Haversine, pts, None).unwrap();
        for i in 0..7 {
            for j in 0..7 {
                let f = s.haversine_fi(i, j);
                let (elo, ehi) = s.enclosure(i, j, 200).to_f64_bounds();
                assert!(
                    f.lo <= elo && ehi <= f.hi,
                    "({i}, {j}): {f:?} vs [{elo}, {ehi}]"
                );
                assert!(f.hi - f.lo <= 1e-6 * f.hi.max(1.0), "({i}, {j}): {f:?}");
            }
        }
        // The box-gap bound is below every distance it bounds.
        for c in [0.0, 0.3, 1.0, 1.9, 2.0, 2.5] {
            let lo = s.gap_distance_lo(&[c, 0.0, 0.0]);
            let chord_d =
                2.0 * s.radius().to_f64(crate::exact::Round::Up) * (c.min(2.0) / 2.0f64).asin();
            assert!(lo <= chord_d * (1.0 + 1e-12), "gap {c}: {lo} vs {chord_d}");
        }
    }

    /// The plain-float Euclidean enclosure (`euclidean_fi`) contains the exact distance on
    /// points with decimal coordinates (not floats), at scales 1e-200…1e200, in 1…400
    /// dimensions, including near-duplicates that differ in the 17th digit; and it is no
    /// wider than interval arithmetic plus its a-priori error term.
    #[test]
    fn euclidean_float_enclosure_contains_exact() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for case in 0..300 {
            let k = [1, 2, 3, 7, 64, 384, 400][case % 7];
            let scale: i32 = [-200, -20, 0, 3, 150, 200][(case / 7) % 6];
            let dec = |rng: &mut rand_chacha::ChaCha8Rng| -> Q {
                let m: i64 = rng.gen_range(-10_i64.pow(17)..10_i64.pow(17));
                let e = scale - 17;
                if e >= 0 {
                    Q::from(m) * Q::from(10u32).pow(e as i64)
                } else {
                    Q::from(m) / Q::from(10u32).pow(-e as i64)
                }
            };
            let a: Vec<Q> = (0..k).map(|_| dec(&mut rng)).collect();
            let mut b: Vec<Q> = (0..k).map(|_| dec(&mut rng)).collect();
            if case % 3 == 0 {
                // a near-duplicate: one coordinate moved in its last digit
                b = a.clone();
                let e = scale - 17 - 1;
                let tick = Q::from(10u32).pow(e as i64);
                b[case % k] += tick;
            }
            let s = Space::from_points(MetricKind::Euclidean, vec![a, b], None).unwrap();
            assert_eq!(s.fi(0, 0), FI::point(0.0));
            // Squares overflow beyond ~1e154: then `fi` falls back to interval arithmetic.
            assert_eq!(s.euclidean_fi(0, 1).is_none(), scale > 150);
            let f = s.fi(0, 1);
            let (elo, ehi) = s.enclosure(0, 1, 300).to_f64_bounds();
            assert!(
                f.lo <= elo && ehi <= f.hi,
                "case {case}: {f:?} vs [{elo}, {ehi}]"
            );
            let g = s.euclidean_fi_interval(0, 1);
            assert!(
                f.hi - f.lo
                    <= (g.hi - g.lo)
                        + 5.0 * (k as f64 + 4.0) * f64::EPSILON * f.hi
                        + 2.0 * (s.frho[0] + s.frho[1])
                        + 2f64.powi(-496),
                "case {case}: {f:?} vs interval {g:?}"
            );
        }
    }
}
