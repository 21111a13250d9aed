//===- Programs.h - generated optimizer steps over real shapes --*- C++ -*-===//
//
// Optimizer-step programs over the parameter shapes of real models, written
// as text in plain arith/math plus zero.all_reduce, for the benchmarks and for
// `zero-gen-step`, which prints them (the GPT-2 example program).
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

/// BERT-base's parameter shapes in the order of its state dict: word,
/// position and token-type embeddings with their layer norm, 16 tensors per
/// encoder layer (query, key, value, attention output, layer norm,
/// intermediate, output, layer norm), the pooler: 5 + 12 * 16 + 2 = 199
/// tensors, 109.5M parameters.
std::vector<Shape> bertBaseShapes();

/// ResNet-50's parameter shapes in the order of torchvision's state dict:
/// the stem's convolution and batch norm, 16 bottleneck blocks (three
/// convolutions, each with its batch norm's scale and shift; the first block
/// of each stage with a downsampling convolution and batch norm), the
/// classifier: 161 tensors, 25.6M parameters.
std::vector<Shape> resnet50Shapes();

/// `count` parameter tensors of transformer shapes: GPT-2 small's block
/// shapes repeated (the embeddings first), cut at `count`.
std::vector<Shape> transformerShapes(int64_t count);

/// Each dimension of each shape divided by `divisor`, rounded up: the same
/// tensors, in the same order and of the same ranks, small enough to run.
std::vector<Shape> scaleShapes(const std::vector<Shape> &shapes,
                               int64_t divisor);

/// Elements of all `shapes` together.
int64_t countElements(const std::vector<Shape> &shapes);

/// The update rule of a generated optimizer step.
enum class Optimizer {
  /// Bias-corrected Adam moments with decoupled weight decay.
  AdamW,
  /// AdamW's direction scaled per tensor by the trust ratio ||w|| / ||r||
  /// (two full norms per tensor).
  Lamb,
};

/// How a generated step is written.
struct StepOptions {
  Optimizer optimizer = Optimizer::AdamW;
  /// Global-norm gradient clipping to norm 1, written as users write it: each
  /// gradient's sum of squares is chained into the total right after that
  /// gradient's all-reduce, and every update scales by min(1, 1 / (norm +
  /// eps)).
  bool clip = false;
  /// The mesh `@dp`'s shape.
  std::vector<int64_t> mesh = {4};
  /// The axes the gradients are averaged over; empty: all of them.
  std::vector<int64_t> axes;
  /// 0: one step, `@step(w0, m0, v0, g0, ..., t)` returning each tensor's
  /// new w, m and v (argument 4i+3 is tensor i's local gradient). K > 0: a
  /// training loop, `@train(...)` with the same arguments, running K steps
  /// in an `scf.for` that carries w, m and v (the gradients are the same
  /// each step; the step count t starts at the argument t).
  int64_t loopSteps = 0;
  /// 0: argument 4i+3 is tensor i's local gradient. B > 0: it is a batch of
  /// B rows of this rank's data for tensor i's layer, and the step computes
  /// the local gradient by the layer's forward and backward, as a training
  /// step does: all forwards first, then the backwards in reverse order,
  /// each gradient all-reduced as soon as it is made. A tensor of shape
  /// [o, d1, ...] is a ReLU layer over the data's D = d1 * ... features
  /// (data B x D, matmul with the weight transposed, loss half the mean
  /// square of the activations); a vector of n is a scale (data B x n, an
  /// elementwise product, its gradient a sum over the batch).
  int64_t forwardBatch = 0;
  /// With a forward pass: mixed precision, as training keeps fp32 master
  /// weights. Each layer reads its weight's bf16 rounding (`arith.truncf`):
  /// a matmul takes bf16 data and weight and accumulates in f32, a scale
  /// widens the rounding back to f32. The update, the moments and the
  /// gradients stay fp32.
  bool mixedPrecision = false;
};

/// One optimizer step per tensor over `shapes`, as `options` says, on mesh
/// `@dp`: all-reduce each local gradient (mean), then update that tensor.
std::string optimizerStep(const std::vector<Shape> &shapes,
                          const StepOptions &options);

/// One AdamW step over `shapes` on mesh `@dp(shape = [meshSize])`.
std::string adamwStep(const std::vector<Shape> &shapes, int64_t meshSize);

/// A training loop on mesh `@dp(shape = [meshSize])`: `steps` steps of SGD
/// on an MLP of `layers` square `width` x `width` weights (ReLU between
/// layers) fitting the identity on each rank's batch `x` of `batch` rows;
/// forward and backward are linalg.matmul, the gradients zero.all_reduce
/// means. `@train(w1, ..., wL, x)` returns the new weights; `x` is the only
/// per-rank argument. With `losses`, it also returns each step's loss (the
/// mean squared error over every rank's batch, before that step's update)
/// as a tensor<steps x f32>.
std::string mlpTrainingLoop(int layers, int64_t width, int64_t batch, int steps,
                            int64_t meshSize, bool losses = false);

} // namespace zero::bench

#endif // ZERO_BENCHMARKS_PROGRAMS_H
