//! The `mdp` binary's commands for what users bring: `import` (an external matrix as an
//! audited `mdp/1` file) and `repair` (a near-private external matrix made certified).
//! Part of the binary, declared in `main.rs`; the work is done by [`mdp::import`].

use crate::{emit, epsilon, EXIT_SOLVER, MAX_PREC};
use mdp::audit::{self, Verdict};
use mdp::import::{self, ImportOptions, RepairError, RepairOptions, ToRepair};
use mdp::io::{self, Limits};
use serde_json::{json, Value};

#[derive(clap::Args)]
pub struct ImportArgs {
    /// The matrix: numpy .npy (2-D float64/float32), a JSON array of rows, or a CSV of
    /// numbers; one row per input of the space.
    #[arg(long)]
    matrix: String,
    /// Space: `builtin:NAME`, a CSV (lat,lon or numeric columns, optional label) or GeoJSON
    /// file of points, a JSON metric object, or an mdp/1 file.
    #[arg(long)]
    space: String,
    /// Privacy level ε > 0 claimed for the matrix.
    #[arg(long)]
    epsilon: String,
    /// SPACE's distances already include ε: SPACE is the metric d′ = ε·d that was given to
    /// libqif (libqif's functions take ε inside the metric), not your plain points; the file
    /// then states ε with the plain metric d′/ε. Not needed just because the matrix came
    /// from libqif.
    #[arg(long)]
    eps_in_metric: bool,
    /// The columns are the inputs, in order (square matrix; losses are distances).
    /// Otherwise the outputs are opaque labels and no loss is reported.
    #[arg(long)]
    outputs_are_inputs: bool,
    /// Where to write the mdp/1 file (only if it passes the audit; `-` for standard output).
    #[arg(short, long)]
    output: String,
    /// Write a large-mechanism container (OUTPUT the header, the matrix copied beside it as
    /// .npy) proven by the structured audit, for a float64 .npy matrix at city scale.
    #[arg(long, conflicts_with = "eps_in_metric")]
    container: bool,
    /// With --container: refuse before reading the matrix when its audit would need more
    /// (bytes, or with a K, M, G suffix).
    #[arg(long, default_value = "8G", value_parser = crate::cli::memory_value)]
    max_memory: u64,
}

#[derive(clap::Args)]
pub struct RepairArgs {
    /// An mdp/1 file to repair (its space, outputs, scope and loss data are kept).
    #[arg(required_unless_present = "matrix", conflicts_with_all = ["matrix", "space", "eps_in_metric", "outputs_are_inputs"])]
    mechanism: Option<String>,
    /// Or a matrix file (.npy, .json array of rows, .csv), with --space and --epsilon.
    #[arg(long)]
    matrix: Option<String>,
    /// The space of --matrix (as for `mdp import`).
    #[arg(long)]
    space: Option<String>,
    /// Privacy level ε > 0 to certify (default for an mdp/1 file: its own ε).
    #[arg(long)]
    epsilon: Option<String>,
    /// With --matrix: the space's distances already include ε (as for `mdp import`).
    #[arg(long)]
    eps_in_metric: bool,
    /// With --matrix: the columns are the inputs, in order (as for `mdp import`).
    #[arg(long)]
    outputs_are_inputs: bool,
    /// Where to write the repaired mdp/1 file (only if it passes the audit; `-` for
    /// standard output).
    #[arg(short, long, default_value = "-")]
    output: String,
    /// Largest accepted |row sum − 1|, −(smallest entry) and probability mass moved in a
    /// row: beyond it the matrix is refused (not a rounding-level repair).
    #[arg(long, default_value = "1e-3")]
    tolerance: f64,
}

fn producer_meta(fields: Value) -> Value {
    mdp::produce::producer_meta(fields, &Value::Null)
}

/// `mdp import --container`: a float64 `.npy` at city scale as a proven container.
fn import_container(a: &ImportArgs) -> Result<i32, String> {
    if a.output == "-" {
        return Err("--output: a container is two files: give the header's file name".into());
    }
    let eps = epsilon(&a.epsilon)?;
    let (geometry, labels) =
        mdp::import::load_geometry(&a.space, crate::label_column(), &Limits::default())
            .map_err(|e| format!("--space: {e}"))?;
    let meta = producer_meta(json!({
        "mechanism": "imported",
        "space": a.space,
        "import": {"matrix": a.matrix},
    }));
    let progress = mdp::progress::Console::new(false, 0.0);
    let t = std::time::Instant::now();
    let result = mdp::large::import_npy(
        std::path::Path::new(&a.matrix),
        geometry,
        labels,
        &eps,
        a.outputs_are_inputs,
        std::path::Path::new(&a.output),
        meta,
        a.max_memory,
        &progress,
    );
    crate::write_container(
        result,
        &a.output,
        "the imported mechanism did not pass the audit",
        t.elapsed().as_secs_f64(),
    )
}

/// `mdp import`.
pub fn import(a: &ImportArgs) -> Result<i32, String> {
    if a.container {
        return import_container(a);
    }
    let limits = Limits::default();
    let eps = epsilon(&a.epsilon)?;
    let space = mdp::import::load_space(&a.space, crate::label_column(), &limits)
        .map_err(|e| e.to_string())?;
    let opts = ImportOptions {
        epsilon: eps,
        eps_in_metric: a.eps_in_metric,
        outputs_are_inputs: a.outputs_are_inputs,
    };
    let meta = producer_meta(json!({
        "mechanism": "imported",
        "space": a.space,
        "import": {"matrix": a.matrix, "eps_in_metric": a.eps_in_metric},
    }));
    let doc = import::import_matrix(&a.matrix, &space, &opts, meta, &limits)
        .map_err(|e| e.to_string())?;
    let report = emit(doc, &a.output)?;
    if report.verdict == Verdict::Pass {
        eprintln!(
            "import: {}: pass (n = {}, K = {}, ε = {}); wrote {}",
            a.matrix, report.n, report.k, report.epsilon_claimed, a.output
        );
        if a.eps_in_metric {
            eprintln!(
                "import: --eps-in-metric: {} was read as libqif's metric ε·d, so the file states ε = {} on its distances divided by {}; if {} holds your plain points, drop the flag",
                a.space, a.epsilon, a.epsilon, a.space
            );
        }
        return Ok(0);
    }
    eprint!(
        "mdp: the imported mechanism did not pass the audit; nothing written\n{}",
        audit::human(&report)
    );
    // The other reading of --eps-in-metric claims ε·d on SPACE (flag dropped) or 1·d on
    // SPACE (flag added): the hint says which, since 1·d is the claim meant only when
    // SPACE's distances already include ε.
    if a.matrix != "-" && import::passes_with_other_reading(&a.matrix, &space, &opts, &limits) {
        if a.eps_in_metric {
            eprintln!(
                "hint: it passes without --eps-in-metric, as ε·d with ε = {} on {} as given: the flag is only for a SPACE whose distances already include ε (the metric given to libqif), not for a matrix that came from libqif",
                a.epsilon, a.space
            );
        } else {
            eprintln!(
                "hint: it passes with --eps-in-metric, which claims only loss ≤ 1·d on {} (d as given); that is the claim meant only if {}'s distances already include ε (the metric given to libqif)",
                a.space, a.space
            );
        }
    }
    eprintln!(
        "hint: if the matrix is private up to rounding, `mdp repair --matrix {} --space {} --epsilon {}{} -o OUT` makes it certified",
        a.matrix,
        a.space,
        a.epsilon,
        if a.eps_in_metric { " --eps-in-metric" } else { "" }
    );
    Ok(report.verdict.exit_code())
}

/// `mdp repair`.
pub fn repair(a: &RepairArgs) -> Result<i32, String> {
    let limits = Limits::default();
    let opts = RepairOptions {
        tolerance: a.tolerance,
        max_prec: MAX_PREC,
    };
    if !(a.tolerance.is_finite() && a.tolerance > 0.0) {
        return Err("--tolerance: must be a finite number > 0".into());
    }
    // The document to write (matrix replaced), the parts of the claim, and the raw matrix.
    let prepared = match (&a.mechanism, &a.matrix) {
        (Some(path), _) => {
            let bytes = io::read_source(path, &limits).map_err(|e| e.to_string())?;
            let v = io::parse_json(&bytes).map_err(|e| e.to_string())?;
            let eps = a.epsilon.as_deref().map(epsilon).transpose()?;
            ToRepair::from_document(v, eps.as_ref(), &limits).map_err(|e| e.to_string())?
        }
        (None, Some(mpath)) => {
            let space_spec = a
                .space
                .as_deref()
                .ok_or("--space: required with --matrix")?;
            let eps = epsilon(
                a.epsilon
                    .as_deref()
                    .ok_or("--epsilon: required with --matrix")?,
            )?;
            let space = mdp::import::load_space(space_spec, crate::label_column(), &limits)
                .map_err(|e| e.to_string())?;
            let raw = import::read_matrix(mpath, &limits, &import::any_entry)
                .map_err(|e| e.to_string())?;
            let meta = producer_meta(json!({
                "mechanism": "imported",
                "space": space_spec,
                "import": {"matrix": mpath, "eps_in_metric": a.eps_in_metric},
            }));
            let iopts = ImportOptions {
                epsilon: eps,
                eps_in_metric: a.eps_in_metric,
                outputs_are_inputs: a.outputs_are_inputs,
            };
            ToRepair::from_matrix(raw, &space, &iopts, meta, mpath, &limits)
                .map_err(|e| e.to_string())?
        }
        (None, None) => return Err("give an mdp/1 file or --matrix FILE".into()),
    };
    let rep = match import::repair_external(&prepared.external(), &opts) {
        Ok(r) => r,
        Err(e @ RepairError::TooFar { .. }) => {
            eprintln!("mdp: {e}; build a private mechanism instead (mdp build …)");
            return Ok(e.exit_code());
        }
        Err(RepairError::Failed) => {
            eprintln!("mdp: {}", RepairError::Failed);
            return Ok(EXIT_SOLVER);
        }
        Err(e) => return Err(e.to_string()),
    };
    let (space, has_cost) = (prepared.file.space.clone(), prepared.file.cost.is_some());
    let doc = prepared.repaired_document(&rep, a.tolerance);
    let report = emit(doc, &a.output)?;
    let unit = if has_cost {
        ""
    } else {
        import::distance_unit(&space)
    };
    let loss = |l: Option<[f64; 2]>| match l {
        Some([lo, hi]) => format!("{:.9} {unit}", 0.5 * lo + 0.5 * hi)
            .trim_end()
            .to_string(),
        None => "n/a".into(),
    };
    let delta = match (rep.loss_before, rep.loss_after) {
        (Some(b), Some(c)) => {
            format!(" ({:+.3e} {unit})", (c[0] + c[1] - b[0] - b[1]) / 2.0).replace(" )", ")")
        }
        _ => String::new(),
    };
    eprintln!(
        "repair: t = {:.3e} (uniform mix), max row change {:.3e}, max |row sum − 1| {:.3e}; loss L(M) {} before, {} after{delta}; audit {}",
        rep.t,
        rep.change,
        rep.max_row_deviation,
        loss(rep.loss_before),
        loss(rep.loss_after),
        match report.verdict {
            Verdict::Pass => "pass",
            Verdict::Fail => "FAIL",
            Verdict::Inconclusive => "inconclusive",
        }
    );
    if report.verdict != Verdict::Pass {
        eprint!(
            "mdp: the repaired mechanism did not pass its audit; nothing written\n{}",
            audit::human(&report)
        );
    }
    Ok(report.verdict.exit_code())
}
