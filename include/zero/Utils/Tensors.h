//===- Tensors.h - tensors of any rank as 1-D tensors and back --*- C++ -*-===//
//
// Shards, buckets and zero's reduction blocks are flat: the passes that make
// them turn tensors of any rank into 1-D tensors and back.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_UTILS_TENSORS_H
#define ZERO_UTILS_TENSORS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace zero {

/// `value` (a static ranked tensor) as a 1-D tensor of its elements in
/// row-major order: collapsed when of rank > 1, expanded when 0-d.
mlir::Value flatten(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// The inverse of flatten: the 1-D `flat` in the shape of `type`.
mlir::Value unflatten(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                      mlir::RankedTensorType type);

} // namespace zero

#endif // ZERO_UTILS_TENSORS_H
