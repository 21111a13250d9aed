//===- ZeroToRuntime.cpp - bufferized collectives to runtime calls --------===//
//
// The runtime's compiled-code entry points (zero_rt_*) take plain pointers,
// counts and codes, so the calls are built here with func.call on !llvm.ptr
// values; the upstream conversions then lower everything else to LLVM.
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Conversion/Passes.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/StringExtras.h"

namespace zero {
#define GEN_PASS_DEF_ZEROLOWERTORUNTIME
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// `zero_rt_wait` on `handle` (a `zero_handle *`) where `wait` stands, which
/// goes.
void lowerWait(WaitOp wait, Value handle, RuntimeCallBuilder &calls) {
  OpBuilder b(wait);
  func::FuncOp waitFn = calls.declare(RuntimeFunction::zero_rt_wait);
  func::CallOp::create(b, wait.getLoc(), waitFn, handle);
  wait->erase();
}

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

/// Gives the requests that loops carry (block arguments, results of ops
/// with regions) the handle's type, and makes zero.completed_request a null
/// handle: the collectives that start them and the waits that end them are
/// lowered next.
void lowerCarriedRequests(ModuleOp module, RuntimeCallBuilder &calls) {
  Type ptr = calls.pointerType();
  module.walk([&](Operation *op) {
    if (auto none = dyn_cast<CompletedRequestOp>(op)) {
      OpBuilder b(op);
      op->replaceAllUsesWith(LLVM::ZeroOp::create(b, op->getLoc(), ptr));
      op->erase();
      return;
    }
    if (op->getNumRegions() == 0)
      return;
    for (OpResult result : op->getResults())
      if (isa<RequestType>(result.getType()))
        result.setType(ptr);
    for (Region &region : op->getRegions())
      for (BlockArgument argument : region.getArguments())
        if (isa<RequestType>(argument.getType()))
          argument.setType(ptr);
  });
}

/// Checks that each rank's part along `dim` is contiguous.
LogicalResult verifyContiguousParts(Operation *op, MemRefType type,
                                    int64_t dim) {
  for (int64_t d = 0; d < dim; ++d)
    if (type.getDimSize(d) != 1)
      return op->emitOpError("cannot be lowered: splitting dimension ")
             << dim << " of " << type
             << " gives parts that are not contiguous (only unit dimensions "
                "may precede it); flatten the buffer first";
  return success();
}

/// Whether `op` calls the runtime to start a collective (it returns a
/// handle).
bool isStartCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  std::optional<RuntimeFunction> function =
      lookupRuntimeFunction(call.getCallee());
  return function && llvm::is_contained(
                         {RuntimeFunction::zero_rt_all_reduce_start,
                          RuntimeFunction::zero_rt_reduce_scatter_start,
                          RuntimeFunction::zero_rt_all_gather_start},
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

/// Brackets each run of two or more collectives started one after another,
/// with nothing but their arguments between them, by `zero_rt_batch_begin`
/// and `zero_rt_batch_end`: what one step of the schedule issues together,
/// which the nccl backend issues as one NCCL group.
void batchStartedCollectives(ModuleOp module, RuntimeCallBuilder &calls) {
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
  func::FuncOp begin = calls.declare(RuntimeFunction::zero_rt_batch_begin);
  func::FuncOp end = calls.declare(RuntimeFunction::zero_rt_batch_end);
  for (auto [first, last] : runs) {
    OpBuilder b(first);
    func::CallOp::create(b, first->getLoc(), begin, ValueRange());
    b.setInsertionPointAfter(last);
    func::CallOp::create(b, last->getLoc(), end, ValueRange());
  }
}

struct ZeroLowerToRuntimePass
    : public zero::impl::ZeroLowerToRuntimeBase<ZeroLowerToRuntimePass> {
  void runOnOperation() override;

  LogicalResult lowerCollective(Operation *op, RuntimeCallBuilder &calls);
  LogicalResult lowerReplicaIndex(ReplicaIndexOp op, RuntimeCallBuilder &calls);
};

LogicalResult
ZeroLowerToRuntimePass::lowerReplicaIndex(ReplicaIndexOp op,
                                          RuntimeCallBuilder &calls) {
  MeshOp mesh = lookupMesh(op, op.getMeshAttr());
  if (!mesh)
    return op.emitOpError("refers to unknown mesh ") << op.getMeshAttr();
  OpBuilder b(op);
  Location loc = op.getLoc();
  func::FuncOp fn = calls.declare(RuntimeFunction::zero_rt_group_index);
  Value group = calls.groupPointer(b, loc, mesh, op.getAxesAttr());
  Value index = func::CallOp::create(b, loc, fn, group).getResult(0);
  op.replaceAllUsesWith(
      arith::IndexCastOp::create(b, loc, b.getIndexType(), index).getResult());
  op.erase();
  return success();
}

LogicalResult
ZeroLowerToRuntimePass::lowerCollective(Operation *op,
                                        RuntimeCallBuilder &calls) {
  Value input = op->getOperand(0), output = op->getOperand(1);
  auto inputType = cast<MemRefType>(input.getType());
  auto meshName = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
  MeshOp mesh = lookupMesh(op, meshName);
  if (!mesh)
    return op->emitOpError("refers to unknown mesh ") << meshName;
  std::optional<int32_t> dtype = dtypeCode(inputType.getElementType());
  if (!dtype)
    return op->emitOpError("cannot be lowered: the runtime has no element "
                           "type ")
           << inputType.getElementType()
           << " (it has f32, bf16, f16, f64, i32 and i64)";

  // The blocking entry point, and the one that starts it and returns a
  // handle.
  RuntimeFunction blocking, start;
  std::optional<int32_t> reduction;
  if (auto ar = dyn_cast<AllReduceBufferOp>(op)) {
    blocking = RuntimeFunction::zero_rt_all_reduce;
    start = RuntimeFunction::zero_rt_all_reduce_start;
    reduction = reductionCode(ar.getReduction());
  } else if (auto rs = dyn_cast<ReduceScatterBufferOp>(op)) {
    blocking = RuntimeFunction::zero_rt_reduce_scatter;
    start = RuntimeFunction::zero_rt_reduce_scatter_start;
    reduction = reductionCode(rs.getReduction());
    if (failed(verifyContiguousParts(op, inputType, rs.getScatterDim())))
      return failure();
  } else {
    auto ag = cast<AllGatherBufferOp>(op);
    blocking = RuntimeFunction::zero_rt_all_gather;
    start = RuntimeFunction::zero_rt_all_gather_start;
    if (failed(verifyContiguousParts(op, cast<MemRefType>(output.getType()),
                                     ag.getGatherDim())))
      return failure();
  }

  // A started collective (it returns a request) calls the `_start` entry
  // point. When its wait is in its block, that wait becomes zero_rt_wait on
  // the handle here, after which temporaries can go; a request that a loop
  // carries to its wait is the handle itself (verifyRequests checked both).
  Value request = op->getNumResults() ? op->getResult(0) : Value();
  WaitOp localWait =
      request ? dyn_cast<WaitOp>(*request.getUsers().begin()) : WaitOp();
  for (Value buffer : {input, output})
    if (!isContiguousBuffer(cast<MemRefType>(buffer.getType())))
      return op->emitOpError("cannot be lowered: ")
             << buffer.getType()
             << " is not contiguous (zero-contiguous-collective-buffers "
                "stages such buffers through dense ones)";

  OpBuilder b(op);
  Location loc = op->getLoc();
  Type i64 = b.getI64Type(), i32 = b.getI32Type();
  func::FuncOp fn = calls.declare(request ? start : blocking);

  SmallVector<Value> args = {
      calls.pointerTo(b, loc, input), calls.pointerTo(b, loc, output),
      arith::ConstantIntOp::create(b, loc, i64, inputType.getNumElements()),
      arith::ConstantIntOp::create(b, loc, i32, *dtype)};
  if (reduction)
    args.push_back(arith::ConstantIntOp::create(b, loc, i32, *reduction));
  args.push_back(calls.groupPointer(b, loc, mesh, axes));
  // A bucket's collective is named in traces.
  if (auto bucket = op->getAttrOfType<DictionaryAttr>("zero.bucket"))
    if (auto id = bucket.getAs<IntegerAttr>("id")) {
      func::FuncOp label = calls.declare(RuntimeFunction::zero_rt_label);
      func::CallOp::create(
          b, loc, label,
          calls.stringPointer(b, loc, "bucket " + std::to_string(id.getInt())));
    }
  auto call = func::CallOp::create(b, loc, fn, args);
  if (localWait)
    lowerWait(localWait, call.getResult(0), calls);
  else if (request)
    request.replaceAllUsesWith(call.getResult(0));
  op->erase();
  return success();
}

void ZeroLowerToRuntimePass::runOnOperation() {
  ModuleOp module = getOperation();
  RuntimeCallBuilder calls(module);
  bool failedAny = false;
  SmallVector<Operation *> work;
  module.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (isBufferCollective(op) || isa<ReplicaIndexOp>(op)) {
      work.push_back(op);
    } else if (isa<CollectiveOpInterface, AsyncOp, AwaitOp>(op)) {
      op->emitOpError("is still in tensor form; bufferize before "
                      "zero-lower-to-runtime (zero-to-llvm does)");
      failedAny = true;
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  if (failedAny || failed(verifyRequests(module)))
    return signalPassFailure();
  lowerCarriedRequests(module, calls);
  for (Operation *op : work) {
    LogicalResult result =
        isa<ReplicaIndexOp>(op)
            ? lowerReplicaIndex(cast<ReplicaIndexOp>(op), calls)
            : lowerCollective(op, calls);
    failedAny |= failed(result);
  }
  if (failedAny)
    return signalPassFailure();
  // The waits on carried requests, whose handles are now pointers.
  module.walk(
      [&](WaitOp wait) { lowerWait(wait, wait->getOperand(0), calls); });
  batchStartedCollectives(module, calls);
  for (MeshOp mesh : llvm::make_early_inc_range(module.getOps<MeshOp>()))
    mesh.erase();
}

} // namespace
