"""PyTorch's fused AdamW step and the bf16 copy of the new weights, on one
flat shard of ELEMENTS parameters, on the GPU: the baseline for zero's fused
update (benchmarks/gpu/bench.sh). Prints the best time of --repeat steps,
each timed with CUDA events.

    python3 benchmarks/gpu/torch_adamw.py ELEMENTS [--repeat K]
"""
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("elements", type=int)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    device = torch.device("cuda")
    generator = torch.Generator(device=device).manual_seed(1)
    weights = torch.rand(args.elements, device=device, generator=generator)
    weights.requires_grad_(True)
    weights.grad = torch.rand(args.elements, device=device, generator=generator)
    # The same hyperparameters as adamw_shard.mlir.in.
    optimizer = torch.optim.AdamW([weights], lr=1e-3, betas=(0.9, 0.999),
                                  eps=1e-8, weight_decay=0.01, fused=True)

    def step():
        optimizer.step()
        return weights.detach().to(torch.bfloat16)

    for _ in range(3):  # warm up: state allocation, kernel selection
        step()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(args.repeat):
        begin = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        begin.record()
        step()
        end.record()
        torch.cuda.synchronize()
        best = min(best, begin.elapsed_time(end))
    print(f"torch {torch.__version__}: AdamW(fused=True) + bf16 copy of "
          f"{args.elements} elements: {best:.3f} ms best of {args.repeat}")


if __name__ == "__main__":
    main()
