//! `Space`: a finite metric space and its labels, from numpy arrays (each float64 is taken
//! as the exact dyadic rational it is), a distance matrix, or a file the library reads
//! (`builtin:NAME`, CSV, GeoJSON, a JSON metric or an `mdp/1` file).

use crate::errors::{Error, Result};
use mdp_audit::exact::{parse_rational, Q};
use mdp_audit::io::{self, Limits};
use mdp_audit::metric::{self, MetricKind};
use numpy::{PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::prelude::*;
use serde_json::json;

/// A metric space over n points (inputs of a mechanism), with optional unique labels.
#[pyclass(frozen, module = "metricdp._core")]
pub struct Space {
    pub inner: metric::Space,
    pub labels: Option<Vec<String>>,
    /// How it was made (`meta.space` of the files built on it).
    pub name: String,
}

/// The finite entries of a float64 array as exact rationals, row by row; `what` names it.
pub fn exact_rows(a: &PyReadonlyArray2<'_, f64>, what: &str) -> Result<Vec<Vec<Q>>> {
    let view = a.as_array();
    let mut rows = Vec::with_capacity(view.nrows());
    for (i, r) in view.outer_iter().enumerate() {
        let mut row = Vec::with_capacity(r.len());
        for (j, &x) in r.iter().enumerate() {
            if !x.is_finite() {
                return Err(Error::input(
                    format!("{what}[{i}][{j}]"),
                    "not a finite number",
                ));
            }
            row.push(Q::try_from(x).expect("finite"));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// Checks labels as the file format does (n unique, non-empty, no surrounding spaces or
/// control characters).
fn checked_labels(labels: Option<Vec<String>>, n: usize) -> Result<Option<Vec<String>>> {
    match labels {
        None => Ok(None),
        Some(l) => Ok(io::metric_labels(&json!({ "labels": l }), "", n)?),
    }
}

/// The n × m array's size against the default entry limit (`what` names it).
pub fn check_size(a: &PyReadonlyArray2<'_, f64>, what: &str) -> Result<()> {
    check_size_within(a, what, &Limits::default())
}

/// [`check_size`] against the caller's limits.
pub fn check_size_within(a: &PyReadonlyArray2<'_, f64>, what: &str, limits: &Limits) -> Result<()> {
    let s = a.shape();
    Ok(io::check_entries(what, s[0] as u64, s[1] as u64, limits)?)
}

#[pymethods]
impl Space {
    /// Points (n × d float64) under `metric`: euclidean, manhattan, chebyshev, or haversine
    /// (rows [lat, lon] in degrees, distances in km on a sphere of `radius`, default the
    /// mean Earth radius).
    #[staticmethod]
    #[pyo3(signature = (points, metric, labels=None, radius=None, name=None))]
    fn from_points(
        points: PyReadonlyArray2<'_, f64>,
        metric: &str,
        labels: Option<Vec<String>>,
        radius: Option<&str>,
        name: Option<String>,
    ) -> Result<Space> {
        let kind = MetricKind::from_name(metric)
            .filter(|k| k.has_points())
            .ok_or_else(|| {
                Error::input(
                    "metric",
                    format!("{metric:?}: expected euclidean, manhattan, chebyshev or haversine"),
                )
            })?;
        check_size(&points, "points")?;
        let pts = exact_rows(&points, "points")?;
        let radius = radius
            .map(|r| parse_rational(r).map_err(|e| Error::input("radius", e.to_string())))
            .transpose()?;
        let n = pts.len();
        let inner = metric::Space::from_points(kind, pts, radius)?;
        Ok(Space {
            inner,
            labels: checked_labels(labels, n)?,
            name: name.unwrap_or_else(|| format!("{metric} points (Python)")),
        })
    }

    /// An explicit n × n distance matrix (zero diagonal, symmetric, non-negative), read in
    /// O(n²). With `check_triangle` the O(n³) triangle-inequality search runs now and a
    /// violation is a warning, as in the file format; without it, not at all (privacy is
    /// proven for the table as given either way).
    #[staticmethod]
    #[pyo3(signature = (distances, labels=None, name=None, check_triangle=false))]
    fn from_distances(
        py: Python<'_>,
        distances: PyReadonlyArray2<'_, f64>,
        labels: Option<Vec<String>>,
        name: Option<String>,
        check_triangle: bool,
    ) -> Result<Space> {
        check_size(&distances, "distances")?;
        let rows = exact_rows(&distances, "distances")?;
        let n = rows.len();
        let inner = py.detach(|| {
            if check_triangle {
                metric::Space::from_table(rows)
            } else {
                metric::Space::from_table_unscanned(rows)
            }
        })?;
        Ok(Space {
            inner,
            labels: checked_labels(labels, n)?,
            name: name.unwrap_or_else(|| "distance matrix (Python)".into()),
        })
    }

    /// `builtin:NAME`, a CSV or GeoJSON file of points, a JSON metric or an `mdp/1` file;
    /// `label_column` names the CSV column (GeoJSON property) holding the labels (the
    /// command line's `--label-column`).
    #[staticmethod]
    #[pyo3(signature = (spec, label_column = None))]
    fn load(py: Python<'_>, spec: &str, label_column: Option<&str>) -> Result<Space> {
        let (inner, labels) = py.detach(|| {
            mdp::import::load_space_with_labels(spec, label_column, &Limits::default())
        })?;
        Ok(Space {
            inner,
            labels,
            name: spec.to_string(),
        })
    }

    /// The number of points.
    #[getter]
    fn n(&self) -> usize {
        self.inner.n()
    }

    /// The metric's name (`euclidean`, `haversine`, `explicit`, `graph`, …).
    #[getter]
    fn metric(&self) -> &'static str {
        self.inner.kind().name()
    }

    #[getter]
    fn labels(&self) -> Option<Vec<String>> {
        self.labels.clone()
    }

    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The unit of distances: km for haversine on the default radius, else "".
    #[getter]
    fn unit(&self) -> &'static str {
        mdp::import::distance_unit(&self.inner)
    }

    /// Warnings about the space (a triangle-inequality violation and its witness).
    #[getter]
    fn warnings(&self) -> Vec<String> {
        self.inner.warnings.clone()
    }

    /// d(i, j) as the nearest float64 (the library decides with exact enclosures).
    fn distance(&self, i: usize, j: usize) -> Result<f64> {
        let n = self.inner.n();
        if i >= n || j >= n {
            return Err(Error::input(
                "index",
                format!("({i}, {j}) out of range for {n} points"),
            ));
        }
        Ok(self.inner.approx(i, j))
    }

    /// The points as float64 (n × d, nearest doubles; [lat, lon] degrees for haversine),
    /// or None for a distance table or a graph.
    fn points<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, numpy::PyArray2<f64>>>> {
        points_f64(py, &self.inner)
    }

    /// The space as the file format's `metric` object (JSON text).
    fn to_json(&self) -> String {
        let mut v = io::space_to_value(&self.inner);
        if let Some(l) = &self.labels {
            v["labels"] = json!(l);
        }
        v.to_string()
    }

    fn __len__(&self) -> usize {
        self.inner.n()
    }

    fn __repr__(&self) -> String {
        let unit = mdp::import::distance_unit(&self.inner);
        format!(
            "Space({} points, {}{}{}, {:?})",
            self.inner.n(),
            self.inner.kind().name(),
            if unit.is_empty() {
                String::new()
            } else {
                format!(", {unit}")
            },
            if self.labels.is_some() {
                ", labelled"
            } else {
                ""
            },
            self.name
        )
    }
}

/// A coordinate space's points as an n × d float64 array (nearest doubles), else None.
pub fn points_f64<'py>(
    py: Python<'py>,
    space: &metric::Space,
) -> PyResult<Option<Bound<'py, numpy::PyArray2<f64>>>> {
    use numpy::PyArrayMethods;
    if !space.kind().has_points() {
        return Ok(None);
    }
    let pts = space.points();
    let d = pts.first().map_or(0, Vec::len);
    let data: Vec<f64> = pts
        .iter()
        .flatten()
        .map(mdp_audit::exact::f64_nearest)
        .collect();
    Ok(Some(
        numpy::PyArray1::from_vec(py, data).reshape([pts.len(), d])?,
    ))
}

/// Snap coordinate records to the nearest input of `space` (lat, lon in degrees for
/// haversine): the inputs' indices and the distances moved, in the space's unit. A record
/// farther than `snap_max` (default: `mdp privatize --snap`'s, twice the space's widest
/// nearest-neighbour spacing) is an `InputError` naming it (`records[i]`), as a line is on
/// the command line. The same snapping as `mdp privatize --snap` and `mdp prior --snap`.
#[pyfunction]
#[pyo3(signature = (space, points, snap_max=None))]
pub fn snap(
    py: Python<'_>,
    space: &Space,
    points: numpy::PyReadonlyArray2<'_, f64>,
    snap_max: Option<f64>,
) -> Result<(Vec<usize>, Vec<f64>)> {
    if let Some(m) = snap_max {
        if !(m > 0.0 && m.is_finite()) {
            return Err(Error::input("snap_max", "must be a distance > 0"));
        }
    }
    let snapper = mdp::privatize::Snapper::new(&space.inner, snap_max).ok_or_else(|| {
        Error::input(
            "space",
            "has no coordinates (an explicit table or a graph): nothing to snap to",
        )
    })?;
    let a = points.as_array();
    let dim = space.inner.points().first().map_or(0, Vec::len);
    if a.ncols() != dim {
        return Err(Error::input(
            "points",
            format!("has {} columns, the space's points have {dim}", a.ncols()),
        ));
    }
    let rows: Vec<Vec<f64>> = a.rows().into_iter().map(|r| r.to_vec()).collect();
    py.detach(|| {
        let mut idx = Vec::with_capacity(rows.len());
        let mut moved = Vec::with_capacity(rows.len());
        for (i, x) in rows.iter().enumerate() {
            if x.iter().any(|v| !v.is_finite()) {
                return Err(Error::input(
                    format!("records[{i}]"),
                    "not a finite coordinate",
                ));
            }
            let (w, d) = snapper.snap(x).map_err(|e| {
                Error::input(format!("records[{i}]"), e.replace("--snap-max", "snap_max"))
            })?;
            idx.push(w);
            moved.push(d);
        }
        Ok((idx, moved))
    })
}
