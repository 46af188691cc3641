#!/usr/bin/env bash
# Throughput of `mdp privatize` (issue 33: ≥ 1 M records/s): the exponential mechanism on
# builtin:rome100 (ε = 0.5/km), 2 000 000 records drawn uniformly from its labels, as plain
# lines and as CSV (user_id,poi → user_id,poi,poi_private), written atomically to a file.
# Whole command (gate audit included), median of 3 runs after a warm-up.
# Usage: benches/privatize_throughput.sh [N]   (needs a release build and python3)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-2000000}
work=$(mktemp -d)
mdp=target/release/mdp
$mdp build exponential --space builtin:rome100 --epsilon 0.5 -o "$work/mech.json" 2>/dev/null
python3 - "$work" "$n" <<'PY'
import csv, random, sys
work, n = sys.argv[1], int(sys.argv[2])
labels = [r[0] for r in list(csv.reader(open("audit/src/builtin/rome100.csv")))[1:]]
rng = random.Random(1)
with open(f"{work}/rec.txt", "w") as f:
    for _ in range(n):
        f.write(labels[rng.randrange(len(labels))] + "\n")
with open(f"{work}/rec.csv", "w") as f:
    f.write("user_id,poi\n")
    for i in range(n):
        f.write(f"u{i},{labels[rng.randrange(len(labels))]}\n")
PY
median() { sort -n | sed -n 2p; }
for fmt in lines csv; do
  times=()
  for run in 0 1 2 3; do
    if [ "$fmt" = lines ]; then
      args=(--input "$work/rec.txt" -o "$work/out.txt")
    else
      args=(--format csv --column poi --input "$work/rec.csv" -o "$work/out.csv")
    fi
    s=$(date +%s.%N)
    $mdp privatize --mechanism "$work/mech.json" "${args[@]}" 2>/dev/null
    e=$(date +%s.%N)
    [ "$run" -gt 0 ] && times+=("$(echo "$e - $s" | bc -l)")
  done
  med=$(printf '%s\n' "${times[@]}" | median)
  echo "$fmt: $n records, median $med s, $(echo "$n / $med / 1000000" | bc -l | cut -c1-5) M records/s"
done
rm -rf "$work"
