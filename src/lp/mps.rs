//! Free-format MPS export of a [`PrivacyLp`] (`mdp lp export`), so any solver can
//! cross-check ours on *the same* LP.
//!
//! Every privacy row of the LP's pair set is written (no lazy rows), in the model's exact
//! dyadic coefficients: M_u_k − c_dn M_v_k ≤ 0 with the constants `c_dn` (rounded down,
//! capped; `spec/lp.md` §2) and the costs rounded down. The LP is lowered to the one float
//! model ([`PrivacyLp::to_sparse`]) and written by its MPS writer: numbers in Rust's shortest
//! round-trip form, so a reader gets the same doubles.
//!
//! Names: variables `L` and `M_u_k`; rows `obj`, `sum_u` (= 1), `loss_u` (≤ 0) and
//! `p_u_v_k` (M_u_k − c M_v_k ≤ 0). M ≤ 1 needs no bound: Σ_k M_u_k = 1 and M ≥ 0 imply it.

use super::model::{Objective, PrivacyLp, RowForm};
use std::io::Write;

/// Write the LP; returns the number of privacy rows.
pub fn write(lp: &PrivacyLp, out: &mut dyn Write) -> std::io::Result<usize> {
    let kk = lp.k() as u32;
    let rows: Vec<(u32, u32, u32)> = lp
        .pairs
        .iter()
        .flat_map(|&(u, v)| (0..kk).map(move |k| (u as u32, v as u32, k)))
        .collect();
    let name = match lp.objective {
        Objective::MaxLoss => "mdp_max_loss",
        Objective::Expected { .. } => "mdp_expected_loss",
    };
    lp.to_sparse(&rows, RowForm::Plain).write_mps(name, out)?;
    Ok(rows.len())
}
