#!/usr/bin/env bash
# The GPU check of the examples, in two halves because the GPU machine has no
# LLVM or MLIR:
#
#   benchmarks/gpu/check.sh prepare DIR   (here, with zero built in build/)
#       for every example program and N = 1, 2, 4, 8: its inputs and its
#       results on the CPU (zero-run, local backend), and cuda artifacts of the
#       program as given and after each sharding pipeline (zero-compile);
#   benchmarks/gpu/check.sh run DIR       (on the GPU machine)
#       builds runtime/ alone, runs every artifact with zero-launch on N
#       ranks (one GPU; kernels on the device, collectives between the ranks'
#       threads), and compares: each sharded program with the program as
#       given on the GPU, bit for bit; the program as given on the GPU with
#       the CPU, within GPU_MAX_ULP (default 64) units in the last place.
#
# It prints one line per run and a summary; a mismatch fails it.
set -euo pipefail
mode=${1:-}
dir=${2:-}
[[ ( $mode == prepare || $mode == run ) && -n $dir ]] ||
  { echo "usage: $0 prepare|run DIR" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=${ZERO_BIN:-$root/build/bin}

# Each example with the inputs its lit test gives it (per-rank gradients,
# ranges that keep second moments non-negative and step counts positive) and
# the bound of its sharded programs: bit for bit, except where sharding
# changes the order of a norm's sum (--max-ulp, as in the lit tests).
# momentum_sgd is left out: its inputs and results (37 MB per N) do not fit
# in what travels to the GPU machine.
examples=(
  "adagrad --per-rank 2 --range 1=0:1"
  "adam --per-rank 3 --range 2=0:1 --range 4=1:100"
  "adamw --per-rank 3,7 --range 2=0:1 --range 6=0:1 --range 8=1:100"
  "hybrid_mesh --per-rank 2"
  "lamb --per-rank 3 --range 2=0:1 --range 4=1:100 --max-ulp 8"
  "mixed_precision --per-rank 2"
  "mixed_precision_loop --per-rank 4"
  "mlp_training --per-rank 2"
  "momentum_loop --per-rank 2"
  "nesterov --per-rank 2"
  "sgd --per-rank 2,3"
  "sgd_clipping --per-rank 2,3 --max-ulp 8"
  "sgd_loss_scaling --per-rank 1 --range 2=1:100"
)
pipelines=(
  "sharded=zero-weight-update-sharding"
  "overlap=zero-weight-update-sharding{overlap}"
  "stage3=zero-shard-weight-update{stage=3},canonicalize,cse"
)

prepare() {
  mkdir -p "$dir"
  for spec in "${examples[@]}"; do
    read -r name args <<<"$spec"
    for n in 1 2 4 8; do
      local src=$root/examples/$name.mlir case=$dir/$name/$n
      if [[ $name == hybrid_mesh ]]; then
        [[ $n == 8 ]] || continue # a 2x4 mesh
      fi
      mkdir -p "$case"
      [[ $args != *--max-ulp* ]] || echo "${args##*--max-ulp }" >"$case/max-ulp"
      sed -E "s/zero.mesh @dp\(shape = \[[0-9]+\]\)/zero.mesh @dp(shape = [$n])/" \
        "$src" >"$case/program.mlir"
      local inputs=${args%--max-ulp*}
      # shellcheck disable=SC2086
      "$bin/zero-run" "$case/program.mlir" --ranks "$n" $inputs \
        --write-inputs "$case/in" --output-dir "$case/cpu" >/dev/null
      "$bin/zero-compile" --target=cuda "$case/program.mlir" -o "$case/given.so"
      for p in "${pipelines[@]}"; do
        "$bin/zero-compile" --target=cuda "$case/program.mlir" \
          --passes="${p#*=}" -o "$case/${p%%=*}.so"
      done
      echo "prepared $name N=$n"
    done
  done
}

run() {
  local rt=$dir/runtime-build
  cmake -G Ninja -S "$root/runtime" -B "$rt" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$rt" >/dev/null
  local launch=$rt/zero-launch failures=0 runs=0
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  for case in "$dir"/*/*/; do
    case=${case%/}
    [[ -f $case/given.so ]] || continue
    local sharded_ulp=0
    [[ ! -f $case/max-ulp ]] || sharded_ulp=$(cat "$case/max-ulp")
    local n=${case##*/} name
    name=$(basename "$(dirname "$case")")
    local args=()
    for f in "$case"/in/rank0/arg*.npy; do
      local i=${f##*/arg}
      i=${i%.npy}
      args+=(--arg "$i=$case/in/rank{rank}/arg$i.npy")
    done
    for variant in given sharded overlap stage3; do
      local expect=$case/gpu-given max=$sharded_ulp
      if [[ $variant == given ]]; then
        expect=$case/cpu
        max=${GPU_MAX_ULP:-64}
      fi
      runs=$((runs + 1))
      if out=$(timeout 120 "$launch" "$case/$variant.so" --ranks "$n" "${args[@]}" \
                 --output-dir "$case/gpu-$variant" --expect "$expect" \
                 --max-ulp "$max" 2>&1); then
        worst=$(grep -o "at most [0-9]* ulp" <<<"$out" | awk '{print $3}' |
                sort -n | tail -1 || true)
        summary="bit-identical"
        [[ -z $worst ]] || summary="at most $worst ulp"
        printf '%-22s N=%s %-8s ok   (against %s: %s)\n' "$name" "$n" \
          "$variant" "${expect##*/}" "$summary"
      else
        failures=$((failures + 1))
        printf '%-22s N=%s %-8s FAIL\n%s\n' "$name" "$n" "$variant" "$out"
      fi
    done
  done
  echo "gpu check: $runs runs, $failures failed"
  [[ $failures == 0 ]]
}

"$mode"
