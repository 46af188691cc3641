//! Fuzz the certificate checks (`claimed_loss`, `packing`, `lp_dual`) on fixed, valid
//! mechanisms: the matrix, metric and ε come from a template, only `certificate` is fuzzed.
//!
//! Input: byte 0 picks the mode, byte 1 the template, the rest is the payload:
//! * mode 0: the payload is JSON and replaces the whole `certificate`;
//! * mode 1: the payload is JSON; an object is merged key by key into the template's
//!   `certificate.lower_bound` (other values replace it);
//! * mode 2: the payload is a list of structured edits of the template's certificate
//!   (numbers scaled exactly, indices moved, rows duplicated / removed / added, ...).
//!
//! Invariants: reading and auditing never panic; a report's verdict matches its checks;
//! the matrix (unchanged) still passes `pure_privacy`; and, the soundness property, a
//! passing `lp_dual` check never certifies a bound above the template matrix's own loss
//! upper end (the matrix is private, so the LP optimum is ≤ its loss: a certified lower
//! bound above it would be a false proof). Likewise a verified packing never "proves" the
//! private matrix impossible, and a passing `claimed_loss` is within tolerance of L(M).
#![no_main]
use libfuzzer_sys::fuzz_target;
use mdp_audit::audit::{audit, Options, Report, ScopePolicy, Verdict};
use mdp_audit::exact::{f64_nearest, format_rational, Q};
use mdp_audit::io::{read_mechanism, Limits};
use serde_json::{json, Map, Value};
use std::sync::OnceLock;

const TEMPLATES: &[(&str, &str)] = &[
    (
        "lp_optimal_planar20",
        include_str!("../../tests/corpus/pass/lp_optimal_planar20.json"),
    ),
    (
        "lp_pmo_planar20",
        include_str!("../../tests/corpus/pass/lp_pmo_planar20.json"),
    ),
    ("opt_ex5", include_str!("../templates/opt_ex5.json")),
    ("pmo_hv5", include_str!("../templates/pmo_hv5.json")),
    (
        "exp_eu6_lp_dual",
        include_str!("../templates/exp_eu6_lp_dual.json"),
    ),
    (
        "exp_eu6_packing",
        include_str!("../templates/exp_eu6_packing.json"),
    ),
];

struct Template {
    name: &'static str,
    doc: Map<String, Value>,
    n: usize,
    k: usize,
    loss_max: [f64; 2],
    expected: Option<[f64; 2]>,
}

fn options() -> Options {
    Options {
        scope: ScopePolicy::AnyScope,
        ..Options::default()
    }
}

fn templates() -> &'static [Template] {
    static T: OnceLock<Vec<Template>> = OnceLock::new();
    T.get_or_init(|| {
        TEMPLATES
            .iter()
            .map(|(name, text)| {
                let file = read_mechanism(text.as_bytes(), &Limits::default())
                    .unwrap_or_else(|e| panic!("template {name}: {e}"));
                let report = audit(&file, &options()).expect("template audits");
                assert_eq!(report.verdict, Verdict::Pass, "template {name} must pass");
                let doc = match serde_json::from_str::<Value>(text).expect("json") {
                    Value::Object(o) => o,
                    _ => unreachable!(),
                };
                Template {
                    name,
                    doc,
                    n: file.matrix.rows,
                    k: file.matrix.cols,
                    loss_max: report.loss_max.expect("template has losses"),
                    expected: report.expected_loss,
                }
            })
            .collect()
    })
}

/// A little-endian byte reader that yields zeros when exhausted.
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn u8(&mut self) -> u8 {
        match self.0.split_first() {
            Some((b, rest)) => {
                self.0 = rest;
                *b
            }
            None => 0,
        }
    }
    fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }
    fn u64(&mut self) -> u64 {
        u64::from(self.u16())
            | u64::from(self.u16()) << 16
            | u64::from(self.u16()) << 32
            | u64::from(self.u16()) << 48
    }
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// The exact value of a number literal, if it is one of moderate size: the harness does
/// not derive new numbers from huge ones (its own exact arithmetic and printing of
/// 300 kbit rationals made slow units that the auditor rejects in milliseconds).
fn exact(v: &Value) -> Option<Q> {
    mdp_audit::io::number(v, "")
        .ok()
        .filter(|q| mdp_audit::exact::bits(q) <= 1 << 14)
}

fn qv(q: &Q) -> Value {
    Value::String(format_rational(q))
}

/// A rational p/q from the bytes (q ≥ 1).
fn ratio(b: &mut Bytes) -> Q {
    let p = b.u16();
    let q = b.u16().max(1);
    Q::from_unsigneds(u32::from(p), u32::from(q))
}

/// A new number (or a non-number), possibly derived from the old one.
fn number(b: &mut Bytes, old: Option<&Value>) -> Value {
    let old_q = old.and_then(exact);
    match b.u8() % 16 {
        0 => json!(0),
        1 => json!(1),
        2 => qv(&ratio(b)),
        3 => Value::String(format!("{}e{}", b.u16(), b.u8() as i8)),
        4 => Value::String(format!("-{}", b.u16())),
        5 => Value::String("1e-300".into()),
        6 => Value::String("1e300".into()),
        7 => Value::String(format!("1e-{}", 90000 + u32::from(b.u16()) % 20000)),
        // old · (1 + 2^-s): just above the old value.
        8 | 9 => match old_q {
            Some(q) => {
                let s = u64::from(b.u8() % 128);
                qv(&(&q + (&q >> s)))
            }
            None => json!(1),
        },
        // old · (1 − 2^-s).
        10 => match old_q {
            Some(q) => {
                let s = u64::from(b.u8() % 128);
                qv(&(&q - (&q >> s)))
            }
            None => json!(0),
        },
        11 | 12 => match old_q {
            Some(q) => qv(&(q * ratio(b))),
            None => qv(&ratio(b)),
        },
        13 => {
            let x = f64::from_bits(b.u64());
            serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
        }
        14 => match b.u8() % 5 {
            0 => Value::Null,
            1 => json!("abc"),
            2 => json!([]),
            3 => json!(true),
            _ => json!(""),
        },
        _ => old.cloned().unwrap_or(json!(0)),
    }
}

fn index_value(b: &mut Bytes, limit: usize) -> Value {
    match b.u8() % 8 {
        0 => json!(limit),
        1 => json!(-1),
        2 => json!(1u64 << 40),
        3 => json!(1.0),
        _ => json!(usize::from(b.u8()) % limit.max(1)),
    }
}

/// Apply structured edits to a certificate object.
fn mutate(cert: &mut Map<String, Value>, b: &mut Bytes, t: &Template) {
    let (n, k) = (t.n, t.k);
    let mut steps = 0;
    while !b.is_empty() && steps < 64 {
        steps += 1;
        let op = b.u8() % 16;
        let lb = cert.entry("lower_bound").or_insert_with(
            || json!({"kind": "lp_dual", "objective": "max_loss", "value": 0, "gamma": []}),
        );
        if !lb.is_object() {
            *lb = json!({});
        }
        let lb = lb.as_object_mut().expect("object");
        match op {
            0..=6 => {
                let Some(g) = lb.get_mut("gamma").and_then(Value::as_array_mut) else {
                    continue;
                };
                if g.is_empty() {
                    continue;
                }
                let i = usize::from(b.u16()) % g.len();
                match op {
                    0 | 1 => {
                        if let Some(row) = g[i].as_array_mut() {
                            if row.len() == 4 {
                                row[3] = number(b, Some(&row[3]));
                            }
                        }
                    }
                    2 => {
                        let field = usize::from(b.u8() % 3);
                        let lim = if field == 2 { k } else { n };
                        if let Some(row) = g[i].as_array_mut() {
                            if row.len() == 4 {
                                row[field] = index_value(b, lim);
                            }
                        }
                    }
                    3 => {
                        if let Some(row) = g[i].as_array_mut() {
                            if row.len() == 4 {
                                row.swap(0, 1);
                            }
                        }
                    }
                    4 => {
                        let r = g[i].clone();
                        g.push(r);
                    }
                    5 => {
                        g.remove(i);
                    }
                    _ => {
                        // Move the row to another output k (or pair), keeping γ.
                        if let Some(row) = g[i].as_array_mut() {
                            if row.len() == 4 {
                                row[2] = json!(usize::from(b.u8()) % k);
                            }
                        }
                    }
                }
            }
            7 => {
                let u = usize::from(b.u8()) % n;
                let v = usize::from(b.u8()) % n;
                let kk = usize::from(b.u8()) % k;
                let x = number(b, None);
                let row = json!([u, v, kk, x]);
                match lb.get_mut("gamma").and_then(Value::as_array_mut) {
                    Some(g) => g.push(row),
                    None => {
                        lb.insert("gamma".into(), json!([row]));
                    }
                }
            }
            8 => {
                if let Some(beta) = lb.get_mut("beta").and_then(Value::as_array_mut) {
                    if !beta.is_empty() {
                        let j = usize::from(b.u8()) % beta.len();
                        beta[j] = number(b, Some(&beta[j]));
                    }
                }
            }
            9 => {
                let old = lb.get("value").cloned();
                lb.insert("value".into(), number(b, old.as_ref()));
            }
            10 => {
                let obj = match b.u8() % 3 {
                    0 => json!("max_loss"),
                    1 => json!("expected_loss"),
                    _ => json!("min_loss"),
                };
                lb.insert("objective".into(), obj);
                if b.u8() % 2 == 0 {
                    // A beta for max_loss, or none for expected_loss.
                    if lb.get("objective") == Some(&json!("max_loss")) && !lb.contains_key("beta") {
                        lb.insert("beta".into(), json!(vec![1; n]));
                    } else {
                        lb.remove("beta");
                    }
                }
            }
            11 | 12 => {
                // Scale every γ (11) or every β (12) by one exact factor.
                let key = if op == 11 { "gamma" } else { "beta" };
                let f = ratio(b);
                if let Some(a) = lb.get_mut(key).and_then(Value::as_array_mut) {
                    for x in a.iter_mut() {
                        let slot = match x {
                            Value::Array(r) if r.len() == 4 => &mut r[3],
                            Value::Array(_) => continue,
                            other => other,
                        };
                        if let Some(q) = exact(slot) {
                            *slot = qv(&(q * &f));
                        }
                    }
                }
            }
            13 => {
                let old = cert
                    .get("claimed_loss")
                    .cloned()
                    .unwrap_or_else(|| Value::String(format!("{:e}", t.loss_max[1])));
                let x = number(b, Some(&old));
                cert.insert("claimed_loss".into(), x);
            }
            14 => {
                let keys = ["kind", "objective", "value", "beta", "gamma", "extra"];
                let key = keys[usize::from(b.u8()) % keys.len()];
                if lb.remove(key).is_none() {
                    lb.insert(key.into(), number(b, None));
                }
            }
            _ => {
                // A packing claim.
                let c = 1 + usize::from(b.u8()) % 4;
                let centers: Vec<Value> = (0..c).map(|_| index_value(b, n)).collect();
                let radius = number(b, Some(&json!("0.5")));
                cert.insert(
                    "lower_bound".into(),
                    json!({"kind": "packing", "centers": centers, "radius": radius}),
                );
            }
        }
    }
}

fn check(report: &Report, t: &Template, file: &mdp_audit::io::MechanismFile) {
    let any_fail = report.checks.iter().any(|c| c.verdict == Verdict::Fail);
    assert_eq!(report.verdict == Verdict::Fail, any_fail);
    assert_eq!(
        report.loss_max,
        Some(t.loss_max),
        "{}: the matrix did not change",
        t.name
    );
    for c in &report.checks {
        match c.name.as_str() {
            "pure_privacy" => assert_eq!(c.verdict, Verdict::Pass, "{}: {}", t.name, c.detail),
            "lp_dual" if c.verdict == Verdict::Pass => {
                let w = c.witness.as_ref().expect("lp_dual witness");
                let bound = w["bound"].as_f64().expect("bound");
                let upper = match w["objective"].as_str() {
                    Some("max_loss") => t.loss_max[1],
                    Some("expected_loss") => {
                        t.expected.expect("expected_loss passes only with a prior")[1]
                    }
                    other => panic!("objective {other:?}"),
                };
                assert!(
                    bound <= upper,
                    "{}: a tampered lp_dual certified {bound:e} > this private matrix's objective ≤ {upper:e}: {}",
                    t.name,
                    c.detail
                );
            }
            "packing" => assert!(
                !c.detail.contains("impossible for a private mechanism"),
                "{}: a verified packing rejects the private template matrix: {}",
                t.name,
                c.detail
            ),
            "claimed_loss" if c.verdict == Verdict::Pass => {
                let claim = f64_nearest(file.certificate.claimed_loss.as_ref().expect("claim"));
                let [lo, hi] = t.loss_max;
                assert!(
                    claim >= lo * (1.0 - 1e-8) && claim <= hi * (1.0 + 1e-8),
                    "{}: claimed_loss {claim:e} passes but L(M) ∈ [{lo:e}, {hi:e}]",
                    t.name
                );
            }
            _ => {}
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let ts = templates();
    let mut b = Bytes(data);
    let mode = b.u8() % 3;
    let t = &ts[usize::from(b.u8()) % ts.len()];
    let mut doc = t.doc.clone();
    let cert = match mode {
        0 => match serde_json::from_slice::<Value>(b.0) {
            Ok(v) => v,
            Err(_) => return,
        },
        1 => {
            let Ok(patch) = serde_json::from_slice::<Value>(b.0) else {
                return;
            };
            let mut cert = doc.get("certificate").cloned().unwrap_or_else(|| json!({}));
            match (
                cert.get_mut("lower_bound").and_then(Value::as_object_mut),
                patch,
            ) {
                (Some(lb), Value::Object(p)) => {
                    for (key, val) in p {
                        lb.insert(key, val);
                    }
                }
                (_, p) => {
                    cert["lower_bound"] = p;
                }
            }
            cert
        }
        _ => {
            let mut cert = match doc.get("certificate") {
                Some(Value::Object(o)) => o.clone(),
                _ => Map::new(),
            };
            mutate(&mut cert, &mut b, t);
            Value::Object(cert)
        }
    };
    doc.insert("certificate".into(), cert);
    let bytes = serde_json::to_vec(&Value::Object(doc)).expect("serializes");
    // Triage: `MDP_FUZZ_DUMP=out.json target/.../certificate UNIT` writes the mdp/1
    // document this input builds (then `mdp-audit --allow-scoped out.json`).
    static DUMP: OnceLock<Option<std::ffi::OsString>> = OnceLock::new();
    if let Some(path) = DUMP.get_or_init(|| std::env::var_os("MDP_FUZZ_DUMP")) {
        std::fs::write(path, &bytes).expect("MDP_FUZZ_DUMP: cannot write");
    }
    let Ok(file) = read_mechanism(&bytes, &Limits::default()) else {
        return;
    };
    let report = audit(&file, &options()).expect("a parsed file always audits");
    check(&report, t, &file);
});
