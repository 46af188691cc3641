//! The pipeline's metric, pinned (issue 53; `spec/threat-model.md` §2.1).
//!
//! ε·d privacy is a statement about d (Imola et al. 2022, Definition 1): a file that carries
//! its own metric can make its guarantee say almost nothing without touching its matrix (a
//! haversine `radius` raised 1000× makes every distance 1000× larger, so ε = 1 "per km"
//! becomes ε = 1 per metre). A gate therefore states the metric it means, as it states ε
//! and the scope, and the file's metric must equal it **exactly**:
//!
//! * the **canonical form** of a metric ([`View::items`]) is a list of (field, value) items
//!   in a fixed order: the form (`points:KIND`, `table` or `graph-edges`), n, the radius
//!   (haversine), the points (coordinate kinds), the distances above the diagonal (an
//!   explicit table, or a graph's shortest-path table in a JSON file), or the graph's
//!   canonical edges (a container, where no table is formed), then the labels. Every number
//!   is the reduced rational `p/q` (or `p`), so `0.5`, `"1/2"` and `5e-1` are one value;
//! * the **digest** ([`digest`]) is the SHA-256 of those items, each field and value
//!   length-prefixed (no two different lists share an encoding), in lowercase hex;
//! * **equality**: two metrics are equal when their item lists are; the first item that
//!   differs is what a failing gate reports ([`first_difference`]).
//!
//! Equal items imply equal distances between every two inputs (and equal points and
//! labels, which decide where a record lands). The converse does not always hold: a graph
//! with an extra edge that no shortest path uses is the same metric with other edges, and a
//! translated point set has the same distances. Such files fail a pinned gate: the pin is
//! stricter than metric equality, never weaker, which is the side a gate may err on.
//!
//! Outputs are not part of the pin: privacy is a property of the rows and the metric on
//! the inputs, and what a column is called is post-processing.

use crate::audit::{Check, Verdict};
use crate::exact::Q;
use crate::io::container::Geometry;
use crate::io::{InputError, Limits, MechanismFile};
use crate::metric::{MetricKind, Space};
use sha2::{Digest as _, Sha256};
use std::sync::Arc;

/// The canonical view of a metric and its labels.
#[derive(Clone, Debug)]
pub enum View<'a> {
    /// A coordinate space (euclidean, manhattan, chebyshev, haversine): its first `n`
    /// points and radius.
    Points {
        space: &'a Space,
        labels: Option<&'a [String]>,
    },
    /// An explicit table, or a graph's exact shortest-path table (JSON files).
    Table {
        space: &'a Space,
        labels: Option<&'a [String]>,
    },
    /// A graph given by its edges (containers): canonical edges, each (a, b, w) with
    /// a < b, loops dropped, of parallel edges the lightest, sorted by (a, b).
    Edges {
        n: usize,
        edges: Vec<(u32, u32, Q)>,
        labels: Option<&'a [String]>,
    },
}

/// The canonical string of a rational: reduced `p/q`, or `p` for an integer.
fn canon(q: &Q) -> String {
    let d = q.denominator();
    if d == 1u32 {
        q.numerator().to_string()
    } else {
        format!("{}/{}", q.numerator(), d)
    }
}

fn joined(xs: &[Q]) -> String {
    let parts: Vec<String> = xs.iter().map(canon).collect();
    format!("[{}]", parts.join(", "))
}

impl<'a> View<'a> {
    /// The view of a space and its labels: points or a table, by its kind.
    pub fn of_space(space: &'a Space, labels: Option<&'a [String]>) -> View<'a> {
        if space.kind().has_points() {
            View::Points { space, labels }
        } else if let Some(r) = space.roads() {
            let edges = r
                .edges()
                .iter()
                .map(|(a, b, w)| (*a as usize, *b as usize, w));
            Self::edges(space.n(), edges, labels)
        } else {
            View::Table { space, labels }
        }
    }

    /// The canonical view of a graph's edges: each undirected edge once, (min, max) order,
    /// sorted, the least weight of a repeated edge kept.
    fn edges<'e>(
        n: usize,
        list: impl Iterator<Item = (usize, usize, &'e Q)>,
        labels: Option<&'a [String]>,
    ) -> View<'a> {
        let mut edges: Vec<(u32, u32, Q)> = list
            .filter(|(a, b, _)| a != b)
            .map(|(a, b, w)| (a.min(b) as u32, a.max(b) as u32, w.clone()))
            .collect();
        edges.sort();
        edges.dedup_by(|later, earlier| later.0 == earlier.0 && later.1 == earlier.1);
        View::Edges { n, edges, labels }
    }

    /// The view of a container's geometry (a graph by its edges).
    pub fn of_geometry(g: &'a Geometry, labels: Option<&'a [String]>) -> View<'a> {
        match g {
            Geometry::Points(s) => View::of_space(s, labels),
            Geometry::Graph(graph) => Self::edges(graph.n, graph.edge_list(), labels),
        }
    }

    /// The view of a mechanism file's metric.
    pub fn of_file(file: &'a MechanismFile) -> View<'a> {
        View::of_space(&file.space, file.labels.as_deref())
    }

    fn n(&self) -> usize {
        match self {
            View::Points { space, .. } | View::Table { space, .. } => space.n(),
            View::Edges { n, .. } => *n,
        }
    }

    fn labels(&self) -> Option<&'a [String]> {
        match self {
            View::Points { labels, .. }
            | View::Table { labels, .. }
            | View::Edges { labels, .. } => *labels,
        }
    }

    /// The canonical items, in order: what the digest hashes and equality compares.
    pub fn items(&self) -> Box<dyn Iterator<Item = (String, String)> + '_> {
        let n = self.n();
        let form = match self {
            View::Points { space, .. } => format!("points:{}", space.kind().name()),
            View::Table { .. } => "table".to_string(),
            View::Edges { .. } => "graph-edges".to_string(),
        };
        let head = [("form".to_string(), form), ("n".to_string(), n.to_string())].into_iter();
        let body: Box<dyn Iterator<Item = (String, String)> + '_> = match self {
            View::Points { space, .. } => {
                let radius = (space.kind() == MetricKind::Haversine)
                    .then(|| ("radius".to_string(), canon(space.radius())));
                Box::new(
                    radius.into_iter().chain(
                        space.points()[..n]
                            .iter()
                            .enumerate()
                            .map(|(i, p)| (format!("points[{i}]"), joined(p))),
                    ),
                )
            }
            View::Table { space, .. } => {
                let t = space.table();
                Box::new((0..n).flat_map(move |i| {
                    (i + 1..n).map(move |j| (format!("distances[{i}][{j}]"), canon(&t[i * n + j])))
                }))
            }
            View::Edges { edges, .. } => Box::new(
                [("edges".to_string(), edges.len().to_string())]
                    .into_iter()
                    .chain(edges.iter().enumerate().map(|(k, (a, b, w))| {
                        (format!("edges[{k}]"), format!("[{a}, {b}, {}]", canon(w)))
                    })),
            ),
        };
        let labels: Box<dyn Iterator<Item = (String, String)> + '_> = match self.labels() {
            None => Box::new(std::iter::once(("labels".to_string(), "none".to_string()))),
            Some(l) => Box::new(
                std::iter::once(("labels".to_string(), l.len().to_string())).chain(
                    l.iter()
                        .enumerate()
                        .map(|(i, s)| (format!("labels[{i}]"), format!("{s:?}"))),
                ),
            ),
        };
        Box::new(head.chain(body).chain(labels))
    }

    /// One line for people: the form, n and (haversine) the radius.
    pub fn describe(&self) -> String {
        let labels = match self.labels() {
            Some(_) => "labelled",
            None => "unlabelled",
        };
        match self {
            View::Points { space, .. } if space.kind() == MetricKind::Haversine => format!(
                "haversine, {} points, radius {}, {labels}",
                space.n(),
                crate::exact::format_rational(space.radius())
            ),
            View::Points { space, .. } => {
                format!("{}, {} points, {labels}", space.kind().name(), space.n())
            }
            View::Table { space, .. } => {
                format!("distance table of {} inputs, {labels}", space.n())
            }
            View::Edges { n, edges, .. } => {
                format!("graph of {n} nodes and {} edges, {labels}", edges.len())
            }
        }
    }
}

/// The digest of a canonical metric: SHA-256 over its items, each field and value preceded
/// by its length in bytes (u64, little-endian), after the tag `mdp-metric/1`; lowercase hex.
pub fn digest(view: &View<'_>) -> String {
    let mut h = Sha256::new();
    let mut put = |s: &str| {
        h.update((s.len() as u64).to_le_bytes());
        h.update(s.as_bytes());
    };
    put("mdp-metric/1");
    for (field, value) in view.items() {
        put(&field);
        put(&value);
    }
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

fn short(s: &str) -> String {
    if s.chars().count() > 60 {
        format!("{}…", s.chars().take(60).collect::<String>())
    } else {
        s.to_string()
    }
}

/// The first item where `file` and `pinned` differ, for people: `None` when they are equal.
pub fn first_difference(file: &View<'_>, pinned: &View<'_>) -> Option<String> {
    let mut a = file.items();
    let mut b = pinned.items();
    loop {
        match (a.next(), b.next()) {
            (None, None) => return None,
            (Some((fa, va)), Some((fb, vb))) if fa == fb && va == vb => continue,
            (Some((fa, va)), Some((fb, vb))) if fa == fb => {
                return Some(format!(
                    "{fa}: the file has {}, the pipeline's has {}",
                    short(&va),
                    short(&vb)
                ))
            }
            (Some((fa, va)), Some((fb, vb))) => {
                return Some(format!(
                    "the file has {fa} = {}, the pipeline's has {fb} = {}",
                    short(&va),
                    short(&vb)
                ))
            }
            (Some((fa, _)), None) => {
                return Some(format!("the file has {fa}, the pipeline's has no more"))
            }
            (None, Some((fb, _))) => {
                return Some(format!("the pipeline's has {fb}, the file has no more"))
            }
        }
    }
}

/// A digest as the user wrote it: 64 hex digits, optionally after `sha256:`; lowercase.
pub fn parse_digest(s: &str) -> Result<String, InputError> {
    let hex = s.trim().strip_prefix("sha256:").unwrap_or(s.trim());
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(crate::io::input_error(
            "require-metric-digest",
            "expected 64 hexadecimal digits (the metric_digest of an mdp-audit report)",
        ));
    }
    Ok(hex.to_ascii_lowercase())
}

/// The pipeline's own space, pinned: the geometry as [`crate::io::space::load_geometry`]
/// reads it (a graph by its edges) and its labels.
#[derive(Clone, Debug)]
pub struct PinnedSpace {
    /// What the user named (`--space SPEC`), for messages.
    pub name: String,
    pub geometry: Geometry,
    pub labels: Option<Vec<String>>,
}

impl PinnedSpace {
    /// Load `--space SPEC` as the pin (any form `--space` takes: `builtin:NAME`, CSV,
    /// GeoJSON, a JSON metric or an `mdp/1` file), its labels from `label_column` if given
    /// (`--label-column`).
    pub fn load(
        spec: &str,
        label_column: Option<&str>,
        limits: &Limits,
    ) -> Result<PinnedSpace, InputError> {
        let (geometry, labels) = crate::io::space::load_geometry(spec, label_column, limits)
            .map_err(|e| e.within("--space", " "))?;
        Ok(PinnedSpace {
            name: spec.to_string(),
            geometry,
            labels,
        })
    }

    /// A space already in memory (a library or Python caller's own).
    pub fn of_space(name: &str, space: Space, labels: Option<Vec<String>>) -> PinnedSpace {
        PinnedSpace {
            name: name.to_string(),
            geometry: Geometry::Points(space),
            labels,
        }
    }
}

/// What a gate accepts as the metric.
#[derive(Clone, Debug, Default)]
pub enum MetricPin {
    /// The file's own metric (reported with its digest): trusted, not checked.
    #[default]
    FileMetric,
    /// The metric must have this digest ([`parse_digest`]).
    Digest(String),
    /// The metric must equal this space's.
    Space(Arc<PinnedSpace>),
}

impl MetricPin {
    /// Whether the pipeline states its metric (a gate that samples requires it, or an
    /// explicit trust in the file's).
    pub fn is_pinned(&self) -> bool {
        !matches!(self, MetricPin::FileMetric)
    }
}

/// The `metric` check of a file's metric (`view`, whose digest is `file_digest`) against
/// the pin: `None` when nothing is pinned. A graph pinned by its edges against a file's
/// table is compared through the graph's exact shortest-path table (within `max_bits`).
pub fn check(view: &View<'_>, file_digest: &str, pin: &MetricPin, max_bits: u64) -> Option<Check> {
    let fail = |detail: String| Check {
        name: "metric".into(),
        verdict: Verdict::Fail,
        detail,
        witness: None,
    };
    let pass = |detail: String| Check {
        name: "metric".into(),
        verdict: Verdict::Pass,
        detail,
        witness: None,
    };
    match pin {
        MetricPin::FileMetric => None,
        MetricPin::Digest(want) if want == file_digest => Some(pass(format!(
            "the file's metric has the required digest {want} ({})",
            view.describe()
        ))),
        MetricPin::Digest(want) => Some(fail(format!(
            "the file's metric ({}) has digest {file_digest}; the pipeline requires {want}",
            view.describe()
        ))),
        MetricPin::Space(p) => {
            let labels = p.labels.as_deref();
            let table;
            let pinned = match (&p.geometry, view) {
                (Geometry::Graph(g), View::Table { space, .. }) if g.n == space.n() => {
                    let edges: Vec<(usize, usize, Q)> =
                        g.edge_list().map(|(a, b, w)| (a, b, w.clone())).collect();
                    match Space::from_graph_within(g.n, &edges, max_bits) {
                        Ok(s) => {
                            table = s;
                            View::Table {
                                space: &table,
                                labels,
                            }
                        }
                        Err(e) => {
                            return Some(fail(format!(
                                "the pipeline's graph {} has no exact table to compare with: {e}",
                                p.name
                            )))
                        }
                    }
                }
                (g, _) => View::of_geometry(g, labels),
            };
            match first_difference(view, &pinned) {
                None => Some(pass(format!(
                    "the file's metric is the pipeline's space {} ({}; digest {file_digest})",
                    p.name,
                    view.describe()
                ))),
                Some(diff) => Some(fail(format!(
                    "the file's metric is not the pipeline's space {}: {diff}; the file's: {}, digest {file_digest}; the pipeline's: {}, digest {}",
                    p.name,
                    view.describe(),
                    pinned.describe(),
                    digest(&pinned)
                ))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exact::parse_rational;

    fn q(s: &str) -> Q {
        parse_rational(s).unwrap()
    }

    fn pts(xs: &[&[&str]]) -> Vec<Vec<Q>> {
        xs.iter()
            .map(|p| p.iter().map(|x| q(x)).collect())
            .collect()
    }

    #[test]
    fn equal_values_in_any_notation_have_one_digest() {
        let a = Space::from_points(
            MetricKind::Euclidean,
            pts(&[&["0.5", "1"], &["2", "3"]]),
            None,
        )
        .unwrap();
        let b = Space::from_points(
            MetricKind::Euclidean,
            pts(&[&["1/2", "1.0"], &["2e0", "3"]]),
            None,
        )
        .unwrap();
        assert_eq!(
            digest(&View::of_space(&a, None)),
            digest(&View::of_space(&b, None))
        );
        assert!(first_difference(&View::of_space(&a, None), &View::of_space(&b, None)).is_none());
    }

    #[test]
    fn the_digest_is_stable_across_backends_and_versions() {
        // A golden value: both number backends and every later version must print it.
        let s = Space::from_points(
            MetricKind::Haversine,
            pts(&[&["41.9", "12.5"], &["45.46", "9.19"]]),
            None,
        )
        .unwrap();
        let labels = vec!["rome".to_string(), "milan".to_string()];
        assert_eq!(
            digest(&View::of_space(&s, Some(&labels))),
            "01508443e22eadeaf34d86c3f29b6656008c8f7d862598058ec66db1aa12dacd"
        );
    }

    #[test]
    fn radius_labels_kind_and_points_each_change_the_digest() {
        let base = Space::from_points(
            MetricKind::Haversine,
            pts(&[&["41.9", "12.5"], &["45.46", "9.19"]]),
            None,
        )
        .unwrap();
        let labels = vec!["a".to_string(), "b".to_string()];
        let d0 = digest(&View::of_space(&base, Some(&labels)));
        let radius = Space::from_points(
            MetricKind::Haversine,
            pts(&[&["41.9", "12.5"], &["45.46", "9.19"]]),
            Some(q("6371008.8")),
        )
        .unwrap();
        let moved = Space::from_points(
            MetricKind::Haversine,
            pts(&[&["41.9", "12.5"], &["45.46", "9.2"]]),
            None,
        )
        .unwrap();
        let euclid = Space::from_points(
            MetricKind::Euclidean,
            pts(&[&["41.9", "12.5"], &["45.46", "9.19"]]),
            None,
        )
        .unwrap();
        let swapped = vec!["b".to_string(), "a".to_string()];
        for (v, what) in [
            (View::of_space(&radius, Some(&labels)), "radius"),
            (View::of_space(&moved, Some(&labels)), "points[1]"),
            (View::of_space(&euclid, Some(&labels)), "form"),
            (View::of_space(&base, Some(&swapped)), "labels[0]"),
            (View::of_space(&base, None), "labels"),
        ] {
            assert_ne!(digest(&v), d0, "{what}");
            let diff = first_difference(&v, &View::of_space(&base, Some(&labels))).expect(what);
            assert!(diff.starts_with(what), "{what}: {diff}");
        }
    }

    #[test]
    fn a_graph_pinned_by_edges_equals_its_table() {
        let edges = vec![(0, 1, q("1")), (1, 2, q("2")), (0, 2, q("5"))];
        let table = Space::from_graph(3, &edges).unwrap();
        let g = crate::structured::edges::Graph::new(3, edges.clone(), "metric").unwrap();
        let pin = MetricPin::Space(Arc::new(PinnedSpace {
            name: "g.json".into(),
            geometry: Geometry::Graph(g),
            labels: None,
        }));
        let view = View::of_space(&table, None);
        let c = check(&view, &digest(&view), &pin, u64::MAX).unwrap();
        assert_eq!(c.verdict, Verdict::Pass, "{}", c.detail);
        let heavier =
            Space::from_graph(3, &[(0, 1, q("1")), (1, 2, q("3")), (0, 2, q("5"))]).unwrap();
        let view = View::of_space(&heavier, None);
        let c = check(&view, &digest(&view), &pin, u64::MAX).unwrap();
        assert_eq!(c.verdict, Verdict::Fail);
        assert!(c.detail.contains("distances[0][2]"), "{}", c.detail);
    }

    /// A graph read without its table (`Space::from_roads`, issue 56) pins as its edges: the
    /// digest of the container geometry of the same graph, and another weight changes it.
    #[test]
    fn a_graph_without_its_table_pins_as_its_edges() {
        let edges = vec![(0, 1, q("1")), (1, 2, q("2")), (0, 2, q("5"))];
        let g = crate::structured::edges::Graph::new(3, edges.clone(), "metric").unwrap();
        let geometry = digest(&View::of_geometry(&Geometry::Graph(g), None));
        let roads = Space::from_roads(3, &edges).unwrap();
        assert_eq!(digest(&View::of_space(&roads, None)), geometry);
        let heavier = Space::from_roads(3, &[(0, 1, q("1")), (1, 2, q("3")), (0, 2, q("5"))]);
        assert_ne!(digest(&View::of_space(&heavier.unwrap(), None)), geometry);
    }

    #[test]
    fn canonical_edges_ignore_order_direction_loops_and_heavier_parallels() {
        let a = crate::structured::edges::Graph::new(3, vec![(0, 1, q("1")), (1, 2, q("2"))], "m")
            .unwrap();
        let b = crate::structured::edges::Graph::new(
            3,
            vec![
                (2, 1, q("2")),
                (1, 0, q("1")),
                (0, 1, q("4")),
                (2, 2, q("1")),
            ],
            "m",
        )
        .unwrap();
        let (ga, gb) = (Geometry::Graph(a), Geometry::Graph(b));
        assert_eq!(
            digest(&View::of_geometry(&ga, None)),
            digest(&View::of_geometry(&gb, None))
        );
        // Edges sharing one end are distinct edges (only parallel ones merge).
        let star = Geometry::Graph(
            crate::structured::edges::Graph::new(3, vec![(0, 1, q("1")), (0, 2, q("1"))], "m")
                .unwrap(),
        );
        match View::of_geometry(&star, None) {
            View::Edges { edges, .. } => assert_eq!(edges.len(), 2),
            _ => panic!("a graph's view is its edges"),
        }
    }

    #[test]
    fn the_check_passes_the_pinned_metric_and_fails_any_other() {
        let base = Space::from_points(
            MetricKind::Haversine,
            pts(&[&["41.9", "12.5"], &["45.46", "9.19"]]),
            None,
        )
        .unwrap();
        let far = Space::from_points(
            MetricKind::Haversine,
            pts(&[&["41.9", "12.5"], &["45.46", "9.19"]]),
            Some(q("6371008.8")),
        )
        .unwrap();
        let labels = vec!["rome".to_string(), "milan".to_string()];
        let (v, w) = (
            View::of_space(&base, Some(&labels)),
            View::of_space(&far, Some(&labels)),
        );
        let (dv, dw) = (digest(&v), digest(&w));
        assert!(check(&v, &dv, &MetricPin::FileMetric, u64::MAX).is_none());
        assert!(!MetricPin::FileMetric.is_pinned() && MetricPin::Digest(dv.clone()).is_pinned());
        let by_digest = MetricPin::Digest(dv.clone());
        let ok = check(&v, &dv, &by_digest, u64::MAX).unwrap();
        assert_eq!((ok.name.as_str(), ok.verdict), ("metric", Verdict::Pass));
        let bad = check(&w, &dw, &by_digest, u64::MAX).unwrap();
        assert_eq!((bad.name.as_str(), bad.verdict), ("metric", Verdict::Fail));
        assert!(
            bad.detail.contains(&dw) && bad.detail.contains(&dv),
            "{}",
            bad.detail
        );
        let by_space = MetricPin::Space(Arc::new(PinnedSpace::of_space(
            "s.csv",
            base.clone(),
            Some(labels.clone()),
        )));
        let ok = check(&v, &dv, &by_space, u64::MAX).unwrap();
        assert_eq!(ok.verdict, Verdict::Pass);
        assert!(
            ok.detail.contains("s.csv") && ok.detail.contains(&dv),
            "{}",
            ok.detail
        );
        let bad = check(&w, &dw, &by_space, u64::MAX).unwrap();
        assert_eq!(bad.verdict, Verdict::Fail);
        assert!(
            bad.detail
                .contains("radius: the file has 31855044/5, the pipeline's has 7963761/1250"),
            "{}",
            bad.detail
        );
        assert!(
            bad.detail.contains(&dw) && bad.detail.contains(&dv),
            "{}",
            bad.detail
        );
        assert_eq!(
            v.describe(),
            "haversine, 2 points, radius 6371.0088, labelled"
        );
        assert_eq!(
            View::of_space(&base, None).describe(),
            "haversine, 2 points, radius 6371.0088, unlabelled"
        );
        let e = Space::from_points(MetricKind::Euclidean, pts(&[&["0"], &["1"]]), None).unwrap();
        assert_eq!(
            View::of_space(&e, None).describe(),
            "euclidean, 2 points, unlabelled"
        );
        let t = Space::from_table(vec![vec![q("0"), q("1/3")], vec![q("1/3"), q("0")]]).unwrap();
        assert_eq!(
            View::of_space(&t, None).describe(),
            "distance table of 2 inputs, unlabelled"
        );
        let items: Vec<(String, String)> = View::of_space(&t, None).items().collect();
        assert_eq!(items[2], ("distances[0][1]".to_string(), "1/3".to_string()));
        let g = Geometry::Graph(
            crate::structured::edges::Graph::new(2, vec![(0, 1, q("2.5"))], "m").unwrap(),
        );
        let gv = View::of_geometry(&g, None);
        assert_eq!(gv.describe(), "graph of 2 nodes and 1 edges, unlabelled");
        let items: Vec<(String, String)> = gv.items().collect();
        assert_eq!(
            items[3],
            ("edges[0]".to_string(), "[0, 1, 5/2]".to_string())
        );
        // A pinned graph of another size is not expanded into a table: it differs at n.
        let big = Geometry::Graph(
            crate::structured::edges::Graph::new(3, vec![(0, 1, q("1")), (1, 2, q("1"))], "m")
                .unwrap(),
        );
        let pin = MetricPin::Space(Arc::new(PinnedSpace {
            name: "g".into(),
            geometry: big,
            labels: None,
        }));
        let tv = View::of_space(&t, None);
        let c = check(&tv, &digest(&tv), &pin, u64::MAX).unwrap();
        assert!(
            c.verdict == Verdict::Fail && c.detail.contains("form"),
            "{}",
            c.detail
        );
    }

    #[test]
    fn every_entry_of_a_table_is_in_its_digest() {
        let table = |d12: &str| {
            let r = |a: &str, b: &str, c: &str| vec![q(a), q(b), q(c)];
            Space::from_table(vec![r("0", "1", "2"), r("1", "0", d12), r("2", d12, "0")]).unwrap()
        };
        let (a, b) = (table("1"), table("3/2"));
        let (va, vb) = (View::of_space(&a, None), View::of_space(&b, None));
        assert_ne!(digest(&va), digest(&vb));
        let diff = first_difference(&va, &vb).unwrap();
        assert!(
            diff.starts_with("distances[1][2]: the file has 1, the pipeline's has 3/2"),
            "{diff}"
        );
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        assert_eq!(short("abc"), "abc");
        let long = "x".repeat(61);
        assert_eq!(short(&long), format!("{}…", "x".repeat(60)));
        assert_eq!(short(&"y".repeat(60)), "y".repeat(60));
    }

    #[test]
    fn digests_parse_in_either_spelling() {
        let h = "AB".repeat(32);
        assert_eq!(
            parse_digest(&format!("sha256:{h}")).unwrap(),
            "ab".repeat(32)
        );
        assert!(parse_digest("abc").is_err());
        assert!(parse_digest(&"g".repeat(64)).is_err());
    }
}
