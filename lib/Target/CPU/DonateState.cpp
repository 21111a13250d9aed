//===- DonateState.cpp - state results written into their arguments -------===//
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Target/CPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZERODONATESTATE
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The destination operand of the op that makes `result`, when the op does
/// not read it (so that any tensor of its type may take its place); else
/// null, with `why` saying what stands in the way.
OpOperand *findUnreadDestination(Value result, std::string &why) {
  auto op = result.getDefiningOp<linalg::LinalgOp>();
  if (!op) {
    Operation *def = result.getDefiningOp();
    why = def ? "it is made by '" + def->getName().getStringRef().str() +
                    "', not by a linalg op with a destination"
              : "it is an argument";
    return nullptr;
  }
  OpOperand *init =
      op.getDpsInitOperand(cast<OpResult>(result).getResultNumber());
  if (op.payloadUsesValueFromOperand(init)) {
    why = "the op that makes it reads its destination";
    return nullptr;
  }
  return init;
}

struct ZeroDonateStatePass
    : public zero::impl::ZeroDonateStateBase<ZeroDonateStatePass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    if (!ret)
      return;
    for (auto [index, argument] : llvm::enumerate(zero::findStateResults(fn))) {
      if (!argument)
        continue;
      Value result = ret.getOperand(index);
      std::string why;
      OpOperand *init = findUnreadDestination(result, why);
      if (!init) {
        // At the function's location, without the function: printed with
        // each remark, it made a step with many such results quadratic.
        emitRemark(fn.getLoc()) << "zero-donate-state: result " << index
                                << " (the next value of argument " << *argument
                                << ") keeps a buffer of its own: " << why;
        continue;
      }
      init->set(fn.getArgument(*argument));
      fn.setArgAttr(*argument, "zero.aliasing_output",
                    OpBuilder(fn).getI64IntegerAttr(index));
    }
  }
};

} // namespace
