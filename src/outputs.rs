//! The outputs of an LP mechanism (OPTMech, PMO, Benders) chosen among the inputs
//! (issue 56 part 3): a list of input indices (`--outputs FILE.json`), or K outputs spread
//! over the space by the farthest-first traversal (`--outputs spread:K`, Gonzalez 1985's
//! k-center algorithm: every input lies within twice the least possible covering radius of
//! some output). Which inputs are outputs is the mechanism's design, not a privacy
//! decision: the traversal runs on the float distances, and the mechanism built on the
//! outputs it returns is certified and audited as any other. The rule is stated in the
//! file's `meta.outputs` ([`OutputChoice::meta`]).

use crate::metric::Space;
use rayon::prelude::*;
use serde_json::{json, Value};

/// How the outputs are given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutputChoice {
    /// These inputs, in this order.
    Inputs(Vec<usize>),
    /// K inputs by the farthest-first traversal ([`farthest_first`]).
    Spread(usize),
}

impl OutputChoice {
    /// `spread:K` (1 ≤ K); `None` for any other text (the caller reads it as a file).
    pub fn parse_rule(s: &str) -> Option<Result<OutputChoice, String>> {
        let k = s.strip_prefix("spread:")?;
        Some(match k.trim().parse::<usize>() {
            Ok(k) if k >= 1 => Ok(OutputChoice::Spread(k)),
            _ => Err(format!(
                "spread:{k}: K must be a whole number ≥ 1 (the number of outputs)"
            )),
        })
    }

    /// The input indices on `space`: the list as given, or the traversal's first K
    /// (K ≤ n, else an error naming n).
    pub fn resolve(&self, space: &Space) -> Result<Vec<usize>, String> {
        match self {
            OutputChoice::Inputs(v) => Ok(v.clone()),
            OutputChoice::Spread(k) if *k > space.n() => Err(format!(
                "spread:{k}: the space has only {} inputs",
                space.n()
            )),
            OutputChoice::Spread(k) => Ok(farthest_first(space, *k)),
        }
    }

    /// What the file's `meta.outputs` states: the rule and K for a spread (`None` for a
    /// list, which the file's `outputs.of_inputs` already is).
    pub fn meta(&self) -> Option<Value> {
        match self {
            OutputChoice::Inputs(_) => None,
            OutputChoice::Spread(k) => Some(json!({"rule": "farthest-first", "k": k,
                "first": "the input farthest from input 0"})),
        }
    }
}

/// The first `k` inputs of the farthest-first traversal of `space` (k ≤ n): it starts from
/// the input farthest from input 0 and adds, each time, the input farthest from those
/// chosen (ties to the lowest index), by the float distance. O(k·n) distance evaluations
/// and O(n) memory: it never forms the n × n table.
pub fn farthest_first(space: &Space, k: usize) -> Vec<usize> {
    let n = space.n();
    if n == 0 || k == 0 {
        return vec![];
    }
    let farthest = |near: &[f64]| {
        near.iter()
            .enumerate()
            .fold((0, f64::NEG_INFINITY), |(bi, bd), (i, &d)| {
                if d > bd {
                    (i, d)
                } else {
                    (bi, bd)
                }
            })
            .0
    };
    // A graph without its table keeps the row of each chosen input (the LP's costs later).
    let from = |c: usize| -> Vec<f64> {
        space.keep_rows(&[c]);
        (0..n).into_par_iter().map(|v| space.approx(c, v)).collect()
    };
    let first = farthest(&from(0));
    let mut chosen = vec![first];
    let mut near = from(first);
    while chosen.len() < k.min(n) {
        let next = farthest(&near);
        chosen.push(next);
        let d = from(next);
        near.iter_mut().zip(d).for_each(|(a, b)| *a = a.min(b));
        near[next] = f64::NEG_INFINITY; // chosen: never again, even at distance 0
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::Q;
    use crate::metric::MetricKind;

    fn line(xs: &[i64]) -> Space {
        let pts = xs.iter().map(|&x| vec![Q::from(x)]).collect();
        Space::from_points(MetricKind::Euclidean, pts, None).unwrap()
    }

    /// On 0, 1, 2, 10, 11, 20: from input 0 the farthest is 20 (index 5), then 0, then
    /// 10 or 11 (|10 − 0| = 10 = |20 − 10| against 9: index 3), then the rest by their
    /// distance to the chosen: each new output is the farthest remaining input.
    #[test]
    fn the_traversal_takes_the_farthest_input_each_time() {
        let s = line(&[0, 1, 2, 10, 11, 20]);
        assert_eq!(farthest_first(&s, 3), vec![5, 0, 3]);
        let all = farthest_first(&s, 6);
        let mut sorted = all.clone();
        sorted.sort();
        assert_eq!(sorted, (0..6).collect::<Vec<_>>(), "each input once");
        assert_eq!(farthest_first(&s, 9).len(), 6);
    }

    /// Duplicated points are each chosen once, and the covering radius of the first k is
    /// at most twice the best possible (brute force over every k-subset of 8 points).
    #[test]
    fn duplicates_once_and_within_twice_the_best_radius() {
        let s = line(&[0, 0, 3, 7, 7, 12, 13, 30]);
        let got = farthest_first(&s, 8);
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(sorted, (0..8).collect::<Vec<_>>());
        let radius = |c: &[usize]| {
            (0..8)
                .map(|v| {
                    c.iter()
                        .map(|&u| s.approx(u, v))
                        .fold(f64::INFINITY, f64::min)
                })
                .fold(0.0, f64::max)
        };
        for k in 1..=4 {
            let best = (0u32..256)
                .filter(|m| m.count_ones() as usize == k)
                .map(|m| radius(&(0..8).filter(|i| m >> i & 1 == 1).collect::<Vec<_>>()))
                .fold(f64::INFINITY, f64::min);
            let r = radius(&got[..k]);
            assert!(r <= 2.0 * best, "k = {k}: {r} > 2·{best}");
        }
    }

    #[test]
    fn rules_parse_and_resolve() {
        assert_eq!(
            OutputChoice::parse_rule("spread:4"),
            Some(Ok(OutputChoice::Spread(4)))
        );
        assert!(OutputChoice::parse_rule("spread:0").unwrap().is_err());
        assert!(OutputChoice::parse_rule("spread:x").unwrap().is_err());
        assert_eq!(OutputChoice::parse_rule("outputs.json"), None);
        let s = line(&[0, 5]);
        assert!(OutputChoice::Spread(3).resolve(&s).is_err());
        assert_eq!(OutputChoice::Spread(1).resolve(&s), Ok(vec![1]));
        assert!(OutputChoice::Inputs(vec![0]).meta().is_none());
        assert_eq!(OutputChoice::Spread(2).meta().unwrap()["k"], 2);
    }
}
