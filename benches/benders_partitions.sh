#!/usr/bin/env bash
# Issue 12's comparison of partitioning methods on Rome500 (eps = 10/km, eta = 2 km, K = 100
# outputs, task-2 costs): boundary (master) records, subset count and sizes, and the time
# and bounds of the first Benders iterations, for each method x master set x C.
# Outside CI: writes benches/reports/benders_partitions.md.
#   bash benches/benders_partitions.sh [ITERS]     # default 3 iterations per run
#   METHODS="km-adj bsc" MASTERS=cover OUT=benches/reports/x.md bash benches/benders_partitions.sh
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
cargo build --release --quiet
MDP=target/release/mdp
DATA=../shared/data/rome500
ITERS="${1:-3}"
T="$(mktemp -d)"
python3 - "$DATA" "$T" <<'PY'
import csv, json, sys
data, work = sys.argv[1], sys.argv[2]
outs = [int(r["record"]) - 1 for r in csv.DictReader(open(f"{data}/obf_loc.csv"))]
json.dump(outs, open(f"{work}/outputs.json", "w"))
rows = [l.strip().split(",") for l in open(f"{data}/cost_matrix_task2_obfloc.csv") if l.strip()]
open(f"{work}/cost.json", "w").write("[" + ",".join("[" + ",".join(r) + "]" for r in rows) + "]")
PY
{
  echo "# Benders on Rome500: partitioning methods ($(date -u +%F), $(nproc) cores)"
  echo
  echo "ε = 10/km, η = 2 km, K = 100 outputs (obf_loc), task-2 costs, uniform prior, seed 1; $ITERS master iterations per run (\`--max-iter $ITERS\`), so LB/UB are early bounds, not the optimum (the certified gap is verified by the audit of the written file)."
  echo
  echo "| method | master | C | subsets | master records | largest subproblem | LB after $ITERS | UB after $ITERS | seconds |"
  echo "|---|---|---|---|---|---|---|---|---|"
  for method in ${METHODS:-km-rec km-dv km-adj bsc}; do
    for master in ${MASTERS:-cover boundary}; do
      for c in 8 16 34; do
        s=$(date +%s.%N)
        $MDP build benders --space "$DATA/records.csv" --epsilon 10 --within 2 \
          --outputs "$T/outputs.json" --cost "$T/cost.json" --partitions $c \
          --partitioning $method --master $master --max-iter "$ITERS" --seed 1 \
          -o "$T/b.json" 2>"$T/err" >/dev/null || true
        e=$(date +%s.%N)
        python3 - "$T/err" "$method" "$master" "$c" "$(python3 -c "print(f'{$e - $s:.1f}')")" <<'PY'
import re, sys
err, method, master, c, secs = sys.argv[1:]
text = open(err).read()
m = re.search(r"benders: (\d+) records, (\d+) components, (\d+) subsets, (\d+) master records \((\w+)\), largest subproblem (\d+) records", text)
its = re.findall(r"benders: iter\s+\d+\s+LB (\S+)\s+UB (\S+)", text)
lb, ub = its[-1] if its else ("-", "-")
if m:
    print(f"| {method} | {master} | {c} | {m.group(3)} | {m.group(4)} | {m.group(6)} | {lb} | {ub} | {secs} |")
else:
    last = text.strip().splitlines()[-1] if text.strip() else "no output"
    print(f"| {method} | {master} | {c} | – | – | – | error: {last[:60]} | | {secs} |")
PY
      done
    done
  done
} | tee "${OUT:-benches/reports/benders_partitions.md}"
rm -rf "$T"
