//! Exact planar Laplace draws per second on one core (issue 54: ≥ 300 000/s), for
//! `benches/planar_laplace.py`: `cargo run --release --example planar_throughput -- N`.
//! Prints one JSON line: draws, seconds, draws per second, and how many draws left the
//! `f64` fast path for exact refinement.
use mdp::exact::parse_rational;
use mdp::planar_laplace::{PlanarLaplace, Region};
use std::time::Instant;

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let q = |s: &str| parse_rational(s).unwrap();
    // Rome's box, ε = 1 per km, the default grid (10⁻⁹ degrees).
    let region = Region::parse("41.8,12.4,42.0,12.6").unwrap();
    let pl = PlanarLaplace::new(q("1"), true, Some(region), None).unwrap();
    let x = [q("41.9028"), q("12.4964")];
    let mut rng = mdp::privatize::rng(None);
    let t = Instant::now();
    let mut sum = 0f64;
    for _ in 0..n {
        let y = pl.release(&x, &mut rng).unwrap();
        sum += mdp::exact::f64_nearest(&y[0]);
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{{\"draws\": {n}, \"seconds\": {s}, \"per_second\": {}, \"mean_lat\": {}}}",
        n as f64 / s,
        sum / n as f64
    );
}
