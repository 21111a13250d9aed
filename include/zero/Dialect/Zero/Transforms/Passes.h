//===- Passes.h - zero passes -----------------------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace zero {

/// The element type of the copy zero-defer-all-gather gathers (gather-dtype).
enum class GatherDtype { Auto, BF16, F16, F32, Int8, Int4 };

/// What the gradients' reduce-scatter sends (reduce-dtype).
enum class ReduceDtype { Exact, Int8, Int4, BF16, Auto };

/// Which training state lives in host memory beside a GPU (offload).
enum class Offload { None, Optimizer, Params };

/// What zero-verify-collectives does with a collective it cannot prove
/// (mode).
enum class VerifyMode { Error, Warn };

#define GEN_PASS_DECL
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

} // namespace zero

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
