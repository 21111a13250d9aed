#!/usr/bin/env python3
"""Training with compressed communication against training without, in one run.

Trains one MLP (zero-gen-mlp --losses: square ReLU layers fitting the
identity on each rank's own batch, SGD, each step's loss recorded) for a few
hundred steps on N ranks (threads of the local backend), from the same
weights and data, under each pipeline:
  - f32: the program as given (an all-reduce of each gradient);
  - sharded: zero-weight-update-sharding{defer-all-gather} (exact: the same
    bits as f32, checked here);
  - qwZ: ... gather-dtype=int8 (the weights' gather in int8 blocks);
  - qgZ: ... reduce-dtype=int8 (the gradients' reduce-scatter in int8
    blocks, all-to-all);
  - qwZ+qgZ: both;
  - qgZ4: ... reduce-dtype=int4 (the gradients' exchange in int4 blocks,
    two levels a byte);
  - qwZ+qgZ4: int8 gathers with int4 reductions;
  - qgZ4+EF, qwZ+qgZ4+EF: the same with error-feedback (each rank keeps
    what its exchange lost, carried by the training loop, and sends it in
    the next step).
Prints each run's loss at a few steps and its final loss against f32's (the
goal: within 1%), and draws the curves into a PNG (--png).

  benchmarks/convergence.py [--build build] [--ranks 4] [--steps 300]
                            [--layers 3] [--width 64] [--batch 32]
                            [--quantize-block 4096] [--png FILE]
"""
import argparse
import math
import os
import struct
import subprocess
import sys
import tempfile
import zlib

VARIANTS = [
    ("f32", None),
    ("sharded", "defer-all-gather"),
    ("qwZ", "defer-all-gather gather-dtype=int8"),
    ("qgZ", "reduce-dtype=int8"),
    ("qwZ+qgZ", "defer-all-gather gather-dtype=int8 reduce-dtype=int8"),
    ("qgZ4", "reduce-dtype=int4"),
    ("qwZ+qgZ4", "defer-all-gather gather-dtype=int8 reduce-dtype=int4"),
    ("qgZ4+EF", "reduce-dtype=int4 error-feedback"),
    ("qwZ+qgZ4+EF",
     "defer-all-gather gather-dtype=int8 reduce-dtype=int4 error-feedback"),
]
COLORS = [(0, 0, 0), (120, 120, 120), (31, 119, 180), (214, 39, 40),
          (44, 160, 44), (255, 127, 14), (148, 103, 189), (140, 86, 75),
          (23, 190, 207)]


def read_npy_f32(path):
    """The f32 values of a 1-D .npy file that zero-run wrote."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        sys.exit("convergence: %s is not a .npy file" % path)
    header_len = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + header_len].decode("latin1")
    if "'<f4'" not in header:
        sys.exit("convergence: %s does not hold f32 values: %s" % (path, header))
    body = data[10 + header_len:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


def run(args, program, options, out):
    command = [os.path.join(args.build, "bin", "zero-run"), program,
               "--ranks", str(args.ranks), "--per-rank", str(args.layers),
               "--output-dir", out]
    for i in range(args.layers):
        command += ["--range", "%d=%g:%g" % (i, -args.init, args.init)]
    if options:
        command.append("--passes=zero-weight-update-sharding{%s quantize-block=%d}"
                       % (options, args.quantize_block))
    result = subprocess.run(command, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    if result.returncode != 0:
        sys.exit("convergence: %s failed:\n%s" % (" ".join(command),
                                                   result.stderr[-2000:]))
    losses = read_npy_f32(os.path.join(out, "rank0", "result%d.npy" % args.layers))
    weights = [open(os.path.join(out, "rank0", "result%d.npy" % i), "rb").read()
               for i in range(args.layers)]
    return losses, weights


def write_png(path, curves, steps, width=720, height=420):
    """Loss curves (log scale) as an RGB PNG, with the standard library."""
    pixels = [[(255, 255, 255)] * width for _ in range(height)]
    left, right, top, bottom = 50, width - 20, 20, height - 40
    values = [v for _, losses in curves for v in losses if v > 0]
    lo, hi = math.log10(min(values)), math.log10(max(values))
    if hi - lo < 1e-9:
        hi = lo + 1

    def point(step, value):
        x = left + (right - left) * step / max(1, steps - 1)
        y = bottom - (bottom - top) * (math.log10(max(value, 1e-30)) - lo) / (hi - lo)
        return int(round(x)), int(round(y))

    def plot(x, y, color):
        for dx in (0, 1):
            for dy in (0, 1):
                if 0 <= x + dx < width and 0 <= y + dy < height:
                    pixels[y + dy][x + dx] = color

    for x in range(left, right + 1):
        plot(x, bottom, (0, 0, 0))
    for y in range(top, bottom + 1):
        plot(left, y, (0, 0, 0))
    for decade in range(math.ceil(lo), math.floor(hi) + 1):
        _, y = point(0, 10.0 ** decade)
        for x in range(left, right, 4):
            plot(x, y, (220, 220, 220))
    for (name, losses), color in zip(curves, COLORS):
        previous = None
        for step, value in enumerate(losses):
            current = point(step, value)
            if previous:
                n = max(abs(current[0] - previous[0]), abs(current[1] - previous[1]), 1)
                for k in range(n + 1):
                    plot(previous[0] + (current[0] - previous[0]) * k // n,
                         previous[1] + (current[1] - previous[1]) * k // n, color)
            previous = current
    # Legend: a swatch a variant, top right.
    for i, color in enumerate(COLORS[:len(curves)]):
        for y in range(top + 8 + 14 * i, top + 16 + 14 * i):
            for x in range(right - 40, right - 10):
                plot(x, y, color)
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(
            ">I", zlib.crc32(body) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n")
        f.write(chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)))
        f.write(chunk(b"IDAT", zlib.compress(raw, 9)))
        f.write(chunk(b"IEND", b""))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    parser.add_argument("--ranks", type=int, default=4)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--layers", type=int, default=3)
    parser.add_argument("--width", type=int, default=64)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--init", type=float, default=0.3,
                        help="weights start uniform in [-init, init)")
    parser.add_argument("--quantize-block", type=int, default=4096)
    parser.add_argument("--png", help="draw the loss curves into this file")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="zero-convergence") as tmp:
        program = os.path.join(tmp, "mlp.mlir")
        with open(program, "w") as f:
            subprocess.run([os.path.join(args.build, "bin", "zero-gen-mlp"),
                            "--layers", str(args.layers), "--width", str(args.width),
                            "--batch", str(args.batch), "--steps", str(args.steps),
                            "--mesh", str(args.ranks), "--losses"],
                           stdout=f, check=True)
        results = []
        for name, options in VARIANTS:
            losses, weights = run(args, program, options,
                                  os.path.join(tmp, name.replace("+", "_")))
            results.append((name, losses, weights))

    print("convergence: MLP %d x %dx%d, batch %d a rank, %d ranks, %d steps of "
          "SGD, quantize-block %d" % (args.layers, args.width, args.width,
                                      args.batch, args.ranks, args.steps,
                                      args.quantize_block))
    shown = sorted({s for s in (0, 1, 10, args.steps // 4, args.steps // 2)
                    if s < args.steps} | {args.steps - 1})
    print("%-12s" % "step" + "".join("%14d" % s for s in shown))
    for name, losses, _ in results:
        print("%-12s" % name + "".join("%14.6g" % losses[s] for s in shown))
    reference = results[0][1][-1]
    exact = results[1][2] == results[0][2] and results[1][1] == results[0][1]
    print("sharded against f32: %s" % ("the same bits (weights and losses)"
                                       if exact else "DIFFERENT"))
    for name, losses, _ in results[2:]:
        change = (losses[-1] - reference) / reference
        print("final loss %-11s %.6g (f32 %.6g): %+.3f%% %s" % (
            name, losses[-1], reference, 100 * change,
            "within 1%" if abs(change) <= 0.01 else "NOT within 1%"))
    if args.png:
        write_png(args.png, [(n, l) for n, l, _ in results], args.steps)
        print("curves: %s (black f32, grey sharded, blue qwZ, red qgZ, "
              "green qwZ+qgZ, orange qgZ4, purple qwZ+qgZ4, brown qgZ4+EF, "
              "cyan qwZ+qgZ4+EF; log scale)" %
              args.png)
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
