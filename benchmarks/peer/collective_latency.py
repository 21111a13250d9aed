#!/usr/bin/env python3
"""PyTorch's side of benchmarks/collective_latency.py: what its own
collective check costs a small all-reduce.

PyTorch finds ranks that disagree on a collective at run time with
TORCH_DISTRIBUTED_DEBUG=DETAIL (each collective's shape and type are checked
across ranks first); without it a mismatch hangs or corrupts. This times one
all-reduce of 1, 256 and 4096 f32 on N processes over gloo, with DETAIL and
without, best of --rounds rounds of --iterations each, and prints the same
lines as zero-bench-collective-latency:

    benchmarks/peer/collective_latency.py [--ranks 2] [--rounds 5] [--iterations 2000]

Needs PyTorch (Debian's python3-torch; benchmarks/collective_latency.py
installs it when missing).
"""

import argparse
import os
import subprocess
import sys
import time

SIZES = [1, 256, 4096]


def worker(rank, world, port, iterations):
    import torch
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}",
                            rank=rank, world_size=world)
    torch.set_num_threads(1)
    out = []
    for count in SIZES:
        x = torch.ones(count)
        for _ in range(10):
            dist.all_reduce(x)
        dist.barrier()
        begin = time.perf_counter()
        for _ in range(iterations):
            dist.all_reduce(x)
        out.append((time.perf_counter() - begin) / iterations * 1e6)
    dist.destroy_process_group()
    if rank == 0:
        print(" ".join(f"{us:.3f}" for us in out), flush=True)


def one_round(ranks, iterations, detail, port):
    env = dict(os.environ)
    env.pop("TORCH_DISTRIBUTED_DEBUG", None)
    if detail:
        env["TORCH_DISTRIBUTED_DEBUG"] = "DETAIL"
    procs = [subprocess.Popen(
        [sys.executable, __file__, "--worker", str(r), str(ranks), str(port),
         str(iterations)], env=env, stdout=subprocess.PIPE, text=True)
        for r in range(ranks)]
    outs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        sys.exit("collective_latency_torch: a worker failed")
    return [float(v) for v in outs[0].split()]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(*map(int, sys.argv[2:6]))
        return
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--iterations", type=int, default=2000)
    args = p.parse_args()
    import torch
    best = {True: [1e300] * len(SIZES), False: [1e300] * len(SIZES)}
    port = 29600
    for _ in range(args.rounds):
        for detail in (True, False):
            port += 1
            times = one_round(args.ranks, args.iterations, detail, port)
            best[detail] = [min(a, b) for a, b in zip(best[detail], times)]
    print(f"all-reduce of f32 on {args.ranks} ranks (torch {torch.__version__} "
          f"gloo), best of {args.rounds} rounds of {args.iterations}:")
    for i, count in enumerate(SIZES):
        on, off = best[True][i], best[False][i]
        print(f"  {count * 4:6d} B: {on:8.2f} us with TORCH_DISTRIBUTED_DEBUG"
              f"=DETAIL, {off:8.2f} us without: {on - off:7.2f} us "
              f"({(on - off) / on * 100:.0f}%)")


if __name__ == "__main__":
    main()
