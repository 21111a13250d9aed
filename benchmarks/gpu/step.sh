#!/usr/bin/env bash
# A whole sharded training step on one GPU, N = 4 ranks of the cuda-local
# backend, in two halves because the GPU machine has no LLVM or MLIR:
#
#   benchmarks/gpu/step.sh prepare DIR   (here, with zero built in build/)
#       an MLP training loop (zero-gen-mlp: LAYERS square layers of WIDTH,
#       BATCH rows per rank, STEPS steps of SGD; defaults 8, 2048, 512, 4),
#       compiled for the GPU as given (gradients all-reduced), sharded
#       (reduce-scatter, the update on the shard, all-gather) and sharded
#       with the overlap schedule (gathers deferred and prefetched across the
#       loop's back edge, collectives started early and awaited late);
#   benchmarks/gpu/step.sh run DIR       (on the GPU machine)
#       builds the runtime alone and runs each with zero-launch on cuda-local
#       (matmuls on cuBLAS, collectives on each group leader's communication
#       stream), with generated inputs; prints the time per step (the slowest
#       rank, best of REPEAT runs), the matmul rate, and what the overlap
#       schedule saves against the sharded program without it; then one
#       traced run of each sharded program and the share of communication
#       hidden under computation, both read from the device's clock
#       (hidden.py). The sharded programs' results must equal the program
#       as given, bit for bit.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
layers=${LAYERS:-8} width=${WIDTH:-2048} batch=${BATCH:-512}
steps=${STEPS:-4} repeat=${REPEAT:-5}
variants=(
  "given="
  "sharded=zero-weight-update-sharding"
  "overlap=zero-weight-update-sharding{defer-all-gather overlap}"
)

prepare() {
  mkdir -p "$dir"
  "$bin/zero-gen-mlp" --layers "$layers" --width "$width" --batch "$batch" \
    --steps "$steps" --mesh 4 >"$dir/mlp.mlir"
  echo "$layers $width $batch $steps" >"$dir/sizes"
  for v in "${variants[@]}"; do
    local name=${v%%=*} passes=${v#*=}
    "$bin/zero-compile" --target=cuda "$dir/mlp.mlir" ${passes:+--passes="$passes"} \
      -o "$dir/$name.so" --print-description |
      grep -E '"memory"|"memory_reason"' | sed "s/^/$name: /"
  done
  echo "prepared: $layers layers of ${width}x$width, batch $batch, $steps steps, N = 4"
}

# The slowest rank's best time in ms, from zero-launch's "rank R: T ms;".
slowest() { sed -n 's/^rank [0-9]*: \([0-9.]*\) ms;.*/\1/p' | sort -g | tail -1; }

run() {
  local rt=$dir/runtime-build
  build_runtime "$rt"
  read -r layers width batch steps <"$dir/sizes"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  # x, the batch, is the last argument and differs per rank.
  local args=(--generate --per-rank "$layers" --repeat "$repeat")
  local flops
  flops=$(awk -v l="$layers" -v w="$width" -v b="$batch" \
    'BEGIN { print 4 * 6 * b * w * w * l }') # 4 ranks; forward and backward
  declare -A ms
  for v in "${variants[@]}"; do
    local name=${v%%=*} out against=()
    [[ $name == given ]] && against=(--output-dir "$dir/out-given") ||
      against=(--expect "$dir/out-given" --max-ulp 0)
    out=$("$rt/zero-launch" "$dir/$name.so" "${args[@]}" "${against[@]}" 2>&1) ||
      { echo "$name: FAIL"; echo "$out"; exit 1; }
    ms[$name]=$(slowest <<<"$out")
    awk -v n="$name" -v t="${ms[$name]}" -v s="$steps" -v f="$flops" \
      'BEGIN { printf "%-8s %8.3f ms a step  (matmuls at %.1f TFLOP/s)\n", n, t / s, f / (t / s) / 1e9 }'
    grep -E "^rank 0:|bit-identical|differ" <<<"$out" | head -3 | sed 's/^/  /'
  done
  awk -v s="${ms[sharded]}" -v o="${ms[overlap]}" \
    'BEGIN { printf "overlap schedule: %.1f%% less time a step than sharded without it\n", (s - o) / s * 100 }'
  # One traced run of each sharded program: both tracks from the device's
  # clock (kernels and cuBLAS calls; collectives), and how much of the
  # communication ran under computation.
  for name in sharded overlap; do
    "$rt/zero-launch" "$dir/$name.so" --generate --per-rank "$layers" \
      --trace "$dir/trace-$name.json" >/dev/null
  done
  python3 "$root/benchmarks/gpu/hidden.py" "$dir/trace-sharded.json" \
    "$dir/trace-overlap.json"
}

"$mode"
