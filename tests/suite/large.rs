//! `mdp build exponential --container` (issue 35): the container is proven before it is
//! written, re-proven by `mdp-audit`, weighted and graph spaces included; refusals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn mdp(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_mdp"))
        .args(args)
        .output()
        .expect("run mdp")
}

fn audit(args: &[&str]) -> Output {
    let bin = Path::new(env!("CARGO_BIN_EXE_mdp")).with_file_name("mdp-audit");
    Command::new(bin)
        .args(args)
        .output()
        .expect("run mdp-audit")
}

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("mdp-large-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn report(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{e}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// The command exited 0 (else its standard error is shown).
fn succeeded(out: &Output) {
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `n` labelled points `p<i>` on a grid `width` wide, as a CSV in `d`.
fn grid_csv(d: &Path, n: usize, width: usize) -> PathBuf {
    let csv = d.join("pts.csv");
    let mut text = String::from("id,x,y\n");
    for i in 0..n {
        text.push_str(&format!("p{i},{},{}\n", i % width, i / width));
    }
    std::fs::write(&csv, text).unwrap();
    csv
}

/// `mdp build exponential --container` on `space` at ε, its header at `header`.
fn exponential_container(space: &Path, eps: &str, header: &Path) {
    succeeded(&mdp(&[
        "build",
        "exponential",
        "--space",
        space.to_str().unwrap(),
        "--epsilon",
        eps,
        "-o",
        header.to_str().unwrap(),
        "--container",
        "--quiet",
    ]));
}

#[test]
fn planar_weighted_and_graph_containers_pass_their_audit() {
    let d = dir("build");
    let csv = d.join("pts.csv");
    let mut text = String::from("id,x,y\n");
    for i in 0..300 {
        text.push_str(&format!(
            "p{i},{},{}\n",
            (i * 37 % 101) as f64 / 10.0,
            (i * 53 % 97) as f64 / 10.0
        ));
    }
    std::fs::write(&csv, text).unwrap();
    let h = d.join("e.json");
    let out = mdp(&[
        "build",
        "exponential",
        "--space",
        csv.to_str().unwrap(),
        "--epsilon",
        "1",
        "-o",
        h.to_str().unwrap(),
        "--container",
        "--quiet",
    ]);
    succeeded(&out);
    assert!(d.join("e.npy").exists());
    let r = report(&audit(&["--json", h.to_str().unwrap()]));
    assert_eq!(r["verdict"], "pass");
    assert!(r["epsilon_tight"][1].as_f64().unwrap() <= 1.0);
    assert_eq!(r["meta"]["mechanism"], "exponential");
    // A stricter gate than the claim fails (the file's claim is not trusted).
    assert_eq!(
        audit(&["--require-epsilon", "0.5", "--quiet", h.to_str().unwrap()])
            .status
            .code(),
        Some(1)
    );
    // Weighted (Proposition 1).
    let w = d.join("w.json");
    let weights: Vec<String> = (0..300).map(|i| format!("{}", 1 + i % 5)).collect();
    std::fs::write(&w, format!("[{}]", weights.join(","))).unwrap();
    let hw = d.join("ew.json");
    let out = mdp(&[
        "build",
        "exponential",
        "--space",
        csv.to_str().unwrap(),
        "--epsilon",
        "1",
        "--weights",
        w.to_str().unwrap(),
        "-o",
        hw.to_str().unwrap(),
        "--container",
        "--quiet",
    ]);
    succeeded(&out);
    let r = report(&audit(&["--json", hw.to_str().unwrap()]));
    assert_eq!(
        (r["verdict"].as_str(), r["meta"]["mechanism"].as_str()),
        (Some("pass"), Some("weighted_exponential"))
    );
    // TEM (the exponential mechanism on min(d, γ)).
    let ht = d.join("tem.json");
    let out = mdp(&[
        "build",
        "tem",
        "--space",
        csv.to_str().unwrap(),
        "--epsilon",
        "1",
        "--gamma",
        "2",
        "-o",
        ht.to_str().unwrap(),
        "--container",
        "--quiet",
    ]);
    succeeded(&out);
    let r = report(&audit(&["--json", ht.to_str().unwrap()]));
    assert_eq!(
        (r["verdict"].as_str(), r["meta"]["mechanism"].as_str()),
        (Some("pass"), Some("tem"))
    );
    assert!(
        r["epsilon_tight"][1].as_f64().unwrap() < 0.9,
        "truncation lowers the tight ε: {}",
        r["epsilon_tight"]
    );
    // A graph: a 30-node cycle with chords, read as edges.
    let mut edges = Vec::new();
    for i in 0..30 {
        edges.push(format!("[{i}, {}, {}]", (i + 1) % 30, 1 + i % 3));
        if i % 7 == 0 {
            edges.push(format!("[{i}, {}, 2.5]", (i + 11) % 30));
        }
    }
    let g = d.join("g.json");
    std::fs::write(
        &g,
        format!(
            "{{\"kind\": \"graph\", \"nodes\": 30, \"edges\": [{}]}}",
            edges.join(",")
        ),
    )
    .unwrap();
    let hg = d.join("eg.json");
    let out = mdp(&[
        "build",
        "exponential",
        "--space",
        g.to_str().unwrap(),
        "--epsilon",
        "0.7",
        "-o",
        hg.to_str().unwrap(),
        "--container",
        "--quiet",
    ]);
    succeeded(&out);
    let r = report(&audit(&["--json", hg.to_str().unwrap()]));
    assert_eq!(r["verdict"], "pass");
    assert_eq!(r["stats"]["structured"]["method"], "edges");
    // The same mechanism as a JSON file (exact distances, short decimals; the exhaustive
    // audit over the shortest-path table): it passes too, and its tight ε is the
    // container's up to those roundings.
    let hj = d.join("ej.json");
    let out = mdp(&[
        "build",
        "exponential",
        "--space",
        g.to_str().unwrap(),
        "--epsilon",
        "0.7",
        "-o",
        hj.to_str().unwrap(),
    ]);
    succeeded(&out);
    let rj = report(&audit(&["--json", hj.to_str().unwrap()]));
    assert_eq!(rj["verdict"], "pass");
    let (a, b) = (&r["epsilon_tight"], &rj["epsilon_tight"]);
    assert!(
        (a[1].as_f64().unwrap() - b[1].as_f64().unwrap()).abs() < 1e-4,
        "{a} vs {b}"
    );
}

#[test]
fn container_refusals_are_one_line() {
    let d = dir("refuse");
    let csv = d.join("pts.csv");
    std::fs::write(&csv, "x,y\n0,0\n1,0\n0,1\n").unwrap();
    for (args, want) in [
        (vec!["-o", "-", "--container"], "--output"),
        (
            vec![
                "-o",
                d.join("a.json").to_str().unwrap(),
                "--container",
                "--max-memory",
                "100",
            ],
            "--max-memory",
        ),
    ] {
        let mut all = vec![
            "build",
            "exponential",
            "--space",
            csv.to_str().unwrap(),
            "--epsilon",
            "1",
        ];
        all.extend(args.iter().copied());
        let out = mdp(&all);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(want), "{err}");
    }
    assert!(!d.join("a.json").exists() && !d.join("a.npy").exists());
}

fn privatize(args: &[&str], stdin: &str) -> Output {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_mdp"))
        .arg("privatize")
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run mdp privatize");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// `mdp privatize --mechanism HEADER` samples from a container once its structured audit
/// passes under the pipeline's policy: records by label (points) or by index (a graph,
/// which has no coordinates), snapped coordinates, and the refusals (a stricter ε, a
/// memory limit) with nothing released.
#[test]
fn privatize_reads_containers() {
    let d = dir("privatize");
    let h = d.join("e.json");
    exponential_container(&grid_csv(&d, 60, 8), "2", &h);
    let hs = h.to_str().unwrap();
    // By label: every release is a label of the space; ε = 2 is steep, so most records
    // stay at or next to their point.
    let records: String = (0..200).map(|i| format!("p{}\n", i % 60)).collect();
    let out = privatize(
        &[
            "--trust-file-metric",
            "--mechanism",
            hs,
            "--require-epsilon",
            "2",
            "--seed",
            "5",
        ],
        &records,
    );
    succeeded(&out);
    let released: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(released.len(), 200);
    assert!(released
        .iter()
        .all(|l| l.starts_with('p') && l[1..].parse::<u32>().unwrap() < 60));
    let same = released
        .iter()
        .enumerate()
        .filter(|(i, l)| **l == format!("p{}", i % 60))
        .count();
    assert!(
        same > 20 && same < 200,
        "{same} of 200 records released as themselves"
    );
    // Coordinates snapped to the nearest input.
    let out = privatize(
        &[
            "--trust-file-metric",
            "--mechanism",
            hs,
            "--snap",
            "--seed",
            "5",
        ],
        "3.1,2.2\n",
    );
    succeeded(&out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .split(',')
            .count(),
        2
    );
    // Refusals: a stricter ε than the container passes, and a memory limit below the
    // audit's plan; nothing is released.
    let out = privatize(
        &[
            "--trust-file-metric",
            "--mechanism",
            hs,
            "--require-epsilon",
            "1",
            "--seed",
            "5",
        ],
        "p1\n",
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refusing to sample"));
    let out = privatize(
        &[
            "--trust-file-metric",
            "--mechanism",
            hs,
            "--max-memory",
            "1K",
        ],
        "p1\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
    // A graph container: inputs by index (no labels, no coordinates to snap to).
    let g = d.join("g.json");
    let edges: Vec<String> = (0..20)
        .map(|i| format!("[{i}, {}, 1]", (i + 1) % 20))
        .collect();
    std::fs::write(
        &g,
        format!(
            "{{\"kind\": \"graph\", \"nodes\": 20, \"edges\": [{}]}}",
            edges.join(",")
        ),
    )
    .unwrap();
    let hg = d.join("eg.json");
    exponential_container(&g, "1", &hg);
    let out = privatize(
        &[
            "--trust-file-metric",
            "--mechanism",
            hg.to_str().unwrap(),
            "--by-index",
            "--seed",
            "2",
        ],
        "0\n7\n19\n",
    );
    succeeded(&out);
    let idx: Vec<usize> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert!(idx.len() == 3 && idx.iter().all(|&i| i < 20));
    let out = privatize(
        &[
            "--trust-file-metric",
            "--mechanism",
            hg.to_str().unwrap(),
            "--snap",
        ],
        "1,2\n",
    );
    assert_eq!(out.status.code(), Some(2));
}

/// `mdp import --container` (issue 35: import at city scale): a float64 `.npy` with its
/// space becomes a container proven by the structured audit (square with the inputs as
/// outputs, or opaque outputs), re-proven by `mdp-audit`; a claim the matrix does not meet
/// writes nothing (exit 1); a wrong shape or a memory limit is one line (exit 2).
#[test]
fn import_writes_containers() {
    let d = dir("import");
    let csv = grid_csv(&d, 50, 7);
    exponential_container(&csv, "2", &d.join("e.json"));
    let npy = d.join("e.npy");
    let run = |extra: &[&str], out_name: &str| {
        let o = d.join(out_name);
        let mut args = vec![
            "import",
            "--matrix",
            npy.to_str().unwrap(),
            "--space",
            csv.to_str().unwrap(),
            "--container",
            "-o",
            o.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        (mdp(&args), o)
    };
    for (extra, name) in [
        (&["--epsilon", "2", "--outputs-are-inputs"][..], "sq.json"),
        (&["--epsilon", "2"][..], "op.json"),
    ] {
        let (out, o) = run(extra, name);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let r = report(&audit(&["--json", o.to_str().unwrap()]));
        assert_eq!(r["verdict"], "pass", "{r}");
        assert_eq!(r["K"], 50);
        assert!(o.with_extension("npy").exists());
    }
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("op.json")).unwrap()).unwrap();
    assert_eq!(doc["outputs"]["labels"][49], "49");
    // ε = 1 is below the matrix's tight ε (≤ 2, > 1 here): refused, nothing written.
    let (out, o) = run(&["--epsilon", "1", "--outputs-are-inputs"], "no.json");
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!o.exists() && !o.with_extension("npy").exists());
    // A space of another size, and a memory limit: one line, exit 2.
    let small = d.join("small.csv");
    std::fs::write(&small, "id,x,y\na,0,0\nb,1,1\n").unwrap();
    let o = d.join("x.json");
    let out = mdp(&[
        "import",
        "--matrix",
        npy.to_str().unwrap(),
        "--space",
        small.to_str().unwrap(),
        "--epsilon",
        "2",
        "--container",
        "-o",
        o.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).lines().count(),
        1,
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (out, _) = run(&["--epsilon", "2", "--max-memory", "1K"], "m.json");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("max-memory"));
}

/// `mdp build clustered-rr` (issue 35: the clustered randomizer in the container): the
/// Chebyshev embedding realizes the clustered metric, the matrix passes at α₀ and fails at
/// 0.99·α₀ (its ratios a/b and a/c are tight), and items are named `c<c>-<i>`.
/// `mdp build clustered-rr` at α₀ = 2 into `h`, quietly.
fn clustered_rr(h: &Path, clusters: &str, size: &str, r: &str) -> Output {
    mdp(&[
        "build",
        "clustered-rr",
        "--clusters",
        clusters,
        "--size",
        size,
        "--r",
        r,
        "--epsilon",
        "2",
        "-o",
        h.to_str().unwrap(),
        "--quiet",
    ])
}

/// The k-d tree splits between clusters (`structured::tree::split_point`), so every
/// cross-cluster pair is settled by a box pair at distance 1 and only within-cluster pairs
/// reach the pair-by-pair check; 12 clusters (not a power of two) put the median inside a
/// run of equal cluster coordinates, where the former median split left cross-cluster box
/// pairs at distance 0 (≈ 12× more triples checked pair by pair at 50 × 40).
#[test]
fn clustered_randomizer_boxes_follow_the_clusters() {
    let d = dir("clustered_boxes");
    let h = d.join("rr.json");
    let (clusters, size) = (12u64, 20u64);
    let out = clustered_rr(&h, &clusters.to_string(), &size.to_string(), "1/4");
    succeeded(&out);
    let r = report(&audit(&["--json", h.to_str().unwrap()]));
    assert_eq!(r["verdict"], "pass", "{r}");
    let st = &r["stats"]["structured"];
    let passes = st["passes"].as_u64().unwrap();
    assert!(passes >= 1, "{st}");
    let k = clusters * size;
    let within = clusters * size * (size - 1) * k;
    let by_pairs = st["triples_checked_by_pairs"].as_u64().unwrap();
    assert!(
        by_pairs <= passes * within,
        "{by_pairs} triples pair by pair in {passes} passes, within-cluster {within}"
    );
    let f = st["settled_fraction"].as_f64().unwrap();
    assert!(f > 0.5 && f <= 1.0, "settled fraction per pass {f}");
}

#[test]
fn clustered_randomizer_container_is_tight() {
    let d = dir("clustered");
    let h = d.join("rr.json");
    let out = clustered_rr(&h, "4", "5", "1/4");
    succeeded(&out);
    let hs = h.to_str().unwrap();
    let r = report(&audit(&["--json", hs]));
    assert_eq!(r["verdict"], "pass", "{r}");
    let tight = r["epsilon_tight"][1].as_f64().unwrap();
    assert!(tight <= 2.0 && tight > 1.99, "tight ε {tight}");
    let r = report(&audit(&["--json", "--require-epsilon", "1.98", hs]));
    assert_eq!(r["verdict"], "fail");
    let out = privatize(
        &["--trust-file-metric", "--mechanism", hs, "--seed", "1"],
        "c0-0\nc3-4\n",
    );
    succeeded(&out);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        text.lines().all(|l| l.starts_with('c') && l.contains('-')),
        "{text}"
    );
    let out = clustered_rr(&h, "4", "5", "1");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(String::from_utf8_lossy(&out.stderr).lines().count(), 1);
}

/// A float64 `.npy` of `rows` (C order).
fn write_npy(path: &Path, rows: &[Vec<f64>]) {
    let (n, k) = (rows.len(), rows[0].len());
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': ({n}, {k}), }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    for r in rows {
        for x in r {
            bytes.extend_from_slice(&x.to_le_bytes());
        }
    }
    std::fs::write(path, bytes).unwrap();
}

/// `mdp-audit --max-exact-triples` (issue 35): the structured audit's exact budget is the
/// caller's. A container whose ratios are fl(e) < e at d = 1, ε = 1 (one ulp inside the
/// bound, where only rationals decide) passes with the default budget and stops with one
/// line and exit 2 past a budget of 1 triple; 0 is refused as a flag value.
#[test]
fn exact_budget_is_a_flag() {
    let d = dir("budget");
    let csv = d.join("two.csv");
    std::fs::write(&csv, "id,x,y\na,0,0\nb,1,0\n").unwrap();
    let e = std::f64::consts::E;
    let (a, b) = (0.25 * e, 0.25);
    let s = 1.0 - a - b;
    write_npy(&d.join("m.npy"), &[vec![a, b, s], vec![b, a, s]]);
    let h = d.join("m.json");
    succeeded(&mdp(&[
        "import",
        "--matrix",
        d.join("m.npy").to_str().unwrap(),
        "--space",
        csv.to_str().unwrap(),
        "--epsilon",
        "1",
        "--container",
        "-o",
        h.to_str().unwrap(),
    ]));
    let hs = h.to_str().unwrap();
    let r = report(&audit(&["--json", hs]));
    assert_eq!(r["verdict"], "pass", "{r}");
    let spent = r["stats"]["structured"]["exact_triples"].as_u64().unwrap();
    assert!(spent >= 2, "{r}");
    let out = audit(&["--max-exact-triples", "1", hs]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("exact triples"), "{err}");
    let out = audit(&["--max-exact-triples", &spent.to_string(), hs]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        audit(&["--max-exact-triples", "0", hs]).status.code(),
        Some(2)
    );
}

/// A road-like grid graph `w` × `h` (edges of 0.1 km, every third cell with a diagonal of
/// 0.15 km), as a JSON `graph` metric in `d`.
fn grid_graph(d: &Path, w: usize, h: usize) -> PathBuf {
    let mut edges = vec![];
    for y in 0..h {
        for x in 0..w {
            let i = y * w + x;
            if x + 1 < w {
                edges.push(format!("[{i}, {}, 0.1]", i + 1));
            }
            if y + 1 < h {
                edges.push(format!("[{i}, {}, 0.1]", i + w));
            }
            if x + 1 < w && y + 1 < h && i % 3 == 0 {
                edges.push(format!("[{i}, {}, 0.15]", i + w + 1));
            }
        }
    }
    let p = d.join("grid.json");
    std::fs::write(
        &p,
        format!(
            r#"{{"kind": "graph", "nodes": {}, "edges": [{}]}}"#,
            w * h,
            edges.join(", ")
        ),
    )
    .unwrap();
    p
}

/// The lp_dual bound a report's check proves.
fn proven_bound(r: &serde_json::Value) -> f64 {
    r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lp_dual")
        .and_then(|c| c["witness"]["bound"].as_f64())
        .unwrap_or_else(|| panic!("no lp_dual bound: {r}"))
}

/// Issue 56: `mdp build pmo --container` (the graph read as its edges, no n×n table, the
/// localized LP, the lp_dual checked from the outputs' rows) agrees with the JSON form
/// (the exact table, the exact repair) on a size both handle, and its two ways of
/// factoring the Newton systems agree (the whole reduced system's LDLᵀ, its default here,
/// and the blocks' inverses with their Schur complement, `MDP_SCHUR=sparse`): all pass
/// the audit, each certified bound lies below the other's loss, the bounds agree to 10⁻⁶,
/// and a header whose claim is raised is refused by the lp_dual check.
#[test]
fn pmo_container_agrees_with_the_json_form() {
    let d = dir("pmo");
    let g = grid_graph(&d, 24, 24);
    // The same outputs for both (spread:K breaks the grid's exact ties by float distances,
    // whose enclosures differ between the table and the kept rows).
    let outputs: Vec<usize> = [3, 9, 15, 21]
        .iter()
        .flat_map(|y| [3, 9, 15, 21].map(|x| y * 24 + x))
        .collect();
    let of = d.join("outputs.json");
    std::fs::write(&of, serde_json::to_string(&outputs).unwrap()).unwrap();
    let run = |out: &Path, container: bool, route: Option<&str>| {
        let mut args = vec![
            "build",
            "pmo",
            "--space",
            g.to_str().unwrap(),
            "--epsilon",
            "100",
            "--within",
            "0.5",
            "--outputs",
            of.to_str().unwrap(),
            "--gap",
            "1e-6",
            "-o",
            out.to_str().unwrap(),
        ];
        if container {
            args.push("--container");
        }
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_mdp"));
        cmd.args(&args).env_remove("MDP_SCHUR");
        if let Some(r) = route {
            cmd.env("MDP_SCHUR", r);
        }
        let o = cmd.output().expect("run mdp");
        succeeded(&o);
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let (hc, hj, hs) = (d.join("c.json"), d.join("j.json"), d.join("s.json"));
    let notes = run(&hc, true, None);
    assert!(notes.contains("localized LP (round 1)"), "{notes}");
    assert!(notes.contains("factored whole"), "{notes}");
    let notes = run(&hs, true, Some("sparse"));
    assert!(notes.contains("Schur complement"), "{notes}");
    run(&hj, false, None);
    let rc = report(&audit(&["--json", "--allow-scoped", hc.to_str().unwrap()]));
    let rj = report(&audit(&["--json", "--allow-scoped", hj.to_str().unwrap()]));
    let rs = report(&audit(&["--json", "--allow-scoped", hs.to_str().unwrap()]));
    for r in [&rc, &rj, &rs] {
        assert_eq!(r["verdict"], "pass", "{r}");
    }
    let (bs, ls) = (proven_bound(&rs), rs["expected_loss"][1].as_f64().unwrap());
    let (bc, bj) = (proven_bound(&rc), proven_bound(&rj));
    let (lc, lj) = (
        rc["expected_loss"][1].as_f64().unwrap(),
        rj["expected_loss"][1].as_f64().unwrap(),
    );
    assert!(bc <= lj && bj <= lc, "bounds {bc} {bj}, losses {lc} {lj}");
    assert!((bc - bj).abs() <= 1e-6 * lj, "bounds {bc} and {bj}");
    assert!(lc - bc <= 1e-6 * lc, "container: bound {bc}, loss {lc}");
    assert!(bs <= lc && bc <= ls, "bounds {bc} {bs}, losses {lc} {ls}");
    assert!(
        (bc - bs).abs() <= 1e-6 * lc,
        "the two routes' bounds {bc} and {bs}"
    );
    // The container's metric is the graph's edges, its outputs the spread inputs.
    let header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&hc).unwrap()).unwrap();
    assert_eq!(header["metric"]["kind"], "graph");
    assert_eq!(header["outputs"]["of_inputs"].as_array().unwrap().len(), 16);
    // A claim above what the multipliers prove is refused (exit 1, lp_dual failed).
    let mut forged = header.clone();
    let v = &mut forged["certificate"]["lower_bound"]["value"];
    *v = serde_json::json!(v.as_f64().unwrap() * 1.01);
    let hf = d.join("forged.json");
    std::fs::write(&hf, forged.to_string()).unwrap();
    std::fs::copy(d.join("c.npy"), d.join("forged.npy")).unwrap();
    let mut forged_header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&hf).unwrap()).unwrap();
    forged_header["matrix"]["npy"] = serde_json::json!("forged.npy");
    std::fs::write(&hf, forged_header.to_string()).unwrap();
    let out = audit(&["--json", "--allow-scoped", hf.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let r = report(&out);
    let check = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "lp_dual")
        .unwrap()
        .clone();
    assert_eq!(check["verdict"], "fail", "{check}");
    // Explicit costs are the JSON form's.
    let o = mdp(&[
        "build",
        "pmo",
        "--space",
        g.to_str().unwrap(),
        "--epsilon",
        "100",
        "--within",
        "0.5",
        "--outputs",
        "spread:4",
        "--cost",
        "x.json",
        "--container",
        "-o",
        d.join("x.json").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
}
