//===- ScfToControlFlow.cpp - scf to cf, last op first --------------------===//
//
// Upstream's scf-to-cf patterns in an order that keeps every block split
// short. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
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

/// Moves the ops of `function`'s entry block into a block of their own that
/// the entry block branches to. Converting the signature replaces each
/// argument's uses one at a time, checking order against the cast it
/// inserts at the entry block's start, which renumbers that block each time:
/// with thousands of arguments and a long entry block, quadratic. With the
/// uses in another block, no order is needed.
void separateEntryBlock(FunctionOpInterface function) {
  if (function.isExternal())
    return;
  Block &entry = function.getFunctionBody().front();
  if (entry.getNumArguments() == 0 || entry.begin() == std::prev(entry.end()))
    return; // No arguments, or only the terminator: nothing to renumber.
  Block *body = entry.splitBlock(entry.begin());
  OpBuilder b = OpBuilder::atBlockEnd(&entry);
  cf::BranchOp::create(b, function.getLoc(), body);
}

struct ZeroScfToControlFlowPass
    : public zero::impl::ZeroScfToControlFlowBase<ZeroScfToControlFlowPass> {
  void runOnOperation() override {
    // Function bodies only: the regions of scf ops hold one block each.
    getOperation()->walk([](FunctionOpInterface function) {
      for (Block &block : llvm::make_early_inc_range(function.getBlocks()))
        splitAfterScfOps(block);
      separateEntryBlock(function);
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
