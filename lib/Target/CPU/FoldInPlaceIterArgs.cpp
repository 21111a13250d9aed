//===- FoldInPlaceIterArgs.cpp - loops' in-place iteration arguments ------===//
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Target/CPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROFOLDINPLACEITERARGS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Whether `yielded` is `arg`, or `arg` reshaped back to its own type (a
/// value copied into its iteration argument through a reshaped view).
bool isArgument(Value yielded, BlockArgument arg) {
  while (yielded != arg) {
    Operation *def = yielded.getDefiningOp();
    if (!isa_and_present<memref::ExpandShapeOp, memref::CollapseShapeOp,
                         memref::CastOp>(def))
      return false;
    yielded = def->getOperand(0);
  }
  return true;
}

/// `loop` without the iteration arguments its body yields unchanged, with
/// its host marks moved to the positions of the arguments that remain.
void foldInPlace(scf::ForOp loop) {
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  SmallVector<unsigned> kept;
  for (auto [index, arg] : llvm::enumerate(loop.getRegionIterArgs()))
    if (!isArgument(yield.getOperand(index), arg))
      kept.push_back(index);
  if (kept.size() == loop.getNumRegionIterArgs())
    return;
  IRRewriter rewriter(loop);
  SmallVector<Value> inits = llvm::map_to_vector(
      kept, [&](unsigned index) { return loop.getInitArgs()[index]; });
  auto folded =
      scf::ForOp::create(rewriter, loop.getLoc(), loop.getLowerBound(),
                         loop.getUpperBound(), loop.getStep(), inits);
  folded.setUnsignedCmp(loop.getUnsignedCmp());
  folded->setDiscardableAttrs(loop->getDiscardableAttrDictionary());
  folded->removeAttr(zero::kHostIterArgsAttrName);
  for (auto [position, index] : llvm::enumerate(kept))
    if (zero::isHostIterArg(loop, index))
      zero::setHostIterArg(folded, position, /*host=*/true);
  // The body, its removed arguments reading the buffers the loop starts
  // from.
  SmallVector<Value> arguments = {folded.getInductionVar()};
  llvm::append_range(arguments, loop.getInitArgs());
  for (auto [position, index] : llvm::enumerate(kept))
    arguments[index + 1] = folded.getRegionIterArgs()[position];
  Block *body = folded.getBody();
  if (!body->empty())
    rewriter.eraseOp(body->getTerminator());
  rewriter.mergeBlocks(loop.getBody(), body, arguments);
  auto newYield = cast<scf::YieldOp>(body->getTerminator());
  SmallVector<Value> yielded = llvm::map_to_vector(
      kept, [&](unsigned index) { return newYield.getOperand(index); });
  rewriter.setInsertionPoint(newYield);
  rewriter.replaceOpWithNewOp<scf::YieldOp>(newYield, yielded);
  SmallVector<Value> results(loop.getInitArgs());
  for (auto [position, index] : llvm::enumerate(kept))
    results[index] = folded.getResult(position);
  rewriter.replaceOp(loop, results);
}

struct ZeroFoldInPlaceIterArgsPass
    : public zero::impl::ZeroFoldInPlaceIterArgsBase<
          ZeroFoldInPlaceIterArgsPass> {
  void runOnOperation() override {
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      foldInPlace(loop);
  }
};

} // namespace
