//===- Layout.cpp - flat layouts of shards and buckets --------------------===//

#include "Layout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

using namespace mlir;

/// The reassociation that collapses all `rank` dimensions into one (none for
/// a 0-d tensor).
static SmallVector<ReassociationIndices> collapseAll(int64_t rank) {
  if (rank == 0)
    return {};
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

Value zero::flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value, collapseAll(0));
  return tensor::CollapseShapeOp::create(b, loc, value,
                                         collapseAll(type.getRank()));
}

Value zero::unflatten(OpBuilder &b, Location loc, Value flat,
                      RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat, collapseAll(0));
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       collapseAll(type.getRank()));
}

Value zero::flattenAndPad(OpBuilder &b, Location loc, Value value,
                          const ShardLayout &layout) {
  Type element = cast<RankedTensorType>(value.getType()).getElementType();
  value = flatten(b, loc, value);
  if (layout.paddedElements == layout.numElements)
    return value;
  // The padding is computed on and dropped, never read into a real element.
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  return tensor::createPadHighOp(
      ShardLayout::flatType(element, layout.paddedElements), value, zero,
      /*nofold=*/false, loc, b);
}

Value zero::sliceShard(OpBuilder &b, Location loc, Value full,
                       const ShardLayout &layout) {
  Type element = cast<RankedTensorType>(full.getType()).getElementType();
  return ShardSliceOp::create(b, loc, layout.shardType(element),
                              flattenAndPad(b, loc, full, layout), layout.mesh,
                              layout.axes, /*dim=*/0);
}

Value zero::gatherWhole(OpBuilder &b, Location loc, Value shard,
                        const ShardLayout &layout, RankedTensorType whole,
                        AllGatherOp *gather) {
  auto op = AllGatherOp::create(
      b, loc,
      ShardLayout::flatType(whole.getElementType(), layout.paddedElements),
      shard, layout.mesh, layout.axes, /*gather_dim=*/0);
  if (gather)
    *gather = op;
  Value flat = op.getResult();
  if (layout.paddedElements != layout.numElements)
    flat = tensor::ExtractSliceOp::create(
        b, loc, flat, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(layout.numElements)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return unflatten(b, loc, flat, whole);
}
