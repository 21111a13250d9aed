#!/usr/bin/env python3
"""What a proof that every rank issues every collective alike saves at run
time, side by side with PyTorch, in one run.

zero's runtime compares each collective across ranks before it runs (the
agreement check) unless zero-verify-collectives proved the program's
collectives alike; PyTorch compares them only with
TORCH_DISTRIBUTED_DEBUG=DETAIL. This prints the time of one small
all-reduce with and without the check for:

  - zero, local backend (threads): zero-bench-collective-latency;
  - zero, mpi backend (processes), when the runtime has MPI and mpirun is
    here;
  - PyTorch on gloo (processes), with and without DETAIL
    (benchmarks/peer/collective_latency.py), installed if missing.

  ninja -C build zero-bench-collective-latency
  benchmarks/collective_latency.py [--build build] [--ranks 2] [--rounds 5]
                                   [--iterations 2000] [--no-torch]
"""

import argparse
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from vs_pytorch import torch_python  # noqa: E402


def run(cmd, env=None):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode:
        sys.exit("collective_latency: %s failed:\n%s%s" % (
            " ".join(cmd), p.stdout, p.stderr))
    return p.stdout


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build")
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iterations", type=int, default=2000)
    p.add_argument("--no-torch", action="store_true")
    args = p.parse_args()
    bench = os.path.join(args.build, "bin", "zero-bench-collective-latency")
    common = ["--ranks", str(args.ranks), "--rounds", str(args.rounds),
              "--iterations", str(args.iterations)]
    print("zero, local backend:")
    print(run([bench, "--backend", "local"] + common), end="")
    mpirun = shutil.which("mpirun")
    if mpirun:
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        print("zero, mpi backend:")
        print(run([mpirun, "--oversubscribe", "--bind-to", "none", "-n",
                   str(args.ranks), bench, "--backend", "mpi"] + common,
                  env=env), end="")
    if args.no_torch:
        return
    python = torch_python()
    if not python:
        print("PyTorch: not available (python3-torch could not be installed)")
        return
    print("PyTorch, gloo:")
    peer = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer",
                        "collective_latency.py")
    print(run([python, peer] + common), end="")


if __name__ == "__main__":
    main()
