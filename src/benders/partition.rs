//! Partitioning the secrets for Benders (Qiu 2024 §3.1, §3.4): the η-graph's components
//! (Proposition 3.1), the paper's k-means partitions (k-m-rec on coordinates, k-m-DV on
//! distance vectors, k-m-adj on adjacency rows), and the master set: Qiu's boundary
//! (Definition 3.2: every record with an η-neighbour in another subset) or a greedy vertex
//! cover of the cross edges (one end of each cross edge suffices; measured smaller, see
//! `spec/benders.md`).
//!
//! Every method is deterministic under its seed (ChaCha20, sequential float sums).

use crate::mechanisms::optimal::{invalid, BuildError};
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
}

impl Method {
    pub fn from_name(s: &str) -> Option<Method> {
        Some(match s {
            "km-rec" => Method::KmRec,
            "km-dv" => Method::KmDv,
            "km-adj" => Method::KmAdj,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Method::KmRec => "km-rec",
            Method::KmDv => "km-dv",
            Method::KmAdj => "km-adj",
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

/// The component of each record in the η-graph (numbered by smallest member).
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

/// k-means (k-means++ seeding, at most 100 Lloyd steps) on `points`; deterministic under
/// `seed`. Returns a cluster in 0..k for each point; every cluster is non-empty when
/// k ≤ the number of distinct points.
pub fn kmeans(points: &[Vec<f64>], k: usize, seed: u64) -> Vec<u32> {
    let n = points.len();
    let k = k.clamp(1, n.max(1));
    let d2 =
        |a: &[f64], b: &[f64]| -> f64 { a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum() };
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let mut centers: Vec<Vec<f64>> = vec![points[rng.gen_range(0..n)].clone()];
    let mut near: Vec<f64> = points.iter().map(|p| d2(p, &centers[0])).collect();
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
            near[i] = near[i].min(d2(p, &centers[centers.len() - 1]));
        }
    }
    let mut assign = vec![0u32; n];
    for step in 0..100 {
        let mut changed = false;
        for (i, p) in points.iter().enumerate() {
            let mut best = (f64::INFINITY, 0u32);
            for (c, ctr) in centers.iter().enumerate() {
                let d = d2(p, ctr);
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
                let far = (0..n)
                    .max_by(|&a, &b| {
                        let da = d2(&points[a], &centers[assign[a] as usize]);
                        let db = d2(&points[b], &centers[assign[b] as usize]);
                        da.total_cmp(&db).then(b.cmp(&a))
                    })
                    .expect("n ≥ 1");
                counts[assign[far] as usize] -= 1;
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

/// The features `method` clusters on, for the records `members`.
fn features(
    space: &Space,
    adjacency: &[Vec<usize>],
    members: &[usize],
    method: Method,
) -> Result<Vec<Vec<f64>>, BuildError> {
    match method {
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
    let comp = components(n, pairs);
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
        let f = features(space, &adjacency, m, method)?;
        let assign = kmeans(
            &f,
            want,
            seed ^ (ci as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15),
        );
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
