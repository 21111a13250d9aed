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
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

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

/// The position in `fn`'s body of the last op outside the update of
/// `state` that the update reads: when the update can start (its
/// gradient's reduce-scatter, say). 0 when it reads nothing else.
unsigned updateReadyAt(func::FuncOp fn, Value state,
                       const DenseMap<Operation *, unsigned> &position) {
  Block &body = fn.getFunctionBody().front();
  SmallVector<Value> work = {state};
  llvm::SmallPtrSet<Operation *, 16> update;
  SmallVector<Operation *> order;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user->hasTrait<OpTrait::ReturnLike>() || !update.insert(user).second)
        continue;
      order.push_back(user);
      llvm::append_range(work, user->getResults());
    }
  }
  unsigned ready = 0;
  for (Operation *op : order)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !update.contains(def))
        if (Operation *top = body.findAncestorOpInBlock(*def))
          ready = std::max(ready, position.lookup(top));
  return ready;
}

/// The bytes of a state argument of `type` (a ranked tensor), 0 when
/// unknown.
int64_t stateBytes(Type type) {
  return getTensorBytes(cast<RankedTensorType>(type)).value_or(0);
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
    SmallVector<unsigned> offloadable;
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
      offloadable.push_back(i);
    }
    llvm::SmallDenseSet<unsigned> kept = keptOnDevice(fn, offloadable);
    unsigned marked = 0;
    for (unsigned i : offloadable)
      if (!kept.contains(i)) {
        setHostArgument(fn, i, /*host=*/true);
        ++marked;
      }
    InFlightDiagnostic remark = emitRemark(fn.getLoc());
    remark << "zero-offload-state: " << marked << " of " << state.size()
           << " state arguments of @" << fn.getName() << " in host memory";
    if (offloadDeviceShare > 0)
      remark << "; " << kept.size()
             << " kept on the device (offload-device-share: the last to be "
                "updated, while they fit in "
             << llvm::formatv("{0:P}",
                              std::min(1.0, double(offloadDeviceShare)))
             << " of the bytes)";
  }

  /// The arguments among `offloadable` that offload-device-share keeps on
  /// the device: those whose update can start last, while their bytes fit
  /// in the share.
  llvm::SmallDenseSet<unsigned> keptOnDevice(func::FuncOp fn,
                                             ArrayRef<unsigned> offloadable) {
    llvm::SmallDenseSet<unsigned> kept;
    if (offloadDeviceShare <= 0)
      return kept;
    DenseMap<Operation *, unsigned> position;
    for (Operation &op : fn.getFunctionBody().front())
      position[&op] = position.size() + 1;
    int64_t total = 0;
    SmallVector<std::pair<unsigned, unsigned>> byReadiness; // (ready, arg)
    for (unsigned i : offloadable) {
      total += stateBytes(fn.getArgument(i).getType());
      byReadiness.push_back(
          {updateReadyAt(fn, fn.getArgument(i), position), i});
    }
    // The last ready first; among equals, the later argument first.
    llvm::sort(byReadiness, [](auto a, auto b) { return a > b; });
    double budget = std::min(1.0, double(offloadDeviceShare)) * double(total);
    int64_t used = 0;
    for (auto [ready, i] : byReadiness) {
      int64_t bytes = stateBytes(fn.getArgument(i).getType());
      if (double(used + bytes) > budget)
        break; // the rest can start earlier: their update hides better
      used += bytes;
      kept.insert(i);
    }
    return kept;
  }
};

} // namespace
