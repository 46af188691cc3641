//! Applying a mechanism to records (`mdp privatize`): each record names an input and is
//! written back with its sampled output (`records`: plain lines, CSV, JSON lines).
//! Streaming: one record in, one out.
//!
//! The sampling argument (`spec/threat-model.md` §2):
//!
//! * **Randomness**: [`rng`] seeds ChaCha20 (a cryptographic generator) from the operating
//!   system unless a test passes a seed.
//! * **Exactness**: a mechanism file is sampled from its exact rational rows, the very
//!   numbers the audit proved private (rows are normalized exactly, and that normalized
//!   matrix is what is audited). [`ExactRow::sample`] draws a uniform U ∈ [0, 1) one
//!   64-bit block at a time, as the dyadic interval [a/2^m, (a+1)/2^m) it is known to lie
//!   in, and returns the output k with C_k ≤ U < C_{k+1} (C the exact cumulative sums) as
//!   soon as the interval lies inside one [C_k, C_{k+1}). So Pr\[k\] = C_{k+1} − C_k = H\[u\]\[k\]
//!   exactly: no float rounding of any probability; an entry of 2^-2000 keeps its mass.
//! * **Records**: inputs are named by their label when the space has labels; by 0-based
//!   index only when asked ([`Records::Index`]); raw coordinates are snapped to the
//!   nearest input within a limit when asked ([`Snapper`]); the guarantee then holds
//!   between the snapped inputs.
//!
//! The samplers without a matrix are exact too: TEM's Algorithm 3 (exact Gumbel-max over
//! enclosed logits, [`gumbel`]) and Madlib (exact ℓ2 K-norm noise, then the nearest point
//! decided from its enclosures, [`crate::mechanisms::madlib`]). Neither is an audited
//! matrix: Madlib's has no closed form.

use crate::audit::{self, Report, Verdict};
use crate::error::InputError;
use crate::exact::{N, Q};
use crate::io::{self, Limits, MechanismFile};
use crate::mechanism::Matrix;
use crate::mechanisms::madlib::Madlib;
use crate::mechanisms::tem::TemSampler;
use crate::progress::Progress;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::collections::HashMap;

pub mod gumbel;
pub mod records;
pub use records::{
    stream, Format, OnBad, Options, RecordError, Records, Release, Snapper, Summary,
};

/// The privatizer's generator: ChaCha20 seeded by the operating system (`getrandom`), or
/// by `seed` (reproducible: for tests only).
pub fn rng(seed: Option<u64>) -> ChaCha20Rng {
    match seed {
        Some(s) => ChaCha20Rng::seed_from_u64(s),
        None => ChaCha20Rng::from_entropy(),
    }
}

/// One row of a mechanism as exact cumulative sums C_0 = 0 ≤ C_1 ≤ … ≤ C_K = 1, with
/// integer brackets ⌊C_k·2⁶⁴⌋ and ⌈C_k·2⁶⁴⌉ that decide most draws without rationals.
pub struct ExactRow {
    cdf: Cdf,
    down: Vec<u128>,
    up: Vec<u128>,
}

/// The exact cumulative sums: rationals, or integers over one common denominator (a row
/// of doubles, [`ExactRow::from_dyadic`]: C_k = I_k / T).
enum Cdf {
    Rational(Vec<Q>),
    Scaled { num: Vec<N>, den: N },
}

impl Cdf {
    fn len(&self) -> usize {
        match self {
            Cdf::Rational(c) => c.len(),
            Cdf::Scaled { num, .. } => num.len(),
        }
    }
}

/// ⌊c·2⁶⁴⌋ or ⌈c·2⁶⁴⌉ for c ∈ [0, 1], as an integer in [0, 2⁶⁴].
fn scaled_64(c: &Q, up: bool) -> u128 {
    let s = c << 64u64;
    let z = if up { s.ceiling() } else { s.floor() };
    if Q::from(z.clone()) >= Q::from(1u32) << 64u64 {
        1u128 << 64
    } else {
        z.mod_pow2(64) as u128
    }
}

impl ExactRow {
    /// From the non-negative entries of a row with a positive sum (normalized exactly).
    pub fn new(row: &[Q]) -> ExactRow {
        let total: Q = row.iter().sum();
        let mut cdf = Vec::with_capacity(row.len() + 1);
        let mut acc = Q::from(0u32);
        cdf.push(acc.clone());
        for x in row {
            acc += x;
            cdf.push(&acc / &total);
        }
        let down = cdf.iter().map(|c| scaled_64(c, false)).collect();
        let up = cdf.iter().map(|c| scaled_64(c, true)).collect();
        ExactRow {
            cdf: Cdf::Rational(cdf),
            down,
            up,
        }
    }

    /// From a row of non-negative doubles with a positive sum (a container's row, each
    /// entry the dyadic rational it holds): every entry is an integer multiple of 2^-1074,
    /// so the cumulative sums are integers I_k over T = I_K, and C_k = I_k / T exactly.
    pub fn from_dyadic(row: &[f64]) -> ExactRow {
        let mut num = Vec::with_capacity(row.len() + 1);
        let mut acc = N::from(0u32);
        num.push(acc.clone());
        for &x in row {
            if x > 0.0 {
                let (m, e) = crate::dense::dyadic(x);
                acc += N::from(m) << (e - 1);
            }
            num.push(acc.clone());
        }
        let den = acc;
        let bracket = |i: &N, up: bool| -> u128 {
            let s = i.clone() << 64u64;
            let q = &s / &den;
            let exact = &q * &den == s;
            let z = if up && !exact { q + N::from(1u32) } else { q };
            if z >= N::power_of_2(64) {
                1u128 << 64
            } else {
                u64::try_from(&z).expect("below 2^64") as u128
            }
        };
        let down = num.iter().map(|i| bracket(i, false)).collect();
        let up = num.iter().map(|i| bracket(i, true)).collect();
        ExactRow {
            cdf: Cdf::Scaled { num, den },
            down,
            up,
        }
    }

    /// The index k with C_k ≤ U < C_{k+1} for a uniform U ∈ [0, 1) drawn lazily (module
    /// doc): Pr\[k\] = C_{k+1} − C_k exactly.
    ///
    /// The first 64-bit block a puts U in [a, a+1)/2⁶⁴. The integer brackets decide the
    /// exact rule's first step without rationals: with k the largest index where
    /// ⌈C_k·2⁶⁴⌉ ≤ a (so C_k ≤ a/2⁶⁴), a < ⌊C_{k+1}·2⁶⁴⌋ proves C_{k+1} ≥ (a+1)/2⁶⁴,
    /// which is exactly when the exact rule returns k at its first block. Otherwise the
    /// exact rule runs from the same first block, so the law is unchanged.
    pub fn sample<R: RngCore + ?Sized>(&self, rng: &mut R) -> usize {
        let first = rng.next_u64();
        match self.first_block(first) {
            Some(k) => k,
            None => self.exact_from(first, rng),
        }
    }

    /// The exact rule's answer at its first block `first` from the integer brackets
    /// alone: `Some(k)` exactly when [first, first + 1)/2⁶⁴ lies inside [C_k, C_{k+1}),
    /// `None` when the block holds a boundary and later blocks must decide.
    fn first_block(&self, first: u64) -> Option<usize> {
        let last = self.cdf.len() - 2;
        let a0 = first as u128;
        let k = self.up[..=last].partition_point(|&u| u <= a0) - 1;
        (a0 < self.down[k + 1]).then_some(k)
    }

    /// The exact rule (module doc) with `first` as the first 64-bit block of U.
    fn exact_from<R: RngCore + ?Sized>(&self, first: u64, rng: &mut R) -> usize {
        let last = self.cdf.len() - 2;
        let mut a = N::from(0u32);
        let mut scale = Q::from(1u32); // 2^-m
        let mut m = 0u64;
        let mut block = Some(first);
        loop {
            a <<= 64u64;
            a += N::from(block.take().unwrap_or_else(|| rng.next_u64()));
            scale >>= 64u64;
            m += 64;
            match &self.cdf {
                Cdf::Rational(cdf) => {
                    let lo = Q::from(a.clone()) * &scale;
                    let hi = &lo + &scale;
                    // The largest k ≤ last with C_k ≤ lo (C_0 = 0 ≤ lo): then lo < C_{k+1}.
                    let k = cdf[..=last].partition_point(|c| *c <= lo) - 1;
                    if hi <= cdf[k + 1] {
                        return k;
                    }
                }
                Cdf::Scaled { num, den } => {
                    // lo = a/2^m, hi = (a+1)/2^m against C_k = I_k/T, in integers:
                    // C_k ≤ lo ⇔ I_k·2^m ≤ a·T.
                    let (lo, hi) = (&a * den, (&a + N::from(1u32)) * den);
                    let k = num[..=last].partition_point(|i| (i.clone() << m) <= lo) - 1;
                    if hi <= (num[k + 1].clone() << m) {
                        return k;
                    }
                }
            }
        }
    }
}

/// The exact samplers of every row of `matrix` (rows indexed by input).
pub fn exact_rows(matrix: &Matrix) -> Vec<ExactRow> {
    (0..matrix.rows)
        .map(|u| ExactRow::new(matrix.row(u)))
        .collect()
}

/// Anything that draws an output column for an input index.
pub enum Sampler {
    /// Exact rows of an audited mechanism matrix (built on first use).
    Matrix {
        matrix: Matrix,
        rows: HashMap<usize, ExactRow>,
    },
    Tem(Box<TemSampler>),
    Madlib(Madlib),
    /// A large-mechanism container that passed its structured audit (its rows are drawn
    /// exactly from the float64 entries, [`crate::large::GatedContainer::sample`]).
    Container(Box<crate::large::GatedContainer>),
}

impl Sampler {
    pub fn from_matrix(matrix: Matrix) -> Sampler {
        Sampler::Matrix {
            matrix,
            rows: HashMap::new(),
        }
    }

    pub fn sample<R: Rng>(&mut self, w: usize, rng: &mut R) -> usize {
        match self {
            Sampler::Matrix { matrix, rows } => rows
                .entry(w)
                .or_insert_with(|| ExactRow::new(matrix.row(w)))
                .sample(rng),
            Sampler::Tem(t) => t.sample(w, rng),
            Sampler::Madlib(m) => m.sample(w, rng),
            Sampler::Container(c) => c.sample(w, rng),
        }
    }
}

/// `matrix` with every row divided by its exact sum (rows with sum 0 are left as they are:
/// the audit refuses such a matrix).
pub fn normalized(matrix: &Matrix) -> Matrix {
    let mut data = Vec::with_capacity(matrix.data.len());
    for (r, s) in matrix.row_sums().iter().enumerate() {
        let one = *s == 1u32 || *s == 0u32;
        data.extend(
            matrix
                .row(r)
                .iter()
                .map(|x| if one { x.clone() } else { x / s }),
        );
    }
    Matrix::new(matrix.rows, matrix.cols, data)
}

/// A mechanism file that passed the audit under a pipeline's policy: what `mdp privatize
/// --mechanism` and `mdp release item-wise` sample from (`spec/threat-model.md` §2).
pub struct Gated {
    /// The file as read, its rows normalized exactly ([`normalized`]): the matrix audited.
    pub file: MechanismFile,
    /// The passing report.
    pub report: Report,
}

/// Why a mechanism file was not taken by [`load_gated`].
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The file could not be read (missing, too large, …).
    #[error("{0}")]
    Read(InputError),
    /// It is not a valid `mdp/1` file, or the audit could not read it.
    #[error("{0}")]
    Invalid(InputError),
    /// It does not pass the audit under the policy (the report says why).
    #[error("does not pass the audit under this policy")]
    NotPrivate(Box<Report>),
}

/// Why a sampling gate has no metric to check the file against.
#[derive(Debug, thiserror::Error)]
pub enum PinError {
    /// Neither the pipeline's space, nor a digest, nor an explicit trust in the file's own
    /// metric was given.
    #[error("the file's own metric is a claim: give the pipeline's metric (--space SPACE), its digest (--require-metric-digest HEX), or trust the file's metric explicitly (--trust-file-metric)")]
    Unpinned,
    /// The digest is not 64 hex digits.
    #[error("{0}")]
    Digest(InputError),
    /// The space could not be read.
    #[error("{0}")]
    Space(InputError),
}

/// The metric a gate that samples accepts (`spec/threat-model.md` §2.1): the pipeline's
/// space when given (`space`: any form `--space` takes), else the digest, else the file's
/// own metric only when `trust_file_metric` says so (`label_column`: the space's
/// `--label-column`). Without any of them the gate refuses:
/// a file's metric is as much a claim as its ε, and a forged one (a radius ×1000) makes
/// the guarantee say almost nothing. Shared by `mdp privatize`, `mdp release item-wise`
/// and the Python package, so their defaults are one.
pub fn sampling_pin(
    space: Option<&str>,
    label_column: Option<&str>,
    digest: Option<&str>,
    trust_file_metric: bool,
) -> Result<crate::pin::MetricPin, PinError> {
    use crate::pin::{parse_digest, MetricPin, PinnedSpace};
    match (space, digest) {
        (Some(spec), _) => Ok(MetricPin::Space(std::sync::Arc::new(
            PinnedSpace::load(spec, label_column, &Limits::default()).map_err(PinError::Space)?,
        ))),
        (None, Some(hex)) => parse_digest(hex)
            .map(MetricPin::Digest)
            .map_err(PinError::Digest),
        (None, None) if trust_file_metric => Ok(MetricPin::FileMetric),
        (None, None) => Err(PinError::Unpinned),
    }
}

/// Gate then load, the one way a mechanism file reaches a sampler: read `path` (`-`:
/// standard input) under the default [`Limits`], normalize its rows exactly and audit that
/// normalized matrix under `policy` (the pipeline's ε and scope, never the file's own
/// claims when the policy states them). Only a passing file is returned.
pub fn load_gated(
    path: &str,
    policy: &audit::Options,
    progress: &dyn Progress,
) -> Result<Gated, GateError> {
    let bytes = io::read_source(path, &Limits::default()).map_err(GateError::Read)?;
    let file = io::read_mechanism(&bytes, &Limits::default()).map_err(GateError::Invalid)?;
    gate_file(file, policy, progress)
}

/// Normalize a parsed file's rows exactly and audit that normalized matrix (what is
/// sampled is what is audited); only a passing file is returned.
fn gate_file(
    mut file: MechanismFile,
    policy: &audit::Options,
    progress: &dyn Progress,
) -> Result<Gated, GateError> {
    file.matrix = normalized(&file.matrix);
    let report = audit::audit_with(&file, policy, progress).map_err(GateError::Invalid)?;
    if report.verdict != Verdict::Pass {
        return Err(GateError::NotPrivate(Box::new(report)));
    }
    Ok(Gated { file, report })
}

/// A gated mechanism of either form.
pub enum GatedSource {
    /// An `mdp/1` JSON file ([`load_gated`]).
    File(Box<Gated>),
    /// A large-mechanism container ([`crate::large::load_gated`]).
    Container(Box<crate::large::GatedContainer>),
}

/// [`load_gated`] for either form of `mdp/1`: the JSON is parsed once; a container header
/// (its `matrix` names a `.npy` file; never standard input) is read, its audit planned
/// within `max_memory` bytes, and gated by the structured audit.
pub fn load_gated_any(
    path: &str,
    policy: &audit::Options,
    max_memory: u64,
    progress: &dyn Progress,
) -> Result<GatedSource, GateError> {
    let limits = Limits::default();
    let bytes = io::read_source(path, &limits).map_err(GateError::Read)?;
    let doc = io::parse_json(&bytes).map_err(GateError::Invalid)?;
    if io::container::is_container(&doc) {
        if path == "-" {
            return Err(GateError::Invalid(io::input_error(
                "$",
                "a container (matrix in a .npy file) is read from its header file, not standard input",
            )));
        }
        let header = std::path::Path::new(path);
        return crate::large::gate(header, &doc, policy, max_memory, progress)
            .map(|g| GatedSource::Container(Box::new(g)));
    }
    let file = io::mechanism_from_value(&doc, &limits).map_err(GateError::Invalid)?;
    gate_file(file, policy, progress).map(|g| GatedSource::File(Box::new(g)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_row_keeps_tiny_masses_and_skips_zeros() {
        // An entry of 2^-2000 is 0 in f64; here it keeps its (tiny) mass, and a zero entry
        // is never drawn. Frequencies of the others match.
        let tiny = Q::from(1u32) >> 2000u64;
        let row = vec![
            Q::from(0u32),
            Q::from_unsigneds(1u32, 3u32),
            tiny.clone(),
            Q::from_unsigneds(2u32, 3u32) - tiny,
        ];
        let er = ExactRow::new(&row);
        let mut r = rng(Some(7));
        let mut counts = [0usize; 4];
        for _ in 0..30_000 {
            counts[er.sample(&mut r)] += 1;
        }
        assert_eq!(counts[0], 0);
        let f = counts[1] as f64 / 30_000.0;
        assert!((f - 1.0 / 3.0).abs() < 0.02, "{counts:?}");
    }

    #[test]
    fn integer_brackets_never_change_a_draw() {
        // Rows with dyadic boundaries, a 2^-70 mass next to a zero, and a third: the fast
        // path returns what the exact rule returns on the same random stream.
        let tiny = Q::from(1u32) >> 70u64;
        let rows = vec![
            vec![Q::from(1u32), Q::from(1u32), Q::from(2u32)],
            vec![
                Q::from(0u32),
                tiny.clone(),
                Q::from(1u32) - &tiny,
                Q::from(0u32),
            ],
            vec![Q::from_unsigneds(1u32, 3u32), Q::from_unsigneds(2u32, 3u32)],
        ];
        for row in rows {
            let er = ExactRow::new(&row);
            for seed in 0..2000u64 {
                let (mut r1, mut r2) = (rng(Some(seed)), rng(Some(seed)));
                let first = r2.next_u64();
                assert_eq!(er.sample(&mut r1), er.exact_from(first, &mut r2));
            }
        }
    }

    #[test]
    fn exact_row_draws_a_dyadic_boundary_correctly() {
        // C = [0, 1/2, 1]: both halves, never out of range.
        let er = ExactRow::new(&[Q::from(1u32), Q::from(1u32)]);
        let mut r = rng(Some(1));
        let ones = (0..4000)
            .map(|_| er.sample(&mut r))
            .filter(|&k| k == 1)
            .count();
        assert!((1700..2300).contains(&ones), "{ones}");
    }

    #[test]
    fn dyadic_rows_draw_exactly_what_their_rationals_draw() {
        // The same rows as doubles (from_dyadic: integers over one denominator) and as
        // exact rationals (new): identical draws on the same random stream, including
        // subnormals, zeros, a dyadic boundary and entries 2^600 apart.
        let rows: Vec<Vec<f64>> = vec![
            vec![0.5, 0.5],
            vec![1.0, 0.0, 3.0, 1e-300, 5e-324, 0.0],
            vec![1e-200, 1e-180, 1.0, 1e180, 7.0],
            vec![0.1, 0.2, 0.3, 0.4],
            vec![0.0, 2f64.powi(-70), 1.0 - 2f64.powi(-70), 0.0],
        ];
        for row in rows {
            let q: Vec<Q> = row.iter().map(|&x| crate::exact::q_from_f64(x)).collect();
            let (a, b) = (ExactRow::from_dyadic(&row), ExactRow::new(&q));
            assert_eq!(a.down, b.down);
            assert_eq!(a.up, b.up);
            let (mut r1, mut r2) = (rng(Some(9)), rng(Some(9)));
            for _ in 0..20_000 {
                assert_eq!(a.sample(&mut r1), b.sample(&mut r2), "{row:?}");
            }
            // The exact fallback itself agrees, block after block.
            for first in [
                0u64,
                1 << 63,
                u64::MAX,
                0x1999_9999_9999_9999,
                0x4CCC_CCCC_CCCC_CCCC,
            ] {
                let (mut r1, mut r2) = (rng(Some(4)), rng(Some(4)));
                assert_eq!(
                    a.exact_from(first, &mut r1),
                    b.exact_from(first, &mut r2),
                    "{row:?}"
                );
            }
        }
    }

    /// A stream that yields `first` as its first 64-bit block, then the generator's.
    struct Then<R>(Option<u64>, R);

    impl<R: RngCore> RngCore for Then<R> {
        fn next_u32(&mut self) -> u32 {
            self.1.next_u32()
        }
        fn next_u64(&mut self) -> u64 {
            self.0.take().unwrap_or_else(|| self.1.next_u64())
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            self.1.fill_bytes(dest)
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
            self.1.try_fill_bytes(dest)
        }
    }

    /// The exact cumulative sums C_0 = 0, …, C_K = 1 of a row, normalized.
    fn cdf(row: &[Q]) -> Vec<Q> {
        let total: Q = row.iter().sum();
        let mut c = vec![Q::from(0u32)];
        for x in row {
            let next = c.last().unwrap() + x;
            c.push(next);
        }
        c.iter().map(|x| x / &total).collect()
    }

    /// Whether `count` of `n` draws is within 5 standard deviations (plus one) of a law
    /// with probability `p`; a zero probability must give no draw at all.
    fn plausible(count: usize, n: usize, p: &Q) -> bool {
        if *p == 0u32 {
            return count == 0;
        }
        let p = crate::exact::f64_nearest(p);
        let (n, c) = (n as f64, count as f64);
        (c - n * p).abs() <= 5.0 * (n * p * (1.0 - p)).sqrt() + 1.0
    }

    /// The law of both samplers, unconditional and given the first 64-bit block. Given a
    /// block a that holds a boundary C_j (C_j·2⁶⁴ not an integer), U is uniform on
    /// [a, a + 1)/2⁶⁴ and the exact rule must return k with probability
    /// 2⁶⁴·|[C_k, C_{k+1}) ∩ [a, a + 1)/2⁶⁴|, reading further blocks: checked on rational
    /// rows ([`ExactRow::new`]) and rows of doubles ([`ExactRow::from_dyadic`]) with a
    /// boundary at 1/3, boundaries 2⁻¹⁰⁰ past a block, two boundaries inside one block,
    /// subnormal masses and zeros.
    #[test]
    fn both_samplers_draw_the_exact_law_given_their_first_block() {
        let q = |a: u32, b: u32| Q::from_unsigneds(a, b);
        let p2 = |e: u64| Q::from(1u32) >> e;
        let rational: Vec<Vec<Q>> = vec![
            vec![q(1, 3), q(2, 3)],
            vec![q(1, 7), q(2, 7), q(4, 7)],
            vec![&p2(1) + &p2(100), &p2(1) - &p2(100)],
            // C_1 = 1/4 + 2⁻⁶⁶, C_2 = 1/4 + 3·2⁻⁶⁶: both inside the block a = 2⁶².
            vec![&p2(2) + &p2(66), p2(65), q(3, 4) - p2(66) * Q::from(3u32)],
        ];
        let doubles: Vec<Vec<f64>> = vec![
            vec![1.0, 2.0],
            vec![0.1, 0.2, 0.3, 0.4],
            vec![1.0, 0.0, 3.0, 1e-300, 5e-324, 0.0],
            vec![0.0, 2f64.powi(-70), 1.0 - 2f64.powi(-70), 0.0],
        ];
        let rows =
            rational
                .into_iter()
                .map(|r| (ExactRow::new(&r), r))
                .chain(doubles.into_iter().map(|r| {
                    let q: Vec<Q> = r.iter().map(|&x| crate::exact::q_from_f64(x)).collect();
                    (ExactRow::from_dyadic(&r), q)
                }));
        let two64 = Q::from(1u32) << 64u64;
        let mut conditioned = 0;
        for (er, row) in rows {
            let c = cdf(&row);
            let k = row.len();
            // Unconditional: Pr[k] = C_{k+1} − C_k.
            let n = 20_000;
            let mut counts = vec![0usize; k];
            let mut r = rng(Some(11));
            for _ in 0..n {
                counts[er.sample(&mut r)] += 1;
            }
            for j in 0..k {
                let p = &c[j + 1] - &c[j];
                assert!(plausible(counts[j], n, &p), "{row:?}: {counts:?}");
            }
            // Given a first block that holds a boundary, and the blocks beside it: the
            // exact rule from that block, and `sample` on a stream that starts with it.
            for cj in &c[1..k] {
                let s = cj * &two64;
                if s.denominator() == N::from(1u32) {
                    continue;
                }
                let a = s.floor().mod_pow2(64);
                for first in [a.wrapping_sub(1), a, a.wrapping_add(1)] {
                    let lo = Q::from(first) / &two64;
                    let hi = (Q::from(first) + Q::from(1u32)) / &two64;
                    let n = 2000;
                    let (mut exact, mut fast) = (vec![0usize; k], vec![0usize; k]);
                    for seed in 0..n as u64 {
                        exact[er.exact_from(first, &mut rng(Some(seed)))] += 1;
                        let mut stream = Then(Some(first), rng(Some(seed)));
                        fast[er.sample(&mut stream)] += 1;
                    }
                    for j in 0..k {
                        let l = c[j].clone().max(lo.clone());
                        let h = c[j + 1].clone().min(hi.clone());
                        let p = if h > l {
                            (h - l) * &two64
                        } else {
                            Q::from(0u32)
                        };
                        let at = format!("{row:?} at block {first:#x}: {exact:?} {fast:?}");
                        assert!(plausible(exact[j], n, &p), "{at}");
                        assert!(plausible(fast[j], n, &p), "{at}");
                    }
                }
                conditioned += 1;
            }
        }
        assert!(conditioned >= 12, "{conditioned}");
    }

    /// The integer brackets decide a first block exactly when the exact rule does: the
    /// block [a, a + 1)/2⁶⁴ lies inside one [C_k, C_{k+1}), checked in rationals, on blocks
    /// at and beside every boundary and on random blocks, for rows of up to six outputs.
    #[test]
    fn the_brackets_decide_every_block_without_a_boundary() {
        let q = |a: u32, b: u32| Q::from_unsigneds(a, b);
        let rows: Vec<Vec<Q>> = vec![
            vec![q(1, 3), q(2, 3)],
            vec![q(1, 7), q(2, 7), q(4, 7)],
            vec![q(1, 4), q(1, 4), q(1, 4), q(1, 4)],
            vec![q(1, 10), q(0, 1), q(2, 10), q(3, 10), q(4, 10)],
            vec![q(1, 6); 6],
            vec![
                Q::from(1u32) >> 70u64,
                q(0, 1),
                Q::from(1u32) - (Q::from(1u32) >> 70u64),
            ],
        ];
        let two64 = Q::from(1u32) << 64u64;
        let mut r = rng(Some(5));
        let (mut decided, mut deferred) = (0, 0);
        for row in rows {
            let er = ExactRow::new(&row);
            let c = cdf(&row);
            let mut blocks: Vec<u64> = (0..500).map(|_| r.next_u64()).collect();
            for cj in &c {
                let a = (cj * &two64).floor().mod_pow2(64);
                blocks.extend([a.wrapping_sub(1), a, a.wrapping_add(1)]);
            }
            for a in blocks {
                let lo = Q::from(a) / &two64;
                let hi = (Q::from(a) + Q::from(1u32)) / &two64;
                let want = (0..row.len()).find(|&k| c[k] <= lo && hi <= c[k + 1]);
                assert_eq!(er.first_block(a), want, "{row:?} at block {a:#x}");
                match want {
                    Some(_) => decided += 1,
                    None => deferred += 1,
                }
            }
        }
        assert!(decided > 3000 && deferred >= 10, "{decided} {deferred}");
    }

    #[test]
    fn os_seeded_generators_differ() {
        let (mut a, mut b) = (rng(None), rng(None));
        assert_ne!(a.next_u64(), b.next_u64());
    }

    #[test]
    fn normalization_is_exact() {
        let m = Matrix::new(1, 2, vec![Q::from(1u32), Q::from(2u32)]);
        let n = normalized(&m);
        assert_eq!(
            n.row(0),
            &[Q::from_unsigneds(1u32, 3u32), Q::from_unsigneds(2u32, 3u32)]
        );
        // A row of sum 0 is left as it is (the audit refuses it), not divided by 0.
        let z = Q::from(0u32);
        let m = Matrix::new(
            2,
            2,
            vec![z.clone(), z.clone(), Q::from(1u32), Q::from(3u32)],
        );
        let n = normalized(&m);
        assert_eq!(n.row(0), &[z.clone(), z]);
        assert_eq!(
            n.row(1),
            &[Q::from_unsigneds(1u32, 4u32), Q::from_unsigneds(3u32, 4u32)]
        );
    }
}
