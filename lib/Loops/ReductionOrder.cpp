//===- ReductionOrder.cpp - the one order of every full reduction ---------===//
//
// The blocked order of ReductionOrder.h, and zero-order-reductions, which
// lowers every full reduction in it. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Loops/ReductionOrder.h"
#include "zero/Utils/Tensors.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Loops/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROORDERREDUCTIONS
#include "zero/Loops/Passes.h.inc"
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

FailureOr<linalg::ReduceOp>
zero::splitFullReduction(OpBuilder &b, linalg::GenericOp generic) {
  if (generic.getNumDpsInits() != 1 || generic.getNumDpsInputs() == 0 ||
      !generic.hasPureTensorSemantics() ||
      generic.getNumReductionLoops() != generic.getNumLoops())
    return failure();
  auto init = dyn_cast<RankedTensorType>(generic.getDpsInits()[0].getType());
  if (!init || init.getRank() != 0)
    return failure();
  SmallVector<Value> inputs = generic.getDpsInputs();
  RankedTensorType shape;
  for (OpOperand *input : generic.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || !generic.getMatchingIndexingMap(input).isIdentity() ||
        (shape && type.getShape() != shape.getShape()))
      return failure();
    shape = type;
  }
  // yield combine(x, out), x computed without out.
  Block &body = *generic.getBlock();
  BlockArgument out = body.getArguments().back();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  Operation *combine = yield.getValues()[0].getDefiningOp();
  if (!combine || combine->getBlock() != &body ||
      combine->getNumOperands() != 2 || combine->getNumResults() != 1 ||
      !out.hasOneUse() || out.getUses().begin()->getOwner() != combine ||
      !combine->getResult(0).hasOneUse())
    return failure();
  Value x = combine->getOperand(combine->getOperand(0) == out ? 1 : 0);
  for (Operation &op : body.without_terminator())
    if (&op != combine && (op.getNumRegions() != 0 || !isPure(&op)))
      return failure();

  Location loc = generic.getLoc();
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(generic);
  int64_t rank = shape.getRank();
  MLIRContext *context = generic.getContext();
  // The elements reduced: an input itself, or a parallel loop nest computing
  // f from the inputs with the generic's own body up to the combine.
  Value elements;
  linalg::GenericOp map;
  if (auto arg = dyn_cast<BlockArgument>(x); arg && arg.getOwner() == &body) {
    elements = inputs[arg.getArgNumber()];
  } else {
    Value empty =
        tensor::EmptyOp::create(b, loc, shape.getShape(), x.getType());
    SmallVector<AffineMap> maps(
        inputs.size() + 1, AffineMap::getMultiDimIdentityMap(rank, context));
    map = linalg::GenericOp::create(
        b, loc, TypeRange{empty.getType()}, inputs, ValueRange{empty}, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          IRMapping mapping;
          mapping.map(body.getArguments().drop_back(),
                      args.take_front(inputs.size()));
          for (Operation &op : body.without_terminator())
            if (&op != combine)
              nested.clone(op, mapping);
          linalg::YieldOp::create(nested, nestedLoc, mapping.lookup(x));
        });
    elements = map.getResult(0);
  }
  SmallVector<int64_t> dimensions = llvm::to_vector(llvm::seq<int64_t>(rank));
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{elements}, generic.getDpsInits(), dimensions,
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        IRMapping mapping;
        mapping.map(x, args[0]);
        mapping.map(out, args[1]);
        Operation *clone = nested.clone(*combine, mapping);
        linalg::YieldOp::create(nested, nestedLoc, clone->getResults());
      });
  if (!matchFullReduction(reduce)) {
    // Not a combiner zero knows: undo.
    reduce.erase();
    if (map)
      map.erase();
    return failure();
  }
  generic.getResult(0).replaceAllUsesWith(reduce.getResult(0));
  generic.erase();
  return reduce;
}

void zero::splitFullReductions(Operation *root) {
  SmallVector<linalg::GenericOp> generics;
  root->walk([&](linalg::GenericOp generic) { generics.push_back(generic); });
  OpBuilder b(root->getContext());
  for (linalg::GenericOp generic : generics)
    (void)splitFullReduction(b, generic);
}

namespace {

struct ZeroOrderReductionsPass
    : public zero::impl::ZeroOrderReductionsBase<ZeroOrderReductionsPass> {
  void runOnOperation() override {
    zero::splitFullReductions(getOperation());
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
      mlir::emitRemark(reduce.getLoc(),
                       "left in the order its lowering gives: the combiner "
                       "is not one associative operation zero knows");
      return;
    }
    auto input = cast<RankedTensorType>(reduce.getInputs()[0].getType());
    if (!input.hasStaticShape() || !reduce.hasPureTensorSemantics()) {
      mlir::emitRemark(reduce.getLoc(),
                       "left in the order its lowering gives: zero orders "
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
