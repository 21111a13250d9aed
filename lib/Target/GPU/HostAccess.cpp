//===- HostAccess.cpp - what the host does to a GPU program's buffers -----===//

#include "HostAccess.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Utils/Buffers.h"

using namespace mlir;

bool zero::onHostStack(Value value) {
  // An address in an LLVM stack slot (a host task's context).
  while (auto gep = value.getDefiningOp<LLVM::GEPOp>())
    value = gep.getBase();
  if (value.getDefiningOp<LLVM::AllocaOp>())
    return true;
  auto buffer = dyn_cast<MemrefValue>(value);
  return buffer &&
         zero::bufferOrigin(buffer).getDefiningOp<memref::AllocaOp>() !=
             nullptr;
}

bool zero::inHostMemory(Value value) {
  if (onHostStack(value))
    return true;
  auto buffer = dyn_cast<MemrefValue>(value);
  if (!buffer)
    return false;
  Value root = zero::bufferOrigin(buffer);
  if (isa_and_present<memref::AllocaOp, HostAllocOp>(root.getDefiningOp()))
    return true;
  if (auto result = dyn_cast<OpResult>(root))
    return isa<scf::ForOp>(result.getOwner()) &&
           isHostIterArg(result.getOwner(), result.getResultNumber());
  auto arg = cast<BlockArgument>(root);
  if (auto loop = dyn_cast<scf::ForOp>(arg.getOwner()->getParentOp()))
    return arg.getArgNumber() > 0 &&
           isHostIterArg(loop, arg.getArgNumber() - 1);
  auto fn = dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp());
  if (!fn || arg.getOwner() != &fn.getFunctionBody().front())
    return false;
  return isHostArgument(fn, arg.getArgNumber());
}

bool zero::copiesDown(Operation *copy) {
  return isa<memref::CopyOp>(copy) && !inHostMemory(copy->getOperand(0)) &&
         inHostMemory(copy->getOperand(1));
}

bool zero::isOutsidePlacement(Operation *op) {
  return isa<gpu::GPUModuleOp>(op) || op->hasAttr(kHostTaskAttrName);
}

std::string zero::touchesElements(Operation *op, bool hostCollectives,
                                  bool hostMemoryIsOwn) {
  auto own = [&](Value v) {
    return hostMemoryIsOwn ? inHostMemory(v) : onHostStack(v);
  };
  auto hasBuffer = [&](ValueRange values) {
    return llvm::any_of(values, [&](Value v) {
      return isa<BaseMemRefType>(v.getType()) && !own(v);
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
    if (effect.getValue() && own(effect.getValue()))
      continue; // the host's own memory
    else if (isa<MemoryEffects::Read>(effect.getEffect()))
      return "reads a buffer on the host";
    else if (isa<MemoryEffects::Write>(effect.getEffect()))
      return "writes a buffer on the host";
  return "";
}
