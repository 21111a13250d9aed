//===- Buffers.h - the buffer a memref views, and who uses it ---*- C++ -*-===//
//
// The bufferized passes (deallocation, collectives writing in place, GEMM
// calls) ask one question of a buffer in two forms: which buffer a value
// views, and whether an op touches that buffer through any view of it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_UTILS_BUFFERS_H
#define ZERO_UTILS_BUFFERS_H

#include "mlir/IR/Operation.h"

namespace zero {

/// The buffer `value` is a view of, followed through view-like ops
/// (upstream's memref::skipViewLikeOps); a value that is not a memref is its
/// own origin.
mlir::Value bufferOrigin(mlir::Value value);

/// Whether `op`, or an op nested in its regions, has a memref operand that
/// is a view of `origin` (a value bufferOrigin returns).
bool usesViewOf(mlir::Operation *op, mlir::Value origin);

} // namespace zero

#endif // ZERO_UTILS_BUFFERS_H
