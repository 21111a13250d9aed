//===- GpuBufferPlacement.cpp - device or managed memory ------------------===//
//
// Device memory is only reached by kernels; a program whose host code never
// touches a buffer's elements can keep every buffer there. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Conversion/Passes.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUBUFFERPLACEMENT
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// How `op`, on the host, touches a buffer's elements ("" when it does
/// not).
std::string touchesElements(Operation *op, bool hostCollectives) {
  auto hasBuffer = [](ValueRange values) {
    return llvm::any_of(
        values, [](Value v) { return isa<BaseMemRefType>(v.getType()); });
  };
  // A collective and the wait that completes a started one move data where
  // the backend does: on the device, or on host threads.
  if (zero::isBufferCollective(op) || isa<zero::WaitOp>(op))
    return hostCollectives ? "is a collective, which the host runs" : "";
  if (isa<CallOpInterface>(op) && hasBuffer(op->getOperands()))
    return "passes a buffer to a call";
  if (isa<gpu::LaunchFuncOp>(op))
    return "";
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return op->getNumRegions() == 0 && hasBuffer(op->getOperands())
               ? "may read a buffer on the host"
               : "";
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &effect : instances)
    if (isa<MemoryEffects::Read>(effect.getEffect()))
      return "reads a buffer on the host";
    else if (isa<MemoryEffects::Write>(effect.getEffect()))
      return "writes a buffer on the host";
  return "";
}

struct ZeroGpuBufferPlacementPass
    : public zero::impl::ZeroGpuBufferPlacementBase<
          ZeroGpuBufferPlacementPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (collectives != "device" && collectives != "host") {
      module.emitError() << "zero-gpu-buffer-placement: collectives='"
                         << collectives << "' (expected device or host)";
      return signalPassFailure();
    }
    bool hostCollectives = collectives == "host";
    std::string reason;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      std::string how = touchesElements(op, hostCollectives);
      if (how.empty())
        return WalkResult::advance();
      std::string where;
      llvm::raw_string_ostream os(where);
      if (auto file = op->getLoc()->findInstanceOf<FileLineColLoc>())
        os << file.getFilename().getValue() << ":" << file.getLine() << ":"
           << file.getColumn();
      else
        op->getLoc().print(os);
      reason = llvm::formatv("'{0}' at {1} {2}", op->getName(), where, how);
      return WalkResult::interrupt();
    });
    Builder b(module.getContext());
    module->setAttr("zero.gpu_memory",
                    b.getStringAttr(reason.empty() ? "device" : "managed"));
    if (!reason.empty())
      module->setAttr("zero.gpu_memory_reason", b.getStringAttr(reason));
    module->setAttr("zero.gpu_collectives", b.getStringAttr(collectives));
  }
};

} // namespace
