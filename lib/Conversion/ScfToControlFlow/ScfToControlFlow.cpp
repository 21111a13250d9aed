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

/// The scf ops of `root` that no scf op holds: the ones a round lowers.
DenseSet<Operation *> outermostScfOps(Operation *root) {
  DenseSet<Operation *> outermost;
  root->walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (!isa_and_nonnull<scf::SCFDialect>(op->getDialect()))
      return WalkResult::advance();
    outermost.insert(op);
    return WalkResult::skip();
  });
  return outermost;
}

struct ZeroScfToControlFlowPass
    : public zero::impl::ZeroScfToControlFlowBase<ZeroScfToControlFlowPass> {
  void runOnOperation() override {
    getOperation()->walk(
        [](FunctionOpInterface function) { separateEntryBlock(function); });
    // Round by round, the outermost scf ops first: once a loop is lowered,
    // its body's blocks are the function's, and the next round splits them
    // behind the scf ops they hold (a training loop's body holds the step,
    // and with run-time checks an scf.if per check) before lowering those.
    RewritePatternSet patterns(&getContext());
    populateSCFToControlFlowConversionPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (DenseSet<Operation *> round = outermostScfOps(getOperation());
         !round.empty(); round = outermostScfOps(getOperation())) {
      getOperation()->walk([](FunctionOpInterface function) {
        for (Block &block : llvm::make_early_inc_range(function.getBlocks()))
          splitAfterScfOps(block);
      });
      ConversionTarget target(getContext());
      target.markUnknownOpDynamicallyLegal(
          [&](Operation *op) { return !round.contains(op); });
      if (failed(applyPartialConversion(getOperation(), target, frozen))) {
        signalPassFailure();
        return;
      }
    }
  }
};

} // namespace
