//===- ChecksToRuntime.cpp - cf.assert as calls of zero_rt_check ----------===//
//
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "zero/Conversion/Passes.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"

namespace zero {
#define GEN_PASS_DEF_ZEROCHECKSTORUNTIME
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The message of `check` as a constant NUL-terminated string.
Value messagePointer(OpBuilder &b, cf::AssertOp check, unsigned index,
                     zero::RuntimeCallBuilder &calls) {
  StringRef text = check.getMsg();
  SmallVector<int8_t> bytes(text.begin(), text.end());
  bytes.push_back(0);
  return calls.constantPointer(
      b, check.getLoc(), "__zero_check_" + std::to_string(index),
      DenseIntElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                b.getI8Type()),
          ArrayRef<int8_t>(bytes)));
}

struct ZeroChecksToRuntimePass
    : public zero::impl::ZeroChecksToRuntimeBase<ZeroChecksToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    zero::RuntimeCallBuilder calls(module);
    SmallVector<cf::AssertOp> checks;
    module.walk([&](cf::AssertOp check) { checks.push_back(check); });
    if (checks.empty())
      return;
    OpBuilder declarations(module.getContext());
    func::FuncOp checkFn =
        calls.declare(declarations, zero::RuntimeFunction::zero_rt_check);
    for (auto [index, check] : llvm::enumerate(checks)) {
      OpBuilder b(check);
      Value holds = arith::ExtUIOp::create(b, check.getLoc(), b.getI32Type(),
                                           check.getArg());
      func::CallOp::create(
          b, check.getLoc(), checkFn,
          ValueRange{holds, messagePointer(b, check, index, calls)});
      check.erase();
    }
  }
};

} // namespace
