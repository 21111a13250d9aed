//===- Accumulation.h - loops that sum micro-batches -------------*- C++
//-*-===//
//
// Gradient accumulation: a loop that adds each iteration's gradient to a
// sum it carries. zero-accumulate-locally moves the reduction out of such a
// loop; zero-report tells it from a training loop, whose carried values are
// the model's state.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_ACCUMULATION_H
#define ZERO_ANALYSIS_ACCUMULATION_H

#include "mlir/Dialect/SCF/IR/SCF.h"

#include <optional>
#include <utility>

namespace zero {

/// The two tensors `op` adds element by element, when it does: arith.addf
/// or arith.addi on tensors, or a linalg op (linalg.add, or a
/// linalg.generic as convert-elementwise-to-linalg writes it) with two
/// inputs read at the same element and a body that yields their sum.
std::optional<std::pair<mlir::Value, mlir::Value>>
getElementwiseSummands(mlir::Operation *op);

/// Whether every value `loop` carries is a sum: the loop yields, for each,
/// an elementwise add of that carried value and another. Such a loop
/// accumulates (micro-batch gradients); it does not train.
bool isAccumulationLoop(mlir::scf::ForOp loop);

} // namespace zero

#endif // ZERO_ANALYSIS_ACCUMULATION_H
