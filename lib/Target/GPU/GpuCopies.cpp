//===- GpuCopies.cpp - copies between buffers as loop nests ---------------===//
//
// On the GPU a memref.copy would run on the host over managed memory; as a
// linalg.copy it becomes a kernel. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "HostAccess.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "zero/Target/GPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUCOPIES
#include "zero/Target/GPU/Passes.h.inc"
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

/// Whether `copy` moves one contiguous range of numbers from a device
/// buffer into host memory (an offloaded weight's new value, gathered on
/// the device, into its host argument): a copy down the link, which
/// zero-gpu-buffer-placement makes the runtime's, on the rank's stream. As
/// a loop nest it would write host memory, so zero-offload-to-host would
/// run it on the host from a pinned copy of the whole device buffer. (A
/// kernel that only reads host memory reads it across the link.)
bool copiesDownARange(memref::CopyOp copy, MemRefType source,
                      MemRefType target) {
  return zero::copiesDown(copy) && source.getElementType().isIntOrFloat() &&
         memref::isStaticShapeAndContiguousRowMajor(source) &&
         memref::isStaticShapeAndContiguousRowMajor(target);
}

struct ZeroGpuCopiesPass
    : public zero::impl::ZeroGpuCopiesBase<ZeroGpuCopiesPass> {
  void runOnOperation() override {
    getOperation()->walk([](memref::CopyOp copy) {
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      if (!source || !target) {
        // linalg.copy needs both shapes; the runtime's memrefCopy reads an
        // unranked buffer's from its descriptor.
        mlir::emitRemark(copy.getLoc(),
                         "copy to or from an unranked buffer stays a host "
                         "copy over managed memory");
        return;
      }
      if (source.getRank() == 0 || isGlobal(copy.getSource()) ||
          isGlobal(copy.getTarget()) || copiesDownARange(copy, source, target))
        return;
      OpBuilder b(copy);
      linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                             copy.getTarget());
      copy.erase();
    });
  }
};

} // namespace
