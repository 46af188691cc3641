//! `mdp`: build mechanisms as `mdp/1` files and run the embedded demo.
//!
//! * `mdp demo`: the exponential mechanism on the embedded default space, written to
//!   `mech.json` and audited (the README's main command);
//! * `mdp build exponential --space SPACE --epsilon E [--weights FILE] -o OUT`: the
//!   exponential / weighted exponential mechanism (Imola et al. Proposition 1).
//!
//! Exit codes: 0 success, 1 the produced mechanism failed its own audit, 2 input error.

use clap::{Parser, Subcommand};
use mdp::audit::{self, Options, Verdict, EXIT_INPUT};
use mdp::bounds::PackingCandidates;
use mdp::exact::{parse_rational, Q};
use mdp::io::{self, Limits};
use mdp::lp::certificate;
use mdp::lp::mps;
use mdp::mechanisms::{constopt, exponential, optimal, spanner};
use serde_json::json;

mod suite;
mod tools;

#[derive(Parser)]
#[command(
    name = "mdp",
    version,
    about = "Metric differential privacy mechanisms with proofs"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Build the exponential mechanism on the embedded default space, write it and audit it.
    Demo {
        /// Privacy level ε (per km for the default space).
        #[arg(long, default_value = "0.5")]
        epsilon: String,
        /// Space: `builtin:NAME` or a JSON file.
        #[arg(long, default_value = mdp::builtin::DEFAULT)]
        space: String,
        /// Where to write the mechanism.
        #[arg(short, long, default_value = "mech.json")]
        output: String,
    },
    /// Build a mechanism and write it as an mdp/1 file.
    Build {
        #[command(subcommand)]
        mechanism: Mechanism,
    },
    /// Work with the privacy LPs directly.
    Lp {
        #[command(subcommand)]
        cmd: LpCmd,
    },
    /// Monte Carlo estimate of a sampler's matrix and loss (not a certificate).
    Estimate {
        #[command(subcommand)]
        sampler: EstimateKind,
    },
    /// Apply a mechanism to records: one input (index or label) per line in, one sampled
    /// output per line out; seeded and streaming.
    Privatize(suite::PrivatizeArgs),
    /// Find a mechanism's parameter giving a target (ε,δ) tight epsilon, and write it.
    Calibrate(suite::CalibrateArgs),
    /// The papers' experiments, written as CSV and SVG.
    Experiment {
        #[command(subcommand)]
        kind: suite::ExperimentKind,
    },
    /// Lower bounds on the loss of every ε·d-private mechanism.
    Bound {
        #[command(subcommand)]
        kind: BoundKind,
    },
    /// Write an external matrix (numpy .npy, JSON, CSV) on a space as an mdp/1 file; it is
    /// audited and written only if it passes.
    Import(tools::ImportArgs),
    /// Repair a near-private external matrix (rounding-level violations) into the nearest
    /// certified one, by an exact uniform mix; refuses matrices that are not private up to
    /// rounding.
    Repair(tools::RepairArgs),
}

#[derive(Subcommand)]
enum EstimateKind {
    /// Madlib (Feyisetan et al.): Laplace-type noise on the embedding, nearest point.
    Madlib {
        #[command(flatten)]
        base: SpaceEps,
        /// Draws per input.
        #[arg(long, default_value = "1000")]
        samples: usize,
        #[arg(long, default_value = "1")]
        seed: u64,
        /// Confidence of the loss intervals (Bonferroni over the inputs).
        #[arg(long, default_value = "0.95")]
        confidence: f64,
        #[arg(short, long, default_value = "-")]
        output: String,
    },
}

#[derive(Subcommand)]
enum BoundKind {
    /// The best packing bound (Imola et al. Theorem 3, eq. 7) over the k-center candidate
    /// packings, for each ε: one JSON line per ε on standard output, each verified exactly.
    Packing {
        /// Space: `builtin:NAME`, a JSON metric object, or an mdp/1 file.
        #[arg(long, default_value = mdp::builtin::DEFAULT)]
        space: String,
        /// Privacy levels ε > 0 (repeat or comma-separate).
        #[arg(long, value_delimiter = ',', required = true)]
        epsilon: Vec<String>,
    },
}

#[derive(Subcommand)]
enum LpCmd {
    /// Write a mechanism's full LP (every privacy row) as free MPS, for any solver.
    Export {
        #[command(subcommand)]
        problem: LpProblem,
    },
}

#[derive(Subcommand)]
enum LpProblem {
    /// OPTMech's LP.
    Optimal {
        #[command(flatten)]
        base: SpaceEps,
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// PMO's LP.
    Pmo {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        pmo: PmoArgs,
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// SpannerMech's LP (rows on the greedy (2k−1)-spanner's edges, at ε/(2k−1)).
    Spanner {
        #[command(flatten)]
        base: SpaceEps,
        #[arg(long, default_value = "2")]
        k: u64,
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// ConstOPTMech's reduced LP (Imola et al. eqs. 18–26) at ε/2 for one λ, as
    /// `mdp build constopt` solves it (variables x_j, rows r_i).
    Constopt {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        repl: ReplacementArgs,
        #[arg(long, default_value = "0.1")]
        lambda: f64,
        #[arg(short, long, default_value = "-")]
        output: String,
    },
}

/// ConstOPTMech's replacement function I (Imola et al. §3.2).
#[derive(clap::Args)]
struct ReplacementArgs {
    /// r of I_NN,r: entries M_uv with v among u's r nearest neighbours are free.
    #[arg(long, default_value = "10")]
    r: usize,
    /// JSON array of n arrays: I(v) for each v (instead of I_NN,r).
    #[arg(long)]
    replacement: Option<String>,
}

/// The float LP solver of the LP mechanisms (spec/lp.md §4).
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
enum SolverArg {
    /// Clarabel's interior point method (primal and dual in one solve).
    Ipm,
    /// microlp's simplex with warm-started lazy rows (vertex solutions).
    Simplex,
}

impl From<SolverArg> for optimal::Solver {
    fn from(s: SolverArg) -> Self {
        match s {
            SolverArg::Ipm => optimal::Solver::Ipm,
            SolverArg::Simplex => optimal::Solver::Simplex,
        }
    }
}

#[derive(clap::Args, Clone)]
struct SpaceEps {
    /// Space: `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric object, or an
    /// mdp/1 file.
    #[arg(long, default_value = mdp::builtin::DEFAULT)]
    space: String,
    /// Privacy level ε > 0.
    #[arg(long)]
    epsilon: String,
    /// Refuse an LP build whose estimated memory exceeds this (bytes, or with a K, M, G
    /// suffix: 8G).
    #[arg(long, default_value = "8G", value_parser = memory_value)]
    max_memory: u64,
}

/// A memory size: bytes, or a number with a K, M or G suffix (powers of 1024).
fn memory_value(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, mult) = match t.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => (
            &t[..i],
            match c.to_ascii_uppercase() {
                'K' => 1u64 << 10,
                'M' => 1 << 20,
                'G' => 1 << 30,
                _ => return Err(format!("{s:?}: unknown unit (use K, M or G)")),
            },
        ),
        _ => (t, 1),
    };
    num.trim()
        .parse::<u64>()
        .ok()
        .and_then(|x| x.checked_mul(mult))
        .ok_or_else(|| format!("{s:?} is not a memory size"))
}

fn mib(bytes: u64) -> String {
    format!("{:.0} MiB", bytes as f64 / (1u64 << 20) as f64)
}

/// Refuse an LP over `n` inputs and `k` outputs whose estimated memory exceeds the budget.
fn lp_memory(n: usize, k: usize, max_memory: u64) -> Result<(), String> {
    let need = mdp::lp::model::memory_estimate(n as u64, k as u64);
    if need > max_memory {
        return Err(format!(
            "--max-memory: the privacy LP over {n} inputs × {k} outputs needs about {} (estimate), over the budget of {}; use fewer points, ConstOPTMech (mdp build constopt) or raise --max-memory",
            mib(need),
            mib(max_memory)
        ));
    }
    Ok(())
}

#[derive(clap::Args, Clone)]
struct PmoArgs {
    /// Privacy only for pairs with d ≤ η (Qiu's Definition 2.1); default all pairs.
    #[arg(long)]
    within: Option<String>,
    /// JSON array of n prior weights ≥ 0 (default uniform).
    #[arg(long)]
    prior: Option<String>,
    /// JSON n×K cost matrix (default: the distance to the output).
    #[arg(long)]
    cost: Option<String>,
    /// JSON array of input indices that are the outputs (default: all inputs).
    #[arg(long)]
    outputs: Option<String>,
}

#[derive(Subcommand)]
enum Mechanism {
    /// The exponential mechanism Pr[w|u] ∝ Y_w·exp(−ε·d(u,w)/2) (Imola et al. §3.1).
    Exponential {
        /// Space: `builtin:NAME`, a JSON metric object, or an mdp/1 file.
        #[arg(long, default_value = mdp::builtin::DEFAULT)]
        space: String,
        /// Privacy level ε > 0.
        #[arg(long)]
        epsilon: String,
        /// JSON array of n positive weights Y (the weighted exponential mechanism).
        #[arg(long)]
        weights: Option<String>,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// OPTMech: the least worst-case loss among ε·d-private mechanisms (Imola et al. §2),
    /// certified by an exactly checked LP dual.
    Optimal {
        #[command(flatten)]
        base: SpaceEps,
        /// Output file (`-` for standard output).
        #[arg(short, long, default_value = "-")]
        output: String,
        /// No progress on standard error.
        #[arg(long)]
        quiet: bool,
        /// Float LP solver.
        #[arg(long, value_enum, default_value = "ipm")]
        solver: SolverArg,
    },
    /// PMO: the least expected loss under a prior, privacy for pairs within η (Qiu §2.2).
    Pmo {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        pmo: PmoArgs,
        #[arg(short, long, default_value = "-")]
        output: String,
        #[arg(long)]
        quiet: bool,
        #[arg(long, value_enum, default_value = "ipm")]
        solver: SolverArg,
    },
    /// ConstOPTMech (Imola et al. §3.2, Algorithm 1): the reduced LP at ε/2 with the
    /// replacement function I_NN,r (or --replacement), normalized; a λ sweep keeps the
    /// least loss. Written with the best k-center packing lower bound as its certificate.
    Constopt {
        #[command(flatten)]
        base: SpaceEps,
        #[command(flatten)]
        repl: ReplacementArgs,
        /// Candidate λ > 0 (repeat or comma-separate); default the paper's {0.001, 0.1, 1}.
        #[arg(long, value_delimiter = ',', default_values = ["0.001", "0.1", "1"])]
        lambda: Vec<f64>,
        #[arg(short, long, default_value = "-")]
        output: String,
        #[arg(long)]
        quiet: bool,
    },
    /// TEM (Carvalho et al., Algorithm 2): the exponential mechanism on min(d, γ); γ from
    /// Theorem 4.2 for --beta, or given with --gamma.
    Tem {
        #[command(flatten)]
        base: SpaceEps,
        /// β of Theorem 4.2: output within γ with probability ≥ 1 − β.
        #[arg(long, default_value = "0.001")]
        beta: f64,
        /// The truncation threshold γ ≥ 0 (instead of --beta).
        #[arg(long)]
        gamma: Option<String>,
        #[arg(short, long, default_value = "-")]
        output: String,
    },
    /// SpannerMech: OPTMech's rows on a greedy (2k−1)-spanner only, at ε/(2k−1)
    /// (Imola et al. Appendix A, Theorem 4).
    Spanner {
        #[command(flatten)]
        base: SpaceEps,
        /// Spanner parameter k ≥ 1 (stretch 2k−1).
        #[arg(long, default_value = "2")]
        k: u64,
        #[arg(short, long, default_value = "-")]
        output: String,
        #[arg(long)]
        quiet: bool,
        #[arg(long, value_enum, default_value = "ipm")]
        solver: SolverArg,
    },
}

fn fail(msg: impl std::fmt::Display) -> String {
    msg.to_string()
}

/// ε from the command line: a number in [10^-9, 10^9] (beyond that range e^{±ε·d} leaves
/// every meaningful scale, and exact mechanisms would need unbounded numbers).
pub(crate) fn epsilon(s: &str) -> Result<Q, String> {
    let q = parse_rational(s).map_err(|e| format!("--epsilon: {e}"))?;
    if q <= 0u32 {
        return Err("--epsilon: must be > 0".into());
    }
    let (lo, hi) = (
        Q::from_unsigneds(1u32, 1_000_000_000u32),
        Q::from(1_000_000_000u32),
    );
    if q < lo || q > hi {
        return Err(format!(
            "--epsilon: {s} is outside the supported range [1e-9, 1e9]"
        ));
    }
    Ok(q)
}

/// SpannerMech's k: 1 ≤ k ≤ n (beyond n the stretch 2k − 1 exceeds any path's hops).
fn spanner_k(k: u64, n: usize) -> Result<u32, String> {
    if k < 1 || k > n.max(1) as u64 {
        return Err(format!(
            "--k: must be in 1..={} (the number of inputs)",
            n.max(1)
        ));
    }
    Ok(k as u32)
}

fn weights(path: &str, n: usize, limits: &Limits) -> Result<Vec<Q>, String> {
    let bytes = io::read_source(path, limits).map_err(fail)?;
    let v = io::parse_json(&bytes).map_err(fail)?;
    let a = v
        .as_array()
        .ok_or("--weights: expected a JSON array of numbers")?;
    if a.len() != n {
        return Err(format!(
            "--weights: has {} weights, the space has {n} points",
            a.len()
        ));
    }
    a.iter()
        .enumerate()
        .map(|(i, x)| {
            let q = io::number(x, &format!("--weights[{i}]")).map_err(fail)?;
            if q <= 0u32 {
                return Err(format!(
                    "--weights[{i}]: must be > 0 (Proposition 1 needs Y > 0)"
                ));
            }
            Ok(q)
        })
        .collect()
}

/// Refuse a matrix whose exact entries would exceed the auditor's default number budget
/// (`--max-bits`): a file the auditor refuses by default is never built.
fn within_size_budget(bits: f64) -> Result<(), String> {
    let max = Limits::default().max_bits;
    if bits > max as f64 {
        return Err(format!(
            "--epsilon: the exact entries e^(-ε·d/2) would need about {bits:.2e} bits, over the auditor's default budget of {max} bits (--max-bits); use a smaller ε or fewer points"
        ));
    }
    Ok(())
}

/// Build the exponential mechanism, prove it private, write it. Returns the audit report.
fn build_exponential(
    space_spec: &str,
    eps: &Q,
    weights_path: Option<&str>,
    output: &str,
) -> Result<audit::Report, String> {
    let limits = Limits::default();
    let space = io::load_space(space_spec, &limits).map_err(fail)?;
    let w = weights_path
        .map(|p| weights(p, space.n(), &limits))
        .transpose()?;
    within_size_budget(exponential::exact_bits(&space, eps, w.as_deref()))?;
    let matrix = exponential::weighted_exponential(&space, eps, w.as_deref());
    let name = if w.is_some() {
        "weighted_exponential"
    } else {
        "exponential"
    };
    let meta = json!({"producer": format!("mdp {}", env!("CARGO_PKG_VERSION")), "mechanism": name, "space": space_spec});
    let doc = io::mechanism_to_value(eps, &space, &matrix, meta);
    emit(doc, output)
}

/// Prove a produced document before writing it: it is read back as any peer's file would
/// be and audited; only a pass is written. Returns the audit report.
pub(crate) fn emit(doc: serde_json::Value, output: &str) -> Result<audit::Report, String> {
    let text = serde_json::to_string(&doc).expect("serializable");
    // Read back under the auditor's default limits: what we write, mdp-audit accepts.
    if text.len() as u64 > Limits::default().max_bytes {
        return Err(format!(
            "--output: the file would be {} bytes, over mdp-audit's default --max-bytes {}; nothing written",
            text.len(),
            Limits::default().max_bytes
        ));
    }
    let file = io::read_mechanism(text.as_bytes(), &Limits::default()).map_err(|e| {
        format!("--output: the file would exceed mdp-audit's default limits ({e}); nothing written")
    })?;
    // A producer's policy is what it was asked to build: all pairs, or exactly the η given.
    let opts = Options {
        scope: audit::ScopePolicy::exactly(file.within.as_ref()),
        ..Options::default()
    };
    let report =
        audit::audit_with(&file, &opts, &mdp::progress::Console::new(false, 2.0)).map_err(fail)?;
    if report.verdict == Verdict::Pass {
        if output == "-" {
            use std::io::IsTerminal;
            if std::io::stdout().is_terminal() {
                // A matrix of n² exact numbers is not for reading: ask for a file or a pipe.
                return Err("--output: not writing the mechanism to a terminal; give -o FILE (or pipe standard output)".into());
            }
            println!("{text}");
        } else {
            std::fs::write(output, text + "\n")
                .map_err(|e| format!("{output}: cannot write: {e}"))?;
        }
    }
    Ok(report)
}

/// Load the space of an LP mechanism; LP mechanisms need a metric (exit 2 otherwise).
pub(crate) fn lp_space(spec: &str) -> Result<mdp::metric::Space, String> {
    require_metric(io::load_space(spec, &Limits::default()).map_err(fail)?)
}

/// A loaded space that LP mechanisms and samplers accept: a metric (exit 2 otherwise).
pub(crate) fn require_metric(space: mdp::metric::Space) -> Result<mdp::metric::Space, String> {
    if let Some((u, v, w)) = space.triangle_violation() {
        return Err(format!(
            "--space: not a metric: d({u},{w}) > d({u},{v}) + d({v},{w})"
        ));
    }
    Ok(space)
}

fn json_file(path: &str, flag: &str) -> Result<serde_json::Value, String> {
    let bytes = io::read_source(path, &Limits::default()).map_err(|e| format!("{flag}: {e}"))?;
    io::parse_json(&bytes).map_err(|e| format!("{flag}: {e}"))
}

fn q_array(v: &serde_json::Value, flag: &str) -> Result<Vec<Q>, String> {
    let a = v
        .as_array()
        .ok_or(format!("{flag}: expected a JSON array"))?;
    a.iter()
        .enumerate()
        .map(|(i, x)| io::number(x, &format!("{flag}[{i}]")).map_err(fail))
        .collect()
}

/// The PMO parameters from the command line.
fn pmo_params(a: &PmoArgs) -> Result<(Option<Q>, optimal::PmoParams<'static>), String> {
    let within = a
        .within
        .as_deref()
        .map(|w| {
            let q = parse_rational(w).map_err(|e| format!("--within: {e}"))?;
            if q <= 0u32 {
                return Err("--within: η must be > 0".to_string());
            }
            Ok(q)
        })
        .transpose()?;
    let prior = a
        .prior
        .as_deref()
        .map(|p| q_array(&json_file(p, "--prior")?, "--prior"))
        .transpose()?;
    let outputs = a
        .outputs
        .as_deref()
        .map(|p| -> Result<Vec<usize>, String> {
            let v = json_file(p, "--outputs")?;
            let arr = v
                .as_array()
                .ok_or("--outputs: expected a JSON array of indices")?;
            arr.iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_u64()
                        .map(|u| u as usize)
                        .ok_or(format!("--outputs[{i}]: expected an input index"))
                })
                .collect()
        })
        .transpose()?;
    let cost = a
        .cost
        .as_deref()
        .map(|p| -> Result<Vec<Q>, String> {
            let v = json_file(p, "--cost")?;
            let rows = v.as_array().ok_or("--cost: expected an n×K JSON array")?;
            let mut out = vec![];
            for (i, r) in rows.iter().enumerate() {
                let r = q_array(r, &format!("--cost[{i}]"))?;
                if let Some(j) = r.iter().position(|q| *q < 0u32) {
                    return Err(format!("--cost[{i}][{j}]: costs are ≥ 0"));
                }
                out.extend(r);
            }
            Ok(out)
        })
        .transpose()?;
    Ok((
        within,
        optimal::PmoParams {
            within: None,
            prior,
            cost,
            outputs,
        },
    ))
}

fn progress(quiet: bool) -> mdp::progress::Console {
    mdp::progress::Console::new(quiet, 0.0)
}

/// Write a certified LP mechanism (with its certificate, scope, outputs and loss data) and
/// print the build summary on standard error.
#[allow(clippy::too_many_arguments)]
fn emit_lp(
    name: &str,
    space_spec: &str,
    space: &mdp::metric::Space,
    eps: &Q,
    built: &optimal::Built,
    extra_meta: serde_json::Value,
    tweak: impl FnOnce(&mut serde_json::Value),
    output: &str,
) -> Result<i32, String> {
    let mut meta = json!({
        "lp": {
            "objective": built.lp_objective,
            "rows_total": built.rows_total,
            "rows_generated": built.rows_generated,
            "rounds": built.rounds,
            "uniform_mix": built.t,
            "seconds_primal": built.seconds_primal,
            "seconds_dual": built.seconds_dual,
        }
    });
    if let (Some(m), Some(x)) = (meta.as_object_mut(), extra_meta.as_object()) {
        m.extend(x.clone());
    }
    let cert = built
        .certificate
        .as_ref()
        .map(|c| json!({"lower_bound": certificate::to_value(c)}));
    emit_built(
        Built {
            name,
            space_spec,
            space,
            eps,
            matrix: &built.matrix,
            certificate: cert,
            lower_bound: built.lower_bound,
        },
        meta,
        tweak,
        output,
    )
}

/// A mechanism ready to be written.
struct Built<'a> {
    name: &'a str,
    space_spec: &'a str,
    space: &'a mdp::metric::Space,
    eps: &'a Q,
    matrix: &'a mdp::mechanism::Matrix,
    /// The file's `certificate` object.
    certificate: Option<serde_json::Value>,
    /// The certified lower bound it carries (for the summary).
    lower_bound: Option<f64>,
}

/// Audit and write a built mechanism (nothing is written unless it passes) and print the
/// `stats:` summary line on standard error; `meta` joins the file's `meta`.
fn emit_built(
    b: Built,
    extra_meta: serde_json::Value,
    tweak: impl FnOnce(&mut serde_json::Value),
    output: &str,
) -> Result<i32, String> {
    let mut meta = json!({
        "producer": format!("mdp {}", env!("CARGO_PKG_VERSION")),
        "mechanism": b.name,
        "space": b.space_spec,
    });
    if let (Some(m), Some(x)) = (meta.as_object_mut(), extra_meta.as_object()) {
        m.extend(x.clone());
    }
    let mut doc = io::mechanism_to_value(b.eps, b.space, b.matrix, meta.clone());
    if let Some(c) = b.certificate {
        doc["certificate"] = c;
    }
    tweak(&mut doc);
    let report = emit(doc, output)?;
    let mut summary = json!({
        "mechanism": b.name,
        "n": b.space.n(),
        "verdict": report.verdict,
        "loss_max": report.loss_max,
        "expected_loss": report.expected_loss,
        "certified_lower_bound": b.lower_bound,
    });
    for key in ["lp", "constopt", "tem"] {
        if let Some(v) = meta.get(key) {
            summary[key] = v.clone();
        }
    }
    eprintln!("stats: {summary}");
    if report.verdict == Verdict::Pass {
        Ok(0)
    } else {
        eprint!(
            "mdp: the mechanism did not pass its own audit; nothing written\n{}",
            audit::human(&report)
        );
        Ok(1)
    }
}

/// The best verified k-center packing bound at `eps` for a square mechanism on `space`,
/// as a `packing` certificate and the bound's rigorous lower end.
fn packing_certificate(space: &mdp::metric::Space, eps: &Q) -> Option<(serde_json::Value, f64)> {
    let outputs: Vec<usize> = (0..space.n()).collect();
    let cands = PackingCandidates::new(space, &outputs);
    let best = cands.best(space, &outputs, mdp::exact::f64_up(eps), MAX_PREC)?;
    Some((
        json!({"lower_bound": {
            "kind": "packing",
            "centers": best.packing.centers,
            "radius": io::number_value(&best.packing.radius),
        }}),
        best.bound.lo,
    ))
}

/// ConstOPTMech's replacement function: `--replacement FILE` (I(v) per v) or I_NN,r.
fn replacement_arg(
    space: &mdp::metric::Space,
    a: &ReplacementArgs,
) -> Result<constopt::Replacement, String> {
    let (n, r) = (space.n(), a.r);
    match &a.replacement {
        Some(path) => {
            let v = json_file(path, "--replacement")?;
            let sets: Vec<Vec<usize>> = serde_json::from_value(v)
                .map_err(|_| "--replacement: expected a JSON array of n arrays of input indices")?;
            constopt::Replacement::from_sets(n, sets).map_err(|e| format!("--replacement: {e}"))
        }
        None => {
            if r < 1 || r >= n {
                return Err(format!(
                    "--r: must be in 1..{} (n = {n})",
                    n.saturating_sub(1)
                ));
            }
            Ok(constopt::Replacement::nearest_neighbours(space, r))
        }
    }
}

/// `mdp build constopt`.
fn build_constopt(
    base: &SpaceEps,
    repl_args: &ReplacementArgs,
    lambda: &[f64],
    output: &str,
    quiet: bool,
) -> Result<i32, String> {
    let eps = epsilon(&base.epsilon)?;
    let space = lp_space(&base.space)?;
    let repl = replacement_arg(&space, repl_args)?;
    let params = constopt::Params {
        eps: &eps,
        replacement: &repl,
        lambdas: lambda,
        max_prec: MAX_PREC,
    };
    let built = match constopt::constopt(&space, &params) {
        Ok(b) => b,
        Err(e) if e.starts_with("--") => return Err(e),
        Err(e) => {
            eprintln!("mdp: {e}");
            return Ok(EXIT_SOLVER);
        }
    };
    if !quiet {
        for t in &built.trials {
            eprintln!(
                "constopt: λ = {:<8} LP objective {:.9}, loss {:.9}, {:.2} s",
                t.lambda, t.lp_objective, t.loss, t.seconds
            );
        }
    }
    let (cert, lower) = packing_certificate(&space, &eps).unzip();
    let meta = json!({"constopt": {
        "r": repl_args.replacement.is_none().then_some(repl_args.r),
        "lambda": built.trials[built.best].lambda,
        "trials": built.trials,
        "lp": built.counts,
        "theorem1_bounds": constopt::theorem1_bounds(space.n(), &repl),
        "uniform_mix": built.t,
    }});
    emit_built(
        Built {
            name: "constopt",
            space_spec: &base.space,
            space: &space,
            eps: &eps,
            matrix: &built.matrix,
            certificate: cert,
            lower_bound: lower,
        },
        meta,
        |_| {},
        output,
    )
}

/// `mdp build tem`.
fn build_tem(base: &SpaceEps, beta: f64, gamma: Option<&str>, output: &str) -> Result<i32, String> {
    let eps = epsilon(&base.epsilon)?;
    let space = lp_space(&base.space)?;
    let gamma = match gamma {
        Some(g) => {
            let q = parse_rational(g).map_err(|e| format!("--gamma: {e}"))?;
            if q < 0u32 {
                return Err("--gamma: must be ≥ 0".into());
            }
            q
        }
        None => mdp::mechanisms::tem::gamma_for_beta(&eps, space.n(), beta)
            .ok_or("--beta: must be in (0, 1)")?,
    };
    within_size_budget(mdp::mechanisms::tem::exact_bits(space.n(), &eps, &gamma))?;
    let lists = mdp::mechanisms::tem::within_gamma(&space, &gamma, MAX_PREC)
        .map_err(|(u, v)| format!("--gamma: d({u},{v}) ≤ γ cannot be decided"))?;
    let Some((matrix, t)) =
        mdp::mechanisms::tem::tem_matrix_certified(&space, &eps, &lists, &gamma, MAX_PREC)
    else {
        eprintln!(
            "mdp: exact repair failed: no uniform mix up to the limit passes the exact check"
        );
        return Ok(EXIT_SOLVER);
    };
    let meta = json!({"tem": {"gamma": io::number_value(&gamma), "beta": beta, "uniform_mix": t,
        "mean_list_size": lists.iter().map(Vec::len).sum::<usize>() as f64 / space.n() as f64}});
    let (cert, lower) = packing_certificate(&space, &eps).unzip();
    emit_built(
        Built {
            name: "tem",
            space_spec: &base.space,
            space: &space,
            eps: &eps,
            matrix: &matrix,
            certificate: cert,
            lower_bound: lower,
        },
        meta,
        |_| {},
        output,
    )
}

/// `mdp bound packing`: one JSON line per ε.
fn bound_packing(space_spec: &str, epsilons: &[String]) -> Result<i32, String> {
    let eps: Vec<Q> = epsilons
        .iter()
        .map(|e| epsilon(e))
        .collect::<Result<_, _>>()?;
    let space = lp_space(space_spec)?;
    let outputs: Vec<usize> = (0..space.n()).collect();
    let cands = PackingCandidates::new(&space, &outputs);
    for e in &eps {
        let ef = mdp::exact::f64_up(e);
        let line = match cands.best(&space, &outputs, ef, MAX_PREC) {
            Some(b) => json!({
                "epsilon": ef,
                "bound": b.bound.lo,
                "c": b.packing.centers.len(),
                "radius": mdp::exact::f64_down(&b.packing.radius),
                "q": b.packing.q.hi,
                "centers": b.packing.centers,
            }),
            None => json!({"epsilon": ef, "bound": 0.0}),
        };
        println!("{line}");
    }
    Ok(0)
}

fn build_error(e: optimal::BuildError) -> Result<i32, String> {
    match e {
        optimal::BuildError::Input(m) => Err(m),
        optimal::BuildError::Solver(m) => {
            eprintln!("mdp: {m}");
            Ok(EXIT_SOLVER)
        }
    }
}

/// Exit code when the float solver or the repair fails.
pub(crate) const EXIT_SOLVER: i32 = 4;

/// Write what `f` produces to `output` (`-`: standard output).
fn write_output(
    output: &str,
    f: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), String> {
    let mut buf: Vec<u8> = vec![];
    f(&mut buf).map_err(|e| e.to_string())?;
    if output == "-" {
        use std::io::Write;
        std::io::stdout().write_all(&buf).map_err(|e| e.to_string())
    } else {
        std::fs::write(output, buf).map_err(|e| format!("{output}: cannot write: {e}"))
    }
}

fn export(lp: &mdp::lp::model::PrivacyLp, output: &str) -> Result<i32, String> {
    let mut rows = 0;
    write_output(output, |out| {
        rows = mps::write(lp, out)?;
        Ok(())
    })?;
    eprintln!(
        "lp export: {} variables, {} privacy rows",
        lp.n * lp.k() + usize::from(lp.objective == mdp::lp::model::Objective::MaxLoss),
        rows
    );
    Ok(0)
}

fn run(cli: Cli) -> Result<i32, String> {
    match cli.cmd {
        Cmd::Demo {
            epsilon: e,
            space,
            output,
        } => {
            let eps = epsilon(&e)?;
            let report = build_exponential(&space, &eps, None, &output)?;
            print!("{}", audit::human(&report));
            if report.verdict == Verdict::Pass {
                println!("wrote {output}; audit it again with: cargo run --release -p mdp-audit -- {output}");
                Ok(0)
            } else {
                Ok(1)
            }
        }
        Cmd::Build {
            mechanism:
                Mechanism::Exponential {
                    space,
                    epsilon: e,
                    weights,
                    output,
                },
        } => {
            let eps = epsilon(&e)?;
            let report = build_exponential(&space, &eps, weights.as_deref(), &output)?;
            if report.verdict == Verdict::Pass {
                Ok(0)
            } else {
                eprint!(
                    "mdp: the mechanism did not pass its own audit; nothing written\n{}",
                    audit::human(&report)
                );
                Ok(1)
            }
        }
        Cmd::Build {
            mechanism:
                Mechanism::Optimal {
                    base,
                    output,
                    quiet,
                    solver,
                },
        } => {
            let eps = epsilon(&base.epsilon)?;
            let space = lp_space(&base.space)?;
            lp_memory(space.n(), space.n(), base.max_memory)?;
            match optimal::optimal(&space, &eps, solver.into(), MAX_PREC, &progress(quiet)) {
                Ok(b) => emit_lp(
                    "optimal",
                    &base.space,
                    &space,
                    &eps,
                    &b,
                    json!({}),
                    |_| {},
                    &output,
                ),
                Err(e) => build_error(e),
            }
        }
        Cmd::Build {
            mechanism:
                Mechanism::Pmo {
                    base,
                    pmo,
                    output,
                    quiet,
                    solver,
                },
        } => {
            let eps = epsilon(&base.epsilon)?;
            let space = lp_space(&base.space)?;
            let (within, mut params) = pmo_params(&pmo)?;
            params.within = within.as_ref();
            let k = params.outputs.as_ref().map_or(space.n(), Vec::len);
            lp_memory(space.n(), k, base.max_memory)?;
            let built = match optimal::pmo(
                &space,
                &eps,
                &params,
                solver.into(),
                MAX_PREC,
                &progress(quiet),
            ) {
                Ok(b) => b,
                Err(e) => return build_error(e),
            };
            let n = space.n();
            let prior = params
                .prior
                .clone()
                .unwrap_or_else(|| vec![Q::from(1u32); n]);
            let tweak = |doc: &mut serde_json::Value| {
                let mut loss =
                    json!({"prior": prior.iter().map(io::number_value).collect::<Vec<_>>()});
                if let Some(c) = &params.cost {
                    let k = c.len() / n;
                    loss["cost"] = (0..n)
                        .map(|u| {
                            c[u * k..(u + 1) * k]
                                .iter()
                                .map(io::number_value)
                                .collect::<Vec<_>>()
                        })
                        .collect();
                }
                doc["loss"] = loss;
                if let Some(o) = &params.outputs {
                    doc["outputs"] = json!({"of_inputs": o});
                }
                if let Some(w) = &within {
                    doc["neighbors"] = json!({"within": io::number_value(w)});
                }
            };
            emit_lp(
                "pmo",
                &base.space,
                &space,
                &eps,
                &built,
                json!({}),
                tweak,
                &output,
            )
        }
        Cmd::Build {
            mechanism:
                Mechanism::Spanner {
                    base,
                    k,
                    output,
                    quiet,
                    solver,
                },
        } => {
            let eps = epsilon(&base.epsilon)?;
            let space = lp_space(&base.space)?;
            let k = spanner_k(k, space.n())?;
            lp_memory(space.n(), space.n(), base.max_memory)?;
            match spanner::spanner_mech(&space, &eps, k, solver.into(), MAX_PREC, &progress(quiet))
            {
                Ok((b, edges, stretch)) => emit_lp(
                    "spanner",
                    &base.space,
                    &space,
                    &eps,
                    &b,
                    json!({"k": k, "spanner_edges": edges.len(), "stretch_bound": stretch}),
                    |_| {},
                    &output,
                ),
                Err(e) => build_error(e),
            }
        }
        Cmd::Build {
            mechanism:
                Mechanism::Constopt {
                    base,
                    repl,
                    lambda,
                    output,
                    quiet,
                },
        } => build_constopt(&base, &repl, &lambda, &output, quiet),
        Cmd::Bound {
            kind: BoundKind::Packing { space, epsilon },
        } => bound_packing(&space, &epsilon),
        Cmd::Build {
            mechanism:
                Mechanism::Tem {
                    base,
                    beta,
                    gamma,
                    output,
                },
        } => build_tem(&base, beta, gamma.as_deref(), &output),
        Cmd::Estimate {
            sampler:
                EstimateKind::Madlib {
                    base,
                    samples,
                    seed,
                    confidence,
                    output,
                },
        } => suite::estimate_madlib(
            &base.space,
            &epsilon(&base.epsilon)?,
            samples,
            seed,
            confidence,
            &output,
        ),
        Cmd::Privatize(a) => suite::privatize(&a),
        Cmd::Calibrate(a) => suite::calibrate(&a),
        Cmd::Import(a) => tools::import(&a),
        Cmd::Repair(a) => tools::repair(&a),
        Cmd::Experiment { kind } => suite::experiment(&kind),
        Cmd::Lp {
            cmd: LpCmd::Export { problem },
        } => match problem {
            LpProblem::Optimal { base, output } => {
                let eps = epsilon(&base.epsilon)?;
                let space = lp_space(&base.space)?;
                export(&optimal::optimal_lp(&space, &eps, MAX_PREC), &output)
            }
            LpProblem::Pmo { base, pmo, output } => {
                let eps = epsilon(&base.epsilon)?;
                let space = lp_space(&base.space)?;
                let (within, mut params) = pmo_params(&pmo)?;
                params.within = within.as_ref();
                match optimal::pmo_lp(&space, &eps, &params, MAX_PREC) {
                    Ok(lp) => export(&lp, &output),
                    Err(e) => build_error(e),
                }
            }
            LpProblem::Spanner { base, k, output } => {
                let eps = epsilon(&base.epsilon)?;
                let space = lp_space(&base.space)?;
                let k = spanner_k(k, space.n())? as u64;
                let (edges, _) = spanner::greedy_spanner(&space, (2 * k - 1) as f64);
                let lp = mdp::lp::model::PrivacyLp::new(
                    &space,
                    eps / Q::from(2 * k - 1),
                    (0..space.n()).collect(),
                    mdp::lp::model::Objective::MaxLoss,
                    None,
                    mdp::lp::model::PairSet::Edges(&edges),
                    MAX_PREC,
                );
                export(&lp, &output)
            }
            LpProblem::Constopt {
                base,
                repl,
                lambda,
                output,
            } => {
                let eps = epsilon(&base.epsilon)?;
                let space = lp_space(&base.space)?;
                let repl = replacement_arg(&space, &repl)?;
                if !(lambda > 0.0 && lambda.is_finite()) {
                    return Err("--lambda: must be a finite number > 0".into());
                }
                let red = constopt::reduced_lp(&space, &(eps / Q::from(2u32)), &repl, lambda);
                write_output(&output, |out| red.lp.write_mps("mdp_constopt", out))?;
                eprintln!(
                    "lp export: {} variables, {} rows, {} non-zeros",
                    red.lp.n_vars(),
                    red.lp.rows.len(),
                    red.lp.nnz()
                );
                Ok(0)
            }
        },
    }
}

/// Precision limit (bits) of exact decisions in the LP builders.
pub(crate) const MAX_PREC: u64 = 4096;

fn main() {
    let code = match run(Cli::parse()) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("mdp: {}", msg.lines().next().unwrap_or(""));
            EXIT_INPUT
        }
    };
    std::process::exit(code);
}
