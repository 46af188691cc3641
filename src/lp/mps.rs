//! Free-format MPS export of a [`PrivacyLp`] (issue 3, item 6), so any solver can
//! cross-check ours on *the same* LP.
//!
//! Every privacy row of the LP's pair set is written (no lazy rows): the mechanism's
//! constants `c_dn` (rounded down, capped; `spec/lp.md` §2) and the costs rounded down.
//! Numbers are printed with Rust's shortest round-trip formatting, so a reader gets the
//! same doubles, which are the exact dyadic coefficients of the model.
//!
//! Names: variables `M_u_k` and `L`; rows `obj`, `sum_u` (= 1), `loss_u` (≤ 0) and
//! `p_u_v_k` (M_u_k − c M_v_k ≤ 0).

use super::model::{Objective, PrivacyLp};
use std::io::Write;

/// Write the LP; returns the number of privacy rows.
pub fn write(lp: &PrivacyLp, out: &mut dyn Write) -> std::io::Result<usize> {
    let (n, kk) = (lp.n, lp.k());
    let max_loss = lp.objective == Objective::MaxLoss;
    writeln!(
        out,
        "NAME mdp_{}",
        if max_loss {
            "max_loss"
        } else {
            "expected_loss"
        }
    )?;
    writeln!(out, "ROWS")?;
    writeln!(out, " N obj")?;
    for u in 0..n {
        writeln!(out, " E sum_{u}")?;
        if max_loss {
            writeln!(out, " L loss_{u}")?;
        }
    }
    let mut into: Vec<Vec<usize>> = vec![vec![]; n]; // into[v] = {u : (u, v) a pair}
    for &(u, v) in &lp.pairs {
        into[v].push(u);
    }
    let mut from: Vec<Vec<usize>> = vec![vec![]; n];
    for &(u, v) in &lp.pairs {
        from[u].push(v);
    }
    let mut rows = 0;
    for &(u, v) in &lp.pairs {
        for k in 0..kk {
            writeln!(out, " L p_{u}_{v}_{k}")?;
            rows += 1;
        }
    }
    writeln!(out, "COLUMNS")?;
    for u in 0..n {
        for k in 0..kk {
            let name = format!("M_{u}_{k}");
            let c = lp.cost_dn[u * kk + k];
            if max_loss {
                if c != 0.0 {
                    writeln!(out, " {name} loss_{u} {c:?}")?;
                }
            } else {
                let w = lp.prior_f64(u) * c;
                if w != 0.0 {
                    writeln!(out, " {name} obj {w:?}")?;
                }
            }
            writeln!(out, " {name} sum_{u} 1")?;
            for &v in &from[u] {
                writeln!(out, " {name} p_{u}_{v}_{k} 1")?;
            }
            for &w in &into[u] {
                writeln!(out, " {name} p_{w}_{u}_{k} {:?}", -lp.c_dn[w * n + u])?;
            }
        }
    }
    if max_loss {
        writeln!(out, " L obj 1")?;
        for u in 0..n {
            writeln!(out, " L loss_{u} -1")?;
        }
    }
    writeln!(out, "RHS")?;
    for u in 0..n {
        writeln!(out, " rhs sum_{u} 1")?;
    }
    writeln!(out, "BOUNDS")?;
    for u in 0..n {
        for k in 0..kk {
            writeln!(out, " UP bnd M_{u}_{k} 1")?;
        }
    }
    writeln!(out, "ENDATA")?;
    Ok(rows)
}
