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
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Conversion/ZeroToRuntime/HostTasks.h"
#include "zero/Target/CPU/Passes.h"
#include "zero/Utils/Buffers.h"

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

/// An op made one loop for a task: over its elements, or over its rows
/// (`grain` elements each, the innermost loop run whole).
struct ElementLoop {
  scf::ForOp loop;
  int64_t grain = 1;
  /// The op's iterations: the loop's, times `grain`.
  int64_t elements = 0;
};

/// `op` (elementwise, static: elementwiseIterations) as one `scf.for` over
/// its elements or rows, in its place; none, with a remark, where it does
/// not become one parallel loop.
std::optional<ElementLoop> toElementLoop(IRRewriter &rewriter,
                                         linalg::LinalgOp op) {
  op = flattenDenseNest(rewriter, op);
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::LinalgLoops> loops =
      linalg::linalgOpToParallelLoops(rewriter, op);
  if (failed(loops) || loops->size() != 1) {
    mlir::emitRemark(loc, "zero-host-parallel-loops: stays on one "
                          "thread: it does not become one parallel loop");
    if (succeeded(loops))
      rewriter.eraseOp(op);
    return std::nullopt;
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
    int64_t outerIterations = std::accumulate(ranges.begin(), ranges.end() - 1,
                                              int64_t(1), std::multiplies<>());
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
  // Its bound as the constant it is (collapsing multiplied the sizes), for
  // a task that runs it beside other loops.
  int64_t elements = std::accumulate(ranges.begin(), ranges.end(), int64_t(1),
                                     std::multiplies<>());
  if (getConstantIntValue(loop.getLowerBound()) == 0 &&
      getConstantIntValue(loop.getStep()) == 1) {
    rewriter.setInsertionPoint(loop);
    loop.setUpperBound(
        arith::ConstantIndexOp::create(rewriter, loc, elements / grain));
  }
  return ElementLoop{loop, grain, elements};
}

/// The buffers an elementwise op reads and writes, each as its origin.
struct Footprint {
  llvm::SmallPtrSet<Value, 8> reads, writes;

  explicit Footprint(linalg::LinalgOp op) {
    for (OpOperand &operand : op->getOpOperands()) {
      if (!isa<BaseMemRefType>(operand.get().getType()))
        continue;
      Value origin = zero::bufferOrigin(operand.get());
      reads.insert(origin);
      if (op.isDpsInit(&operand))
        writes.insert(origin);
    }
  }

  /// Whether the two may run at once: neither writes a buffer the other
  /// touches.
  bool independentOf(const Footprint &other) const {
    auto touches = [](const Footprint &f, Value origin) {
      return f.reads.contains(origin) || f.writes.contains(origin);
    };
    return llvm::none_of(writes, [&](Value v) { return touches(other, v); }) &&
           llvm::none_of(other.writes,
                         [&](Value v) { return touches(*this, v); });
  }
};

/// The runs of `block`'s elementwise ops (elementwiseIterations) that may
/// share one task: consecutive but for ops that touch no memory (views,
/// index arithmetic), and each independent of the others.
SmallVector<SmallVector<linalg::LinalgOp>> independentRuns(Block &block) {
  SmallVector<SmallVector<linalg::LinalgOp>> runs;
  SmallVector<Footprint> footprints;
  bool open = false;
  for (Operation &op : block) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (linalgOp && elementwiseIterations(linalgOp) > 0) {
      Footprint footprint(linalgOp);
      if (!open || !llvm::all_of(footprints, [&](const Footprint &f) {
            return f.independentOf(footprint);
          })) {
        runs.emplace_back();
        footprints.clear();
      }
      runs.back().push_back(linalgOp);
      footprints.push_back(std::move(footprint));
      open = true;
      continue;
    }
    if (op.getNumRegions() == 0 && isMemoryEffectFree(&op))
      continue;
    open = false;
  }
  return runs;
}

struct ZeroHostParallelLoopsPass
    : public zero::impl::ZeroHostParallelLoopsBase<ZeroHostParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (minElements <= 0)
      return;
    SmallVector<SmallVector<linalg::LinalgOp>> runs;
    getOperation().walk([&](func::FuncOp fn) {
      if (fn->hasAttr(zero::kHostTaskAttrName))
        return;
      fn.walk([&](Block *block) {
        for (SmallVector<linalg::LinalgOp> &run : independentRuns(*block)) {
          int64_t elements = 0;
          for (linalg::LinalgOp op : run)
            elements += elementwiseIterations(op);
          if (elements >= minElements)
            runs.push_back(std::move(run));
        }
      });
    });
    IRRewriter rewriter(&getContext());
    llvm::DenseMap<Operation *, unsigned> tasks;
    for (ArrayRef<linalg::LinalgOp> run : runs) {
      auto fn = run.front()->getParentOfType<func::FuncOp>();
      SmallVector<ElementLoop> loops;
      for (linalg::LinalgOp op : run)
        if (std::optional<ElementLoop> loop = toElementLoop(rewriter, op))
          loops.push_back(*loop);
      if (loops.empty())
        continue;
      if (loops.size() > 1 && runTogether(loops, fn, tasks[fn]))
        continue;
      for (ElementLoop &each : loops)
        runAlone(each, fn, tasks[fn]);
    }
  }

  /// Runs `each` across the cores as a task of its own, where it is large
  /// enough; says why where it stays on one thread.
  void runAlone(ElementLoop &each, func::FuncOp fn, unsigned &index) {
    if (each.elements < minElements)
      return;
    if (zero::runAcrossCores(each.loop, fn, index, /*queued=*/false,
                             each.grain)) {
      ++index;
      return;
    }
    // The loop is left as it was.
    mlir::emitRemark(each.loop.getLoc())
        << "zero-host-parallel-loops: stays on one thread: it uses a "
           "value of type "
        << zero::valueTaskCannotTake(each.loop).getType()
        << ", which a task cannot take (" << zero::kTaskValues << ")";
  }

  /// Runs `loops` across the cores as one task, each thread its part of
  /// every loop, where each has constant bounds and a task can take them:
  /// one wait for all, not one for each. The task runs where the last loop
  /// is; the ops between the loops touch no memory.
  bool runTogether(ArrayRef<ElementLoop> loops, func::FuncOp fn,
                   unsigned &index) {
    SmallVector<scf::ForOp> forLoops;
    int64_t elements = 0, shared = 0;
    for (const ElementLoop &each : loops) {
      std::optional<int64_t> count = zero::constantTripCount(each.loop);
      if (!count)
        return false;
      forLoops.push_back(each.loop);
      elements += each.elements;
      shared = std::max(shared, *count);
    }
    int64_t grain = std::max<int64_t>(1, elements / shared);
    if (!zero::runTogetherAcrossCores(forLoops, fn, index, grain))
      return false;
    ++index;
    return true;
  }
};

} // namespace
