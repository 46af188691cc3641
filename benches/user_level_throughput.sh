#!/usr/bin/env bash
# Throughput of the user-level releases (issue: 10^6 users x 30 items) and the accountant's
# time at N = 10^8, on this machine. Outside CI: writes benches/reports/user_level_throughput.md.
#   bash benches/user_level_throughput.sh [USERS]      # default 1000000
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$HERE/.."
cargo build --release --quiet
MDP=target/release/mdp
N="${1:-1000000}"
T="$(mktemp -d)"
python3 - "$N" "$T/users.jsonl" <<'PY'
import random, sys
n, path = int(sys.argv[1]), sys.argv[2]
r = random.Random(1)
with open(path, "w") as f:
    for _ in range(n):
        f.write("[" + ",".join(str(r.randrange(100)) for _ in range(30)) + "]\n")
PY
$MDP build exponential --space builtin:rome100 --epsilon 0.5 -o "$T/exp.json" >/dev/null 2>&1
run() { # name, command...
  local name="$1"; shift
  local s e
  s=$(date +%s.%N); "$@" >"$T/out" 2>"$T/err"; e=$(date +%s.%N)
  local secs; secs=$(python3 -c "print(f'{$e - $s:.2f}')")
  local rate; rate=$(python3 -c "print(f'{$N / ($e - $s):,.0f}')")
  echo "| $name | $secs | $rate |"
}
{
  echo "# User-level releases: throughput ($(date -u +%F), $(nproc) cores)"
  echo
  echo "$N users × 30 items of builtin:rome100 (JSON lines, $(du -h "$T/users.jsonl" | cut -f1)); one run each, wall time including parsing."
  echo
  echo "| command | seconds | users / s |"
  echo "|---|---|---|"
  run "release item-wise --model central (exact sampling of the audited rows, counts)" $MDP release item-wise --mechanism "$T/exp.json" --users "$T/users.jsonl" -o "$T/o1"
  run "release item-wise --model local (one shuffled list per user)" $MDP release item-wise --mechanism "$T/exp.json" --users "$T/users.jsonl" --model local -o "$T/o2"
  run "release linear --model local (average location, K-norm l2, one release per user)" $MDP release linear --space builtin:rome100 --users "$T/users.jsonl" --alpha 1 -o "$T/o3"
  run "release linear --model central (exact sums, one release)" $MDP release linear --space builtin:rome100 --users "$T/users.jsonl" --alpha 1 --model central -o "$T/o4"
  echo
  s=$(date +%s.%N)
  for i in $(seq 1 20); do $MDP account item-wise --items 30 --users 3333334 --alpha 1 --delta 1e-6 >/dev/null; done
  e=$(date +%s.%N)
  echo "Accountant at N = 10^8 (n = 3 333 334 users × 30 items, inverse: the largest α₀ for α = 1, δ = 10⁻⁶, directed rounding, 40 bisection steps): $(python3 -c "print(f'{($e - $s) / 20:.3f}')") s per call including process start (mean of 20)."
  echo
  echo '```'
  $MDP account item-wise --items 30 --users 3333334 --alpha 1 --delta 1e-6
  echo '```'
} | tee benches/reports/user_level_throughput.md
rm -rf "$T"
