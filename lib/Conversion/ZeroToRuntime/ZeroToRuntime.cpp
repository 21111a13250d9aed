//===- ZeroToRuntime.cpp - bufferized collectives to runtime calls --------===//
//
// The runtime's compiled-code entry points (zero_rt_*) take plain pointers,
// counts and codes, so the calls are built here with func.call on !llvm.ptr
// values; the upstream conversions then lower everything else to LLVM.
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/ZeroToRuntime/ZeroToRuntime.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Conversion/Passes.h"
#include "zero/Conversion/ZeroToRuntime/HostTasks.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/StringExtras.h"

namespace zero {
#define GEN_PASS_DEF_ZEROLOWERTORUNTIME
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

//===----------------------------------------------------------------------===//
// What the conversion needs
//===----------------------------------------------------------------------===//

/// Checks that `request` is consumed exactly once: by a zero.wait in its
/// block, or by the scf.for that carries it (as its initial value, or
/// yielded by its body).
LogicalResult verifyRequest(Value request, Operation *diagnosticOp) {
  auto fail = [&](const Twine &what) {
    return diagnosticOp->emitOpError("cannot be lowered: ")
           << what
           << "; a request is consumed exactly once, by a zero.wait in its "
              "block or by the scf.for that carries it";
  };
  size_t uses = std::distance(request.use_begin(), request.use_end());
  if (uses != 1)
    return fail("its request is consumed " + Twine(uses) + " times");
  Operation *user = *request.getUsers().begin();
  bool sameBlock = user->getBlock() == request.getParentBlock();
  bool carried =
      isa<scf::ForOp>(user) ||
      (isa<scf::YieldOp>(user) && isa<scf::ForOp>(user->getParentOp()));
  if (!sameBlock || !(isa<WaitOp>(user) || carried))
    return fail("its request goes to '" + user->getName().getStringRef() + "'" +
                (sameBlock ? "" : " in another block"));
  return success();
}

/// Checks every request of `module` (see verifyRequest).
LogicalResult verifyRequests(ModuleOp module) {
  bool failedAny = false;
  module.walk([&](Operation *op) {
    // Nothing is in flight for a completed request (CSE may share one).
    if (isa<CompletedRequestOp>(op))
      return;
    for (Value result : op->getResults())
      if (isa<RequestType>(result.getType()))
        failedAny |= failed(verifyRequest(result, op));
    for (Region &region : op->getRegions())
      for (BlockArgument argument : region.getArguments())
        if (isa<RequestType>(argument.getType()))
          failedAny |= failed(verifyRequest(argument, op));
  });
  return failure(failedAny);
}

/// Why each rank's part along `dim` of `type` is not contiguous, if it is
/// not.
std::optional<std::string> whyPartsNotContiguous(MemRefType type, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d)
    if (type.getDimSize(d) != 1) {
      std::string why;
      llvm::raw_string_ostream os(why);
      os << "cannot be lowered: splitting dimension " << dim << " of '" << type
         << "' gives parts that are not contiguous (only unit dimensions "
            "may precede it); flatten the buffer first";
      return why;
    }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// The patterns
//===----------------------------------------------------------------------===//

/// A buffer collective's runtime functions: the blocking one, the one that
/// starts it and returns a handle, and its reduction code, if it reduces.
struct CollectiveCall {
  RuntimeFunction blocking, start;
  std::optional<int32_t> reduction;
};

CollectiveCall collectiveCallOf(AllReduceBufferOp op) {
  return {RuntimeFunction::zero_rt_all_reduce,
          RuntimeFunction::zero_rt_all_reduce_start,
          reductionCode(op.getReduction())};
}
CollectiveCall collectiveCallOf(ReduceScatterBufferOp op) {
  return {RuntimeFunction::zero_rt_reduce_scatter,
          RuntimeFunction::zero_rt_reduce_scatter_start,
          reductionCode(op.getReduction())};
}
CollectiveCall collectiveCallOf(AllGatherBufferOp) {
  return {RuntimeFunction::zero_rt_all_gather,
          RuntimeFunction::zero_rt_all_gather_start, std::nullopt};
}
CollectiveCall collectiveCallOf(AllToAllBufferOp) {
  return {RuntimeFunction::zero_rt_all_to_all,
          RuntimeFunction::zero_rt_all_to_all_start, std::nullopt};
}

/// A buffer collective to its runtime call: the buffers as pointers at their
/// offsets, the element count, the dtype and reduction codes, the group. With
/// a request, the `_start` entry point, whose handle replaces the request.
template <typename CollectiveOp>
struct BufferCollectiveToCall : public OpConversionPattern<CollectiveOp> {
  using OpConversionPattern<CollectiveOp>::OpConversionPattern;
  using OpAdaptor = typename CollectiveOp::Adaptor;

  LogicalResult
  matchAndRewrite(CollectiveOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (std::optional<std::string> why = whyNotLowerableToRuntime(op))
      return rewriter.notifyMatchFailure(op, *why);
    CollectiveCall kind = collectiveCallOf(op);
    RuntimeCallBuilder calls(op->template getParentOfType<ModuleOp>());
    Location loc = op.getLoc();
    auto inputType = cast<MemRefType>(op.getInput().getType());
    Type i64 = rewriter.getI64Type(), i32 = rewriter.getI32Type();
    bool started = op.getRequest() != nullptr;
    func::FuncOp fn =
        calls.declare(rewriter, started ? kind.start : kind.blocking);
    SmallVector<Value> args = {
        calls.pointerTo(rewriter, loc, adaptor.getInput()),
        calls.pointerTo(rewriter, loc, adaptor.getOutput()),
        arith::ConstantIntOp::create(rewriter, loc, i64,
                                     inputType.getNumElements()),
        arith::ConstantIntOp::create(rewriter, loc, i32,
                                     *dtypeCode(inputType.getElementType()))};
    if (kind.reduction)
      args.push_back(
          arith::ConstantIntOp::create(rewriter, loc, i32, *kind.reduction));
    args.push_back(calls.groupPointer(
        rewriter, loc, lookupMesh(op, op.getMeshAttr()), op.getAxesAttr()));
    // A bucket's collective is named in traces.
    if (auto bucket = op->template getAttrOfType<DictionaryAttr>("zero.bucket"))
      if (auto id = bucket.template getAs<IntegerAttr>("id"))
        func::CallOp::create(
            rewriter, loc,
            calls.declare(rewriter, RuntimeFunction::zero_rt_label),
            calls.stringPointer(rewriter, loc,
                                "bucket " + std::to_string(id.getInt())));
    auto call = func::CallOp::create(rewriter, loc, fn, args);
    rewriter.replaceOp(op, call.getResults());
    return success();
  }
};

/// `zero.wait` to `zero_rt_wait` on the handle, where the wait stands.
struct WaitToCall : public OpConversionPattern<WaitOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(WaitOp wait, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    RuntimeCallBuilder calls(wait->getParentOfType<ModuleOp>());
    func::CallOp::create(rewriter, wait.getLoc(),
                         calls.declare(rewriter, RuntimeFunction::zero_rt_wait),
                         adaptor.getRequest());
    rewriter.eraseOp(wait);
    return success();
  }
};

/// A request with nothing in flight is a null handle, on which
/// `zero_rt_wait` returns at once.
struct CompletedRequestToNull : public OpConversionPattern<CompletedRequestOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(CompletedRequestOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<LLVM::ZeroOp>(
        op, getTypeConverter()->convertType(op.getType()));
    return success();
  }
};

/// `zero.replica_index` to `zero_rt_group_index` of its group.
struct ReplicaIndexToCall : public OpConversionPattern<ReplicaIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(ReplicaIndexOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (std::optional<std::string> why = whyNotLowerableToRuntime(op))
      return rewriter.notifyMatchFailure(op, *why);
    RuntimeCallBuilder calls(op->getParentOfType<ModuleOp>());
    Location loc = op.getLoc();
    Value group = calls.groupPointer(
        rewriter, loc, lookupMesh(op, op.getMeshAttr()), op.getAxesAttr());
    Value index =
        func::CallOp::create(
            rewriter, loc,
            calls.declare(rewriter, RuntimeFunction::zero_rt_group_index),
            group)
            .getResult(0);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(op, rewriter.getIndexType(),
                                                    index);
    return success();
  }
};

/// `zero.host_alloc` to `zero_rt_host_alloc` of its bytes (a `staging` one
/// to `zero_rt_host_alloc_staging`), the pointer made the buffer
/// (RuntimeCallBuilder::bufferAt).
struct HostAllocToCall : public OpConversionPattern<HostAllocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(HostAllocOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    MemRefType type = op.getType();
    if (!type.getElementType().isIntOrIndexOrFloat())
      return rewriter.notifyMatchFailure(op, "not a buffer of numbers");
    RuntimeCallBuilder calls(op->getParentOfType<ModuleOp>());
    Location loc = op.getLoc();
    unsigned elementBytes = type.getElementType().isIndex()
                                ? 8
                                : zero::elementBytes(type.getElementType());
    Type i64 = rewriter.getI64Type();
    Value bytes = arith::ConstantIntOp::create(
        rewriter, loc, i64, type.getNumElements() * elementBytes);
    Value pointer =
        func::CallOp::create(
            rewriter, loc,
            calls.declare(rewriter,
                          op.getStaging()
                              ? RuntimeFunction::zero_rt_host_alloc_staging
                              : RuntimeFunction::zero_rt_host_alloc),
            bytes)
            .getResult(0);
    rewriter.replaceOp(op, calls.bufferAt(rewriter, loc, pointer, type));
    return success();
  }
};

/// A copy for the rank's host queue (zero-offload-to-host's, on the GPU's
/// CPU replica, where both buffers are host memory) to
/// `zero_rt_host_queue_copy`; a GPU program's are zero_rt_gpu_queue_copy
/// already (zero-gpu-buffer-placement).
struct QueuedCopyToCall : public OpConversionPattern<memref::CopyOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::CopyOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto type = cast<MemRefType>(op.getSource().getType());
    if (!op->hasAttr(kQueuedAttrName) ||
        !type.getElementType().isIntOrFloat() ||
        !memref::isStaticShapeAndContiguousRowMajor(type) ||
        !memref::isStaticShapeAndContiguousRowMajor(
            cast<MemRefType>(op.getTarget().getType())))
      return rewriter.notifyMatchFailure(op, "not a queued contiguous copy");
    RuntimeCallBuilder calls(op->getParentOfType<ModuleOp>());
    Location loc = op.getLoc();
    Value bytes = arith::ConstantIntOp::create(
        rewriter, loc, rewriter.getI64Type(),
        type.getNumElements() * zero::elementBytes(type.getElementType()));
    func::CallOp::create(
        rewriter, loc,
        calls.declare(rewriter, RuntimeFunction::zero_rt_host_queue_copy),
        ValueRange{calls.pointerTo(rewriter, loc, adaptor.getTarget()),
                   calls.pointerTo(rewriter, loc, adaptor.getSource()), bytes});
    rewriter.eraseOp(op);
    return success();
  }
};

/// A free of a buffer the rank's host queue copies down (zero-offload-to-
/// host's, on the GPU's CPU replica, where the queue's thread makes those
/// copies) to `zero_rt_host_queue_free` of the buffer's pointer, which is
/// the allocated one (only buffers that ask for no more alignment than the
/// runtime's allocators give are queued); a GPU program's are
/// zero_rt_gpu_free_after_copies or zero_rt_gpu_queue_free already
/// (zero-gpu-buffer-placement). A
/// free of a host staging buffer (zero.staging), on either, to
/// `zero_rt_host_queue_free_staging`.
struct QueuedFreeToCall : public OpConversionPattern<memref::DeallocOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(memref::DeallocOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!op->hasAttr(kQueuedAttrName))
      return rewriter.notifyMatchFailure(op, "not a queued free");
    RuntimeCallBuilder calls(op->getParentOfType<ModuleOp>());
    func::CallOp::create(
        rewriter, op.getLoc(),
        calls.declare(rewriter,
                      op->hasAttr(kStagingAttrName)
                          ? RuntimeFunction::zero_rt_host_queue_free_staging
                          : RuntimeFunction::zero_rt_host_queue_free),
        calls.pointerTo(rewriter, op.getLoc(), adaptor.getMemref()));
    rewriter.eraseOp(op);
    return success();
  }
};

//===----------------------------------------------------------------------===//
// Batches of started collectives
//===----------------------------------------------------------------------===//

/// Whether `op` calls the runtime to start a collective (it returns a
/// handle).
bool isStartCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  std::optional<RuntimeFunction> function =
      lookupRuntimeFunction(call.getCallee());
  return function &&
         llvm::is_contained({RuntimeFunction::zero_rt_all_reduce_start,
                             RuntimeFunction::zero_rt_reduce_scatter_start,
                             RuntimeFunction::zero_rt_all_gather_start,
                             RuntimeFunction::zero_rt_all_to_all_start},
                            *function);
}

/// Whether `op` may stand between two started collectives of one batch: it
/// allocates or computes their arguments (pointers, constants, a group's
/// descriptor), or names the next one.
bool mayStandInBatch(Operation *op) {
  if (auto call = dyn_cast<func::CallOp>(op))
    return lookupRuntimeFunction(call.getCallee()) ==
           RuntimeFunction::zero_rt_label;
  if (isa<memref::AllocOp>(op))
    return true;
  return isMemoryEffectFree(op) &&
         !isa_and_present<gpu::GPUDialect>(op->getDialect());
}

} // namespace

//===----------------------------------------------------------------------===//
// The interface
//===----------------------------------------------------------------------===//

void zero::registerZeroToRuntimeDialects(DialectRegistry &registry) {
  registry.insert<arith::ArithDialect, func::FuncDialect, LLVM::LLVMDialect,
                  memref::MemRefDialect>();
}

RuntimeTypeConverter::RuntimeTypeConverter(MLIRContext *context) {
  addConversion([](Type type) { return type; });
  addConversion([context](RequestType) -> Type {
    return LLVM::LLVMPointerType::get(context);
  });
}

void zero::populateZeroToRuntimePatterns(TypeConverter &typeConverter,
                                         RewritePatternSet &patterns) {
  MLIRContext *context = patterns.getContext();
  patterns.add<BufferCollectiveToCall<AllReduceBufferOp>,
               BufferCollectiveToCall<ReduceScatterBufferOp>,
               BufferCollectiveToCall<AllGatherBufferOp>,
               BufferCollectiveToCall<AllToAllBufferOp>, WaitToCall,
               CompletedRequestToNull, ReplicaIndexToCall, HostAllocToCall,
               QueuedCopyToCall, QueuedFreeToCall>(typeConverter, context);
  scf::populateSCFStructuralTypeConversions(typeConverter, patterns);
}

void zero::configureZeroToRuntimeTarget(ConversionTarget &target,
                                        TypeConverter &typeConverter) {
  target.addIllegalOp<AllReduceBufferOp, ReduceScatterBufferOp,
                      AllGatherBufferOp, AllToAllBufferOp, WaitOp,
                      CompletedRequestOp, ReplicaIndexOp, HostAllocOp>();
  target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                         LLVM::LLVMDialect, memref::MemRefDialect>();
  target.addDynamicallyLegalOp<memref::CopyOp, memref::DeallocOp>(
      [](Operation *op) { return !op->hasAttr(kQueuedAttrName); });
  // A host buffer's descriptor, until the memref lowering takes it.
  target.addLegalOp<UnrealizedConversionCastOp>();
  scf::populateSCFStructuralTypeConversionTarget(typeConverter, target);
}

std::optional<std::string> zero::whyNotLowerableToRuntime(Operation *op) {
  std::string why;
  llvm::raw_string_ostream os(why);
  if (auto index = dyn_cast<ReplicaIndexOp>(op)) {
    if (lookupMesh(op, index.getMeshAttr()))
      return std::nullopt;
    os << "refers to unknown mesh " << index.getMeshAttr();
    return why;
  }
  auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  if (!lookupMesh(op, meshName)) {
    os << "refers to unknown mesh " << meshName;
    return why;
  }
  auto inputType = cast<MemRefType>(op->getOperand(0).getType());
  auto outputType = cast<MemRefType>(op->getOperand(1).getType());
  if (!dtypeCode(inputType.getElementType())) {
    os << "cannot be lowered: the runtime has no element type '"
       << inputType.getElementType()
       << "' (it has f32, bf16, f16, f64, i32, i64 and i8)";
    return why;
  }
  if (auto rs = dyn_cast<ReduceScatterBufferOp>(op))
    if (auto partsWhy = whyPartsNotContiguous(inputType, rs.getScatterDim()))
      return partsWhy;
  if (auto ag = dyn_cast<AllGatherBufferOp>(op))
    if (auto partsWhy = whyPartsNotContiguous(outputType, ag.getGatherDim()))
      return partsWhy;
  if (isa<AllToAllBufferOp>(op) && op->getOperand(0) == op->getOperand(1)) {
    os << "cannot be lowered: an all-to-all cannot run in place (its input "
          "is its output)";
    return why;
  }
  for (MemRefType type : {inputType, outputType})
    if (!isContiguousBuffer(type)) {
      os << "cannot be lowered: '" << type
         << "' is not contiguous (zero-contiguous-collective-buffers "
            "stages such buffers through dense ones)";
      return why;
    }
  return std::nullopt;
}

LogicalResult zero::checkLowerableToRuntime(ModuleOp module) {
  bool failedAny = false;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isBufferCollective(op) || isa<ReplicaIndexOp>(op)) {
      if (std::optional<std::string> why = whyNotLowerableToRuntime(op)) {
        op->emitOpError(*why);
        failedAny = true;
      }
    } else if (isa<CollectiveOpInterface, AsyncOp, AwaitOp>(op)) {
      op->emitOpError("is still in tensor form; bufferize before "
                      "zero-lower-to-runtime (zero-to-llvm does)");
      failedAny = true;
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  // Checked after the ops themselves, so that an op in tensor form is
  // reported as such, not by its requests.
  if (failedAny)
    return failure();
  return verifyRequests(module);
}

void zero::eraseMeshes(ModuleOp module) {
  for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
    mesh.erase();
}

void zero::batchStartedCollectives(ModuleOp module) {
  SmallVector<std::pair<Operation *, Operation *>> runs;
  module.walk([&](Block *block) {
    Operation *first = nullptr, *last = nullptr;
    for (Operation &op : *block) {
      if (isStartCall(&op)) {
        first = first ? first : &op;
        last = &op;
        continue;
      }
      if (first && mayStandInBatch(&op))
        continue;
      if (first != last)
        runs.push_back({first, last});
      first = last = nullptr;
    }
  });
  if (runs.empty())
    return;
  RuntimeCallBuilder calls(module);
  OpBuilder b(module.getContext());
  func::FuncOp begin = calls.declare(b, RuntimeFunction::zero_rt_batch_begin);
  func::FuncOp end = calls.declare(b, RuntimeFunction::zero_rt_batch_end);
  for (auto [first, last] : runs) {
    b.setInsertionPoint(first);
    func::CallOp::create(b, first->getLoc(), begin, ValueRange());
    b.setInsertionPointAfter(last);
    func::CallOp::create(b, last->getLoc(), end, ValueRange());
  }
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct ZeroLowerToRuntimePass
    : public zero::impl::ZeroLowerToRuntimeBase<ZeroLowerToRuntimePass> {
  void getDependentDialects(DialectRegistry &registry) const override {
    registerZeroToRuntimeDialects(registry);
  }
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(checkLowerableToRuntime(module)))
      return signalPassFailure();
    MLIRContext *context = &getContext();
    RuntimeTypeConverter typeConverter(context);
    ConversionTarget target(*context);
    configureZeroToRuntimeTarget(target, typeConverter);
    RewritePatternSet patterns(context);
    populateZeroToRuntimePatterns(typeConverter, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    batchStartedCollectives(module);
    eraseMeshes(module);
  }
};

} // namespace
