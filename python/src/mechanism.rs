//! `Mechanism`: a certified mechanism (it passed its own audit) and the families that build
//! one ([`build`], the library's [`mdp::produce::produce`]), or an `mdp/1` file read and
//! audited ([`load`]).

use crate::errors::{Error, Result};
use crate::progress::run;
use crate::space::{check_size, exact_rows, Space};
use mdp::benders::partition::{MasterSet, Method};
use mdp::benders::remote::Subproblems;
use mdp::lp::Solver;
use mdp::privatize::PinError;
use mdp::privatize::{exact_rows as sampling_rows, normalized, rng, ExactRow};
use mdp::produce::{
    produce, BendersMech, ConstOptMech, ExpMech, Family, GeometricMech, OptMech,
    PlanarGeometricGridMech, PlanarLaplaceGridMech, Pmo, PmoMech, RandomizedResponseMech,
    ReplacementSpec, Request, SpannerMech, TemMech, Truncation,
};
use mdp_audit::audit::{self, Options, ScopePolicy, Verdict};
use mdp_audit::certified::Certified;
use mdp_audit::exact::{f64_nearest, format_rational, parse_rational, Q};
use mdp_audit::io::{self, Limits, MechanismFile};
use mdp_audit::mechanism::Outputs;
use mdp_audit::pin::{MetricPin, PinnedSpace};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2};
use pyo3::prelude::*;
use std::sync::Arc;
use std::sync::OnceLock;

/// A mechanism that passed its audit: the `mdp/1` document, the parsed file, the report,
/// and the build's summary (the CLI's `stats:` line; `{}` for a loaded file).
#[pyclass(frozen, module = "metricdp._core")]
pub struct Mechanism {
    pub certified: Certified,
    summary: serde_json::Value,
    /// What is sampled, built on first use ([`Mechanism::sampled`]).
    sampled: OnceLock<Sampled>,
    /// Input label → index.
    index: OnceLock<std::collections::HashMap<String, usize>>,
}

/// The exactly normalized matrix (`None`: the certified matrix's rows already sum to 1)
/// and the exact samplers of its rows.
pub struct Sampled {
    normalized: Option<MechanismFile>,
    rows: Vec<ExactRow>,
}

impl Mechanism {
    pub fn new(certified: Certified, summary: serde_json::Value) -> Mechanism {
        Mechanism {
            certified,
            summary,
            sampled: OnceLock::new(),
            index: OnceLock::new(),
        }
    }

    /// The matrix sampled and its row samplers (call with the GIL released: the first call
    /// sums every row exactly). The auditor proves privacy of H, the matrix with each row
    /// divided by its exact sum (`privacy::Prepared`; spec/soundness.md), so H is what is
    /// sampled: the certified matrix itself when its rows sum to exactly 1, else its exact
    /// normalization, as `mdp privatize` does ([`mdp::privatize::load_gated`]).
    pub fn sampled(&self) -> &Sampled {
        self.sampled.get_or_init(|| {
            let m = self.certified.matrix();
            let norm = normalized(m);
            if norm.data == m.data {
                Sampled {
                    rows: sampling_rows(m),
                    normalized: None,
                }
            } else {
                let mut file = self.certified.file().clone();
                file.matrix = norm;
                Sampled {
                    rows: sampling_rows(&file.matrix),
                    normalized: Some(file),
                }
            }
        })
    }

    /// The file whose matrix is sampled (see [`Mechanism::sampled`]).
    pub fn sampled_file(&self) -> &MechanismFile {
        self.sampled()
            .normalized
            .as_ref()
            .unwrap_or_else(|| self.certified.file())
    }

    fn input_labels(&self) -> Option<&Vec<String>> {
        self.certified.file().labels.as_ref()
    }

    /// The input index of `label`.
    fn input_of(&self, label: &str) -> Option<usize> {
        let labels = self.input_labels()?;
        let index = self.index.get_or_init(|| {
            labels
                .iter()
                .enumerate()
                .map(|(i, l)| (l.clone(), i))
                .collect()
        });
        index.get(label).copied()
    }
}

/// An exact number parameter (`field` names it in errors).
pub fn q(field: &str, s: &str) -> Result<Q> {
    parse_rational(s).map_err(|e| Error::input(field, e.to_string()))
}

fn q_list(field: &str, v: Option<Vec<String>>) -> Result<Option<Vec<Q>>> {
    v.map(|v| {
        v.iter()
            .enumerate()
            .map(|(i, s)| q(&format!("{field}[{i}]"), s))
            .collect()
    })
    .transpose()
}

fn solver(name: &str) -> Result<Solver> {
    match name {
        "auto" => Ok(Solver::Auto),
        "ipm" => Ok(Solver::Ipm),
        "simplex" => Ok(Solver::Simplex),
        "block" => Ok(Solver::Block),
        _ => Err(Error::input(
            "solver",
            format!("{name:?}: expected auto, ipm, simplex or block"),
        )),
    }
}

/// Build and certify a mechanism of `family` on `space` at `epsilon` (an exact decimal or
/// `p/q`). The keyword arguments are the command line's flags (`mdp build FAMILY --help`).
#[pyfunction]
#[pyo3(signature = (space, family, epsilon, *, weights=None, solver="auto", prior=None, cost=None,
    outputs=None, outputs_rule=None, within=None, gap=None, k=2, r=10, replacement=None, lambdas=None, beta=None,
    gamma=None, partitions=None, method="km-rec", master="cover", max_iter=500, seed=0,
    max_memory=None, subproblems=None, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn build(
    py: Python<'_>,
    space: &Space,
    family: &str,
    epsilon: &str,
    weights: Option<Vec<String>>,
    solver: &str,
    prior: Option<Vec<String>>,
    cost: Option<PyReadonlyArray2<'_, f64>>,
    outputs: Option<Vec<usize>>,
    outputs_rule: Option<&str>,
    within: Option<&str>,
    gap: Option<f64>,
    k: u64,
    r: usize,
    replacement: Option<Vec<Vec<usize>>>,
    lambdas: Option<Vec<f64>>,
    beta: Option<f64>,
    gamma: Option<&str>,
    partitions: Option<usize>,
    method: &str,
    master: &str,
    max_iter: usize,
    seed: u64,
    max_memory: Option<u64>,
    subproblems: Option<Py<PyAny>>,
    progress: Option<Py<PyAny>>,
) -> Result<Mechanism> {
    let eps = mdp::produce::epsilon(epsilon)?;
    let solver_choice = self::solver(solver)?;
    // `outputs="spread:K"`: K inputs by the farthest-first traversal, stated in meta.outputs
    // (the CLI's `--outputs spread:K`).
    let (outputs, meta) = match outputs_rule {
        None => (outputs, serde_json::Value::Null),
        Some(text) => {
            let bad = |e: String| Error::input("outputs", e);
            let rule = mdp::outputs::OutputChoice::parse_rule(text)
                .unwrap_or_else(|| {
                    Err(format!(
                        "{text:?}: expected a list of input indices or spread:K"
                    ))
                })
                .map_err(bad)?;
            let resolved = rule.resolve(&space.inner).map_err(bad)?;
            (Some(resolved), serde_json::json!({"outputs": rule.meta()}))
        }
    };
    let pmo = || -> Result<Pmo> {
        let cost = match &cost {
            Some(c) => {
                check_size(c, "cost")?;
                let (rows, cols) = c.as_array().dim();
                let shape = [rows, cols];
                let k = outputs.as_ref().map_or(space.inner.n(), Vec::len);
                if shape != [space.inner.n(), k] {
                    return Err(Error::input(
                        "cost",
                        format!(
                            "is {} × {}, expected n × K = {} × {k}",
                            shape[0],
                            shape[1],
                            space.inner.n()
                        ),
                    ));
                }
                Some(exact_rows(c, "cost")?.concat())
            }
            None => None,
        };
        Ok(Pmo {
            within: within.map(|w| q("within", w)).transpose()?,
            prior: q_list("prior", prior.clone())?,
            cost,
            outputs: outputs.clone(),
        })
    };
    let fam = match family {
        "exponential" => Family::Exponential(ExpMech {
            weights: q_list("weights", weights)?,
        }),
        "geometric" => Family::Geometric(GeometricMech),
        "randomized_response" => Family::RandomizedResponse(RandomizedResponseMech),
        "planar_laplace_grid" => Family::PlanarLaplaceGrid(PlanarLaplaceGridMech),
        "planar_geometric_grid" => Family::PlanarGeometricGrid(PlanarGeometricGridMech),
        "optimal" => Family::Optimal(OptMech {
            solver: solver_choice,
            outputs: outputs.clone(),
        }),
        "pmo" => Family::Pmo(PmoMech {
            pmo: pmo()?,
            solver: solver_choice,
            gap,
        }),
        "benders" => Family::Benders(BendersMech {
            pmo: pmo()?,
            options: mdp::benders::Options {
                partitions,
                method: Method::from_name(method).ok_or_else(|| {
                    Error::input(
                        "method",
                        format!("{method:?}: expected km-rec, km-dv, km-adj or bsc"),
                    )
                })?,
                master: MasterSet::from_name(master).ok_or_else(|| {
                    Error::input("master", format!("{master:?}: expected cover or boundary"))
                })?,
                gap: gap.unwrap_or(1e-6),
                max_iter,
                seed,
                subproblems: match subproblems {
                    None => Subproblems::Here,
                    Some(f) => Subproblems::Elsewhere(Arc::new(crate::remote::PyMap(f))),
                },
                ..Default::default()
            },
        }),
        "spanner" => Family::Spanner(SpannerMech {
            k,
            solver: if solver == "auto" {
                Solver::Ipm
            } else {
                solver_choice
            },
        }),
        "constopt" => Family::Constopt(ConstOptMech {
            replacement: match replacement {
                Some(sets) => ReplacementSpec::Sets(sets),
                None => ReplacementSpec::NearestNeighbours { r },
            },
            lambdas: lambdas.unwrap_or_else(|| vec![0.001, 0.1, 1.0]),
            solver: solver_choice,
        }),
        "tem" => Family::Tem(TemMech {
            truncation: match (gamma, beta) {
                (Some(g), _) => Truncation::Gamma(q("gamma", g)?),
                (None, b) => Truncation::Beta(b.unwrap_or(0.001)),
            },
        }),
        _ => {
            return Err(Error::input(
                "family",
                format!(
                "{family:?}: expected exponential, optimal, pmo, benders, spanner, constopt or tem"
            ),
            ))
        }
    };
    let mut req = Request::new(&space.inner, &space.name, eps);
    req.labels = space.labels.as_deref();
    req.meta = meta;
    if let Some(m) = max_memory {
        req.max_memory = m;
    }
    let produced = run(py, progress, |p| Ok(produce(&req, &fam, p)?))?;
    Ok(Mechanism::new(produced.certified, produced.summary))
}

/// The audit policy of a pipeline: its ε (instead of the file's claim), the scope it
/// accepts (`within`: η it requires at least; `allow_scoped`: any) and the metric
/// ([`metric_pin`]).
pub fn policy(
    epsilon: Option<&str>,
    within: Option<&str>,
    allow_scoped: bool,
    delta: Option<&str>,
    metric: MetricPin,
) -> Result<Options> {
    Ok(Options {
        epsilon: epsilon.map(mdp::produce::epsilon).transpose()?,
        scope: ScopePolicy::from_flags(within.map(|w| q("within", w)).transpose()?, allow_scoped),
        delta: delta.map(|d| q("delta", d)).transpose()?,
        metric,
        ..Options::default()
    })
}

/// The metric a Python gate accepts, as the command line's: `space` (a `Space`, or any form
/// `--space` takes, as a string), else `require_metric_digest`, else the file's own metric.
/// (A CSV's `label_column`: pass `Space.load(path, label_column=...)`.) A gate that samples (`sampling`) takes the file's own only when `trust_file_metric`
/// says so ([`mdp::privatize::sampling_pin`]); an audit reports it with its digest.
pub fn metric_pin(
    space: Option<&Bound<'_, PyAny>>,
    require_metric_digest: Option<&str>,
    trust_file_metric: bool,
    sampling: bool,
) -> Result<MetricPin> {
    if let Some(s) = space {
        if let Ok(sp) = s.cast::<Space>() {
            let sp = sp.get();
            return Ok(MetricPin::Space(Arc::new(PinnedSpace::of_space(
                &sp.name,
                sp.inner.clone(),
                sp.labels.clone(),
            ))));
        }
    }
    let spec: Option<String> = space
        .map(|s| s.extract())
        .transpose()
        .map_err(|_| Error::input("space", "expected a Space or a path"))?;
    let trust = trust_file_metric || !sampling;
    mdp::privatize::sampling_pin(spec.as_deref(), None, require_metric_digest, trust).map_err(|e| {
        match e {
            PinError::Unpinned => Error::input(
                "space",
                e.to_string()
                    .replace("--space SPACE", "space=")
                    .replace("--require-metric-digest HEX", "require_metric_digest=")
                    .replace("--trust-file-metric", "trust_file_metric=True"),
            ),
            PinError::Digest(e) => Error::input("require_metric_digest", e.message),
            PinError::Space(e) => Error::from(e),
        }
    })
}

/// Audit `file` under `opts` and refuse (NotPrivate / Inconclusive, with the report)
/// unless it passes: a gate's check.
pub fn require_pass(
    file: &MechanismFile,
    opts: &Options,
    progress: &dyn mdp_audit::progress::Progress,
) -> Result<()> {
    let report = audit::audit_with(file, opts, progress)?;
    if report.verdict != Verdict::Pass {
        return Err(Error::Audit(Box::new(report)));
    }
    Ok(())
}

/// Read an `mdp/1` file and certify it (its own claim); with a policy (`epsilon`,
/// `within`, `allow_scoped`) it must also pass under that policy.
#[pyfunction]
#[pyo3(signature = (path, *, space=None, require_metric_digest=None, trust_file_metric=false, epsilon=None, within=None, allow_scoped=false, progress=None))]
#[allow(clippy::too_many_arguments)]
pub fn load(
    py: Python<'_>,
    path: &str,
    space: Option<&Bound<'_, PyAny>>,
    require_metric_digest: Option<&str>,
    trust_file_metric: bool,
    epsilon: Option<&str>,
    within: Option<&str>,
    allow_scoped: bool,
    progress: Option<Py<PyAny>>,
) -> Result<Mechanism> {
    let metric = metric_pin(space, require_metric_digest, trust_file_metric, true)?;
    let opts = policy(epsilon, within, allow_scoped, None, metric)?;
    run(py, progress, |p| {
        let limits = Limits::default();
        let bytes = io::read_source(path, &limits)?;
        let doc = io::parse_json(&bytes)?;
        let certified = Certified::certify(&doc, p)?;
        // The pipeline's policy, as `mdp privatize --mechanism` applies it: the metric pinned
        // (or trusted explicitly) and scoped claims refused unless accepted.
        require_pass(certified.file(), &opts, p)?;
        Ok(Mechanism::new(certified, serde_json::json!({})))
    })
}

#[pymethods]
impl Mechanism {
    /// Rows (inputs).
    #[getter]
    fn n(&self) -> usize {
        self.certified.matrix().rows
    }

    /// Columns (outputs).
    #[getter]
    fn k(&self) -> usize {
        self.certified.matrix().cols
    }

    /// The claimed ε, exactly (`p/q` or an integer).
    #[getter]
    fn epsilon(&self) -> String {
        format_rational(&self.certified.file().epsilon)
    }

    /// The claimed scope η (privacy for pairs with d ≤ η), exactly, or None (all pairs).
    #[getter]
    fn within(&self) -> Option<String> {
        self.certified.file().within.as_ref().map(format_rational)
    }

    #[getter]
    fn labels(&self) -> Option<Vec<String>> {
        self.input_labels().cloned()
    }

    /// The outputs' names: input labels (or indices) when the outputs are inputs, the
    /// file's output labels, or coordinates.
    #[getter]
    fn output_labels(&self) -> Vec<String> {
        let f = self.certified.file();
        let input = |i: usize| match &f.labels {
            Some(l) => l[i].clone(),
            None => i.to_string(),
        };
        match &f.outputs {
            Outputs::Inputs => (0..f.matrix.cols).map(input).collect(),
            Outputs::OfInputs(v) => v.iter().map(|&i| input(i)).collect(),
            Outputs::Labels(l) => l.clone(),
            Outputs::Points(p) => p
                .iter()
                .map(|x| {
                    let c: Vec<String> = x.iter().map(|q| format!("{}", f64_nearest(q))).collect();
                    format!("({})", c.join(", "))
                })
                .collect(),
        }
    }

    /// The inputs' points as float64 (n × d), or None (a distance table or graph).
    fn input_points<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        crate::space::points_f64(py, &self.certified.file().space)
    }

    /// The outputs' points as float64 (K × d), or None (opaque outputs, or inputs without
    /// coordinates).
    fn output_points<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        let f = self.certified.file();
        let Some(inputs) = crate::space::points_f64(py, &f.space)? else {
            return Ok(None);
        };
        let pick = |rows: Vec<Vec<f64>>| -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
            let d = rows.first().map_or(0, Vec::len);
            let k = rows.len();
            Ok(Some(PyArray1::from_vec(py, rows.concat()).reshape([k, d])?))
        };
        match &f.outputs {
            Outputs::Inputs => Ok(Some(inputs)),
            Outputs::OfInputs(v) => {
                let all = inputs.readonly();
                let a = all.as_array();
                pick(v.iter().map(|&i| a.row(i).to_vec()).collect())
            }
            Outputs::Points(p) => pick(
                p.iter()
                    .map(|x| x.iter().map(f64_nearest).collect())
                    .collect(),
            ),
            Outputs::Labels(_) => Ok(None),
        }
    }

    /// The matrix as float64 (each entry the nearest double to the exact one).
    fn matrix_f64<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let m = self.certified.matrix();
        let data: Vec<f64> = py.detach(|| m.data.iter().map(f64_nearest).collect());
        PyArray1::from_vec(py, data).reshape([m.rows, m.cols])
    }

    /// Entry (i, j) exactly, as `p/q` text.
    fn exact(&self, i: usize, j: usize) -> Result<String> {
        let m = self.certified.matrix();
        if i >= m.rows || j >= m.cols {
            return Err(Error::input(
                "index",
                format!("({i}, {j}) out of range for {} × {}", m.rows, m.cols),
            ));
        }
        Ok(format_rational(&m.data[i * m.cols + j]))
    }

    /// The audit report (JSON text, `mdp-audit --json`'s).
    fn report_json(&self) -> String {
        audit::json(self.certified.report())
    }

    /// The audit report as `mdp-audit` prints it.
    fn report_text(&self) -> String {
        audit::human(self.certified.report())
    }

    /// The build's summary (JSON text).
    fn summary_json(&self) -> String {
        self.summary.to_string()
    }

    /// The `mdp/1` document (JSON text), exactly as audited.
    fn to_json(&self) -> &str {
        self.certified.to_json()
    }

    /// Write the `mdp/1` document to `path` (atomically: a failed write leaves the old file).
    fn save(&self, py: Python<'_>, path: &str) -> Result<()> {
        py.detach(|| -> std::io::Result<()> {
            let mut f = mdp::atomic::AtomicFile::create(std::path::Path::new(path))?;
            self.certified.write_to(&mut f)?;
            f.commit()
        })
        .map_err(|e| Error::input(path, e.to_string()))
    }

    /// Audit again under a pipeline's policy (its ε, scope and δ); returns the report
    /// (JSON text), whatever its verdict.
    #[pyo3(signature = (*, epsilon=None, within=None, allow_scoped=false, delta=None, progress=None))]
    fn audit(
        &self,
        py: Python<'_>,
        epsilon: Option<&str>,
        within: Option<&str>,
        allow_scoped: bool,
        delta: Option<&str>,
        progress: Option<Py<PyAny>>,
    ) -> Result<String> {
        let opts = policy(epsilon, within, allow_scoped, delta, MetricPin::FileMetric)?;
        run(py, progress, |p| {
            Ok(audit::json(&audit::audit_with(
                self.certified.file(),
                &opts,
                p,
            )?))
        })
    }

    /// Privatize inputs given by index: one output index each, drawn exactly from the
    /// audited rationals with ChaCha20 (OS-seeded unless `seed`).
    #[pyo3(signature = (inputs, seed=None))]
    fn sample_indices(
        &self,
        py: Python<'_>,
        inputs: Vec<i64>,
        seed: Option<u64>,
    ) -> Result<Vec<usize>> {
        let n = self.certified.matrix().rows;
        if let Some((at, &u)) = inputs
            .iter()
            .enumerate()
            .find(|(_, &u)| u < 0 || u as u64 >= n as u64)
        {
            return Err(Error::input(
                format!("records[{at}]"),
                format!("input {u} is not in 0..{n}"),
            ));
        }
        Ok(py.detach(|| {
            let rows = &self.sampled().rows;
            let mut g = rng(seed);
            inputs
                .iter()
                .map(|&u| rows[u as usize].sample(&mut g))
                .collect()
        }))
    }

    /// Privatize inputs given by label: one output label each (see `output_labels`).
    #[pyo3(signature = (inputs, seed=None))]
    fn sample_labels(
        &self,
        py: Python<'_>,
        inputs: Vec<String>,
        seed: Option<u64>,
    ) -> Result<Vec<String>> {
        if self.input_labels().is_none() {
            return Err(Error::input(
                "records",
                "the mechanism's inputs have no labels: pass input indices",
            ));
        }
        let mut idx = Vec::with_capacity(inputs.len());
        for (at, l) in inputs.iter().enumerate() {
            idx.push(self.input_of(l).ok_or_else(|| {
                Error::input(
                    format!("records[{at}]"),
                    format!("{l:?} is not an input label"),
                )
            })? as i64);
        }
        let out = self.sample_indices(py, idx, seed)?;
        let names = self.output_labels();
        Ok(out.into_iter().map(|j| names[j].clone()).collect())
    }

    fn __repr__(&self) -> String {
        let r = self.certified.report();
        let name = self
            .certified
            .file()
            .meta
            .as_ref()
            .and_then(|m| m.get("mechanism"))
            .and_then(|v| v.as_str())
            .unwrap_or("mechanism")
            .to_string();
        format!(
            "Mechanism({name}, n = {}, K = {}, ε = {}, audit {})",
            r.n,
            r.k,
            format_rational(&self.certified.file().epsilon),
            match r.verdict {
                Verdict::Pass => "pass",
                Verdict::Fail => "fail",
                Verdict::Inconclusive => "inconclusive",
            }
        )
    }
}
