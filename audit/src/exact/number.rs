//! Exact parsing and printing of numbers.
//!
//! The `mdp/1` contract (`spec/mechanism-format.md`, "Numbers") reads every JSON number and
//! numeric string as the rational it denotes: `0.1` is 1/10, `"3/7"` is 3/7, `"-2.5e-3"` is
//! −1/400. `NaN`, `Infinity`, hex floats, empty strings and other text are errors.

use super::{N, Q, Z};
use std::fmt;
use std::str::FromStr;

/// Largest |decimal exponent| accepted. 10^100000 already has 332 193 bits; larger
/// exponents would let a 20-byte input allocate gigabytes.
pub const MAX_DECIMAL_EXPONENT: i64 = 100_000;
/// Largest number of digits accepted in one literal (same reason).
pub const MAX_DIGITS: usize = 100_000;

/// Why a literal is not an exact number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NumberError(pub String);

impl fmt::Display for NumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err(s: &str, why: &str) -> NumberError {
    let shown: String = s.chars().take(40).collect();
    let ell = if s.chars().count() > 40 { "…" } else { "" };
    NumberError(format!("not an exact number ({why}): {shown:?}{ell}"))
}

fn is_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

/// Parse a decimal literal `[+-]digits[.digits][(e|E)[+-]digits]` (also `.5`, `5.`) or a
/// fraction `[+-]digits/digits` into the exact rational it denotes.
pub fn parse_rational(s: &str) -> Result<Q, NumberError> {
    if s.is_empty() {
        return Err(err(s, "empty"));
    }
    if s.len() > MAX_DIGITS + 64 {
        return Err(err(s, "too many digits"));
    }
    if let Some((a, b)) = s.split_once('/') {
        let num = parse_integer(a).ok_or_else(|| err(s, "bad numerator"))?;
        let (bneg, bdig) = split_sign(b);
        if bneg || !is_digits(bdig) {
            return Err(err(s, "bad denominator"));
        }
        let den = N::from_str(bdig).map_err(|_| err(s, "bad denominator"))?;
        if den == 0u32 {
            return Err(err(s, "zero denominator"));
        }
        return Ok(Q::from_integers(num, Z::from(den)));
    }
    let (neg, rest) = split_sign(s);
    let (mantissa, exp) = match rest.find(['e', 'E']) {
        Some(i) => {
            let e = &rest[i + 1..];
            let (eneg, edig) = split_sign(e);
            if !is_digits(edig) {
                return Err(err(s, "bad exponent"));
            }
            if edig.len() > 12 {
                return Err(err(s, "exponent out of range"));
            }
            let v: i64 = edig.parse().map_err(|_| err(s, "bad exponent"))?;
            (&rest[..i], if eneg { -v } else { v })
        }
        None => (rest, 0),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((a, b)) => (a, b),
        None => (mantissa, ""),
    };
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(err(s, "no digits"));
    }
    if !(int_part.is_empty() || is_digits(int_part))
        || !(frac_part.is_empty() || is_digits(frac_part))
    {
        return Err(err(s, "not a decimal"));
    }
    let digits = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let scale = exp - frac_part.len() as i64;
    if digits.is_empty() {
        return Ok(Q::from(0u32));
    }
    if scale.abs() > MAX_DECIMAL_EXPONENT {
        return Err(err(s, "exponent out of range"));
    }
    // Fast path (most literals of a mechanism file): mantissa and power of ten in u64.
    if digits.len() <= 19 && (-19..0).contains(&scale) {
        let m: u64 = digits.parse().map_err(|_| err(s, "not a decimal"))?;
        let q = Q::from_unsigneds(m, 10u64.pow(scale.unsigned_abs() as u32));
        return Ok(if neg { -q } else { q });
    }
    let m = N::from_str(digits).map_err(|_| err(s, "not a decimal"))?;
    let p = N::from(10u32).pow(scale.unsigned_abs());
    let q = if scale >= 0 {
        Q::from(m * p)
    } else {
        Q::from_naturals(m, p)
    };
    Ok(if neg { -q } else { q })
}

fn split_sign(s: &str) -> (bool, &str) {
    if let Some(r) = s.strip_prefix('-') {
        (true, r)
    } else if let Some(r) = s.strip_prefix('+') {
        (false, r)
    } else {
        (false, s)
    }
}

fn parse_integer(s: &str) -> Option<Z> {
    let (neg, d) = split_sign(s);
    if !is_digits(d) {
        return None;
    }
    let n = Z::from(N::from_str(d).ok()?);
    Some(if neg { -n } else { n })
}

/// Print `q` so that [`parse_rational`] reads back exactly `q`: an integer, a terminating
/// decimal when the denominator is 2^a·5^b (and short; in scientific form `m.mmme-X` when
/// that is at least two characters shorter), else `"p/q"`.
pub fn format_rational(q: &Q) -> String {
    let den = q.denominator();
    if den == 1u32 {
        return q.to_string();
    }
    // Try a terminating decimal: den = 2^a 5^b with a, b ≤ 400 (den < 10^400 < 2^1330;
    // larger denominators go straight to "p/q", which keeps this linear in the size).
    let (mut a, mut b) = (0u64, 0u64);
    let mut d = N::from(0u32);
    if den.bits() <= 1330 {
        a = den.trailing_zeros().unwrap_or(0);
        d = &den >> a;
        while b <= 400 && (&d % N::from(5u32)) == 0u32 {
            d /= N::from(5u32);
            b += 1;
        }
    }
    if d == 1u32 && a.max(b) <= 400 {
        let k = a.max(b);
        let scaled = q.abs() * Q::from(N::from(10u32).pow(k));
        let int = N::try_from(&scaled.floor()).expect("integral by construction");
        let s = int.to_string();
        let s = if s.len() <= k as usize {
            format!("{}{}", "0".repeat(k as usize - s.len() + 1), s)
        } else {
            s
        };
        let (ip, fp) = s.split_at(s.len() - k as usize);
        let fp = fp.trim_end_matches('0');
        let sign = if *q < 0u32 { "-" } else { "" };
        let plain = if fp.is_empty() {
            format!("{sign}{ip}")
        } else {
            format!("{sign}{ip}.{fp}")
        };
        // The same digits in scientific form when that is at least 2 characters shorter
        // (1e-7, not 0.0000001; but 0.001: the compact files of spec/mechanism-format.md): |q| = m·10^(e − len(m) + 1).
        let m = s.trim_start_matches('0').trim_end_matches('0');
        let trailing = s.len() - s.trim_end_matches('0').len();
        let e = (trailing as i64 - k as i64) + m.len() as i64 - 1;
        let sci = match m.len() {
            1 => format!("{sign}{m}e{e}"),
            _ => format!("{sign}{}.{}e{e}", &m[..1], &m[1..]),
        };
        return if sci.len() + 2 <= plain.len() {
            sci
        } else {
            plain
        };
    }
    let sign = if *q < 0u32 { "-" } else { "" };
    format!("{sign}{}/{}", q.numerator().abs(), den)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(a: i64, b: i64) -> Q {
        Q::from_signeds(a, b)
    }

    #[test]
    fn decimals_are_exact() {
        assert_eq!(parse_rational("0.1").unwrap(), q(1, 10));
        assert_eq!(parse_rational("-2.5e-3").unwrap(), q(-1, 400));
        assert_eq!(parse_rational("3/7").unwrap(), q(3, 7));
        assert_eq!(parse_rational("-3/7").unwrap(), q(-3, 7));
        assert_eq!(parse_rational("1E2").unwrap(), q(100, 1));
        assert_eq!(parse_rational(".5").unwrap(), q(1, 2));
        assert_eq!(parse_rational("5.").unwrap(), q(5, 1));
        assert_eq!(parse_rational("0e999999").unwrap(), q(0, 1));
        let tiny = parse_rational("1e-300").unwrap();
        assert_eq!(tiny * Q::from(N::from(10u32).pow(300u64)), q(1, 1));
    }

    #[test]
    fn garbage_is_rejected() {
        for s in [
            "",
            "NaN",
            "nan",
            "Infinity",
            "-Infinity",
            "inf",
            "0x1p3",
            "1/0",
            "1/-2",
            "abc",
            "1e",
            "e5",
            ".",
            "-",
            "1.2.3",
            "1e99999999999999",
            "1e200000",
            " 1",
            "1 ",
        ] {
            assert!(parse_rational(s).is_err(), "{s:?} accepted");
        }
    }

    /// The error names the reason and shows the literal, cut at 40 characters with an
    /// ellipsis only when it is longer.
    #[test]
    fn errors_show_the_literal_cut_at_forty_characters() {
        let forty = "x".repeat(40);
        let e = parse_rational(&forty).unwrap_err().to_string();
        assert_eq!(e, format!("not an exact number (not a decimal): {forty:?}"));
        let long = "y".repeat(41);
        let e = parse_rational(&long).unwrap_err().to_string();
        assert_eq!(
            e,
            format!("not an exact number (not a decimal): {:?}…", "y".repeat(40))
        );
        assert_eq!(
            parse_rational("1/0").unwrap_err().to_string(),
            "not an exact number (zero denominator): \"1/0\""
        );
    }

    /// One sign only, and the length limits at their boundaries: a literal of
    /// `MAX_DIGITS + 64` characters is read, one more is not; an exponent of 12 digits is
    /// read, 13 are not; |scale| = `MAX_DECIMAL_EXPONENT` is read, one more is not.
    #[test]
    fn signs_and_limits_at_their_boundaries() {
        let why = |s: &str| parse_rational(s).unwrap_err().0;
        for s in [
            "1/++2", "1/+-2", "++1/2", "--1/2", "++5", "-+5", "1e+-5", "1e--5", "1e++5",
        ] {
            assert!(parse_rational(s).is_err(), "{s:?} accepted");
        }
        assert_eq!(parse_rational("+5").unwrap(), q(5, 1));
        assert_eq!(parse_rational("1/+2").unwrap(), q(1, 2));
        assert_eq!(parse_rational("1e+5").unwrap(), q(100_000, 1));
        let longest = "1".repeat(MAX_DIGITS + 64);
        assert_eq!(format_rational(&parse_rational(&longest).unwrap()), longest);
        assert!(why(&"1".repeat(MAX_DIGITS + 65)).contains("(too many digits)"));
        assert_eq!(parse_rational("2e000000000005").unwrap(), q(200_000, 1));
        assert!(why("2e0000000000005").contains("(exponent out of range)"));
        let big = parse_rational("1e100000").unwrap();
        assert_eq!(big, Q::from(N::from(10u32).pow(100_000)));
        assert_eq!(parse_rational("1e-100000").unwrap(), big.pow(-1));
        assert_eq!(parse_rational("0.1e-99999").unwrap(), big.pow(-1));
        assert!(why("1e100001").contains("(exponent out of range)"));
        assert!(why("0.1e-100000").contains("(exponent out of range)"));
    }

    #[test]
    fn format_round_trips() {
        for (a, b) in [
            (1, 3),
            (-1, 3),
            (1, 8),
            (-7, 20),
            (5, 1),
            (0, 1),
            (123456789, 1000),
        ] {
            let x = q(a, b);
            assert_eq!(parse_rational(&format_rational(&x)).unwrap(), x);
        }
        assert_eq!(format_rational(&q(1, 8)), "0.125");
        assert_eq!(format_rational(&q(-7, 20)), "-0.35");
        assert_eq!(format_rational(&q(1, 3)), "1/3");
        assert_eq!(format_rational(&q(1, 10_000_000)), "1e-7");
        assert_eq!(format_rational(&q(-25, 10_000_000)), "-2.5e-6");
        assert_eq!(format_rational(&q(1, 1000)), "0.001");
        assert_eq!(format_rational(&q(3, 2_000_000_000)), "1.5e-9");
        assert_eq!(format_rational(&q(-1, 3)), "-1/3");
    }
}

#[cfg(test)]
mod regressions {
    use super::*;

    /// Fuzz finding (parse_number, slow unit "845e-58888"): printing a rational with a huge
    /// power-of-ten denominator took quadratic time (one bignum division per factor 2);
    /// now a size check and `trailing_zeros` keep it linear (no timing asserted here).
    #[test]
    fn huge_denominators_print_fast() {
        for s in ["845e-58888", "010e-83990", "-3e-99999"] {
            let q = parse_rational(s).unwrap();
            assert_eq!(parse_rational(&format_rational(&q)).unwrap(), q);
        }
    }
}

#[cfg(test)]
mod fast_path {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The u64 fast path gives the same rational as the general path: m·10^e computed
        /// independently with big naturals.
        #[test]
        fn decimal_fast_path_is_exact(m in 0u64..u64::MAX, e in -40i64..40, neg: bool) {
            let lit = format!("{}{m}e{e}", if neg { "-" } else { "" });
            let ten = N::from(10u32).pow(e.unsigned_abs());
            let want = if e >= 0 { Q::from(N::from(m) * ten) } else { Q::from_naturals(N::from(m), ten) };
            let want = if neg { -want } else { want };
            prop_assert_eq!(parse_rational(&lit).unwrap(), want);
        }

        /// Every written number reads back exactly, in the plain or the scientific form.
        #[test]
        fn format_is_exact_and_shortest(m in 0u64..u64::MAX, e in -60i64..30, two in 0u64..80, neg: bool) {
            let ten = N::from(10u32).pow(e.unsigned_abs());
            let x = if e >= 0 { Q::from(N::from(m) * ten) } else { Q::from_naturals(N::from(m), ten) };
            let x = x / Q::from(N::power_of_2(two));
            let x = if neg { -x } else { x };
            let s = format_rational(&x);
            prop_assert_eq!(parse_rational(&s).unwrap(), x);
            prop_assert!(!s.contains('e') || !s.contains('/'));
        }
    }
}
