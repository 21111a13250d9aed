//===- ForwardCollectiveOutputs.cpp - collectives into their copies' targets //
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
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
/// it: a wait later in the block names a view of it.
bool awaitedAfter(Operation *op, Value buffer) {
  for (Operation *it = op->getNextNode(); it; it = it->getNextNode())
    if (auto wait = dyn_cast<zero::WaitOp>(it))
      if (zero::bufferOrigin(wait.getInput()) == buffer ||
          zero::bufferOrigin(wait.getOutput()) == buffer)
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
    copy.emitRemark("zero-forward-collective-outputs: the copy of '")
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
  }
};

} // namespace
