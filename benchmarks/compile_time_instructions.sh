#!/usr/bin/env bash
# Instructions the zero pipeline and canonicalize+cse execute on the programs
# zero-bench-compile-time times (AdamW over 1k, 4k, 16k tensors of transformer
# shapes), counted by callgrind inside PassManager::run. Unlike wall time,
# the count does not depend on how much of the IR the caches hold, so its
# growth per doubling is the pipeline's own.
#
# Usage: benchmarks/compile_time_instructions.sh [BUILD_DIR] [COUNTS...]
set -euo pipefail
build=${1:-build}
shift || true
counts=("$@")
[ ${#counts[@]} -gt 0 ] || counts=(1000 4000 16000)
command -v valgrind >/dev/null || { echo "needs valgrind (apt install valgrind)"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

instructions() { # FILE PIPELINE
  valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    --toggle-collect='mlir::PassManager::run(*' \
    "$build/bin/zero-opt" "$1" --mlir-disable-threading \
    --pass-pipeline="builtin.module($2)" -o /dev/null 2>&1 |
    sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%8s %16s %16s %8s %13s %13s\n' tensors "canon+cse instr" "zero instr" \
  ratio "per doubling" "(canon+cse)"
prev=0 prevBase=0 prevCount=0
for n in "${counts[@]}"; do
  "$build/bin/zero-gen-step" --tensors "$n" --mesh 8 >"$work/p.mlir"
  base=$(instructions "$work/p.mlir" canonicalize,cse)
  zero=$(instructions "$work/p.mlir" zero-weight-update-sharding)
  awk -v n="$n" -v b="$base" -v z="$zero" -v pz="$prev" -v pb="$prevBase" \
    -v pn="$prevCount" 'BEGIN {
      g = "-"; gb = "-";
      if (pn > 0) { d = log(n / pn) / log(2);
        g = sprintf("%.2fx", (z / pz) ^ (1 / d));
        gb = sprintf("%.2fx", (b / pb) ^ (1 / d)); }
      printf "%8d %16.0f %16.0f %7.2fx %13s %13s\n", n, b, z, z / b, g, gb }'
  prev=$zero prevBase=$base prevCount=$n
done
