#!/usr/bin/env bash
# Line coverage of the trusted kernel (audit/src) by the kernel's own suite (issue 55 part 5):
# `cargo test -p mdp-audit` built with `-C instrument-coverage`, the raw profiles merged and
# reported with the toolchain's own llvm-profdata / llvm-cov (rustup component llvm-tools; the
# same tools cargo-llvm-cov drives). Writes benches/reports/coverage_kernel.txt (per file) and
# benches/reports/coverage_kernel_uncovered.txt (the uncovered lines, file:line).
#
# Usage: bash benches/coverage.sh    (about 10 minutes on the 2-core machine; outside CI)
set -euo pipefail
cd "$(dirname "$0")/.."
sysroot=$(rustc --print sysroot)
tools="$sysroot/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin"
[ -x "$tools/llvm-cov" ] || { echo "llvm-tools missing: rustup component add llvm-tools" >&2; exit 2; }
dir=target/cov
rm -rf "$dir/prof" && mkdir -p "$dir/prof"
export RUSTFLAGS="-C instrument-coverage"
export LLVM_PROFILE_FILE="$PWD/$dir/prof/%p-%m.profraw"
export CARGO_TARGET_DIR="$dir"
cargo test --release -p mdp-audit --no-fail-fast 2>&1 | grep -E "^test result" || true
"$tools/llvm-profdata" merge -sparse "$dir"/prof/*.profraw -o "$dir/kernel.profdata"
# Every test binary of the package (unit, integration, doc tests are not instrumented here).
objects=()
while IFS= read -r f; do objects+=(--object "$f"); done < <(
  cargo test --release -p mdp-audit --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] != ["custom-build"]:
        print(m["executable"])')
ignore='(/\.cargo/registry/|/rustc/|/audit/tests/|/tests\.rs$)'
"$tools/llvm-cov" report "${objects[@]}" --instr-profile "$dir/kernel.profdata" \
  --ignore-filename-regex "$ignore" > benches/reports/coverage_kernel.txt
"$tools/llvm-cov" show "${objects[@]}" --instr-profile "$dir/kernel.profdata" \
  --ignore-filename-regex "$ignore" --show-line-counts-or-regions --format=text |
  python3 -c 'import re,sys
cur = None
for l in sys.stdin:
    if l.startswith("/") and l.rstrip().endswith(":"):
        cur = l.rstrip()[:-1]
        continue
    m = re.match(r"\s*(\d+)\|\s*0\|(.*)", l)
    if cur and m:
        name = cur.split("/audit/")[-1]
        print(name + ":" + m.group(1) + ": " + m.group(2).strip())' \
  > benches/reports/coverage_kernel_uncovered.txt
tail -1 benches/reports/coverage_kernel.txt
