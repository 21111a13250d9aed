#!/usr/bin/env python3
"""zero's compiled host update against PyTorch's CPU AdamW and the roofline.

The host half of an offloaded step (issue: host offload) is zero's CPU
lowering of the optimizer update. This measures it where it runs, on this
machine, beside the peer and the limit, in one run:
  - zero: the AdamW step of a model at N = 1 (zero-gen-step; the gradient's
    all-reduce folds away on one rank, so the step is the update alone),
    zero-compile'd for this machine's CPU (--host-cpu=native: an offloaded
    update runs on the host it is compiled for, and PyTorch picks its
    AVX2/AVX-512 kernels at run time) and run by zero-launch --steps K: one
    rank, its update's loops split across the same number of threads as
    PyTorch's (zero-host-parallel-loops; ZERO_HOST_THREADS); and once more
    compiled for zero-compile's default, x86-64-v2, which any x86-64 host
    of the last decade runs;
  - torch foreach / torch for-loop: torch.optim.AdamW(foreach=True/False)
    .step() on the same shapes (benchmarks/peer/torch_adamw.py), with the
    same number of intra-op threads;
  - hand-written: a fused AdamW loop in C++ (benchmarks/adamw_reference.cpp,
    the kind DeepSpeed's CPU Adam is), vectorized for this machine, its
    tensors split across the same threads: how fast an update written by
    hand goes here, so that zero's speed over PyTorch's reads against what
    the hardware allows;
  - bytes alone: the same loop's loads and stores with an add for each
    store in place of AdamW's arithmetic (--kernel bytes): the least time
    any loop that moves these bytes takes here, so torch's time over it is
    the most any fp32 AdamW can be faster than torch on this machine;
  - the roofline: the update's bytes (28 per parameter: w, m, v read and
    written, g read) over a STREAM-like triad's bandwidth on those threads
    (the triad's rate counts the bytes it names, not the cache lines its
    stores read first, which the update does not pay: the update beats it).
Each time is a median over steps 2..K, the best of --repeat runs of each
row, run in rounds of one run of each row (this VM's bandwidth moves by
tens of percent over minutes, so each row meets the same drift); the
roofline takes the triad's best round, and zero's speed over PyTorch's is
printed for each round too.
Then the device state per rank that offload=optimizer saves (zero-report),
against its formula, for the fp32 step and for a mixed-precision training
loop whose masters go to the host too, and the most device memory the step
holds at once on the stand-in CUDA driver, beside its later steps' time
and system allocations: AdamW's with and without offload, and with and
without the gradient shards freed once the host queue has copied them
down, and with the staging of gradient shards and new weights held within
32 MiB a rank (ZERO_STAGING_BYTES), and with offload=params, and
delayed (delay-update) without offload and with each, and offload=optimizer
with and without the delay once more with each kernel taking 1 ms
(ZERO_FAKE_CUDA_KERNEL_US: the rank at the device's pace); AdamW's
offloaded on one rank, whose staging passes the default budget; LAMB's
with and without offload, and with that staging bound; and a
mixed-precision training loop's, with its state taken and returned whole
and as shards (shard-function-boundary).

  benchmarks/host_update.py [--build build] [--model gpt2] [--steps 6]
                            [--threads <cores>] [--repeat 3] [--no-torch]
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile

import vs_pytorch
from vs_pytorch import ADAMW_BYTES, generate, launch_once, run, triad


# The staging budget the stand-in rows bound a rank's pinned staging to
# (ZERO_STAGING_BYTES), below GPT-2 small's 237 MB a rank at N = 4.
STAGING_BOUND = 32 << 20

# The stand-in's kernel time for the rows paced as a busy GPU would pace the
# rank (ZERO_FAKE_CUDA_KERNEL_US): a full launch queue, so that the rank
# goes at the device's pace rather than as far ahead as it can.
PACED_KERNEL_MS = 1
PACED = {"ZERO_FAKE_CUDA_KERNEL_US": str(PACED_KERNEL_MS * 1000)}


def interleaved(repeat, measures):
    """Each of `measures` run `repeat` times, in rounds of one run of each,
    so that every row meets the same drift of this VM's bandwidth: a list,
    for each measure, of its runs (ms, MB) in round order."""
    rounds = [[] for _ in measures]
    for _ in range(repeat):
        for runs, measure in zip(rounds, measures):
            runs.append(measure())
    return rounds


def torch_adamw(python, shapes, threads, foreach, steps):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer",
                          "torch_adamw.py")
    out = run([python, script, "--shapes", shapes, "--threads", str(threads),
               "--foreach", "true" if foreach else "false", "--steps",
               str(steps - 1)]).stdout
    step = float(re.search(r"step_ms=([0-9.]+)", out).group(1))
    peak = float(re.search(r"peak_mb=([0-9.]+)", out).group(1))
    return step, peak


def adamw_reference(bin_dir, shapes, threads, steps, kernel="adamw"):
    """The hand-written AdamW's median step (ms) and peak memory (MB) on
    the same shapes and threads (zero-bench-adamw-reference); with kernel
    "bytes", its loads and stores alone."""
    out = run([os.path.join(bin_dir, "zero-bench-adamw-reference"),
               "--shapes", shapes, "--threads", str(threads), "--steps",
               str(steps), "--kernel", kernel]).stdout
    step = float(re.search(r"step_ms=([0-9.]+)", out).group(1))
    peak = float(re.search(r"peak_mb=([0-9.]+)", out).group(1))
    return step, peak


def gpt2_parameters(bin_dir, options=()):
    """S: GPT-2 small's parameters, as zero-gen-step makes it with
    `options` (--scale)."""
    return sum(math.prod(int(d) for d in shape.split("x")) for shape in
               run([os.path.join(bin_dir, "zero-gen-step"), "--model=gpt2",
                    "--shapes"] + list(options)).stdout.split())


def offloaded_state(bin_dir, work, ranks=4, mixed_precision=False):
    """zero-report's state per rank for GPT-2 small with its forward and
    backward (zero-gen-step --batch 2) on `ranks` ranks, without and with
    offload=optimizer, against the formula K * 4 * S / N bytes. The fp32
    step is sharded at the function boundary, and its moments (K = 2) move
    to the host. With `mixed_precision`, a two-step training loop whose
    layers read their fp32 masters' bf16 roundings (--mixed-precision),
    sharded with defer-all-gather: the masters' shards move too (K = 3)."""
    gen = os.path.join(bin_dir, "zero-gen-step")
    program = os.path.join(work, "forward.mlir")
    extra = ["--loop", "2", "--mixed-precision"] if mixed_precision else []
    with open(program, "w") as f:
        f.write(run([gen, "--model=gpt2", "--batch", "2", "--mesh",
                     str(ranks)] + extra).stdout)
    params = gpt2_parameters(bin_dir)
    sharding = "defer-all-gather" if mixed_precision else \
        "shard-function-boundary"
    states = []
    for options in [sharding, sharding + " offload=optimizer"]:
        report = os.path.join(work, "report.json")
        run([os.path.join(bin_dir, "zero-opt"), program,
             "--zero-weight-update-sharding=" + options,
             "--zero-report=format=json output=" + report, "-o", os.devnull])
        with open(report) as f:
            states.append(json.load(f)["functions"][0]["model_state_bytes"])
    k = 3 if mixed_precision else 2
    formula = k * 4 * params / ranks
    mb = 1 / (1 << 20)
    print("\ndevice state per rank, gpt2 with forward and backward%s, N = %d "
          "(zero-report):" % (
              ", mixed precision (fp32 masters, bf16 forward), a training "
              "loop with defer-all-gather" if mixed_precision else "", ranks))
    print("  without offload: device %.1f MB" % (states[0]["device"] * mb))
    print("  offload=optimizer: device %.1f MB, host %.1f MB" %
          (states[1]["device"] * mb, states[1]["host"] * mb))
    print("  device drop %.1f MB against K * 4 * S / N = %.1f MB (K = %d): "
          "%.4f" % ((states[0]["device"] - states[1]["device"]) * mb,
                    formula * mb, k,
                    (states[0]["device"] - states[1]["device"]) / formula))


def standin_device_peaks(build, bin_dir, work, model, variants, ranks=4,
                         steps=6):
    """The most device memory held at once by GPT-2 small with its forward
    and backward (zero-gen-step --model=gpt2 --batch 2 and the options
    `model` adds: an optimizer, a training loop) on `ranks` ranks, compiled
    for CUDA (matmuls as kernels: the stand-in has no cuBLAS) and run on the
    stand-in CUDA driver (test/FakeCuda, ZERO_FAKE_CUDA_REPORT), for each of
    `variants` (name, sharding options, lowering options, environment of the
    run). The stand-in runs no kernel, so each rank runs as far ahead of the
    device as it can: where the allocator's peak is highest for a given
    order of allocations and frees. None where the stand-in is not built."""
    fake = os.path.join(build, "test", "fake-cuda")
    if not os.path.exists(os.path.join(fake, "libcuda.so.1")):
        return None
    gen = os.path.join(bin_dir, "zero-gen-step")
    program = os.path.join(work, "forward.mlir")
    with open(program, "w") as f:
        f.write(run([gen, "--model=gpt2", "--batch", "2", "--mesh",
                     str(ranks)] + model).stdout)
    env = dict(os.environ, LD_LIBRARY_PATH=fake, ZERO_FAKE_CUDA_REPORT="1",
               ZERO_FAKE_CUDA_MEMORY=str(1 << 40),
               ZERO_FAKE_CUDA_HOST_MEMORY=str(1 << 40))
    peaks, artifacts = [], {}
    for name, passes, lowering, extra in variants:
        artifact = artifacts.get((passes, lowering))
        if not artifact:
            artifact = os.path.join(work, "step-%d.so" % len(artifacts))
            run([os.path.join(bin_dir, "zero-compile"), "--target=cuda",
                 "--gpu-format=isa", program,
                 "--passes=zero-weight-update-sharding{%s}" % passes,
                 "--lowering-options=" + lowering, "-o", artifact])
            artifacts[(passes, lowering)] = artifact
        launched = subprocess.run(
            [os.path.join(bin_dir, "zero-launch"), artifact, "--generate",
             "--ranks", str(ranks), "--steps", str(steps)],
            env=dict(env, **extra), check=True, text=True,
            capture_output=True)
        out = launched.stdout + launched.stderr
        match = re.search(r"peak memory ([0-9]+) bytes, pinned host memory "
                          r"([0-9]+) bytes", out)
        # Each rank's later steps (none for a run of one step).
        later = re.findall(r"median ([0-9.]+) ms, ([0-9]+) system "
                           r"allocations", out)
        peaks.append((name, int(match.group(1)), int(match.group(2)),
                      max((float(ms) for ms, _ in later), default=None),
                      sum(int(n) for _, n in later)))
    return peaks


def print_peaks(what, peaks, ranks=4, steps=6):
    mb = 1 / (1 << 20)
    print("\nmost memory held at once, gpt2 with forward and backward, %s, "
          "N = %d, %d step%s, on the stand-in CUDA driver (no kernel runs: "
          "each rank as far ahead as it goes):" %
          (what, ranks, steps, "" if steps == 1 else "s"))
    for name, device, pinned, median, allocations in peaks:
        later = ("; steps 2-%d: %.1f ms a step, %d system allocations" %
                 (steps, median, allocations) if median is not None else "")
        print("  %-50s device %8.1f MB, pinned host %7.1f MB%s" %
              (name, device * mb, pinned * mb, later))


def print_saving(without, offloaded, params, ranks=4):
    """What offload saves at the peak (bytes `without` - `offloaded`)
    against the moments' K * 4 * S bytes on the `ranks` ranks."""
    mb = 1 / (1 << 20)
    moments = 2 * 4 * params
    print("  offload=optimizer: %.1f MB less than without, against the "
          "moments' K * 4 * S = %.1f MB on the %d ranks: %.2f" %
          ((without - offloaded) * mb, moments * mb, ranks,
           (without - offloaded) / moments))


def print_params_saving(without, optimizer, offloaded, params, ranks=4):
    """What offload=params saves at the peak against the step without
    offload and against offload=optimizer: beyond the moments, each rank's
    weights (4 * S bytes: the step takes them whole, no defer-all-gather)
    leave the device, which holds a weight only while its gather runs."""
    mb = 1 / (1 << 20)
    print("  offload=params: %.1f MB less than without, %.1f MB less than "
          "offload=optimizer, whose device keeps the weights (N * 4 * S = "
          "%.1f MB on the %d ranks)" % ((without - offloaded) * mb,
                                         (optimizer - offloaded) * mb,
                                         ranks * 4 * params * mb, ranks))


def print_delay_cost(without, optimizer, params, delayed, parameters):
    """What the delayed update (delay-update) holds at once against the
    same step without it, each of `delayed` (device, offload=optimizer,
    offload=params) against `without`, `optimizer` and `params`: device
    memory, and pinned memory where offloaded. The gradient shards it hands
    the next step are state of its own (1/N of the weights a rank, 4 * S
    bytes on the N ranks), in pinned memory where offloaded: what the
    delayed offload=params step pins beyond the undelayed one is printed
    against them."""
    mb = 1 / (1 << 20)
    print("  delay-update against the same step without it (device; "
          "pinned):")
    for base, late in zip((without, optimizer, params), delayed):
        pinned = ("; pinned %.1f against %.1f MB, %.2fx" %
                  (late[2] * mb, base[2] * mb, late[2] / base[2])
                  if base[2] else "")
        print("    %-32s device %.1f against %.1f MB, %.2fx%s" %
              (late[0], late[1] * mb, base[1] * mb, late[1] / base[1],
               pinned))
    shards = 4 * parameters
    beyond = delayed[2][2] - params[2]
    print("  delay-update, offload=params pins %.1f MB beyond the step "
          "without it, against the gradient shards it keeps (4 * S = %.1f "
          "MB on the 4 ranks): %.2f" %
          (beyond * mb, shards * mb, beyond / shards))


def print_paced_delay_cost(undelayed, delayed):
    """The delayed, offloaded step against the undelayed one where the
    stand-in's kernels take PACED_KERNEL_MS each (ZERO_FAKE_CUDA_KERNEL_US):
    the rank goes at the device's pace, so the queue's work (the host's
    update, the gradient shards' copies down and the frees after them)
    keeps up with it, as it does where the device's work is the longer."""
    mb = 1 / (1 << 20)
    print("  at %d ms a kernel (the rank at the device's pace): "
          "delay-update, offload=optimizer device %.1f against %.1f MB "
          "without the delay, %.2fx" %
          (PACED_KERNEL_MS, delayed[1] * mb, undelayed[1] * mb,
           delayed[1] / undelayed[1]))


def print_staging(after_wait, by_queue, bounded, params, ranks=4):
    """Pinned host memory beyond the moments' K * 4 * S bytes (the staging
    of gradient shards and new weights) when the rank frees the staging
    after its wait, when the queue frees it (ZERO_STAGING_BYTES' default,
    256 MiB a rank), and within STAGING_BOUND a rank."""
    mb = 1 / (1 << 20)
    moments = 2 * 4 * params
    print("  staging (pinned beyond the moments), on the %d ranks: %.1f MB "
          "freed after the wait, %.1f MB freed by the queue, %.1f MB within "
          "%d MiB a rank" % (ranks, (after_wait - moments) * mb,
                              (by_queue - moments) * mb,
                              (bounded - moments) * mb, STAGING_BOUND >> 20))


def print_one_rank_staging(build, bin_dir, params, steps=6):
    """The offloaded AdamW step on one rank, whose staging (a gradient shard
    and a weight shard of the whole model, 8 bytes a parameter) passes the
    default staging budget: each step carves it out of the rank's staging
    arena, reaching no allocator once the arena has grown."""
    with tempfile.TemporaryDirectory(prefix="zero-host-update-") as work:
        peaks = standin_device_peaks(build, bin_dir, work, [
            "--optimizer", "adamw"], [
            ("offload=optimizer, one rank",
             "shard-function-boundary offload=optimizer", "cublas=false", {})],
            ranks=1, steps=steps)
    if not peaks:
        return
    print_peaks("AdamW, its staging (%.1f MB) beyond the default budget "
                "(256 MiB)" % (8 * params / (1 << 20)), peaks, ranks=1,
                steps=steps)


def print_loop_peaks(build, bin_dir, ranks=4, scale=2):
    """The same for a training loop (two steps of AdamW in an scf.for, in
    mixed precision: each layer reads its fp32 master's bf16 rounding),
    sharded with defer-all-gather, at 1/`scale` of GPT-2 small's width (a
    loop that takes its state whole does not fit this machine at full
    size): its state taken and returned whole, and as shards
    (shard-function-boundary), each without and with offload=optimizer;
    beside the fp32 state (w, m, v) the ranks take in, whole and as
    shards."""
    loop = ["--scale", str(scale), "--loop", "2", "--mixed-precision"]
    with tempfile.TemporaryDirectory(prefix="zero-host-update-") as work:
        boundary = "defer-all-gather shard-function-boundary"
        peaks = standin_device_peaks(build, bin_dir, work, loop, [
            ("state whole", "defer-all-gather", "cublas=false", {}),
            ("state whole, offload=optimizer",
             "defer-all-gather offload=optimizer", "cublas=false", {}),
            ("state as shards", boundary, "cublas=false", {}),
            ("state as shards, offload=optimizer",
             boundary + " offload=optimizer", "cublas=false", {})],
            ranks=ranks, steps=1)
        params = gpt2_parameters(bin_dir, loop[:2])
    if not peaks:
        return
    mb = 1 / (1 << 20)
    print_peaks("a training loop of 2 AdamW steps in mixed precision at "
                "1/%d width (%d parameters), defer-all-gather" %
                (scale, params), peaks, ranks, steps=1)
    state = 3 * 4 * params * ranks
    print("  fp32 state (w, m, v) the %d ranks take in: whole %.1f MB, as "
          "shards %.1f MB" % (ranks, state * mb, state / ranks * mb))
    for whole, shards in zip(peaks[:2], peaks[2:]):
        (name, device, pinned), (shard_device, shard_pinned) = (
            whole[:3], shards[1:3])
        print("  %s: as shards, %.2fx less device memory, %s" % (
            name, device / shard_device,
            "%.2fx less pinned" % (pinned / shard_pinned) if shard_pinned
            else "nothing pinned"))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--build", default=os.path.join(root, "build"))
    parser.add_argument("--model", default="gpt2",
                        choices=sorted(vs_pytorch.MODELS))
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--threads", type=int, default=os.cpu_count(),
                        help="threads of zero's update (ZERO_HOST_THREADS), "
                        "PyTorch's intra-op threads and the triad's; by "
                        "default the host's cores, as both use unless told")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    bin_dir = vs_pytorch.require_tools(args.build, "host_update",
                                       ["zero-bench-adamw-reference"])
    # zero-launch's update splits its loops across this many threads.
    os.environ["ZERO_HOST_THREADS"] = str(args.threads)
    python = None if args.no_torch else vs_pytorch.torch_python()
    if python:
        version = run([python, "-c", "import torch; print(torch.__version__)"
                       ]).stdout.strip()
        print("peer: PyTorch %s (%s), torch.optim.AdamW, %d thread(s)" %
              (version, python, args.threads))
    elif not args.no_torch:
        print("host_update: PyTorch is not available; zero's rows only")
    print("machine: %d cores (%s); zero: zero-compile --host-cpu=native "
          "(and its default, x86-64-v2), zero-launch, one rank, %d "
          "thread(s)" %
          (os.cpu_count(), vs_pytorch.cpu_model(), args.threads))
    with tempfile.TemporaryDirectory(prefix="zero-host-update-") as work:
        stem, shapes, shape_list, params = generate(bin_dir, work,
                                                    args.model, 1)
        rows = []
        for cpu, label in [("native", "zero"),
                           ("x86-64-v2", "zero x86-64-v2")]:
            artifact = "%s-%s.so" % (stem, cpu)
            run([os.path.join(bin_dir, "zero-compile"), stem + ".mlir",
                 "--host-cpu=" + cpu, "-o", artifact])
            rows.append(("%s (%d)" % (label, args.threads),
                         lambda artifact=artifact: launch_once(
                             bin_dir, artifact, 1, args.steps)[:2]))
        rows.append(("hand-written (%d)" % args.threads,
                     lambda: adamw_reference(bin_dir, shapes, args.threads,
                                             args.steps)))
        rows.append(("bytes alone (%d)" % args.threads,
                     lambda: adamw_reference(bin_dir, shapes, args.threads,
                                             args.steps, "bytes")))
        if python:
            for foreach, label in [(True, "torch AdamW foreach"),
                                   (False, "torch AdamW for-loop")]:
                rows.append(("%s (%d)" % (label, args.threads),
                             lambda foreach=foreach: torch_adamw(
                                 python, shapes, args.threads, foreach,
                                 args.steps)))
        rows.append(("triad", lambda: (triad(bin_dir, args.threads), 0)))
        rounds = interleaved(args.repeat, [measure for _, measure in rows])
        bandwidth = max(run[0] for run in rounds[-1])
        roof = ADAMW_BYTES * params / bandwidth / 1e6
        rows = [(label, *min(runs, key=lambda run: run[0]))
                for (label, _), runs in zip(rows[:-1], rounds[:-1])]
        zero_ms, reference_ms, floor_ms = rows[0][1], rows[2][1], rows[3][1]
    print("\nAdamW update, %s: %d tensors, %d parameters, %.0f MB moved a "
          "step; triad, %d thread(s): %.1f GB/s, roofline %.1f ms" %
          (args.model, len(shape_list), params, ADAMW_BYTES * params / 1e6,
           args.threads, bandwidth, roof))
    print("  %-28s %9s %9s %10s %12s" % ("", "step ms", "GB/s",
                                          "roofline", "peak MB"))
    for label, step, peak in rows:
        print("  %-28s %9.1f %9.1f %10.2f %12.0f" % (
            label, step, ADAMW_BYTES * params / step / 1e6, roof / step,
            peak))
    for label, step, _ in rows[4:]:
        print("  zero vs %s: %.2fx faster; the hand-written loop: %.2fx; "
              "bytes alone (the most any fp32 AdamW can be): %.2fx" %
              (label, step / zero_ms, step / reference_ms, step / floor_ms))
    print("  zero vs the hand-written loop: %.2f of its speed; vs bytes "
          "alone: %.2f" % (reference_ms / zero_ms, floor_ms / zero_ms))
    print("  each round's ms: %s; triad GB/s: %s" % ("; ".join(
        "%s %s" % (label.split(" (")[0], ", ".join(
            "%.1f" % run[0] for run in runs))
        for (label, _, _), runs in zip(rows, rounds)), ", ".join(
            "%.1f" % run[0] for run in rounds[-1])))
    for (label, _, _), runs in zip(rows[4:], rounds[4:-1]):
        print("  zero vs %s, round by round: %s" % (label, ", ".join(
            "%.2fx" % (peer[0] / ours[0])
            for peer, ours in zip(runs, rounds[0]))))
    with tempfile.TemporaryDirectory(prefix="zero-host-update-") as work:
        offloaded_state(bin_dir, work)
        offloaded_state(bin_dir, work, mixed_precision=True)
    mb = 1 / (1 << 20)
    params = gpt2_parameters(bin_dir)
    with tempfile.TemporaryDirectory(prefix="zero-host-update-") as work:
        offload = "shard-function-boundary offload=optimizer"
        peaks = standin_device_peaks(args.build, bin_dir, work, [
            "--optimizer", "adamw"], [
            ("without offload", "shard-function-boundary", "cublas=false",
             {}),
            ("offload=optimizer, shards freed after the wait", offload,
             "cublas=false queue-frees=false", {}),
            ("offload=optimizer, shards freed once copied down", offload,
             "cublas=false", {}),
            ("the same, staging within %d MiB a rank" % (STAGING_BOUND >> 20),
             offload,
             "cublas=false", {"ZERO_STAGING_BYTES": str(STAGING_BOUND)}),
            ("offload=params", "shard-function-boundary offload=params",
             "cublas=false", {}),
            ("delay-update, without offload",
             "shard-function-boundary delay-update", "cublas=false", {}),
            ("delay-update, offload=optimizer", offload + " delay-update",
             "cublas=false", {}),
            ("delay-update, offload=params",
             "shard-function-boundary offload=params delay-update",
             "cublas=false", {}),
            ("offload=optimizer, %d ms a kernel" % PACED_KERNEL_MS, offload,
             "cublas=false", PACED),
            ("delay-update, offload=optimizer, %d ms a kernel" %
             PACED_KERNEL_MS, offload + " delay-update", "cublas=false",
             PACED)])
    if peaks:
        print_peaks("AdamW", peaks)
        print("  freed once copied down: %.1f MB less device memory than "
              "after the wait (%.1f MB a rank)" %
              ((peaks[1][1] - peaks[2][1]) * mb,
               (peaks[1][1] - peaks[2][1]) * mb / 4))
        print_saving(peaks[0][1], peaks[2][1], params)
        print_staging(peaks[1][2], peaks[2][2], peaks[3][2], params)
        print_params_saving(peaks[0][1], peaks[2][1], peaks[4][1], params)
        print_delay_cost(peaks[0], peaks[2], peaks[4], peaks[5:8], params)
        print_paced_delay_cost(peaks[8], peaks[9])
    print_one_rank_staging(args.build, bin_dir, params)
    # LAMB's host loops also make its update direction, which the weight's
    # kernel reads once the norms are gathered.
    with tempfile.TemporaryDirectory(prefix="zero-host-update-") as work:
        offload = "shard-function-boundary offload=optimizer"
        peaks = standin_device_peaks(args.build, bin_dir, work, [
            "--optimizer", "lamb"], [
            ("without offload", "shard-function-boundary", "cublas=false",
             {}),
            ("offload=optimizer", offload, "cublas=false", {}),
            ("the same, staging within %d MiB a rank" % (STAGING_BOUND >> 20),
             offload,
             "cublas=false", {"ZERO_STAGING_BYTES": str(STAGING_BOUND)})])
    if peaks:
        print_peaks("LAMB", peaks)
        print_saving(peaks[0][1], peaks[1][1], params)
    print_loop_peaks(args.build, bin_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
