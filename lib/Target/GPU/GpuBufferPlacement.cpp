//===- GpuBufferPlacement.cpp - device or managed memory ------------------===//
//
// Device memory is only reached by kernels; a program whose host code never
// touches a buffer's elements can keep every buffer there. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "HostAccess.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Target/GPU/Passes.h"
#include "zero/Utils/Buffers.h"
#include "llvm/Support/FormatVariadic.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUBUFFERPLACEMENT
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;
using zero::inHostMemory;
using zero::onHostStack;
using zero::touchesElements;

namespace {

/// Buffers of at most this many bytes that only the host touches live on
/// its stack (buffer deallocation's bookkeeping: which buffers a loop owns).
constexpr int64_t kStackBytes = 4096;

/// Whether every use of `buffer` (through casts and views) reads or writes
/// its elements on the host, frees it, or passes it to a function of the
/// module that only reads and writes it (buffer deallocation's helper).
bool onlyHostUses(Value buffer, ModuleOp module) {
  for (OpOperand &use : buffer.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::CastOp, memref::SubViewOp>(user)) {
      if (!onlyHostUses(user->getResult(0), module))
        return false;
    } else if (auto store = dyn_cast<memref::StoreOp>(user)) {
      if (store.getValueToStore() == buffer)
        return false;
    } else if (auto call = dyn_cast<func::CallOp>(user)) {
      auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
      if (!callee || callee.isExternal() || !callee.isPrivate())
        return false;
      for (Operation *inner :
           callee.getArgument(use.getOperandNumber()).getUsers())
        if (!isa<memref::LoadOp, memref::StoreOp, memref::DimOp>(inner) ||
            (isa<memref::StoreOp>(inner) &&
             cast<memref::StoreOp>(inner).getValueToStore() ==
                 callee.getArgument(use.getOperandNumber())))
          return false;
    } else if (!isa<memref::LoadOp, memref::DeallocOp, memref::DimOp>(user)) {
      return false;
    }
  }
  return true;
}

/// Moves the small buffers that only the host touches to the stack of their
/// function (at its entry, so that a loop reuses one slot): they then need
/// no GPU-visible memory, and do not keep the others out of device memory.
void moveHostBuffersToStack(ModuleOp module) {
  SmallVector<memref::AllocOp> allocs;
  module.walk([&](memref::AllocOp alloc) {
    MemRefType type = alloc.getType();
    if (!type.hasStaticShape() || !type.getElementType().isIntOrIndexOrFloat())
      return;
    int64_t bits =
        type.getElementType().isIndex() ? 64 : type.getElementTypeBitWidth();
    if (type.getNumElements() * bits / 8 > kStackBytes ||
        alloc->getParentOfType<gpu::GPUModuleOp>() ||
        alloc->getParentOfType<scf::ParallelOp>() ||
        alloc->getParentOfType<gpu::LaunchOp>())
      return;
    if (onlyHostUses(alloc.getResult(), module))
      allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs) {
    auto function = alloc->getParentOfType<FunctionOpInterface>();
    if (!function)
      continue;
    OpBuilder b = OpBuilder::atBlockBegin(&function.getFunctionBody().front());
    auto stack = memref::AllocaOp::create(b, alloc.getLoc(), alloc.getType(),
                                          alloc.getAlignmentAttr());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(stack.getResult());
    alloc.erase();
  }
}

/// Whether every index is a constant or the step of a loop that launches
/// kernels (a training loop recording its loss): one element, not an
/// element of a host loop over the buffer, which would copy element by
/// element.
bool atFixedPlace(ValueRange indices) {
  return llvm::all_of(indices, [](Value index) {
    if (getConstantIntValue(index))
      return true;
    auto loop = scf::getForInductionVarOwner(index);
    if (!loop)
      return false;
    return loop->walk([](gpu::LaunchFuncOp) { return WalkResult::interrupt(); })
        .wasInterrupted();
  });
}

/// The host's reads and writes of single elements at fixed places of GPU
/// buffers (a norm the host turns into a factor, the initial value of a
/// reduction) become copies through a stack slot (zero_rt_gpu_read and
/// zero_rt_gpu_write), so that the buffers can live in device memory. The
/// host waits for the kernels before each (gpu-async-region runs later).
void copyScalarsThroughStack(ModuleOp module) {
  zero::RuntimeCallBuilder calls(module);
  SmallVector<Operation *> accesses;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (zero::isOutsidePlacement(op))
      return WalkResult::skip();
    if (auto load = dyn_cast<memref::LoadOp>(op);
        load && !inHostMemory(load.getMemRef()) &&
        atFixedPlace(load.getIndices()))
      accesses.push_back(op);
    if (auto store = dyn_cast<memref::StoreOp>(op);
        store && !inHostMemory(store.getMemRef()) &&
        atFixedPlace(store.getIndices()))
      accesses.push_back(op);
    return WalkResult::advance();
  });
  for (Operation *op : accesses) {
    auto function = op->getParentOfType<FunctionOpInterface>();
    if (!function)
      continue;
    bool isLoad = isa<memref::LoadOp>(op);
    Value buffer = isLoad ? cast<memref::LoadOp>(op).getMemRef()
                          : cast<memref::StoreOp>(op).getMemRef();
    ValueRange indices = isLoad ? cast<memref::LoadOp>(op).getIndices()
                                : cast<memref::StoreOp>(op).getIndices();
    auto type = cast<MemRefType>(buffer.getType());
    Type element = type.getElementType();
    if (!element.isIntOrFloat())
      continue;
    Location loc = op->getLoc();
    // One slot per access, at the function's entry.
    OpBuilder entry =
        OpBuilder::atBlockBegin(&function.getFunctionBody().front());
    auto slotType = MemRefType::get({}, element);
    Value slot = memref::AllocaOp::create(entry, loc, slotType);
    OpBuilder b(op);
    // The element's address: a one-element view at the indices.
    SmallVector<OpFoldResult> offsets(indices.begin(), indices.end());
    SmallVector<OpFoldResult> ones(type.getRank(), b.getIndexAttr(1));
    Value element1 = buffer;
    if (type.getRank() > 0)
      element1 = memref::SubViewOp::create(b, loc, buffer, offsets, ones, ones);
    Value bytes = arith::ConstantIntOp::create(b, loc, b.getI64Type(),
                                               zero::elementBytes(element));
    func::FuncOp copy =
        calls.declare(b, isLoad ? zero::RuntimeFunction::zero_rt_gpu_read
                                : zero::RuntimeFunction::zero_rt_gpu_write);
    Value device = calls.pointerTo(b, loc, element1);
    Value host = calls.pointerTo(b, loc, slot);
    if (isLoad) {
      func::CallOp::create(b, loc, copy, ValueRange{host, device, bytes});
      Value value = memref::LoadOp::create(b, loc, slot, ValueRange{});
      op->getResult(0).replaceAllUsesWith(value);
    } else {
      memref::StoreOp::create(b, loc, cast<memref::StoreOp>(op).getValue(),
                              slot, ValueRange{});
      func::CallOp::create(b, loc, copy, ValueRange{device, host, bytes});
    }
    op->erase();
  }
}

/// Whether `copy` is the host's, of numbers, from one contiguous range to
/// another: what a runtime copy call can do.
bool isHostCopyOfRanges(memref::CopyOp copy) {
  auto source = cast<MemRefType>(copy.getSource().getType());
  auto target = cast<MemRefType>(copy.getTarget().getType());
  return !copy->getParentOfType<gpu::GPUModuleOp>() &&
         source.getElementType().isIntOrFloat() &&
         memref::isStaticShapeAndContiguousRowMajor(source) &&
         memref::isStaticShapeAndContiguousRowMajor(target);
}

/// `copy` (contiguous buffers) as a call of the runtime's copy `function`
/// (target, source, bytes).
void replaceByCopyCall(memref::CopyOp copy, zero::RuntimeFunction function,
                       zero::RuntimeCallBuilder &calls) {
  OpBuilder b(copy);
  Location loc = copy.getLoc();
  auto type = cast<MemRefType>(copy.getSource().getType());
  Value bytes = arith::ConstantIntOp::create(
      b, loc, b.getI64Type(),
      type.getNumElements() * zero::elementBytes(type.getElementType()));
  func::CallOp::create(b, loc, calls.declare(b, function),
                       ValueRange{calls.pointerTo(b, loc, copy.getTarget()),
                                  calls.pointerTo(b, loc, copy.getSource()),
                                  bytes});
  copy->erase();
}

/// The host's copies of a constant (a reduction's initial value, which
/// bufferization copies into the buffer the reduction writes) become
/// stream-ordered writes of the constant's bytes (zero_rt_gpu_write), so
/// that the buffer can live in device memory. zero-gpu-copies left them on
/// the host: the constant lives in the host program.
void writeConstantsFromHost(ModuleOp module) {
  zero::RuntimeCallBuilder calls(module);
  SmallVector<memref::CopyOp> copies;
  module.walk([&](memref::CopyOp copy) {
    if (isHostCopyOfRanges(copy) &&
        zero::bufferOrigin(copy.getSource())
            .getDefiningOp<memref::GetGlobalOp>() &&
        !inHostMemory(copy.getTarget()))
      copies.push_back(copy);
  });
  for (memref::CopyOp copy : copies)
    replaceByCopyCall(copy, zero::RuntimeFunction::zero_rt_gpu_write, calls);
}

/// The copies between host memory and a GPU buffer (an offloaded update's
/// staging, zero-offload-to-host) become stream-ordered copies that return
/// once done (zero_rt_gpu_read, zero_rt_gpu_upload): the host reads what
/// the kernels before wrote, and may reuse its buffer at once; those marked
/// zero.copy_down (a gathered weight into its host argument after the
/// rank's wait for its queue) start on the rank's copy stream, waited for
/// by its next join (zero_rt_gpu_copy_down). Those for the
/// rank's host queue (zero.queued) are the queue's (zero_rt_gpu_queue_copy),
/// and its pipelined updates' (zero_rt_host_queue_update) cross the link
/// (zero_rt_gpu_queue_update).
void copyAcrossTheLink(ModuleOp module) {
  zero::RuntimeCallBuilder calls(module);
  SmallVector<memref::CopyOp> copies;
  module.walk([&](memref::CopyOp copy) {
    if (isHostCopyOfRanges(copy) &&
        inHostMemory(copy.getSource()) != inHostMemory(copy.getTarget()))
      copies.push_back(copy);
  });
  // The queue's pipelined updates cross the link too.
  module.walk([&](func::CallOp call) {
    if (zero::lookupRuntimeFunction(call.getCallee()) ==
        zero::RuntimeFunction::zero_rt_host_queue_update) {
      OpBuilder b(call);
      call.setCallee(
          calls.declare(b, zero::RuntimeFunction::zero_rt_gpu_queue_update)
              .getSymName());
    }
  });
  for (memref::CopyOp copy : copies)
    replaceByCopyCall(copy,
                      copy->hasAttr(zero::kQueuedAttrName)
                          ? zero::RuntimeFunction::zero_rt_gpu_queue_copy
                      : copy->hasAttr(zero::kCopyDownAttrName)
                          ? zero::RuntimeFunction::zero_rt_gpu_copy_down
                      : inHostMemory(copy.getTarget())
                          ? zero::RuntimeFunction::zero_rt_gpu_read
                          : zero::RuntimeFunction::zero_rt_gpu_upload,
                      calls);
}

/// The frees of device buffers that the rank's host queue only copies down
/// (zero.queued, zero-offload-to-host) become calls of the buffer's
/// pointer, which is the allocated one (the CUDA allocators align to 256
/// bytes, and zero-offload-to-host queues only frees of buffers that ask
/// for at most 64): the rank's at once, ordered after the copies its
/// updates started (zero_rt_gpu_free_after_copies); or the queue's, after
/// a copy its own thread makes (zero_rt_gpu_queue_free). Runs before
/// copyAcrossTheLink, while those copies are still ops.
void freeAfterCopiesDown(ModuleOp module) {
  zero::RuntimeCallBuilder calls(module);
  // The buffers that copies of the queue's own thread read.
  llvm::DenseSet<Value> readByQueuedCopy;
  module.walk([&](memref::CopyOp copy) {
    if (copy->hasAttr(zero::kQueuedAttrName))
      readByQueuedCopy.insert(zero::bufferOrigin(copy.getSource()));
  });
  SmallVector<memref::DeallocOp> frees;
  module.walk([&](memref::DeallocOp dealloc) {
    // A host staging buffer's free stays the queue's (zero-lower-to-runtime).
    if (dealloc->hasAttr(zero::kQueuedAttrName) &&
        !dealloc->hasAttr(zero::kStagingAttrName))
      frees.push_back(dealloc);
  });
  for (memref::DeallocOp dealloc : frees) {
    OpBuilder b(dealloc);
    zero::RuntimeFunction function =
        readByQueuedCopy.contains(dealloc.getMemref())
            ? zero::RuntimeFunction::zero_rt_gpu_queue_free
            : zero::RuntimeFunction::zero_rt_gpu_free_after_copies;
    func::CallOp::create(
        b, dealloc.getLoc(), calls.declare(b, function),
        calls.pointerTo(b, dealloc.getLoc(), dealloc.getMemref()));
    dealloc->erase();
  }
}

/// The module's private functions that are only ever given buffers on the
/// host's stack: what they do to those is the host's business.
llvm::DenseSet<Operation *> stackOnlyFunctions(ModuleOp module) {
  llvm::DenseSet<Operation *> candidates, excluded;
  module.walk([&](func::CallOp call) {
    auto callee = module.lookupSymbol<func::FuncOp>(call.getCallee());
    if (!callee || callee.isExternal() || !callee.isPrivate())
      return;
    bool stackOnly = llvm::all_of(call.getOperands(), [](Value v) {
      return !isa<BaseMemRefType>(v.getType()) || onHostStack(v);
    });
    (stackOnly ? candidates : excluded).insert(callee);
  });
  for (Operation *op : excluded)
    candidates.erase(op);
  return candidates;
}

struct ZeroGpuBufferPlacementPass
    : public zero::impl::ZeroGpuBufferPlacementBase<
          ZeroGpuBufferPlacementPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool hostCollectives = gpuCollectives == zero::GpuCollectives::Host;
    moveHostBuffersToStack(module);
    freeAfterCopiesDown(module);
    copyAcrossTheLink(module);
    if (!hostCollectives) {
      copyScalarsThroughStack(module);
      writeConstantsFromHost(module);
    }
    llvm::DenseSet<Operation *> stackOnly = stackOnlyFunctions(module);
    std::string reason;
    module.walk<WalkOrder::PreOrder>([&](Operation *op) {
      // A host task (zero-offload-to-host) touches host memory only.
      if (zero::isOutsidePlacement(op) || stackOnly.contains(op))
        return WalkResult::skip();
      std::string how =
          touchesElements(op, hostCollectives, /*hostMemoryIsOwn=*/true);
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
    module->setAttr("zero.gpu_collectives",
                    b.getStringAttr(zero::stringifyGpuCollectives(gpuCollectives)));
  }
};

} // namespace
