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
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Transforms/RegionUtils.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;
using namespace zero;

namespace {

/// Whether `value`, used by a host loop, can pass to a task through its
/// context of 64-bit slots: a number, or a buffer of static shape (passed
/// as its allocation's address, with its offset and strides where they
/// are dynamic: a view by the rank's index, what a loop carries).
bool passesThroughSlot(Value value) {
  Type type = value.getType();
  if (auto buffer = dyn_cast<MemRefType>(type)) {
    SmallVector<int64_t> strides;
    int64_t offset;
    return buffer.hasStaticShape() &&
           buffer.getElementType().isIntOrIndexOrFloat() &&
           succeeded(buffer.getStridesAndOffset(strides, offset));
  }
  return type.isIndex() ||
         (type.isIntOrFloat() && type.getIntOrFloatBitWidth() <= 64);
}

/// Whether `type` is a buffer whose offset or strides are dynamic: it
/// passes with them, a slot each after its address.
bool hasDynamicLayout(Type type) {
  auto buffer = dyn_cast<MemRefType>(type);
  if (!buffer)
    return false;
  auto [strides, offset] = buffer.getStridesAndOffset();
  return ShapedType::isDynamic(offset) ||
         llvm::any_of(strides, ShapedType::isDynamic);
}

/// How many 64-bit slots `value` takes in a task's context.
size_t slotsOf(Value value) {
  return hasDynamicLayout(value.getType())
             ? 2 + cast<MemRefType>(value.getType()).getRank()
             : 1;
}

/// `value` as the 64 bits of its context slots (slotsOf).
SmallVector<Value> toSlots(OpBuilder &b, Location loc, Value value) {
  Type i64 = b.getI64Type();
  Type type = value.getType();
  auto asI64 = [&](Value index) {
    return arith::IndexCastOp::create(b, loc, i64, index).getResult();
  };
  if (isa<MemRefType>(type)) {
    SmallVector<Value> slots = {
        asI64(memref::ExtractAlignedPointerAsIndexOp::create(b, loc, value))};
    if (hasDynamicLayout(type)) {
      auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, value);
      slots.push_back(asI64(metadata.getOffset()));
      for (Value stride : metadata.getStrides())
        slots.push_back(asI64(stride));
    }
    return slots;
  }
  if (type.isIndex())
    return {asI64(value)};
  unsigned width = type.getIntOrFloatBitWidth();
  if (isa<FloatType>(type))
    value = arith::BitcastOp::create(b, loc, b.getIntegerType(width), value);
  return {width == 64 ? value : arith::ExtUIOp::create(b, loc, i64, value)};
}

/// The address of 64-bit slot `slot` of a task's `context`.
Value slotAddress(OpBuilder &b, Location loc, Value context, size_t slot) {
  return LLVM::GEPOp::create(
      b, loc, context.getType(), b.getI64Type(), context,
      ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(slot)});
}

/// The value of `type` that `slots` (its context slots, toSlots) hold.
Value fromSlots(OpBuilder &b, Location loc, ArrayRef<Value> slots, Type type,
                RuntimeCallBuilder &calls) {
  Value bits = slots.front();
  if (auto buffer = dyn_cast<MemRefType>(type)) {
    Value base = LLVM::IntToPtrOp::create(b, loc, calls.pointerType(), bits);
    if (!hasDynamicLayout(type))
      return calls.bufferAt(b, loc, base, buffer);
    // The allocation as one element, viewed with the offset and strides
    // the slots after its address hold.
    Value start = calls.bufferAt(b, loc, base,
                                 MemRefType::get({1}, buffer.getElementType()));
    // What the type fixes stays a constant, as the view's type requires.
    auto [staticStrides, staticOffset] = buffer.getStridesAndOffset();
    auto asIndex = [&](int64_t fixed, Value slot) -> OpFoldResult {
      if (!ShapedType::isDynamic(fixed))
        return b.getIndexAttr(fixed);
      return arith::IndexCastOp::create(b, loc, b.getIndexType(), slot)
          .getResult();
    };
    SmallVector<OpFoldResult> sizes, strides;
    for (int64_t size : buffer.getShape())
      sizes.push_back(b.getIndexAttr(size));
    for (auto [fixed, stride] : llvm::zip(staticStrides, slots.drop_front(2)))
      strides.push_back(asIndex(fixed, stride));
    return memref::ReinterpretCastOp::create(
        b, loc, buffer, start, asIndex(staticOffset, slots[1]), sizes, strides);
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
Value splitTaskValues(ArrayRef<scf::ForOp> loops,
                      SmallVectorImpl<Value> &passed,
                      SmallVectorImpl<Value> &copied) {
  llvm::SetVector<Value> used;
  for (scf::ForOp loop : loops)
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

std::optional<int64_t> zero::constantTripCount(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                         upper = getConstantIntValue(loop.getUpperBound()),
                         step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *step <= 0)
    return std::nullopt;
  return *upper > *lower ? llvm::divideCeil(*upper - *lower, *step) : 0;
}

std::optional<HostTask> zero::outlineTask(scf::ForOp loop, func::FuncOp fn,
                                          unsigned index) {
  return outlineTask(ArrayRef<scf::ForOp>(loop), fn, index);
}

std::optional<HostTask> zero::outlineTask(ArrayRef<scf::ForOp> loops,
                                          func::FuncOp fn, unsigned index) {
  assert(!loops.empty() && "a task runs at least one loop");
  // Several loops share the iterations [0, P) of the largest, each running
  // its own in proportion: n * begin / P to n * end / P of its n.
  SmallVector<int64_t> tripCounts;
  int64_t shared = 0;
  if (loops.size() > 1) {
    for (scf::ForOp loop : loops) {
      std::optional<int64_t> count = constantTripCount(loop);
      assert(count && "loops share a task only with constant bounds");
      tripCounts.push_back(*count);
      shared = std::max(shared, *count);
    }
    // n * end must not overflow: every product stays below 2^62.
    if (llvm::any_of(tripCounts, [&](int64_t n) {
          return shared != 0 && n > (int64_t(1) << 62) / shared;
        }))
      return std::nullopt;
  }
  SmallVector<Value> passed, copied;
  if (splitTaskValues(loops, passed, copied))
    return std::nullopt;
  // The loops' bounds pass too, unless constant.
  for (scf::ForOp loop : loops)
    for (Value bound : {loop.getLowerBound(), loop.getStep()})
      if (!llvm::is_contained(passed, bound) &&
          !llvm::is_contained(copied, bound)) {
        Operation *def = bound.getDefiningOp();
        (def && def->hasTrait<OpTrait::ConstantLike>() ? copied : passed)
            .push_back(bound);
      }
  scf::ForOp loop = loops.back();
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
  size_t slot = 0;
  for (Value value : passed) {
    SmallVector<Value> bits;
    for (size_t end = slot + slotsOf(value); slot < end; ++slot)
      bits.push_back(LLVM::LoadOp::create(
          b, loc, i64, slotAddress(b, loc, entry->getArgument(0), slot)));
    map.map(value, fromSlots(b, loc, bits, value.getType(), calls));
  }
  Value begin = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                           entry->getArgument(1));
  Value end = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                         entry->getArgument(2));
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  for (auto [k, loopK] : llvm::enumerate(loops)) {
    scf::ForOp each = loopK;
    Value from = begin, to = end;
    if (loops.size() > 1 && tripCounts[k] != shared) {
      // This loop's part of the shared iterations [begin, end).
      Value count = arith::ConstantIndexOp::create(b, loc, tripCounts[k]);
      Value all = arith::ConstantIndexOp::create(b, loc, shared);
      auto scale = [&](Value at) -> Value {
        return arith::DivUIOp::create(
            b, loc, arith::MulIOp::create(b, loc, count, at), all);
      };
      from = scale(begin);
      to = scale(end);
    }
    Value lower = map.lookup(each.getLowerBound());
    Value step = map.lookup(each.getStep());
    auto chunk = scf::ForOp::create(b, loc, from, to, one);
    chunk->setAttr("zero.host", b.getUnitAttr());
    OpBuilder body = OpBuilder::atBlockBegin(chunk.getBody());
    Value offset =
        arith::MulIOp::create(body, loc, chunk.getInductionVar(), step);
    map.map(each.getInductionVar(),
            arith::AddIOp::create(body, loc, lower, offset));
    for (Operation &op : each.getBody()->without_terminator())
      body.clone(op, map);
  }
  func::ReturnOp::create(b, loc);

  // The call: the context on the function's stack, filled here.
  OpBuilder at(loop);
  OpBuilder entryBuilder =
      OpBuilder::atBlockBegin(&fn.getFunctionBody().front());
  size_t slotCount = 0;
  for (Value value : passed)
    slotCount += slotsOf(value);
  Value slots = LLVM::ConstantOp::create(entryBuilder, loc, i64,
                                         std::max<int64_t>(1, slotCount));
  Value contextPointer =
      LLVM::AllocaOp::create(entryBuilder, loc, pointer, i64, slots);
  llvm::SmallDenseMap<Value, int64_t> slotOf;
  slot = 0;
  for (Value value : passed) {
    slotOf[value] = slot;
    for (Value bits : toSlots(at, loc, value))
      LLVM::StoreOp::create(at, loc, bits,
                            slotAddress(at, loc, contextPointer, slot++));
  }
  Value iterations;
  if (loops.size() > 1) {
    iterations = arith::ConstantIndexOp::create(at, loc, shared);
  } else {
    Value span = arith::SubIOp::create(at, loc, loop.getUpperBound(),
                                       loop.getLowerBound());
    iterations = arith::CeilDivUIOp::create(at, loc, span, loop.getStep());
  }
  Value taskValue =
      func::ConstantOp::create(at, loc, taskType, FlatSymbolRefAttr::get(task));
  Value taskPointer =
      UnrealizedConversionCastOp::create(at, loc, pointer, taskValue)
          .getResult(0);
  Value count = arith::IndexCastOp::create(at, loc, i64, iterations);
  Value contextBytes = arith::ConstantIntOp::create(
      at, loc, i64, static_cast<int64_t>(8 * slotCount));
  return HostTask{taskPointer, contextPointer, contextBytes, count,
                  std::move(slotOf)};
}

namespace {
/// Calls `task` where `loop` is: zero_rt_parallel_for (an iteration `grain`
/// elements), or with `queued` zero_rt_host_queue_for.
void callTask(const HostTask &task, scf::ForOp loop, func::FuncOp fn,
              bool queued, int64_t grain) {
  OpBuilder at(loop);
  RuntimeCallBuilder calls(fn->getParentOfType<ModuleOp>());
  // The queue copies the context: the slot is reused once this returns.
  if (queued)
    func::CallOp::create(
        at, loop.getLoc(),
        calls.declare(at, RuntimeFunction::zero_rt_host_queue_for),
        ValueRange{task.task, task.context, task.contextBytes,
                   task.iterations});
  else
    func::CallOp::create(
        at, loop.getLoc(),
        calls.declare(at, RuntimeFunction::zero_rt_parallel_for),
        ValueRange{task.task, task.context, task.iterations,
                   arith::ConstantIntOp::create(at, loop.getLoc(),
                                                at.getI64Type(), grain)});
}
} // namespace

bool zero::runAcrossCores(scf::ForOp loop, func::FuncOp fn, unsigned index,
                          bool queued, int64_t grain) {
  assert((!queued || grain == 1) && "the host queue runs loops of elements");
  std::optional<HostTask> task = outlineTask(loop, fn, index);
  if (!task)
    return false;
  callTask(*task, loop, fn, queued, grain);
  loop.erase();
  return true;
}

bool zero::runTogetherAcrossCores(ArrayRef<scf::ForOp> loops, func::FuncOp fn,
                                  unsigned index, int64_t grain) {
  std::optional<HostTask> task = outlineTask(loops, fn, index);
  if (!task)
    return false;
  callTask(*task, loops.back(), fn, /*queued=*/false, grain);
  for (scf::ForOp loop : loops)
    loop.erase();
  return true;
}
