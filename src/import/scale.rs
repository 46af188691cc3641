//! A space scaled by a factor, and the (ε, metric) pair an imported matrix states
//! (libqif's convention puts ε inside the metric: `--eps-in-metric`).

use crate::exact::Q;
use crate::io::InputError;
use crate::metric::{MetricKind, Space};

fn metric_error(name: &str, e: InputError) -> InputError {
    e.within(name, ":")
}

/// The same space with every distance multiplied by `factor` > 0, exactly: coordinates
/// scaled (euclidean, manhattan, chebyshev), the radius scaled (haversine), the table scaled
/// (explicit; a graph becomes its explicit shortest-path table).
pub fn scale_space(space: &Space, factor: &Q) -> Result<Space, InputError> {
    assert!(*factor > 0u32);
    let n = space.n();
    let r = match space.kind() {
        MetricKind::Haversine => Space::from_points(
            MetricKind::Haversine,
            space.points()[..n].to_vec(),
            Some(space.radius() * factor),
        ),
        MetricKind::Graph if space.roads().is_some() => Space::from_roads(
            n,
            &space
                .roads()
                .expect("checked")
                .edges()
                .iter()
                .map(|(a, b, w)| (*a as usize, *b as usize, w * factor))
                .collect::<Vec<_>>(),
        ),
        // A scaled metric is a metric iff the original is: no new triangle search.
        MetricKind::Explicit | MetricKind::Graph => Space::from_table_unscanned(
            space
                .table()
                .chunks(n)
                .map(|row| row.iter().map(|d| d * factor).collect())
                .collect(),
        ),
        kind => Space::from_points(
            kind,
            space.points()[..n]
                .iter()
                .map(|p| p.iter().map(|x| x * factor).collect())
                .collect(),
            None,
        ),
    };
    r.map_err(|e| metric_error("metric", e))
}

/// The (ε, metric) pair a file states. Without `eps_in_metric`, `(epsilon, space)`: the
/// matrix is claimed ε·d private for the space's d. With it, the space's distances already
/// include ε (libqif's convention: its mechanisms and checks take the metric d′ = ε·d and
/// guarantee 1·d′ privacy), and the file states the same guarantee as `(epsilon, space/ε)`,
/// with distances (and so losses) in the plain units.
pub fn file_claim(
    space: &Space,
    epsilon: &Q,
    eps_in_metric: bool,
) -> Result<(Q, Space), InputError> {
    if eps_in_metric {
        Ok((
            epsilon.clone(),
            scale_space(space, &(Q::from(1u32) / epsilon))?,
        ))
    } else {
        Ok((epsilon.clone(), space.clone()))
    }
}
