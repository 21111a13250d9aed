//===- ScfToControlFlow.cpp - scf to cf, last op first --------------------===//
//
// Upstream's scf-to-cf patterns in an order that keeps every block split
// short. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Transforms/DialectConversion.h"
#include "zero/Conversion/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROSCFTOCONTROLFLOW
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Ends `block` after each scf op directly in it with a branch to a new
/// block holding the rest. Last op first, so that each split moves only the
/// ops up to the previous split: linear in the block's length.
void splitAfterScfOps(Block &block) {
  SmallVector<Operation *> scfOps;
  for (Operation &op : block.without_terminator())
    if (isa_and_nonnull<scf::SCFDialect>(op.getDialect()))
      scfOps.push_back(&op);
  for (Operation *op : llvm::reverse(scfOps)) {
    Operation *next = op->getNextNode();
    if (next == &block.back())
      continue; // Only the terminator follows: nothing to keep short.
    Block *rest = block.splitBlock(next);
    OpBuilder b = OpBuilder::atBlockEnd(&block);
    cf::BranchOp::create(b, op->getLoc(), rest);
  }
}

struct ZeroScfToControlFlowPass
    : public zero::impl::ZeroScfToControlFlowBase<ZeroScfToControlFlowPass> {
  void runOnOperation() override {
    // Function bodies only: the regions of scf ops hold one block each.
    getOperation()->walk([](FunctionOpInterface function) {
      for (Block &block : llvm::make_early_inc_range(function.getBlocks()))
        splitAfterScfOps(block);
    });
    // Then upstream's conversion, as convert-scf-to-cf runs it.
    RewritePatternSet patterns(&getContext());
    populateSCFToControlFlowConversionPatterns(patterns);
    ConversionTarget target(getContext());
    target
        .addIllegalOp<scf::ForallOp, scf::ForOp, scf::IfOp, scf::IndexSwitchOp,
                      scf::ParallelOp, scf::WhileOp, scf::ExecuteRegionOp>();
    target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
    if (failed(applyPartialConversion(getOperation(), target,
                                      std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
