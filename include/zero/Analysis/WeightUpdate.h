//===- WeightUpdate.h - find the update code of a gradient ------*- C++ -*-===//
//
// A gradient all-reduce whose result flows only through elementwise code into
// values that leave the block (returned, or yielded by a loop body) is a
// weight update: every element of the new weights and optimizer state depends
// only on the same element of the gradient, weights and state. Such an update
// can run on any partition of the elements, which is what sharding it needs.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_WEIGHTUPDATE_H
#define ZERO_ANALYSIS_WEIGHTUPDATE_H

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/SetVector.h"

namespace zero {

/// The update code fed by one gradient all-reduce.
struct WeightUpdate {
  /// The gradient all-reduce.
  AllReduceOp gradient;
  /// The elementwise ops computing the update, in block order.
  llvm::SmallVector<mlir::Operation *> ops;
  /// Full-shape tensors the update reads besides the gradient: weights,
  /// optimizer state, non-splat constants.
  llvm::SetVector<mlir::Value> inputs;
  /// Terminator operands (func.return, scf.yield, ...) the update produces.
  llvm::SmallVector<mlir::OpOperand *> outputs;
};

/// Finds the update code fed by `gradient`. On failure, `whyNot` says why the
/// gradient's users are not a shardable update.
mlir::FailureOr<WeightUpdate> findWeightUpdate(AllReduceOp gradient,
                                               std::string &whyNot);

/// Whether `value` is a splat constant: shardable by making a smaller splat.
bool isSplatConstant(mlir::Value value);

} // namespace zero

#endif // ZERO_ANALYSIS_WEIGHTUPDATE_H
