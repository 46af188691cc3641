#!/usr/bin/env bash
# Mutation campaigns on the trusted kernel (issue 55 part 1; report: benches/reports/mutants.md).
# Each mutant of the named kernel files is built in a copy of the tree and the kernel's own
# suite (`cargo test -p mdp-audit`: its unit tests and audit/tests/*.rs) is run against it;
# a mutant the suite does not fail is "missed". Outside CI: 10–15 s a mutant on the 2-core
# machine after a 5-minute baseline build, so a file of 500 mutants is a two-hour campaign.
#
# Usage: bash benches/mutants.sh OUT_DIR FILE [FILE ...] [-- extra cargo-mutants flags]
#   e.g. bash benches/mutants.sh /tmp/mut audit/src/loss.rs audit/src/dense.rs
#        bash benches/mutants.sh /tmp/mut audit/src/privacy.rs -- --re "check_pure|ratio_within"
# Needs cargo-mutants (`cargo install cargo-mutants --locked`; 27.1.0 here).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
shift
files=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  files+=(-f "$1")
  shift
done
[ "${1:-}" = "--" ] && shift
cargo mutants -p mdp-audit "${files[@]}" --timeout 300 -o "$out" "$@"
