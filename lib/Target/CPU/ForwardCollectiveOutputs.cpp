//===- ForwardCollectiveOutputs.cpp - collectives into their copies' targets //
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Target/CPU/Passes.h"
#include "zero/Utils/Buffers.h"

namespace zero {
#define GEN_PASS_DEF_ZEROFORWARDCOLLECTIVEOUTPUTS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The one copy that reads a collective's fresh output, whole, perhaps
/// through reshapes.
struct OutputCopy {
  memref::CopyOp copy;
  /// The reshapes from the output to the copy's source, in that order.
  SmallVector<Operation *> reshapes;
};

/// Whether `value` is an identity-layout memref: its reshapes are too, so a
/// reshape and its inverse give back its type.
bool hasIdentityLayout(Value value) {
  auto type = dyn_cast<MemRefType>(value.getType());
  return type && type.getLayout().isIdentity();
}

/// The copy that is the only reader of `output`, which `collective` writes
/// (and its wait names): nothing else reads or writes it, and the copy
/// reads all of it. Else nothing.
std::optional<OutputCopy> findOnlyCopy(Operation *collective, Value output) {
  OutputCopy found;
  Value view = output;
  while (view) {
    Value next;
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      bool namesOutput = view == output && use.getOperandNumber() == 1;
      if (user == collective && namesOutput)
        continue;
      if (auto wait = dyn_cast<zero::WaitOp>(user);
          wait && wait.getRequest().getDefiningOp() == collective &&
          use.get() == wait.getOutput() && view == output)
        continue;
      if (isa<memref::ExpandShapeOp, memref::CollapseShapeOp>(user) && !next &&
          hasIdentityLayout(user->getResult(0))) {
        found.reshapes.push_back(user);
        next = user->getResult(0);
        continue;
      }
      if (auto copy = dyn_cast<memref::CopyOp>(user);
          copy && copy.getSource() == view && !found.copy) {
        found.copy = copy;
        continue;
      }
      return std::nullopt;
    }
    view = next;
  }
  // The copy must read the last view, not one before it.
  Value last =
      found.reshapes.empty() ? output : found.reshapes.back()->getResult(0);
  if (!found.copy || found.copy.getSource() != last ||
      !hasIdentityLayout(found.copy.getTarget()))
    return std::nullopt;
  return found;
}

/// `value`, or a copy of the views it is made by, available before `point`:
/// a view of a buffer made earlier (an argument reshaped just before the
/// copy) is made again there. Null when it cannot be.
Value availableBefore(Value value, Operation *point, DominanceInfo &dominance,
                      OpBuilder &b) {
  if (dominance.properlyDominates(value, point))
    return value;
  auto view = value.getDefiningOp<ViewLikeOpInterface>();
  if (!view || view.getViewSource() == value || view->getNumResults() != 1 ||
      view->getNumRegions())
    return nullptr;
  Value source = availableBefore(view.getViewSource(), point, dominance, b);
  if (!source)
    return nullptr;
  for (Value operand : view->getOperands())
    if (operand != view.getViewSource() &&
        !dominance.properlyDominates(operand, point))
      return nullptr;
  IRMapping mapping;
  mapping.map(view.getViewSource(), source);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(point);
  return b.clone(*view, mapping)->getResult(0);
}

/// `target` seen in the shape of the buffer the first of `reshapes` reads:
/// each reshape undone, the last first.
Value unreshape(OpBuilder &b, ArrayRef<Operation *> reshapes, Value target) {
  for (Operation *reshape : llvm::reverse(reshapes)) {
    if (auto expand = dyn_cast<memref::ExpandShapeOp>(reshape))
      target = memref::CollapseShapeOp::create(
          b, reshape->getLoc(), expand.getSrcType(), target,
          expand.getReassociationIndices());
    else {
      auto collapse = cast<memref::CollapseShapeOp>(reshape);
      target = memref::ExpandShapeOp::create(
          b, reshape->getLoc(), collapse.getSrcType().getShape(), target,
          collapse.getReassociationIndices());
    }
  }
  return target;
}

/// Whether an op of `op`'s block after it and before `end`, other than
/// those in `skip` and views, may touch a view of `buffer` (uses a value
/// viewing it, in its operands or its regions).
bool touchedBetween(Operation *op, Operation *end, Value buffer,
                    const llvm::SmallPtrSetImpl<Operation *> &skip) {
  for (Operation *it = op->getNextNode(); it && it != end;
       it = it->getNextNode()) {
    // A view touches nothing: what uses it is checked.
    if (skip.contains(it) ||
        (isa<ViewLikeOpInterface>(it) && isMemoryEffectFree(it)))
      continue;
    if (zero::usesViewOf(it, buffer))
      return true;
  }
  return false;
}

/// Whether a collective started before `op` may still use `buffer` after
/// it: a wait later in the block, other than the wait of `own` (where
/// given), names a view of it.
bool awaitedAfter(Operation *op, Value buffer, Operation *own = nullptr) {
  for (Operation *it = op->getNextNode(); it; it = it->getNextNode())
    if (auto wait = dyn_cast<zero::WaitOp>(it))
      if ((!own || wait.getRequest().getDefiningOp() != own) &&
          (zero::bufferOrigin(wait.getInput()) == buffer ||
           zero::bufferOrigin(wait.getOutput()) == buffer))
        return true;
  return false;
}

/// Has `collective` write straight into the target of the one copy of its
/// fresh output, where nothing touches that target between them; where
/// something stands in the way, says what with a remark at the copy.
void forwardOutput(Operation *collective, DominanceInfo &dominance) {
  Value output = collective->getOperand(1);
  auto alloc = output.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  std::optional<OutputCopy> found = findOnlyCopy(collective, output);
  if (!found)
    return;
  memref::CopyOp copy = found->copy;
  auto leave = [&](StringRef why) {
    mlir::emitRemark(copy.getLoc(),
                     "zero-forward-collective-outputs: the copy of '")
        << collective->getName() << "''s output stays: " << why;
  };
  if (copy->getBlock() != collective->getBlock() ||
      !collective->isBeforeInBlock(copy))
    return leave("it is not after the collective in the same block");
  Value target = copy.getTarget();
  Value buffer = zero::bufferOrigin(target);
  if (zero::bufferOrigin(collective->getOperand(0)) == buffer)
    return leave("the collective reads the buffer it is copied into");
  llvm::SmallPtrSet<Operation *, 4> skip(found->reshapes.begin(),
                                         found->reshapes.end());
  for (Operation *user : output.getUsers())
    skip.insert(user);
  if (touchedBetween(collective, copy, buffer, skip))
    return leave("the buffer it is copied into is used between the two");
  if (awaitedAfter(collective, buffer))
    return leave("a collective's wait after it names the buffer it is "
                 "copied into");
  OpBuilder b(collective);
  Value available = availableBefore(target, collective, dominance, b);
  if (!available)
    return leave("the buffer it is copied into is made after the collective");
  Value forwarded = unreshape(b, found->reshapes, available);
  if (forwarded.getType() != output.getType())
    return leave("the buffer it is copied into, reshaped back, has another "
                 "type");
  output.replaceUsesWithIf(forwarded, [&](OpOperand &use) {
    return use.getOwner() == collective || isa<zero::WaitOp>(use.getOwner());
  });
  copy.erase();
  for (Operation *reshape : llvm::reverse(found->reshapes))
    reshape->erase();
  alloc.erase();
}

/// Whether `offset` is `zero.replica_index * count` on `gather`'s group:
/// where this rank's part of the gather's output starts.
bool isOwnPartOffset(Value offset, zero::AllGatherBufferOp gather,
                     int64_t count) {
  auto mul = offset.getDefiningOp<arith::MulIOp>();
  if (!mul)
    return false;
  for (unsigned i = 0; i < 2; ++i) {
    auto index = mul->getOperand(i).getDefiningOp<zero::ReplicaIndexOp>();
    APInt factor;
    if (index && matchPattern(mul->getOperand(1 - i), m_ConstantInt(&factor)) &&
        factor == count && index.getMesh() == gather.getMesh() &&
        index.getAxesAttr() == gather.getAxesAttr())
      return true;
  }
  return false;
}

/// Whether `a` and `b` are one view: the same value, or the same reshape of
/// one buffer made twice (bufferization and this pass each make theirs).
bool isSameView(Value a, Value b) {
  if (a == b)
    return true;
  Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
  if (!x || !y || !isa<memref::CollapseShapeOp, memref::ExpandShapeOp>(x) ||
      x->getName() != y->getName() || a.getType() != b.getType() ||
      x->getAttrDictionary() != y->getAttrDictionary() ||
      x->getNumOperands() != y->getNumOperands())
    return false;
  return llvm::all_of_zip(x->getOperands(), y->getOperands(),
                          [](Value p, Value q) { return isSameView(p, q); });
}

/// The view of this rank's part of `gather`'s (1-D) output among `writer`'s
/// inputs: `memref.subview %output[replica_index * count] [count] [1]`.
Value findOwnPart(linalg::LinalgOp writer, zero::AllGatherBufferOp gather,
                  int64_t count) {
  for (OpOperand *input : writer.getDpsInputOperands()) {
    auto view = input->get().getDefiningOp<memref::SubViewOp>();
    if (!view || !isSameView(view.getSource(), gather.getOutput()) ||
        view.getMixedOffsets().size() != 1 || !view.hasUnitStride() ||
        view.getStaticSizes() != ArrayRef<int64_t>{count})
      continue;
    Value offset = dyn_cast<Value>(view.getMixedOffsets()[0]);
    if (offset && isOwnPartOffset(offset, gather, count))
      return view;
  }
  return nullptr;
}

/// Has an all-gather whose fresh input is made by one elementwise op that
/// reads this rank's part of the gather's output (a weight's shard, updated
/// into the shard of the new weight) gather in place: the op writes the new
/// part over the old one, element by element, and the gather sends it from
/// there (NCCL's convention). The step then holds no buffer for the new
/// shard, and no rank copies its own part. Where the op is found but
/// something stands in the way, says what with a remark at the gather.
///
/// Under offload the op later becomes a host loop on the rank's queue,
/// which copies the part down and the new part up; the queue's schedule
/// (zero-offload-to-host) keeps that copy up after every device read of
/// the weight before it and the gather after the queue's work, so the
/// rewrite holds there too.
void gatherInPlace(zero::AllGatherBufferOp gather) {
  Value input = gather.getInput(), output = gather.getOutput();
  auto alloc = input.getDefiningOp<memref::AllocOp>();
  auto inputType = dyn_cast<MemRefType>(input.getType());
  auto outputType = dyn_cast<MemRefType>(output.getType());
  if (!alloc || gather.getGatherDim() != 0 || !inputType ||
      inputType.getRank() != 1 || !outputType || outputType.getRank() != 1 ||
      !hasIdentityLayout(input) || !hasIdentityLayout(output))
    return;
  // The one op that writes the input: as its destination, elementwise,
  // without reading what it overwrites.
  linalg::LinalgOp writer;
  OpOperand *init = nullptr;
  for (OpOperand &use : input.getUses()) {
    auto wait = dyn_cast<zero::WaitOp>(use.getOwner());
    if (use.getOwner() == gather.getOperation() ||
        (wait && wait.getRequest() == gather.getRequest()))
      continue;
    auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!op || writer || !op.isDpsInit(&use))
      return;
    writer = op;
    init = &use;
  }
  if (!writer || writer->getBlock() != gather->getBlock() ||
      !writer->isBeforeInBlock(gather) ||
      writer.getNumLoops() != writer.getNumParallelLoops() ||
      !llvm::all_of(writer.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }) ||
      writer.payloadUsesValueFromOperand(init))
    return;
  Value part = findOwnPart(writer, gather, inputType.getNumElements());
  if (!part)
    return;
  auto leave = [&](StringRef why) {
    mlir::emitRemark(gather.getLoc(),
                     "zero-forward-collective-outputs: gathers from a "
                     "buffer of its own, not in place: ")
        << why;
  };
  Value buffer = zero::bufferOrigin(output);
  for (OpOperand &operand : writer->getOpOperands())
    if (operand.get() != part && operand.get() != input &&
        isa<BaseMemRefType>(operand.get().getType()) &&
        zero::bufferOrigin(operand.get()) == buffer)
      return leave("the op that makes its input uses another view of the "
                   "buffer it gathers into");
  if (touchedBetween(writer, gather, buffer,
                     llvm::SmallPtrSet<Operation *, 1>()))
    return leave("the buffer it gathers into is used between the op that "
                 "makes its input and the gather");
  if (awaitedAfter(writer, buffer, gather))
    return leave("a collective's wait after the op that makes its input "
                 "names the buffer it gathers into");
  // A gather in flight (zero-schedule-overlap's) sends its part from the
  // buffer until its wait: nothing may touch the buffer in between.
  if (Value request = gather.getRequest()) {
    zero::WaitOp wait = zero::findWaitInBlock(request);
    if (!wait)
      return leave("its wait is not one op of its block");
    if (touchedBetween(gather, wait, buffer,
                       llvm::SmallPtrSet<Operation *, 1>()))
      return leave("the buffer it gathers into is used while it is in "
                   "flight");
  }
  input.replaceAllUsesWith(part);
  alloc.erase();
}

struct ZeroForwardCollectiveOutputsPass
    : public zero::impl::ZeroForwardCollectiveOutputsBase<
          ZeroForwardCollectiveOutputsPass> {
  void runOnOperation() override {
    DominanceInfo dominance(getOperation());
    SmallVector<Operation *> collectives;
    getOperation().walk([&](Operation *op) {
      if (zero::isBufferCollective(op) && op->getNumOperands() >= 2 &&
          op->getOperand(0) != op->getOperand(1))
        collectives.push_back(op);
    });
    for (Operation *collective : collectives)
      forwardOutput(collective, dominance);
    // Once each gather writes into the buffer its result lives in, its
    // input can be that buffer's own part.
    getOperation().walk(
        [](zero::AllGatherBufferOp gather) { gatherInPlace(gather); });
  }
};

} // namespace
