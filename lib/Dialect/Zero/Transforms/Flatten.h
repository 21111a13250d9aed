//===- Flatten.h - tensors to one dimension and back ------------*- C++ -*-===//
//
// Shards and buckets are flat: zero-shard-weight-update and
// zero-combine-collectives both turn tensors of any rank into 1-D tensors and
// back. Internal to ZeroTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_FLATTEN_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_FLATTEN_H

#include "mlir/IR/Builders.h"

namespace zero {

/// `value` (a static ranked tensor) as a 1-D tensor of its elements in
/// row-major order: collapsed when of rank > 1, expanded when 0-d.
mlir::Value flatten(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value);

/// The inverse of flatten: the 1-D `flat` in the shape of `type`.
mlir::Value unflatten(mlir::OpBuilder &b, mlir::Location loc, mlir::Value flat,
                      mlir::RankedTensorType type);

} // namespace zero

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_FLATTEN_H
