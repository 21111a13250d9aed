//===- FuseElementwise.cpp - one loop nest per elementwise chain ----------===//
//
// Upstream's linalg-fuse-elementwise-ops fuses a producer into its consumer
// only when the consumer is its one use. An optimizer update is a web, not a
// chain: the new first moment is read by the weight's update and also
// returned (or carried by the loop), the new weight by its bf16 copy and
// also returned. This pass fuses those too, so that each bucket's update is
// one loop nest (one GPU kernel) that reads each input once and writes each
// output once. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Loops/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROFUSEELEMENTWISE
#include "zero/Loops/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Whether the producer of `fusedOperand` may fuse into its consumer: the
/// consumer reads it once, and every other use of the producer comes after
/// the consumer in the consumer's block, so the fused op (which also returns
/// what the producer computed) replaces the producer entirely, and nothing
/// is computed twice.
bool fusesWithoutRecomputing(OpOperand *fusedOperand) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  Operation *consumer = fusedOperand->getOwner();
  if (!producer || producer->getBlock() != consumer->getBlock())
    return false;
  // The consumer reads the producer once (fusion rewires one operand).
  if (llvm::count_if(consumer->getOperands(), [&](Value operand) {
        return operand.getDefiningOp() == producer;
      }) != 1)
    return false;
  llvm::SmallPtrSet<Operation *, 4> otherUsers;
  for (Operation *user : producer->getUsers()) {
    if (user == consumer)
      continue;
    Operation *inBlock = consumer->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock || inBlock == consumer)
      return false;
    otherUsers.insert(inBlock);
  }
  // Every use follows the producer, so the others follow the consumer unless
  // one lies between the two. A walk over that stretch, not
  // isBeforeInBlock: fusion inserts ops, and renumbering the block at each
  // query is quadratic in a step of thousands of ops.
  if (otherUsers.empty())
    return true;
  for (Operation *op = consumer->getPrevNode(); op != producer;
       op = op->getPrevNode())
    if (otherUsers.contains(op))
      return false;
  return true;
}

/// Whether `op` is no loop nest (a reshape), or one without reductions.
bool isElementwiseLoopNest(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return !linalgOp || linalgOp.getNumReductionLoops() == 0;
}

/// Fuses an elementwise producer into its consumer when
/// fusesWithoutRecomputing allows, and replaces every use of both: the
/// producer's other uses read the fused op's extra results. (Upstream's
/// pattern keeps the producer for its other uses, computing it twice.)
struct FuseElementwiseWeb : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    for (OpOperand &operand : consumer->getOpOperands()) {
      if (!linalg::areElementwiseOpsFusable(&operand) ||
          !fusesWithoutRecomputing(&operand))
        continue;
      Operation *producer = operand.get().getDefiningOp();
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceAllUsesWith(original, replacement);
      rewriter.eraseOp(consumer);
      rewriter.eraseOp(producer);
      return success();
    }
    return failure();
  }
};

/// Reads a `tensor.splat` operand of a loop nest as its scalar: the splat
/// would otherwise be a loop nest (a kernel) of its own that writes a whole
/// tensor for the fused one to read back (bias corrections of Adam, a
/// clipping factor).
struct FoldSplatInput : public OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto splat = input->get().getDefiningOp<tensor::SplatOp>();
      if (!splat)
        continue;
      unsigned index = input->getOperandNumber();
      SmallVector<Value> inputs = op.getDpsInputs();
      inputs.erase(inputs.begin() + index);
      SmallVector<AffineMap> maps = op.getIndexingMapsArray();
      maps.erase(maps.begin() + index);
      auto folded = linalg::GenericOp::create(
          rewriter, op.getLoc(), op.getResultTypes(), inputs, op.getDpsInits(),
          maps, op.getIteratorTypesArray());
      rewriter.inlineRegionBefore(op.getRegion(), folded.getRegion(),
                                  folded.getRegion().begin());
      Block &body = folded.getRegion().front();
      rewriter.replaceAllUsesWith(body.getArgument(index), splat.getInput());
      body.eraseArgument(index);
      rewriter.replaceOp(op, folded.getResults());
      return success();
    }
    return failure();
  }
};

struct ZeroFuseElementwisePass
    : public zero::impl::ZeroFuseElementwiseBase<ZeroFuseElementwisePass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    patterns.add<FuseElementwiseWeb, FoldSplatInput>(context);
    // Upstream's helpers (fills and splat constants folded into the loop
    // nests that read them, outs that the payload ignores replaced by empty
    // tensors); its own fusion pattern is left out (no operand allowed).
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *) { return false; });
    // What upstream's pass adds: reshapes folded into the loop nests where
    // the reshaped value has one use, and the cleanups fusion needs. Only
    // into elementwise loop nests: folded into a matmul (a convolution's
    // weight collapsed to rows x features), a reshape makes it a
    // contraction over several dimensions, which is no GEMM
    // (zero-gemm-calls) but a loop nest, some 40 times slower.
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *fusedOperand) {
          Operation *producer = fusedOperand->get().getDefiningOp();
          return producer && producer->hasOneUse() &&
                 isElementwiseLoopNest(producer) &&
                 isElementwiseLoopNest(fusedOperand->getOwner());
        });
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(
            applyPatternsGreedily(getOperation(), std::move(patterns), config)))
      return signalPassFailure();
  }
};

} // namespace
