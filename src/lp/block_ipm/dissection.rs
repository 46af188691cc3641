//! Nested dissection of a block (`spec/lp.md` §4.3): a component of the pairs' graph is
//! ordered [P1, P2, S] with no privacy row between P1 and P2 (S one level of a BFS), each
//! of P1 and P2 dissected in turn ([`dissect`], [`Split`]), so that its block is inverted
//! by blocks ([`spd_inverse`](super::dense::spd_inverse)) where its pairs are sparse.

/// Components smaller than this are inverted whole.
pub(super) const DISSECT_MIN: usize = 64;

/// A block's nested dissection: its inputs ordered [P1, P2, S] with no pair between P1
/// and P2, and each of P1, P2 dissected in turn (`parts`); (0, 0) and no parts for a
/// block inverted whole.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Split {
    pub(super) p1: usize,
    pub(super) p2: usize,
    pub(super) parts: Vec<Split>,
}

impl Split {
    pub(super) fn top(&self) -> (usize, usize) {
        (self.p1, self.p2)
    }

    /// Work entries (X, Y and Σ of every level on the path being inverted) for an m×m
    /// block ([`spd_inverse`](super::dense::spd_inverse)).
    pub(super) fn scratch(&self, m: usize) -> usize {
        if self.parts.is_empty() {
            return 0;
        }
        let (rs, s) = (self.p1 + self.p2, m - self.p1 - self.p2);
        2 * rs * s
            + s * s
            + self.parts[0]
                .scratch(self.p1)
                .max(self.parts[1].scratch(self.p2))
    }

    /// Levels of dissection.
    pub(super) fn depth(&self) -> usize {
        self.parts.iter().map(|p| 1 + p.depth()).max().unwrap_or(0)
    }
}

/// Nested dissection of a component of the pairs' graph, from the BFS levels of a
/// pseudo-peripheral input: a pair joins inputs at most one level apart, so one level S
/// separates P1 (the levels before it) from P2 (those after). The level is the one, with
/// at least a fifth of the inputs on each side, that minimizes the block inverse's flops
/// p1³ + p2³ + m²s + 3ms² ([`spd_inverse`](super::dense::spd_inverse)); the dissection is
/// used when that is at most 0.7·m³, and P1 and P2 are dissected in turn (each only if
/// connected: a BFS must reach all of it). Returns the inputs ordered [P1, P2, S] (each
/// part ordered by its own dissection) and the [`Split`], or the component as it is and no
/// split.
pub(super) fn dissect(comp: &[u32], adj: &[Vec<u32>]) -> (Vec<u32>, Split) {
    let m = comp.len();
    let whole = || (comp.to_vec(), Split::default());
    if m < DISSECT_MIN {
        return whole();
    }
    let member: std::collections::HashSet<u32> = comp.iter().copied().collect();
    let bfs = |root: u32| {
        let mut level = std::collections::HashMap::with_capacity(m);
        level.insert(root, 0usize);
        let mut queue = std::collections::VecDeque::from([root]);
        let mut last = root;
        while let Some(u) = queue.pop_front() {
            last = u;
            let lu = level[&u];
            for &v in adj[u as usize].iter().filter(|v| member.contains(v)) {
                if let std::collections::hash_map::Entry::Vacant(e) = level.entry(v) {
                    e.insert(lu + 1);
                    queue.push_back(v);
                }
            }
        }
        (level, last)
    };
    let (_, far) = bfs(comp[0]);
    let (level, _) = bfs(far);
    if level.len() < m {
        return whole();
    }
    let depth = level.values().max().map_or(0, |d| d + 1);
    let mut count = vec![0usize; depth];
    for d in level.values() {
        count[*d] += 1;
    }
    let mf = m as f64;
    let mut best: Option<(f64, usize)> = None;
    let mut before = 0usize;
    for (l, &s) in count.iter().enumerate() {
        let after = m - before - s;
        if 5 * before >= m && 5 * after >= m {
            let (p1, p2, s) = (before as f64, after as f64, s as f64);
            let flops = p1.powi(3) + p2.powi(3) + mf * mf * s + 3.0 * mf * s * s;
            if best.is_none_or(|(f, _)| flops < f) {
                best = Some((flops, l));
            }
        }
        before += s;
    }
    let Some((_, cut)) = best.filter(|&(f, _)| f <= 0.7 * mf.powi(3)) else {
        return whole();
    };
    let part = |keep: &dyn Fn(usize) -> bool| -> Vec<u32> {
        comp.iter().copied().filter(|u| keep(level[u])).collect()
    };
    let (p1, p2, s) = (part(&|d| d < cut), part(&|d| d > cut), part(&|d| d == cut));
    let ((o1, s1), (o2, s2)) = (dissect(&p1, adj), dissect(&p2, adj));
    let split = Split {
        p1: p1.len(),
        p2: p2.len(),
        parts: vec![s1, s2],
    };
    ([o1, o2, s].concat(), split)
}

#[cfg(test)]
mod tests {
    use super::super::dense::{mul_vec_on, spd_inverse};
    use super::super::newton::Work;
    use super::*;

    /// Nested dissection ([`Split::parts`]): a 20×20 grid's Laplacian (with diagonals)
    /// plus a diagonal, ordered by [`dissect`], is dissected on at least two levels and
    /// inverted recursively as the whole inverse, in full; its compact form's products
    /// agree too.
    #[test]
    fn nested_dissection_inverts() {
        let (w, m) = (20usize, 400usize);
        let mut adj = vec![vec![]; m];
        let mut edges = vec![];
        for i in 0..m {
            let (x, y) = ((i % w) as i64, (i / w) as i64);
            for (dx, dy) in [(1i64, 0i64), (0, 1), (1, 1), (1, -1)] {
                let (nx, ny) = (x + dx, y + dy);
                if (0..w as i64).contains(&nx) && (0..w as i64).contains(&ny) {
                    let j = ny as usize * w + nx as usize;
                    adj[i].push(j as u32);
                    adj[j].push(i as u32);
                    edges.push((i, j));
                }
            }
        }
        let all: Vec<u32> = (0..m as u32).collect();
        let (order, split) = dissect(&all, &adj);
        assert!(split.depth() >= 2, "{split:?}");
        let mut pos = vec![0usize; m];
        for (a, &u) in order.iter().enumerate() {
            pos[u as usize] = a;
        }
        let mut b = vec![0.0; m * m];
        for &(i, j) in &edges {
            let (a, c, t) = (pos[i], pos[j], 1.0 + ((i * 7 + j) % 5) as f64);
            b[a * m + a] += t;
            b[c * m + c] += t;
            b[a * m + c] -= t;
            b[c * m + a] -= t;
        }
        for a in 0..m {
            b[a * m + a] += 0.05 * (1 + a % 4) as f64;
        }
        let mut wk = Work::new(m, 0, split.scratch(m));
        let mut inv = |sp: &Split, full: bool| {
            let mut out = vec![f64::NAN; m * m];
            let work = (&mut wk.l[..], &mut wk.x[..], &mut wk.mem);
            assert!(spd_inverse(&b, m, sp, 0.0, work, full, &mut out));
            out
        };
        let (nested, whole, compact) = (
            inv(&split, true),
            inv(&Split::default(), true),
            inv(&split, false),
        );
        let big = whole.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (a, c) in nested.iter().zip(&whole) {
            assert!((a - c).abs() < 1e-10 * big, "{a} vs {c}");
        }
        let idx: Vec<u32> = (0..m as u32).collect();
        let r: Vec<f64> = (0..m)
            .map(|i| 1.0 + (i * 7 % 5) as f64 - 0.01 * i as f64)
            .collect();
        let (mut y_full, mut y_compact) = (vec![0.0; m], vec![0.0; m]);
        mul_vec_on(&whole, (0, 0), false, &idx, &r, &mut y_full);
        mul_vec_on(&compact, split.top(), true, &idx, &r, &mut y_compact);
        let ybig = y_full.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        for (a, c) in y_full.iter().zip(&y_compact) {
            assert!((a - c).abs() < 1e-10 * ybig, "{a} vs {c}");
        }
    }
}
