//! The audit of a large-mechanism container ([`crate::io::container`]): the report of
//! `mdp-audit` from the structured checks (`spec/soundness.md` §7). It proves the same
//! pure verdict and tight ε as the exhaustive audit; (ε, δ) and the losses, which need all
//! n² pairs or n×K costs, are not computed (said in the report's warnings).

use super::{tight_eps, TightError, Work};
use crate::audit::{
    f64_nearest_str, label_at, named, output_label_at, row_sums_check, scope_policy_check,
    tight_under_pass, unit_of, verdict_of, Check, Options, Report, Stats, StructuredStats, Verdict,
};
use crate::dense::Normalized;
use crate::exact::{f64_down, f64_nearest, f64_up, functions, Interval, Q};
use crate::io::container::{Container, Geometry};
use crate::io::InputError;
use crate::progress::Progress;
use serde_json::{json, Value};
use std::time::Instant;

/// Exact triples the fallback may decide before the audit stops (exit 2), unless the
/// caller sets another budget (`mdp-audit --max-exact-triples`): each costs a division of
/// ≤ 2 100-bit rationals, so this is minutes of work at most.
pub const DEFAULT_MAX_EXACT_TRIPLES: u64 = 200_000_000;

fn label(c: &Container, u: usize) -> Option<&str> {
    label_at(c.labels.as_deref(), u)
}

fn output_label(c: &Container, w: usize) -> Option<&str> {
    output_label_at(c.labels.as_deref(), &c.outputs, w)
}

/// Audit a container at the pipeline's ε and scope (`opts`), as `mdp-audit` does.
pub fn audit_container(
    c: &Container,
    opts: &Options,
    progress: &dyn Progress,
) -> Result<Report, InputError> {
    let t0 = Instant::now();
    let eps = opts.epsilon.clone().unwrap_or_else(|| c.epsilon.clone());
    let mut checks = Vec::new();
    let mut warnings = c.warnings.clone();
    let view = crate::pin::View::of_geometry(&c.geometry, c.labels.as_deref());
    let (metric, metric_digest) = (view.describe(), crate::pin::digest(&view));
    checks.extend(crate::pin::check(
        &view,
        &metric_digest,
        &opts.metric,
        crate::io::Limits::default().max_bits,
    ));
    let mut stats = Stats::default();
    progress.start("audit: exact row sums", None);
    let norm = Normalized::new(&c.matrix);
    let (dev, row_sums) = row_sums_check(&norm.sums, &opts.row_sum_tolerance);
    stats.seconds_prepare = t0.elapsed().as_secs_f64();
    progress.finish(&format!("audit: row sums ({:.1} s)", stats.seconds_prepare));
    checks.push(row_sums);
    let (n, k) = (c.matrix.rows, c.matrix.cols);
    let budget = opts.max_exact_triples;
    let t = Instant::now();
    progress.start("audit: structure", None);
    let (structure, method, pairs) =
        super::of_container(c, &norm, opts.max_prec, budget, super::Part::WHOLE)?;
    progress.finish(&format!(
        "audit: {method} ready ({:.1} s)",
        t.elapsed().as_secs_f64()
    ));
    let over = |o: super::OverBudget| {
        crate::io::input_error(
            "matrix",
            format!("the exact fallback needs more than {budget} exact triples (spent {}): the matrix is too close to its bound almost everywhere", o.exact_triples),
        )
    };
    let inconclusive = |what: &str, p: super::Pair| Check {
        name: what.into(),
        verdict: Verdict::Inconclusive,
        detail: format!(
            "pair ({}, {}) undecidable within {} bits",
            p.u, p.v, opts.max_prec
        ),
        witness: None,
    };
    // The tight ε first: its enclosure decides the verdict unless ε lies inside it.
    let t = Instant::now();
    progress.start("audit: tight ε (structured)", None);
    let (tight, mut work) = match tight_eps(structure.as_ref()) {
        Ok((e, w)) => (Some(e), w),
        Err(TightError::OverBudget(o)) => return Err(over(o)),
        Err(TightError::Undecided(p)) => {
            checks.push(inconclusive("epsilon_tight", p));
            (None, Work::default())
        }
    };
    stats.seconds_tight = t.elapsed().as_secs_f64();
    progress.finish(&format!("audit: tight ε ({:.1} s)", stats.seconds_tight));
    let t = Instant::now();
    let failing =
        super::verdict_at(structure.as_ref(), tight.as_ref(), &eps, &mut work).map_err(over)?;
    stats.seconds_pure = t.elapsed().as_secs_f64();
    let scope_txt = match &c.within {
        Some(eta) => format!("ordered pairs with d ≤ η = {}", f64_up(eta)),
        None => "all ordered pairs".to_string(),
    };
    checks.push(match failing {
        Ok(None) => Check {
            name: "pure_privacy".into(),
            verdict: Verdict::Pass,
            detail: format!(
                "H[u][w] ≤ e^(ε·d(u,v))·H[v][w] proven for {scope_txt} × {k} outputs at ε = {} by {method} ({} pairs checked one by one, {} needed exact arithmetic)",
                f64_nearest_str(&eps),
                work.pair_triples / (k as u64).max(1),
                work.exact_pairs
            ),
            witness: None,
        },
        Ok(Some(p)) => witness_check(c, &norm, &eps, p, &c.geometry, 0),
        Err(p) => inconclusive("pure_privacy", p),
    });
    if let Some(ch) = scope_policy_check(c.within.as_ref(), &c.epsilon, opts) {
        checks.push(ch);
    }
    let mut expected_loss = None;
    if let Some(cert) = &c.lp_dual {
        let t = Instant::now();
        progress.start(
            &format!(
                "audit: lp_dual certificate ({} multipliers)",
                cert.gamma.len()
            ),
            None,
        );
        let (check, loss) = lp_dual_check(c, &norm, cert, opts)?;
        checks.push(check);
        expected_loss = loss.map(|l| [l.lo, l.hi]);
        progress.finish(&format!(
            "audit: lp_dual certificate ({:.1} s)",
            t.elapsed().as_secs_f64()
        ));
    }
    warnings.push(if c.lp_dual.is_some() {
        "(ε,δ) tight ε and the max loss not computed: the structured audit of a container proves pure ε·d privacy, its tight ε and (with an lp_dual) the expected loss's bound (spec/soundness.md §7)".into()
    } else {
        "(ε,δ) tight ε and losses not computed: the structured audit of a container proves pure ε·d privacy and its tight ε (spec/soundness.md §7)".into()
    });
    let total = (n as u64) * (n as u64).saturating_sub(1) * k as u64;
    stats.pairs_in_scope = pairs as usize;
    stats.triples = total;
    stats.exact_pairs_pure = work.exact_pairs as usize;
    stats.exact_triple_fraction = if total == 0 {
        0.0
    } else {
        work.exact_triples as f64 / total as f64
    };
    stats.structured = Some(StructuredStats {
        method,
        pairs_checked: pairs,
        triples_settled_by_boxes: work.settled_triples,
        triples_checked_by_pairs: work.pair_triples,
        settled_fraction: settled_fraction(work.settled_triples, total.saturating_mul(work.passes)),
        passes: work.passes,
        box_tests: work.box_tests,
        exact_pairs: work.exact_pairs,
        exact_triples: work.exact_triples,
    });
    stats.seconds_total = t0.elapsed().as_secs_f64();
    let verdict = verdict_of(&checks);
    let epsilon_tight = tight_under_pass(tight.as_ref(), &checks, &eps);
    Ok(Report {
        verdict,
        n,
        k,
        epsilon_claimed: f64_nearest(&c.epsilon),
        epsilon_required: (eps != c.epsilon).then(|| f64_nearest(&eps)),
        metric,
        metric_digest,
        epsilon_tight,
        delta: f64::NAN,
        epsilon_delta_tight: [None, None],
        max_row_sum_deviation: f64_up(&dev),
        loss_max: None,
        loss_quantile: None,
        quantile: f64::NAN,
        expected_loss,
        checks,
        warnings,
        stats,
        meta: c.meta.clone(),
        unit: match &c.geometry {
            Geometry::Points(s) => unit_of(s),
            Geometry::Graph(_) => None,
        },
    })
}

/// The `lp_dual` check of a container (revision 4, `spec/lp.md` §5): the certificate
/// verified exactly at the file's ε and scope with the costs d(u, output k), read from K
/// rows of distance enclosures (a graph: [`crate::metric::Roads`], no n×n table), and the
/// enclosure of this matrix's expected loss under the file's prior for the gap.
fn lp_dual_check(
    c: &Container,
    norm: &Normalized,
    cert: &crate::io::lp_dual::LpDual,
    opts: &crate::audit::Options,
) -> Result<(Check, Option<crate::exact::float::FI>), InputError> {
    use crate::certificate as cert_mod;
    use crate::exact::float::FI;
    use crate::mechanism::Outputs;
    let (n, k) = (norm.n, norm.k);
    let roads;
    let space = match &c.geometry {
        Geometry::Points(s) => s,
        Geometry::Graph(g) => {
            roads = g.space();
            &roads
        }
    };
    let sites: Vec<usize> = match &c.outputs {
        Outputs::Inputs => (0..n).collect(),
        Outputs::OfInputs(i) => i.clone(),
        Outputs::Points(_) | Outputs::Labels(_) => unreachable!("refused when read"),
    };
    space.keep_rows(&sites);
    if let Some(r) = space.roads() {
        // Each multiplier's pair is decided exactly once, within a stated budget.
        let pairs: Vec<(usize, usize)> = cert.gamma.iter().map(|g| (g.0, g.1)).collect();
        r.decide_pairs(&pairs).map_err(|budget| {
            crate::io::input_error(
                "certificate.lower_bound.gamma",
                format!("deciding the distances of its pairs needs more than {budget} node visits of exact shortest-path search (the audit's budget): its rows are not a road network's edges"),
            )
        })?;
    }
    let pb = cert_mod::Problem {
        space,
        eps: &c.epsilon,
        within: c.within.as_ref(),
        sites: Some(&sites),
        cost: None,
        prior: c.prior.as_deref(),
        max_prec: opts.max_prec,
    };
    let verdict = cert_mod::verify(cert, &pb, n, k);
    // This matrix's expected loss Σ_u π_u Σ_k H[u][k]·d(u, site_k), enclosed.
    let weights: Vec<Q> = match &c.prior {
        Some(p) => {
            let s: Q = p.iter().sum();
            p.iter().map(|x| x / &s).collect()
        }
        None => vec![Q::from(1u32) / Q::from(n as u64); n],
    };
    // Rows in parallel, summed in order: the same enclosure on any number of threads.
    use rayon::prelude::*;
    let rows: Vec<FI> = (0..n)
        .into_par_iter()
        .map(|u| {
            let row = c.matrix.row(u);
            let mut acc = FI::point(0.0);
            for (j, &m) in row.iter().enumerate() {
                if m != 0.0 {
                    acc = acc.add(FI::point(m).mul(space.fi(u, sites[j])));
                }
            }
            acc.div(FI::from_q(&norm.sums[u]))
                .mul(FI::from_q(&weights[u]))
        })
        .collect();
    let loss = rows.into_iter().fold(FI::point(0.0), FI::add);
    let check = match verdict {
        Err(cert_mod::Rejected(why)) => Check {
            name: "lp_dual".into(),
            verdict: Verdict::Fail,
            detail: format!("certificate rejected: {why}"),
            witness: None,
        },
        Ok(bound) => {
            let lb = f64_down(&bound);
            let gap = crate::exact::float::add_up(loss.hi, -lb).max(0.0);
            Check {
                name: "lp_dual".into(),
                verdict: Verdict::Pass,
                detail: format!(
                    "every mechanism ε·d private at the file's ε = {} has expected loss ≥ {:.15e} (exact dual bound ≥ the claimed {:.15e}); this matrix's expected loss ≤ {:.12e}, certified gap ≤ {:.3e} ({:.3e} relative)",
                    f64_nearest_str(&c.epsilon),
                    lb,
                    f64_down(&cert.value),
                    loss.hi,
                    gap,
                    (gap / lb.abs()).max(0.0)
                ),
                witness: Some(json!({"bound": lb, "objective": cert.bounded.name()})),
            }
        }
    };
    space.roads().inspect(|r| r.forget_rows());
    Ok((check, Some(loss)))
}

/// The failing check for a pair proven to break ε: its arg max output and both sides
/// enclosed. For a graph the pair is an edge and the bound is e^{ε·w(u,v)} ≥ e^{ε·d(u,v)}.
/// `w_offset`: the index of the container's first column in the whole matrix (a block's).
pub(crate) fn witness_check(
    c: &Container,
    norm: &Normalized,
    eps: &Q,
    p: super::Pair,
    g: &Geometry,
    w_offset: usize,
) -> Check {
    let (u, v) = (p.u, p.v);
    let (_, w) = norm.exact_ratio(&c.matrix, u, v, 0..norm.k);
    let w = w.unwrap_or(0);
    let hu = c.matrix.exact(u, w) / &norm.sums[u];
    let hv = c.matrix.exact(v, w) / &norm.sums[v];
    let (dist, what): (Interval, &str) = match g {
        Geometry::Points(s) => (s.enclosure(u, v, 136), "d(u,v)"),
        Geometry::Graph(_) => (
            edge_weight(c, u, v).map_or(Interval::zero(), Interval::point),
            "w(u,v), the edge's weight ≥ d(u,v)",
        ),
    };
    let rhs = functions::exp_checked(&dist.scale(eps), 128).map(|x| x.scale(&hv));
    let rhs = rhs.map_or((f64::MAX, f64::INFINITY), |r| r.to_f64_bounds());
    let lhs = (f64_down(&hu), f64_up(&hu));
    let mut j =
        json!({"u": u, "v": v, "w": w + w_offset, "lhs": [lhs.0, lhs.1], "rhs": [rhs.0, rhs.1]});
    for (key, l) in [
        ("u_label", label(c, u)),
        ("v_label", label(c, v)),
        ("w_label", output_label(c, w)),
    ] {
        if let Some(l) = l {
            j[key] = Value::String(l.to_string());
        }
    }
    Check {
        name: "pure_privacy".into(),
        verdict: Verdict::Fail,
        detail: format!(
            "violated at (u, v, w) = ({}, {}, {}): H[u][w] ∈ [{:.17e}, {:.17e}] > e^(ε·{what})·H[v][w] ∈ [{:.17e}, {:.17e}]",
            named(u, label(c, u)),
            named(v, label(c, v)),
            named(w + w_offset, output_label(c, w)),
            lhs.0, lhs.1, rhs.0, rhs.1
        ),
        witness: Some(j),
    }
}

/// The smallest weight of an edge between u and v.
fn edge_weight(c: &Container, u: usize, v: usize) -> Option<Q> {
    match &c.geometry {
        Geometry::Graph(g) => g.weight_between(u, v),
        Geometry::Points(_) => None,
    }
}

/// Triples settled by box pairs over the triples of every pass (0 when there were none).
pub(crate) fn settled_fraction(settled: u64, pass_triples: u64) -> f64 {
    if pass_triples == 0 {
        0.0
    } else {
        settled as f64 / pass_triples as f64
    }
}
