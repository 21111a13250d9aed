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

/// For each result of `fn`, the index of the argument whose next value it
/// is, if any: the argument of the result's type that is nearest to it in
/// the data flow (fewest ops between them), when exactly one is nearest;
/// paired arguments leave the race, rounds repeat until no result pairs.
/// `w' = w - lr * m'` pairs with `w` (one op away), `m' = b * m + g'` with
/// `m` (`g'` is an all-reduce further from the gradient argument). A result
/// with two nearest candidates pairs with none.
llvm::SmallVector<std::optional<unsigned>>
findStateResults(mlir::func::FuncOp fn);

} // namespace zero

#endif // ZERO_ANALYSIS_STATERESULTS_H
