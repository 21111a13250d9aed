//===- OffloadState.cpp - which state lives in host memory ----------------===//
//
// See Passes.td (zero-offload-state).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"

namespace zero {
#define GEN_PASS_DEF_ZEROOFFLOADSTATE
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// Whether `op`, reading a state value, is part of an update: it maps
/// element to element (arith and math on tensors, a linalg op with only
/// parallel loops), reshapes, pads or slices (tensor ops), reduces the
/// whole value to one (a norm), or is one of zero's collectives and shard
/// ops. Its results are followed further.
bool isUpdateStep(Operation *op) {
  if (op->hasTrait<OpTrait::Elementwise>() ||
      isa<tensor::TensorDialect>(op->getDialect()))
    return true;
  if (isa<ZeroDialect>(op->getDialect()))
    return true;
  if (auto reduce = dyn_cast<linalg::ReduceOp>(op))
    return matchFullReduction(reduce).has_value();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
  return false;
}

/// The first op, breadth first from `state`, that reads it (or what the
/// update computes from it) other than as an update does: a matmul, a
/// loop, a call. Null when only the update reads it.
Operation *firstReaderOutsideUpdate(Value state) {
  SmallVector<Value> work = {state};
  llvm::SetVector<Operation *> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user->hasTrait<OpTrait::ReturnLike>() &&
          isa<func::FuncOp>(user->getParentOp()))
        continue;
      if (!isUpdateStep(user))
        return user;
      if (seen.insert(user))
        llvm::append_range(work, user->getResults());
    }
  }
  return nullptr;
}

/// Whether `fn` carries tensors round a loop: state that offload, which
/// covers a step's arguments, leaves on the device.
bool carriesStateInLoop(func::FuncOp fn) {
  return fn
      .walk([](LoopLikeOpInterface loop) {
        return llvm::any_of(loop.getRegionIterArgs(),
                            [](BlockArgument arg) {
                              return isa<RankedTensorType>(arg.getType());
                            })
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

struct ZeroOffloadStatePass
    : public zero::impl::ZeroOffloadStateBase<ZeroOffloadStatePass> {
  using Base::Base;

  void runOnOperation() override {
    if (offload == Offload::None)
      return;
    getOperation().walk([&](func::FuncOp fn) {
      if (!fn.isExternal())
        markFunction(fn);
    });
  }

  void markFunction(func::FuncOp fn) {
    llvm::SmallSetVector<unsigned, 8> state;
    for (std::optional<unsigned> arg : findStateResults(fn))
      if (arg && isa<RankedTensorType>(fn.getArgument(*arg).getType()))
        state.insert(*arg);
    if (state.empty()) {
      emitRemark(fn.getLoc())
          << "zero-offload-state: @" << fn.getName()
          << " keeps everything on the device: no result is the next value "
             "of a tensor argument"
          << (carriesStateInLoop(fn)
                  ? " (its state is carried by a loop; offload covers a "
                    "step's arguments)"
                  : "");
      return;
    }
    unsigned marked = 0;
    for (unsigned i : state) {
      if (offload == Offload::Optimizer) {
        if (Operation *reader = firstReaderOutsideUpdate(fn.getArgument(i))) {
          emitRemark(reader->getLoc())
              << "zero-offload-state: argument " << i << " of @" << fn.getName()
              << " stays on the device: '" << reader->getName()
              << "' reads it outside the update";
          continue;
        }
      }
      setHostArgument(fn, i, /*host=*/true);
      ++marked;
    }
    emitRemark(fn.getLoc())
        << "zero-offload-state: " << marked << " of " << state.size()
        << " state arguments of @" << fn.getName() << " in host memory";
  }
};

} // namespace
