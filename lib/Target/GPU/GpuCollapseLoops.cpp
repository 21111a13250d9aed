//===- GpuCollapseLoops.cpp - parallel loop nests as 1-D loops ------------===//
//
// A parallel loop nest becomes a kernel by tiling its first dimension into
// blocks of threads; every further dimension becomes a grid dimension of its
// own, and CUDA allows at most 65535 blocks in y and z. Collapsed into one
// dimension (as XLA does), a nest of any shape fits, every thread of a
// block has work, and consecutive threads take consecutive elements of the
// last, fastest-varying dimension: coalesced accesses. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Target/GPU/Passes.h"

#include <numeric>

namespace zero {
#define GEN_PASS_DEF_ZEROGPUCOLLAPSELOOPS
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// A loop nest that becomes a kernel of its own and has more than one
/// dimension: outermost, not mapped yet, no reduction results.
bool isCollapsible(scf::ParallelOp loop) {
  return loop.getNumLoops() > 1 && loop.getNumResults() == 0 &&
         !loop->hasAttr("mapping") && !loop->getParentOfType<scf::ParallelOp>();
}

struct ZeroGpuCollapseLoopsPass
    : public zero::impl::ZeroGpuCollapseLoopsBase<ZeroGpuCollapseLoopsPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    getOperation()->walk([&](scf::ParallelOp loop) {
      if (isCollapsible(loop))
        loops.push_back(loop);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp loop : loops) {
      std::vector<unsigned> all(loop.getNumLoops());
      std::iota(all.begin(), all.end(), 0u);
      rewriter.setInsertionPoint(loop);
      collapseParallelLoops(rewriter, loop, {all});
    }
  }
};

} // namespace
