#!/usr/bin/env python3
"""ConstOPTMech (Imola et al. 2022 §3.2): our build against HiGHS on the same reduced LP.

For each space and n, in one run:
  OURS   `mdp build constopt --r R --lambda L --epsilon E` (one λ, so one LP): the whole
         command (LP, exact repair, packing certificate, audit) and the LP alone (the
         `seconds` of its trial in the stats line), and `mdp-audit` on the file;
  HiGHS  the reduced LP (18)–(26) exported by `mdp lp export constopt` (same ε/2, r, λ,
         same doubles) solved by highspy with solver=ipm and solver=simplex, default
         options otherwise, in a child process killed after --timeout.
Objectives are compared (relative difference to ours).

Spaces as in lp_bench.py: road = the first n records of rome500 (haversine km), text =
the first n words of english2000 (384-d MiniLM). ε = --eps-scale / median distance.

  bash benches/setup.sh && cargo build --release
  benches/.venv/bin/python benches/constopt_bench.py --spaces road text --sizes 100 200 300 400
Writes benches/reports/constopt_n400.{md,csv}.
"""
from __future__ import annotations

import argparse, csv, json, os, platform, sys, tempfile, time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import lp_bench as lb  # noqa: E402  (helpers: spaces, processes, the HiGHS worker)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--spaces", nargs="+", default=["road", "text"])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 300, 400])
    ap.add_argument("--r", type=int, default=10)
    ap.add_argument("--lambda", dest="lam", type=float, default=0.1)
    ap.add_argument("--eps-scale", type=float, default=2.0)
    ap.add_argument("--timeout", type=float, default=600.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--text-vocab", default="english2000")
    ap.add_argument("--mdp-bin", type=Path, default=lb.REPO / "target" / "release" / "mdp")
    ap.add_argument("--audit-bin", type=Path, default=lb.REPO / "target" / "release" / "mdp-audit")
    ap.add_argument("--out", type=Path, default=HERE / "reports" / "constopt_n400")
    args = ap.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        for space in args.spaces:
            for n in args.sizes:
                metric, D, desc = lb.make_space(space, n, args)
                eps = args.eps_scale / lb.median_offdiag(D)
                sfile = work / f"{space}{n}.json"
                lb.write_json(sfile, metric)
                common = ["--space", sfile, "--epsilon", repr(eps), "--r", str(args.r)]
                out = work / "c.json"
                r = lb.run_proc([args.mdp_bin, "build", "constopt", *common, "--lambda",
                                 repr(args.lam), "-o", out], args.timeout)
                st = lb.parse_stats_line(r["stderr"]) or {}
                co = st.get("constopt", {})
                trial = (co.get("trials") or [{}])[0]
                audit = {}
                if r["status"] == "ok":
                    a = lb.run_proc([args.audit_bin, "--json", out], args.timeout)
                    audit = json.loads(a["stdout"]) if a["stdout"].strip() else {}
                mps = work / "c.mps"
                e = lb.run_proc([args.mdp_bin, "lp", "export", "constopt", *common, "--lambda",
                                 repr(args.lam), "-o", mps], args.timeout)
                highs = {}
                for solver in ("ipm", "simplex"):
                    highs[solver] = (lb.run_worker(["--worker-highs", str(mps), solver, str(args.timeout)],
                                                   args.timeout + 60)
                                     if e["status"] == "ok" else {"status": "export failed"})
                ours_obj = trial.get("lp_objective")

                def rel(h):
                    if h.get("status") != "ok" or ours_obj is None:
                        return None
                    return abs(h["objective"] - ours_obj) / max(abs(ours_obj), 1e-300)

                row = {
                    "space": space, "n": n, "epsilon": round(eps, 6), "r": args.r, "lambda": args.lam,
                    "lp_variables": co.get("lp", {}).get("variables"),
                    "lp_rows": co.get("lp", {}).get("rows"),
                    "lp_nonzeros": co.get("lp", {}).get("nonzeros"),
                    "ours_status": r["status"], "ours_lp_seconds": trial.get("seconds"),
                    "ours_total_seconds": round(r["seconds"], 3), "ours_lp_objective": ours_obj,
                    "ours_loss_max": st.get("loss_max", [None, None])[1],
                    "audit": audit.get("verdict"),
                    "highs_ipm_status": highs["ipm"].get("status"),
                    "highs_ipm_seconds": highs["ipm"].get("seconds_run"),
                    "highs_ipm_rel_obj_diff": rel(highs["ipm"]),
                    "highs_simplex_status": highs["simplex"].get("status"),
                    "highs_simplex_seconds": highs["simplex"].get("seconds_run"),
                    "highs_simplex_rel_obj_diff": rel(highs["simplex"]),
                }
                best = min([h.get("seconds_run") for h in highs.values() if h.get("status") == "ok"]
                           or [None], key=lambda x: x or 1e300)
                row["highs_best_over_ours_lp"] = (round(best / row["ours_lp_seconds"], 2)
                                                  if best and row["ours_lp_seconds"] else None)
                print(json.dumps(row), flush=True)
                rows.append(row)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    keys = list(rows[0].keys())
    with open(args.out.with_suffix(".csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    with open(args.out.with_suffix(".md"), "w") as f:
        f.write("# ConstOPTMech: our build vs HiGHS on the same reduced LP\n\n")
        f.write(f"Generated {time.strftime('%Y-%m-%dT%H:%M:%S')} by `benches/constopt_bench.py "
                f"{' '.join(sys.argv[1:])}` on {os.cpu_count()} × "
                f"{platform.processor() or platform.machine()}.\n\n")
        f.write("ours_lp_seconds: the reduced LP's solve inside `mdp build constopt` (one λ; its default --solver auto, spec/lp.md §4.5); "
                "ours_total_seconds: the whole command (LP, exact repair, packing certificate, "
                "writing); HiGHS: solve time (`run()`, file reading excluded) on the MPS export of "
                "the same LP. highs_best_over_ours_lp = the faster HiGHS solver's time / ours.\n\n")
        f.write("| " + " | ".join(keys) + " |\n|" + "---|" * len(keys) + "\n")
        for r in rows:
            f.write("| " + " | ".join("" if r[k] is None else
                                      (f"{r[k]:.4g}" if isinstance(r[k], float) else str(r[k]))
                                      for k in keys) + " |\n")
    print(f"wrote {args.out.with_suffix('.md')}")


if __name__ == "__main__":
    main()
