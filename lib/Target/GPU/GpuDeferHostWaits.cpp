//===- GpuDeferHostWaits.cpp - the host waits only where it must ----------===//
//
// gpu-async-region makes the host wait for the GPU before every op it cannot
// see into; zero's runtime orders most of those on the rank's one stream.
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "HostAccess.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Target/GPU/Passes.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/StringSwitch.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUDEFERHOSTWAITS
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The runtime's entry points that enqueue on the calling rank's stream (or
/// wait for it themselves) and touch no buffer on the host otherwise.
bool isStreamOrderedCall(func::CallOp call) {
  using zero::RuntimeFunction;
  std::optional<RuntimeFunction> function =
      zero::lookupRuntimeFunction(call.getCallee());
  return function &&
         llvm::is_contained({RuntimeFunction::zero_rt_gpu_matmul,
                             RuntimeFunction::zero_rt_gpu_read,
                             RuntimeFunction::zero_rt_gpu_write,
                             RuntimeFunction::zero_rt_gpu_upload,
                             RuntimeFunction::zero_rt_gpu_queue_copy,
                             RuntimeFunction::zero_rt_gpu_copy_down,
                             RuntimeFunction::zero_rt_host_queue_for,
                             RuntimeFunction::zero_rt_gpu_queue_update,
                             RuntimeFunction::zero_rt_gpu_free_after_copies,
                             RuntimeFunction::zero_rt_gpu_queue_free,
                             RuntimeFunction::zero_rt_host_queue_fence,
                             RuntimeFunction::zero_rt_host_queue_mark,
                             RuntimeFunction::zero_rt_host_queue_wait,
                             RuntimeFunction::zero_rt_host_queue_join},
                            *function);
}

/// Whether `op` may run while the rank's stream still has work in flight.
bool needsNoWait(Operation *op, bool deviceCollectives) {
  if (op->hasTrait<OpTrait::IsTerminator>() || op->getNumRegions() != 0)
    return false;
  if (auto call = dyn_cast<func::CallOp>(op))
    return isStreamOrderedCall(call);
  if (isa<memref::AllocOp, memref::DeallocOp>(op))
    return true;
  if (isMemoryEffectFree(op))
    return true;
  if (!isa<MemoryEffectOpInterface>(op) && !zero::isBufferCollective(op) &&
      !isa<zero::WaitOp>(op))
    return false;
  return zero::touchesElements(op, /*hostCollectives=*/!deviceCollectives)
      .empty();
}

/// Whether `op` enqueues GPU work or waits for the stream: a wait before it
/// is covered by the next wait on the same stream.
bool coversEarlierWork(Operation *op) {
  if (auto wait = dyn_cast<gpu::WaitOp>(op))
    return wait.getAsyncToken() || !wait.getAsyncDependencies().empty();
  return isa<gpu::AsyncOpInterface>(op);
}

/// Moves the blocking `wait` past the ops that need no wait; drops it when
/// they are followed by more GPU work.
void deferWait(gpu::WaitOp wait, bool deviceCollectives) {
  Operation *next = wait->getNextNode();
  while (next && !coversEarlierWork(next) &&
         needsNoWait(next, deviceCollectives))
    next = next->getNextNode();
  if (next && coversEarlierWork(next)) {
    wait->erase();
    return;
  }
  if (next && next != wait->getNextNode())
    wait->moveBefore(next);
}

struct ZeroGpuDeferHostWaitsPass
    : public zero::impl::ZeroGpuDeferHostWaitsBase<ZeroGpuDeferHostWaitsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto collectives =
        module->getAttrOfType<StringAttr>("zero.gpu_collectives");
    bool deviceCollectives = collectives && collectives.getValue() == "device";
    SmallVector<gpu::WaitOp> waits;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<gpu::GPUModuleOp>(op))
        return WalkResult::skip();
      if (auto wait = dyn_cast<gpu::WaitOp>(op); wait && !wait.getAsyncToken())
        waits.push_back(wait);
      return WalkResult::advance();
    });
    for (gpu::WaitOp wait : waits)
      deferWait(wait, deviceCollectives);
  }
};

} // namespace
