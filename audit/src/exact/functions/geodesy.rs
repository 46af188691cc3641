//! Geodesy on a sphere from coordinates in degrees: the great-circle distance by the
//! haversine formula ([`haversine`]) and the unit vectors of the chord distance
//! ([`chord_unit_vector`]), all factors enclosures.

use super::fixed::{pow2, zero, Fx};
use super::trig::{asin_fx, atan_max_halvings, cos_pi_fx, sin_pi_fx, TRIG_GUARD};
use crate::exact::{Interval, Q};

/// `asin(√h)` for the haversine `h` of two points in degrees, on the grid 2^-w.
fn haversine_half_angle(lat1: &Q, lon1: &Q, lat2: &Q, lon2: &Q, w: u64, hmax: u64) -> Fx {
    let one = pow2(w);
    let s1 = sin_pi_fx(&((lat2 - lat1) / Q::from(360u32)), w);
    let s2 = sin_pi_fx(&((lon2 - lon1) / Q::from(360u32)), w);
    let c1 = cos_pi_fx(&(lat1 / Q::from(180u32)), w);
    let c2 = cos_pi_fx(&(lat2 / Q::from(180u32)), w);
    let h = s1.sqr(w).add(&c1.mul(&c2, w).mul(&s2.sqr(w), w));
    // h = (1 − p1·p2)/2 for the unit vectors p1, p2, so h ∈ [0, 1] for any angles.
    let h = h.clamp(&zero(), &one);
    if h.hi == 0u32 {
        return Fx::point(zero());
    }
    let s = h.sqrt(w);
    let c = Fx {
        lo: &one - &h.hi,
        hi: &one - &h.lo,
    }
    .clamp(&zero(), &one); // ⊇ 1 − h = 1 − s²
    asin_fx(&s, &c.sqrt(w), w, hmax)
}

/// Great-circle distance between two points given in **degrees** (latitude, longitude) on a
/// sphere of radius `radius` (≥ 0), by the haversine formula
/// `d = 2R·asin(√h)`, `h = sin²(Δφ/2) + cos φ1·cos φ2·sin²(Δλ/2)`.
///
/// Soundness: every factor is an enclosure (`sin_pi`/`cos_pi` on the exact rationals
/// `Δlat/360`, `lat/180`, …, exact reduction mod 1/2 then Taylor with Lagrange remainder),
/// combined by outward-rounded interval arithmetic; `h` is intersected with [0, 1], which
/// contains the true value for any inputs (`h = (1 − p1·p2)/2` with unit vectors p1, p2);
/// `asin(√h) = 2·atan(√h/(1 + √(1 − h)))` is increasing in h. Coincident points give
/// `Δ = 0` exactly, hence `h = [0, 0]` and the result `[0, 0]`.
///
/// Precision: the working precision is raised (up to `4·prec + 512` extra bits) until the
/// width is ≤ `2^-prec · max(1, d)`; this handles tiny distances (√ amplifies absolute
/// errors of small h) and near-antipodal points (asin has infinite slope at 1), where the
/// cost grows accordingly.
pub fn haversine(lat1: &Q, lon1: &Q, lat2: &Q, lon2: &Q, radius: &Q, prec: u64) -> Interval {
    let hmax = atan_max_halvings(prec) + 2;
    let rbits = if *radius == 0u32 {
        0
    } else {
        radius.floor_log2_abs().max(0) as u64
    };
    let mut extra = 0u64;
    let two_r = radius << 1u64;
    loop {
        let w = prec + hmax + rbits + 16 + extra;
        let a = haversine_half_angle(lat1, lon1, lat2, lon2, w, hmax + extra);
        let d = a.to_interval(w).scale(&two_r).round_outward(w);
        let width = d.width();
        if width == 0u32 {
            return d;
        }
        let mag = d.mag();
        let target = if mag > 1u32 {
            mag >> prec
        } else {
            Q::from(1u32) >> prec
        };
        if width <= target || extra > 4 * prec + 512 {
            return d;
        }
        let deficit = (width.floor_log2_abs() - target.floor_log2_abs()).max(1) as u64;
        extra += 2 * deficit + 8;
    }
}

/// Enclosures of the unit vector `(cos φ·cos λ, cos φ·sin λ, sin φ)` for latitude φ and
/// longitude λ in **degrees** (`sin_pi`/`cos_pi` of `deg/180`, products rounded outward).
pub fn chord_unit_vector(lat: &Q, lon: &Q, prec: u64) -> [Interval; 3] {
    let w = prec + TRIG_GUARD;
    let p = lat / Q::from(180u32);
    let l = lon / Q::from(180u32);
    let (cp, sp) = (cos_pi_fx(&p, w), sin_pi_fx(&p, w));
    let (cl, sl) = (cos_pi_fx(&l, w), sin_pi_fx(&l, w));
    [
        cp.mul(&cl, w).to_interval(w),
        cp.mul(&sl, w).to_interval(w),
        sp.to_interval(w),
    ]
}
