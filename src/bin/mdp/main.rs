//! `mdp`: build mechanisms as `mdp/1` files and run the embedded demo.
//!
//! * `mdp demo`: the exponential mechanism on the embedded default space, written to
//!   `mech.json` and audited (the README's main command);
//! * `mdp build exponential --space SPACE --epsilon E [--weights FILE] -o OUT`: the
//!   exponential / weighted exponential mechanism (Imola et al. Proposition 1).
//!
//! The binary only parses flags (their definitions and help: `cli.rs`) into the library's
//! settings types and dispatches: every mechanism is built, packaged and certified by
//! [`mdp::produce`]; errors become exit codes in one place ([`produce_exit`]).
//!
//! Exit codes: 0 success, 1 the produced mechanism failed its own audit, 2 input error,
//! 4 the solver or the exact repair failed.

use mdp::audit::{self, EXIT_INPUT};
use mdp::bounds::PackingCandidates;
use mdp::certified::{Certified, CertifyError};
use mdp::exact::{parse_rational, Q};
use mdp::io::{self, Limits};
use mdp::lp::mps;
use mdp::mechanisms::{constopt, optimal, spanner};
use mdp::metric::Space;
use mdp::outputs::OutputChoice;
use mdp::produce::{
    self, BendersMech, ConstOptMech, ExpMech, Family, GeometricMech, OptMech,
    PlanarGeometricGridMech, PlanarLaplaceGridMech, PmoMech, ProduceError, RandomizedResponseMech,
    Request, SpannerMech, TemMech,
};
use mdp::progress::{Console, Silent};
use serde_json::{json, Value};

mod cli;
mod suite;
mod tools;
mod user;

use cli::*;

fn fail(msg: impl std::fmt::Display) -> String {
    msg.to_string()
}

/// ε from the command line ([`produce::epsilon`]'s range).
pub(crate) fn epsilon(s: &str) -> Result<Q, String> {
    produce::epsilon(s).map_err(|e| flag_error(&e))
}

/// `--weights FILE`: a JSON array of numbers (checked against the space by `produce`).
fn weights(path: &str) -> Result<Vec<Q>, String> {
    q_array(&json_file(path, "--weights")?, "--weights")
}

/// Certify a produced document ([`Certified::certify`]) and write it only if it passes.
/// Returns the audit report (a failing one is returned, not written).
pub(crate) fn emit(doc: serde_json::Value, output: &str) -> Result<audit::Report, String> {
    match Certified::certify(&doc, &Console::new(false, 2.0)) {
        Ok(c) => {
            write_certified(&c, output)?;
            Ok(c.report().clone())
        }
        Err(CertifyError::NotPrivate(report)) => Ok(*report),
        Err(e) => Err(certify_error(&e)),
    }
}

/// Gate then load a `--mechanism` file for sampling ([`mdp::privatize::load_gated`]): the
/// file, or the exit code after the refusal (`mdp: PATH REFUSAL` and the report) is printed.
pub(crate) fn gated(
    path: &str,
    policy: &audit::Options,
    refusal: &str,
) -> Result<Result<io::MechanismFile, i32>, String> {
    let loaded = mdp::privatize::load_gated(path, policy, &Console::new(false, 2.0));
    gate_outcome(path, refusal, loaded.map(|g| g.file))
}

/// A gate's outcome as the commands report it: the loaded value; a read error naming
/// `--mechanism`; an invalid file in one line; or the refusal (`mdp: PATH REFUSAL` and the
/// report printed, exit 1).
pub(crate) fn gate_outcome<T>(
    path: &str,
    refusal: &str,
    loaded: Result<T, mdp::privatize::GateError>,
) -> Result<Result<T, i32>, String> {
    use mdp::privatize::GateError;
    match loaded {
        Ok(g) => Ok(Ok(g)),
        Err(GateError::Read(e)) => Err(format!("--mechanism: {e}")),
        Err(GateError::Invalid(e)) => Err(e.to_string()),
        Err(GateError::NotPrivate(report)) => {
            eprint!("mdp: {path} {refusal}\n{}", audit::human(&report));
            Ok(Err(audit::EXIT_FAIL))
        }
    }
}

/// Write a certified mechanism to `output` (`-`: standard output, never a terminal).
pub(crate) fn write_certified(c: &Certified, output: &str) -> Result<(), String> {
    if output == "-" {
        use std::io::IsTerminal;
        if std::io::stdout().is_terminal() {
            // A matrix of n² exact numbers is not for reading: ask for a file or a pipe.
            return Err("--output: not writing the mechanism to a terminal; give -o FILE (or pipe standard output)".into());
        }
    }
    write_output(output, |w| c.write_to(w))
}

/// The one place where the library's errors become messages and exit codes: an invalid
/// parameter names its flag (exit 2), a solver failure exits [`EXIT_SOLVER`], a mechanism
/// that fails its own audit prints the report and exits 1 (nothing is written).
fn produce_exit(e: ProduceError) -> Result<i32, String> {
    match e {
        ProduceError::Invalid { .. } | ProduceError::LpMemory(_) => Err(flag_error(&e)),
        ProduceError::Build(mdp::lp::BuildError::Lp {
            err: err @ mdp::lp::LpError::OverMemory { .. },
            ..
        }) => Err(format!(
            "--max-memory: {err}; use a smaller --within, fewer outputs (--outputs), or raise --max-memory"
        )),
        ProduceError::Build(e) => {
            eprintln!("mdp: {}", build_error(&e));
            Ok(EXIT_SOLVER)
        }
        ProduceError::Certify(CertifyError::NotPrivate(report)) => {
            eprint!(
                "mdp: the mechanism did not pass its own audit; nothing written\n{}",
                audit::human(&report)
            );
            Ok(audit::EXIT_FAIL)
        }
        ProduceError::Certify(e) => Err(certify_error(&e)),
    }
}

/// A build failure as the command line says it: the library's message, and the flag
/// that changes the outcome where there is one.
fn build_error(e: &mdp::lp::BuildError) -> String {
    use mdp::lp::BuildError;
    match e {
        BuildError::NoIncumbent { .. } => format!("{e} (raise --max-iter)"),
        e => e.to_string(),
    }
}

/// A parameter error as the command line names it: `--field: message`.
pub(crate) fn flag_error(e: &ProduceError) -> String {
    match e {
        ProduceError::Invalid { field, message } => format!("--{field}: {message}"),
        ProduceError::LpMemory(m) => format!(
            "--max-memory: {}",
            m.message("--solver block", "--max-memory")
        ),
        other => other.to_string(),
    }
}

fn certify_error(e: &CertifyError) -> String {
    match e {
        CertifyError::Audit(e) => e.to_string(),
        e => format!("--output: {e}; nothing written"),
    }
}

/// Load the space of an LP mechanism; LP mechanisms need a metric (exit 2 otherwise).
pub(crate) fn lp_space(spec: &str) -> Result<mdp::metric::Space, String> {
    lp_space_within(spec, &Limits::default())
}

/// [`lp_space`] under the limits of `--max-entries` (`mdp build`, `mdp lp export`).
fn lp_space_within(spec: &str, limits: &Limits) -> Result<mdp::metric::Space, String> {
    require_metric(mdp::import::load_space(spec, label_column(), limits).map_err(fail)?)
}

/// A loaded space that LP mechanisms and samplers accept: a metric (exit 2 otherwise).
pub(crate) fn require_metric(space: mdp::metric::Space) -> Result<mdp::metric::Space, String> {
    produce::require_metric(space).map_err(|e| flag_error(&e))
}

pub(crate) fn json_file(path: &str, flag: &str) -> Result<serde_json::Value, String> {
    let bytes = io::read_source(path, &Limits::default()).map_err(|e| format!("{flag}: {e}"))?;
    io::parse_json(&bytes).map_err(|e| format!("{flag}: {e}"))
}

pub(crate) fn q_array(v: &serde_json::Value, flag: &str) -> Result<Vec<Q>, String> {
    let a = v
        .as_array()
        .ok_or(format!("{flag}: expected a JSON array"))?;
    a.iter()
        .enumerate()
        .map(|(i, x)| io::number(x, &format!("{flag}[{i}]")).map_err(fail))
        .collect()
}

/// The PMO parameters from the command line.
/// `--outputs FILE | spread:K`: a JSON array of input indices (checked against the space
/// by `produce`), or K inputs spread by the farthest-first traversal
/// ([`mdp::outputs::OutputChoice`]); with what the file's `meta` states of the choice.
fn outputs_arg(arg: Option<&str>, space: &Space) -> Result<(Option<Vec<usize>>, Value), String> {
    let Some(arg) = arg else {
        return Ok((None, Value::Null));
    };
    if let Some(rule) = OutputChoice::parse_rule(arg) {
        let rule = rule.map_err(|e| format!("--outputs: {e}"))?;
        let outputs = rule.resolve(space).map_err(|e| format!("--outputs: {e}"))?;
        return Ok((Some(outputs), json!({"outputs": rule.meta()})));
    }
    let v = json_file(arg, "--outputs")?;
    let arr = v
        .as_array()
        .ok_or("--outputs: expected a JSON array of indices, or spread:K")?;
    let outputs = arr
        .iter()
        .enumerate()
        .map(|(i, x)| {
            x.as_u64()
                .and_then(|u| usize::try_from(u).ok())
                .ok_or(format!("--outputs[{i}]: expected an input index"))
        })
        .collect::<Result<_, _>>()?;
    Ok((Some(outputs), Value::Null))
}

/// PMO's parameters from its flags on `space` (`--outputs spread:K` is resolved on it),
/// and what the file's `meta` states of the outputs' choice.
fn pmo_params(a: &PmoArgs, space: &Space) -> Result<(produce::Pmo, Value), String> {
    let within = a
        .within
        .as_deref()
        .map(|w| parse_rational(w).map_err(|e| format!("--within: {e}")))
        .transpose()?;
    let prior = a
        .prior
        .as_deref()
        .map(|p| q_array(&json_file(p, "--prior")?, "--prior"))
        .transpose()?;
    let (outputs, meta) = outputs_arg(a.outputs.as_deref(), space)?;
    let cost = a
        .cost
        .as_deref()
        .map(|p| -> Result<Vec<Q>, String> {
            let v = json_file(p, "--cost")?;
            let rows = v.as_array().ok_or("--cost: expected an n×K JSON array")?;
            let mut out = vec![];
            for (i, r) in rows.iter().enumerate() {
                out.extend(q_array(r, &format!("--cost[{i}]"))?);
            }
            Ok(out)
        })
        .transpose()?;
    Ok((
        produce::Pmo {
            within,
            prior,
            cost,
            outputs,
        },
        meta,
    ))
}

/// ConstOPTMech's replacement function: `--replacement FILE` (I(v) per v) or I_NN,r.
fn replacement_arg(a: &ReplacementArgs) -> Result<produce::ReplacementSpec, String> {
    match &a.replacement {
        Some(path) => {
            let v = json_file(path, "--replacement")?;
            let sets: Vec<Vec<usize>> = serde_json::from_value(v)
                .map_err(|_| "--replacement: expected a JSON array of n arrays of input indices")?;
            Ok(produce::ReplacementSpec::Sets(sets))
        }
        None => Ok(produce::ReplacementSpec::NearestNeighbours { r: a.r }),
    }
}

/// `mdp build FAMILY`: load the space, produce the certified mechanism, write it and print
/// the `stats:` line.
fn build(base: &SpaceEps, family: Family, output: &str, quiet: bool) -> Result<i32, String> {
    build_on(base, |_| Ok((family, Value::Null)), output, quiet)
}

/// [`build`] of the family `family` makes on the loaded space (the outputs' choice needs
/// it), with what it states in the file's `meta`.
fn build_on(
    base: &SpaceEps,
    family: impl FnOnce(&Space) -> Result<(Family, Value), String>,
    output: &str,
    quiet: bool,
) -> Result<i32, String> {
    let eps = epsilon(&base.epsilon)?;
    let (space, labels) =
        mdp::import::load_space_with_labels(&base.space, label_column(), &base.limits())
            .map_err(fail)?;
    let space = require_metric(space)?;
    let (family, meta) = family(&space)?;
    let req = Request {
        max_memory: base.max_memory,
        labels: labels.as_deref(),
        meta,
        ..Request::new(&space, &base.space, eps)
    };
    match produce::produce(&req, &family, &Console::new(quiet, 0.0)) {
        Ok(p) => {
            write_certified(&p.certified, output)?;
            eprintln!("stats: {}", p.summary);
            Ok(0)
        }
        Err(e) => produce_exit(e),
    }
}

/// A container's space and labels, when the build writes a container: on request
/// (`forced`), or when the space has more than --max-entries n² pairs (the JSON form would
/// be refused). `None`: the JSON form (its build reads the space itself).
fn container_space(
    base: &SpaceEps,
    forced: bool,
) -> Result<Option<(mdp::io::container::Geometry, Option<Vec<String>>)>, String> {
    if !forced && base.space.starts_with("builtin:") {
        return Ok(None);
    }
    let (g, labels) =
        mdp::import::load_geometry(&base.space, label_column(), &base.limits()).map_err(fail)?;
    let n = g.n() as u64;
    Ok((forced || n.saturating_mul(n) > base.max_entries).then_some((g, labels)))
}

/// The families `build_container` writes.
enum Large<'a> {
    Exponential(Option<&'a [Q]>),
    Tem(&'a produce::Truncation),
}

/// `mdp build exponential|tem --container`: build in float64, prove with the structured
/// audit, write the header to `output` and the matrix beside it.
fn build_container(
    base: &SpaceEps,
    (geometry, labels): (mdp::io::container::Geometry, Option<Vec<String>>),
    family: Large,
    output: &str,
    quiet: bool,
) -> Result<i32, String> {
    if output == "-" {
        return Err("--output: a container is two files: give the header's file name".into());
    }
    let eps = epsilon(&base.epsilon)?;
    mdp::large::check(&geometry, &eps, base.max_memory).map_err(|e| format!("--{e}"))?;
    let progress = Console::new(quiet, 0.0);
    let t = std::time::Instant::now();
    let (weights, gamma, name) = match family {
        Large::Exponential(w) => (
            w,
            None,
            if w.is_some() {
                "weighted_exponential"
            } else {
                "exponential"
            },
        ),
        Large::Tem(t) => (
            None,
            Some(produce::tem_gamma_for(geometry.n(), &eps, t).map_err(|e| format!("--{e}"))?),
            "tem",
        ),
    };
    let matrix = mdp::large::exponential(&geometry, &eps, weights, gamma.as_ref(), &progress)
        .map_err(|e| format!("--{e}"))?;
    let built = t.elapsed().as_secs_f64();
    let meta = produce::producer_meta(
        json!({"mechanism": name, "space": base.space}),
        &gamma.as_ref().map_or(
            json!({}),
            |g| json!({"tem": {"gamma": mdp::io::number_value(g)}}),
        ),
    );
    certify_container(
        geometry, labels, matrix, &eps, output, meta, built, &progress,
    )
}

/// `mdp build pmo --container`: PMO on a graph read as its edges (no n×n table), solved
/// localized, proven (structured audit, exact `lp_dual` check) and written as a container.
fn build_pmo_container(
    base: &SpaceEps,
    (geometry, labels): (mdp::io::container::Geometry, Option<Vec<String>>),
    args: &PmoArgs,
    gap: Option<f64>,
    output: &str,
    quiet: bool,
) -> Result<i32, String> {
    if output == "-" {
        return Err("--output: a container is two files: give the header's file name".into());
    }
    let mdp::io::container::Geometry::Graph(graph) = &geometry else {
        return Err("--container: PMO as a container needs a graph metric (a road network); a coordinate space is built in the JSON form".into());
    };
    if args.cost.is_some() {
        return Err("--cost: a container's costs are the distances to the outputs (explicit costs need the JSON form)".into());
    }
    let eps = epsilon(&base.epsilon)?;
    let space = graph.space();
    let (pmo, meta) = pmo_params(args, &space)?;
    let progress = Console::new(quiet, 0.0);
    let t = std::time::Instant::now();
    let lp = optimal::pmo_lp(&space, &eps, &pmo.params(), produce::MAX_PREC)
        .map_err(|e| format!("--{e}"))?;
    let meta = produce::producer_meta(
        json!({"mechanism": "pmo", "paper": "PMO (Qiu 2024 eq. 3), localized (spec/lp.md §4.9)", "space": base.space}),
        &meta,
    );
    let header = std::path::Path::new(output);
    let result = mdp::large::pmo::build(
        geometry.clone(),
        labels,
        &lp,
        pmo.within.as_ref(),
        pmo.prior.as_deref(),
        gap,
        base.max_memory,
        header,
        meta,
        &progress,
    );
    let built = t.elapsed().as_secs_f64();
    let result = result.map(|(m, stats)| {
        eprintln!(
            "stats: pmo lp {:.1} s, proof {:.1} s, audit {:.1} s; {} privacy rows held; mix t = {:.1e}; expected loss ≤ {}, certified lower bound {}",
            stats.seconds_lp,
            stats.seconds_proof,
            stats.seconds_audit,
            stats.rows,
            stats.t,
            stats.expected_loss.map_or("?".into(), |x| format!("{x:.12e}")),
            stats.lower_bound.map_or("none".into(), |x| format!("{x:.12e}")),
        );
        m
    });
    write_container(
        result,
        output,
        "the mechanism did not pass its own audit",
        built,
    )
}

/// Prove a float64 matrix by the structured audit at ε, write it as a container at
/// `output` (the header; the `.npy` beside it) and print the stats line; a matrix that
/// does not pass prints its report and exits 1 with nothing written.
#[allow(clippy::too_many_arguments)]
fn certify_container(
    geometry: mdp::io::container::Geometry,
    labels: Option<Vec<String>>,
    matrix: mdp::dense::Dense,
    eps: &Q,
    output: &str,
    meta: serde_json::Value,
    built: f64,
    progress: &Console,
) -> Result<i32, String> {
    let header = std::path::Path::new(output);
    write_container(
        mdp::large::certify(geometry, labels, matrix, eps, header, meta, progress),
        output,
        "the mechanism did not pass its own audit",
        built,
    )
}

/// Write a proven container at `output` and print its stats line; one that did not pass
/// prints `mdp: REFUSAL; nothing written` and its report (exit 1).
pub(crate) fn write_container(
    result: Result<mdp::large::LargeMechanism, mdp::large::LargeError>,
    output: &str,
    refusal: &str,
    built: f64,
) -> Result<i32, String> {
    use mdp::large::LargeError;
    let m = match result {
        Ok(m) => m,
        Err(LargeError::NotCertified(report)) => {
            eprint!("mdp: {refusal}; nothing written\n{}", audit::human(&report));
            return Ok(audit::EXIT_FAIL);
        }
        Err(e @ LargeError::Invalid { .. }) => return Err(format!("--{e}")),
        Err(e) => return Err(e.to_string()),
    };
    m.write(std::path::Path::new(output))
        .map_err(|e| e.to_string())?;
    let tight = m.report.epsilon_tight;
    eprintln!(
        "stats: container {} + {} ({} × {}), built in {built:.1} s, certified in {:.1} s (tight ε ≤ {}), structured audit settled {:.2} % of triples by box pairs",
        output,
        m.container.npy.display(),
        m.container.matrix.rows,
        m.container.matrix.cols,
        m.report.stats.seconds_total,
        tight[1].map_or("∞".into(), |x| x.to_string()),
        m.report.stats.structured.as_ref().map_or(0.0, |s| 100.0 * s.settled_fraction),
    );
    Ok(0)
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
        let line = match cands.best(&space, &outputs, ef, produce::MAX_PREC) {
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
        } => demo(&space, &e, &output),
        Cmd::Build { mechanism } => match mechanism {
            Mechanism::Exponential {
                base,
                weights: w,
                output,
                container,
                quiet,
            } => {
                let weights = w.as_deref().map(weights).transpose()?;
                if let Some(space) = container_space(&base, container)? {
                    return build_container(
                        &base,
                        space,
                        Large::Exponential(weights.as_deref()),
                        &output,
                        quiet,
                    );
                }
                build(
                    &base,
                    Family::Exponential(ExpMech { weights }),
                    &output,
                    quiet,
                )
            }
            Mechanism::Optimal {
                base,
                outputs,
                output,
                quiet,
                solver,
            } => build_on(
                &base,
                |space| {
                    let (outputs, meta) = outputs_arg(outputs.as_deref(), space)?;
                    let solver = solver.into();
                    Ok((Family::Optimal(OptMech { solver, outputs }), meta))
                },
                &output,
                quiet,
            ),
            Mechanism::Pmo {
                base,
                pmo,
                output,
                quiet,
                solver,
                gap,
                container,
            } => {
                // Chosen by itself past --max-entries on a graph only: a coordinate space has
                // no table to avoid and keeps the JSON form.
                let graph = |(g, _): &(mdp::io::container::Geometry, _)| {
                    container || matches!(g, mdp::io::container::Geometry::Graph(_))
                };
                if let Some(space) = container_space(&base, container)?.filter(graph) {
                    return build_pmo_container(&base, space, &pmo, gap, &output, quiet);
                }
                let family = |space: &Space| {
                    let (pmo, meta) = pmo_params(&pmo, space)?;
                    let solver = solver.into();
                    Ok((Family::Pmo(PmoMech { pmo, solver, gap }), meta))
                };
                build_on(&base, family, &output, quiet)
            }
            Mechanism::Benders {
                base,
                pmo,
                partitions,
                partitioning,
                master,
                gap,
                max_iter,
                seed,
                stabilize,
                no_chains,
                copies,
                output,
                quiet,
            } => {
                let options = mdp::benders::Options {
                    partitions,
                    method: mdp::benders::partition::Method::from_name(&partitioning)
                        .expect("clap checked"),
                    master: mdp::benders::partition::MasterSet::from_name(&master)
                        .expect("clap checked"),
                    gap,
                    max_iter,
                    seed,
                    stabilize,
                    chains: !no_chains,
                    copies,
                    ..Default::default()
                };
                let family = |space: &Space| {
                    let (pmo, meta) = pmo_params(&pmo, space)?;
                    Ok((Family::Benders(BendersMech { pmo, options }), meta))
                };
                build_on(&base, family, &output, quiet)
            }
            Mechanism::Spanner {
                base,
                k,
                output,
                quiet,
                solver,
            } => {
                let family = Family::Spanner(SpannerMech {
                    k,
                    solver: solver.into(),
                });
                build(&base, family, &output, quiet)
            }
            Mechanism::Constopt {
                base,
                repl,
                lambda,
                solver,
                output,
                quiet,
            } => {
                let family = Family::Constopt(ConstOptMech {
                    replacement: replacement_arg(&repl)?,
                    lambdas: lambda,
                    solver: solver.into(),
                });
                build(&base, family, &output, quiet)
            }
            Mechanism::ClusteredRr {
                clustered: user::ClusteredArgs { clusters, size, r },
                epsilon: eps,
                output,
                max_memory,
                quiet,
            } => {
                let eps = epsilon(&eps)?;
                let r = parse_rational(&r).map_err(|e| format!("--r: {e}"))?;
                let t = std::time::Instant::now();
                let (geometry, labels, matrix) =
                    mdp::large::clustered_randomizer(clusters, size, &r, &eps, max_memory)
                        .map_err(|e| format!("--{e}"))?;
                let meta = produce::producer_meta(
                    json!({"mechanism": "clustered k-RR (Imola et al. 2024, Algorithm 4)",
                           "clusters": clusters, "size": size, "r": mdp::io::number_value(&r)}),
                    &json!({}),
                );
                if output == "-" {
                    return Err(
                        "--output: a container is two files: give the header's file name".into(),
                    );
                }
                let built = t.elapsed().as_secs_f64();
                certify_container(
                    geometry,
                    Some(labels),
                    matrix,
                    &eps,
                    &output,
                    meta,
                    built,
                    &Console::new(quiet, 0.0),
                )
            }
            Mechanism::Tem {
                base,
                beta,
                gamma,
                output,
                container,
                quiet,
            } => {
                let truncation = match gamma {
                    Some(g) => produce::Truncation::Gamma(
                        parse_rational(&g).map_err(|e| format!("--gamma: {e}"))?,
                    ),
                    None => produce::Truncation::Beta(beta),
                };
                if let Some(space) = container_space(&base, container)? {
                    return build_container(&base, space, Large::Tem(&truncation), &output, quiet);
                }
                build(&base, Family::Tem(TemMech { truncation }), &output, quiet)
            }
            Mechanism::Geometric {
                base,
                output,
                quiet,
            } => build(&base, Family::Geometric(GeometricMech), &output, quiet),
            Mechanism::RandomizedResponse {
                base,
                output,
                quiet,
            } => build(
                &base,
                Family::RandomizedResponse(RandomizedResponseMech),
                &output,
                quiet,
            ),
            Mechanism::PlanarLaplace {
                base,
                output,
                quiet,
            } => build(
                &base,
                Family::PlanarLaplaceGrid(PlanarLaplaceGridMech),
                &output,
                quiet,
            ),
            Mechanism::PlanarGeometric {
                base,
                output,
                quiet,
            } => build(
                &base,
                Family::PlanarGeometricGrid(PlanarGeometricGridMech),
                &output,
                quiet,
            ),
        },
        Cmd::Bound {
            kind: BoundKind::Packing { space, epsilon },
        } => bound_packing(&space, &epsilon),
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
        Cmd::Prior(a) => suite::prior(&a),
        Cmd::Measure(a) => suite::measure(&a),
        Cmd::Remap(a) => suite::remap(&a),
        Cmd::Calibrate(a) => suite::calibrate(&a),
        Cmd::Import(a) => tools::import(&a),
        Cmd::Repair(a) => tools::repair(&a),
        Cmd::Plot(a) => suite::plot(&a),
        Cmd::Emd(a) => user::emd_cmd(&a),
        Cmd::Account { kind } => user::account(&kind),
        Cmd::Release { kind } => user::release(&kind),
        Cmd::Experiment { kind } => suite::experiment(&kind),
        Cmd::Lp {
            cmd: LpCmd::Export { problem },
        } => lp_export(problem),
    }
}

/// `mdp demo`: the exponential mechanism on the embedded default space, written and its
/// audit printed.
fn demo(space_spec: &str, e: &str, output: &str) -> Result<i32, String> {
    let eps = epsilon(e)?;
    let (space, labels) =
        mdp::import::load_space_with_labels(space_spec, label_column(), &Limits::default())
            .map_err(fail)?;
    let req = Request {
        labels: labels.as_deref(),
        ..Request::new(&space, space_spec, eps)
    };
    let family = Family::Exponential(ExpMech { weights: None });
    match produce::produce(&req, &family, &Silent) {
        Ok(p) => {
            write_certified(&p.certified, output)?;
            print!("{}", audit::human(p.certified.report()));
            println!(
                "wrote {output}; audit it again with: cargo run --release -p mdp-audit -- {output}"
            );
            Ok(0)
        }
        Err(ProduceError::Certify(CertifyError::NotPrivate(report))) => {
            print!("{}", audit::human(&report));
            Ok(audit::EXIT_FAIL)
        }
        Err(e) => produce_exit(e),
    }
}

/// `mdp lp export`: the LP a family solves, as MPS.
fn lp_export(problem: LpProblem) -> Result<i32, String> {
    let lp_err = |e: mdp::lp::BuildError| produce_exit(e.into());
    match problem {
        LpProblem::Optimal { base, output } => {
            let eps = epsilon(&base.epsilon)?;
            let space = lp_space_within(&base.space, &base.limits())?;
            export(
                &optimal::optimal_lp(&space, &eps, produce::MAX_PREC),
                &output,
            )
        }
        LpProblem::Pmo { base, pmo, output } => {
            let eps = epsilon(&base.epsilon)?;
            let space = lp_space_within(&base.space, &base.limits())?;
            let (pmo, _) = pmo_params(&pmo, &space)?;
            match optimal::pmo_lp(&space, &eps, &pmo.params(), produce::MAX_PREC) {
                Ok(lp) => export(&lp, &output),
                Err(e) => lp_err(e),
            }
        }
        LpProblem::Spanner { base, k, output } => {
            let eps = epsilon(&base.epsilon)?;
            let space = lp_space_within(&base.space, &base.limits())?;
            let k = produce::check_spanner_k(k, space.n()).map_err(|e| flag_error(&e))?;
            let t = 2 * u64::from(k) - 1;
            let (edges, _) = spanner::greedy_spanner(&space, t as f64);
            export(
                &spanner::spanner_lp(&space, &eps, k, &edges, produce::MAX_PREC),
                &output,
            )
        }
        LpProblem::Constopt {
            base,
            repl,
            lambda,
            output,
        } => {
            let eps = epsilon(&base.epsilon)?;
            let space = lp_space_within(&base.space, &base.limits())?;
            let repl = produce::replacement(&space, &replacement_arg(&repl)?)
                .map_err(|e| flag_error(&e))?;
            if !(lambda > 0.0 && lambda.is_finite()) {
                return Err("--lambda: must be a finite number > 0".into());
            }
            let red = constopt::reduced_lp(
                &space,
                &(eps / Q::from(2u32)),
                &repl,
                lambda,
                constopt::Form::Paper,
            );
            write_output(&output, |out| red.lp.write_mps("mdp_constopt", out))?;
            eprintln!(
                "lp export: {} variables, {} rows, {} non-zeros",
                red.lp.n_vars(),
                red.lp.rows.len(),
                red.lp.nnz()
            );
            Ok(0)
        }
    }
}

pub(crate) use produce::MAX_PREC;

/// `--label-column`: a global flag, parsed once, read wherever a `--space` is loaded.
static LABEL_COLUMN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();

/// The `--label-column` given on the command line, if any.
pub(crate) fn label_column() -> Option<&'static str> {
    LABEL_COLUMN.get().and_then(|c| c.as_deref())
}

fn main() {
    mdp::pipe::restore_default_sigpipe();
    mdp::heap::keep_freed_memory();
    let cli = mdp::pipe::parse_or_exit::<Cli>("mdp");
    LABEL_COLUMN.get_or_init(|| cli.label_column.clone());
    let code = match run(cli) {
        Ok(c) => c,
        Err(msg) => {
            eprintln!("mdp: {}", msg.lines().next().unwrap_or(""));
            EXIT_INPUT
        }
    };
    std::process::exit(code);
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `--help` describes every flag of every subcommand (issue 10: smaller frictions).
    #[test]
    fn every_flag_has_help() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>, seen: &mut usize) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if id == "help" || id == "version" || a.is_hide_set() {
                    continue;
                }
                *seen += 1;
                if a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path} --{id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                walk(sub, &format!("{path} {}", sub.get_name()), missing, seen);
            }
        }
        let (mut missing, mut seen) = (vec![], 0);
        walk(&super::Cli::command(), "mdp", &mut missing, &mut seen);
        assert!(seen > 100, "only {seen} flags visited");
        assert!(missing.is_empty(), "flags without help: {missing:#?}");
    }
}
