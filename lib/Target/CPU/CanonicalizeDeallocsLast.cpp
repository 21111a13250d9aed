//===- CanonicalizeDeallocsLast.cpp - deallocs canonicalized once ---------===//
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "zero/Target/CPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROCANONICALIZEDEALLOCSLAST
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

struct ZeroCanonicalizeDeallocsLastPass
    : public zero::impl::ZeroCanonicalizeDeallocsLastBase<
          ZeroCanonicalizeDeallocsLastPass> {
  LogicalResult initialize(MLIRContext *context) override {
    RewritePatternSet set(context);
    for (Dialect *dialect : context->getLoadedDialects())
      dialect->getCanonicalizationPatterns(set);
    for (RegisteredOperationName op : context->getRegisteredOperations())
      op.getCanonicalizationPatterns(set, context);
    patterns = FrozenRewritePatternSet(
        std::move(set),
        /*disabledPatternLabels=*/{zero::kQuadraticCanonicalizationPattern});
    return success();
  }

  void runOnOperation() override {
    // Every op but the deallocs, none of them revisited when its operands
    // change: not being in the list, the deallocs are not either.
    SmallVector<Operation *> others;
    getOperation()->walk([&](Operation *op) {
      if (op != getOperation() && !isa<bufferization::DeallocOp>(op))
        others.push_back(op);
    });
    GreedyRewriteConfig strict;
    strict.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(others, patterns, strict);
    // Then the whole function as the canonicalizer does it, which also
    // makes each constant once before it visits the deallocs; little is
    // left to change.
    (void)applyPatternsGreedily(getOperation(), patterns);
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
