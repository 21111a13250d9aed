#!/usr/bin/env bash
# Host offload on the GPU: a whole training step with its optimizer state in
# device memory against the same step with that state in pinned host memory
# (offload=optimizer), in two halves because the GPU machine has no LLVM or
# MLIR:
#
#   benchmarks/gpu/offload.sh prepare DIR   (here, with zero built in build/)
#       GPT-2 small's AdamW step with each tensor's forward and backward over
#       BATCHES rows of per-rank data (zero-gen-step --batch; default 512
#       and 2048; with CLIP=1, clipped by its global norm, --clip, which
#       splits the update between the host and the weight's kernel), on N
#       = 4 ranks, sharded at the function boundary, compiled
#       for the GPU without offload, with offload=optimizer, and with it
#       and offload-device-share=SHARE (default 0.35: the last-reduced
#       gradients' state stays on the device), with
#       offload-device-share=auto (the cost model's share, at AUTO_RATES),
#       and without offload at AUTO_RATES too (the rates also set the
#       schedule's buckets and prefetches: auto's own baseline); and at
#       the first batch only, with offload=optimizer and the gradient
#       shards freed after the rank's wait for its host queue
#       (queue-frees=false: the device memory that freeing them once
#       copied down saves), with offload=optimizer delay-update (step t
#       applies step t - 1's gradients, so its results differ by design),
#       with offload=params (the weights' shards in host memory too)
#       and offload=params delay-update (each new weight gathered on the
#       device after the rank's wait for its host queue and copied into its
#       host argument on the rank's copy stream), and without offload and
#       with offload=optimizer, each with overlap (the collectives in
#       flight, zero-schedule-overlap: each new weight gathered into its
#       argument behind the backward pass); and zero-report's
#       state per rank for each (device and host bytes); `run` also runs
#       offload=optimizer and its delay-update at the first batch with the
#       ranks' threads waiting for the GPU by blocking (hblock, dblock:
#       ZERO_CUDA_SYNC=blocking), not by CUDA's spinning, which holds a core
#       a rank beside the host queues' threads;
#   benchmarks/gpu/offload.sh run DIR       (on the GPU machine)
#       builds the runtime alone and runs each artifact with zero-launch on
#       cuda-local for STEPS steps (default 4; the moments' second moment and
#       the step count generated in their valid ranges), and prints the step
#       time (the slowest rank's median of steps 2..STEPS), the step time
#       with offload against without (the issue's goal: at most 1.10x), the
#       GPU's peak memory in use during each run (nvidia-smi, sampled every
#       20 ms, less the memory in use before it) beside zero-report's state
#       per rank, and whether the offloaded results equal the results
#       without offload, bit for bit; first, the host's memory roofline
#       (STREAM's triad on every core and on a rank's share);
#   benchmarks/gpu/offload.sh model DIR     (here, without a GPU)
#       prepares the same artifacts with kernels in place of cuBLAS's calls
#       and runs them as `run` does, on the stand-in CUDA driver
#       (test/FakeCuda) with its model of time: each kernel KERNEL_US
#       microseconds (default 300) and each copy between host and device
#       memory its bytes over LINK_GBPS (default 12.5: one of 4 ranks
#       sharing an H200's PCIe Gen5 link, as offload-device-share=auto's
#       rates), moving no bytes (ZERO_FAKE_CUDA_TIME_ONLY: a GPU's copy
#       engines leave the host's cores alone, the stand-in's memmove would
#       not); each rank as if on a GPU of its own, its host half real, on
#       this machine's cores. Step times and their ratios are the model's:
#       what the schedule hides of the copies and the host's update behind
#       the kernels, not a GPU's figures. Memory at peak is the stand-in's
#       (all ranks' device memory held at once, ZERO_FAKE_CUDA_REPORT).
modes="prepare run model"
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
batches=(${BATCHES:-512 2048})
# The share of the offloadable state kept on the device in the third
# variant (offload-device-share): the last-reduced gradients' state.
share=${SHARE:-0.35}
# The cost model's rates for offload-device-share=auto: one of 4 ranks on
# one H200, from its first offload run (its defaults are a CPU's).
auto_rates=${AUTO_RATES:-gflops=5000 gelements-per-s=200 bandwidth-gbps=200 host-gbps=12.4 link-gbps=12.5}
steps=${STEPS:-4}
# Set by `model`: the lowering's options for the stand-in, which has no
# cuBLAS, and zero-launch's environment there.
stand_in_lowering=
stand_in=()
clip=()
[[ ${CLIP:-0} == 1 ]] && clip=(--clip)
ranks=4
boundary=zero-weight-update-sharding{shard-function-boundary

# The launch flags of GPT-2's step: per-rank data (argument 4i+3), second
# moments in [0, 1) (argument 4i+2) and a positive step count (the last).
launch_flags() {
  local tensors=$1 per_rank=() flags=()
  for ((i = 0; i < tensors; ++i)); do
    per_rank+=($((4 * i + 3)))
    flags+=(--range "$((4 * i + 2))=0:1")
  done
  flags+=(--range "$((4 * tensors))=1:100")
  echo "--per-rank $(IFS=,; echo "${per_rank[*]}") ${flags[*]}"
}

prepare() {
  mkdir -p "$dir"
  local tensors
  tensors=$("$bin/zero-gen-step" --model=gpt2 --shapes | wc -l)
  launch_flags "$tensors" >"$dir/flags"
  for b in "${batches[@]}"; do
    "$bin/zero-gen-step" --model=gpt2 --batch "$b" "${clip[@]}" \
      --mesh "$ranks" >"$dir/gpt2-b$b.mlir"
    # name=sharding options[;lowering options]
    for variant in "device=" "host= offload=optimizer" \
      "waits= offload=optimizer;queue-frees=false" \
      "share= offload=optimizer offload-device-share=$share" \
      "auto= offload=optimizer offload-device-share=auto $auto_rates" \
      "rates= $auto_rates" \
      "delay= offload=optimizer delay-update" \
      "params= offload=params" \
      "pdelay= offload=params delay-update" \
      "over= overlap" \
      "hover= offload=optimizer overlap"; do
      local name=${variant%%=*} options=${variant#*=} lowering=
      # offload=params, delay-update, queue-frees=false and overlap at the first
      # batch only, within all.sh's time (the last two measured at both on
      # the H200: gpu-offload-h200.txt).
      [[ ( $options != *offload=params* && $options != *delay-update* &&
        $options != *queue-frees=false* && $options != *overlap* ) ||
        $b == "${batches[0]}" ]] || continue
      [[ $options == *";"* ]] && lowering=${options#*;} options=${options%%;*}
      lowering="$lowering $stand_in_lowering"
      # Their remarks (the weights the forward pass reads stay on the
      # device) go to a log.
      "$bin/zero-compile" --target=cuda "$dir/gpt2-b$b.mlir" \
        --passes="$boundary$options}" --lowering-options="$lowering" \
        -o "$dir/$name-b$b.so" 2>>"$dir/remarks.log"
      "$bin/zero-opt" "$dir/gpt2-b$b.mlir" \
        "--zero-weight-update-sharding=shard-function-boundary$options" \
        "--zero-report=format=json output=$dir/$name-b$b.json" -o /dev/null \
        2>>"$dir/remarks.log"
    done
    rm "$dir/gpt2-b$b.mlir"
    echo "prepared GPT-2 small, batch $b, N = $ranks"
  done
}

# The slowest rank's median of steps 2.. in ms, from zero-launch's lines.
slowest_median() {
  sed -n 's/^rank [0-9]*: .*steps 2-[0-9]*: median \([0-9.]*\) ms.*/\1/p' |
    sort -g | tail -1
}

# MB of GPU memory in use now.
gpu_used() {
  nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits | head -1
}

# zero-report's state per rank in MB: "device D host H".
reported_state() {
  python3 -c '
import json, sys
state = json.load(open(sys.argv[1]))["functions"][0]["model_state_bytes"]
print("device %.1f MB, host %.1f MB" % (state["device"] / 2**20, state.get("host", 0) / 2**20))' "$1"
}

# "LABEL: R.RRx[SUFFIX]": variant NAME's step time over variant BASE's
# (default: device, the step without offload), both in run's `ms`, where
# both ran.
ratio() {
  local name=$1 label=$2 suffix=${3:-} base=${4:-device}
  [[ -z ${ms[$name]:-} || -z ${ms[$base]:-} ]] ||
    awk -v d="${ms[$base]}" -v h="${ms[$name]}" -v l="$label" -v s="$suffix" \
      'BEGIN { printf "%s: %.2fx%s\n", l, h / d, s }'
}

# The stand-in's peak of device memory in MB, from its report in `out`.
stand_in_peak() {
  sed -n 's/^zero fake GPU: peak memory \([0-9]*\) bytes.*/\1/p' <<<"$1" |
    awk '{ printf "%d", $1 / 2^20 }'
}

run() {
  local rt=$dir/runtime-build
  if ((${#stand_in[@]})); then
    rt=$bin
    echo "the stand-in CUDA driver: ${stand_in[*]:1}"
  else
    build_runtime "$rt"
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader || true
  fi
  echo "host threads a rank: ${ZERO_HOST_THREADS:-cores / $ranks} of $(nproc) cores"
  # The host's memory roofline (STREAM's triad, benchmarks/triad.cpp), on
  # every core and on one rank's share: what the host's update runs against.
  if c++ -O2 -std=c++20 -pthread "$root/benchmarks/triad.cpp" \
    -o "$dir/triad" 2>/dev/null; then
    for threads in "$(nproc)" "$(($(nproc) > ranks ? $(nproc) / ranks : 1))"; do
      echo "host $("$dir/triad" --threads "$threads" --mb 128 --repeat 5)"
    done
  fi
  # shellcheck disable=SC2207
  local flags=($(cat "$dir/flags"))
  for b in "${batches[@]}"; do
    echo "== GPT-2 small, AdamW with forward and backward, batch $b rows a rank, N = $ranks, $steps steps"
    declare -A ms
    for name in device host waits share auto rates delay params pdelay \
      over hover hblock dblock; do
      # hblock and dblock: host's and delay's artifacts again, at the first
      # batch, with the ranks' threads waiting for the GPU by blocking
      # (ZERO_CUDA_SYNC=blocking) rather than CUDA's spinning, which holds
      # 4 cores beside the host queues' threads.
      local artifact=$name sync=()
      case $name in
      hblock) artifact=host ;;
      dblock) artifact=delay ;;
      esac
      if [[ $artifact != "$name" ]]; then
        [[ $b == "${batches[0]}" ]] || continue
        sync=(env ZERO_CUDA_SYNC=blocking)
      fi
      [[ -f $dir/$artifact-b$b.so ]] || continue
      local against=() before=0 sampler= peak out
      # The delayed update computes other numbers, and the stand-in runs no
      # kernel: timed, not compared (nor their results written: GPT-2's are
      # 1.5 GB a variant). On the GPU, its memory is sampled meanwhile.
      local compared=true
      [[ $name == device || $artifact == delay || $name == pdelay ]] &&
        compared=false
      if ((${#stand_in[@]})); then
        compared=false
      else
        against=(--output-dir "$dir/out-$name-b$b")
        before=$(gpu_used)
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits \
          -lms 20 >"$dir/memory-$name-b$b.txt" &
        sampler=$!
      fi
      ! $compared || against+=(--expect "$dir/out-device-b$b" --max-ulp 0)
      out=$(timeout 300 "${sync[@]}" "${stand_in[@]}" "$rt/zero-launch" \
        "$dir/$artifact-b$b.so" \
        --generate --ranks "$ranks" "${flags[@]}" --steps "$steps" \
        "${against[@]}" 2>&1) ||
        { [[ -z $sampler ]] || kill "$sampler"; echo "$name: FAIL"; echo "$out"; exit 1; }
      if [[ -n $sampler ]]; then
        kill "$sampler"; wait "$sampler" 2>/dev/null || true
        peak=$(sort -g "$dir/memory-$name-b$b.txt" | tail -1)
      else
        peak=$(stand_in_peak "$out")
      fi
      ms[$name]=$(slowest_median <<<"$out")
      printf '%-7s %9.3f ms a step; GPU memory in use at peak %6d MB (zero-report: %s)\n' \
        "$name" "${ms[$name]}" "$((peak - before))" \
        "$(reported_state "$dir/$artifact-b$b.json")"
      grep -E "^rank 0:" <<<"$out" | sed 's/^/  /'
      # zero-launch --expect fails on a difference and prints each
      # result's verdict.
      ! $compared ||
        echo "  $(grep -cE '^rank [0-9]+ result [0-9]+: identical$' <<<"$out") of" \
          "$(grep -cE '^rank [0-9]+ result [0-9]+:' <<<"$out") results" \
          "(every rank's) identical to those without offload"
    done
    ratio host "offload=optimizer" " the step time without offload (goal: at most 1.10x)"
    ratio waits "offload=optimizer, gradient shards freed after the wait (queue-frees=false)"
    ratio share "offload=optimizer offload-device-share=$share"
    ratio auto "offload=optimizer offload-device-share=auto"
    ratio auto "offload=optimizer offload-device-share=auto" \
      " the step without offload at its rates" rates
    ratio delay "offload=optimizer delay-update"
    ratio params "offload=params"
    ratio pdelay "offload=params delay-update"
    ratio over "overlap (collectives in flight), no offload"
    ratio hover "offload=optimizer overlap"
    ratio hover "offload=optimizer overlap" " offload=optimizer without overlap" host
    ratio hblock "offload=optimizer, ZERO_CUDA_SYNC=blocking"
    ratio dblock "offload=optimizer delay-update, ZERO_CUDA_SYNC=blocking"
    unset ms
  done
}

model() {
  # A kernel takes KERNEL_US whatever its rows: one batch.
  batches=(${BATCHES:-512})
  stand_in_lowering=cublas=false
  stand_in=(env "LD_LIBRARY_PATH=$bin/../test/fake-cuda"
    "ZERO_FAKE_CUDA_KERNEL_US=${KERNEL_US:-300}"
    "ZERO_FAKE_CUDA_LINK_GBPS=${LINK_GBPS:-12.5}" ZERO_FAKE_CUDA_TIME_ONLY=1
    ZERO_FAKE_CUDA_REPORT=1 "ZERO_FAKE_CUDA_MEMORY=$((1 << 40))"
    "ZERO_FAKE_CUDA_HOST_MEMORY=$((1 << 40))")
  prepare
  run
}

"$mode"
