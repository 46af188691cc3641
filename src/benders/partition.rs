//! Partitioning the secrets for Benders (Qiu 2024 §3.1, §3.4): the η-graph's components
//! (Proposition 3.1), the paper's k-means partitions (k-m-rec on coordinates, k-m-DV on
//! distance vectors, k-m-adj on adjacency rows), balanced spectral clustering (BSC: the
//! ratio-cut embedding of Hagen & Kahng 1992, k-means on it, then a capacity-bounded
//! assignment, which the published code lacks), and the master set: Qiu's boundary
//! (Definition 3.2: every record with an η-neighbour in another subset) or a greedy vertex
//! cover of the cross edges (one end of each cross edge suffices; measured smaller, see
//! `spec/benders.md`).
//!
//! Every method is deterministic under its seed (ChaCha20, sequential float sums).

use crate::lp::{invalid, BuildError};
use crate::metric::{MetricKind, Space};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use serde::Serialize;

/// How records are grouped into subsets (within each η-component).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// k-means on the record coordinates (haversine: tangent-plane km).
    KmRec,
    /// k-means on each record's vector of distances to the component's records.
    KmDv,
    /// k-means on the rows of the closed 0/1 η-adjacency matrix.
    KmAdj,
    /// Balanced spectral clustering: k-means on the eigenvectors of the η-graph Laplacian's
    /// smallest eigenvalues, each subset then held to ⌈1.25·size/C⌉ records ([`balance`]).
    Bsc,
}

impl Method {
    pub fn from_name(s: &str) -> Option<Method> {
        Some(match s {
            "km-rec" => Method::KmRec,
            "km-dv" => Method::KmDv,
            "km-adj" => Method::KmAdj,
            "bsc" => Method::Bsc,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Method::KmRec => "km-rec",
            Method::KmDv => "km-dv",
            Method::KmAdj => "km-adj",
            Method::Bsc => "bsc",
        }
    }
}

/// Which records the master problem holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum MasterSet {
    /// A greedy vertex cover of the cross edges.
    Cover,
    /// Qiu's Definition 3.2: both ends of every cross edge.
    Boundary,
}

impl MasterSet {
    pub fn from_name(s: &str) -> Option<MasterSet> {
        Some(match s {
            "cover" => MasterSet::Cover,
            "boundary" => MasterSet::Boundary,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            MasterSet::Cover => "cover",
            MasterSet::Boundary => "boundary",
        }
    }
}

/// The squared Euclidean distance of two feature vectors (k-means and [`balance`]).
fn sq_dist(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
}

/// k-means (k-means++ seeding, at most 100 Lloyd steps) on `points`; deterministic under
/// `seed`. Returns a cluster in 0..k for each point; every cluster is non-empty when
/// k ≤ the number of distinct points.
pub fn kmeans(points: &[Vec<f64>], k: usize, seed: u64) -> Vec<u32> {
    let n = points.len();
    let k = k.clamp(1, n.max(1));
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut centers: Vec<Vec<f64>> = vec![points[rng.gen_range(0..n)].clone()];
    let mut near: Vec<f64> = points.iter().map(|p| sq_dist(p, &centers[0])).collect();
    while centers.len() < k {
        let total: f64 = near.iter().sum();
        let pick = if total > 0.0 {
            let mut r = rng.gen::<f64>() * total;
            let mut i = 0;
            while i + 1 < n && r >= near[i] {
                r -= near[i];
                i += 1;
            }
            i
        } else {
            rng.gen_range(0..n)
        };
        centers.push(points[pick].clone());
        for (i, p) in points.iter().enumerate() {
            near[i] = near[i].min(sq_dist(p, &centers[centers.len() - 1]));
        }
    }
    let mut assign = vec![0u32; n];
    for step in 0..100 {
        let mut changed = false;
        for (i, p) in points.iter().enumerate() {
            let mut best = (f64::INFINITY, 0u32);
            for (c, ctr) in centers.iter().enumerate() {
                let d = sq_dist(p, ctr);
                if d < best.0 {
                    best = (d, c as u32);
                }
            }
            changed |= assign[i] != best.1;
            assign[i] = best.1;
        }
        // New centroids; an empty cluster takes the point farthest from its centroid.
        let dim = points[0].len();
        let mut sums = vec![vec![0.0; dim]; k];
        let mut counts = vec![0usize; k];
        for (i, p) in points.iter().enumerate() {
            let c = assign[i] as usize;
            counts[c] += 1;
            for (s, x) in sums[c].iter_mut().zip(p) {
                *s += x;
            }
        }
        for c in 0..k {
            if counts[c] == 0 {
                // The point farthest from its centre, taken from a cluster it does not
                // empty (one exists: k ≤ n and cluster c is empty); c then counts it.
                let far = (0..n)
                    .filter(|&a| counts[assign[a] as usize] > 1)
                    .max_by(|&a, &b| {
                        let da = sq_dist(&points[a], &centers[assign[a] as usize]);
                        let db = sq_dist(&points[b], &centers[assign[b] as usize]);
                        da.total_cmp(&db).then(b.cmp(&a))
                    })
                    .expect("k ≤ n: some cluster has two points");
                counts[assign[far] as usize] -= 1;
                counts[c] = 1;
                assign[far] = c as u32;
                centers[c] = points[far].clone();
                changed = true;
            } else {
                centers[c] = sums[c].iter().map(|s| s / counts[c] as f64).collect();
            }
        }
        if !changed && step > 0 {
            break;
        }
    }
    assign
}

/// Orthonormalize the columns `q` (each of length s) in place by modified Gram–Schmidt; a
/// column that vanishes is replaced by a unit vector of the seeded generator.
fn orthonormalize(q: &mut [Vec<f64>], rng: &mut ChaCha20Rng) {
    for j in 0..q.len() {
        for _ in 0..2 {
            for i in 0..j {
                let dot: f64 = q[i].iter().zip(&q[j]).map(|(a, b)| a * b).sum();
                let (head, tail) = q.split_at_mut(j);
                for (x, y) in tail[0].iter_mut().zip(&head[i]) {
                    *x -= dot * y;
                }
            }
            let norm = q[j].iter().map(|x| x * x).sum::<f64>().sqrt();
            if norm > 1e-12 {
                q[j].iter_mut().for_each(|x| *x /= norm);
                break;
            }
            q[j].iter_mut().for_each(|x| *x = rng.gen::<f64>() - 0.5);
        }
    }
}

/// Eigenvalues and eigenvectors (columns of the returned row-major matrix) of a dense
/// symmetric m×m matrix (row-major), by faer's self-adjoint eigendecomposition (it reads
/// the lower triangle). Should it not converge, the matrix's diagonal and the unit vectors
/// are returned: the embedding is then the Ritz basis itself, still a subspace of the
/// Laplacian's smallest eigenvectors, and a partition is still made.
fn symmetric_eigen(a: &[f64], m: usize) -> (Vec<f64>, Vec<f64>) {
    let mat = faer::Mat::from_fn(m, m, |i, j| a[i * m + j]);
    match mat.self_adjoint_eigen(faer::Side::Lower) {
        Ok(evd) => {
            let (u, s) = (evd.U(), evd.S().column_vector());
            (
                (0..m).map(|i| s[i]).collect(),
                (0..m * m).map(|r| u[(r / m, r % m)]).collect(),
            )
        }
        Err(_) => (
            (0..m).map(|i| a[i * m + i]).collect(),
            (0..m * m)
                .map(|r| f64::from(u8::from(r / m == r % m)))
                .collect(),
        ),
    }
}

/// Steps of subspace iteration for the spectral embedding.
const SPECTRAL_STEPS: usize = 300;

/// Largest spectral embedding dimension: subspace iteration costs ≈ steps·(edges·dim +
/// s·dim²), so C_c subsets of a large component are clustered in at most this many
/// dimensions.
const SPECTRAL_DIM: usize = 32;

/// The ratio-cut spectral embedding (Hagen & Kahng 1992): for the Laplacian L = D − A of
/// the LP's neighbour graph (the η-graph after the LP's pruning) on the records `members`,
/// approximate eigenvectors of its min(`dim`, [`SPECTRAL_DIM`]) smallest eigenvalues, one
/// row per record. Found by a fixed number of subspace-iteration steps on σI − L
/// (σ = 2·max degree + 1 > λ_max, Gershgorin) with Rayleigh–Ritz, seeded; a heuristic
/// partition needs the subspace, not converged vectors.
fn spectral_embedding(
    adjacency: &[Vec<usize>],
    members: &[usize],
    dim: usize,
    seed: u64,
) -> Vec<Vec<f64>> {
    let s = members.len();
    let dim = dim.min(s).min(SPECTRAL_DIM);
    let pos: std::collections::HashMap<usize, usize> =
        members.iter().enumerate().map(|(a, &i)| (i, a)).collect();
    let nbrs: Vec<Vec<usize>> = members
        .iter()
        .map(|&i| {
            adjacency[i]
                .iter()
                .filter_map(|j| pos.get(j).copied())
                .collect()
        })
        .collect();
    let sigma = 2.0 * nbrs.iter().map(|n| n.len()).max().unwrap_or(0) as f64 + 1.0;
    // y = (σI − L)x = (σ − deg)x + A x.
    let apply = |x: &[f64]| -> Vec<f64> {
        (0..s)
            .map(|a| {
                (sigma - nbrs[a].len() as f64) * x[a] + nbrs[a].iter().map(|&b| x[b]).sum::<f64>()
            })
            .collect()
    };
    // A stream of its own (k-means++ on the embedding uses `seed`).
    let mut rng = ChaCha20Rng::seed_from_u64(seed ^ 0x5BD1_E995_9E37_79B9);
    let mut q: Vec<Vec<f64>> = (0..dim)
        .map(|_| (0..s).map(|_| rng.gen::<f64>() - 0.5).collect())
        .collect();
    orthonormalize(&mut q, &mut rng);
    for _ in 0..SPECTRAL_STEPS {
        let mut next: Vec<Vec<f64>> = q.iter().map(|x| apply(x)).collect();
        orthonormalize(&mut next, &mut rng);
        q = next;
    }
    // Rayleigh–Ritz: the dim×dim projection of σI − L; its largest eigenvalues are L's
    // smallest.
    let aq: Vec<Vec<f64>> = q.iter().map(|x| apply(x)).collect();
    let mut h = vec![0.0; dim * dim];
    for i in 0..dim {
        for j in 0..dim {
            h[i * dim + j] = q[i].iter().zip(&aq[j]).map(|(a, b)| a * b).sum();
        }
    }
    for i in 0..dim {
        for j in 0..i {
            let m = 0.5 * (h[i * dim + j] + h[j * dim + i]);
            h[i * dim + j] = m;
            h[j * dim + i] = m;
        }
    }
    let (vals, vecs) = symmetric_eigen(&h, dim);
    let mut order: Vec<usize> = (0..dim).collect();
    order.sort_by(|&a, &b| vals[b].total_cmp(&vals[a]));
    (0..s)
        .map(|r| {
            order
                .iter()
                .map(|&e| (0..dim).map(|i| q[i][r] * vecs[i * dim + e]).sum())
                .collect()
        })
        .collect()
}

/// A capacity-bounded reassignment of k-means clusters: records are placed in order of
/// how much they prefer their best centroid, each cluster taking at most
/// ⌈1.25·n/k⌉ (so no subset exceeds the average by more than a quarter).
pub fn balance(points: &[Vec<f64>], assign: &[u32], k: usize) -> Vec<u32> {
    let n = points.len();
    let dim = points.first().map_or(0, |p| p.len());
    let mut centers = vec![vec![0.0; dim]; k];
    let mut counts = vec![0usize; k];
    for (p, &a) in points.iter().zip(assign) {
        counts[a as usize] += 1;
        for (c, x) in centers[a as usize].iter_mut().zip(p) {
            *c += x;
        }
    }
    for (c, &m) in centers.iter_mut().zip(&counts) {
        c.iter_mut().for_each(|x| *x /= m.max(1) as f64);
    }
    let cap = (5 * n).div_ceil(4 * k).max(1);
    // An empty cluster has no centroid: it is everyone's last choice (it still takes records
    // once the others are full).
    let dist: Vec<Vec<f64>> = points
        .iter()
        .map(|p| {
            centers
                .iter()
                .zip(&counts)
                .map(|(c, &m)| if m == 0 { f64::MAX } else { sq_dist(p, c) })
                .collect()
        })
        .collect();
    // Records with the largest regret (second best − best) choose first.
    let mut order: Vec<usize> = (0..n).collect();
    let regret = |i: usize| {
        let mut d = dist[i].clone();
        d.sort_by(f64::total_cmp);
        d.get(1).map_or(0.0, |s| s - d[0])
    };
    let regrets: Vec<f64> = (0..n).map(regret).collect();
    order.sort_by(|&a, &b| regrets[b].total_cmp(&regrets[a]).then(a.cmp(&b)));
    let mut load = vec![0usize; k];
    let mut out = vec![0u32; n];
    for i in order {
        let mut prefs: Vec<usize> = (0..k).collect();
        prefs.sort_by(|&a, &b| dist[i][a].total_cmp(&dist[i][b]).then(a.cmp(&b)));
        let c = prefs
            .into_iter()
            .find(|&c| load[c] < cap)
            .expect("k·cap ≥ n");
        load[c] += 1;
        out[i] = c as u32;
    }
    out
}

/// The features `method` clusters on, for the records `members` (`want` subsets).
fn features(
    space: &Space,
    adjacency: &[Vec<usize>],
    members: &[usize],
    method: Method,
    want: usize,
    seed: u64,
) -> Result<Vec<Vec<f64>>, BuildError> {
    match method {
        Method::Bsc => Ok(spectral_embedding(adjacency, members, want, seed)),
        Method::KmRec => {
            if !space.kind().has_points() {
                return Err(invalid(
                    "partitioning",
                    "km-rec needs coordinates (an explicit or graph metric has none): use km-dv or km-adj",
                ));
            }
            let pts: Vec<Vec<f64>> = members
                .iter()
                .map(|&i| {
                    space.points()[i]
                        .iter()
                        .map(crate::exact::f64_nearest)
                        .collect()
                })
                .collect();
            if space.kind() != MetricKind::Haversine {
                return Ok(pts);
            }
            // Tangent plane at the mean latitude, in km (x = R·Δλ·cos φ̄, y = R·φ).
            let r = crate::exact::f64_nearest(space.radius());
            let phi = pts.iter().map(|p| p[0]).sum::<f64>() / pts.len() as f64;
            let cos = phi.to_radians().cos();
            Ok(pts
                .iter()
                .map(|p| vec![r * p[1].to_radians() * cos, r * p[0].to_radians()])
                .collect())
        }
        Method::KmDv => Ok(members
            .iter()
            .map(|&i| members.iter().map(|&j| space.approx(i, j)).collect())
            .collect()),
        Method::KmAdj => {
            let pos: std::collections::HashMap<usize, usize> =
                members.iter().enumerate().map(|(a, &i)| (i, a)).collect();
            Ok(members
                .iter()
                .map(|&i| {
                    let mut row = vec![0.0; members.len()];
                    row[pos[&i]] = 1.0;
                    for j in &adjacency[i] {
                        row[pos[j]] = 1.0;
                    }
                    row
                })
                .collect())
        }
    }
}

/// The number of subsets C: 1 ≤ C ≤ n.
pub fn check_partitions(c: usize, n: usize) -> Result<(), BuildError> {
    if c < 1 || c > n {
        return Err(invalid(
            "partitions",
            format!("must be in 1..={n} (n = {n})"),
        ));
    }
    Ok(())
}

/// The subset of each record: `c` subsets in all, shared among the η-components in
/// proportion to their sizes (at least one each; a subset never spans two components).
pub fn partition(
    space: &Space,
    pairs: &[(usize, usize)],
    c: usize,
    method: Method,
    seed: u64,
) -> Result<Vec<u32>, BuildError> {
    let n = space.n();
    check_partitions(c, n)?;
    let comp = crate::metric::components(n, pairs);
    let n_comp = comp.iter().map(|&c| c as usize + 1).max().unwrap_or(0);
    let mut members = vec![vec![]; n_comp];
    for (u, &c) in comp.iter().enumerate() {
        members[c as usize].push(u);
    }
    let mut adjacency = vec![vec![]; n];
    for &(u, v) in pairs {
        adjacency[u].push(v);
    }
    let mut part = vec![0u32; n];
    let mut next = 0u32;
    for (ci, m) in members.iter().enumerate() {
        let want = ((c as f64 * m.len() as f64 / n as f64).round() as usize).clamp(1, m.len());
        if want == 1 {
            for &u in m {
                part[u] = next;
            }
            next += 1;
            continue;
        }
        let seed = seed ^ (ci as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        let f = features(space, &adjacency, m, method, want, seed)?;
        let mut assign = kmeans(&f, want, seed);
        if method == Method::Bsc {
            assign = balance(&f, &assign, want);
        }
        // Renumber the clusters that are used, in order of first member.
        let mut ids = vec![u32::MAX; want];
        for (a, &u) in m.iter().enumerate() {
            let c = assign[a] as usize;
            if ids[c] == u32::MAX {
                ids[c] = next;
                next += 1;
            }
            part[u] = ids[c];
        }
    }
    Ok(part)
}

/// One subset's share of the LP: its free records (solved by its subproblem), the master
/// records its rows touch (fixed there), and those rows' pairs.
#[derive(Clone, Debug)]
pub struct Subset {
    pub free: Vec<usize>,
    pub fixed: Vec<usize>,
    /// Ordered pairs (u, v) of the LP with u or v free in this subset.
    pub pairs: Vec<(usize, usize)>,
}

/// A partition split into master and subproblems.
#[derive(Clone, Debug)]
pub struct Decomposition {
    pub part: Vec<u32>,
    /// Master records, ascending.
    pub master: Vec<usize>,
    pub is_master: Vec<bool>,
    /// Ordered pairs with both ends in the master (rows of the master problem).
    pub master_pairs: Vec<(usize, usize)>,
    /// Subsets with at least one free record.
    pub subsets: Vec<Subset>,
}

/// Split the LP's pairs by the partition: every row belongs to the master (both ends
/// master) or to exactly one subproblem (an end free in that subset; the other end is
/// free in the same subset or a master record, since every cross edge has a master end).
pub fn decompose(
    n: usize,
    pairs: &[(usize, usize)],
    part: &[u32],
    mode: MasterSet,
) -> Decomposition {
    let cross: Vec<(usize, usize)> = pairs
        .iter()
        .copied()
        .filter(|&(u, v)| u < v && part[u] != part[v])
        .collect();
    let mut is_master = vec![false; n];
    match mode {
        MasterSet::Boundary => {
            for &(u, v) in &cross {
                is_master[u] = true;
                is_master[v] = true;
            }
        }
        MasterSet::Cover => {
            // Greedy: take the record covering most uncovered cross edges (ties: lower index).
            let mut deg = vec![0usize; n];
            let mut inc: Vec<Vec<usize>> = vec![vec![]; n];
            for (e, &(u, v)) in cross.iter().enumerate() {
                deg[u] += 1;
                deg[v] += 1;
                inc[u].push(e);
                inc[v].push(e);
            }
            let mut covered = vec![false; cross.len()];
            let mut heap: std::collections::BinaryHeap<(usize, std::cmp::Reverse<usize>)> = (0..n)
                .filter(|&u| deg[u] > 0)
                .map(|u| (deg[u], std::cmp::Reverse(u)))
                .collect();
            while let Some((d, std::cmp::Reverse(u))) = heap.pop() {
                if d != deg[u] || d == 0 {
                    continue; // stale entry
                }
                is_master[u] = true;
                for &e in &inc[u] {
                    if !covered[e] {
                        covered[e] = true;
                        let (a, b) = cross[e];
                        let w = if a == u { b } else { a };
                        deg[w] -= 1;
                        if deg[w] > 0 {
                            heap.push((deg[w], std::cmp::Reverse(w)));
                        }
                    }
                }
                deg[u] = 0;
            }
        }
    }
    let master: Vec<usize> = (0..n).filter(|&u| is_master[u]).collect();
    let n_sub = part.iter().map(|&p| p as usize + 1).max().unwrap_or(0);
    let mut subsets: Vec<Subset> = (0..n_sub)
        .map(|_| Subset {
            free: vec![],
            fixed: vec![],
            pairs: vec![],
        })
        .collect();
    for u in 0..n {
        if !is_master[u] {
            subsets[part[u] as usize].free.push(u);
        }
    }
    let mut master_pairs = vec![];
    let mut fixed_sets: Vec<std::collections::BTreeSet<usize>> = vec![Default::default(); n_sub];
    for &(u, v) in pairs {
        let owner = if !is_master[u] {
            part[u]
        } else if !is_master[v] {
            part[v]
        } else {
            master_pairs.push((u, v));
            continue;
        };
        debug_assert!(is_master[u] || is_master[v] || part[u] == part[v]);
        let s = owner as usize;
        subsets[s].pairs.push((u, v));
        for w in [u, v] {
            if is_master[w] {
                fixed_sets[s].insert(w);
            }
        }
    }
    for (s, f) in subsets.iter_mut().zip(fixed_sets) {
        s.fixed = f.into_iter().collect();
    }
    Decomposition {
        part: part.to_vec(),
        master,
        is_master,
        master_pairs,
        subsets: subsets.into_iter().filter(|s| !s.free.is_empty()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Several clusters empty in one Lloyd step (duplicate points, k = n): each takes a
    /// point from a cluster it does not empty. The counts once underflowed here (a panic
    /// in tests, wrapped counts in release; found by the QIU-P33 proptest, km-adj, n = 4).
    #[test]
    fn kmeans_refills_several_empty_clusters() {
        let coords = vec![
            vec![0.0, 0.0],
            vec![0.0, 0.0],
            vec![0.0, 0.0],
            vec![1.0, 1.0],
        ];
        let adjacency = vec![
            vec![1.0, 0.0],
            vec![1.0, 0.0],
            vec![0.0, 1.0],
            vec![0.0, 1.0],
        ];
        for points in [coords, adjacency] {
            for seed in 0..50 {
                let labels = kmeans(&points, 4, seed);
                assert!(labels.iter().all(|&l| l < 4), "{labels:?}");
                // Two distinct points: at least two clusters hold points.
                let mut used = labels.clone();
                used.sort_unstable();
                used.dedup();
                assert!(used.len() >= 2, "{labels:?}");
            }
        }
    }

    /// The eigendecomposition finds the spectrum of a path graph's Laplacian,
    /// 2 − 2cos(πj/m), j < m, with its eigenvectors as columns.
    #[test]
    fn symmetric_eigen_of_a_path_laplacian() {
        let m = 7;
        let mut a = vec![0.0; m * m];
        for i in 0..m - 1 {
            a[i * m + i] += 1.0;
            a[(i + 1) * m + i + 1] += 1.0;
            a[i * m + i + 1] = -1.0;
            a[(i + 1) * m + i] = -1.0;
        }
        let (mut vals, vecs) = symmetric_eigen(&a, m);
        for e in 0..m {
            for i in 0..m {
                let av: f64 = (0..m).map(|j| a[i * m + j] * vecs[j * m + e]).sum();
                assert!(
                    (av - vals[e] * vecs[i * m + e]).abs() < 1e-10,
                    "eigenpair {e}"
                );
            }
        }
        vals.sort_by(f64::total_cmp);
        for (j, v) in vals.iter().enumerate() {
            let want = 2.0 - 2.0 * (std::f64::consts::PI * j as f64 / m as f64).cos();
            assert!((v - want).abs() < 1e-10, "{vals:?}");
        }
    }

    /// Two 6-cliques joined by one edge: BSC's embedding splits them into their cliques
    /// (the ratio cut), and `balance` never exceeds its capacity.
    #[test]
    fn spectral_splits_a_barbell() {
        let n = 12;
        let mut adjacency = vec![vec![]; n];
        for (a, row) in adjacency.iter_mut().enumerate() {
            row.extend((0..n).filter(|&b| a != b && (a < 6) == (b < 6)));
        }
        adjacency[5].push(6);
        adjacency[6].push(5);
        let members: Vec<usize> = (0..n).collect();
        for seed in 0..5 {
            let f = spectral_embedding(&adjacency, &members, 2, seed);
            let assign = balance(&f, &kmeans(&f, 2, seed), 2);
            assert!(assign[..6].iter().all(|&c| c == assign[0]), "{assign:?}");
            assert!(assign[6..].iter().all(|&c| c == assign[6]), "{assign:?}");
            assert_ne!(assign[0], assign[6]);
        }
        // Nine points at one place and one apart, two clusters wanted: capacity
        // ⌈1.25·10/2⌉ = 7.
        let pts = vec![vec![0.0]; 9]
            .into_iter()
            .chain([vec![1.0]])
            .collect::<Vec<_>>();
        let b = balance(&pts, &kmeans(&pts, 2, 1), 2);
        for c in 0..2u32 {
            assert!(b.iter().filter(|&&x| x == c).count() <= 7, "{b:?}");
        }
    }
}
