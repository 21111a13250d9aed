//===- ReductionOrder.cpp - the one order of every full reduction ---------===//
//
// The blocked order of ReductionOrder.h, and zero-order-reductions, which
// lowers every full reduction in it. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/ReductionOrder.h"
#include "Layout.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROORDERREDUCTIONS
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;

/// The combiner of `like` on (element, accumulator), yielded.
static void buildCombiner(OpBuilder &b, Location loc, linalg::ReduceOp like,
                          Value element, Value accumulator) {
  Block &combiner = like.getCombiner().front();
  IRMapping mapping;
  mapping.map(combiner.getArgument(0), element);
  mapping.map(combiner.getArgument(1), accumulator);
  for (Operation &op : combiner.without_terminator())
    b.clone(op, mapping);
  linalg::YieldOp::create(
      b, loc, mapping.lookup(combiner.getTerminator()->getOperand(0)));
}

Value zero::reduceBlocks(OpBuilder &b, Location loc, linalg::ReduceOp like,
                         Value flat, TypedAttr identity, int64_t block) {
  auto type = cast<RankedTensorType>(flat.getType());
  Type element = type.getElementType();
  int64_t size = type.getNumElements();
  int64_t blocks = std::max<int64_t>(1, llvm::divideCeil(size, block));
  Value identityValue = arith::ConstantOp::create(b, loc, identity);
  if (blocks * block != size)
    flat = tensor::createPadHighOp(
        RankedTensorType::get({blocks * block}, element), flat, identityValue,
        /*nofold=*/false, loc, b);
  Value grid = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({blocks, block}, element), flat,
      ArrayRef<ReassociationIndices>{{0, 1}});
  Value empty = tensor::EmptyOp::create(b, loc, {blocks}, element);
  Value init =
      linalg::FillOp::create(b, loc, identityValue, empty).getResult(0);
  MLIRContext *context = b.getContext();
  AffineExpr blockIndex = getAffineDimExpr(0, context);
  AffineExpr elementIndex = getAffineDimExpr(1, context);
  SmallVector<AffineMap> maps = {
      AffineMap::get(2, 0, {blockIndex, elementIndex}, context),
      AffineMap::get(2, 0, {blockIndex}, context)};
  return linalg::GenericOp::create(
             b, loc, init.getType(), grid, init, maps,
             {utils::IteratorType::parallel, utils::IteratorType::reduction},
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               buildCombiner(nested, nestedLoc, like, args[0], args[1]);
             })
      .getResult(0);
}

Value zero::combineInOrder(OpBuilder &b, Location loc, linalg::ReduceOp like,
                           Value partials, Value init) {
  auto partialsType = cast<RankedTensorType>(partials.getType());
  Type element = partialsType.getElementType();
  int64_t count = partialsType.getNumElements();
  // A parallel loop of one iteration around the sequential one: on the GPU
  // a kernel of one thread, not a loop on the host reading device memory.
  Value row = tensor::ExpandShapeOp::create(
      b, loc, RankedTensorType::get({1, count}, element), partials,
      ArrayRef<ReassociationIndices>{{0, 1}});
  auto oneType = RankedTensorType::get({1}, element);
  Value start = tensor::ExpandShapeOp::create(b, loc, oneType, init,
                                              ArrayRef<ReassociationIndices>{});
  Value fresh = tensor::EmptyOp::create(b, loc, {1}, element);
  MLIRContext *context = b.getContext();
  AffineExpr i = getAffineDimExpr(0, context);
  AffineExpr k = getAffineDimExpr(1, context);
  SmallVector<AffineMap> maps = {AffineMap::get(2, 0, {i, k}, context),
                                 AffineMap::get(2, 0, {i}, context),
                                 AffineMap::get(2, 0, {i}, context)};
  Value total =
      linalg::GenericOp::create(
          b, loc, oneType, ValueRange{row, start}, fresh, maps,
          {utils::IteratorType::parallel, utils::IteratorType::reduction},
          [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
            // The accumulator starts as `init`, not as the output's
            // contents: the output is a fresh tensor, never `init`'s
            // buffer.
            Value index = linalg::IndexOp::create(nested, nestedLoc, 1);
            Value zero = arith::ConstantIndexOp::create(nested, nestedLoc, 0);
            Value first = arith::CmpIOp::create(
                nested, nestedLoc, arith::CmpIPredicate::eq, index, zero);
            Value accumulator = arith::SelectOp::create(
                nested, nestedLoc, first, args[1], args[2]);
            buildCombiner(nested, nestedLoc, like, args[0], accumulator);
          })
          .getResult(0);
  return tensor::CollapseShapeOp::create(
      b, loc, cast<RankedTensorType>(init.getType()), total,
      ArrayRef<ReassociationIndices>{});
}

namespace {

struct ZeroOrderReductionsPass
    : public zero::impl::ZeroOrderReductionsBase<ZeroOrderReductionsPass> {
  void runOnOperation() override {
    SmallVector<linalg::ReduceOp> reduces;
    getOperation()->walk(
        [&](linalg::ReduceOp reduce) { reduces.push_back(reduce); });
    for (linalg::ReduceOp reduce : reduces)
      order(reduce);
  }

  void order(linalg::ReduceOp reduce) {
    auto init = dyn_cast<RankedTensorType>(reduce.getInits()[0].getType());
    if (!init || init.getRank() != 0)
      return; // Not a full reduction: every result element has its own loop.
    std::optional<zero::ReductionCombiner> combiner =
        zero::matchFullReduction(reduce);
    if (!combiner) {
      reduce.emitRemark("left in the order its lowering gives: the combiner "
                        "is not one associative operation zero knows");
      return;
    }
    auto input = cast<RankedTensorType>(reduce.getInputs()[0].getType());
    if (!input.hasStaticShape() || !reduce.hasPureTensorSemantics()) {
      reduce.emitRemark("left in the order its lowering gives: zero orders "
                        "full reductions of tensors of static shape");
      return;
    }
    OpBuilder b(reduce);
    Location loc = reduce.getLoc();
    Value flat = zero::flatten(b, loc, reduce.getInputs()[0]);
    // A single block of fewer elements needs no padding: the identity
    // changes nothing.
    int64_t size = input.getNumElements();
    int64_t block =
        std::min(zero::getReductionBlock(size), std::max<int64_t>(size, 1));
    Value partials =
        zero::reduceBlocks(b, loc, reduce, flat, combiner->identity, block);
    Value result =
        zero::combineInOrder(b, loc, reduce, partials, reduce.getInits()[0]);
    reduce.getResult(0).replaceAllUsesWith(result);
    reduce.erase();
  }
};

} // namespace
