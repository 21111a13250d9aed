"""PyTorch's CPU AdamW step alone, on the same shapes as a zero program.

The peer of zero's host update (docs/Benchmarks.md, host_update.py): one
process, --threads intra-op threads, the parameters and their gradients made
once, then torch.optim.AdamW.step() timed --steps times after a first step
that makes the optimizer state. --foreach picks the multi-tensor
implementation (one kernel per op over every tensor) or the per-tensor loop.

Prints one line: the mode, the threads, the median step in ms, and the peak
resident memory (MB).
"""
import argparse
import resource
import statistics
import sys
import time

from torch_step import parse_shapes


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shapes", required=True,
                        help="a file of parameter shapes, one AxB a line")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--foreach", choices=["true", "false"],
                        default="true")
    args = parser.parse_args()
    try:
        import torch
    except ImportError:
        print("torch_adamw: PyTorch is not installed (apt-get install "
              "python3-torch)", file=sys.stderr)
        return 2
    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(1)
    params = [torch.nn.Parameter(torch.rand(s, generator=gen) * 2 - 1)
              for s in parse_shapes(args.shapes)]
    for p in params:
        p.grad = torch.rand(p.shape, generator=gen) * 2 - 1
    opt = torch.optim.AdamW(params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=0.01,
                            foreach=args.foreach == "true")
    times = []
    for step in range(args.steps + 1):
        start = time.perf_counter()
        opt.step()
        if step > 0:  # the first step makes the optimizer state
            times.append(time.perf_counter() - start)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    print("torch adamw foreach=%s threads=%d step_ms=%.1f peak_mb=%.0f" %
          (args.foreach, args.threads, statistics.median(times) * 1e3, peak))
    return 0


if __name__ == "__main__":
    sys.exit(main())
