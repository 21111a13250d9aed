//===- Programs.h - generated optimizer steps over real shapes --*- C++ -*-===//
//
// Optimizer-step programs over the parameter shapes of real models, written
// as text in plain arith/math plus zero.all_reduce, for the benchmarks and for
// `zero-gen-adamw`, which prints them (the GPT-2 example program).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_BENCHMARKS_PROGRAMS_H
#define ZERO_BENCHMARKS_PROGRAMS_H

#include <cstdint>
#include <string>
#include <vector>

namespace zero::bench {

using Shape = std::vector<int64_t>;

/// The sizes of a GPT-2 model: GPT-2 small by default.
struct Gpt2Config {
  int layers = 12;
  int64_t width = 768;
  int64_t vocab = 50257;
  int64_t context = 1024;
};

/// The model's parameter shapes in the order of its state dict: token and
/// position embeddings, 12 tensors per block, the final layer norm. GPT-2
/// small has 2 + 12 * 12 + 2 = 148.
std::vector<Shape> gpt2Shapes(const Gpt2Config &config);

/// `count` parameter tensors of transformer shapes: GPT-2 small's block
/// shapes repeated (the embeddings first), cut at `count`.
std::vector<Shape> transformerShapes(int64_t count);

/// Elements of all `shapes` together.
int64_t countElements(const std::vector<Shape> &shapes);

/// One AdamW step (bias correction, decoupled weight decay) per tensor, on
/// mesh `@dp(shape = [meshSize])`: `@step(w0, m0, v0, g0, ..., t)` returns
/// each tensor's new w, m and v. Argument 4i+3 is tensor i's local gradient.
std::string adamwStep(const std::vector<Shape> &shapes, int64_t meshSize);

/// A training loop on mesh `@dp(shape = [meshSize])`: `steps` steps of SGD
/// on an MLP of `layers` square `width` x `width` weights (ReLU between
/// layers) fitting the identity on each rank's batch `x` of `batch` rows;
/// forward and backward are linalg.matmul, the gradients zero.all_reduce
/// means. `@train(w1, ..., wL, x)` returns the new weights; `x` is the only
/// per-rank argument.
std::string mlpTrainingLoop(int layers, int64_t width, int64_t batch,
                            int steps, int64_t meshSize);

} // namespace zero::bench

#endif // ZERO_BENCHMARKS_PROGRAMS_H
