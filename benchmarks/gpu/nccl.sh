#!/usr/bin/env bash
# The nccl backend on the GPU machine, on the artifacts check.sh prepared:
#
#   benchmarks/gpu/check.sh prepare DIR   (here)
#   benchmarks/gpu/check.sh run DIR       (there first: cuda-local's results)
#   benchmarks/gpu/nccl.sh run DIR        (there)
#
# NCCL refuses two ranks on one GPU, so on one GPU the backend runs at N = 1:
# - zero-collective-check: every collective kind and reduction on every
#   dtype (bf16 included), alone and as one batch (one NCCL group), each
#   element checked;
# - every example at N = 1, as given and after each sharding pipeline: the
#   compiler folds a collective on a group of one away, so these check that
#   artifacts run under the nccl backend's start, not NCCL itself; each
#   result must equal cuda-local's bit for bit;
# both started torchrun-style (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
# MASTER_PORT) and under mpirun when there is one. Then the abort path, on
# purpose (ZERO_NCCL_INJECT=error@0): the process must end with status 1 and
# a message naming the collective. With two or more GPUs,
# zero-collective-check on all of them and the examples at N = 2 as well;
# with one, that is skipped with the reason.
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
[[ $mode == run ]] || { echo "nccl.sh has no prepare: use check.sh prepare" >&2; exit 2; }

# The --arg options of a prepared case's inputs.
case_args() {
  local f i
  for f in "$1"/in/rank0/arg*.npy; do
    i=${f##*/arg}
    i=${i%.npy}
    printf '%s\n' --arg "$i=$1/in/rank{rank}/arg$i.npy"
  done
}

# Runs "$@" as ranks 0..N-1 of a torchrun-style world on the next port,
# rank r's output in LOG-rank$r.log; succeeds when every rank does.
run_ranks() {
  local n=$1 log=$2 p=$((port++)) pids=() status=0 r pid
  shift 2
  for ((r = 0; r < n; ++r)); do
    env RANK="$r" WORLD_SIZE="$n" LOCAL_RANK="$r" MASTER_ADDR=127.0.0.1 MASTER_PORT="$p" \
      "$@" >"$log-rank$r.log" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  return "$status"
}

run() {
  local rt=$dir/runtime-build failures=0 runs=0
  build_runtime "$rt"
  local launch=$rt/zero-launch check=$rt/zero-collective-check port=29650
  local torchrun=(env RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1)
  local starts=("torchrun")
  # mpirun, when MPI was there for the runtime build too.
  command -v mpirun >/dev/null && command -v mpicc >/dev/null &&
    starts+=("mpirun")
  for start in "${starts[@]}"; do
    local cmd=("${torchrun[@]}" MASTER_PORT=$((port++)))
    [[ $start == torchrun ]] || cmd=(mpirun --allow-run-as-root -n 1)
    runs=$((runs + 1))
    if out=$(timeout 300 "${cmd[@]}" "$check" --backend nccl 2>&1); then
      echo "collectives N=1 $start: ok ($out)"
    else
      failures=$((failures + 1))
      printf 'collectives N=1 %s: FAIL\n%s\n' "$start" "$out"
    fi
  done
  for case in "$dir"/*/1/; do
    case=${case%/}
    [[ -f $case/given.so && ! -f $case/generate ]] || continue
    local name args
    name=$(basename "$(dirname "$case")")
    mapfile -t args < <(case_args "$case")
    for variant in given sharded overlap stage3; do
      [[ -d $case/gpu-$variant ]] || continue
      for start in "${starts[@]}"; do
        local cmd=("${torchrun[@]}" MASTER_PORT=$((port++)))
        [[ $start == torchrun ]] ||
          cmd=(mpirun --allow-run-as-root -n 1)
        runs=$((runs + 1))
        if out=$(timeout 120 "${cmd[@]}" "$launch" "$case/$variant.so" \
                   --backend nccl "${args[@]}" \
                   --expect "$case/gpu-$variant" --max-ulp 0 2>&1); then
          printf '%-22s N=1 %-8s %-8s ok   (bit-identical to cuda-local)\n' \
            "$name" "$variant" "$start"
        else
          failures=$((failures + 1))
          printf '%-22s N=1 %-8s %-8s FAIL\n%s\n' "$name" "$variant" "$start" "$out"
        fi
      done
    done
  done

  # The abort path: the watchdog ends the process with the collective named
  # (zero-collective-check's first collective is an f32 all-reduce).
  local status=0 out
  out=$(ZERO_NCCL_INJECT=error@0 timeout 60 "${torchrun[@]}" MASTER_PORT=$((port++)) \
          "$check" --backend nccl 2>&1) ||
    status=$?
  runs=$((runs + 1))
  if [[ $status == 1 && $out == *"injected fault (ZERO_NCCL_INJECT)"* &&
        $out == *"all_reduce #0"* ]]; then
    echo "abort path: ok (status 1): $(grep -m1 'error:' <<<"$out")"
  else
    failures=$((failures + 1))
    echo "abort path: FAIL (status $status)"
    echo "$out"
  fi

  local gpus
  gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
  if ((gpus >= 2)); then
    runs=$((runs + 1))
    if run_ranks "$gpus" "$dir/collectives" "$check" --backend nccl; then
      echo "collectives N=$gpus: ok"; cat "$dir"/collectives-rank*.log; else
      failures=$((failures + 1)); echo "collectives N=$gpus: FAIL"; cat "$dir"/collectives-rank*.log; fi
    for case in "$dir"/*/2/; do
      case=${case%/}
      [[ -f $case/sharded.so && ! -f $case/generate ]] || continue
      local name args
      name=$(basename "$(dirname "$case")")
      mapfile -t args < <(case_args "$case")
      runs=$((runs + 1))
      if run_ranks 2 "$case/nccl" "$launch" "$case/sharded.so" --backend nccl \
           "${args[@]}" --expect "$case/gpu-sharded" --max-ulp 0; then
        echo "$name N=2 sharded: ok"; else
        failures=$((failures + 1)); echo "$name N=2 sharded: FAIL"; cat "$case"/nccl-rank*.log; fi
    done
  else
    echo "N = 2 on NCCL: skipped ($gpus GPU visible; NCCL needs one GPU per rank)"
  fi
  echo "nccl check: $runs runs, $failures failed"
  [[ $failures == 0 ]]
}

"$mode"
