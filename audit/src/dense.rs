//! A mechanism matrix of `f64` entries (the large-mechanism container, `spec/mechanism-format.md`
//! "Revision 3"). Every finite double is an exact dyadic rational, so the audit of such a
//! matrix is as exact as the audit of a rational one, without an n×K table of rationals:
//! entries are turned into [`Q`] only where the exact fallback needs them, and row sums are
//! computed exactly by a superaccumulator ([`exact_sum`]).
//!
//! [`Normalized`] is the float copy h̃ = fl(m / s̃) the fast filters work on, with the same
//! error model as [`crate::privacy::Prepared`] (`spec/soundness.md` §1): s̃ is the double
//! nearest to the exact row sum, so |h̃ − H| ≤ ρ·H for entries of float-safe rows.

use crate::error::InputError;
use crate::exact::{f64_nearest, q_from_f64, N, Q};
use crate::mechanism::Matrix;
use rayon::prelude::*;

/// An n × K matrix of finite, non-negative doubles whose rows have positive sums.
#[derive(Clone, Debug, PartialEq)]
pub struct Dense {
    pub rows: usize,
    pub cols: usize,
    /// Row-major; `-0.0` is stored as `+0.0`.
    data: Vec<f64>,
}

fn err(path: String, message: impl Into<String>) -> InputError {
    InputError {
        path,
        message: message.into(),
    }
}

impl Dense {
    /// Check and wrap a row-major matrix: entries finite and ≥ 0, every row with a positive
    /// entry (its exact sum is then positive). `path` names the matrix in errors.
    pub fn new(rows: usize, cols: usize, data: Vec<f64>, path: &str) -> Result<Dense, InputError> {
        let d = Self::block(rows, cols, data, path)?;
        for (u, row) in d.data.chunks_exact(cols).enumerate() {
            if row.iter().all(|&x| x == 0.0) {
                return Err(err(format!("{path}[{u}]"), "row sum must be > 0"));
            }
        }
        Ok(d)
    }

    /// A block of columns of a matrix: as [`Dense::new`] but rows may be all 0 here (the
    /// whole rows' sums are given to [`Normalized::with_sums`]).
    pub fn block(
        rows: usize,
        cols: usize,
        mut data: Vec<f64>,
        path: &str,
    ) -> Result<Dense, InputError> {
        if rows == 0 || cols == 0 {
            return Err(err(path.into(), "needs at least one row and one column"));
        }
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(err(
                path.into(),
                format!("{} entries for a {rows} × {cols} matrix", data.len()),
            ));
        }
        for (i, x) in data.iter_mut().enumerate() {
            if !x.is_finite() || *x < 0.0 {
                return Err(err(
                    format!("{path}[{}][{}]", i / cols, i % cols),
                    format!("{x} is not a finite number ≥ 0"),
                ));
            }
            if *x == 0.0 {
                *x = 0.0; // −0.0 would make 1/h̃ = −∞ and hide an infinite ratio
            }
        }
        Ok(Dense { rows, cols, data })
    }

    pub fn row(&self, u: usize) -> &[f64] {
        &self.data[u * self.cols..(u + 1) * self.cols]
    }

    pub fn data(&self) -> &[f64] {
        &self.data
    }

    /// The exact entry M\[u\]\[w\].
    pub fn exact(&self, u: usize, w: usize) -> Q {
        q_from_f64(self.data[u * self.cols + w])
    }

    /// The same matrix as exact rationals (for the exhaustive audit and tests; n·K
    /// rationals, so only for sizes the JSON format also takes).
    pub fn to_matrix(&self) -> Matrix {
        Matrix::new(
            self.rows,
            self.cols,
            self.data.par_iter().map(|&x| q_from_f64(x)).collect(),
        )
    }

    /// Bytes of the matrix and its [`Normalized`] copy (h̃ and 1/h̃): what the structured
    /// audit holds besides its tree.
    pub fn audit_bytes(rows: usize, cols: usize) -> u64 {
        (rows as u64).saturating_mul(cols as u64).saturating_mul(24)
    }
}

/// A finite non-negative double as m·2^(e−1075): its integer mantissa m < 2^53 and biased
/// exponent e ≥ 1 (subnormals and 0: e = 1).
pub fn dyadic(x: f64) -> (u64, u64) {
    debug_assert!(x >= 0.0 && x.is_finite());
    let b = x.to_bits();
    let e = (b >> 52) & 0x7ff;
    let m = b & ((1u64 << 52) - 1);
    if e == 0 {
        (m, 1)
    } else {
        (m | (1u64 << 52), e)
    }
}

/// The exact sum of non-negative doubles. Each double is m·2^(e−1075) with an integer
/// mantissa m < 2^53 and biased exponent e (subnormals: e = 1); mantissas are added into
/// one 128-bit bin per exponent (2^75 additions before a bin could overflow), and the bins
/// are combined once into a rational.
pub fn exact_sum(values: &[f64]) -> Q {
    let mut bins = [0u128; 2048];
    for &x in values {
        let (m, e) = dyadic(x);
        bins[e as usize] += m as u128;
    }
    let mut acc = N::from(0u32);
    for (e, &bin) in bins.iter().enumerate() {
        if bin != 0 {
            let hi = N::from((bin >> 64) as u64) << 64u64;
            let v = hi + N::from(bin as u64);
            acc += v << (e as u64 - 1);
        }
    }
    Q::from_naturals(acc, N::power_of_2(1074))
}

/// The float copy of a [`Dense`] matrix the filters work on (`spec/soundness.md` §1).
pub struct Normalized {
    pub n: usize,
    pub k: usize,
    /// Exact row sums S_u.
    pub sums: Vec<Q>,
    /// h̃ = fl(m / s̃), s̃ = the double nearest to S_u; row-major n × K.
    h: Vec<f64>,
    /// fl(1/h̃) (∞ where h̃ = 0): ratios are products.
    recip: Vec<f64>,
    /// Rows whose every entry satisfies the error model |h̃ − H| ≤ ρH (positive entries
    /// and their quotients normal, s̃ normal); pairs touching another row are decided
    /// exactly.
    pub safe: Vec<bool>,
}

impl Normalized {
    pub fn new(m: &Dense) -> Normalized {
        let sums = (0..m.rows)
            .into_par_iter()
            .map(|u| exact_sum(m.row(u)))
            .collect();
        Self::with_sums(m, sums)
    }

    /// The float copy of a block of columns, normalized by the whole rows' exact sums
    /// (each > 0).
    pub fn with_sums(m: &Dense, sums: Vec<Q>) -> Normalized {
        assert_eq!(sums.len(), m.rows);
        let (n, k) = (m.rows, m.cols);
        let rows: Vec<(Q, Vec<f64>, bool)> = sums
            .into_par_iter()
            .enumerate()
            .map(|(u, sum)| {
                let entries = m.row(u).iter().map(|&x| (x != 0.0).then_some(x));
                let (h, safe) = crate::privacy::float_safe_row(entries, f64_nearest(&sum));
                (sum, h, safe)
            })
            .collect();
        let mut sums = Vec::with_capacity(n);
        let mut h = Vec::with_capacity(n * k);
        let mut safe = Vec::with_capacity(n);
        for (s, r, f) in rows {
            sums.push(s);
            h.extend(r);
            safe.push(f);
        }
        let recip = h.par_iter().map(|x| 1.0 / x).collect();
        Normalized {
            n,
            k,
            sums,
            h,
            recip,
            safe,
        }
    }

    pub fn hrow(&self, u: usize) -> &[f64] {
        &self.h[u * self.k..(u + 1) * self.k]
    }

    pub fn recip_row(&self, u: usize) -> &[f64] {
        &self.recip[u * self.k..(u + 1) * self.k]
    }

    pub fn h(&self, u: usize, w: usize) -> f64 {
        self.h[u * self.k + w]
    }

    /// The exact ratio R = max_{w ∈ cols} H\[u\]\[w\] / H\[v\]\[w\] over the given columns
    /// (`None` = ∞: H\[v\]\[w\] = 0 < H\[u\]\[w\]), and its arg max (`None` when H\[u\] is 0 on
    /// every given column: R = 0).
    pub fn exact_ratio(
        &self,
        m: &Dense,
        u: usize,
        v: usize,
        cols: impl Iterator<Item = usize>,
    ) -> (Option<Q>, Option<usize>) {
        let mut exact_best: Option<(Q, usize)> = None;
        for w in cols {
            let (a, b) = (m.row(u)[w], m.row(v)[w]);
            if a == 0.0 {
                continue;
            }
            if b == 0.0 {
                return (None, Some(w));
            }
            let r = q_from_f64(a) / q_from_f64(b);
            if exact_best.as_ref().is_none_or(|(x, _)| r > *x) {
                exact_best = Some((r, w));
            }
        }
        match exact_best {
            Some((r, w)) => (Some(r * &self.sums[v] / &self.sums[u]), Some(w)),
            None => (Some(Q::from(0u32)), None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sum_is_exact_across_exponents() {
        let xs = [1e300, 1.0, 2f64.powi(-1074), 0.1, 3e-310, 0.0];
        let want = crate::exact::sum_tree(xs.iter().map(|&x| q_from_f64(x)).collect());
        assert_eq!(exact_sum(&xs), want);
        assert_eq!(exact_sum(&[]), Q::from(0u32));
        let many = vec![f64::MAX; 1000];
        assert_eq!(exact_sum(&many), q_from_f64(f64::MAX) * Q::from(1000u32));
    }

    #[test]
    fn dyadic_splits_a_double_into_its_mantissa_and_biased_exponent() {
        assert_eq!(dyadic(1.0), (1u64 << 52, 1023));
        assert_eq!(dyadic(0.75), (3u64 << 51, 1022));
        assert_eq!(dyadic(f64::MIN_POSITIVE), (1u64 << 52, 1));
        assert_eq!(dyadic(2f64.powi(-1074)), (1, 1));
        assert_eq!(dyadic(0.0), (0, 1));
        assert_eq!(dyadic(f64::MAX), ((1u64 << 53) - 1, 2046));
        // m·2^(e−1075) is the double, exactly.
        for x in [1.0, 0.1, 3e-310, 1e300, 2f64.powi(-1074), 7.0] {
            let (m, e) = dyadic(x);
            let back = Q::from(m) * Q::from_naturals(N::power_of_2(e - 1), N::power_of_2(1074));
            assert_eq!(back, q_from_f64(x), "{x}");
        }
    }

    #[test]
    fn exact_sum_carries_a_bin_past_64_bits() {
        // 2^12 mantissas of 2^53 − 1 in one bin: the bin's sum needs 65 bits.
        let x = f64::from_bits(0x3fff_ffff_ffff_ffff); // 2 − 2^-52
        let xs = vec![x; 1 << 12];
        assert_eq!(exact_sum(&xs), q_from_f64(x) * Q::from(1u32 << 12));
    }

    /// Rows [1, 3] and [2, 0] (sums 4, 2): H = [[1/4, 3/4], [1, 0]]. R(u=0, v=1) over both
    /// columns is ∞ (H[1][1] = 0 < 3/4, at column 1); over column 0 alone (1/4)/1 = 1/4;
    /// R(1, 0) = max(1/(1/4), 0) = 4 at column 0; over column 1 alone H[1] is 0: R = 0.
    #[test]
    fn exact_ratio_over_given_columns() {
        let m = Dense::new(2, 2, vec![1.0, 3.0, 2.0, 0.0], "matrix").unwrap();
        let nm = Normalized::new(&m);
        assert_eq!(nm.sums, vec![Q::from(4u32), Q::from(2u32)]);
        assert_eq!(nm.exact_ratio(&m, 0, 1, 0..2), (None, Some(1)));
        assert_eq!(
            nm.exact_ratio(&m, 0, 1, 0..1),
            (Some(Q::from_unsigneds(1u32, 4u32)), Some(0))
        );
        assert_eq!(
            nm.exact_ratio(&m, 1, 0, 0..2),
            (Some(Q::from(4u32)), Some(0))
        );
        assert_eq!(nm.exact_ratio(&m, 1, 0, 1..2), (Some(Q::from(0u32)), None));
        // The arg max is the largest ratio, not the first or the last column.
        let m3 = Dense::new(2, 3, vec![1.0, 4.0, 1.0, 1.0, 1.0, 1.0], "matrix").unwrap();
        let n3 = Normalized::new(&m3);
        assert_eq!(
            n3.exact_ratio(&m3, 0, 1, 0..3),
            (Some(Q::from_unsigneds(12u32, 6u32)), Some(1))
        );
    }

    /// h̃ is within ρ·H of the exact H on safe rows; a row whose entry underflows in the
    /// quotient is unsafe; a block is normalized by the whole rows' sums.
    #[test]
    fn the_float_copy_and_its_safe_rows() {
        let m = Dense::new(2, 3, vec![1.0, 2.0, 1.0, 1e-300, 1e300, 0.0], "matrix").unwrap();
        let nm = Normalized::new(&m);
        assert_eq!(nm.safe, vec![true, false]);
        for w in 0..3 {
            let exact = m.exact(0, w) / &nm.sums[0];
            let (h, rho) = (q_from_f64(nm.h(0, w)), q_from_f64(crate::privacy::RHO));
            let one = Q::from(1u32);
            assert!(
                h <= &exact * (&one + &rho) && h >= &exact * (&one - &rho),
                "{w}"
            );
            assert_eq!(nm.hrow(0)[w], nm.h(0, w));
            assert_eq!(nm.recip_row(0)[w], 1.0 / nm.h(0, w));
        }
        assert_eq!(nm.h(1, 2), 0.0);
        assert_eq!(nm.recip_row(1)[2], f64::INFINITY);
        let block = Dense::block(2, 1, vec![2.0, 0.0], "matrix").unwrap();
        let nb = Normalized::with_sums(&block, vec![Q::from(8u32), Q::from(1u32)]);
        assert_eq!((nb.n, nb.k), (2, 1));
        assert_eq!(nb.h(0, 0), 0.25);
        assert_eq!(nb.h(1, 0), 0.0);
        assert_eq!(nb.safe, vec![true, true]);
    }

    #[test]
    fn entries_rows_and_sizes() {
        let d = Dense::new(2, 2, vec![0.5, 0.25, 0.0, 3.0], "m").unwrap();
        assert_eq!(d.row(1), &[0.0, 3.0]);
        assert_eq!(d.data(), &[0.5, 0.25, 0.0, 3.0]);
        assert_eq!(d.exact(0, 1), Q::from_unsigneds(1u32, 4u32));
        let m = d.to_matrix();
        assert_eq!((m.rows, m.cols), (2, 2));
        assert_eq!(m.get(1, 1), &Q::from(3u32));
        assert_eq!(m.get(0, 0), &Q::from_unsigneds(1u32, 2u32));
        assert_eq!(Dense::audit_bytes(3, 5), 360);
        assert_eq!(Dense::audit_bytes(u64::MAX as usize, 2), u64::MAX);
    }

    #[test]
    fn errors_name_the_entry_or_row() {
        let e = Dense::new(2, 3, vec![1.0, 1.0, 1.0, 1.0, f64::INFINITY, 1.0], "m").unwrap_err();
        assert_eq!(e.path, "m[1][1]");
        let e = Dense::new(2, 2, vec![1.0, 1.0, 0.0, 0.0], "m").unwrap_err();
        assert_eq!(
            (e.path.as_str(), e.message.as_str()),
            ("m[1]", "row sum must be > 0")
        );
        let e = Dense::block(0, 2, vec![], "m").unwrap_err();
        assert_eq!(e.message, "needs at least one row and one column");
        assert!(Dense::block(2, 0, vec![], "m").is_err());
        let e = Dense::block(2, 2, vec![1.0; 5], "m").unwrap_err();
        assert_eq!(e.message, "5 entries for a 2 × 2 matrix");
        // A block may hold rows of zeros.
        assert!(Dense::block(2, 1, vec![0.0, 0.0], "m").is_ok());
    }

    #[test]
    fn refuses_what_is_not_a_mechanism() {
        assert!(Dense::new(1, 2, vec![0.5, f64::NAN], "matrix").is_err());
        assert!(Dense::new(1, 2, vec![0.5, -1.0], "matrix").is_err());
        assert!(Dense::new(1, 2, vec![0.0, -0.0], "matrix").is_err());
        assert!(Dense::new(2, 2, vec![0.5; 3], "matrix").is_err());
        let d = Dense::new(1, 2, vec![-0.0, 1.0], "matrix").unwrap();
        assert!(d.row(0)[0].is_sign_positive());
    }
}
