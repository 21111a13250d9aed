//===- GpuParallelFirst.cpp - parallel loops outside reductions ----------===//
//
// A partial reduction whose reduced dimension comes first (a sum over a
// batch's rows) would become a host loop launching one kernel per row; with
// its parallel dimensions first it is one kernel. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "zero/Target/GPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUPARALLELFIRST
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The loops of `op` in their new order, the parallel ones first and each
/// kind in its order; empty when a reduction comes before no parallel loop.
SmallVector<unsigned> parallelFirst(linalg::LinalgOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> parallel, reductions;
  for (auto [index, iterator] : llvm::enumerate(iterators))
    (linalg::isParallelIterator(iterator) ? parallel : reductions)
        .push_back(index);
  if (reductions.empty() || parallel.empty() ||
      parallel.back() < reductions.front())
    return {};
  parallel.append(reductions);
  return parallel;
}

struct ZeroGpuParallelFirstPass
    : public zero::impl::ZeroGpuParallelFirstBase<ZeroGpuParallelFirstPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!parallelFirst(op).empty())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      SmallVector<unsigned> order = parallelFirst(op);
      rewriter.setInsertionPoint(op);
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic) {
        FailureOr<linalg::GenericOp> general =
            linalg::generalizeNamedOp(rewriter, op);
        if (failed(general)) {
          mlir::emitRemark(op.getLoc(),
                           "its reduction stays the outer loop: it has no "
                           "generic form (a host loop of kernels on the GPU)");
          continue;
        }
        generic = *general;
      }
      if (failed(linalg::interchangeGenericOp(rewriter, generic, order)))
        mlir::emitRemark(generic.getLoc(),
                         "its reduction stays the outer loop: the loops "
                         "cannot be interchanged (a host loop of kernels on "
                         "the GPU)");
    }
  }
};

} // namespace
