//===- Buffers.cpp - the buffer a memref views, and who uses it -----------===//

#include "zero/Utils/Buffers.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

using namespace mlir;

Value zero::bufferOrigin(Value value) {
  auto memref = dyn_cast<MemrefValue>(value);
  return memref ? memref::skipViewLikeOps(memref) : value;
}

bool zero::usesViewOf(Operation *op, Value origin) {
  return op
      ->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (isa<BaseMemRefType>(operand.getType()) &&
              bufferOrigin(operand) == origin)
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}
