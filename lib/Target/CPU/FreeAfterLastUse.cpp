//===- FreeAfterLastUse.cpp - deallocs moved up to their last use ---------===//
//
// Moves the unconditional dealloc of a buffer allocated in its block to just
// after the buffer's last use there. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Target/CPU/Passes.h"
#include "zero/Utils/Buffers.h"

namespace zero {
#define GEN_PASS_DEF_ZEROFREEAFTERLASTUSE
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Whether `result` is the request of a collective started on `view`
/// whose wait, in its block, names `view` too: the collective uses the
/// buffer until that wait, which is a use of the buffer itself.
bool isRequestWaitedOn(Value result, Value view) {
  if (!isa<zero::RequestType>(result.getType()))
    return false;
  zero::WaitOp wait = zero::findWaitInBlock(result);
  return wait && (wait.getInput() == view || wait.getOutput() == view);
}

/// Whether `user`, an op that reads or writes `view` (a view of the buffer),
/// lets the buffer go when it ends, or at the wait of the collective it
/// starts (isRequestWaitedOn): it is not a view of it (those are followed),
/// keeps no reference in a result, takes no address and passes nothing on.
bool letsGo(Operation *user, Value view) {
  if (user->hasTrait<OpTrait::IsTerminator>() ||
      isa<memref::ExtractAlignedPointerAsIndexOp>(user))
    return false;
  return llvm::all_of(user->getResults(), [&](Value result) {
    return result.getType().isIntOrIndexOrFloat() ||
           isRequestWaitedOn(result, view);
  });
}

/// The last op of `block` that uses `buffer` or a view of it (the op of the
/// block that holds a nested use), besides `dealloc`; null when a use may
/// keep the buffer beyond its op.
Operation *lastUseInBlock(Value buffer, Operation *dealloc, Block *block,
                          bool &known) {
  Operation *last = nullptr;
  SmallVector<Value> views = {buffer};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      if (auto viewLike = dyn_cast<ViewLikeOpInterface>(user);
          viewLike && viewLike.getViewSource() == view) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            views.push_back(result);
        // Its other results (sizes, strides) are numbers.
        if (user->getBlock() != block) {
          known = false;
          return nullptr;
        }
        continue;
      }
      Operation *holder = block->findAncestorOpInBlock(*user);
      if (!holder || !letsGo(user, view) || !letsGo(holder, view)) {
        known = false;
        return nullptr;
      }
      if (!last || last->isBeforeInBlock(holder))
        last = holder;
    }
  }
  return last;
}

void freeAfterLastUse(bufferization::DeallocOp dealloc) {
  if (dealloc.getMemrefs().size() != 1 || !dealloc.getRetained().empty() ||
      !matchPattern(dealloc.getConditions().front(), m_One()))
    return;
  Value buffer = dealloc.getMemrefs().front();
  // The dealloc names the allocation itself or a view of it (its base
  // buffer).
  Value origin = zero::bufferOrigin(buffer);
  Block *block = dealloc->getBlock();
  Operation *alloc = origin.getDefiningOp();
  if (!alloc || alloc->getBlock() != block ||
      !hasEffect<MemoryEffects::Allocate>(alloc, origin))
    return;
  bool known = true;
  Operation *last = lastUseInBlock(origin, dealloc, block, known);
  if (!known || !last || !last->isBeforeInBlock(dealloc) ||
      last->getNextNode() == dealloc.getOperation())
    return;
  // The dealloc names a view of the allocation: that view must exist there.
  if (Operation *def = buffer.getDefiningOp();
      def && def != alloc && last->isBeforeInBlock(def))
    return;
  OpBuilder b(last->getContext());
  b.setInsertionPointAfter(last);
  Value always =
      arith::ConstantOp::create(b, dealloc.getLoc(), b.getBoolAttr(true));
  bufferization::DeallocOp::create(b, dealloc.getLoc(), buffer, always,
                                   ValueRange());
  dealloc.erase();
}

struct ZeroFreeAfterLastUsePass
    : public zero::impl::ZeroFreeAfterLastUseBase<ZeroFreeAfterLastUsePass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation()->walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    for (bufferization::DeallocOp dealloc : deallocs)
      freeAfterLastUse(dealloc);
  }
};

} // namespace
