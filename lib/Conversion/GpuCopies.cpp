//===- GpuCopies.cpp - copies between buffers as loop nests ---------------===//
//
// On the GPU a memref.copy would run on the host over managed memory; as a
// linalg.copy it becomes a kernel. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "zero/Conversion/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUCOPIES
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Whether `buffer` is (a view of) a global: host memory.
bool isGlobal(Value buffer) {
  while (Operation *def = buffer.getDefiningOp()) {
    if (isa<memref::GetGlobalOp>(def))
      return true;
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      return false;
    buffer = view.getViewSource();
  }
  return false;
}

struct ZeroGpuCopiesPass
    : public zero::impl::ZeroGpuCopiesBase<ZeroGpuCopiesPass> {
  void runOnOperation() override {
    getOperation()->walk([](memref::CopyOp copy) {
      auto type = dyn_cast<MemRefType>(copy.getSource().getType());
      if (!type || type.getRank() == 0 || isGlobal(copy.getSource()) ||
          isGlobal(copy.getTarget()))
        return;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};

} // namespace
