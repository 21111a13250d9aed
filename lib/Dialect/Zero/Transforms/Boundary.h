//===- Boundary.h - state passed as shards at the boundary -*- C++ -*-===//
//
// With `shard-function-boundary`, a step function takes and returns its
// persistent state as this rank's shard (#zero.shard) instead of whole:
// zero-shard-weight-update does so for the state a single step updates and
// for the state a training loop carries, zero-defer-all-gather for the
// weights a loop carries as shards. Internal to ZeroTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_BOUNDARY_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_BOUNDARY_H

#include "Layout.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include <string>

namespace zero {

/// Why the signature of `func` may not change, as what the function does
/// ("has more than one block", "is called in the module": something in
/// `module` calls it), or an empty string when it may: the state it takes
/// and returns can then change form.
std::string whySignatureFixed(mlir::func::FuncOp func, mlir::Operation *module);

/// The return operand through which the function of `loop` (the op whose
/// body holds it) passes on the final value of `iterArg`, when the loop
/// starts `iterArg` from an argument of that function and the function
/// returns the loop's result as it is, nothing else reading it: then the
/// argument and the result can be the shard itself. Null otherwise, with
/// `why` set.
mlir::OpOperand *findCarriedReturn(mlir::scf::ForOp loop,
                                   mlir::BlockArgument iterArg,
                                   std::string &why);

/// Argument `argument` and result `result` of `func` become shards of
/// `whole` cut by `layout`: the argument's type changes, and both get
/// #zero.shard (the whole type and the group), so callers and checkpoints
/// can map them. updateFunctionType makes the signature agree.
void markShardBoundary(mlir::func::FuncOp func, unsigned argument,
                       unsigned result, const GroupPartition &layout,
                       mlir::RankedTensorType whole);

/// The argument that `loop` starts `iterArg` from, and the function result
/// `returned` (findCarriedReturn), become shards of `whole` cut by
/// `layout` (markShardBoundary), and so do `iterArg` and the loop's result
/// for it: the loop starts from the argument's shard. Whatever else reads
/// the argument gets it whole, gathered once at the function's start.
/// Returns the argument.
mlir::BlockArgument startFromShard(mlir::scf::ForOp loop,
                                   mlir::BlockArgument iterArg,
                                   mlir::OpOperand *returned,
                                   const GroupPartition &layout,
                                   mlir::RankedTensorType whole);

/// The type of `func` again from its entry block and its return.
void updateFunctionType(mlir::func::FuncOp func);

} // namespace zero

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_BOUNDARY_H
