#!/usr/bin/env python3
"""The sharded step with and without a compressed reduce-scatter, in one run.

For a GPT-2-shaped AdamW step (zero-gen-step, the one vs_pytorch.py times),
zero-compile'd twice:
  - exact: zero-weight-update-sharding{shard-function-boundary};
  - qgZ: the same with reduce-dtype=int8 (the gradients' reduce-scatter as
    int8 blocks, all-to-all, summed in f32 by each rank);
each run by zero-launch --steps K on N ranks, on the local backend (threads:
a collective is a memcpy) and on mpi (one process a rank: bytes go through
MPI's shared-memory transport). Prints each step's median time (the slowest
rank's), the bytes a rank sends, and what compression changed.

  benchmarks/compress_time.py [--build build] [--model small] [--ranks 2]
                              [--steps 6] [--quantize-block 4096]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_pytorch import MODELS  # noqa: E402


def run(cmd, **kw):
    result = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if result.returncode:
        sys.exit("compress_time: %s failed:\n%s%s" % (" ".join(cmd),
                                                     result.stdout[-2000:],
                                                     result.stderr[-2000:]))
    return result.stdout


def launch(args, artifact, backend):
    cmd = [os.path.join(args.build, "bin", "zero-launch"), artifact,
           "--generate", "--steps", str(args.steps)]
    if backend == "mpi":
        cmd = ["mpirun", "--oversubscribe", "--bind-to", "none", "-n",
               str(args.ranks)] + cmd + ["--backend", "mpi"]
    else:
        cmd += ["--ranks", str(args.ranks)]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = run(cmd, env=env)
    medians = [float(m) for m in re.findall(r"median ([0-9.]+) ms", out)]
    sent = [sum(int(b) for b in re.findall(r"\(([0-9]+) B\)", line))
            for line in out.splitlines() if re.match(r"\s*(\[.*\])?\s*rank", line)
            and "median" in line]
    if len(medians) != args.ranks or not sent:
        sys.exit("compress_time: unexpected zero-launch output:\n" + out)
    return max(medians), max(sent)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    parser.add_argument("--model", default="small", choices=sorted(MODELS))
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--quantize-block", type=int, default=4096)
    args = parser.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    backends = ["local"] + (["mpi"] if shutil.which("mpirun") else [])

    with tempfile.TemporaryDirectory(prefix="zero-compress-time") as tmp:
        program = os.path.join(tmp, "step.mlir")
        with open(program, "w") as f:
            f.write(run([os.path.join(bin_dir, "zero-gen-step")] +
                        MODELS[args.model] + ["--mesh", str(args.ranks)]))
        variants = [("exact", "shard-function-boundary"),
                    ("qgZ", "shard-function-boundary reduce-dtype=int8 "
                     "quantize-block=%d" % args.quantize_block)]
        artifacts = {}
        for name, options in variants:
            artifacts[name] = os.path.join(tmp, name + ".so")
            run([os.path.join(bin_dir, "zero-compile"), program,
                 "--passes=zero-weight-update-sharding{%s}" % options,
                 "-o", artifacts[name]])
        print("compress_time: %s AdamW step (%s), %d ranks, median of steps "
              "2-%d, quantize-block %d" % (args.model, " ".join(MODELS[args.model]),
                                           args.ranks, args.steps,
                                           args.quantize_block))
        print("%-8s %-6s %12s %24s" % ("backend", "run", "ms a step",
                                       "bytes sent/rank, %d steps" % args.steps))
        for backend in backends:
            times = {}
            for name, _ in variants:
                ms, sent = launch(args, artifacts[name], backend)
                times[name] = (ms, sent)
                print("%-8s %-6s %12.2f %24d" % (backend, name, ms, sent))
            (exact_ms, exact_b), (q_ms, q_b) = times["exact"], times["qgZ"]
            print("%-8s qgZ sends %.3f of the bytes and takes %.2fx the time: "
                  "compression %s here" % (backend, q_b / exact_b, q_ms / exact_ms,
                                           "pays" if q_ms < exact_ms else
                                           "does not pay"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
