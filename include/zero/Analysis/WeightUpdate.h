//===- WeightUpdate.h - find the update code of a gradient ------*- C++ -*-===//
//
// A gradient all-reduce whose result flows only through elementwise code into
// values that leave the block (returned, or yielded by a loop body) is a
// weight update: every element of the new weights and optimizer state depends
// only on the same element of the gradient, weights and state. Such an update
// can run on any partition of the elements, which is what sharding it needs.
//
// Full reductions inside the update (the norms of LAMB's trust ratio, a
// global gradient norm for clipping, an inf check) are allowed too: on a
// partition they become a partial reduction plus an all-reduce of the
// partials, because their combiner is associative and commutative.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_WEIGHTUPDATE_H
#define ZERO_ANALYSIS_WEIGHTUPDATE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/SetVector.h"

namespace zero {

/// How a full reduction's combiner maps onto a collective.
struct ReductionCombiner {
  /// The combiner's identity (x op identity == x for every x, -0.0 for a
  /// floating-point sum): what padding must hold so that it changes nothing.
  mlir::TypedAttr identity;
};

/// The combiner of `reduce` when it reduces its single input over every
/// dimension into a 0-d init with one associative op of its two block
/// arguments whose identity is known: addf, mulf, maximumf, minimumf; addi,
/// muli, andi, ori, xori, maxsi, minsi, maxui, minui.
std::optional<ReductionCombiner>
matchFullReduction(mlir::linalg::ReduceOp reduce);

/// The update code fed by one gradient all-reduce.
struct WeightUpdate {
  /// The gradient all-reduce.
  AllReduceOp gradient;
  /// The ops computing the update, each after the update ops it reads (a
  /// topological order, not necessarily block order): elementwise ops on the
  /// gradient's shape or its flattening, `tensor.collapse_shape` to that
  /// flattening, and full reductions (`linalg.reduce`) whose 0-d results
  /// leave the update as replicated values.
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

/// Whether every element of `value` is the same (or undefined): a splat
/// constant, a `tensor.splat` or `linalg.fill` of a scalar, a
/// `linalg.broadcast` of a 0-d tensor, a `tensor.empty`. Its shard is the
/// same op on the shard's shape, never a slice.
bool isSplat(mlir::Value value);

/// Whether `op`, reading a state value, is part of an update: it maps
/// element to element (arith and math on tensors, a linalg op with only
/// parallel loops), reshapes, pads or slices (tensor ops), reduces the
/// whole value to one (a norm), or is one of zero's collectives and shard
/// ops. Its results are followed further.
bool isUpdateStep(mlir::Operation *op);

/// The element type that `reader` rounds the value it reads to, or null: an
/// `arith.truncf` of the tensor, or the same in linalg form (a linalg op of
/// parallel identity maps whose body only truncates its one input, as
/// `convert-elementwise-to-linalg` makes of it). The bf16 copy of fp32
/// master weights that a model reads is one.
mlir::Type truncatedElement(mlir::OpOperand *reader);

/// The ops of `state`'s update, breadth first: the update steps that read
/// it or what they compute from it (not the function's return).
llvm::SetVector<mlir::Operation *> getUpdateOps(mlir::Value state);

} // namespace zero

#endif // ZERO_ANALYSIS_WEIGHTUPDATE_H
