"""PyTorch's data-parallel AdamW step on the same shapes as a zero program.

The peer that zero is measured against (docs/Benchmarks.md): N processes on
gloo, as torchrun starts them (one intra-op thread each when N > 1). Each step
all-reduces the local gradients in buckets of --bucket-mb (DDP's default 25
MB; mean, as zero's steps do) and then runs either torch.optim.AdamW
(foreach=True) or ZeroRedundancyOptimizer(AdamW), which updates this rank's
partition and broadcasts it.

With --batch B, each step first computes the gradients as zero-gen-step
--batch B's step does (benchmarks/Programs.cpp), by autograd: tensor k's
layer reads B rows of this rank's data x_k, of its features (the product of
its dimensions after the first); a weight of 2 or more dimensions is a
linear layer without bias, z = x_k W^T (W flattened to rows x features),
a = relu(z), and a vector scales the features, z = x_k * w, a = z; the loss
is the sum over layers of the squares of a over 2B. The all-reduce follows
the backward pass (DDP's overlaps it; on one thread per rank there is
nothing to overlap it with).

Prints one line: mode, ranks, the median step in ms over --steps timed steps
(the slowest rank's), and the peak resident memory per rank (MB: whole, and
above the process as it was before the model was made).
"""
import argparse
import os
import resource
import statistics
import sys
import time


def parse_shapes(path):
    shapes = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                shapes.append(tuple(int(d) for d in line.split("x")))
    return shapes


def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def bucketed_all_reduce(torch, dist, params, bucket_bytes, world):
    """DDP's reduction: gradients packed into buckets, each all-reduced."""
    bucket, size = [], 0

    def flush():
        if not bucket:
            return
        flat = torch.cat([p.grad.reshape(-1) for p in bucket])
        dist.all_reduce(flat)
        flat.div_(world)
        offset = 0
        for p in bucket:
            n = p.grad.numel()
            p.grad.copy_(flat[offset:offset + n].view_as(p.grad))
            offset += n

    for p in reversed(params):  # DDP fills buckets in reverse order
        bucket.append(p)
        size += p.grad.numel() * 4
        if size >= bucket_bytes:
            flush()
            bucket, size = [], 0
    flush()


def forward_loss(torch, params, data, batch):
    """zero-gen-step --batch's loss: each layer's activations' squares over
    2B, summed over the layers."""
    loss = 0
    for p, x in zip(params, data):
        if p.dim() > 1:
            a = torch.relu(x @ p.reshape(p.shape[0], -1).t())
        else:
            a = x * p
        loss = loss + a.square().sum() / (2 * batch)
    return loss


def run(rank, args, shapes, out):
    import torch
    import torch.distributed as dist
    from torch.distributed.optim import ZeroRedundancyOptimizer

    if args.ranks > 1:
        torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method="file://" + args.rendezvous,
                            rank=rank, world_size=args.ranks)
    baseline = peak_mb()
    gen = torch.Generator().manual_seed(1 + rank)
    params = [torch.nn.Parameter(torch.rand(s, generator=gen) * 2 - 1)
              for s in shapes]
    if args.batch:
        data = [torch.rand(args.batch, p.numel() // p.shape[0]
                           if p.dim() > 1 else p.numel(), generator=gen) * 2 - 1
                for p in params]
    else:
        for p in params:
            p.grad = torch.rand(p.shape, generator=gen) * 2 - 1
    kwargs = dict(lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)
    if args.mode == "zero":
        opt = ZeroRedundancyOptimizer(params, optimizer_class=torch.optim.AdamW,
                                      **kwargs)
    else:
        opt = torch.optim.AdamW(params, foreach=True, **kwargs)
    times = []
    for step in range(args.steps + 1):
        dist.barrier()
        start = time.perf_counter()
        if args.batch:
            opt.zero_grad(set_to_none=True)
            forward_loss(torch, params, data, args.batch).backward()
        bucketed_all_reduce(torch, dist, params, args.bucket_mb << 20,
                            args.ranks)
        opt.step()
        dist.barrier()
        if step > 0:  # the first step makes the optimizer state
            times.append(time.perf_counter() - start)
    median = statistics.median(times) * 1e3
    peak = peak_mb()
    out.put((rank, median, peak, peak - baseline))
    dist.destroy_process_group()


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shapes", required=True,
                        help="a file of parameter shapes, one AxB a line")
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--mode", choices=["foreach", "zero"],
                        default="foreach")
    parser.add_argument("--bucket-mb", type=int, default=25)
    parser.add_argument("--batch", type=int, default=0,
                        help="rows of data a rank's forward and backward "
                        "read (0: gradients given, no forward)")
    args = parser.parse_args()
    try:
        import torch.multiprocessing as mp
    except ImportError:
        print("torch_step: PyTorch is not installed (apt-get install "
              "python3-torch)", file=sys.stderr)
        return 2
    shapes = parse_shapes(args.shapes)
    args.rendezvous = os.path.join(
        os.environ.get("TMPDIR", "/tmp"),
        "zero-torch-step-%d" % os.getpid())
    ctx = mp.get_context("spawn")
    out = ctx.Queue()
    procs = [ctx.Process(target=run, args=(r, args, shapes, out))
             for r in range(args.ranks)]
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
    if os.path.exists(args.rendezvous):
        os.remove(args.rendezvous)
    if any(p.exitcode != 0 for p in procs):
        print("torch_step: a rank failed", file=sys.stderr)
        return 1
    median = max(r[1] for r in results)
    peak = max(r[2] for r in results)
    above = max(r[3] for r in results)
    print("torch %s ranks=%d batch=%d step_ms=%.1f peak_mb=%.0f above_baseline_mb=%.0f"
          % (args.mode, args.ranks, args.batch, median, peak, above))
    return 0


if __name__ == "__main__":
    sys.exit(main())
