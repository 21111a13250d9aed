//===- FoldTransposes.cpp - transposes read by matmuls as indexing maps ---===//
//
// A linear layer's forward is x W^T and its backward dy^T x: programs (ours
// and those MLIR front ends emit) spell the transpose as a linalg.transpose
// that a linalg.matmul reads, which bufferizes to a transposed copy of the
// weight. linalg.matmul can read an operand transposed through its indexing
// maps, and a GEMM can read it so as stored (cuBLAS's transa and transb),
// so the copy, its memory and its pass over memory go. See Passes.td for
// the contract.
//
//===----------------------------------------------------------------------===//

#include "zero/Loops/FoldTransposes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "zero/Loops/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROFOLDTRANSPOSESINTOMATMULS
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

struct ZeroFoldTransposesIntoMatmulsPass
    : public zero::impl::ZeroFoldTransposesIntoMatmulsBase<
          ZeroFoldTransposesIntoMatmulsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    zero::populateFoldTransposesIntoMatmulsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace

void zero::populateFoldTransposesIntoMatmulsPatterns(
    RewritePatternSet &patterns) {
  patterns.add<FoldTransposeIntoMatmul>(patterns.getContext());
}
