//! The planar Laplace mechanism on coordinate records (geo-indistinguishability, Andrés,
//! Bordenabe, Chatzikokolakis, Palamidessi 2013, Theorem 4.1): a record x ∈ ℝ² is released
//! as x + Z with density ∝ exp(−ε·‖z‖₂), which is ε·d₂-private. `spec/geo.md` §1.
//!
//! **Exactly sampled, a fixed map of the noise.** The release is round_H(x + Z), each
//! coordinate rounded to the grid Hℤ (`--granularity`), then clamped to the region's box:
//! post-processing of the ideal mechanism, so the same ε. Z is drawn by
//! [`exact_noise::planar_decided`] (uniforms as dyadic intervals, an `f64` interval fast path,
//! exact refinement otherwise): no float sampler, no re-sampling (a truncation by
//! re-sampling leaks through its normalization; clamping does not). With `--region SPACE`
//! the clamped release is then snapped to the nearest point of the space (in the plane
//! below), decided exactly: post-processing again.
//!
//! **Latitude and longitude, in great-circle km.** Records in degrees are mapped to the plane
//! (Y, X) = (lat, c·lon) in degrees, the noise added there at ε_plane = ε·k per degree with
//! k ≤ πR/180 km per degree (R = 6 371.0088 km, the haversine radius) and c ≤ cos φ_far, where
//! φ_far bounds |latitude| on every great-circle arc between two points of the region
//! (Theorem PL-GEO, `spec/geo.md` §1.2: tan φ_far ≤ tan φ_max / cos(Δλ/2)). On that band the
//! plane's metric is below the sphere's in every direction, so k·‖P(x) − P(x′)‖ ≤ d_gc(x, x′)
//! and the release is ε·d_gc-private with ε per great-circle km. The price is utility, not
//! privacy: east–west noise on the ground is up to `stretch` = cos φ_near / c times the
//! plane's (reported; 1.000… for a city).

use crate::exact::float::FI;
use crate::exact::functions;
use crate::exact::{f64_up, format_rational, parse_rational, Interval, Q};
use crate::user_level::exact_noise::{self, Decide};
use rand::Rng;
use serde_json::{json, Value};
use thiserror::Error;

/// A setting that does not define a planar Laplace release.
#[derive(Debug, Error, Clone, PartialEq)]
#[error("{flag}: {message}")]
pub struct SettingError {
    /// The command line's flag (Python: the argument's name).
    pub flag: &'static str,
    pub message: String,
}

fn bad(flag: &'static str, message: impl Into<String>) -> SettingError {
    SettingError {
        flag,
        message: message.into(),
    }
}

/// How records' two coordinates are read.
#[derive(Clone, Debug, PartialEq)]
pub enum Coordinates {
    /// Plane coordinates (x, y); ε per unit.
    Euclidean,
    /// Latitude, longitude in degrees; ε per great-circle km (module docs).
    Geographic(Projection),
}

/// The equirectangular map (lat, lon) ↦ (lat, c·lon) of a region, with the constants that
/// make it a contraction of great-circle distance (Theorem PL-GEO).
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    /// c ≤ cos φ_far (a lower end, rounded down).
    pub c: Q,
    /// k ≤ πR/180: km per degree of latitude (a lower end).
    pub km_per_degree: Q,
    /// φ_far in degrees (an upper end, for the summary).
    pub phi_far: f64,
    /// cos φ_near / c rounded up: how much wider east–west noise is on the ground than it
    /// needs to be at the region's latitude nearest the equator (≥ 1).
    pub stretch: f64,
}

/// A bounding box in the records' coordinates: (lat, lon) or (x, y), ends included; for
/// `--region SPACE`, the box of the space's points, and the points releases snap to.
#[derive(Clone, Debug, PartialEq)]
pub struct Region {
    pub lo: [Q; 2],
    pub hi: [Q; 2],
    /// The points of `--region SPACE` (empty for a box).
    pub points: Vec<[Q; 2]>,
}

impl Region {
    /// `A,B,C,D` = lat_min, lon_min, lat_max, lon_max (or x_min, y_min, x_max, y_max).
    pub fn parse(text: &str) -> Result<Region, SettingError> {
        let v: Vec<Q> = text
            .split(',')
            .map(|s| parse_rational(s.trim()))
            .collect::<Result<_, _>>()
            .map_err(|e| bad("--region", format!("{text:?}: {e}")))?;
        let [a, b, c, d] = <[Q; 4]>::try_from(v).map_err(|_| {
            bad(
                "--region",
                "expected four numbers: MIN0,MIN1,MAX0,MAX1 (lat_min,lon_min,lat_max,lon_max in degrees)",
            )
        })?;
        if a > c || b > d {
            return Err(bad("--region", "each minimum must be ≤ its maximum"));
        }
        Ok(Region {
            lo: [a, b],
            hi: [c, d],
            points: Vec::new(),
        })
    }

    /// `--region` as given: a box `MIN0,MIN1,MAX0,MAX1` (text of numbers only), else a space
    /// (any form `--space` takes) that `load` reads, as in [`Region::of_space`].
    pub fn from_arg(
        text: &str,
        geographic: bool,
        load: impl FnOnce(&str) -> Result<crate::metric::Space, String>,
    ) -> Result<Region, SettingError> {
        if text
            .chars()
            .all(|c| c.is_ascii_digit() || ".,-+eE/ ".contains(c))
        {
            return Region::parse(text);
        }
        let space = load(text).map_err(|e| bad("--region", e))?;
        Region::of_space(&space, geographic)
    }

    /// `--region SPACE`: the space's points (2-D coordinates: (lat, lon) in degrees for a
    /// haversine space, (x, y) for a euclidean one, matching `geographic`), their bounding
    /// box as the region, and releases snapped to the nearest of them.
    pub fn of_space(
        space: &crate::metric::Space,
        geographic: bool,
    ) -> Result<Region, SettingError> {
        use crate::metric::MetricKind;
        let want = if geographic {
            MetricKind::Haversine
        } else {
            MetricKind::Euclidean
        };
        if space.kind() != want || space.points().iter().any(|p| p.len() != 2) {
            return Err(bad(
                "--region",
                format!(
                    "a space as the region must have 2-D points in the records' metric ({}), not {}",
                    if geographic { "haversine: lat,lon" } else { "euclidean: x,y" },
                    space.kind().name()
                ),
            ));
        }
        let points: Vec<[Q; 2]> = space
            .points()
            .iter()
            .map(|p| [p[0].clone(), p[1].clone()])
            .collect();
        let bound = |i: usize, lo: bool| {
            points
                .iter()
                .map(|p| &p[i])
                .reduce(|a, b| if (b < a) == lo { b } else { a })
                .cloned()
                .ok_or_else(|| bad("--region", "the space has no points"))
        };
        Ok(Region {
            lo: [bound(0, true)?, bound(1, true)?],
            hi: [bound(0, false)?, bound(1, false)?],
            points,
        })
    }

    fn contains(&self, x: &[Q; 2]) -> bool {
        (0..2).all(|i| self.lo[i] <= x[i] && x[i] <= self.hi[i])
    }
}

/// The earth radius of the haversine metric (km).
fn radius() -> Q {
    crate::metric::default_radius()
}

const PREC: u64 = 96;

impl Projection {
    /// The projection for a region in degrees: |lat| < 90, lon in [−180, 180], and a
    /// longitude span below 180° (a region across the antimeridian is not supported).
    pub fn of_region(r: &Region) -> Result<Projection, SettingError> {
        let ninety = Q::from(90u32);
        let (lat_lo, lat_hi) = (&r.lo[0], &r.hi[0]);
        if *lat_lo <= -ninety.clone() || *lat_hi >= ninety {
            return Err(bad(
                "--region",
                "latitudes must be strictly between −90 and 90",
            ));
        }
        let (lon_lo, lon_hi) = (&r.lo[1], &r.hi[1]);
        if *lon_lo < Q::from(-180i32) || *lon_hi > Q::from(180u32) {
            return Err(bad("--region", "longitudes must be in [−180, 180]"));
        }
        let span = lon_hi - lon_lo;
        if span >= Q::from(180u32) {
            return Err(bad(
                "--region",
                "the longitude span must be below 180° (a region across the antimeridian is not supported)",
            ));
        }
        let (a, b) = (lat_lo.abs(), lat_hi.abs());
        let phi_max = if a > b { a } else { b };
        // tan φ_far ≤ tan φ_max / cos(Δλ/2) (spec/geo.md §1.2); cos φ_far = 1/√(1 + tan²).
        let deg = |x: &Q| x / Q::from(180u32);
        let tan_max = functions::sin_pi(&deg(&phi_max), PREC)
            .div(&functions::cos_pi(&deg(&phi_max), PREC))
            .ok_or_else(|| bad("--region", "latitude too close to a pole"))?;
        let cos_half = functions::cos_pi(&(span / Q::from(360u32)), PREC);
        let tan_far = tan_max
            .div(&cos_half)
            .ok_or_else(|| bad("--region", "longitude span too wide"))?;
        let one = Interval::point(Q::from(1u32));
        let root = functions::sqrt(&one.add(&tan_far.sqr()).round_outward(PREC), PREC)
            .ok_or_else(|| bad("--region", "cannot enclose cos φ_far"))?;
        let c = dyadic_down(&(Q::from(1u32) / &root.hi));
        if c <= 0u32 {
            return Err(bad("--region", "the region reaches too close to a pole"));
        }
        let km = functions::pi(PREC).mul(&Interval::point(radius() / Q::from(180u32)));
        let km_per_degree = dyadic_down(&km.lo);
        // cos φ_near ≤ 1; φ_near = 0 when the box spans the equator.
        let phi_near = if *lat_lo <= 0u32 && *lat_hi >= 0u32 {
            Q::from(0u32)
        } else if a_abs_le(lat_lo, lat_hi) {
            lat_lo.abs()
        } else {
            lat_hi.abs()
        };
        let cos_near = functions::cos_pi(&deg(&phi_near), PREC).hi;
        let stretch = f64_up(&(cos_near / &c));
        let phi_far = f64_up(
            &functions::atan(&tan_far, PREC)
                .mul(&Interval::point(Q::from(180u32)))
                .div(&functions::pi(PREC))
                .expect("π > 0")
                .hi,
        );
        Ok(Projection {
            c,
            km_per_degree,
            phi_far,
            stretch,
        })
    }
}

fn a_abs_le(a: &Q, b: &Q) -> bool {
    a.abs() <= b.abs()
}

/// The largest dyadic m·2⁻⁶⁴ ≤ x (x ≥ 0), so the constants stay small rationals.
fn dyadic_down(x: &Q) -> Q {
    let scaled = Q::from((x * (Q::from(1u32) << 64u64)).floor());
    scaled >> 64u64
}

/// The smallest dyadic m·2⁻⁶⁴ ≥ x.
fn dyadic_up(x: &Q) -> Q {
    -dyadic_down(&-x.clone())
}

/// A planar Laplace release: its ε, its coordinates, the output grid and the region.
#[derive(Clone, Debug)]
pub struct PlanarLaplace {
    /// ε as given: per great-circle km (geographic) or per unit (euclidean).
    pub epsilon: Q,
    pub coordinates: Coordinates,
    /// The noise scale θ in plane units (degrees or the unit): ≥ 1/ε_plane, a dyadic.
    pub theta: Q,
    theta_f: FI,
    /// The output grid H (the records' unit: degrees or the unit), H > 0.
    pub granularity: Q,
    granularity_f: FI,
    /// The box records must lie in and releases are clamped to (required for lat/lon).
    pub region: Option<Region>,
    /// 1/c for the longitude (1 otherwise): plane noise Z_x moves the longitude by Z_x/c.
    lon_factor: Q,
    lon_factor_f: FI,
}

impl PlanarLaplace {
    /// The mechanism at `epsilon` (> 0) on `coordinates` records; `granularity` defaults to
    /// [`default_granularity`]; `region` is required for geographic records.
    pub fn new(
        epsilon: Q,
        geographic: bool,
        region: Option<Region>,
        granularity: Option<Q>,
    ) -> Result<PlanarLaplace, SettingError> {
        if epsilon <= 0u32 {
            return Err(bad("--epsilon", "must be > 0"));
        }
        let coordinates = if geographic {
            let r = region.as_ref().ok_or_else(|| {
                bad(
                    "--region",
                    "required for latitude/longitude records: the projection's distortion bound is the region's (it must not come from the data); give LAT_MIN,LON_MIN,LAT_MAX,LON_MAX",
                )
            })?;
            Coordinates::Geographic(Projection::of_region(r)?)
        } else {
            Coordinates::Euclidean
        };
        // ε_plane ≤ ε·k (per degree) for geographic records; θ ≥ 1/ε_plane.
        let (eps_plane, lon_factor) = match &coordinates {
            Coordinates::Euclidean => (epsilon.clone(), Q::from(1u32)),
            Coordinates::Geographic(p) => (&epsilon * &p.km_per_degree, Q::from(1u32) / &p.c),
        };
        let theta = dyadic_up(&(Q::from(1u32) / &eps_plane));
        if theta <= 0u32 {
            return Err(bad("--epsilon", "too large: the noise scale rounds to 0"));
        }
        let granularity = match granularity {
            Some(h) if h <= 0u32 => return Err(bad("--granularity", "must be > 0")),
            Some(h) => h,
            None => default_granularity(&theta),
        };
        let lon_factor = dyadic_up(&lon_factor);
        Ok(PlanarLaplace {
            theta_f: FI::from_q(&theta),
            granularity_f: FI::from_q(&granularity),
            lon_factor_f: FI::from_q(&lon_factor),
            epsilon,
            coordinates,
            theta,
            granularity,
            region,
            lon_factor,
        })
    }

    /// Location Guard's parametrization: privacy level `level` within radius `radius`
    /// (km or units): ε = level / radius.
    pub fn epsilon_of_level(level: &Q, radius: &Q) -> Result<Q, SettingError> {
        if *level <= 0u32 {
            return Err(bad("--level", "must be > 0"));
        }
        if *radius <= 0u32 {
            return Err(bad("--radius", "must be > 0"));
        }
        Ok(level / radius)
    }

    /// Release one record (exact coordinates): round_H(x + Z) clamped to the region; a
    /// record outside the region is an error (its guarantee is the region's).
    pub fn release<R: Rng + ?Sized>(&self, x: &[Q; 2], rng: &mut R) -> Result<[Q; 2], String> {
        if let Some(r) = &self.region {
            if !r.contains(x) {
                return Err(format!(
                    "record ({}, {}) is outside --region",
                    format_rational(&x[0]),
                    format_rational(&x[1])
                ));
            }
        }
        let cells = Cells {
            q: x,
            q_f: [FI::from_q(&x[0]), FI::from_q(&x[1])],
            pl: self,
        };
        let k = exact_noise::planar_decided(&self.theta, self.theta_f, &cells, rng);
        let mut y = k.map(|k| Q::from(k) * &self.granularity);
        if let Some(r) = &self.region {
            for i in 0..2 {
                if y[i] < r.lo[i] {
                    y[i] = r.lo[i].clone();
                } else if y[i] > r.hi[i] {
                    y[i] = r.hi[i].clone();
                }
            }
            if !r.points.is_empty() {
                y = r.points[self.nearest(&r.points, &y)].clone();
            }
        }
        Ok(y)
    }

    /// The index of the point nearest to `y` in the plane (lat, c·lon) or (x, y), decided
    /// exactly (an `f64` interval filter, then exact rationals), ties to the lowest index.
    fn nearest(&self, points: &[[Q; 2]], y: &[Q; 2]) -> usize {
        let c = match &self.coordinates {
            Coordinates::Geographic(p) => p.c.clone(),
            Coordinates::Euclidean => Q::from(1u32),
        };
        let (cf, yf) = (FI::from_q(&c), [FI::from_q(&y[0]), FI::from_q(&y[1])]);
        let fast: Vec<(usize, FI)> = points
            .iter()
            .enumerate()
            .map(|(j, p)| {
                let d0 = yf[0] - FI::from_q(&p[0]);
                let d1 = (yf[1] - FI::from_q(&p[1])) * cf;
                (j, d0.sqr() + d1.sqr())
            })
            .collect();
        if let Some(j) = exact_noise::decided_argmin(&fast, |e| e.lo, |e| e.hi) {
            return j;
        }
        let c2 = &c * &c;
        let exact: Vec<Q> = points
            .iter()
            .map(|p| {
                let (d0, d1) = (&y[0] - &p[0], &y[1] - &p[1]);
                &d0 * &d0 + &c2 * &d1 * &d1
            })
            .collect();
        let best = exact.iter().min().expect("a space has points");
        exact
            .iter()
            .position(|d| d == best)
            .expect("the minimum is attained")
    }

    /// What the release promises and costs, for the summary: ε and its unit, the noise
    /// scale, the grid, the expected displacement 2θ and the radius holding the noise with
    /// probability `confidence` (an enclosure), the projection's constants.
    pub fn summary(&self, confidence: f64) -> Value {
        let (unit, to_unit) = match &self.coordinates {
            Coordinates::Euclidean => ("unit", Q::from(1u32)),
            Coordinates::Geographic(p) => ("km", p.km_per_degree.clone()),
        };
        let theta_unit = &self.theta * &to_unit;
        let radius = radius_at(confidence).map(|(lo, hi)| {
            [
                crate::exact::f64_down(&(lo * &theta_unit)),
                f64_up(&(hi * &theta_unit)),
            ]
        });
        let mut v = json!({
            "mechanism": "planar_laplace",
            "epsilon": format_rational(&self.epsilon),
            "epsilon_unit": format!("per {}", if unit == "km" { "great-circle km" } else { "unit" }),
            "noise_scale": f64_up(&theta_unit),
            "granularity": format_rational(&self.granularity),
            "expected_error": f64_up(&(Q::from(2u32) * &theta_unit)),
            "confidence": confidence,
            "radius_at_confidence": radius,
            "unit": unit,
        });
        if let Some(r) = &self.region {
            v["region"] = json!([&r.lo[0], &r.lo[1], &r.hi[0], &r.hi[1]]
                .into_iter()
                .map(format_rational)
                .collect::<Vec<_>>());
            if !r.points.is_empty() {
                v["region_points"] = json!(r.points.len());
            }
        }
        if let Coordinates::Geographic(p) = &self.coordinates {
            v["projection"] = json!({
                "kind": "equirectangular",
                "cos_reference_latitude": crate::exact::f64_down(&p.c),
                "phi_far_degrees": p.phi_far,
                "stretch": p.stretch,
                "km_per_degree": crate::exact::f64_down(&p.km_per_degree),
            });
        }
        v
    }
}

/// The default grid: 10^(⌊log₁₀ θ⌋ − 6), a millionth of the noise scale in decimal steps
/// (releases print exactly, and rounding moves them by at most θ·10⁻⁶/2).
pub fn default_granularity(theta: &Q) -> Q {
    let mut e = 0i64;
    let ten = Q::from(10u32);
    let mut t = theta.clone();
    while t >= ten {
        t /= &ten;
        e += 1;
    }
    while t < 1u32 {
        t *= &ten;
        e -= 1;
    }
    Q::from(10u32).pow(e - 6)
}

/// t with P(‖Z‖ ≤ t·θ) = c for the planar Laplace (‖Z‖/θ ~ Gamma(2): 1 − (1 + t)e^{−t}),
/// as an enclosure [lo, hi] (rational ends) found by bisection on rigorous `f64` bounds.
pub fn radius_at(c: f64) -> Option<(Q, Q)> {
    if !(c > 0.0 && c < 1.0) {
        return None;
    }
    // g(t) = 1 − (1 + t)e^{−t}, increasing in t ≥ 0.
    let g = |t: f64| {
        let t = FI::point(t);
        FI::point(1.0).sub(FI::point(1.0).add(t).mul(t.neg().exp()))
    };
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    while g(hi).lo < c {
        hi *= 2.0;
        if hi > 1e6 {
            return None;
        }
    }
    for _ in 0..200 {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            break;
        }
        if g(mid).lo >= c {
            hi = mid;
        } else if g(mid).hi < c {
            lo = mid;
        } else {
            break;
        }
    }
    Some((crate::exact::q_from_f64(lo), crate::exact::q_from_f64(hi)))
}

/// The grid cells of x + Z, coordinate by coordinate: round((x_i + m_i·Z_i)/H) with m = (1,
/// 1/c) for (lat, lon) and (1, 1) for (x, y).
struct Cells<'a> {
    q: &'a [Q; 2],
    q_f: [FI; 2],
    pl: &'a PlanarLaplace,
}

/// The largest cell index the fast path decides (|k| < 2⁵³: exact in f64 and i64).
const MAX_CELL: f64 = 9.0e15;

impl Decide for Cells<'_> {
    type Out = [i64; 2];

    fn fast(&self, z: &[FI]) -> Option<[i64; 2]> {
        let mut out = [0i64; 2];
        for i in 0..2 {
            let m = if i == 1 {
                self.pl.lon_factor_f
            } else {
                FI::point(1.0)
            };
            let t = self.q_f[i]
                .add(m.mul(z[i]))
                .div(self.pl.granularity_f)
                .add(FI::point(0.5));
            let (a, b) = (t.lo.floor(), t.hi.floor());
            if a != b || !a.is_finite() || a.abs() > MAX_CELL {
                return None;
            }
            out[i] = a as i64;
        }
        Some(out)
    }

    fn exact(&self, z: &[Interval]) -> Option<[i64; 2]> {
        let half = Q::from(1u32) >> 1u64;
        let mut out = [0i64; 2];
        for i in 0..2 {
            let m = if i == 1 {
                &self.pl.lon_factor
            } else {
                &Q::from(1u32)
            };
            let cell = |zi: &Q| (&self.q[i] + m * zi) / &self.pl.granularity + &half;
            let (a, b) = (cell(&z[i].lo).floor(), cell(&z[i].hi).floor());
            if a != b {
                return None;
            }
            out[i] = i64::try_from(&a).ok()?;
        }
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::privatize::rng;

    fn q(s: &str) -> Q {
        parse_rational(s).unwrap()
    }

    /// Rome's box: φ_far just above 42°, c ≈ cos 42.0x°, stretch ≈ cos 41.8/cos 42.0…
    #[test]
    fn projection_contracts_great_circle_distance() {
        let r = Region::parse("41.8,12.4,42.0,12.6").unwrap();
        let p = Projection::of_region(&r).unwrap();
        let c = crate::exact::f64_down(&p.c);
        assert!(
            c < 42.0f64.to_radians().cos() && c > 42.01f64.to_radians().cos(),
            "{c}"
        );
        assert!(p.phi_far > 42.0 && p.phi_far < 42.01, "{}", p.phi_far);
        assert!(p.stretch > 1.0 && p.stretch < 1.01, "{}", p.stretch);
        let k = crate::exact::f64_down(&p.km_per_degree);
        assert!((k - 111.19508).abs() < 1e-4, "{k}");
        // Every pair of region corners and edge midpoints: plane km ≤ haversine km.
        let pts: Vec<[f64; 2]> = vec![
            [41.8, 12.4],
            [41.8, 12.6],
            [42.0, 12.4],
            [42.0, 12.6],
            [41.9, 12.5],
            [42.0, 12.5],
        ];
        for a in &pts {
            for b in &pts {
                let plane = k * ((a[0] - b[0]).powi(2) + (c * (a[1] - b[1])).powi(2)).sqrt();
                let gc = haversine(a, b);
                assert!(
                    plane <= gc * (1.0 + 1e-12) + 1e-12,
                    "{a:?} {b:?}: {plane} > {gc}"
                );
            }
        }
        // Random boxes at every latitude with longitude spans up to 179° (where the great
        // circles' bulge past φ_max matters), random pairs inside: plane km ≤ haversine km.
        use rand::Rng;
        let mut g = rng(Some(5));
        for _ in 0..200 {
            let lat0 = g.gen_range(-85.0..80.0f64);
            let lat1 = (lat0 + g.gen_range(0.0..20.0f64)).min(85.0);
            let lon0 = g.gen_range(-180.0..0.0f64);
            let lon1 = lon0 + g.gen_range(0.0..179.0f64);
            let text = format!("{lat0},{lon0},{lat1},{lon1}");
            let p = Projection::of_region(&Region::parse(&text).unwrap()).unwrap();
            let (c, k) = (
                crate::exact::f64_up(&p.c),
                crate::exact::f64_up(&p.km_per_degree),
            );
            for _ in 0..10 {
                let a = [g.gen_range(lat0..=lat1), g.gen_range(lon0..=lon1)];
                let b = [g.gen_range(lat0..=lat1), g.gen_range(lon0..=lon1)];
                let plane = k * ((a[0] - b[0]).powi(2) + (c * (a[1] - b[1])).powi(2)).sqrt();
                let gc = haversine(&a, &b);
                assert!(
                    plane <= gc * (1.0 + 1e-9) + 1e-9,
                    "{text}: {a:?} {b:?}: {plane} > {gc}"
                );
            }
        }
        assert!(Projection::of_region(&Region::parse("10,-100,20,90").unwrap()).is_err());
        assert!(Projection::of_region(&Region::parse("-90,0,1,1").unwrap()).is_err());
    }

    fn haversine(a: &[f64; 2], b: &[f64; 2]) -> f64 {
        let (p1, p2) = (a[0].to_radians(), b[0].to_radians());
        let dl = (b[1] - a[1]).to_radians();
        let h = ((p2 - p1) / 2.0).sin().powi(2) + p1.cos() * p2.cos() * (dl / 2.0).sin().powi(2);
        2.0 * 6371.0088 * h.sqrt().asin()
    }

    #[test]
    fn releases_are_on_the_grid_inside_the_region() {
        let r = Region::parse("0,0,10,10").unwrap();
        let pl = PlanarLaplace::new(q("1"), false, Some(r), Some(q("0.001"))).unwrap();
        let mut g = rng(Some(7));
        for _ in 0..2000 {
            let y = pl.release(&[q("9.5"), q("0.25")], &mut g).unwrap();
            for v in &y {
                assert!(*v >= 0u32 && *v <= 10u32);
                assert_eq!(
                    Q::from((v * Q::from(1000u32)).floor()),
                    v * Q::from(1000u32)
                );
            }
        }
        assert!(pl.release(&[q("11"), q("0")], &mut g).is_err());
    }

    #[test]
    fn radius_encloses_the_gamma_quantile() {
        let (lo, hi) = radius_at(0.95).unwrap();
        let (lo, hi) = (crate::exact::f64_down(&lo), f64_up(&hi));
        // 1 − (1 + t)e^{−t} = 0.95 at t = 4.74386451839057837585… (mpmath, 30 digits).
        let t = 4.743_864_518_390_578_f64;
        assert!(lo <= t && t <= hi && hi - lo < 1e-12, "{lo} {hi}");
    }

    /// The law (Theorem 4.1's polar form): ‖Z‖/θ ~ Gamma(2) and the angle uniform, by χ²
    /// over 20 equiprobable radius bins and 16 angle bins of 20 000 releases (false alarm ≤
    /// e^{−14} each); a mechanism at 1.1·θ is refuted (power). The f64 fast path decides
    /// all but a few draws (counted through a wrapper of the map).
    #[test]
    fn releases_follow_the_planar_laplace_law() {
        use crate::user_level::exact_noise::tests::{chi2, chi2_limit};
        use std::cell::Cell;
        struct Counting<'a>(Cells<'a>, Cell<u64>, Cell<u64>);
        impl Decide for Counting<'_> {
            type Out = [i64; 2];
            fn fast(&self, z: &[FI]) -> Option<[i64; 2]> {
                self.2.set(self.2.get() + 1);
                self.0.fast(z)
            }
            fn exact(&self, z: &[Interval]) -> Option<[i64; 2]> {
                self.1.set(self.1.get() + 1);
                self.0.exact(z)
            }
        }
        // The default-like grid (the fast path decides), then a grid of 10⁻¹⁵ of θ that the
        // f64 enclosures straddle often (the exact path decides many draws).
        for (grid, n) in [("1e-6", 20_000u64), ("1e-15", 4_000)] {
            let pl = PlanarLaplace::new(q("1"), false, None, Some(q(grid))).unwrap();
            let h = crate::exact::f64_nearest(&pl.granularity);
            let x = [q("1/3"), q("-2/7")];
            let mut g = rng(Some(11));
            let counting = Counting(
                Cells {
                    q: &x,
                    q_f: [FI::from_q(&x[0]), FI::from_q(&x[1])],
                    pl: &pl,
                },
                Cell::new(0),
                Cell::new(0),
            );
            let draws: Vec<[f64; 2]> = (0..n)
                .map(|_| {
                    let k = exact_noise::planar_decided(&pl.theta, pl.theta_f, &counting, &mut g);
                    let y = k.map(|k| k as f64 * h);
                    [y[0] - 1.0 / 3.0, y[1] + 2.0 / 7.0]
                })
                .collect();
            // The disk test is decided in f64 for (nearly) every draw, and the map too at 1e-6.
            assert!(
                counting.2.get() > n - n / 100,
                "{} fast tries",
                counting.2.get()
            );
            if grid == "1e-6" {
                assert!(
                    counting.1.get() < n / 100,
                    "{} exact refinements",
                    counting.1.get()
                );
            } else {
                assert!(
                    counting.1.get() > n / 20,
                    "{} exact refinements",
                    counting.1.get()
                );
            }
            let gamma2 = |r: f64| 1.0 - (1.0 + r) * (-r).exp();
            for scale in [1.0, 1.1] {
                let bins = 20usize;
                let mut counts = vec![0u64; bins];
                for d in &draws {
                    let r = (d[0] * d[0] + d[1] * d[1]).sqrt() / scale;
                    counts[((gamma2(r) * bins as f64) as usize).min(bins - 1)] += 1;
                }
                let (stat, df) = chi2(&counts, &vec![1.0 / bins as f64; bins], n);
                let ok = stat < chi2_limit(df, 14.0);
                assert_eq!(ok, scale == 1.0, "scale {scale}: χ² = {stat} on {df}");
            }
            let mut counts = vec![0u64; 16];
            for d in &draws {
                let a = d[1].atan2(d[0]) / std::f64::consts::TAU + 0.5;
                counts[((a * 16.0) as usize).min(15)] += 1;
            }
            let (stat, df) = chi2(&counts, &[1.0 / 16.0; 16], n);
            assert!(stat < chi2_limit(df, 14.0), "angle χ² = {stat} on {df}");
        }
    }

    /// A space as the region: its box, and each release the nearest of its points to the
    /// box-clamped release from the same draws (ties, here a duplicate, to the lowest index).
    #[test]
    fn a_space_region_snaps_each_release_to_its_nearest_point() {
        use crate::metric::{MetricKind, Space};
        let pts: Vec<[Q; 2]> = [
            ("0", "0"),
            ("1", "0"),
            ("0", "1"),
            ("1", "1"),
            ("1/2", "1/2"),
        ]
        .iter()
        .chain(&[("1/2", "1/2")])
        .map(|(a, b)| [q(a), q(b)])
        .collect();
        let space = Space::from_points(
            MetricKind::Euclidean,
            pts.iter().map(|p| p.to_vec()).collect(),
            None,
        )
        .unwrap();
        let region = Region::of_space(&space, false).unwrap();
        assert_eq!(
            (region.lo.clone(), region.hi.clone()),
            ([q("0"), q("0")], [q("1"), q("1")])
        );
        assert!(
            Region::of_space(&space, true).is_err(),
            "euclidean points for lat/lon records"
        );
        let snap = PlanarLaplace::new(q("2"), false, Some(region), Some(q("1/1000"))).unwrap();
        let clamp = PlanarLaplace::new(
            q("2"),
            false,
            Some(Region::parse("0,0,1,1").unwrap()),
            Some(q("1/1000")),
        )
        .unwrap();
        let x = [q("1/3"), q("1/5")];
        let mut seen = [0u32; 6];
        for seed in 0..400 {
            let y = snap.release(&x, &mut rng(Some(seed))).unwrap();
            let z = clamp.release(&x, &mut rng(Some(seed))).unwrap();
            let d = |p: &[Q; 2]| {
                let (a, b) = (&p[0] - &z[0], &p[1] - &z[1]);
                &a * &a + &b * &b
            };
            let best = pts.iter().map(d).min().unwrap();
            let j = pts.iter().position(|p| d(p) == best).unwrap();
            assert_eq!(y, pts[j], "seed {seed}");
            seen[j] += 1;
        }
        assert!(
            seen[..5].iter().all(|&c| c > 0),
            "every point is reached: {seen:?}"
        );
        assert_eq!(seen[5], 0, "the duplicate is never the lowest index");
    }

    /// The fast path declines an enclosure that straddles a grid line (the exact path then
    /// decides it), and a cell beyond 2⁵³.
    #[test]
    fn fast_path_declines_what_it_cannot_decide() {
        let pl = PlanarLaplace::new(q("1"), false, None, Some(q("1"))).unwrap();
        let zero = [q("0"), q("0")];
        let cells = Cells {
            q: &zero,
            q_f: [FI::point(0.0), FI::point(0.0)],
            pl: &pl,
        };
        let inside = FI::new(0.2, 0.3);
        assert_eq!(cells.fast(&[inside, inside]), Some([0, 0]));
        let straddle = FI::new(0.49, 0.51);
        assert_eq!(cells.fast(&[straddle, inside]), None);
        assert_eq!(cells.fast(&[inside, straddle]), None);
        let huge = FI::point(1e17);
        assert_eq!(cells.fast(&[huge, inside]), None);
        let z = [
            Interval::new(q("0.49"), q("0.51")),
            Interval::new(q("0.2"), q("0.3")),
        ];
        assert_eq!(cells.exact(&z), None);
        let z = [
            Interval::new(q("0.51"), q("0.52")),
            Interval::new(q("-0.7"), q("-0.6")),
        ];
        assert_eq!(cells.exact(&z), Some([1, -1]));
    }

    /// Latitude and longitude: the plane displacement (Δlat, c·Δlon)·k has the planar
    /// Laplace's Gamma(2, 1/ε) radius in km (the longitude's noise is divided by c, the
    /// latitude's is not), by χ² over 20 equiprobable bins of 20 000 releases.
    #[test]
    fn geographic_releases_are_planar_laplace_in_the_projection() {
        use crate::user_level::exact_noise::tests::{chi2, chi2_limit};
        let region = Region::parse("41.0,12.0,43.0,13.0").unwrap();
        let pl = PlanarLaplace::new(q("2"), true, Some(region), Some(q("1e-9"))).unwrap();
        let Coordinates::Geographic(p) = &pl.coordinates else {
            panic!("geographic")
        };
        let (c, k) = (
            crate::exact::f64_nearest(&p.c),
            crate::exact::f64_nearest(&p.km_per_degree),
        );
        let theta_km = crate::exact::f64_nearest(&pl.theta) * k;
        let x = [q("42"), q("12.5")];
        let mut g = rng(Some(3));
        let n = 20_000u64;
        let bins = 20usize;
        let mut counts = vec![0u64; bins];
        let gamma2 = |r: f64| 1.0 - (1.0 + r) * (-r).exp();
        for _ in 0..n {
            let y = pl.release(&x, &mut g).unwrap();
            let dy = (crate::exact::f64_nearest(&y[0]) - 42.0) * k;
            let dx = (crate::exact::f64_nearest(&y[1]) - 12.5) * c * k;
            let r = (dx * dx + dy * dy).sqrt() / theta_km;
            counts[((gamma2(r) * bins as f64) as usize).min(bins - 1)] += 1;
        }
        let (stat, df) = chi2(&counts, &vec![1.0 / bins as f64; bins], n);
        assert!(stat < chi2_limit(df, 14.0), "χ² = {stat} on {df}");
    }

    /// The exact path on its own: a straddling enclosure is declined, a separated one gives
    /// round((x + m·z)/H) with m = 1/c for the longitude only.
    #[test]
    fn exact_path_decides_cells_with_the_longitude_factor() {
        let mut pl = PlanarLaplace::new(q("1"), false, None, Some(q("1/2"))).unwrap();
        pl.lon_factor = q("2");
        pl.lon_factor_f = FI::point(2.0);
        let x = [q("0"), q("0")];
        let cells = Cells {
            q: &x,
            q_f: [FI::point(0.0), FI::point(0.0)],
            pl: &pl,
        };
        // (0 + z)/½ + ½ and (0 + 2z)/½ + ½.
        let z = [
            Interval::new(q("0.51"), q("0.52")),
            Interval::new(q("0.51"), q("0.52")),
        ];
        assert_eq!(cells.exact(&z), Some([1, 2]));
        assert_eq!(
            cells.fast(&[FI::new(0.51, 0.52), FI::new(0.51, 0.52)]),
            Some([1, 2])
        );
        let z = [
            Interval::new(q("-0.26"), q("-0.24")),
            Interval::new(q("0.1"), q("0.11")),
        ];
        assert_eq!(cells.exact(&z), None);
    }

    #[test]
    fn default_granularity_is_a_millionth_of_the_scale() {
        assert_eq!(default_granularity(&q("0.009")), q("1e-9"));
        assert_eq!(default_granularity(&q("2")), q("1e-6"));
        assert_eq!(default_granularity(&q("150")), q("1e-4"));
    }
}
