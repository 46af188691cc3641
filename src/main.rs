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
use mdp::exact::{parse_rational, Q};
use mdp::io::{self, Limits};
use mdp::mechanisms::exponential;
use serde_json::json;

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
}

fn fail(msg: impl std::fmt::Display) -> String {
    msg.to_string()
}

fn epsilon(s: &str) -> Result<Q, String> {
    let q = parse_rational(s).map_err(|e| format!("--epsilon: {e}"))?;
    if q <= 0u32 {
        return Err("--epsilon: must be > 0".into());
    }
    Ok(q)
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
    let matrix = exponential::weighted_exponential(&space, eps, w.as_deref());
    let name = if w.is_some() {
        "weighted_exponential"
    } else {
        "exponential"
    };
    let meta = json!({"producer": format!("mdp {}", env!("CARGO_PKG_VERSION")), "mechanism": name, "space": space_spec});
    let doc = io::mechanism_to_value(eps, &space, &matrix, meta);
    let text = serde_json::to_string(&doc).expect("serializable");
    // Prove it before writing it.
    let file = io::read_mechanism(
        text.as_bytes(),
        &Limits {
            max_bytes: u64::MAX,
            max_entries: u64::MAX,
            max_bits: u64::MAX,
        },
    )
    .map_err(fail)?;
    let report = audit::audit(&file, &Options::default()).map_err(fail)?;
    if report.verdict == Verdict::Pass {
        if output == "-" {
            println!("{text}");
        } else {
            std::fs::write(output, text + "\n")
                .map_err(|e| format!("{output}: cannot write: {e}"))?;
        }
    }
    Ok(report)
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
    }
}

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
