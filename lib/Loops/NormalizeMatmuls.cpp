//===- NormalizeMatmuls.cpp - matmuls in one form ------------------------===//
//
// A matmul reaches the lowering in several spellings: a linalg.matmul, its
// generic form (what linalg-generalize-named-ops and front ends write), and
// either reading a linalg.transpose for a linear layer's x W^T or its
// gradient's dy^T x. One form, a linalg.matmul whose indexing maps read
// each operand as stored, lets the GEMM call take every spelling (so the
// forms compute alike), keeps elementwise fusion out of the contraction,
// and makes no transposed copy. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "zero/Loops/NormalizeMatmuls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "zero/Loops/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZERONORMALIZEMATMULS
#include "zero/Loops/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// `map`, reading the input of a transpose by `permutation` where it read
/// the transpose's result: result dimension i of the transpose is input
/// dimension permutation[i].
AffineMap throughTranspose(AffineMap map, ArrayRef<int64_t> permutation) {
  SmallVector<AffineExpr> results(map.getNumResults());
  for (auto [i, dimension] : llvm::enumerate(permutation))
    results[dimension] = map.getResult(i);
  return AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                        map.getContext());
}

/// Whether `value`, in a linalg body, is block argument `index` of `body`,
/// or its arith.extf.
bool isArgumentOrWidened(Value value, Block *body, unsigned index) {
  if (auto widen = value.getDefiningOp<arith::ExtFOp>())
    value = widen.getIn();
  return value == body->getArgument(index);
}

/// Whether `body` adds the product of its two inputs (each widened or not)
/// to its output and does nothing else: a matmul's body.
bool addsProductToOutput(Block *body) {
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto sum = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  // At most two widenings, the product, the sum and the yield.
  if (!sum || body->getOperations().size() > 5)
    return false;
  Value output = body->getArgument(2);
  Value other = sum.getLhs() == output   ? sum.getRhs()
                : sum.getRhs() == output ? sum.getLhs()
                                         : Value();
  auto product = other ? other.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!product)
    return false;
  // IEEE addition and multiplication commute: either order is the same.
  Value x = product.getLhs(), y = product.getRhs();
  return (isArgumentOrWidened(x, body, 0) && isArgumentOrWidened(y, body, 1)) ||
         (isArgumentOrWidened(x, body, 1) && isArgumentOrWidened(y, body, 0));
}

/// A generic matmul as the linalg.matmul it is. Upstream's
/// linalg-specialize-generic-ops builds invalid ops for the transposed
/// forms, so the maps are renamed to the matmul's own here.
struct SpecializeGenericMatmul : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    return zero::specializeMatmul(rewriter, op);
  }
};

/// A matmul on tensors whose input is a linalg.transpose reads the
/// transpose's input through the composed indexing map. Each element is
/// the same product in the same order: only where it is read from changes.
struct FoldTransposeIntoMatmul : OpRewritePattern<linalg::MatmulOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::MatmulOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return rewriter.notifyMatchFailure(op, "not on tensors");
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<std::pair<unsigned, Value>> sources;
    for (OpOperand *input : op.getDpsInputOperands()) {
      auto transpose = input->get().getDefiningOp<linalg::TransposeOp>();
      if (!transpose)
        continue;
      unsigned index = input->getOperandNumber();
      maps[index] = throughTranspose(maps[index], transpose.getPermutation());
      sources.push_back({index, transpose.getInput()});
    }
    if (sources.empty())
      return rewriter.notifyMatchFailure(op, "reads no transpose");
    rewriter.modifyOpInPlace(op, [&] {
      for (auto [index, source] : sources)
        op->setOperand(index, source);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

struct ZeroNormalizeMatmulsPass
    : public zero::impl::ZeroNormalizeMatmulsBase<ZeroNormalizeMatmulsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    zero::populateNormalizeMatmulsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

std::optional<SmallVector<AffineMap>> zero::matmulMapsOf(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op.getNumLoops() != 3 || op.getNumReductionLoops() != 1 ||
      op->getNumResults() > 1 || !addsProductToOutput(op.getBody()))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps, [](AffineMap map) {
        return map.isProjectedPermutation() && map.getNumResults() == 2;
      }))
    return std::nullopt;
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  unsigned m = maps[2].getDimPosition(0), n = maps[2].getDimPosition(1);
  // The matmul's name for each of the generic's loops: m, n, k.
  SmallVector<AffineExpr> renamed(3);
  renamed[m] = getAffineDimExpr(0, op.getContext());
  renamed[n] = getAffineDimExpr(1, op.getContext());
  renamed[reductions[0]] = getAffineDimExpr(2, op.getContext());
  if (llvm::is_contained(renamed, AffineExpr()))
    return std::nullopt; // C does not read both parallel loops
  for (AffineMap &map : maps)
    map = map.replaceDimsAndSymbols(renamed, {}, 3, 0);
  if (!zero::readsTransposed(maps[0], 0, 2) ||
      !zero::readsTransposed(maps[1], 2, 1))
    return std::nullopt;
  return maps;
}

std::optional<bool> zero::readsTransposed(AffineMap map, unsigned rows,
                                          unsigned columns) {
  if (map.getNumResults() != 2 || !map.isProjectedPermutation())
    return std::nullopt;
  unsigned first = map.getDimPosition(0), second = map.getDimPosition(1);
  if (first == rows && second == columns)
    return false;
  if (first == columns && second == rows)
    return true;
  return std::nullopt;
}

FailureOr<linalg::MatmulOp> zero::specializeMatmul(RewriterBase &rewriter,
                                                   linalg::GenericOp op) {
  std::optional<SmallVector<AffineMap>> maps = matmulMapsOf(op);
  if (!maps)
    return rewriter.notifyMatchFailure(op, "not a matmul");
  rewriter.setInsertionPoint(op);
  auto matmul =
      linalg::MatmulOp::create(rewriter, op.getLoc(), op.getResultTypes(),
                               op.getDpsInputs(), op.getDpsInits());
  matmul.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(*maps));
  rewriter.replaceOp(op, matmul);
  return matmul;
}

void zero::populateNormalizeMatmulsPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldTransposeIntoMatmul, SpecializeGenericMatmul>(
      patterns.getContext());
}
