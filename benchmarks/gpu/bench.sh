#!/usr/bin/env bash
# The fused AdamW update on the GPU, in two halves because the GPU machine
# has no LLVM or MLIR:
#
#   benchmarks/gpu/bench.sh prepare DIR   (here, with zero built in build/)
#       artifacts of adamw_shard.mlir.in for one shard of N = 8 of GPT-2
#       small (124,439,808 parameters) and of GPT-2 XL (1,557,611,200: the
#       1.5B model), compiled for the GPU (device memory, one kernel);
#   benchmarks/gpu/bench.sh run DIR       (on the GPU machine)
#       builds the runtime and zero-bench-gpu-update alone, and for each
#       shard prints zero's update against a device-to-device copy of the
#       same bytes (target: at least 0.9 of the copy's rate), and PyTorch's
#       AdamW(fused=True) plus the bf16 copy on the same shard (target: zero
#       at least 1.1x faster).
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
# name=elements: a shard of N = 8, rounded up.
shards=("gpt2-small=15554976" "gpt2-xl-1.5b=194701400")

prepare() {
  mkdir -p "$dir"
  for shard in "${shards[@]}"; do
    local name=${shard%%=*} elements=${shard#*=}
    sed "s/@ELEMENTS@/$elements/g" "$root/benchmarks/gpu/adamw_shard.mlir.in" \
      >"$dir/$name.mlir"
    "$bin/zero-compile" --target=cuda "$dir/$name.mlir" -o "$dir/$name.so" \
      --print-description | grep -q '"memory": "device"' ||
      { echo "$name: not in device memory" >&2; exit 1; }
    echo "prepared $name ($elements elements)"
  done
}

run() {
  local build=$dir/bench-build
  cmake -G Ninja -S "$root/benchmarks/gpu" -B "$build" \
    -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" >/dev/null
  for shard in "${shards[@]}"; do
    local name=${shard%%=*} elements=${shard#*=}
    echo "== $name: $elements elements"
    local out
    out=$("$build/zero-bench-gpu-update" "$dir/$name.so" --repeat 20)
    echo "$out"
    local torch
    torch=$(python3 "$root/benchmarks/gpu/torch_adamw.py" "$elements" --repeat 20)
    echo "$torch"
    local zero_ms torch_ms
    zero_ms=$(sed -n 's/^update: .* in \([0-9.]*\) ms.*/\1/p' <<<"$out")
    torch_ms=$(sed -n 's/.*: \([0-9.]*\) ms best.*/\1/p' <<<"$torch")
    awk -v z="$zero_ms" -v t="$torch_ms" \
      'BEGIN { printf "zero %.2fx faster than torch (%.3f ms against %.3f ms)\n", t / z, z, t }'
  done
}

"$mode"
