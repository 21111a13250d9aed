//===- HostTasks.cpp - a host loop across the host's cores ----------------===//
//
// A loop's body as a task that zero_rt_parallel_for runs over chunks of its
// iterations, on the runtime's pool. See HostTasks.h.
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/ZeroToRuntime/HostTasks.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace zero;

namespace {

/// Whether `value`, used by a host loop, can pass to a task through its
/// context of 64-bit slots: a number, or a buffer of static layout (passed
/// as its allocation's address).
bool passesThroughSlot(Value value) {
  Type type = value.getType();
  if (auto buffer = dyn_cast<MemRefType>(type)) {
    if (!buffer.hasStaticShape() ||
        !buffer.getElementType().isIntOrIndexOrFloat())
      return false;
    auto [strides, offset] = buffer.getStridesAndOffset();
    return !ShapedType::isDynamic(offset) &&
           llvm::none_of(strides, ShapedType::isDynamic);
  }
  return type.isIndex() ||
         (type.isIntOrFloat() && type.getIntOrFloatBitWidth() <= 64);
}

/// `value` as the 64 bits of a context slot.
Value toSlot(OpBuilder &b, Location loc, Value value) {
  Type i64 = b.getI64Type();
  Type type = value.getType();
  if (isa<MemRefType>(type)) {
    Value base = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, value);
    return arith::IndexCastOp::create(b, loc, i64, base);
  }
  if (type.isIndex())
    return arith::IndexCastOp::create(b, loc, i64, value);
  unsigned width = type.getIntOrFloatBitWidth();
  if (isa<FloatType>(type))
    value = arith::BitcastOp::create(b, loc, b.getIntegerType(width), value);
  return width == 64 ? value : arith::ExtUIOp::create(b, loc, i64, value);
}

/// The address of 64-bit slot `slot` of a task's `context`.
Value slotAddress(OpBuilder &b, Location loc, Value context, size_t slot) {
  return LLVM::GEPOp::create(
      b, loc, context.getType(), b.getI64Type(), context,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(slot)});
}

/// The value of `type` that `bits` (a context slot) holds.
Value fromSlot(OpBuilder &b, Location loc, Value bits, Type type,
               RuntimeCallBuilder &calls) {
  if (auto buffer = dyn_cast<MemRefType>(type)) {
    Value base = LLVM::IntToPtrOp::create(b, loc, calls.pointerType(), bits);
    return calls.bufferAt(b, loc, base, buffer);
  }
  if (type.isIndex())
    return arith::IndexCastOp::create(b, loc, type, bits);
  unsigned width = type.getIntOrFloatBitWidth();
  Value narrow =
      width == 64
          ? bits
          : arith::TruncIOp::create(b, loc, b.getIntegerType(width), bits);
  return isa<FloatType>(type) ? arith::BitcastOp::create(b, loc, type, narrow)
                              : narrow;
}

} // namespace

scf::ForOp zero::toSequentialLoops(scf::ParallelOp nest) {
  OpBuilder b(nest);
  scf::LoopNest loops = scf::buildLoopNest(
      b, nest.getLoc(), nest.getLowerBound(), nest.getUpperBound(),
      nest.getStep(), [&](OpBuilder &inner, Location, ValueRange ivs) {
        IRMapping map;
        map.map(nest.getInductionVars(), ivs);
        for (Operation &op : nest.getBody()->without_terminator())
          inner.clone(op, map);
      });
  nest.erase();
  return loops.loops.empty() ? nullptr : loops.loops.front();
}

namespace {
/// Splits the values `loop`'s body uses from outside into those that pass
/// through the task's context and the constants copied into it; returns
/// the first that can do neither (null when none).
Value splitTaskValues(scf::ForOp loop, SmallVectorImpl<Value> &passed,
                      SmallVectorImpl<Value> &copied) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(loop.getRegion(), used);
  for (Value value : used) {
    if (Operation *def = value.getDefiningOp();
        def && def->hasTrait<OpTrait::ConstantLike>())
      copied.push_back(value);
    else if (passesThroughSlot(value))
      passed.push_back(value);
    else
      return value;
  }
  return nullptr;
}
} // namespace

Value zero::valueTaskCannotTake(scf::ForOp loop) {
  SmallVector<Value> passed, copied;
  return splitTaskValues(loop, passed, copied);
}

std::optional<HostTask> zero::outlineTask(scf::ForOp loop, func::FuncOp fn,
                                          unsigned index) {
  SmallVector<Value> passed, copied;
  if (splitTaskValues(loop, passed, copied))
    return std::nullopt;
  // The loop's bounds pass too, unless constant.
  for (Value bound : {loop.getLowerBound(), loop.getStep()})
    if (!llvm::is_contained(passed, bound) &&
        !llvm::is_contained(copied, bound)) {
      Operation *def = bound.getDefiningOp();
      (def && def->hasTrait<OpTrait::ConstantLike>() ? copied : passed)
          .push_back(bound);
    }
  auto module = fn->getParentOfType<ModuleOp>();
  RuntimeCallBuilder calls(module);
  Location loc = loop.getLoc();
  MLIRContext *context = fn.getContext();
  Type i64 = IntegerType::get(context, 64);
  Type pointer = calls.pointerType();

  // The task.
  OpBuilder top(module.getBodyRegion());
  top.setInsertionPointAfter(fn);
  std::string name = (fn.getName() + "_host" + Twine(index)).str();
  auto taskType = FunctionType::get(context, {pointer, i64, i64}, {});
  auto task = func::FuncOp::create(top, loc, name, taskType);
  task.setPrivate();
  task->setAttr(kHostTaskAttrName, top.getUnitAttr());
  SymbolTable(module).insert(task);
  Block *entry = task.addEntryBlock();
  OpBuilder b = OpBuilder::atBlockBegin(entry);
  IRMapping map;
  for (Value value : copied)
    map.map(value, b.clone(*value.getDefiningOp())->getResult(0));
  for (auto [slot, value] : llvm::enumerate(passed)) {
    Value address = slotAddress(b, loc, entry->getArgument(0), slot);
    Value bits = LLVM::LoadOp::create(b, loc, i64, address);
    map.map(value, fromSlot(b, loc, bits, value.getType(), calls));
  }
  Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           entry->getArgument(1));
  Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                         entry->getArgument(2));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value lower = map.lookup(loop.getLowerBound());
  Value step = map.lookup(loop.getStep());
  auto chunk = scf::ForOp::create(b, loc, begin, end, one);
  chunk->setAttr("zero.host", b.getUnitAttr());
  {
    OpBuilder body = OpBuilder::atBlockBegin(chunk.getBody());
    Value offset =
        arith::MulIOp::create(body, loc, chunk.getInductionVar(), step);
    map.map(loop.getInductionVar(),
            arith::AddIOp::create(body, loc, lower, offset));
    for (Operation &op : loop.getBody()->without_terminator())
      body.clone(op, map);
  }
  func::ReturnOp::create(b, loc);

  // The call: the context on the function's stack, filled here.
  OpBuilder at(loop);
  OpBuilder entryBuilder =
      OpBuilder::atBlockBegin(&fn.getFunctionBody().front());
  Value slots = LLVM::ConstantOp::create(entryBuilder, loc, i64,
                                         std::max<int64_t>(1, passed.size()));
  Value contextPointer =
      LLVM::AllocaOp::create(entryBuilder, loc, pointer, i64, slots);
  for (auto [slot, value] : llvm::enumerate(passed)) {
    LLVM::StoreOp::create(at, loc, toSlot(at, loc, value),
                          slotAddress(at, loc, contextPointer, slot));
  }
  Value span = arith::SubIOp::create(at, loc, loop.getUpperBound(),
                                     loop.getLowerBound());
  Value iterations = arith::CeilDivUIOp::create(at, loc, span, loop.getStep());
  Value taskValue =
      func::ConstantOp::create(at, loc, taskType, FlatSymbolRefAttr::get(task));
  Value taskPointer =
      UnrealizedConversionCastOp::create(at, loc, pointer, taskValue)
          .getResult(0);
  Value count = arith::IndexCastOp::create(at, loc, i64, iterations);
  Value contextBytes = arith::ConstantIntOp::create(
      at, loc, i64, static_cast<int64_t>(8 * passed.size()));
  return HostTask{taskPointer, contextPointer, contextBytes, count};
}

bool zero::runAcrossCores(scf::ForOp loop, func::FuncOp fn, unsigned index,
                          bool queued, int64_t grain) {
  assert((!queued || grain == 1) && "the host queue runs loops of elements");
  std::optional<HostTask> task = outlineTask(loop, fn, index);
  if (!task)
    return false;
  OpBuilder at(loop);
  RuntimeCallBuilder calls(fn->getParentOfType<ModuleOp>());
  // The queue copies the context: the slot is reused once this returns.
  if (queued)
    func::CallOp::create(
        at, loop.getLoc(),
        calls.declare(at, RuntimeFunction::zero_rt_host_queue_for),
        ValueRange{task->task, task->context, task->contextBytes,
                   task->iterations});
  else
    func::CallOp::create(
        at, loop.getLoc(),
        calls.declare(at, RuntimeFunction::zero_rt_parallel_for),
        ValueRange{task->task, task->context, task->iterations,
                   arith::ConstantIntOp::create(at, loop.getLoc(),
                                                at.getI64Type(), grain)});
  loop.erase();
  return true;
}
