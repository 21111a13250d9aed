//===- ShardToZero.cpp - the upstream shard dialect to zero ---------------===//
//
// What `shard-partition` emits, in zero's ops: grids become meshes, the
// collectives zero's runtime runs become zero's, process indices become
// replica indices. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/ShardToZero/ShardToZero.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Transforms/DialectConversion.h"
#include "zero/Conversion/Passes.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

namespace zero {
#define GEN_PASS_DEF_CONVERTSHARDTOZERO
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// A shard group's axes as zero's: the same axes in the same order (both
/// linearize a rank's coordinates on them in that order).
DenseI64ArrayAttr getZeroAxes(Builder &b, ArrayRef<int16_t> gridAxes) {
  return b.getDenseI64ArrayAttr(llvm::map_to_vector(
      gridAxes, [](int16_t axis) { return static_cast<int64_t>(axis); }));
}

/// The zero reduction of a shard one, if zero's runtime has it.
std::optional<zero::ReductionKind> getZeroReduction(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Sum:
    return zero::ReductionKind::Sum;
  case shard::ReductionKind::Average:
    return zero::ReductionKind::Mean;
  case shard::ReductionKind::Max:
    return zero::ReductionKind::Max;
  case shard::ReductionKind::Min:
    return zero::ReductionKind::Min;
  default:
    return std::nullopt;
  }
}

struct GridToMesh : public OpConversionPattern<shard::GridOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::GridOp grid, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (llvm::any_of(grid.getShape(), ShapedType::isDynamic))
      return rewriter.notifyMatchFailure(grid, "a dynamic grid shape");
    rewriter.replaceOpWithNewOp<zero::MeshOp>(grid, grid.getSymNameAttr(),
                                              grid.getShapeAttr());
    return success();
  }
};

/// A collective over no grid axes is a group of one: its input.
template <typename OpTy>
bool replaceIfNoAxes(OpTy op, ConversionPatternRewriter &rewriter) {
  if (!op.getGridAxes().empty() ||
      op.getInput().getType() != op.getResult().getType())
    return false;
  rewriter.replaceOp(op, op.getInput());
  return true;
}

struct AllReduceToZero : public OpConversionPattern<shard::AllReduceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::AllReduceOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!isa<RankedTensorType>(op.getInput().getType()) ||
        op.getInput().getType() != op.getResult().getType())
      return rewriter.notifyMatchFailure(
          op, "zero all-reduces tensors into the same type");
    std::optional<zero::ReductionKind> kind =
        getZeroReduction(op.getReduction());
    if (!kind)
      return rewriter.notifyMatchFailure(op, "a reduction zero lacks");
    if (replaceIfNoAxes(op, rewriter))
      return success();
    rewriter.replaceOpWithNewOp<zero::AllReduceOp>(
        op, op.getInput(), op.getGridAttr(),
        getZeroAxes(rewriter, op.getGridAxes()),
        zero::ReductionKindAttr::get(op.getContext(), *kind));
    return success();
  }
};

struct AllGatherToZero : public OpConversionPattern<shard::AllGatherOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::AllGatherOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (replaceIfNoAxes(op, rewriter))
      return success();
    rewriter.replaceOpWithNewOp<zero::AllGatherOp>(
        op, op.getResult().getType(), op.getInput(), op.getGridAttr(),
        getZeroAxes(rewriter, op.getGridAxes()),
        rewriter.getI64IntegerAttr(op.getGatherAxis().getSExtValue()));
    return success();
  }
};

struct ReduceScatterToZero
    : public OpConversionPattern<shard::ReduceScatterOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::ReduceScatterOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<zero::ReductionKind> kind =
        getZeroReduction(op.getReduction());
    if (!kind)
      return rewriter.notifyMatchFailure(op, "a reduction zero lacks");
    if (replaceIfNoAxes(op, rewriter))
      return success();
    rewriter.replaceOpWithNewOp<zero::ReduceScatterOp>(
        op, op.getResult().getType(), op.getInput(), op.getGridAttr(),
        getZeroAxes(rewriter, op.getGridAxes()),
        zero::ReductionKindAttr::get(op.getContext(), *kind),
        rewriter.getI64IntegerAttr(op.getScatterAxis().getSExtValue()));
    return success();
  }
};

struct AllSliceToZero : public OpConversionPattern<shard::AllSliceOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::AllSliceOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (replaceIfNoAxes(op, rewriter))
      return success();
    rewriter.replaceOpWithNewOp<zero::ShardSliceOp>(
        op, op.getResult().getType(), op.getInput(), op.getGridAttr(),
        getZeroAxes(rewriter, op.getGridAxes()),
        rewriter.getI64IntegerAttr(op.getSliceAxis().getSExtValue()));
    return success();
  }
};

struct LinearIndexToZero
    : public OpConversionPattern<shard::ProcessLinearIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::ProcessLinearIndexOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<zero::ReplicaIndexOp>(
        op, rewriter.getIndexType(), op.getGridAttr(), DenseI64ArrayAttr());
    return success();
  }
};

/// The shape of grid `name`, seen from `op`: a shard.grid, or the zero.mesh
/// it became earlier in the conversion.
std::optional<ArrayRef<int64_t>> getGridShape(Operation *op,
                                              FlatSymbolRefAttr name) {
  if (auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, name))
    return grid.getShape();
  if (auto mesh = SymbolTable::lookupNearestSymbolFrom<zero::MeshOp>(op, name))
    return mesh.getShape();
  return std::nullopt;
}

/// The grid's axes an index op names: all of them when it names none.
std::optional<SmallVector<int64_t>> getNamedAxes(Operation *op,
                                                 FlatSymbolRefAttr gridName,
                                                 ArrayRef<int16_t> axes) {
  if (!axes.empty())
    return llvm::map_to_vector(
        axes, [](int16_t axis) { return static_cast<int64_t>(axis); });
  std::optional<ArrayRef<int64_t>> shape = getGridShape(op, gridName);
  if (!shape)
    return std::nullopt;
  return llvm::to_vector(llvm::seq<int64_t>(shape->size()));
}

struct MultiIndexToZero
    : public OpConversionPattern<shard::ProcessMultiIndexOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::ProcessMultiIndexOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<SmallVector<int64_t>> axes =
        getNamedAxes(op, op.getGridAttr(), op.getAxes());
    if (!axes)
      return rewriter.notifyMatchFailure(op, "an unknown grid");
    SmallVector<Value> indices;
    for (int64_t axis : *axes)
      indices.push_back(zero::ReplicaIndexOp::create(
          rewriter, op.getLoc(), rewriter.getIndexType(), op.getGridAttr(),
          rewriter.getDenseI64ArrayAttr({axis})));
    rewriter.replaceOp(op, indices);
    return success();
  }
};

struct GridShapeToConstants : public OpConversionPattern<shard::GridShapeOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult
  matchAndRewrite(shard::GridShapeOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    std::optional<ArrayRef<int64_t>> shape = getGridShape(op, op.getGridAttr());
    std::optional<SmallVector<int64_t>> axes =
        getNamedAxes(op, op.getGridAttr(), op.getAxes());
    if (!shape || !axes)
      return rewriter.notifyMatchFailure(op, "an unknown grid");
    SmallVector<Value> sizes;
    for (int64_t axis : *axes)
      sizes.push_back(arith::ConstantIndexOp::create(rewriter, op.getLoc(),
                                                     (*shape)[axis]));
    rewriter.replaceOp(op, sizes);
    return success();
  }
};

/// Why zero cannot take `op`, or an empty string.
std::string whyNotConvertible(Operation *op) {
  if (auto grid = dyn_cast<shard::GridOp>(op))
    return llvm::any_of(grid.getShape(), ShapedType::isDynamic)
               ? "its shape is not static; zero's meshes are"
               : "";
  if (isa<shard::ShardingOp, shard::ShardOp, shard::GetShardingOp,
          shard::ShardShapeOp>(op))
    return "it is a sharding annotation: run sharding-propagation and "
           "shard-partition first";
  auto reduction = [](shard::ReductionKind kind) -> std::string {
    return getZeroReduction(kind)
               ? ""
               : "zero reduces by sum, average, max or min, not " +
                     shard::stringifyReductionKind(kind).str();
  };
  if (auto allReduce = dyn_cast<shard::AllReduceOp>(op)) {
    if (!isa<RankedTensorType>(allReduce.getInput().getType()) ||
        allReduce.getInput().getType() != allReduce.getResult().getType())
      return "zero all-reduces tensors into a tensor of the same type";
    return reduction(allReduce.getReduction());
  }
  if (auto reduceScatter = dyn_cast<shard::ReduceScatterOp>(op))
    return reduction(reduceScatter.getReduction());
  if (isa<shard::AllGatherOp, shard::AllSliceOp, shard::ProcessLinearIndexOp,
          shard::ProcessMultiIndexOp, shard::GridShapeOp>(op))
    return "";
  return "zero's runtime has no such collective; it runs shard.all_reduce, "
         "all_gather, reduce_scatter and all_slice";
}

struct ConvertShardToZeroPass
    : public zero::impl::ConvertShardToZeroBase<ConvertShardToZeroPass> {
  void runOnOperation() override {
    if (failed(zero::convertShardToZero(getOperation())))
      signalPassFailure();
  }
};

} // namespace

void zero::populateShardToZeroPatterns(RewritePatternSet &patterns) {
  patterns.add<GridToMesh, AllReduceToZero, AllGatherToZero,
               ReduceScatterToZero, AllSliceToZero, LinearIndexToZero,
               MultiIndexToZero, GridShapeToConstants>(patterns.getContext());
}

bool zero::containsShardOps(Operation *root) {
  return root
      ->walk([](Operation *op) {
        return isa<shard::ShardDialect>(op->getDialect())
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

LogicalResult zero::convertShardToZero(Operation *root) {
  // Everything zero cannot take, each with its reason, before anything
  // changes.
  bool unsupported = false;
  root->walk([&](Operation *op) {
    if (!isa<shard::ShardDialect>(op->getDialect()))
      return;
    std::string why = whyNotConvertible(op);
    if (why.empty())
      return;
    op->emitError("cannot convert '") << op->getName() << "' to zero: " << why;
    unsupported = true;
  });
  if (unsupported)
    return failure();

  MLIRContext *context = root->getContext();
  RewritePatternSet patterns(context);
  populateShardToZeroPatterns(patterns);
  ConversionTarget target(*context);
  target.addIllegalDialect<shard::ShardDialect>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  return applyPartialConversion(root, target, std::move(patterns));
}

LogicalResult zero::stripShardingAnnotations(ModuleOp module) {
  SmallVector<shard::ShardOp> annotations;
  module.walk([&](shard::ShardOp op) { annotations.push_back(op); });
  for (shard::ShardOp op : annotations) {
    op.getResult().replaceAllUsesWith(op.getSrc());
    op.erase();
  }
  SmallVector<shard::ShardingOp> shardings;
  module.walk([&](shard::ShardingOp op) { shardings.push_back(op); });
  for (shard::ShardingOp op : shardings)
    if (op->use_empty())
      op.erase();
  for (auto grid : llvm::make_early_inc_range(module.getOps<shard::GridOp>())) {
    if (!SymbolTable::symbolKnownUseEmpty(grid, module))
      return grid.emitError("grid @")
             << grid.getSymName()
             << " is still used: not a one-device program annotated for "
                "sharding-propagation";
    grid.erase();
  }
  return success();
}
