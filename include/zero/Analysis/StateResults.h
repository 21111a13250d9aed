//===- StateResults.h - which results are the next state --------*- C++ -*-===//
//
// A training step returns the next value of its state (weights, optimizer
// moments): a launcher that runs it many times feeds each such result to the
// argument it updates. This analysis finds those pairs in the step itself.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_STATERESULTS_H
#define ZERO_ANALYSIS_STATERESULTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace zero {

/// A value that flows into another, `distance` ops before it.
struct StateSource {
  int64_t distance;
  mlir::Value value;
};

/// The values that flow into `value` and that `accept` takes, each with its
/// distance in ops, found breadth-first backward through the producers
/// `follow` allows: nearest first. All are kept: when the nearest pair with
/// other values, the next nearest may pair. With `nearestOnly` set to true,
/// the search ends with the distance of the first one found (all of that
/// distance are kept) and sets it to whether it ended early: a whole
/// backward slice per output made a sharded step's pairing quadratic.
llvm::SmallVector<StateSource>
findStateSources(mlir::Value value,
                 llvm::function_ref<bool(mlir::Value)> accept,
                 llvm::function_ref<bool(mlir::Operation *)> follow,
                 bool *nearestOnly = nullptr);

/// Pairs outputs with sources: output i, whose sources are `sources[i]`
/// (nearest first), claims its nearest source not yet taken when exactly
/// one is nearest, and of the outputs that claim one source the nearest
/// takes it (none, when two are equally near): `w' = w - lr * m'`, whose
/// nearest open source may be `m`, does not take it from `m' = b * m + g`.
/// A paired source leaves the race, and rounds repeat until none pairs.
/// Returns the pairs (output index, source) in the order made.
/// `sources[i]` may hold only the nearest sources (findStateSources with
/// `nearestOnly`): when all it holds are taken, `complete(i)` is asked to
/// replace it by all of output i's sources, and the pairs are the same as
/// with every list whole from the start.
llvm::SmallVector<std::pair<size_t, mlir::Value>> pairNearestSources(
    llvm::MutableArrayRef<llvm::SmallVector<StateSource>> sources,
    llvm::function_ref<void(size_t)> complete = nullptr);

/// The result attribute that names the argument whose next value the result
/// is (an index), set by markStateResults.
inline constexpr llvm::StringLiteral kStateOfAttrName = "zero.state_of";

/// The argument attribute that donates the argument's buffer to a result
/// (an index): the function writes that result into it
/// (zero-donate-state, zero-offload-to-host) and returns it there
/// (zero-return-donated-buffers).
inline constexpr llvm::StringLiteral kAliasingOutputAttrName =
    "zero.aliasing_output";

/// The argument attribute that marks state whose first value is zeros (an
/// error-feedback residual, which zero-compress-reduce-scatter adds): a
/// launcher starts it at zero when no input names it.
inline constexpr llvm::StringLiteral kStartsAtZeroAttrName =
    "zero.starts_at_zero";

/// The argument attribute that marks state zero-delay-update added: the
/// values of the step before that the update reads, and its flag (which
/// also start at zero).
inline constexpr llvm::StringLiteral kDelayedAttrName = "zero.delayed";

/// For each result of `fn`, the index of the argument whose next value it
/// is, if any. A result marked `zero.state_of` pairs with the argument it
/// names, when that argument has its type and layout (`zero.shard`). Each
/// other result pairs with the unmarked argument of its type and layout
/// that is nearest to it in the data flow (fewest ops between them), when
/// exactly one is nearest; paired arguments leave the race, rounds repeat
/// until no result pairs. `w' = w - lr * m'` pairs with `w` (one op away),
/// `m' = b * m + g'` with `m` (`g'` is an all-reduce further from the
/// gradient argument). A result with two nearest candidates pairs with
/// none.
llvm::SmallVector<std::optional<unsigned>>
findStateResults(mlir::func::FuncOp fn);

/// Marks each result of `fn` that findStateResults pairs with
/// `zero.state_of`. A rewrite that makes the pairs ambiguous in the data
/// flow (the sharding pipelines gather every member of a bucket through
/// one concatenation, so each weight's result is as near to every member's
/// argument) runs it first, on the step as given, where they are plain.
void markStateResults(mlir::func::FuncOp fn);

/// Whether `op`'s result is a view of its first operand, which it shares
/// once bufferized: a slice, a reshape, a cast, or this rank's part
/// (`zero.shard_slice`). A state argument's old value is read through them.
bool isView(mlir::Operation *op);

/// What `value` is a view of, through any number of views (isView).
mlir::Value viewSource(mlir::Value value);

/// The users of `value` and of its views (isView), the views among them:
/// what reads a state argument's old value.
llvm::SmallVector<mlir::Operation *> usersThroughViews(mlir::Value value);

} // namespace zero

#endif // ZERO_ANALYSIS_STATERESULTS_H
