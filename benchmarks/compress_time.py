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
rank's), the bytes a rank sends, and what compression changed. Then, on
each backend, asks the planner (reduce-dtype=auto with the cost model that
zero-run --calibrate measures there, its collectives at the size of the
step's buckets) which reduce-scatters to compress, and says whether it
agrees with the measurement.

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


MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# zero-weight-update-sharding's bucket-bytes default (PassOptions.td).
BUCKET_BYTES = 25 * 1024 * 1024


def run(cmd, stderr=False, **kw):
    result = subprocess.run(cmd, text=True, capture_output=True, **kw)
    if result.returncode:
        sys.exit("compress_time: %s failed:\n%s%s" % (" ".join(cmd),
                                                     result.stdout[-2000:],
                                                     result.stderr[-2000:]))
    return result.stdout + (result.stderr if stderr else "")


def with_backend(args, cmd, backend):
    """`cmd` on `backend` with args.ranks ranks."""
    if backend == "mpi":
        return ["mpirun", "--oversubscribe", "--bind-to", "none", "-n",
                str(args.ranks)] + cmd + ["--backend", "mpi"]
    return cmd + ["--ranks", str(args.ranks)]


def plan(args, program, backend, tmp):
    """The planner's choice on `backend`: (reduce-scatters compressed, all
    of them, the calibrated cost model's options)."""
    sent = BUCKET_BYTES * (args.ranks - 1) // args.ranks
    out = run(with_backend(args, [os.path.join(args.build, "bin", "zero-run"),
                                  "--calibrate", "--calibrate-bytes",
                                  str(sent)], backend), env=MPI_ENV)
    model = re.search(r"cost model: (.*)", out)
    if not model:
        sys.exit("compress_time: no cost model in:\n" + out)
    remarks = run([os.path.join(args.build, "bin", "zero-compile"), program,
                   "--passes=zero-weight-update-sharding{shard-function-boundary "
                   "reduce-dtype=auto quantize-block=%d %s}" %
                   (args.quantize_block, model.group(1)),
                   "-o", os.path.join(tmp, "planned-%s.so" % backend)],
                  stderr=True)
    compressed = remarks.count("zero-compress-reduce-scatter: exchanged as")
    exact = remarks.count("zero-compress-reduce-scatter: left exact")
    return compressed, compressed + exact, model.group(1)


def launch(args, artifact, backend):
    cmd = with_backend(args, [os.path.join(args.build, "bin", "zero-launch"),
                              artifact, "--generate", "--steps",
                              str(args.steps)], backend)
    out = run(cmd, env=MPI_ENV)
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
            pays = q_ms < exact_ms
            print("%-8s qgZ sends %.3f of the bytes and takes %.2fx the time: "
                  "compression %s here" % (backend, q_b / exact_b, q_ms / exact_ms,
                                           "pays" if pays else "does not pay"))
            compressed, total, model = plan(args, program, backend, tmp)
            agrees = (compressed == total) if pays else (compressed == 0)
            print("%-8s planner (reduce-dtype=auto, calibrated here at %d B a "
                  "rank: %s): compresses %d of %d reduce-scatters, %s the "
                  "measurement" % (backend, BUCKET_BYTES * (args.ranks - 1) //
                                   args.ranks, model, compressed, total,
                                   "agreeing with" if agrees else
                                   "AGAINST"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
