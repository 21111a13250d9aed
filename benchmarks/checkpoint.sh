#!/usr/bin/env bash
# Checkpoint throughput and zero-reshard's memory on a real state: GPT-2
# small's AdamW step (148 tensors, 124M parameters) sharded at the function
# boundary on N ranks (default 2), so each rank's state is w, m and v's
# shards. Prints, per rank, what zero-launch --save wrote and --load read
# (bytes, seconds, MB/s), a plain copy of one rank's files (cp -r) and a
# plain write of the same bytes (dd, 1 MiB blocks) for comparison, and
# zero-reshard's peak memory against its largest value, resharding N -> N+1
# and consolidating (--whole).
#
#   benchmarks/checkpoint.sh [DIR]      (zero built in build/; DIR: scratch,
#                                        default a temporary directory)
# Environment: N (ranks), MODEL (zero-gen-step options, default
# --model=gpt2), ZERO_BIN (the tools, default build/bin).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${ZERO_BIN:-$root/build/bin}
n=${N:-2}
model=${MODEL:---model=gpt2}
dir=${1:-$(mktemp -d)}
mkdir -p "$dir"
rm -rf "$dir/ck" "$dir/copy" "$dir/resharded" "$dir/whole" "$dir/plain"

"$bin/zero-gen-step" $model --mesh "$n" >"$dir/step.mlir"
echo "checkpoint: $(head -1 "$dir/step.mlir" | sed 's|^// ||; s|; generated.*||'), $n ranks, state sharded"
"$bin/zero-compile" "$dir/step.mlir" \
  --passes='zero-weight-update-sharding{shard-function-boundary}' -o "$dir/step.so"

rate() { # BYTES(MB) SECONDS
  awk -v mb="$1" -v s="$2" 'BEGIN { printf "%.0f MB/s", (s > 0 ? mb / s : 0) }'
}
report() { # WHAT: the zero-launch lines' "WHAT X MB in Y s"
  sed -n "s/^rank \([0-9]*\):.*; $1 \([0-9.]*\) MB in \([0-9.]*\) s.*/\1 \2 \3/p" |
    while read -r rank mb s; do
      echo "$1: rank $rank: $mb MB in $s s ($(rate "$mb" "$s"))"
    done
}

"$bin/zero-launch" "$dir/step.so" --generate --save "$dir/ck" | report saved
sync
"$bin/zero-launch" "$dir/step.so" --generate --load "$dir/ck" | report loaded

rank0=$dir/ck/step-1/rank0
mb=$(du -sb "$rank0" | awk '{ printf "%.1f", $1 / 1e6 }')
start=$(date +%s.%N)
cp -r "$rank0" "$dir/copy"
s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
echo "plain copy (cp -r) of rank 0's files: $mb MB in $s s ($(rate "$mb" "$s"))"
start=$(date +%s.%N)
dd if=/dev/zero of="$dir/plain" bs=1M count="$(awk -v m="$mb" 'BEGIN { printf "%d", m * 1e6 / 1048576 + 1 }')" status=none
s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
echo "plain write (dd, 1 MiB blocks) of the same bytes: $mb MB in $s s ($(rate "$mb" "$s"))"

state=$(du -sb "$dir/ck/step-1" | awk '{ printf "%.1f MB", $1 / 1e6 }')
echo "state on disk: $state"
"$bin/zero-reshard" "$dir/ck" --ranks $((n + 1)) -o "$dir/resharded"
"$bin/zero-reshard" "$dir/ck" --whole -o "$dir/whole"
rm -rf "$dir/ck" "$dir/copy" "$dir/resharded" "$dir/whole" "$dir/plain"
