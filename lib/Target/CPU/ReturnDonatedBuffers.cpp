//===- ReturnDonatedBuffers.cpp - a donated argument's buffer returned ----===//
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Target/CPU/Passes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace zero {
#define GEN_PASS_DEF_ZERORETURNDONATEDBUFFERS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Whether every use of `clone` other than by `ret` is a dealloc's (which
/// frees the clone unless it is retained, as a returned buffer is).
bool onlyReturnedAndDeallocated(bufferization::CloneOp clone,
                                func::ReturnOp ret) {
  return llvm::all_of(clone->getUsers(), [&](Operation *user) {
    return user == ret.getOperation() || isa<bufferization::DeallocOp>(user);
  });
}

/// Removes `buffers` from the buffers `dealloc` may free (the function does
/// not own an argument's buffer); they stay among the retained ones. One
/// new dealloc for all of them: a step's dealloc lists thousands.
void dropFromFreed(bufferization::DeallocOp dealloc,
                   const llvm::DenseSet<Value> &buffers) {
  SmallVector<Value> memrefs, conditions;
  for (auto [memref, condition] :
       llvm::zip(dealloc.getMemrefs(), dealloc.getConditions()))
    if (!buffers.contains(memref)) {
      memrefs.push_back(memref);
      conditions.push_back(condition);
    }
  if (memrefs.size() == dealloc.getMemrefs().size())
    return;
  OpBuilder b(dealloc);
  auto replacement = bufferization::DeallocOp::create(
      b, dealloc.getLoc(), memrefs, conditions, dealloc.getRetained());
  dealloc->replaceAllUsesWith(replacement->getResults());
  dealloc.erase();
}

struct ZeroReturnDonatedBuffersPass
    : public zero::impl::ZeroReturnDonatedBuffersBase<
          ZeroReturnDonatedBuffersPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    SmallVector<std::pair<bufferization::CloneOp, BlockArgument>> donated;
    for (unsigned j = 0; ret && j < fn.getNumArguments(); ++j) {
      auto index =
          fn.getArgAttrOfType<IntegerAttr>(j, zero::kAliasingOutputAttrName);
      if (!index)
        continue;
      int64_t i = index.getInt();
      BlockArgument argument = fn.getArgument(j);
      if (i < 0 || i >= ret.getNumOperands() ||
          ret.getOperand(i).getType() != argument.getType()) {
        fn.emitError() << zero::kAliasingOutputAttrName << " of argument " << j
                       << " names result " << i
                       << ", which is not a buffer of the argument's type";
        return signalPassFailure();
      }
      auto clone = ret.getOperand(i).getDefiningOp<bufferization::CloneOp>();
      if (!clone || clone.getInput() != argument ||
          !onlyReturnedAndDeallocated(clone, ret)) {
        // Without the function printed beside each (DonateState.cpp).
        emitRemark(fn.getLoc()) << "zero-return-donated-buffers: result " << i
                                << " is written to a buffer of its own, not to "
                                   "argument "
                                << j
                                << "'s: the argument's old value is read after "
                                   "the update";
        continue;
      }
      donated.push_back({clone, argument});
    }
    llvm::DenseSet<Value> clones;
    llvm::SetVector<bufferization::DeallocOp> deallocs;
    for (auto [clone, argument] : donated) {
      clones.insert(clone.getOutput());
      for (Operation *user : clone->getUsers())
        if (auto dealloc = dyn_cast<bufferization::DeallocOp>(user))
          deallocs.insert(dealloc);
    }
    for (bufferization::DeallocOp dealloc : deallocs)
      dropFromFreed(dealloc, clones);
    for (auto [clone, argument] : donated) {
      clone.getOutput().replaceAllUsesWith(argument);
      clone.erase();
    }
  }
};

} // namespace
