//===- HostAccess.cpp - what the host does to a GPU program's buffers -----===//

#include "HostAccess.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

using namespace mlir;

bool zero::onHostStack(Value value) {
  auto buffer = dyn_cast<MemrefValue>(value);
  return buffer &&
         memref::skipViewLikeOps(buffer).getDefiningOp<memref::AllocaOp>() !=
             nullptr;
}

std::string zero::touchesElements(Operation *op, bool hostCollectives) {
  auto hasBuffer = [](ValueRange values) {
    return llvm::any_of(values, [](Value v) {
      return isa<BaseMemRefType>(v.getType()) && !onHostStack(v);
    });
  };
  // A collective and the wait that completes a started one move data where
  // the backend does: on the device, or on host threads.
  if (isBufferCollective(op) || isa<WaitOp>(op))
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
    if (effect.getValue() && onHostStack(effect.getValue()))
      continue; // the host's own memory
    else if (isa<MemoryEffects::Read>(effect.getEffect()))
      return "reads a buffer on the host";
    else if (isa<MemoryEffects::Write>(effect.getEffect()))
      return "writes a buffer on the host";
  return "";
}
