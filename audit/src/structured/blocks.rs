//! The audit of a container split by blocks of columns, for a cluster (issue 35, part 4;
//! the Python package's `metricdp.distributed` runs the blocks on Dask workers).
//!
//! Privacy is a statement per column: M is ε·d private iff every block of columns is (on
//! the whole rows' normalization H = M / S), and the tight ε is the maximum of the
//! blocks' tight ε (each is a maximum over pairs of a maximum over its columns). So:
//! 1. every block returns the exact partial sums of its columns ([`partial_sums`]);
//! 2. the driver adds them exactly ([`add_sums`]) and checks them (> 0, near 1);
//! 3. every block is audited with the whole sums ([`audit_block`]);
//! 4. the driver combines ([`combine`]): a pass iff every block passes, the tight ε the
//!    maximum of the enclosures, the witness of the first failing block.
//!
//! What travels is text: sums and ε as exact rationals (`p/q`), a block's result as JSON.

use super::report::witness_check;
use super::{tight_eps, Part, TightError, Work};
use crate::audit::{Check, Verdict};
use crate::dense::{exact_sum, Normalized};
use crate::error::InputError;
use crate::exact::{f64_up, format_rational, parse_rational, Q};
use crate::io::container;
use crate::io::{input_error, Limits};
use serde_json::{json, Value};
use std::path::Path;

fn header_value(header: &Path, limits: &Limits) -> Result<Value, InputError> {
    let bytes = crate::io::read_source(&header.to_string_lossy(), limits)?;
    let v = crate::io::parse_json(&bytes)?;
    if !container::is_container(&v) {
        return Err(input_error(
            "matrix",
            "not a container (its matrix is not {\"npy\": …})",
        ));
    }
    Ok(v)
}

/// The shape and claim of a container, for the driver: (n, K, ε as `p/q`).
pub fn shape(header: &Path, limits: &Limits) -> Result<(usize, usize, String), InputError> {
    let v = header_value(header, limits)?;
    let (n, k, eps) = container::shape(header, &v, limits)?;
    Ok((n, k, format_rational(&eps)))
}

/// The exact sums of columns `c0..c1` of every row, as `p/q` text.
pub fn partial_sums(
    header: &Path,
    c0: usize,
    c1: usize,
    limits: &Limits,
    max_memory: u64,
) -> Result<Vec<String>, InputError> {
    let v = header_value(header, limits)?;
    let c = container::read_columns(header, &v, limits, max_memory, c0, c1)?;
    Ok((0..c.matrix.rows)
        .map(|u| format_rational(&exact_sum(c.matrix.row(u))))
        .collect())
}

fn parse_q(s: &str, field: &str) -> Result<Q, InputError> {
    parse_rational(s).map_err(|e| input_error(field, e.to_string()))
}

/// Row sums sent as `p/q` text, read back exactly.
fn parse_sums(sums: &[String]) -> Result<Vec<Q>, InputError> {
    sums.iter()
        .enumerate()
        .map(|(u, s)| parse_q(s, &format!("sums[{u}]")))
        .collect()
}

/// The whole rows' sums from the blocks' partial sums (exact); every row's must be > 0.
pub fn add_sums(parts: &[Vec<String>]) -> Result<Vec<String>, InputError> {
    let n = parts.first().map_or(0, Vec::len);
    if parts.iter().any(|p| p.len() != n) {
        return Err(input_error("sums", "blocks disagree on the number of rows"));
    }
    let mut out = Vec::with_capacity(n);
    for u in 0..n {
        let mut s = Q::from(0u32);
        for p in parts {
            s += parse_q(&p[u], &format!("sums[{u}]"))?;
        }
        if s <= 0u32 {
            return Err(input_error(format!("matrix[{u}]"), "row sum must be > 0"));
        }
        out.push(format_rational(&s));
    }
    Ok(out)
}

/// Audit columns `c0..c1` on `part`'s share of the ordered pairs at ε (`None`: the
/// header's claim) given the whole rows' exact sums: the block's verdict, tight-ε
/// enclosure and witness, as JSON text.
#[allow(clippy::too_many_arguments)]
pub fn audit_block(
    header: &Path,
    c0: usize,
    c1: usize,
    part: Part,
    sums: &[String],
    epsilon: Option<&str>,
    max_prec: u64,
    max_exact_triples: u64,
    limits: &Limits,
    max_memory: u64,
) -> Result<String, InputError> {
    let t = std::time::Instant::now();
    let v = header_value(header, limits)?;
    let c = container::read_columns(header, &v, limits, max_memory, c0, c1)?;
    if sums.len() != c.matrix.rows {
        return Err(input_error(
            "sums",
            format!("{} sums for {} rows", sums.len(), c.matrix.rows),
        ));
    }
    let sums = parse_sums(sums)?;
    if let Some(u) = sums.iter().position(|s| *s <= 0u32) {
        return Err(input_error(format!("sums[{u}]"), "must be > 0"));
    }
    let eps = match epsilon {
        Some(e) => parse_q(e, "epsilon")?,
        None => c.epsilon.clone(),
    };
    let norm = Normalized::with_sums(&c.matrix, sums);
    let budget = max_exact_triples;
    let (structure, _, _) = super::of_container(&c, &norm, max_prec, budget, part)?;
    let over = |o: super::OverBudget| {
        input_error(
            "matrix",
            format!(
                "the exact fallback needs more than {budget} exact triples (spent {})",
                o.exact_triples
            ),
        )
    };
    let (tight, mut work, undecided) = match tight_eps(structure.as_ref()) {
        Ok((e, w)) => (Some(e), w, None),
        Err(TightError::OverBudget(o)) => return Err(over(o)),
        Err(TightError::Undecided(p)) => (None, Work::default(), Some(p)),
    };
    // An undecided pair of the tight-ε search leaves the verdict inconclusive unless a
    // failure is proven.
    let failing = match super::verdict_at(structure.as_ref(), tight.as_ref(), &eps, &mut work)
        .map_err(over)?
    {
        Ok(None) => undecided.map_or(Ok(None), Err),
        f => f,
    };
    let (verdict, check) = match failing {
        Ok(None) => (Verdict::Pass, None),
        Ok(Some(p)) => (
            Verdict::Fail,
            Some(witness_check(&c, &norm, &eps, p, &c.geometry, c0)),
        ),
        Err(p) => (
            Verdict::Inconclusive,
            Some(Check {
                name: "pure_privacy".into(),
                verdict: Verdict::Inconclusive,
                detail: format!("pair ({}, {}) undecidable within {max_prec} bits", p.u, p.v),
                witness: None,
            }),
        ),
    };
    let pass_triples = structure
        .pairs()
        .saturating_mul((c1 - c0) as u64)
        .saturating_mul(work.passes);
    Ok(json!({
        "columns": [c0, c1],
        "part": [part.index, part.of],
        "layout": format!("{:016x}", structure.layout()),
        "file": format!("{:016x}", file_digest(header, &v)),
        "verdict": verdict,
        "tight": tight.as_ref().map(|e| json!([format_rational(&e.lo), e.hi.as_ref().map(format_rational)])),
        "tight_pair": tight.as_ref().and_then(|e| e.pair).map(|(u, v)| [u, v]),
        "check": check,
        "work": {"settled_triples": work.settled_triples, "pair_triples": work.pair_triples,
                 "exact_triples": work.exact_triples, "passes": work.passes,
                 "pass_triples": pass_triples},
        "seconds": t.elapsed().as_secs_f64(),
    })
    .to_string())
}

/// What a task audited, for the combination to refuse tasks that read different files: the
/// header as parsed, the SHA-256 of the `.npy` file's bytes, and this build's version
/// (shares are dealt by this build's tree). The bytes, not the file's length and
/// modification time: two matrices of one shape written within one tick of the file
/// system's clock (milliseconds) have equal metadata, and blocks of both would combine
/// into the verdict of neither. Reading the file costs each task a pass over it (about a
/// second per GB), small beside auditing its block.
fn file_digest(header: &Path, v: &Value) -> u64 {
    use sha2::{Digest as _, Sha256};
    use std::io::Read as _;
    let npy = v["matrix"]["npy"]
        .as_str()
        .map(|name| header.parent().unwrap_or(Path::new(".")).join(name));
    let mut h = Sha256::new();
    if let Some(mut f) = npy.and_then(|p| std::fs::File::open(p).ok()) {
        let mut buf = vec![0u8; 1 << 20];
        while let Ok(r) = f.read(&mut buf) {
            if r == 0 {
                break;
            }
            h.update(&buf[..r]);
        }
    }
    let bytes: [u8; 32] = h.finalize().into();
    let words = bytes
        .chunks(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")));
    let text = format!("{}{}", env!("CARGO_PKG_VERSION"), v);
    super::digest(text.bytes().map(u64::from).chain(words))
}

/// Combine the blocks' results (JSON texts from [`audit_block`]) with the whole sums into
/// one report: verdict, tight ε, the row-sum check, the first failing block's witness.
pub fn combine(
    results: &[String],
    sums: &[String],
    n: usize,
    k: usize,
    epsilon: &str,
    row_sum_tolerance: &Q,
) -> Result<Value, InputError> {
    let mut blocks: Vec<Value> = results
        .iter()
        .map(|r| serde_json::from_str(r).map_err(|e| input_error("results", e.to_string())))
        .collect::<Result<_, _>>()?;
    let num = |b: &Value, f: &str, i: usize, missing: u64| b[f][i].as_u64().unwrap_or(missing);
    blocks.sort_by_key(|b| (num(b, "columns", 0, 0), num(b, "part", 0, 0)));
    // Every block of columns (tiling 0..K) audited on shares 0..P of the pairs, each once.
    let (mut covered, mut ranges) = (0u64, 0usize);
    let mut i = 0;
    while i < blocks.len() {
        ranges += 1;
        let (c0, c1) = (
            num(&blocks[i], "columns", 0, u64::MAX),
            num(&blocks[i], "columns", 1, 0),
        );
        if c0 != covered || c1 <= c0 {
            return Err(input_error(
                "results",
                format!("the blocks do not tile the columns 0..{k} (gap or overlap at {covered})"),
            ));
        }
        let of = num(&blocks[i], "part", 1, 0);
        if !(1..=1 << 20).contains(&of) {
            return Err(input_error(
                "results",
                format!("columns {c0}..{c1}: {of} shares of the pairs (need 1 to 2^20)"),
            ));
        }
        let layout = blocks[i]["layout"].clone();
        for share in 0..of {
            let b = blocks.get(i).filter(|b| {
                (num(b, "columns", 0, u64::MAX), num(b, "columns", 1, 0)) == (c0, c1)
                    && (num(b, "part", 0, u64::MAX), num(b, "part", 1, 0)) == (share, of)
                    && (of == 1 || b["layout"] == layout)
                    && b["file"].is_string()
                    && b["file"] == blocks[0]["file"]
            });
            if b.is_none() {
                return Err(input_error(
                    "results",
                    format!("columns {c0}..{c1}: share {share} of {of} of the pairs is missing or repeated, or was dealt from another file or build"),
                ));
            }
            i += 1;
        }
        covered = c1;
    }
    if covered != k as u64 {
        return Err(input_error(
            "results",
            format!("the blocks cover columns 0..{covered}, not 0..{k}"),
        ));
    }
    if sums.len() != n {
        return Err(input_error(
            "sums",
            format!("{} sums for {n} rows", sums.len()),
        ));
    }
    let sums = parse_sums(sums)?;
    let (dev, rows) = crate::audit::row_sums_check(&sums, row_sum_tolerance);
    let verdict_of = |b: &Value| b["verdict"].as_str().unwrap_or("inconclusive").to_string();
    let failing = blocks.iter().find(|b| verdict_of(b) == "fail");
    let inconclusive = blocks.iter().find(|b| verdict_of(b) == "inconclusive");
    let rows_ok = rows.verdict == Verdict::Pass;
    let verdict = if failing.is_some() || !rows_ok {
        "fail"
    } else if inconclusive.is_some() {
        "inconclusive"
    } else {
        "pass"
    };
    // The tight ε: the maximum of the blocks' enclosures (None = +∞; missing = unknown).
    let mut lo = Q::from(0u32);
    let mut hi: Option<Option<Q>> = Some(Some(Q::from(0u32)));
    let mut pair = Value::Null;
    for b in &blocks {
        match b["tight"].as_array() {
            Some(t) => {
                let l = parse_q(t[0].as_str().unwrap_or("0"), "tight")?;
                if pair.is_null() || l > lo {
                    lo = l;
                    pair = b["tight_pair"].clone();
                }
                let h = t[1].as_str().map(|s| parse_q(s, "tight")).transpose()?;
                hi = match (hi, h) {
                    (Some(Some(a)), Some(b)) => Some(Some(if b > a { b } else { a })),
                    (Some(_), None) => Some(None),
                    (x, _) => x,
                };
            }
            None => hi = None,
        }
    }
    let eps = parse_q(epsilon, "epsilon")?;
    let hi_f = match &hi {
        Some(Some(h)) => {
            let h = if verdict == "pass" && *h > eps {
                eps.clone()
            } else {
                h.clone()
            };
            Some(f64_up(&h))
        }
        _ => None,
    };
    let work = |key: &str| {
        blocks
            .iter()
            .map(|b| b["work"][key].as_u64().unwrap_or(0))
            .fold(0u64, u64::saturating_add)
    };
    // Each task's passes over its own share's pairs and its columns.
    let pass_triples = blocks
        .iter()
        .map(|b| b["work"]["pass_triples"].as_u64().unwrap_or(0))
        .fold(0u64, u64::saturating_add);
    Ok(json!({
        "verdict": verdict,
        "n": n,
        "K": k,
        "epsilon": crate::exact::f64_nearest(&eps),
        "epsilon_tight": match hi { Some(_) => json!([crate::exact::f64_down(&lo), hi_f]), None => json!([null, null]) },
        "tight_pair": pair,
        "max_row_sum_deviation": f64_up(&dev),
        "row_sums": if rows_ok { "pass" } else { "fail" },
        "witness": failing.map(|b| b["check"].clone()),
        "inconclusive": inconclusive.map(|b| b["check"].clone()),
        "blocks": ranges,
        "tasks": blocks.len(),
        "settled_fraction": super::report::settled_fraction(work("settled_triples"), pass_triples),
        "exact_triples": work("exact_triples"),
        "seconds_blocks": blocks.iter().map(|b| b["seconds"].as_f64().unwrap_or(0.0)).collect::<Vec<_>>(),
    }))
}
