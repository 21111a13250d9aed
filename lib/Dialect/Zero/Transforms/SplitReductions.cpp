//===- SplitReductions.cpp - reductions as partial sums and a combine -----===//
//
// A linalg.reduce into 0-d (its input flattened to 1-D) becomes partial
// results over the columns of a [K, B] view (a linalg.generic whose parallel loop is the outer one: B threads,
// neighbouring threads reading neighbouring elements) and a reduce of the B
// partials: on the GPU, one kernel of B threads and one of a single thread,
// instead of a loop on the host. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include <cmath>
#include <numeric>

namespace zero {
#define GEN_PASS_DEF_ZEROSPLITREDUCTIONS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The identity of the combiner of `reduce` (x op identity == x for every x,
/// -0.0 included), or null when the combiner is not one binary op of the
/// block's two arguments that the pass knows.
TypedAttr getIdentity(linalg::ReduceOp reduce) {
  Block &body = reduce.getCombiner().front();
  if (body.getOperations().size() != 2 || body.getNumArguments() != 2)
    return {};
  Operation *op = &body.front();
  Value result = body.getTerminator()->getOperand(0);
  if (op->getNumOperands() != 2 || op->getResult(0) != result ||
      !llvm::is_contained(op->getOperands(), body.getArgument(0)) ||
      !llvm::is_contained(op->getOperands(), body.getArgument(1)))
    return {};
  Type type = result.getType();
  Builder b(reduce.getContext());
  if (auto f = dyn_cast<FloatType>(type)) {
    const llvm::fltSemantics &semantics = f.getFloatSemantics();
    if (isa<arith::AddFOp>(op))
      return b.getFloatAttr(f, llvm::APFloat::getZero(semantics, true));
    if (isa<arith::MulFOp>(op))
      return b.getFloatAttr(f, 1.0);
    if (isa<arith::MaximumFOp>(op))
      return b.getFloatAttr(f, llvm::APFloat::getInf(semantics, true));
    if (isa<arith::MinimumFOp>(op))
      return b.getFloatAttr(f, llvm::APFloat::getInf(semantics, false));
    return {};
  }
  auto i = dyn_cast<IntegerType>(type);
  if (!i)
    return {};
  unsigned width = i.getWidth();
  if (isa<arith::AddIOp, arith::OrIOp, arith::XOrIOp>(op))
    return b.getIntegerAttr(i, 0);
  if (isa<arith::MulIOp>(op))
    return b.getIntegerAttr(i, 1);
  if (isa<arith::AndIOp>(op))
    return b.getIntegerAttr(i, llvm::APInt::getAllOnes(width));
  if (isa<arith::MaxSIOp>(op))
    return b.getIntegerAttr(i, llvm::APInt::getSignedMinValue(width));
  if (isa<arith::MinSIOp>(op))
    return b.getIntegerAttr(i, llvm::APInt::getSignedMaxValue(width));
  if (isa<arith::MaxUIOp>(op))
    return b.getIntegerAttr(i, 0);
  if (isa<arith::MinUIOp>(op))
    return b.getIntegerAttr(i, llvm::APInt::getAllOnes(width));
  return {};
}

/// Builds the combiner of `like` on `arguments` (element, accumulator).
void buildCombiner(OpBuilder &b, Location loc, linalg::ReduceOp like,
                   ValueRange arguments) {
  Block &combiner = like.getCombiner().front();
  IRMapping mapping;
  mapping.map(combiner.getArguments(), arguments.take_front(2));
  for (Operation &op : combiner.without_terminator())
    b.clone(op, mapping);
  linalg::YieldOp::create(
      b, loc, mapping.lookup(combiner.getTerminator()->getOperand(0)));
}

/// The partial results of `grid` ([K, B]) into `init` ([B]): partial b
/// combines column b. The loop over b is the outer, parallel one and the
/// loop over k the inner one, so that one kernel computes all partials,
/// each thread walking its column (neighbouring threads read neighbouring
/// elements).
Value createPartials(OpBuilder &b, Location loc, linalg::ReduceOp like,
                     Value grid, Value init) {
  MLIRContext *context = b.getContext();
  AffineExpr column = getAffineDimExpr(0, context);
  AffineExpr row = getAffineDimExpr(1, context);
  SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {row, column}, context),
                                 AffineMap::get(2, 0, {column}, context)};
  auto partials = linalg::GenericOp::create(
      b, loc, init.getType(), grid, init, maps,
      {utils::IteratorType::parallel, utils::IteratorType::reduction},
      [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
        buildCombiner(nested, nestedLoc, like, arguments);
      });
  return partials.getResult(0);
}

struct ZeroSplitReductionsPass
    : public zero::impl::ZeroSplitReductionsBase<ZeroSplitReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxParts < 1) {
      getOperation()->emitError("zero-split-reductions: max-parts must be "
                                "positive, got ")
          << static_cast<int64_t>(maxParts);
      return signalPassFailure();
    }
    SmallVector<linalg::ReduceOp> reduces;
    getOperation()->walk(
        [&](linalg::ReduceOp reduce) { reduces.push_back(reduce); });
    for (linalg::ReduceOp reduce : reduces)
      split(reduce);
  }

  void split(linalg::ReduceOp reduce) {
    if (reduce.getInputs().size() != 1 || reduce.getInits().size() != 1 ||
        !reduce.hasPureTensorSemantics())
      return;
    auto inputType =
        dyn_cast<RankedTensorType>(reduce.getInputs()[0].getType());
    auto initType = dyn_cast<RankedTensorType>(reduce.getInits()[0].getType());
    if (!inputType || !initType || inputType.getRank() < 1 ||
        !inputType.hasStaticShape() || initType.getRank() != 0)
      return;
    TypedAttr identity = getIdentity(reduce);
    if (!identity) {
      reduce.emitRemark("not split: its combiner is not one known "
                        "associative operation");
      return;
    }
    int64_t n = inputType.getNumElements();
    // About sqrt(n) partials of about sqrt(n) elements each, so that both
    // steps are short: B a power of two, at most max-parts.
    int64_t parts = int64_t(1) << llvm::Log2_64_Ceil(std::max<int64_t>(
                        1, static_cast<int64_t>(std::ceil(std::sqrt(n)))));
    parts = std::min<int64_t>(parts, maxParts);
    int64_t rows = llvm::divideCeil(n, parts);

    OpBuilder b(reduce);
    Location loc = reduce.getLoc();
    Type element = inputType.getElementType();
    Value identityValue = arith::ConstantOp::create(b, loc, identity);
    Value input = reduce.getInputs()[0];
    // A reduction over every dimension (into 0-d) is one over the elements
    // in row-major order, the order of the loops it would become.
    if (inputType.getRank() > 1) {
      ReassociationIndices all(inputType.getRank());
      std::iota(all.begin(), all.end(), 0);
      input = tensor::CollapseShapeOp::create(
          b, loc, RankedTensorType::get({n}, element), input,
          ArrayRef<ReassociationIndices>{all});
    }
    if (rows * parts != n) {
      auto padded = RankedTensorType::get({rows * parts}, element);
      input = tensor::PadOp::create(
          b, loc, padded, input, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(rows * parts - n)},
          identityValue);
    }
    Value grid = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({rows, parts}, element), input,
        ArrayRef<ReassociationIndices>{{0, 1}});
    Value empty = tensor::EmptyOp::create(b, loc, {parts}, element);
    Value partialInit =
        linalg::FillOp::create(b, loc, identityValue, empty).getResult(0);
    Value partials = createPartials(b, loc, reduce, grid, partialInit);
    Value row = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1, parts}, element), partials,
        ArrayRef<ReassociationIndices>{{0, 1}});
    Value init = tensor::ExpandShapeOp::create(
        b, loc, RankedTensorType::get({1}, element), reduce.getInits()[0],
        ArrayRef<ReassociationIndices>{});
    Value total =
        linalg::ReduceOp::create(
            b, loc, row, init, ArrayRef<int64_t>{1},
            [&](OpBuilder &nested, Location nestedLoc, ValueRange arguments) {
              buildCombiner(nested, nestedLoc, reduce, arguments);
            })
            .getResult(0);
    Value result = tensor::CollapseShapeOp::create(
        b, loc, initType, total, ArrayRef<ReassociationIndices>{});
    reduce.getResult(0).replaceAllUsesWith(result);
    reduce.erase();
  }
};

} // namespace
