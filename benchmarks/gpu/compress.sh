#!/usr/bin/env bash
# Compressed communication on the GPU, in two halves because the GPU machine
# has no LLVM or MLIR:
#
#   benchmarks/gpu/compress.sh prepare DIR   (here, with zero built in build/)
#       qwz_loop.mlir.in at N = 2, 4, 8, sharded three ways: the weights'
#       gather deferred and sent in int8 (qwz: zero-weight-update-sharding{
#       defer-all-gather gather-dtype=int8 quantize-block=64}), the
#       gradients' reduce-scatter as an int8 all-to-all summed in f32 (qgz:
#       reduce-dtype=int8), and both; each one's cuda artifact, and the same
#       compressed program's results on the CPU (zero-run);
#   benchmarks/gpu/compress.sh run DIR       (on the GPU machine)
#       builds runtime/ alone and runs each artifact on N ranks of
#       cuda-local (quantization as kernels, the int8 levels and f32 scales
#       gathered or exchanged all-to-all by cuda-local's kernels), which must
#       give the CPU's results bit for bit; then zero-collective-check on
#       cuda-local at N = 1, 2, 4, 8, every collective (all_to_all included)
#       and dtype (int8 included) checked element by element.
#
# It prints one line per run and a summary; a mismatch fails it.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
# name=options of zero-weight-update-sharding.
variants=(
  "qwz=defer-all-gather gather-dtype=int8 quantize-block=64"
  "qgz=reduce-dtype=int8 quantize-block=64"
  "qwz+qgz=defer-all-gather gather-dtype=int8 reduce-dtype=int8 quantize-block=64"
)
declare -A what=([qwz]="int8 gathers" [qgz]="int8 all-to-all reductions"
                 [qwz+qgz]="int8 gathers and all-to-all reductions")

prepare() {
  for v in "${variants[@]}"; do
    local name=${v%%=*} pipeline="zero-weight-update-sharding{${v#*=}}"
    for n in 2 4 8; do
      local case=$dir/$name/$n
      mkdir -p "$case"
      sed "s/@RANKS@/$n/" "$root/benchmarks/gpu/qwz_loop.mlir.in" \
        >"$case/program.mlir"
      "$bin/zero-run" "$case/program.mlir" --ranks "$n" --passes="$pipeline" \
        --per-rank 1 --output-dir "$case/cpu" >/dev/null
      "$bin/zero-compile" --target=cuda "$case/program.mlir" \
        --passes="$pipeline" -o "$case/program.so"
      echo "prepared $name N=$n"
    done
  done
}

run() {
  local rt=$dir/runtime-build
  build_runtime "$rt"
  local failures=0 runs=0 out
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  for v in "${variants[@]}"; do
    local name=${v%%=*}
    for n in 2 4 8; do
      local case=$dir/$name/$n
      runs=$((runs + 1))
      if out=$(timeout 120 "$rt/zero-launch" "$case/program.so" --ranks "$n" \
                 --generate --per-rank 1 --expect "$case/cpu" --max-ulp 0 2>&1); then
        echo "$name N=$n ok (${what[$name]} on cuda-local, bit-identical to the CPU)"
      else
        failures=$((failures + 1))
        printf '%s N=%s FAIL\n%s\n' "$name" "$n" "$out"
      fi
    done
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
