//===- Layout.cpp - flat layouts of shards and buckets --------------------===//

#include "Layout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

using namespace mlir;

Value zero::flattenAndPad(OpBuilder &b, Location loc, Value value,
                          const GroupPartition &layout) {
  Type element = cast<RankedTensorType>(value.getType()).getElementType();
  value = flatten(b, loc, value);
  if (layout.paddedElements == layout.numElements)
    return value;
  // The padding is computed on and dropped, never read into a real element.
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  return tensor::createPadHighOp(
      GroupPartition::flatType(element, layout.paddedElements), value, zero,
      /*nofold=*/false, loc, b);
}

Value zero::sliceShard(OpBuilder &b, Location loc, Value full,
                       const GroupPartition &layout) {
  Type element = cast<RankedTensorType>(full.getType()).getElementType();
  return ShardSliceOp::create(b, loc, layout.shardType(element),
                              flattenAndPad(b, loc, full, layout), layout.mesh,
                              layout.axes, /*dim=*/0);
}

Value zero::gatherWhole(OpBuilder &b, Location loc, Value shard,
                        const GroupPartition &layout, RankedTensorType whole,
                        AllGatherOp *gather) {
  auto op = AllGatherOp::create(
      b, loc,
      GroupPartition::flatType(whole.getElementType(), layout.paddedElements),
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
