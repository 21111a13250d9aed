#!/usr/bin/env python3
"""zero's compiled AdamW step against PyTorch's, side by side, in one run.

For each case (a GPT-2-shaped model and a rank count N), on this machine:
  - zero as given: the step as zero-gen-step writes it (an all-reduce of the
    gradients, then AdamW on every rank), zero-compile'd, run by zero-launch
    --steps K on N ranks (threads of the local backend);
  - zero sharded: the same after zero-weight-update-sharding{
    shard-function-boundary} (reduce-scatter, AdamW on a 1/N shard, all-gather);
  - torch foreach and torch ZeRO: PyTorch on N gloo processes
    (benchmarks/peer/torch_step.py): bucketed all-reduce, then
    torch.optim.AdamW(foreach=True) or ZeroRedundancyOptimizer(AdamW);
  - the roofline: the update's bytes (28 per parameter: w, m, v read and
    written, g read) over a STREAM-like triad's bandwidth with N threads.
Each time is the median of steps 2..K (the slowest rank's; for zero the best
of --repeat runs, for PyTorch one run); peak memory is
the resident peak per rank (zero: the process's over N threads), beside the
live data a rank must hold (weights, moments, the local gradient and one
25 MB bucket).

Also times the update alone: the same step at N = 1 (no collectives) against
the triad on one thread.

With --batch B, each step also has its forward and backward: zero-gen-step
--batch B (each tensor a layer over B rows of the rank's data: a linear
layer's x W^T and ReLU, or a vector's scaling; the weights' gradients from
the activations' squares), and PyTorch the same loss by autograd
(torch_step.py --batch). The roofline column is then the matmuls' floating-
point work (2 B rows x features for the forward's x W^T and as much for the
weight's gradient, a parameter of each matrix) at the rate the triad's
memory speed does not bound: it is left out, and each row prints its
matmuls' GFLOP/s instead.

  benchmarks/vs_pytorch.py [--build build] [--cases small:2,gpt2:2,gpt2:4]
                           [--steps 11] [--batch B] [--no-torch]

Each case is MODEL:N, MODEL one of small, gpt2, bert and resnet50 (MODELS).
"""
import argparse
import math
import mmap
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

MODELS = {
    # The model: 52 tensors, 16.9M parameters.
    "small": ["--model=gpt2", "--layers", "4", "--width", "512", "--vocab",
              "8192", "--context", "256"],
    # GPT-2 small: 148 tensors, 124M parameters.
    "gpt2": ["--model=gpt2"],
    # BERT-base: 199 tensors, 110M parameters.
    "bert": ["--model=bert"],
    # ResNet-50: 161 tensors, 25.6M parameters (a convolution's weight a
    # layer over its rows x features, as zero-gen-step --batch writes it).
    "resnet50": ["--model=resnet50"],
}
BUCKET = 25 << 20
ADAMW_BYTES = 28  # per parameter: w, m, v read and written, g read


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True,
                          **kw)


def launch(bin_dir, artifact, ranks, steps, repeat):
    """zero-launch --steps, `repeat` times: (the best run's median ms of
    steps 2..K, its slowest rank's; the highest peak MB per rank; the most
    system allocations in steps 2..K)."""
    runs = [launch_once(bin_dir, artifact, ranks, steps) for _ in range(repeat)]
    return (min(r[0] for r in runs), max(r[1] for r in runs),
            max(r[2] for r in runs))


def launch_once(bin_dir, artifact, ranks, steps):
    cmd = [os.path.join(bin_dir, "zero-launch"), artifact, "--generate",
           "--ranks", str(ranks), "--steps", str(steps)]
    proc = subprocess.Popen(["/usr/bin/time", "-f", "maxrss_kb=%M"] + cmd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    out, err = proc.communicate()
    if proc.returncode:
        sys.exit("vs_pytorch: %s failed:\n%s%s" % (" ".join(cmd), out, err))
    medians = [float(m) for m in re.findall(r"median ([0-9.]+) ms", out)]
    allocations = [int(a) for a in
                   re.findall(r"(-?[0-9]+) system allocations", out)]
    rss = re.search(r"maxrss_kb=([0-9]+)", err)
    if len(medians) != ranks or not rss:
        sys.exit("vs_pytorch: unexpected zero-launch output:\n" + out + err)
    return max(medians), int(rss.group(1)) / 1024.0 / ranks, max(allocations)


def cpu_model():
    """The CPU's model name, as /proc/cpuinfo gives it."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def fresh_page_us(megabytes=64):
    """Microseconds to touch one fresh 4 KiB page: what a step that maps new
    memory for each result pays per page (PyTorch on the CPU does, zero
    after its first step does not). It moves between hosts by 10x."""
    size = megabytes << 20
    memory = mmap.mmap(-1, size)
    start = time.perf_counter()
    for at in range(0, size, 4096):
        memory[at] = 1
    seconds = time.perf_counter() - start
    memory.close()
    return seconds / (size // 4096) * 1e6


def triad(bin_dir, threads):
    out = run([os.path.join(bin_dir, "zero-bench-triad"), "--threads",
               str(threads)]).stdout
    return float(re.search(r"GB/s=([0-9.]+)", out).group(1))


def require_tools(build, caller, extra=()):
    """The build's bin directory, once every tool these benchmarks run (and
    `extra`) is there; else exits naming the one to build."""
    bin_dir = os.path.join(build, "bin")
    for tool in ["zero-gen-step", "zero-compile", "zero-launch",
                 "zero-bench-triad", *extra]:
        if not os.path.exists(os.path.join(bin_dir, tool)):
            sys.exit("%s: %s is not built (ninja -C %s %s)" %
                     (caller, tool, build, tool))
    return bin_dir


def has_torch(python):
    return os.path.exists(python) and subprocess.run(
        [python, "-c", "import torch"], capture_output=True).returncode == 0


def torch_python():
    """A Python with PyTorch (Debian's python3-torch), installed if missing
    and this is root; None when it cannot be had."""
    candidates = ["/usr/bin/python3", sys.executable]
    found = next((p for p in candidates if has_torch(p)), None)
    if found or os.geteuid() != 0 or not shutil.which("apt-get"):
        return found
    print("vs_pytorch: installing python3-torch (apt-get) ...", flush=True)
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    subprocess.run(["apt-get", "update", "-qq"], env=env, capture_output=True)
    subprocess.run(["apt-get", "install", "-y", "-qq",
                    "--no-install-recommends", "python3-torch"],
                   env=env, capture_output=True)
    return next((p for p in candidates if has_torch(p)), None)


def torch_step(python, shapes, ranks, mode, steps, batch=0):
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer",
                          "torch_step.py")
    out = run([python, script, "--shapes", shapes, "--ranks", str(ranks),
               "--mode", mode, "--steps", str(steps - 1), "--batch",
               str(batch)]).stdout
    step = float(re.search(r"step_ms=([0-9.]+)", out).group(1))
    peak = float(re.search(r"peak_mb=([0-9.]+)", out).group(1))
    above = float(re.search(r"above_baseline_mb=([0-9.]+)", out).group(1))
    return step, peak, above


def generate(bin_dir, work, model, ranks, batch=0):
    """Writes zero-gen-step's step for `model` on `ranks` ranks (with a
    forward and backward over `batch` rows when not 0) and its parameter
    shapes; returns (the files' stem, the shapes' file, the shapes, the
    number of parameters)."""
    gen = os.path.join(bin_dir, "zero-gen-step")
    flags = MODELS[model] + ["--mesh", str(ranks)]
    if batch:
        flags += ["--batch", str(batch)]
    shapes_text = run([gen] + flags + ["--shapes"]).stdout
    shapes = shapes_text.split()
    params = sum(math.prod(int(d) for d in shape.split("x"))
                 for shape in shapes)
    stem = os.path.join(work, "%s-%d" % (model, ranks))
    with open(stem + ".shapes", "w") as f:
        f.write(shapes_text)
    with open(stem + ".mlir", "w") as f:
        f.write(run([gen] + flags).stdout)
    return stem, stem + ".shapes", shapes, params


def matmul_flops(shapes, batch):
    """The floating-point operations of a step's matmuls with B = `batch`
    rows: x W^T and the weight's gradient dz^T x, 2 B rows x features each,
    for every tensor of 2 or more dimensions."""
    total = 0
    for shape in shapes:
        dims = [int(d) for d in shape.split("x")]
        if len(dims) > 1:
            total += 4 * batch * math.prod(dims)
    return total


def given_and_sharded(args, bin_dir, stem, ranks):
    """zero-launch's figures (launch) for `stem`.mlir as given and sharded
    at the function boundary."""
    compile_ = os.path.join(bin_dir, "zero-compile")
    run([compile_, stem + ".mlir", "-o", stem + "-given.so"])
    run([compile_, stem + ".mlir", "-o", stem + "-sharded.so", "--passes",
         "zero-weight-update-sharding{shard-function-boundary}"])
    return (launch(bin_dir, stem + "-given.so", ranks, args.steps, args.repeat),
            launch(bin_dir, stem + "-sharded.so", ranks, args.steps,
                   args.repeat))


def torch_steps(args, python, shapes, ranks):
    """PyTorch's step in each mode, with a forward and backward when
    args.batch: {mode: (row label, step ms, peak MB)}; empty without
    PyTorch."""
    if not python:
        return {}
    return {mode: (label,) + torch_step(python, shapes, ranks, mode,
                                        args.steps, args.batch)[:2]
            for mode, label in [("foreach", "torch AdamW foreach"),
                                ("zero", "torch ZeroRedundancyOpt")]}


def print_against_torch(torch, given, sharded):
    """zero's steps against PyTorch's (torch_steps), as speedups."""
    if torch:
        print("  zero as given vs torch foreach: %.2fx faster" %
              (torch["foreach"][1] / given[0]))
        print("  zero sharded vs torch ZeroRedundancyOptimizer: %.2fx faster"
              % (torch["zero"][1] / sharded[0]))


def case(args, bin_dir, work, model, ranks, python):
    if args.batch:
        return case_with_forward(args, bin_dir, work, model, ranks, python)
    stem, shapes, shape_list, params = generate(bin_dir, work, model, ranks)
    given, sharded = given_and_sharded(args, bin_dir, stem, ranks)
    bandwidth = triad(bin_dir, ranks)
    mb = 1 / (1 << 20)
    bucket = min(BUCKET, 4 * params)
    live_given = (16 * params + bucket) * mb
    live_sharded = (12 * params / ranks + 4 * params + bucket) * mb
    roof_given = ADAMW_BYTES * params * ranks / bandwidth / 1e6
    roof_sharded = ADAMW_BYTES * params / bandwidth / 1e6
    print("\n%s: %d tensors, %d parameters, N = %d (triad, %d threads: "
          "%.1f GB/s)" % (model, len(shape_list), params, ranks,
                          ranks, bandwidth))
    print("  %-24s %9s %9s %12s %10s %9s" % (
        "", "step ms", "roofline", "peak MB/rank", "live MB", "peak/live"))
    rows = [("zero as given", given[0], roof_given, given[1], live_given),
            ("zero sharded", sharded[0], roof_sharded, sharded[1],
             live_sharded)]
    torch = torch_steps(args, python, shapes, ranks)
    for mode, (label, step, peak) in torch.items():
        rows.append((label, step, roof_given if mode == "foreach"
                     else roof_sharded, peak,
                     live_given if mode == "foreach" else live_sharded))
    for label, step, roof, peak, live in rows:
        print("  %-24s %9.1f %9.1f %12.0f %10.0f %9.2f" % (
            label, step, roof, peak, live, peak / live))
    print("  zero: system allocations in steps 2-%d: given %d, sharded %d" %
          (args.steps, given[2], sharded[2]))
    print("  zero sharded vs as given: %.2fx faster" % (given[0] / sharded[0]))
    print_against_torch(torch, given, sharded)


def case_with_forward(args, bin_dir, work, model, ranks, python):
    """A step with its forward and backward: zero as given and sharded
    against PyTorch's autograd, DDP-style all-reduce and AdamW."""
    stem, shapes, shape_list, params = generate(bin_dir, work, model, ranks,
                                                args.batch)
    given, sharded = given_and_sharded(args, bin_dir, stem, ranks)
    flops = matmul_flops(shape_list, args.batch)
    print("\n%s with forward and backward, B = %d rows a rank: %d tensors, "
          "%d parameters, N = %d, %.2f GFLOP of matmuls a rank a step" %
          (model, args.batch, len(shape_list), params, ranks, flops / 1e9))
    print("  %-24s %9s %12s %12s" % ("", "step ms", "matmul GF/s",
                                     "peak MB/rank"))
    rows = [("zero as given", given[0], given[1]),
            ("zero sharded", sharded[0], sharded[1])]
    torch = torch_steps(args, python, shapes, ranks)
    rows += list(torch.values())
    for label, step, peak in rows:
        print("  %-24s %9.1f %12.2f %12.0f" % (label, step,
                                               flops / step / 1e6, peak))
    print("  zero: system allocations in steps 2-%d: given %d, sharded %d" %
          (args.steps, given[2], sharded[2]))
    print_against_torch(torch, given, sharded)


def update_alone(args, bin_dir, work):
    """The update at N = 1, no collectives, against one thread's triad."""
    stem, _, _, params = generate(bin_dir, work, "small", 1)
    run([os.path.join(bin_dir, "zero-compile"), stem + ".mlir", "-o",
         stem + ".so"])
    step, _, _ = launch(bin_dir, stem + ".so", 1, args.steps, args.repeat)
    bandwidth = triad(bin_dir, 1)
    roof = ADAMW_BYTES * params / bandwidth / 1e6
    print("\nupdate alone (small, N = 1): %.1f ms, roofline %.1f ms "
          "(triad, 1 thread: %.1f GB/s): %.2f of the roofline, %.1f GB/s" %
          (step, roof, bandwidth, roof / step,
           ADAMW_BYTES * params / step / 1e6))


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    parser.add_argument("--build", default=os.path.join(root, "build"))
    parser.add_argument("--cases", default="small:2,gpt2:2,gpt2:4")
    parser.add_argument("--steps", type=int, default=11)
    parser.add_argument("--repeat", type=int, default=3,
                        help="zero's runs per program, the best kept: this "
                        "machine's noise moves a run by a third")
    parser.add_argument("--batch", type=int, default=0,
                        help="rows of data a rank's forward and backward read "
                        "each step (0: the update alone, gradients given)")
    parser.add_argument("--no-torch", action="store_true")
    args = parser.parse_args()
    bin_dir = require_tools(args.build, "vs_pytorch")
    python = None if args.no_torch else torch_python()
    if not python and not args.no_torch:
        print("vs_pytorch: PyTorch is not available; zero's columns only")
    if python:
        version = run([python, "-c", "import torch; print(torch.__version__)"
                       ]).stdout.strip()
        print("peer: PyTorch %s (%s), gloo, one thread per rank" %
              (version, python))
    print("machine: %d cores (%s), a fresh 4 KiB page touched in %.1f us; "
          "zero: zero-compile (host CPU default), zero-launch, local backend"
          % (os.cpu_count(), cpu_model(), fresh_page_us()))
    with tempfile.TemporaryDirectory(prefix="zero-vs-pytorch-") as work:
        if not args.batch:
            update_alone(args, bin_dir, work)
        for spec in args.cases.split(","):
            model, ranks = spec.split(":")
            case(args, bin_dir, work, model, int(ranks), python)
    return 0


if __name__ == "__main__":
    sys.exit(main())
