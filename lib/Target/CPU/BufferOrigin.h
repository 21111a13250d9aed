//===- BufferOrigin.h - the buffer a memref views ---------------*- C++ -*-===//
//
// Shared by the deallocation passes of lib/Target/CPU.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TARGET_CPU_BUFFERORIGIN_H
#define ZERO_LIB_TARGET_CPU_BUFFERORIGIN_H

#include "mlir/Interfaces/ViewLikeInterface.h"

namespace zero {

/// The buffer `value` is a view of: followed through view-like ops.
inline mlir::Value getOrigin(mlir::Value value) {
  while (auto view = value.getDefiningOp<mlir::ViewLikeOpInterface>()) {
    if (view.getViewSource() == value)
      break;
    value = view.getViewSource();
  }
  return value;
}

} // namespace zero

#endif // ZERO_LIB_TARGET_CPU_BUFFERORIGIN_H
