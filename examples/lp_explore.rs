//! Measurement for spec/lp.md §4: the dual LP on every row, then the primal started from
//! the dual support. `cargo run --release --example lp_explore -- SPACE EPSILON`.
use mdp::exact::Q;
use mdp::import::load_space;
use mdp::io::Limits;
use mdp::lp::simplex;
use mdp::mechanisms::optimal;
use std::time::Instant;
fn main() {
    let a: Vec<String> = std::env::args().collect();
    let space = load_space(&a[1], None, &Limits::default()).unwrap();
    let eps = mdp::exact::parse_rational(&a[2]).unwrap();
    let lp = optimal::optimal_lp(&space, &eps, 4096);
    let kk = lp.k();
    let all: Vec<(u32, u32, u32)> = lp
        .pairs
        .iter()
        .flat_map(|&(u, v)| (0..kk).map(move |k| (u as u32, v as u32, k as u32)))
        .collect();
    let t = Instant::now();
    let d = simplex::solve_dual(&lp, &all).unwrap();
    eprintln!(
        "dual all {} rows: obj {:.12} support {} in {:.2}s",
        all.len(),
        d.objective,
        d.gamma.len(),
        t.elapsed().as_secs_f64()
    );
    let sup: Vec<(u32, u32, u32)> = d.gamma.iter().map(|g| (g.0, g.1, g.2)).collect();
    let t = Instant::now();
    let p = simplex::solve_primal_from(&lp, sup, &mdp::progress::Console::new(false, 0.0)).unwrap();
    eprintln!(
        "primal from support: obj {:.12} in {:.2}s",
        p.objective,
        t.elapsed().as_secs_f64()
    );
    let _ = Q::from(0u32);
}
