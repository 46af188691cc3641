//! Vector kernels shared by the interior points on structured LPs (`block_ipm`,
//! `block_angular`): the step update, the longest step to the boundary and sums, in
//! parallel. Sums are taken over fixed chunks of [`CHUNK`] entries, added in chunk order:
//! the same floating-point result on any number of threads (spec/lp.md §4.7).

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

/// Entries per chunk of a parallel sum ([`sum_by`]).
pub(super) const CHUNK: usize = 1 << 12;

/// Σ_{i < len} f(i) in parallel, reproducibly: each chunk of [`CHUNK`] indices summed in
/// order, the chunks' sums added in order (the grouping depends only on `len`).
pub(super) fn sum_by(len: usize, f: impl Fn(usize) -> f64 + Sync) -> f64 {
    (0..len.div_ceil(CHUNK))
        .into_par_iter()
        .map(|c| (c * CHUNK..((c + 1) * CHUNK).min(len)).map(&f).sum::<f64>())
        .collect::<Vec<f64>>()
        .into_iter()
        .sum()
}

/// Σ a_i·b_i over the shorter length, reproducibly ([`sum_by`]).
pub(super) fn dot(a: &[f64], b: &[f64]) -> f64 {
    sum_by(a.len().min(b.len()), |i| a[i] * b[i])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sum is the chunked sequential sum, bit for bit, on 1, 2 and 7 threads.
    #[test]
    fn sums_are_the_same_on_any_number_of_threads() {
        let n = 5 * CHUNK + 123;
        let a: Vec<f64> = (0..n)
            .map(|i| ((i * 7919) % 1000) as f64 * 1e-3 + 1e-9 * i as f64)
            .collect();
        let b: Vec<f64> = (0..n).map(|i| 1.0 / (1.0 + i as f64)).collect();
        let reference: f64 = a
            .chunks(CHUNK)
            .zip(b.chunks(CHUNK))
            .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>())
            .collect::<Vec<f64>>()
            .into_iter()
            .sum();
        for threads in [1, 2, 7] {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .build()
                .unwrap();
            let got = pool.install(|| dot(&a, &b));
            assert_eq!(got.to_bits(), reference.to_bits(), "{threads} threads");
        }
    }
}
