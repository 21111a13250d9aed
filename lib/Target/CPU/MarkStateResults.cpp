//===- MarkStateResults.cpp - state results marked before the lowering ----===//
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Target/CPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROMARKSTATERESULTS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

struct ZeroMarkStateResultsPass
    : public zero::impl::ZeroMarkStateResultsBase<ZeroMarkStateResultsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (!fn.isExternal())
      zero::markStateResults(fn);
  }
};

} // namespace
