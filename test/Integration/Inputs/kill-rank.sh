#!/bin/bash
# kill-rank.sh RANK RANKS DIR COMMAND...: runs COMMAND (mpirun of zero-run
# --write-inputs DIR), and once every rank has written its inputs (its world,
# and so its loss watch, is up) kills rank RANK's process with SIGKILL, as the
# OOM killer would. Exits with COMMAND's status.
set -u
rank=$1 ranks=$2 dir=$3
shift 3
"$@" &
job=$!
for _ in $(seq 1200); do
  ready=0
  for ((r = 0; r < ranks; r++)); do
    [ -f "$dir/rank$r/arg0.npy" ] && ready=$((ready + 1))
  done
  [ "$ready" = "$ranks" ] && break
  sleep 0.1
done
# COMMAND's processes only: other tests may run mpirun jobs beside it.
descendants() {
  local child
  for child in $(pgrep -P "$1"); do
    echo "$child"
    descendants "$child"
  done
}
for p in $(descendants "$job"); do
  if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null |
      grep -qx "OMPI_COMM_WORLD_RANK=$rank"; then
    kill -9 "$p"
  fi
done
wait "$job"
