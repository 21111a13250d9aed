//===- OffloadToHost.cpp - the update on offloaded state runs on the host -===//
//
// See Passes.td (zero-offload-to-host).
//
//===----------------------------------------------------------------------===//

#include "HostAccess.h"
#include "HostQueue.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Conversion/ZeroToRuntime/HostTasks.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Target/GPU/Passes.h"
#include "zero/Utils/Buffers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>
#include <functional>

namespace zero {
#define GEN_PASS_DEF_ZEROOFFLOADTOHOST
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The top-level parallel loop nests of `fn`: those not inside another.
SmallVector<scf::ParallelOp> topLevelNests(func::FuncOp fn) {
  SmallVector<scf::ParallelOp> nests;
  fn.walk<WalkOrder::PreOrder>([&](scf::ParallelOp nest) {
    nests.push_back(nest);
    return WalkResult::skip();
  });
  return nests;
}

/// The copies of `fn` from a device buffer into host memory.
SmallVector<memref::CopyOp> programCopiesDown(func::FuncOp fn) {
  SmallVector<memref::CopyOp> copies;
  fn.walk([&](memref::CopyOp copy) {
    if (zero::copiesDown(copy))
      copies.push_back(copy);
  });
  return copies;
}

/// Whether `value` is defined outside `nest`.
bool definedOutside(Value value, Operation *nest) {
  return !nest->isAncestor(value.getParentRegion()->getParentOp());
}

/// The buffers defined outside `nest` that ops inside it use.
llvm::SetVector<Value> outsideBuffers(scf::ParallelOp nest) {
  llvm::SetVector<Value> buffers;
  nest.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()) && definedOutside(operand, nest))
        buffers.insert(operand);
  });
  return buffers;
}

/// Whether `nest` writes a buffer in host memory: the update of offloaded
/// state, which the host runs. A nest that only reads host memory (a copy
/// of the new state into a gather's bucket) stays a kernel, reading the
/// mapped pinned memory across the link.
bool writesHostMemory(scf::ParallelOp nest) {
  return nest
      .walk([](MemoryEffectOpInterface op) {
        SmallVector<MemoryEffects::EffectInstance> effects;
        op.getEffects(effects);
        for (const MemoryEffects::EffectInstance &effect : effects)
          if (isa<MemoryEffects::Write>(effect.getEffect()) &&
              effect.getValue() && zero::inHostMemory(effect.getValue()))
            return WalkResult::interrupt();
        return WalkResult::advance();
      })
      .wasInterrupted();
}

/// Whether `op` is inside one of `nests`.
bool insideAny(Operation *op, ArrayRef<scf::ParallelOp> nests) {
  return llvm::any_of(
      nests, [&](scf::ParallelOp nest) { return nest->isAncestor(op); });
}

/// Whether every use of `buffer` (through views) is inside one of `nests`
/// or frees it.
bool usedOnlyIn(Value buffer, ArrayRef<scf::ParallelOp> nests) {
  for (Operation *user : buffer.getUsers()) {
    if (isa<memref::DeallocOp>(user) || insideAny(user, nests))
      continue;
    if (isa<ViewLikeOpInterface>(user) &&
        llvm::all_of(user->getResults(),
                     [&](Value view) { return usedOnlyIn(view, nests); }))
      continue;
    return false;
  }
  return true;
}

/// The buffers `fn` allocates (of static shape and identity layout, outside
/// `nests`) that only `nests` use.
SmallVector<memref::AllocOp>
temporariesOnlyOf(func::FuncOp fn, ArrayRef<scf::ParallelOp> nests) {
  SmallVector<memref::AllocOp> temporaries;
  fn.walk([&](memref::AllocOp alloc) {
    if (!insideAny(alloc, nests) && alloc.getType().hasStaticShape() &&
        alloc.getType().getLayout().isIdentity() &&
        usedOnlyIn(alloc.getResult(), nests))
      temporaries.push_back(alloc);
  });
  return temporaries;
}

/// Whether ops of `nest` read (`read`) or write `buffer`, each using it
/// directly as the buffer it indexes. Sets `other` to an op that uses it
/// otherwise (a view made inside the nest), which staging cannot follow.
bool accesses(scf::ParallelOp nest, Value buffer, bool read,
              Operation *&other) {
  bool found = false;
  for (Operation *user : buffer.getUsers()) {
    if (!nest->isAncestor(user))
      continue;
    auto effects = dyn_cast<MemoryEffectOpInterface>(user);
    if (!effects || isa<ViewLikeOpInterface>(user)) {
      other = user;
      continue;
    }
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffectsOnValue(buffer, instances);
    for (const MemoryEffects::EffectInstance &effect : instances)
      if (read ? isa<MemoryEffects::Read>(effect.getEffect())
               : isa<MemoryEffects::Write>(effect.getEffect()))
        found = true;
  }
  return found;
}

/// `nest` as a nest of `scf.for` over the same bounds, marked `zero.host`:
/// the host runs it, never a kernel. Returns the outermost loop.
scf::ForOp convertToHostLoops(scf::ParallelOp nest) {
  scf::ForOp loop = zero::toSequentialLoops(nest);
  if (loop)
    loop->setAttr("zero.host", UnitAttr::get(loop.getContext()));
  return loop;
}

/// A parallel loop nest that copies `from` into `to` (of one shape), element
/// by element: a kernel, once the GPU lowering maps it.
void buildCopyNest(OpBuilder &b, Location loc, Value from, Value to) {
  auto type = cast<MemRefType>(to.getType());
  SmallVector<Value> lower, upper, steps;
  for (int64_t size : type.getShape()) {
    lower.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    upper.push_back(arith::ConstantIndexOp::create(b, loc, size));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::ParallelOp::create(
      b, loc, lower, upper, steps,
      [&](OpBuilder &inner, Location, ValueRange ivs) {
        Value element = memref::LoadOp::create(inner, loc, from, ivs);
        memref::StoreOp::create(inner, loc, element, to, ivs);
      });
}

/// Moves each buffer collective of `fn` that reads or writes host memory
/// through device buffers: its input copied to the device before it, its
/// output copied back once it completes (at its `zero.wait` when started).
/// The weights' shards of `offload=params` go up before their gather so,
/// and NCCL, which takes device buffers only, can run every collective.
/// Before the host queue's schedule, which so sees those copies: a gathered
/// weight's copy back into its host argument after the rank's wait for its
/// update is one the rank only starts (`zero.copy_down`). Returns how many
/// it moved.
unsigned stageCollectives(func::FuncOp fn) {
  SmallVector<Operation *> collectives;
  fn.walk([&](Operation *op) {
    if (zero::isBufferCollective(op) && op->getNumOperands() >= 2 &&
        (zero::inHostMemory(op->getOperand(0)) ||
         zero::inHostMemory(op->getOperand(1))))
      collectives.push_back(op);
  });
  for (Operation *op : collectives) {
    Operation *done = op;
    for (Operation *user : op->getUsers())
      if (isa<zero::WaitOp>(user))
        done = user;
    Location loc = op->getLoc();
    Value input = op->getOperand(0), output = op->getOperand(1);
    OpBuilder before(op), after(done->getBlock(), ++done->getIterator());
    auto onDevice = [&](Value buffer) -> Value {
      auto type = cast<MemRefType>(buffer.getType());
      return memref::AllocOp::create(
          before, loc, MemRefType::get(type.getShape(), type.getElementType()));
    };
    Value deviceInput = input, deviceOutput = output;
    if (zero::inHostMemory(input)) {
      deviceInput = onDevice(input);
      memref::CopyOp::create(before, loc, input, deviceInput);
    }
    if (output == input)
      deviceOutput = deviceInput;
    else if (zero::inHostMemory(output))
      deviceOutput = onDevice(output);
    if (deviceOutput != output)
      memref::CopyOp::create(after, loc, deviceOutput, output);
    if (deviceInput != input)
      memref::DeallocOp::create(after, loc, deviceInput);
    if (deviceOutput != output && deviceOutput != deviceInput)
      memref::DeallocOp::create(after, loc, deviceOutput);
    for (Operation *user : {op, done}) {
      user->setOperand(user == op ? 0 : 1, deviceInput);
      user->setOperand(user == op ? 1 : 2, deviceOutput);
    }
  }
  return collectives.size();
}

/// The results of `fn` that are the next value of a host argument but are
/// not in host memory yet, as (return, operand index) pairs: a delayed
/// update's gradient shards (a reduce-scatter's output) and its flag. The
/// launcher hands each back as its argument, which the host reads.
SmallVector<std::pair<func::ReturnOp, unsigned>>
hostStateResults(func::FuncOp fn) {
  SmallVector<std::pair<func::ReturnOp, unsigned>> results;
  fn.walk([&](func::ReturnOp ret) {
    for (auto [i, value] : llvm::enumerate(ret.getOperands())) {
      auto of = fn.getResultAttrOfType<IntegerAttr>(i, zero::kStateOfAttrName);
      if (of && of.getInt() >= 0 && of.getInt() < fn.getNumArguments() &&
          zero::isHostArgument(fn, of.getInt()) && !zero::inHostMemory(value))
        results.push_back({ret, unsigned(i)});
    }
  });
  return results;
}

/// Whether `buffer` is a fresh allocation that only copies write and
/// nothing else touches but `ret`, once: it can be host memory itself.
bool onlyCopiedInto(Value buffer, func::ReturnOp ret) {
  if (!buffer.getDefiningOp<memref::AllocOp>())
    return false;
  unsigned returned = 0;
  for (OpOperand &use : buffer.getUses()) {
    if (use.getOwner() == ret.getOperation()) {
      ++returned;
      continue;
    }
    auto copy = dyn_cast<memref::CopyOp>(use.getOwner());
    if (!copy || copy.getTarget() != buffer)
      return false;
  }
  return returned == 1;
}

/// `alloc` as a `zero.host_alloc`.
void placeInHostMemory(memref::AllocOp alloc) {
  OpBuilder b(alloc);
  auto host = zero::HostAllocOp::create(b, alloc.getLoc(), alloc.getType());
  alloc.replaceAllUsesWith(host.getResult());
  alloc.erase();
}

/// The host argument whose next value result `i` of `fn` is, where the
/// result can be copied into it: of the result's type, donated to no other
/// result, and returned nowhere else. Null otherwise.
BlockArgument argumentToCopyInto(func::FuncOp fn, func::ReturnOp ret,
                                 unsigned i) {
  auto of = fn.getResultAttrOfType<IntegerAttr>(i, zero::kStateOfAttrName);
  BlockArgument argument = fn.getArgument(of.getInt());
  if (argument.getType() != fn.getResultTypes()[i] ||
      fn.getArgAttr(argument.getArgNumber(), zero::kAliasingOutputAttrName) ||
      llvm::is_contained(ret.getOperands(), argument))
    return {};
  return argument;
}

/// The last op of `copy`'s block before it, but for those in `skipped`,
/// that touches a view of what `copy` reads; null when none does.
Operation *lastTouchOfSource(memref::CopyOp copy,
                             const llvm::DenseSet<Operation *> &skipped) {
  Block *block = copy->getBlock();
  Operation *last = nullptr;
  SmallVector<Value> views = {zero::bufferOrigin(copy.getSource())};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (isa<ViewLikeOpInterface>(user))
        llvm::append_range(views, user->getResults());
      Operation *op = block->findAncestorOpInBlock(*user);
      if (op && !skipped.contains(op) && op->isBeforeInBlock(copy) &&
          (!last || last->isBeforeInBlock(op)))
        last = op;
    }
  }
  return last;
}

/// The free of `copy`'s source just after it, as placeHostStateResults
/// makes one where the function owns the source; null where none is.
memref::DeallocOp freeOfSource(memref::CopyOp copy) {
  auto free = dyn_cast_or_null<memref::DeallocOp>(copy->getNextNode());
  return free && free.getMemref() == copy.getSource() ? free
                                                      : memref::DeallocOp();
}

/// Puts the copies of results that placeHostStateResults made before each
/// return (each with the free of its source just after it, where it has
/// one) in the order their sources are made. The rank's host queue keeps
/// its work in order, so a copy whose source the backward pass makes last
/// (the first layer's gradient shard, the first result) would hold every
/// copy after it to the step's end: in this order each can go down as its
/// source is ready.
void orderByReadiness(ArrayRef<memref::CopyOp> copies) {
  llvm::DenseSet<Operation *> placed;
  for (memref::CopyOp copy : copies) {
    placed.insert(copy);
    if (memref::DeallocOp free = freeOfSource(copy))
      placed.insert(free);
  }
  SmallVector<std::pair<Operation *, memref::CopyOp>> ready;
  for (memref::CopyOp copy : copies)
    ready.push_back({lastTouchOfSource(copy, placed), copy});
  llvm::stable_sort(ready, [](auto &a, auto &b) {
    return a.first != b.first &&
           (!a.first || (b.first && a.first->isBeforeInBlock(b.first)));
  });
  for (auto [source, copy] : ready) {
    Operation *ret = copy->getBlock()->getTerminator();
    memref::DeallocOp free = freeOfSource(copy);
    copy->moveBefore(ret);
    if (free)
      free->moveBefore(ret);
  }
}

/// Puts each of `results` in host memory: a buffer only copies write is
/// allocated there; any other (a collective's output, which NCCL writes on
/// the device; a delayed update's gradient shard) is copied there before
/// the return, and its device buffer freed when the function owns it.
/// The copy goes into the argument the result is the next value of, which
/// is donated to it, where it can (argumentToCopyInto): the step then
/// takes no pinned memory for it. The queue keeps that copy after the ops
/// that read the argument's old value (the delayed update's host loops).
/// Returns those copies, which the rank's host queue can make as soon as
/// their buffers are written.
SmallVector<memref::CopyOp>
placeHostStateResults(func::FuncOp fn,
                      ArrayRef<std::pair<func::ReturnOp, unsigned>> results) {
  SmallVector<memref::CopyOp> copies;
  for (auto [ret, i] : results) {
    Value value = ret.getOperand(i);
    auto type = cast<MemRefType>(fn.getResultTypes()[i]);
    if (onlyCopiedInto(value, ret)) {
      placeInHostMemory(value.getDefiningOp<memref::AllocOp>());
      continue;
    }
    OpBuilder b(ret);
    Location loc = ret.getLoc();
    Value host = argumentToCopyInto(fn, ret, i);
    if (host)
      fn.setArgAttr(cast<BlockArgument>(host).getArgNumber(),
                    zero::kAliasingOutputAttrName, b.getI64IntegerAttr(i));
    else
      host = zero::HostAllocOp::create(b, loc, type);
    copies.push_back(memref::CopyOp::create(b, loc, value, host));
    bool owned = value.getDefiningOp<memref::AllocOp>() &&
                 llvm::count(ret.getOperands(), value) == 1;
    if (owned)
      memref::DeallocOp::create(b, loc, value);
    ret.setOperand(i, host);
  }
  orderByReadiness(copies);
  return copies;
}

/// The value `index` scales: `index` is `base * stride + offset` with
/// constant stride and offset, which it sets (stride 1 and offset 0 where
/// there is nothing to take off). Null where an add has no constant term.
Value scaledIndexBase(Value index, int64_t &stride, int64_t &offset) {
  offset = 0;
  stride = 1;
  APInt constant;
  // The operand of `binary` beside a constant one, which it sets; null
  // where neither is constant.
  auto besideConstant = [&](auto binary) -> Value {
    if (matchPattern(binary.getRhs(), m_ConstantInt(&constant)))
      return binary.getLhs();
    if (matchPattern(binary.getLhs(), m_ConstantInt(&constant)))
      return binary.getRhs();
    return {};
  };
  if (auto add = index.getDefiningOp<arith::AddIOp>()) {
    index = besideConstant(add);
    if (!index)
      return {};
    offset = constant.getSExtValue();
  }
  if (auto mul = index.getDefiningOp<arith::MulIOp>()) {
    if (Value scaled = besideConstant(mul)) {
      index = scaled;
      stride = constant.getSExtValue();
    }
  }
  return index;
}

/// Whether `index` is `iv * stride + offset` with constant stride and
/// offset; sets them.
bool matchIterationIndex(Value index, Value iv, int64_t &stride,
                         int64_t &offset) {
  return scaledIndexBase(index, stride, offset) == iv;
}

/// The iterations of `loop` (from 0 by 1 to a constant), or 0.
int64_t constantIterations(scf::ForOp loop) {
  std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lower || !upper || !step || *lower != 0 || *step != 1 || *upper <= 0)
    return 0;
  return *upper;
}

/// The index of a one-dimensional load or store (scalar or vector) and the
/// elements it touches from there; None for any other op.
std::optional<std::pair<Value, int64_t>> accessedIndex(Operation *op) {
  ValueRange indices;
  int64_t width = 1;
  if (auto load = dyn_cast<memref::LoadOp>(op))
    indices = load.getIndices();
  else if (auto store = dyn_cast<memref::StoreOp>(op))
    indices = store.getIndices();
  else if (auto load = dyn_cast<vector::LoadOp>(op)) {
    indices = load.getIndices();
    width = load.getVectorType().getNumElements();
  } else if (auto store = dyn_cast<vector::StoreOp>(op)) {
    indices = store.getIndices();
    width = store.getVectorType().getNumElements();
  } else {
    return std::nullopt;
  }
  if (indices.size() != 1)
    return std::nullopt;
  return std::make_pair(indices.front(), width);
}

/// How many elements of `host` (a staging buffer of `loop`, or host state a
/// kernel computes from) each iteration has: iteration i touches only
/// elements [i * per, (i + 1) * per), and nothing else uses it but its
/// copy, its free and the function's return, which follows the rank's wait
/// for its queue. 0 when it is not so.
int64_t elementsPerIteration(scf::ForOp loop, Value host) {
  auto type = cast<MemRefType>(host.getType());
  int64_t iterations = constantIterations(loop);
  if (iterations == 0 || type.getRank() != 1 ||
      !type.getLayout().isIdentity() || !type.hasStaticShape() ||
      type.getNumElements() % iterations != 0)
    return 0;
  int64_t per = type.getNumElements() / iterations;
  for (OpOperand &use : host.getUses()) {
    Operation *user = use.getOwner();
    if (!loop->isProperAncestor(user)) {
      if (!isa<memref::CopyOp, memref::DeallocOp, func::ReturnOp>(user))
        return 0;
      continue;
    }
    std::optional<std::pair<Value, int64_t>> access = accessedIndex(user);
    int64_t stride, offset;
    if (!access ||
        !matchIterationIndex(access->first, loop.getInductionVar(), stride,
                             offset) ||
        stride != per || offset < 0 || offset + access->second > per)
      return 0;
  }
  return per;
}

/// matchIterationIndex for `iv` or for `iv - c` in its place (a constant
/// c, set in `shift`, 0 for `iv` itself: the branch of a nest that runs
/// several updates, one a range of its iterations).
bool matchShiftedIterationIndex(Value index, Value iv, int64_t &stride,
                                int64_t &offset, int64_t &shift) {
  shift = 0;
  Value base = scaledIndexBase(index, stride, offset);
  if (base == iv)
    return true;
  auto shifted = base ? base.getDefiningOp<arith::SubIOp>() : nullptr;
  APInt constant;
  if (!shifted || shifted.getLhs() != iv ||
      !matchPattern(shifted.getRhs(), m_ConstantInt(&constant)))
    return false;
  shift = constant.getSExtValue();
  return true;
}

/// Whether `nest` can read `in` and write `out` (device buffers it only
/// reads and only writes) through one host buffer: they are contiguous, of
/// one shape, and iteration i of the one-level nest loads `in` and stores
/// `out` only at elements [(i - c) * s, (i - c + 1) * s), one constant c and
/// s for every access, in one block, every load before every store. Then no
/// element is written before it is read, in any order of the iterations and
/// chunk by chunk.
bool canShareStaging(scf::ParallelOp nest, Value in, Value out) {
  auto inType = cast<MemRefType>(in.getType()),
       outType = cast<MemRefType>(out.getType());
  if (nest.getNumLoops() != 1 || inType.getShape() != outType.getShape() ||
      inType.getElementType() != outType.getElementType() ||
      !memref::isStaticShapeAndContiguousRowMajor(inType) ||
      !memref::isStaticShapeAndContiguousRowMajor(outType))
    return false;
  Value iv = nest.getInductionVars().front();
  Block *block = nullptr;
  Operation *lastLoad = nullptr, *firstStore = nullptr;
  // Every access's stride and shift: one range of elements an iteration.
  std::optional<std::pair<int64_t, int64_t>> range;
  auto fits = [&](Operation *user, bool load) {
    bool isLoad = isa<memref::LoadOp, vector::LoadOp>(user);
    std::optional<std::pair<Value, int64_t>> access = accessedIndex(user);
    int64_t stride, offset, shift;
    if (isLoad != load || !access ||
        !matchShiftedIterationIndex(access->first, iv, stride, offset, shift) ||
        offset < 0 || offset + access->second > stride ||
        (range && *range != std::make_pair(stride, shift)) ||
        (block && user->getBlock() != block))
      return false;
    range = std::make_pair(stride, shift);
    block = user->getBlock();
    if (load && (!lastLoad || lastLoad->isBeforeInBlock(user)))
      lastLoad = user;
    if (!load && (!firstStore || user->isBeforeInBlock(firstStore)))
      firstStore = user;
    return true;
  };
  for (auto [buffer, load] : {std::make_pair(in, true), {out, false}})
    for (Operation *user : buffer.getUsers())
      if (nest->isAncestor(user) && !fits(user, load))
        return false;
  return lastLoad && firstStore && lastLoad->isBeforeInBlock(firstStore);
}

/// `loop` with its copies in and out, as one `scf.execute_region` marked
/// for the queue, when the loop runs a constant number of iterations: the
/// queue copies and updates it in chunks, a copy whose host buffer splits
/// by the iterations chunk by chunk, any other (a scalar, a fused bucket's
/// buffer) whole, before the first chunk (in) or after the last (out).
/// Null, with nothing changed, otherwise.
scf::ExecuteRegionOp groupUpdate(scf::ForOp loop, ArrayRef<memref::CopyOp> in,
                                 ArrayRef<memref::CopyOp> out) {
  if ((in.empty() && out.empty()) || !constantIterations(loop))
    return {};
  // In chunks, a copy out of chunk k goes before a copy in of chunk k + 2:
  // no copy out may write what another copy reads or writes, but for the
  // copy in of its own staging buffer (the same elements, chunk by chunk).
  auto root = [](Value buffer) { return zero::bufferOrigin(buffer); };
  for (unsigned i = 0; i < out.size(); ++i) {
    memref::CopyOp copy = out[i];
    for (memref::CopyOp reader : in)
      if (root(reader.getSource()) == root(copy.getTarget()) &&
          (reader.getSource() != copy.getTarget() ||
           reader.getTarget() != copy.getSource()))
        return {};
    for (memref::CopyOp other : out.drop_front(i + 1))
      if (root(other.getTarget()) == root(copy.getTarget()))
        return {};
  }
  OpBuilder b(loop);
  auto group = scf::ExecuteRegionOp::create(b, loop.getLoc(), TypeRange{});
  group->setAttr(zero::kQueuedAttrName, b.getUnitAttr());
  Block *body = b.createBlock(&group.getRegion());
  scf::YieldOp::create(b, loop.getLoc());
  // The copies in wait for what makes their sources (a kernel gathering a
  // view's rows), the copies out come before what reads their targets: in
  // the group they sit next to the loop, so both still hold.
  for (memref::CopyOp copy : in)
    copy->moveBefore(body->getTerminator());
  loop->moveBefore(body->getTerminator());
  for (memref::CopyOp copy : out)
    copy->moveBefore(body->getTerminator());
  return group;
}

/// Bytes `loop`'s body loads and stores an iteration: each load and store,
/// scalar or vector, as many times as the loops it is in inside the body run
/// (once where their bounds are not constant).
int64_t hostBytesPerIteration(scf::ForOp loop) {
  auto times = [&](Operation *op) {
    int64_t count = 1;
    for (auto inner = op->getParentOfType<scf::ForOp>(); inner != loop;
         inner = inner->getParentOfType<scf::ForOp>())
      if (std::optional<APInt> trips = inner.getStaticTripCount())
        count *= std::max<int64_t>(trips->getSExtValue(), 1);
    return count;
  };
  int64_t bytes = 0;
  loop.getBody()->walk([&](Operation *op) {
    Type accessed;
    if (auto load = dyn_cast<memref::LoadOp>(op))
      accessed = load.getType();
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      accessed = store.getValueToStore().getType();
    else if (auto load = dyn_cast<vector::LoadOp>(op))
      accessed = load.getVectorType();
    else if (auto store = dyn_cast<vector::StoreOp>(op))
      accessed = store.getVectorType();
    else
      return;
    int64_t elements = 1;
    if (auto vector = dyn_cast<VectorType>(accessed)) {
      elements = vector.getNumElements();
      accessed = vector.getElementType();
    }
    bytes += times(op) * elements * zero::elementBytes(accessed);
  });
  return bytes;
}

/// Whether `host`, copied out by `copyOut` of a queued update whose loop is
/// `loop`, is a staging buffer that the queue can take when it runs the
/// update (zero_rt_host_queue_update's `staged`): the rank's own
/// `zero.host_alloc staging`, of static shape, which the queue frees
/// (kStagingAttrName) and nothing but the loop and that copy uses. A
/// buffer that is copied in too stays the rank's: a GPU starts those
/// copies when the rank queues the update.
bool queueCanTake(Value host, scf::ForOp loop, memref::CopyOp copyOut) {
  auto alloc = host.getDefiningOp<zero::HostAllocOp>();
  if (!alloc || !alloc.getStaging() || !alloc.getType().hasStaticShape() ||
      !alloc.getType().getLayout().isIdentity())
    return false;
  bool readByLoop = false;
  for (Operation *user : host.getUsers()) {
    if (user == copyOut.getOperation() ||
        (isa<memref::DeallocOp>(user) && user->hasAttr(zero::kStagingAttrName)))
      continue;
    if (!loop->isAncestor(user))
      return false;
    readByLoop = true;
  }
  return readByLoop;
}

/// Replaces the queued `group` (groupUpdate's) by a call of
/// zero_rt_host_queue_update, with the loop its task and each copy a
/// triple (to, from, bytes per iteration, or its bytes negated where it is
/// copied whole) on the function's stack and the
/// chunks the queue's model chooses by `costs` (`chunks`); a group the queue
/// gave up (it runs after a wait) by its ops, in place. The staging buffers the
/// queue can take (queueCanTake) go as the call's `staged` triples (bytes,
/// context slot, copy) instead of the rank's allocations; `taken` counts them.
/// Returns whether it made the call.
bool lowerUpdate(scf::ExecuteRegionOp group, func::FuncOp fn, unsigned index,
                 const zero::CostModelParameters &costs, int64_t &chunks,
                 unsigned &taken) {
  Block &body = group.getRegion().front();
  scf::ForOp loop;
  SmallVector<memref::CopyOp> in, out;
  for (Operation &op : body.without_terminator()) {
    if (auto found = dyn_cast<scf::ForOp>(op))
      loop = found;
    else
      (loop ? out : in).push_back(cast<memref::CopyOp>(op));
  }
  if (!group->hasAttr(zero::kQueuedAttrName)) {
    for (Operation &op : llvm::make_early_inc_range(body.without_terminator()))
      op.moveBefore(group);
    group.erase();
    return false;
  }
  // Each copy's bytes an iteration, or its whole bytes negated where its
  // host buffer does not split by the iterations (the runtime's table),
  // before the task's context uses the buffers too.
  SmallVector<int64_t> bytes;
  int64_t iterations = constantIterations(loop);
  int64_t copiedIn = 0, copiedOut = 0;
  for (auto [i, copy] :
       llvm::enumerate(llvm::concat<memref::CopyOp>(in, out))) {
    Value host = i < in.size() ? copy.getTarget() : copy.getSource();
    auto type = cast<MemRefType>(host.getType());
    int64_t elementBytes = zero::elementBytes(type.getElementType());
    int64_t per = elementsPerIteration(loop, host);
    bytes.push_back(per ? per * elementBytes
                        : -type.getNumElements() * elementBytes);
    // The chunks' cost: what is copied whole costs the same however many.
    (i < in.size() ? copiedIn : copiedOut) += per * elementBytes * iterations;
  }
  chunks = zero::chooseHostChunks(
      costs, {copiedIn, hostBytesPerIteration(loop) * iterations, copiedOut},
      iterations);
  // The runtime's measure of a chunk: its bytes of copies.
  int64_t chunkBytes =
      chunks > 1 ? (copiedIn + copiedOut + chunks - 1) / chunks : 0;
  // The staging the queue takes: each buffer's copy (its index in the
  // table) and bytes.
  SmallVector<std::pair<Value, int64_t>> staged;
  for (auto [j, copy] : llvm::enumerate(out))
    if (queueCanTake(copy.getSource(), loop, copy))
      staged.push_back({copy.getSource(), int64_t(in.size() + j)});
  loop->moveBefore(group);
  std::optional<zero::HostTask> task = zero::outlineTask(loop, fn, index);
  assert(task && "grouped only where every loop is a task");
  OpBuilder b(loop);
  Location loc = group.getLoc();
  MLIRContext *context = fn.getContext();
  zero::RuntimeCallBuilder calls(fn->getParentOfType<ModuleOp>());
  Type i64 = IntegerType::get(context, 64);
  Type pointer = calls.pointerType();
  OpBuilder entry = OpBuilder::atBlockBegin(&fn.getFunctionBody().front());
  int64_t copies = in.size() + out.size();
  Value table = LLVM::AllocaOp::create(
      entry, loc, pointer, i64,
      LLVM::ConstantOp::create(entry, loc, i64, 3 * copies));
  // Stores `value` into 64-bit slot `slot` of the stack array `array`.
  auto store = [&](Value array, Value value, int64_t slot) {
    Value address =
        LLVM::GEPOp::create(b, loc, pointer, i64, array,
                            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(slot)});
    LLVM::StoreOp::create(b, loc, value, address);
  };
  for (auto [i, copy] :
       llvm::enumerate(llvm::concat<memref::CopyOp>(in, out))) {
    store(table, calls.pointerTo(b, loc, copy.getTarget()), 3 * i);
    store(table, calls.pointerTo(b, loc, copy.getSource()), 3 * i + 1);
    store(table, LLVM::ConstantOp::create(b, loc, i64, bytes[i]), 3 * i + 2);
  }
  Value stagedTable;
  if (staged.empty()) {
    stagedTable = LLVM::ZeroOp::create(b, loc, pointer);
  } else {
    stagedTable = LLVM::AllocaOp::create(
        entry, loc, pointer, i64,
        LLVM::ConstantOp::create(entry, loc, i64, 3 * staged.size()));
    for (auto [k, buffer] : llvm::enumerate(staged)) {
      auto [host, copy] = buffer;
      auto type = cast<MemRefType>(host.getType());
      int64_t values[] = {type.getNumElements() *
                              zero::elementBytes(type.getElementType()),
                          task->slots.lookup(host), copy};
      for (auto [field, value] : llvm::enumerate(values))
        store(stagedTable, LLVM::ConstantOp::create(b, loc, i64, value),
              3 * k + field);
    }
  }
  func::CallOp::create(
      b, loc,
      calls.declare(b, zero::RuntimeFunction::zero_rt_host_queue_update),
      ValueRange{
          task->task, task->context, task->contextBytes, task->iterations,
          table, arith::ConstantIntOp::create(b, loc, i64, in.size()),
          arith::ConstantIntOp::create(b, loc, i64, out.size()),
          arith::ConstantIntOp::create(b, loc, i64, chunkBytes), stagedTable,
          arith::ConstantIntOp::create(b, loc, i64, staged.size())});
  loop.erase();
  group.erase();
  // The rank no longer takes or frees what the queue takes: where it
  // wrote the buffer's address into the context and the table, it writes
  // 0, which the queue overwrites.
  for (Value host : llvm::make_first_range(staged)) {
    for (Operation *user : llvm::make_early_inc_range(host.getUsers())) {
      // queueCanTake left the loop, the copy and the free; the loop and the
      // copy are gone, and the context and the table take the address.
      assert((isa<memref::ExtractAlignedPointerAsIndexOp, memref::DeallocOp>(
                 user)) &&
             "a staged buffer is used only by its update and its free");
      if (auto address =
              dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        OpBuilder at(address);
        address.replaceAllUsesWith(
            arith::ConstantIndexOp::create(at, address.getLoc(), 0)
                .getResult());
      }
      user->erase();
    }
    host.getDefiningOp()->erase();
  }
  taken += staged.size();
  return true;
}

//===----------------------------------------------------------------------===//
// Temporaries the device computes from the host's new state
//===----------------------------------------------------------------------===//

/// Ops a kernel may compute in place of the host: float arithmetic that
/// rounds alike on both (kernels neither contract a multiply and an add nor
/// approximate a square root: zero-gpu-ieee-sqrt).
bool isRecomputable(Operation *op) {
  return isa<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
             arith::NegFOp, arith::ConstantOp, math::SqrtOp>(op) &&
         op->getNumResults() == 1 && isMemoryEffectFree(op);
}

/// How deep a recomputed expression may be.
constexpr unsigned kMaxRecomputeDepth = 32;

/// Collects into `chain` (operands before users) the ops that compute
/// `value` from `leaf` and from values defined outside `nest`. False when
/// `value` needs anything else: a load, the loop's index, another op.
bool collectChain(Value value, Value leaf, Operation *nest,
                  llvm::SetVector<Operation *> &chain, unsigned depth = 0) {
  if (value == leaf || definedOutside(value, nest))
    return true;
  Operation *def = value.getDefiningOp();
  if (!def || depth > kMaxRecomputeDepth || !isRecomputable(def))
    return false;
  for (Value operand : def->getOperands())
    if (!collectChain(operand, leaf, nest, chain, depth + 1))
      return false;
  chain.insert(def);
  return true;
}

/// Whether `a` is of `leafA` what `b` is of `leafB`: the same ops with the
/// same attributes on the same outside values.
bool sameFunction(Value a, Value leafA, Value b, Value leafB, Operation *nest,
                  unsigned depth = 0) {
  if (a == leafA || b == leafB)
    return a == leafA && b == leafB;
  if (definedOutside(a, nest) || definedOutside(b, nest))
    return a == b;
  Operation *defA = a.getDefiningOp(), *defB = b.getDefiningOp();
  if (!defA || !defB || depth > kMaxRecomputeDepth ||
      !OperationEquivalence::isEquivalentTo(
          defA, defB, OperationEquivalence::ignoreValueEquivalence, nullptr,
          OperationEquivalence::IgnoreLocations))
    return false;
  for (auto [x, y] : llvm::zip(defA->getOperands(), defB->getOperands()))
    if (!sameFunction(x, leafA, y, leafB, nest, depth + 1))
      return false;
  return true;
}

/// A device temporary that a host nest writes only as f(u), where u is what
/// the nest stores in host memory at the same index: the new state (AdamW's
/// bias-corrected moments are f of the new moments). The queue copies u up
/// into the temporary instead, and each kernel that reads it computes f: the
/// host loop stores less, and the temporary needs no host copy.
struct DeviceRecompute {
  scf::ParallelOp nest;
  /// The temporary, the host buffer holding u, and the nest's store of f(u).
  Value device, host;
  Operation *store;
  /// f: the ops from `leaf` (a scalar u) to `result`, operands first.
  SmallVector<Operation *> chain;
  Value leaf, result;
  /// The loads of the temporary, each in a kernel's nest.
  SmallVector<Operation *> loads;
};

/// The value `store` stores and the buffer and indices it stores at, for a
/// scalar or vector store.
struct StoreParts {
  Value value, buffer;
  ValueRange indices;
};

std::optional<StoreParts> partsOf(Operation *op) {
  if (auto store = dyn_cast<memref::StoreOp>(op))
    return StoreParts{store.getValueToStore(), store.getMemRef(),
                      store.getIndices()};
  if (auto store = dyn_cast<vector::StoreOp>(op))
    if (store.getVectorType().getRank() == 1)
      return StoreParts{store.getValueToStore(), store.getBase(),
                        store.getIndices()};
  return std::nullopt;
}

/// Matches f for `recompute`: `stored` is f(`u`) for a scalar, or for
/// vectors each lane of `stored` (built by vector.from_elements) the same f
/// of the same lane of `u`.
bool matchFunction(Value stored, Value u, DeviceRecompute &recompute) {
  Operation *nest = recompute.nest;
  auto lanesOf = [](Value v) -> std::optional<OperandRange> {
    if (auto lanes = v.getDefiningOp<vector::FromElementsOp>())
      return lanes.getElements();
    return std::nullopt;
  };
  Value result = stored, leaf = u;
  if (isa<VectorType>(stored.getType())) {
    std::optional<OperandRange> storedLanes = lanesOf(stored),
                                uLanes = lanesOf(u);
    if (!storedLanes || !uLanes || storedLanes->size() != uLanes->size())
      return false;
    result = (*storedLanes)[0];
    leaf = (*uLanes)[0];
    for (auto [s, l] : llvm::zip(*storedLanes, *uLanes))
      if (!sameFunction(s, l, result, leaf, nest))
        return false;
  }
  llvm::SetVector<Operation *> chain;
  if (!collectChain(result, leaf, nest, chain))
    return false;
  recompute.chain.assign(chain.begin(), chain.end());
  recompute.leaf = leaf;
  recompute.result = result;
  return true;
}

/// Whether the only write of `buffer` in the function is `store`, and its
/// other uses only read it (or return it).
bool onlyWrittenBy(Value buffer, Operation *store) {
  for (Operation *user : buffer.getUsers())
    if (user != store &&
        !isa<memref::LoadOp, vector::LoadOp, func::ReturnOp>(user))
      return false;
  return true;
}

/// The device temporaries of `hostNests` that kernels can compute from host
/// state (DeviceRecompute), with every check made: nothing is changed.
SmallVector<DeviceRecompute>
findDeviceRecomputes(func::FuncOp fn, ArrayRef<scf::ParallelOp> hostNests) {
  DominanceInfo dominance(fn);
  SmallVector<DeviceRecompute> found;
  for (scf::ParallelOp nest : hostNests) {
    for (Value buffer : outsideBuffers(nest)) {
      auto alloc = buffer.getDefiningOp<memref::AllocOp>();
      if (!alloc || zero::inHostMemory(buffer))
        continue;
      // Written by one store of the nest, read only by loads in kernels.
      DeviceRecompute recompute{nest, buffer, Value(), nullptr, {}, {}, {}, {}};
      bool usable = true;
      for (Operation *user : buffer.getUsers()) {
        if (isa<memref::DeallocOp>(user))
          continue;
        bool inNest = nest->isAncestor(user);
        // A scalar or a vector of one dimension, which f takes lane by lane.
        auto vectorLoad = dyn_cast<vector::LoadOp>(user);
        bool load = isa<memref::LoadOp>(user) ||
                    (vectorLoad && vectorLoad.getVectorType().getRank() == 1);
        std::optional<StoreParts> store = partsOf(user);
        if (inNest && !load && !recompute.store && store &&
            store->buffer == buffer) {
          recompute.store = user;
          continue;
        }
        if (!inNest && load && user->getParentOfType<scf::ParallelOp>() &&
            !llvm::any_of(hostNests, [&](scf::ParallelOp host) {
              return host->isAncestor(user);
            })) {
          recompute.loads.push_back(user);
          continue;
        }
        usable = false;
      }
      if (!usable || !recompute.store || recompute.loads.empty())
        continue;
      // The host store beside it, at the same index, of the u it is f of.
      StoreParts stored = *partsOf(recompute.store);
      auto deviceType = cast<MemRefType>(buffer.getType());
      for (Operation &other : *recompute.store->getBlock()) {
        std::optional<StoreParts> candidate = partsOf(&other);
        if (!candidate || &other == recompute.store ||
            !zero::inHostMemory(candidate->buffer) ||
            candidate->value.getType() != stored.value.getType() ||
            candidate->indices != stored.indices)
          continue;
        auto hostType = dyn_cast<MemRefType>(candidate->buffer.getType());
        if (!hostType || hostType.getShape() != deviceType.getShape() ||
            hostType.getElementType() != deviceType.getElementType() ||
            !onlyWrittenBy(candidate->buffer, &other) ||
            !matchFunction(stored.value, candidate->value, recompute))
          continue;
        recompute.host = candidate->buffer;
        break;
      }
      if (!recompute.host)
        continue;
      // The kernels must see the outside values f uses.
      bool visible = llvm::all_of(recompute.chain, [&](Operation *op) {
        return llvm::all_of(op->getOperands(), [&](Value operand) {
          return operand == recompute.leaf ||
                 llvm::is_contained(recompute.chain, operand.getDefiningOp()) ||
                 llvm::all_of(recompute.loads, [&](Operation *load) {
                   return dominance.properlyDominates(operand, load);
                 });
        });
      });
      if (visible)
        found.push_back(std::move(recompute));
    }
  }
  return found;
}

/// f of `x` (a scalar), made at `b`.
Value applyFunction(OpBuilder &b, const DeviceRecompute &recompute, Value x) {
  IRMapping map;
  map.map(recompute.leaf, x);
  for (Operation *op : recompute.chain)
    b.clone(*op, map);
  return map.lookupOrDefault(recompute.result);
}

/// Erases `op` and what only it used, while each is a pure op inside `nest`
/// that nothing else uses.
void eraseUnused(Operation *op, Operation *nest) {
  SmallVector<Operation *> worklist{op};
  while (!worklist.empty()) {
    Operation *dead = worklist.pop_back_val();
    if (!dead || !dead->use_empty() || !isMemoryEffectFree(dead) ||
        !nest->isProperAncestor(dead))
      continue;
    SmallVector<Value> operands(dead->getOperands());
    dead->erase();
    for (Value operand : operands)
      worklist.push_back(operand.getDefiningOp());
  }
}

/// Rewrites `recompute`: each kernel's load of the temporary is followed by
/// f, lane by lane; the host nest no longer stores f(u); and a copy of u
/// from host memory into the temporary, after the nest, is returned for
/// the nest's copies out.
memref::CopyOp rewriteDeviceRecompute(const DeviceRecompute &recompute) {
  for (Operation *load : recompute.loads) {
    Value loaded = load->getResult(0);
    SmallVector<OpOperand *> uses =
        llvm::to_vector(llvm::make_pointer_range(loaded.getUses()));
    OpBuilder b(load->getContext());
    b.setInsertionPointAfter(load);
    Location loc = load->getLoc();
    Value computed;
    if (auto vectorType = dyn_cast<VectorType>(loaded.getType())) {
      SmallVector<Value> lanes;
      for (int64_t lane = 0; lane < vectorType.getNumElements(); ++lane)
        lanes.push_back(applyFunction(
            b, recompute, vector::ExtractOp::create(b, loc, loaded, lane)));
      computed = vector::FromElementsOp::create(b, loc, vectorType, lanes);
    } else {
      computed = applyFunction(b, recompute, loaded);
    }
    for (OpOperand *use : uses)
      use->set(computed);
  }
  Value stored = partsOf(recompute.store)->value;
  Operation *nest = recompute.nest;
  recompute.store->erase();
  eraseUnused(stored.getDefiningOp(), nest);
  OpBuilder after(nest->getContext());
  after.setInsertionPointAfter(nest);
  return memref::CopyOp::create(after, nest->getLoc(), recompute.host,
                                recompute.device);
}

/// A temporary that several host nests write and kernels then only read
/// (a sum's accumulator, which the host's loop starts and the host's sum
/// finishes, that a kernel copies into a collective's buffer): one host
/// buffer stands in for it in each of those nests, copied up once after the
/// last of them, not down and up again between them.
struct SharedStaging {
  memref::AllocOp alloc;
  SmallVector<scf::ParallelOp> nests; // the host nests that use it, in order
};

/// `alloc`'s SharedStaging, where each of its uses is a free, a host nest's
/// or, after every such nest, a kernel's read, directly of the buffer, and
/// two host nests or more use it.
std::optional<SharedStaging>
sharedStaging(memref::AllocOp alloc, ArrayRef<scf::ParallelOp> hostNests) {
  MemRefType type = alloc.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return std::nullopt;
  Block *block = alloc->getBlock();
  SmallVector<scf::ParallelOp> host;
  SmallVector<Operation *> kernels;
  for (Operation *user : alloc->getUsers()) {
    if (isa<memref::DeallocOp>(user))
      continue;
    Operation *top = block->findAncestorOpInBlock(*user);
    auto nest = dyn_cast_or_null<scf::ParallelOp>(top);
    if (!nest || isa<ViewLikeOpInterface>(user) ||
        !isa<MemoryEffectOpInterface>(user))
      return std::nullopt;
    if (llvm::is_contained(hostNests, nest)) {
      if (!llvm::is_contained(host, nest))
        host.push_back(nest);
      continue;
    }
    Operation *other = nullptr;
    if (accesses(nest, alloc.getResult(), /*read=*/false, other) || other)
      return std::nullopt;
    kernels.push_back(nest);
  }
  if (host.size() < 2)
    return std::nullopt;
  llvm::sort(host, [](scf::ParallelOp a, scf::ParallelOp b) {
    return a->isBeforeInBlock(b);
  });
  for (Operation *kernel : kernels)
    if (kernel->isBeforeInBlock(host.back()))
      return std::nullopt;
  return SharedStaging{alloc, std::move(host)};
}

/// Rewrites `shared`: a host buffer in place of the temporary in its host
/// nests, made before the first, and after the last the copy up (which it
/// returns, for that nest's copies out) and the host buffer's free.
memref::CopyOp rewriteSharedStaging(SharedStaging &shared) {
  memref::AllocOp alloc = shared.alloc;
  OpBuilder b(shared.nests.front());
  Location loc = alloc.getLoc();
  Value host = zero::HostAllocOp::create(b, loc, alloc.getType());
  alloc.getResult().replaceUsesWithIf(host, [&](OpOperand &use) {
    return llvm::any_of(shared.nests, [&](scf::ParallelOp nest) {
      return nest->isAncestor(use.getOwner());
    });
  });
  b.setInsertionPointAfter(shared.nests.back());
  auto copy = memref::CopyOp::create(b, loc, host, alloc.getResult());
  memref::DeallocOp::create(b, loc, host);
  return copy;
}

/// Whether `copy` uploads from host memory into a device temporary that
/// only kernels (loop nests that are not among `hostNests`) read, through
/// views or not, and that nothing else uses but its frees: LAMB's update
/// direction, which the weight's kernel reads once its norms are gathered,
/// or AdamW's bias-corrected moments that a kernel computes from the new
/// host state.
bool uploadsForKernelsOnly(memref::CopyOp copy,
                           ArrayRef<scf::ParallelOp> hostNests) {
  auto alloc = copy.getTarget().getDefiningOp<memref::AllocOp>();
  if (!alloc || alloc->getBlock() != copy->getBlock() ||
      !zero::inHostMemory(copy.getSource()))
    return false;
  std::function<bool(Value)> onlyKernelsRead = [&](Value buffer) {
    for (Operation *user : buffer.getUsers()) {
      if (user == copy || isa<memref::DeallocOp>(user))
        continue;
      if (isa<ViewLikeOpInterface>(user)) {
        if (!llvm::all_of(user->getResults(), onlyKernelsRead))
          return false;
        continue;
      }
      auto kernel = user->getParentOfType<scf::ParallelOp>();
      while (kernel && kernel->getParentOfType<scf::ParallelOp>())
        kernel = kernel->getParentOfType<scf::ParallelOp>();
      if (!kernel || llvm::is_contained(hostNests, kernel))
        return false;
      Operation *other = nullptr;
      if (accesses(kernel, buffer, /*read=*/false, other) || other)
        return false;
    }
    return true;
  };
  return onlyKernelsRead(alloc.getResult());
}

/// Moves each device allocation of `fn`, with the views of it that its
/// block makes, down to just before the first op of the block that uses
/// them, so that the buffer is taken where the rank first needs it. Every
/// position is the block's order before any move (an allocation or a view
/// is never another one's first use), so that no move makes the next one
/// number the block again.
void sinkAllocations(func::FuncOp fn) {
  DenseMap<Block *, DenseMap<Operation *, unsigned>> positions;
  auto positionIn = [&](Block *block, Operation *op) {
    DenseMap<Operation *, unsigned> &order = positions[block];
    if (order.empty())
      for (Operation &each : *block)
        order.try_emplace(&each, order.size());
    return order.lookup(op);
  };
  SmallVector<memref::AllocOp> allocations;
  fn.walk([&](memref::AllocOp alloc) { allocations.push_back(alloc); });
  for (memref::AllocOp alloc : allocations) {
    Block *block = alloc->getBlock();
    llvm::SetVector<Operation *> group;
    group.insert(alloc);
    Operation *first = nullptr;
    unsigned firstPosition = 0;
    for (unsigned i = 0; i < group.size(); ++i)
      for (Operation *user : group[i]->getUsers()) {
        Operation *inBlock = block->findAncestorOpInBlock(*user);
        if (!inBlock)
          continue;
        if (inBlock == user && isa<ViewLikeOpInterface>(user) &&
            user->getNumRegions() == 0) {
          group.insert(user);
          continue;
        }
        unsigned position = positionIn(block, inBlock);
        if (!first || position < firstPosition) {
          first = inBlock;
          firstPosition = position;
        }
      }
    if (!first)
      continue;
    SmallVector<Operation *> moving;
    for (Operation *op : group)
      if (positionIn(block, op) < firstPosition)
        moving.push_back(op);
    llvm::sort(moving, [&](Operation *a, Operation *b) {
      return positionIn(block, a) < positionIn(block, b);
    });
    for (Operation *op : moving)
      op->moveBefore(first);
  }
}

/// The allocation that `buffer` is (a view of), of static shape and the
/// identity layout, that a `zero.host_alloc` can replace to put it in host
/// memory; null where there is none.
memref::AllocOp allocationToPlace(Value buffer) {
  auto alloc = zero::bufferOrigin(buffer).getDefiningOp<memref::AllocOp>();
  if (!alloc || !alloc.getType().hasStaticShape() ||
      !alloc.getType().getLayout().isIdentity() ||
      alloc.getType().getMemorySpace())
    return {};
  return alloc;
}

/// Places in host memory what `fn`'s loops carry there from step to step
/// (zero-offload-state's `zero.host_iter_args`): for each such iter_arg,
/// the buffer the body yields for it (a new allocation each step, as
/// bufferization makes it, or the iter_arg's own buffer) and the one the
/// loop starts from. That one is an allocation placed there too where the
/// iter_arg is all of it; where it is a view of part of one (a rank's shard
/// of the padded whole) or a device argument, a host buffer of the
/// iter_arg's shape takes a copy of it before a loop of at least one step,
/// and is freed after it (the loop does not own what it starts from). An
/// iter_arg whose buffers cannot be placed so stays on the device, with a
/// remark.
void placeLoopCarriedState(func::FuncOp fn) {
  fn.walk([&](scf::ForOp loop) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    std::optional<APInt> trips = loop.getStaticTripCount();
    for (unsigned k = 0; k < loop.getNumRegionIterArgs(); ++k) {
      if (!zero::isHostIterArg(loop, k))
        continue;
      Value init = loop.getInitArgs()[k], next = yield.getOperand(k);
      auto type = dyn_cast<MemRefType>(init.getType());
      memref::AllocOp nextAlloc, initAlloc;
      bool nextPlaceable = type && (zero::inHostMemory(next) ||
                                    (nextAlloc = allocationToPlace(next)));
      bool initInHost = type && zero::inHostMemory(init);
      if (type && !initInHost)
        if ((initAlloc = allocationToPlace(init)) &&
            initAlloc.getType().getNumElements() != type.getNumElements())
          initAlloc = {};
      bool copyInit = type && !initInHost && !initAlloc &&
                      type.hasStaticShape() && trips && !trips->isZero() &&
                      type.getElementType().isIntOrIndexOrFloat();
      if (!nextPlaceable || !(initInHost || initAlloc || copyInit)) {
        zero::setHostIterArg(loop, k, /*host=*/false);
        emitRemark(loop.getLoc())
            << "zero-offload-to-host: @" << fn.getName() << ": iter_arg " << k
            << " of the loop stays on the device: the buffer its body yields "
               "is not an allocation of static shape and layout, or the one "
               "it starts from cannot be copied to the host (a dynamic "
               "shape, or a loop that may not run)";
        continue;
      }
      if (nextAlloc)
        placeInHostMemory(nextAlloc);
      if (initAlloc && initAlloc != nextAlloc)
        placeInHostMemory(initAlloc);
      if (copyInit) {
        OpBuilder b(loop);
        Location loc = loop.getLoc();
        auto host = zero::HostAllocOp::create(
            b, loc, MemRefType::get(type.getShape(), type.getElementType()));
        memref::CopyOp::create(b, loc, init, host);
        Value start = host;
        if (host.getType() != type)
          start = memref::CastOp::create(b, loc, type, host);
        loop.getInitArgsMutable()[k].set(start);
        b.setInsertionPointAfter(loop);
        memref::DeallocOp::create(b, loc, host);
      }
    }
  });
}

struct ZeroOffloadToHostPass
    : public zero::impl::ZeroOffloadToHostBase<ZeroOffloadToHostPass> {
  using Base::Base;

  /// The options' cost model, set before the functions are lowered.
  zero::CostModelParameters costs;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(zero::setOffloadParameters(costs, module, getArgument(),
                                          hostGBps, linkGBps,
                                          chunkOverheadMicroseconds)))
      return signalPassFailure();
    Builder b(&getContext());
    SmallVector<NamedAttribute> placed;
    for (auto fn : module.getOps<func::FuncOp>()) {
      if (fn.isExternal() || !zero::hasHostArguments(fn))
        continue;
      if (!gpu) {
        emitError(fn.getLoc())
            << "zero-offload-to-host: @" << fn.getName()
            << " keeps state in host memory (zero-offload-state, offload=), "
               "but a CPU program has no device to offload from: compile it "
               "for the GPU (zero-compile --target=cuda), or run it on the "
               "GPU's CPU replica (zero-run --gpu-loops)";
        return signalPassFailure();
      }
      placeLoopCarriedState(fn);
      SmallVector<std::pair<func::ReturnOp, unsigned>> stateResults =
          hostStateResults(fn);
      if (failed(checkHostStateResults(fn, stateResults)) ||
          failed(offload(fn, stateResults))) {
        for (unsigned i = 0; i < fn.getNumArguments(); ++i)
          zero::setHostArgument(fn, i, /*host=*/false);
        fn.walk([](scf::ForOp loop) {
          for (unsigned k = 0; k < loop.getNumRegionIterArgs(); ++k)
            zero::setHostIterArg(loop, k, /*host=*/false);
        });
        continue;
      }
      placed.push_back(b.getNamedAttr(fn.getName(), describe(fn)));
    }
    if (!placed.empty())
      module->setAttr("zero.host_memory", b.getDictionaryAttr(placed));
  }

  /// Whether each of `results` can be host memory: a static shape, without
  /// a layout of its own (a host copy of it is what is returned).
  LogicalResult
  checkHostStateResults(func::FuncOp fn,
                        ArrayRef<std::pair<func::ReturnOp, unsigned>> results) {
    for (auto [ret, i] : results) {
      auto type = dyn_cast<MemRefType>(fn.getResultTypes()[i]);
      if (type && type.hasStaticShape() && type.getLayout().isIdentity())
        continue;
      emitRemark(ret.getLoc())
          << "zero-offload-to-host: @" << fn.getName()
          << " stays on the device: result " << i
          << " is the next value of host state, but its type "
          << fn.getResultTypes()[i]
          << " is not a static buffer that host memory can hold";
      return failure();
    }
    return success();
  }

  /// Which arguments and results of `fn` live in host memory.
  DictionaryAttr describe(func::FuncOp fn) {
    Builder b(fn.getContext());
    SmallVector<int64_t> arguments, results;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      if (zero::inHostMemory(fn.getArgument(i)))
        arguments.push_back(i);
    fn.walk([&](func::ReturnOp ret) {
      for (auto [i, value] : llvm::enumerate(ret.getOperands()))
        if (zero::inHostMemory(value) && !llvm::is_contained(results, i))
          results.push_back(i);
    });
    return b.getDictionaryAttr(
        {b.getNamedAttr("arguments", b.getDenseI64ArrayAttr(arguments)),
         b.getNamedAttr("results", b.getDenseI64ArrayAttr(results))});
  }

  /// The nests the host runs: those that write host memory; those that
  /// write a temporary that only host nests read (so that it can live in
  /// host memory too); and those that use nothing but temporaries, reading
  /// what host nests write (a sum of the host's products, as LAMB's norm
  /// of its update direction is, so that the products need not go up to
  /// the device), until no more join.
  SmallVector<scf::ParallelOp> findHostNests(func::FuncOp fn) {
    SmallVector<scf::ParallelOp> nests = topLevelNests(fn);
    llvm::SetVector<Operation *> host;
    for (scf::ParallelOp nest : nests)
      if (writesHostMemory(nest))
        host.insert(nest);
    SmallVector<memref::AllocOp> temporaries = temporariesOnlyOf(fn, nests);
    // Each temporary's readers and writers, and each nest's temporaries;
    // the nests that read a buffer other than a temporary or use one that
    // staging cannot copy (readsOther), that write a buffer other than a
    // temporary (writesOther), and that read any buffer (readsAny): what
    // the rule for a sum of the host's products asks.
    DenseMap<Operation *, SmallVector<Operation *>> readers, writers;
    DenseMap<Operation *, SmallVector<Operation *>> readsOf;
    DenseSet<Operation *> readsOther, writesOther, readsAny;
    for (scf::ParallelOp nest : nests)
      for (Value buffer : outsideBuffers(nest)) {
        Operation *other = nullptr;
        bool read = accesses(nest, buffer, /*read=*/true, other);
        bool written = accesses(nest, buffer, /*read=*/false, other);
        if (read)
          readsAny.insert(nest);
        Value root = zero::bufferOrigin(buffer);
        auto alloc = root.getDefiningOp<memref::AllocOp>();
        bool temporary = alloc && llvm::is_contained(temporaries, alloc);
        if (other || !cast<MemRefType>(buffer.getType()).hasStaticShape() ||
            (read && !temporary))
          readsOther.insert(nest);
        if (written && !temporary)
          writesOther.insert(nest);
        if (!temporary)
          continue;
        if (read) {
          readers[alloc].push_back(nest);
          readsOf[nest].push_back(alloc);
        }
        if (written)
          writers[alloc].push_back(nest);
      }
    auto onlyHost = [&](ArrayRef<Operation *> ops) {
      return llvm::all_of(ops,
                          [&](Operation *op) { return host.contains(op); });
    };
    // Whether `nest` only reads what the host made and only writes
    // temporaries: each temporary it reads is written by host nests, by
    // itself, or by a nest that reads nothing (its initial value), and one
    // at least by a host nest. A nest that writes other device buffers (a
    // copy into a collective's bucket) stays a kernel: the host's product
    // goes up to it, and the bucket is not written across the link piece
    // by piece.
    auto readsOnlyHostProducts = [&](scf::ParallelOp nest) {
      if (writesOther.contains(nest))
        return false;
      bool fromHost = false;
      for (Operation *alloc : readsOf.lookup(nest))
        for (Operation *writer : writers.lookup(alloc)) {
          if (host.contains(writer))
            fromHost = true;
          else if (writer != nest && readsAny.contains(writer))
            return false;
        }
      return fromHost;
    };
    for (bool changed = true; changed;) {
      changed = false;
      for (memref::AllocOp alloc : temporaries) {
        SmallVector<Operation *> read = readers.lookup(alloc);
        if (read.empty() || !onlyHost(read))
          continue;
        for (Operation *writer : writers.lookup(alloc))
          changed |= host.insert(writer);
      }
      for (scf::ParallelOp nest : nests) {
        if (host.contains(nest) || readsOther.contains(nest) ||
            nest.getNumResults() != 0 || !readsOnlyHostProducts(nest))
          continue;
        host.insert(nest);
        changed = true;
      }
    }
    SmallVector<scf::ParallelOp> hostNests;
    for (scf::ParallelOp nest : nests)
      if (host.contains(nest))
        hostNests.push_back(nest);
    return hostNests;
  }

  LogicalResult
  offload(func::FuncOp fn,
          ArrayRef<std::pair<func::ReturnOp, unsigned>> stateResults) {
    SmallVector<scf::ParallelOp> hostNests = findHostNests(fn);
    for (scf::ParallelOp nest : hostNests)
      if (nest.getNumResults() != 0) {
        emitRemark(nest.getLoc())
            << "zero-offload-to-host: @" << fn.getName()
            << " stays on the device: this loop nest on offloaded state "
               "reduces into results, which the host loops do not do";
        return failure();
      }
    // Device temporaries that kernels compute from the new host state.
    SmallVector<DeviceRecompute> recomputes =
        findDeviceRecomputes(fn, hostNests);
    auto recomputed = [&](scf::ParallelOp nest, Value buffer) {
      return llvm::any_of(recomputes, [&](const DeviceRecompute &r) {
        return r.nest == nest && r.device == buffer;
      });
    };
    // Temporaries only host loops touch: host memory.
    SmallVector<memref::AllocOp> temporaries = temporariesOnlyOf(fn, hostNests);
    // Temporaries host loops write, one after another, for kernels to read.
    SmallVector<SharedStaging> shares;
    fn.walk([&](memref::AllocOp alloc) {
      if (!llvm::is_contained(temporaries, alloc))
        if (std::optional<SharedStaging> shared =
                sharedStaging(alloc, hostNests))
          shares.push_back(std::move(*shared));
    });
    auto sharedAcrossNests = [&](Value buffer) {
      return llvm::any_of(shares, [&](SharedStaging &shared) {
        return shared.alloc.getResult() == buffer;
      });
    };
    // Every other buffer a host loop reads or writes: a host copy.
    struct Staging {
      scf::ParallelOp nest;
      Value buffer;
      bool read, written;
      /// The staging (of a buffer the nest only reads) whose host buffer
      /// this one (of a buffer it only writes) shares, or -1.
      int shares = -1;
    };
    SmallVector<Staging> stagings;
    for (scf::ParallelOp nest : hostNests)
      for (Value buffer : outsideBuffers(nest)) {
        if (zero::inHostMemory(buffer) || recomputed(nest, buffer) ||
            sharedAcrossNests(buffer) ||
            llvm::any_of(temporaries, [&](memref::AllocOp alloc) {
              return zero::bufferOrigin(buffer) == alloc.getResult();
            }))
          continue;
        auto type = cast<MemRefType>(buffer.getType());
        Operation *other = nullptr;
        bool read = accesses(nest, buffer, /*read=*/true, other);
        bool written = accesses(nest, buffer, /*read=*/false, other);
        if (!type.hasStaticShape() || other) {
          InFlightDiagnostic remark = emitRemark(nest.getLoc());
          remark << "zero-offload-to-host: @" << fn.getName()
                 << " stays on the device: this loop nest on offloaded "
                    "state also uses a device buffer of type "
                 << type;
          if (other)
            remark << " through '" << other->getName()
                   << "', which a host copy cannot stand in for";
          else
            remark << ", whose shape is not static";
          return failure();
        }
        stagings.push_back({nest, buffer, read, written});
      }
    // A buffer the nest only writes goes back through the host buffer of
    // one it only reads, where that is safe (the weight's shard in, its new
    // value out): one host buffer less.
    llvm::SmallDenseSet<int> shared;
    for (auto [i, out] : llvm::enumerate(stagings)) {
      if (out.read || !out.written)
        continue;
      for (auto [j, in] : llvm::enumerate(stagings))
        if (in.nest == out.nest && in.read && !in.written &&
            !shared.contains(j) &&
            canShareStaging(out.nest, in.buffer, out.buffer)) {
          out.shares = j;
          shared.insert(j);
          break;
        }
    }
    // The plan holds: rewrite. The copies down the link the program holds
    // already (zero-gpu-copies leaves them copies): an offloaded weight's
    // new value, gathered on the device, into its host argument.
    SmallVector<memref::CopyOp> copiesDown = programCopiesDown(fn);
    SmallVector<memref::CopyOp> resultCopies =
        placeHostStateResults(fn, stateResults);
    // Each nest's copies across the link, in (before it) and out (after).
    DenseMap<Operation *, SmallVector<memref::CopyOp>> copiesIn, copiesOut;
    for (const DeviceRecompute &recompute : recomputes)
      copiesOut[recompute.nest].push_back(rewriteDeviceRecompute(recompute));
    for (memref::AllocOp alloc : temporaries)
      placeInHostMemory(alloc);
    for (SharedStaging &shared : shares)
      copiesOut[shared.nests.back()].push_back(rewriteSharedStaging(shared));
    // Those that share a host buffer after the one whose buffer they share.
    SmallVector<Value> hostOf(stagings.size());
    auto inOrder = llvm::to_vector(llvm::seq<int>(0, stagings.size()));
    std::stable_partition(inOrder.begin(), inOrder.end(),
                          [&](int i) { return stagings[i].shares < 0; });
    for (int index : inOrder) {
      Staging &staging = stagings[index];
      auto type = cast<MemRefType>(staging.buffer.getType());
      OpBuilder b(staging.nest);
      Location loc = staging.nest.getLoc();
      auto hostType = MemRefType::get(type.getShape(), type.getElementType());
      Value host = staging.shares >= 0
                       ? hostOf[staging.shares]
                       : zero::HostAllocOp::create(b, loc, hostType);
      hostOf[index] = host;
      // A view that is not one contiguous range crosses the link through a
      // contiguous device buffer, gathered and scattered by kernels.
      Value device = staging.buffer;
      bool contiguous = memref::isStaticShapeAndContiguousRowMajor(type);
      if (!contiguous)
        device = memref::AllocOp::create(b, loc, hostType);
      if (staging.read) {
        if (!contiguous)
          buildCopyNest(b, loc, staging.buffer, device);
        copiesIn[staging.nest].push_back(
            memref::CopyOp::create(b, loc, device, host));
      }
      staging.buffer.replaceUsesWithIf(host, [&](OpOperand &use) {
        return staging.nest->isAncestor(use.getOwner());
      });
      b.setInsertionPointAfter(staging.nest);
      if (staging.written) {
        copiesOut[staging.nest].push_back(
            memref::CopyOp::create(b, loc, host, device));
        if (!contiguous)
          buildCopyNest(b, loc, device, staging.buffer);
      }
      if (staging.shares < 0)
        memref::DeallocOp::create(b, loc, host);
      if (!contiguous)
        memref::DeallocOp::create(b, loc, device);
    }
    // A device temporary that only kernels read after the host made it is
    // uploaded on the rank's stream when it follows the host's work, not
    // with that work: until then its kernel waits anyway (LAMB's update
    // direction waits for the gather of its norms, which follow the host's
    // sums), and the device holds one such buffer at a time rather than
    // every one the host has made. Its allocation moves down with it
    // (below).
    for (auto &entry : copiesOut)
      llvm::erase_if(entry.second, [&](memref::CopyOp copy) {
        return uploadsForKernelsOnly(copy, hostNests);
      });
    SmallVector<scf::ForOp> loops;
    SmallVector<SmallVector<memref::CopyOp>> loopCopiesIn, loopCopiesOut;
    for (scf::ParallelOp nest : hostNests) {
      SmallVector<memref::CopyOp> in = copiesIn.lookup(nest),
                                  out = copiesOut.lookup(nest);
      if (scf::ForOp loop = convertToHostLoops(nest)) {
        loops.push_back(loop);
        loopCopiesIn.push_back(std::move(in));
        loopCopiesOut.push_back(std::move(out));
      }
    }
    // Each loop's iterations are independent (it was a parallel nest's
    // outermost loop); what its body nests (a sum's sequential loop, as
    // LAMB's norms have, or an inner dimension) runs within an iteration.
    // Across the host's cores, from the rank's host queue where every loop
    // can be.
    Value untaken;
    for (scf::ForOp loop : loops)
      if ((untaken = zero::valueTaskCannotTake(loop)))
        break;
    bool queue =
        parallel && overlap && loops.size() == hostNests.size() && !untaken;
    unsigned staged = stageCollectives(fn);
    std::optional<zero::HostQueueSchedule> schedule;
    unsigned tasks = 0, pipelined = 0, queueTaken = 0;
    int64_t chunks = 0;
    llvm::DenseSet<Operation *> grouped;
    if (queue) {
      Builder b(fn.getContext());
      // An update whose copies split by its iterations goes to the queue as
      // one op, to be pipelined in chunks; the others op by op.
      SmallVector<scf::ExecuteRegionOp> groups;
      for (auto [loop, in, out] :
           llvm::zip(loops, loopCopiesIn, loopCopiesOut)) {
        if (scf::ExecuteRegionOp group = groupUpdate(loop, in, out)) {
          groups.push_back(group);
          grouped.insert(loop);
          continue;
        }
        for (memref::CopyOp copy : llvm::concat<memref::CopyOp>(in, out))
          copy->setAttr(zero::kQueuedAttrName, b.getUnitAttr());
        loop->setAttr(zero::kQueuedAttrName, b.getUnitAttr());
      }
      // A delayed update's gradient shards go down on the queue, each once
      // what writes it is done, while the rank goes on: not one read the
      // rank's stream must finish first each, at the step's end.
      // So do the program's own copies into host memory, in order with the
      // queue's reads of what they overwrite.
      for (memref::CopyOp copy :
           llvm::concat<memref::CopyOp>(resultCopies, copiesDown))
        copy->setAttr(zero::kQueuedAttrName, b.getUnitAttr());
      schedule = zero::scheduleHostQueue(fn, queueFrees);
      for (scf::ExecuteRegionOp group : groups) {
        Operation *loop = *group.getOps<scf::ForOp>().begin();
        int64_t groupChunks = 0;
        if (lowerUpdate(group, fn, tasks, costs, groupChunks, queueTaken)) {
          ++tasks;
          ++pipelined;
          chunks += groupChunks;
        } else {
          grouped.erase(loop); // runs after a wait, as a plain host loop
        }
      }
    } else if (parallel && overlap && !hostNests.empty()) {
      InFlightDiagnostic remark =
          emitRemark(untaken ? untaken.getLoc() : fn.getLoc())
          << "zero-offload-to-host: @" << fn.getName()
          << ": the host's work runs in order on the rank's thread, not "
             "beside its stream: ";
      if (untaken)
        remark << "a host loop uses a value of type " << untaken.getType()
               << ", which its task cannot take (" << zero::kTaskValues << ")";
      else
        remark << "a host nest of no loops runs in its place";
    }
    // What waits for the host's work moved down past the rank's wait, and
    // the buffers it writes were allocated where the program made them:
    // each device allocation now moves down to its first use, so that the
    // step does not hold what it allocated for after the wait during the
    // backward pass before it.
    sinkAllocations(fn);
    for (scf::ForOp loop : loops) {
      if (grouped.contains(loop))
        continue; // lowered with its group
      bool queued = loop->hasAttr(zero::kQueuedAttrName);
      if (parallel && zero::runAcrossCores(loop, fn, tasks, queued))
        ++tasks;
    }
    InFlightDiagnostic remark = emitRemark(fn.getLoc());
    remark << "zero-offload-to-host: @" << fn.getName() << ": "
           << hostNests.size() << " loop nest(s) on the host, "
           << stagings.size() + shares.size() << " device buffer(s) copied";
    if (!shared.empty())
      remark << " (" << shared.size()
             << " back through the host buffer of one read)";
    if (!recomputes.empty())
      remark << ", " << recomputes.size()
             << " computed by kernels from the new host state";
    if (hostNests.empty())
      remark << " (no loop nest writes host state, which a loop carries "
                "or the step only reads: the device reads it across the "
                "link and its next value is copied back, so it is in host "
                "memory between calls only)";
    if (schedule) {
      remark << "; " << schedule->queued
             << " op(s) on the rank's host queue beside its stream ("
             << pipelined << " update(s) with their copies, in " << chunks
             << " chunk(s) by the cost model), " << schedule->frees
             << " buffer(s) freed once copied down, " << schedule->stagingFrees
             << " host staging buffer(s) freed by the queue";
      if (queueTaken)
        remark << " (" << queueTaken
               << " of them taken by the queue as it runs their update)";
      remark << ", " << schedule->unqueued << " after a wait, ";
      if (schedule->copiesDown)
        remark << schedule->copiesDown
               << " copies down into host memory that the rank only starts, ";
      remark << schedule->joins << " wait(s)";
      if (schedule->partialWaits)
        remark << " and " << schedule->partialWaits
               << " for the queue's work up to an op";
      remark << ", " << schedule->deferred << " op(s) moved after one";
    }
    remark.report();
    if (staged)
      emitRemark(fn.getLoc())
          << "zero-offload-to-host: @" << fn.getName() << ": " << staged
          << " collective(s) on host memory moved through device buffers";
    return success();
  }
};

} // namespace
