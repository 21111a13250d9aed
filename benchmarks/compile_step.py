#!/usr/bin/env python3
"""End-to-end compile time of a whole training step: forward, backward and
update, from text to a shared-library artifact, as a user compiles it.

Each program is printed by zero-gen-step with --batch 4 (each layer's forward
and backward over a batch of 4 rows of per-rank data, then the all-reduce of
its gradient and AdamW; Programs.h) and compiled by zero-compile for the CPU,
as given and, with --sharded, after zero-weight-update-sharding. Printed per
compile: the phases zero-compile's --mlir-timing reports (MLIR: parse, the
sharding pipeline, the lowering; LLVM: optimization and code generation;
the link), the total wall time and the peak resident memory
(/usr/bin/time). Each compile runs twice side by side: with loop nests
outlined (zero-to-llvm's default) and without (outline-loop-nests=false),
the whole step as one function.

First real models at full size (GPT-2 small, BERT-base, ResNet-50), then
training loops (--loops: the model at a fifth of its width, 3 steps in an
scf.for carrying weights and moments, sharded with the gather deferred and
overlapped), then transformer-shaped programs of doubling size (--tensors),
with the growth of the total per doubling (the goal: at most 2.2x). With
--repeat R each compile runs R times and the fastest is kept (this machine's
timings vary by tens of percent from run to run).

  benchmarks/compile_step.py [--build build] [--models gpt2,bert,resnet50]
      [--loops resnet50] [--tensors 50,100,200,400] [--modes given,sharded]
      [--no-baseline] [--repeat 1]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

PHASES = [
    ("parse", "parse"),
    ("sharding", "--passes pipeline"),
    ("lowering", "MLIR lowering"),
    ("to LLVM IR", "translation to LLVM IR"),
    ("LLVM opt", "LLVM optimization"),
    ("codegen", "code generation"),
    ("link", "link"),
]
SHARDING = "zero-weight-update-sharding"
LOOP_SHARDING = "zero-weight-update-sharding{defer-all-gather overlap}"
# A top-level line of --mlir-timing-display=tree: "  1.2345 ( 12.3%)  name",
# or with user time first where threads ran ("  2.1 ( 4.0%)  1.2 ( 3.1%)
# name"): the wall time is the last column.
TOP_LEVEL = re.compile(
    r"^\s+(?:[0-9.]+ \(\s*[0-9.]+%\)\s+)?([0-9.]+) \(\s*[0-9.]+%\)  (\S.*?)\s*$")


def generate(bin_dir, args, path):
    with open(path, "w") as out:
        subprocess.run([os.path.join(bin_dir, "zero-gen-step"), "--batch", "4",
                        "--mesh", "8"] + args, stdout=out, check=True)


def compile_best(bin_dir, program, sharding, outline, work, repeat):
    """compile_once's figures of the fastest of `repeat` compiles."""
    runs = [compile_once(bin_dir, program, sharding, outline, work)
            for _ in range(repeat)]
    return min(runs, key=lambda run: run[1])


def compile_once(bin_dir, program, sharding, outline, work):
    """{phase: seconds}, wall seconds and peak MB of one zero-compile."""
    cmd = ["/usr/bin/time", "-f", "maxrss_kb=%M",
           os.path.join(bin_dir, "zero-compile"), program,
           "-o", os.path.join(work, "step.so"),
           "--mlir-timing", "--mlir-timing-display=tree"]
    if sharding:
        cmd += ["--passes", sharding]
    if not outline:
        cmd += ["--lowering-options", "outline-loop-nests=false"]
    start = time.monotonic()
    proc = subprocess.run(cmd, text=True, capture_output=True)
    wall = time.monotonic() - start
    if proc.returncode != 0:
        sys.exit("compile_step: %s failed:\n%s" % (" ".join(cmd),
                                                    proc.stderr[-3000:]))
    phases = {}
    for line in proc.stderr.splitlines():
        match = TOP_LEVEL.match(line)
        if match:
            phases[match.group(2)] = float(match.group(1))
    peak = re.search(r"maxrss_kb=(\d+)", proc.stderr)
    return phases, wall, int(peak.group(1)) / 1024 if peak else float("nan")


def header():
    names = "".join("%11s" % short for short, _ in PHASES)
    return "%-24s %-8s %-9s%s %9s %9s" % ("program", "mode", "nests",
                                          names, "total s", "peak MB")


def row(name, mode, outline, phases, wall, peak):
    cells = "".join("%11.2f" % phases.get(full, 0.0) for _, full in PHASES)
    return "%-24s %-8s %-9s%s %9.1f %9.0f" % (
        name, mode, "outlined" if outline else "one func", cells, wall, peak)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default="gpt2,bert,resnet50")
    parser.add_argument("--loops", default="resnet50")
    parser.add_argument("--tensors", default="50,100,200,400")
    parser.add_argument("--modes", default="given,sharded")
    parser.add_argument("--no-baseline", action="store_true",
                        help="only the default lowering (loop nests outlined)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="compile each R times, keep the fastest")
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    modes = [m for m in args.modes.split(",") if m]
    outlines = [True] if args.no_baseline else [True, False]
    programs = [(m, ["--model", m], SHARDING)
                for m in args.models.split(",") if m]
    programs += [(m + " loop", ["--model", m, "--scale", "5", "--loop", "3"],
                  LOOP_SHARDING) for m in args.loops.split(",") if m]
    doubling = [int(t) for t in args.tensors.split(",") if t]
    if any(b != 2 * a for a, b in zip(doubling, doubling[1:])):
        sys.exit("compile_step: --tensors must double, e.g. 50,100,200")
    programs += [("%d tensors" % t, ["--tensors", str(t)], SHARDING)
                 for t in doubling]

    print(header(), flush=True)
    totals = {}
    with tempfile.TemporaryDirectory() as work:
        for name, gen_args, sharding in programs:
            program = os.path.join(work, "step.mlir")
            generate(bin_dir, gen_args, program)
            for mode in modes:
                for outline in outlines:
                    phases, wall, peak = compile_best(
                        bin_dir, program,
                        sharding if mode == "sharded" else None, outline,
                        work, args.repeat)
                    totals[(name, mode, outline)] = wall
                    print(row(name, mode, outline, phases, wall, peak),
                          flush=True)
    if len(doubling) > 1:
        print("\ngrowth of the total per doubling of the program "
              "(goal: at most 2.2x)")
        for mode in modes:
            for outline in outlines:
                steps = []
                for small, large in zip(doubling, doubling[1:]):
                    a = totals[("%d tensors" % small, mode, outline)]
                    b = totals[("%d tensors" % large, mode, outline)]
                    steps.append("%d->%d: %.2fx" % (small, large, b / a))
                print("  %-8s %-9s %s" % (mode, "outlined" if outline
                                          else "one func", ", ".join(steps)))


if __name__ == "__main__":
    main()
