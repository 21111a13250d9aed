#!/usr/bin/env bash
# Every GPU script in one call of a lent GPU machine, in two halves because
# the GPU machine has no LLVM or MLIR:
#
#   benchmarks/gpu/all.sh prepare DIR   (here, with zero built in build/)
#       check.sh, step.sh, bench.sh and offload.sh prepared in DIR/<script>,
#       packed into DIR/prepared.tar.gz (about 8 MB of 75: DIR travels as
#       one carried path, and the device tool carries 64 MiB at most);
#   benchmarks/gpu/all.sh run DIR       (on the GPU machine)
#       unpacks them, then runs offload.sh, check.sh, step.sh twice (its
#       first run warms the
#       GPU and cuBLAS) and bench.sh, each under a time limit that keeps
#       the whole within one call's ten minutes, and writes each one's
#       output to RESULTS/<script>.txt (RESULTS: $OUT where the device tool
#       sets it, else DIR), with its wall time and status in
#       RESULTS/summary.txt. A script that fails or runs out of time does not
#       stop the others.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
# script:seconds, in the order they run (offload first: its figures are the
# ones a lease is most often for), within one call's 600: on the H200
# (2026-11-27) offload.sh took 186 s with five variants at two batches
# (now thirteen runs at the first batch, two of them again with blocking
# waits, and five at the second; and the host's triad), check.sh
# 113 s, step.sh 28 s and 11 s, bench.sh 41 s.
runs=(offload:300 check:135 step:40 step:30 bench:55)

scripts=(check step bench offload)

prepare() {
  mkdir -p "$dir"
  for script in "${scripts[@]}"; do
    bash "$root/benchmarks/gpu/$script.sh" prepare "$dir/$script"
  done
  # The kernels' cubins and the artifacts' code pack about tenfold.
  tar czf "$dir/prepared.tar.gz" -C "$dir" "${scripts[@]}"
  (cd "$dir" && rm -rf "${scripts[@]}")
  echo "packed: $(du -h "$dir/prepared.tar.gz" | cut -f1) in $dir/prepared.tar.gz"
}

run() {
  [[ ! -f $dir/prepared.tar.gz ]] || tar xzf "$dir/prepared.tar.gz" -C "$dir"
  local results=${OUT:-$dir}
  mkdir -p "$results"
  for entry in "${runs[@]}"; do
    local script=${entry%%:*} limit=${entry#*:} log status=0 start=$SECONDS
    log=$results/$script.txt
    [[ $script != step || ! -f $log ]] || log=$results/$script-2.txt
    timeout "$limit" bash "$root/benchmarks/gpu/$script.sh" run "$dir/$script" \
      >"$log" 2>&1 || status=$?
    printf '%-8s %4d s  status %d%s\n' "$script" $((SECONDS - start)) "$status" \
      "$([[ $status == 124 ]] && echo " (out of its ${limit} s)")" |
      tee -a "$results/summary.txt"
  done
}

"$mode"
