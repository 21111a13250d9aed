//===- HostParallelLoops.cpp - elementwise loops across the host's cores --===//
//
// Each large elementwise linalg op becomes one loop over its elements, run
// as a task across the rank's share of the host's cores. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "zero/Conversion/ZeroToRuntime/HostTasks.h"
#include "zero/Target/CPU/Passes.h"

#include <numeric>

namespace zero {
#define GEN_PASS_DEF_ZEROHOSTPARALLELLOOPS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// A nest keeps its innermost loop whole inside each task iteration when
/// its outer loops make at least this many iterations, enough for the
/// chunks of every core...
constexpr int64_t kMinOuterIterations = 64;
/// ...and the innermost loop is long enough to vectorize.
constexpr int64_t kMinInnerIterations = 16;

/// The iterations of `op` when every loop is parallel and of a static size
/// and its operands are buffers; 0 otherwise.
int64_t elementwiseIterations(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumLoops() == 0)
    return 0;
  int64_t iterations = 1;
  for (int64_t size : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(size))
      return 0;
    iterations *= size;
  }
  return iterations;
}

/// `op` as one loop over flat views of its buffers, where every operand is
/// a dense buffer read at its element (each map the identity, or a 0-d
/// value): the nest's innermost loop may be short (a 3x3 convolution's
/// weight), and delinearizing each element's index keeps the loop scalar.
/// Each element is computed by the same operations. Else `op` itself.
linalg::LinalgOp flattenDenseNest(IRRewriter &rewriter, linalg::LinalgOp op) {
  if (op.getNumLoops() < 2 || !isa<linalg::GenericOp>(op))
    return op;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || (type.getRank() != 0 &&
                  (!type.getLayout().isIdentity() || !map.isIdentity())))
      return op;
  }
  ReassociationIndices all(op.getNumLoops());
  std::iota(all.begin(), all.end(), 0);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, {all}, rewriter);
  if (failed(collapsed))
    return op;
  rewriter.replaceOp(op, collapsed->results);
  // One flat view a buffer: a moment read and written in place must stay
  // one pointer in the task, or LLVM's vectorizer checks the two views for
  // overlap at run time, finds it, and runs the scalar loop.
  llvm::DenseMap<Value, Value> views;
  for (OpOperand &operand : collapsed->collapsedOp->getOpOperands()) {
    auto view = operand.get().getDefiningOp<memref::CollapseShapeOp>();
    if (!view)
      continue;
    auto [first, inserted] = views.try_emplace(view.getSrc(), view.getResult());
    if (inserted)
      continue;
    operand.set(first->second);
    if (view->use_empty())
      rewriter.eraseOp(view);
  }
  return collapsed->collapsedOp;
}

struct ZeroHostParallelLoopsPass
    : public zero::impl::ZeroHostParallelLoopsBase<ZeroHostParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minElements <= 0)
      return;
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](func::FuncOp fn) {
      if (fn->hasAttr(zero::kHostTaskAttrName))
        return;
      fn.walk([&](linalg::LinalgOp op) {
        if (elementwiseIterations(op) >= minElements)
          ops.push_back(op);
      });
    });
    IRRewriter rewriter(&getContext());
    llvm::DenseMap<Operation *, unsigned> tasks;
    for (linalg::LinalgOp op : ops) {
      op = flattenDenseNest(rewriter, op);
      auto fn = op->getParentOfType<func::FuncOp>();
      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(loops) || loops->size() != 1) {
        mlir::emitRemark(loc, "zero-host-parallel-loops: stays on one "
                              "thread: it does not become one parallel loop");
        if (succeeded(loops))
          rewriter.eraseOp(op);
        continue;
      }
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      rewriter.eraseOp(op);
      auto nest = cast<scf::ParallelOp>(loops->front());
      rewriter.setInsertionPoint(nest);
      // One loop over every element, cut into chunks of consecutive
      // elements; or, where the outer loops alone make enough chunks, one
      // over them, each iteration running the innermost loop whole, which
      // stays contiguous and vectorizes (one index delinearized per element
      // keeps the loop scalar: a block-quantization loop ran 9x slower).
      scf::ParallelOp flat = nest;
      int64_t grain = 1;
      if (nest.getNumLoops() > 1) {
        std::vector<unsigned> all(nest.getNumLoops());
        std::iota(all.begin(), all.end(), 0u);
        int64_t outerIterations = std::accumulate(
            ranges.begin(), ranges.end() - 1, int64_t(1), std::multiplies<>());
        std::vector<std::vector<unsigned>> groups = {all};
        if (outerIterations >= kMinOuterIterations &&
            ranges.back() >= kMinInnerIterations) {
          groups = {{all.begin(), all.end() - 1}, {all.back()}};
          grain = ranges.back();
        }
        // The collapsed loop replaces the nest after its bounds' arithmetic.
        Block *block = nest->getBlock();
        Operation *before = nest->getPrevNode();
        collapseParallelLoops(rewriter, nest, groups);
        Operation *next = before ? before->getNextNode() : &block->front();
        while (!isa<scf::ParallelOp>(next))
          next = next->getNextNode();
        flat = cast<scf::ParallelOp>(next);
      }
      scf::ForOp loop = zero::toSequentialLoops(flat);
      if (!zero::runAcrossCores(loop, fn, tasks[fn]++, /*queued=*/false, grain))
        mlir::emitRemark(loc)
            << "zero-host-parallel-loops: stays on one thread: it uses a "
               "value of type "
            << zero::valueTaskCannotTake(loop).getType()
            << ", which a task cannot take (" << zero::kTaskValues << ")";
    }
  }
};

} // namespace
