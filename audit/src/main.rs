//! `mdp-audit FILE|-`: certify that an `mdp/1` mechanism file is ε·d private.
//! Exit codes: 0 pass (a proof), 1 fail (with a witness), 2 input error, 3 inconclusive.

use clap::Parser;
use mdp_audit::audit::{self, Options, EXIT_INPUT};
use mdp_audit::exact::parse_rational;
use mdp_audit::io::Limits;
use mdp_audit::pin::{parse_digest, MetricPin, PinnedSpace};

#[derive(Parser)]
#[command(
    name = "mdp-audit",
    version,
    about = "Exact certification of ε·d privacy for mdp/1 mechanism files"
)]
struct Args {
    /// The mechanism file (`-` for standard input).
    file: String,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Print nothing; the exit code is the verdict.
    #[arg(long, short)]
    quiet: bool,
    /// The ε the pipeline requires: fail unless the matrix is proven ε·d private at E
    /// (the file's own claim is then ignored). Use it in every CI gate.
    #[arg(long = "require-epsilon", alias = "epsilon", value_name = "E")]
    epsilon: Option<String>,
    /// Accept a file that claims privacy only for pairs with d ≤ η (`neighbors.within`)
    /// when η ≥ ETA. Without this flag or --allow-scoped, scoped claims fail.
    #[arg(long, value_name = "ETA", conflicts_with = "allow_scoped")]
    require_within: Option<String>,
    /// Accept a file that claims privacy only within any η (reported, not refused).
    #[arg(long)]
    allow_scoped: bool,
    /// The pipeline's metric: fail unless the file's metric (points, radius, distances or
    /// edges, and labels) equals this space's exactly. Any form `--space` takes elsewhere:
    /// `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric or an mdp/1 file.
    /// Use it (or --require-metric-digest) in every CI gate: a file's own metric is a claim.
    #[arg(long, value_name = "SPACE", conflicts_with = "require_metric_digest")]
    space: Option<String>,
    /// The CSV column (or GeoJSON property) whose values label --space's points; by
    /// default the first column named label, name or id.
    #[arg(long, value_name = "COLUMN", requires = "space")]
    label_column: Option<String>,
    /// Fail unless the file's metric has this digest (the `metric_digest` every report
    /// prints; 64 hex digits, `sha256:` optional).
    #[arg(long, value_name = "HEX")]
    require_metric_digest: Option<String>,
    /// δ for the (ε,δ) tight epsilon (default: the file's, else 0.001).
    #[arg(long)]
    delta: Option<String>,
    /// q for L_q (default: the file's, else 0.95).
    #[arg(long)]
    quantile: Option<String>,
    /// Largest accepted |Σ_k M\[u\]\[k\] − 1|.
    #[arg(long, default_value = "1e-9")]
    row_sum_tolerance: String,
    /// Relative tolerance of the claimed_loss check.
    #[arg(long, default_value = "1e-9")]
    loss_tolerance: String,
    /// Largest accepted file size in bytes.
    #[arg(long, default_value_t = Limits::default().max_bytes)]
    max_bytes: u64,
    /// Largest accepted number of matrix entries n·K.
    #[arg(long, default_value_t = Limits::default().max_entries)]
    max_entries: u64,
    /// Largest total size in bits of the exact numbers of one matrix.
    #[arg(long, default_value_t = Limits::default().max_bits)]
    max_bits: u64,
    /// Largest size in bits of one exact number (a matrix entry, or an entry after exact
    /// row normalization).
    #[arg(long, default_value_t = Limits::default().max_number_bits)]
    max_number_bits: u64,
    /// Largest precision (bits) of the exact fallback before "inconclusive" (64 to 65536).
    #[arg(long, default_value_t = mdp_audit::privacy::DEFAULT_MAX_PREC,
          value_parser = clap::value_parser!(u64).range(64..=65536))]
    max_precision: u64,
    /// Exact triples the structured audit of a container may decide in rationals before it
    /// stops (exit 2): the budget on a matrix that is within rounding of its bound almost
    /// everywhere.
    #[arg(long, default_value_t = mdp_audit::structured::report::DEFAULT_MAX_EXACT_TRIPLES,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_exact_triples: u64,
    /// Largest memory (bytes) the audit of a large-mechanism container may plan to use
    /// (matrix, normalized copy and tree, estimated before the matrix is read).
    #[arg(long, default_value_t = 8_000_000_000)]
    max_memory: u64,
}

fn number(flag: &str, s: &str, positive: bool) -> Result<mdp_audit::exact::Q, String> {
    let q = parse_rational(s).map_err(|e| format!("--{flag}: {e}"))?;
    if positive && q <= 0u32 {
        return Err(format!("--{flag}: must be > 0"));
    }
    if q < 0u32 {
        return Err(format!("--{flag}: must be ≥ 0"));
    }
    Ok(q)
}

fn run(args: &Args) -> Result<i32, String> {
    let mut opts = Options {
        epsilon: args
            .epsilon
            .as_deref()
            .map(|s| number("require-epsilon", s, true))
            .transpose()?,
        delta: args
            .delta
            .as_deref()
            .map(|s| number("delta", s, false))
            .transpose()?,
        quantile: args
            .quantile
            .as_deref()
            .map(|s| number("quantile", s, false))
            .transpose()?,
        scope: audit::ScopePolicy::from_flags(
            args.require_within
                .as_deref()
                .map(|s| number("require-within", s, true))
                .transpose()?,
            args.allow_scoped,
        ),
        metric: MetricPin::FileMetric,
        row_sum_tolerance: number("row-sum-tolerance", &args.row_sum_tolerance, false)?,
        loss_tolerance: number("loss-tolerance", &args.loss_tolerance, false)?,
        max_prec: args.max_precision,
        max_number_bits: args.max_number_bits,
        max_exact_triples: args.max_exact_triples,
    };
    if opts.delta.as_ref().is_some_and(|d| *d >= 1u32) {
        return Err("--delta: must be in [0, 1)".into());
    }
    if opts.quantile.as_ref().is_some_and(|q| *q > 1u32) {
        return Err("--quantile: must be in [0, 1]".into());
    }
    let limits = Limits {
        max_bytes: args.max_bytes,
        max_entries: args.max_entries,
        max_bits: args.max_bits,
        max_number_bits: args.max_number_bits,
    };
    opts.metric = match (&args.space, &args.require_metric_digest) {
        (Some(spec), _) => MetricPin::Space(std::sync::Arc::new(
            PinnedSpace::load(spec, args.label_column.as_deref(), &limits)
                .map_err(|e| e.to_string())?,
        )),
        (None, Some(hex)) => MetricPin::Digest(parse_digest(hex).map_err(|e| e.to_string())?),
        (None, None) => MetricPin::FileMetric,
    };
    let progress = mdp_audit::progress::Console::new(args.quiet, 2.0);
    let report =
        mdp_audit::source::audit_path(&args.file, &limits, args.max_memory, &opts, &progress)
            .map_err(|e| e.to_string())?;
    if !args.quiet {
        if args.json {
            println!("{}", audit::json(&report));
        } else {
            print!("{}", audit::human(&report));
        }
    }
    Ok(report.verdict.exit_code())
}

fn main() {
    mdp_audit::pipe::restore_default_sigpipe();
    let args: Args = mdp_audit::pipe::parse_or_exit("mdp-audit");
    let code = match run(&args) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("mdp-audit: {}", msg.lines().next().unwrap_or(""));
            EXIT_INPUT
        }
    };
    std::process::exit(code);
}
