//! Vector kernels shared by the interior points on structured LPs (`block_ipm`,
//! `block_angular`): the step update and the longest step to the boundary, in parallel.

use rayon::prelude::*;

/// v += a·dv (in parallel).
pub(super) fn axpy(v: &mut [f64], dv: &[f64], a: f64) {
    v.par_iter_mut().zip(dv).for_each(|(x, d)| *x += a * d);
}

/// The largest step α with v + α·dv ≥ 0 (∞ if dv ≥ 0), in parallel.
pub(super) fn max_step(v: &[f64], dv: &[f64]) -> f64 {
    v.par_iter()
        .zip(dv.par_iter())
        .filter(|(_, d)| **d < 0.0)
        .map(|(a, d)| -a / d)
        .reduce(|| f64::INFINITY, f64::min)
}
