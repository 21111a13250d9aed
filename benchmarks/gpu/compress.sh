#!/usr/bin/env bash
# Compressed communication on the GPU, in two halves because the GPU machine
# has no LLVM or MLIR:
#
#   benchmarks/gpu/compress.sh prepare DIR   (here, with zero built in build/)
#       qwz_loop.mlir.in at N = 2, 4, 8, sharded with the weights' gather
#       deferred and sent in int8 (zero-weight-update-sharding{defer-all-
#       gather gather-dtype=int8 quantize-block=64}): its cuda artifact, and
#       the same compressed program's results on the CPU (zero-run);
#   benchmarks/gpu/compress.sh run DIR       (on the GPU machine)
#       builds runtime/ alone and runs each artifact on N ranks of
#       cuda-local (quantization as kernels, the int8 levels and f32 scales
#       gathered by cuda-local's kernels), which must give the CPU's results
#       bit for bit; then zero-collective-check on cuda-local at N = 1, 2,
#       4, 8, every dtype (int8 included) checked element by element.
#
# It prints one line per run and a summary; a mismatch fails it.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
pipeline="zero-weight-update-sharding{defer-all-gather gather-dtype=int8 quantize-block=64}"

prepare() {
  for n in 2 4 8; do
    local case=$dir/qwz/$n
    mkdir -p "$case"
    sed "s/@RANKS@/$n/" "$root/benchmarks/gpu/qwz_loop.mlir.in" \
      >"$case/program.mlir"
    "$bin/zero-run" "$case/program.mlir" --ranks "$n" --passes="$pipeline" \
      --per-rank 1 --output-dir "$case/cpu" >/dev/null
    "$bin/zero-compile" --target=cuda "$case/program.mlir" \
      --passes="$pipeline" -o "$case/qwz.so"
    echo "prepared qwz N=$n"
  done
}

run() {
  local rt=$dir/runtime-build
  build_runtime "$rt"
  local failures=0 runs=0 out
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  for n in 2 4 8; do
    local case=$dir/qwz/$n
    runs=$((runs + 1))
    if out=$(timeout 120 "$rt/zero-launch" "$case/qwz.so" --ranks "$n" \
               --generate --per-rank 1 --expect "$case/cpu" --max-ulp 0 2>&1); then
      echo "qwz N=$n ok (int8 gathers on cuda-local, bit-identical to the CPU)"
    else
      failures=$((failures + 1))
      printf 'qwz N=%s FAIL\n%s\n' "$n" "$out"
    fi
  done
  for n in 1 2 4 8; do
    runs=$((runs + 1))
    if out=$(timeout 120 "$rt/zero-collective-check" --backend cuda-local \
               --ranks "$n" 2>&1); then
      echo "collectives N=$n: ok (${out##*$'\n'})"
    else
      failures=$((failures + 1))
      printf 'collectives N=%s FAIL\n%s\n' "$n" "$out"
    fi
  done
  echo "gpu compress: $runs runs, $failures failed"
  [[ $failures == 0 ]]
}

"$mode"
