//===- Layout.cpp - flat layouts of shards and buckets --------------------===//

#include "Layout.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"

using namespace mlir;
using namespace zero;

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

/// The gathered, padded `flat` as `whole`: the padding dropped, the shape
/// restored.
static Value unpadWhole(OpBuilder &b, Location loc, Value flat,
                        const GroupPartition &layout, RankedTensorType whole) {
  if (layout.paddedElements != layout.numElements)
    flat = tensor::ExtractSliceOp::create(
        b, loc, flat, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(layout.numElements)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return unflatten(b, loc, flat, whole);
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
  return unpadWhole(b, loc, op.getResult(), layout, whole);
}

Value zero::gatherQuantized(OpBuilder &b, Location loc, Value shard,
                            FlatSymbolRefAttr mesh, DenseI64ArrayAttr axes,
                            int64_t padded, Type element, int64_t block,
                            int64_t bits) {
  auto shardType = cast<RankedTensorType>(shard.getType());
  int64_t size = shardType.getNumElements();
  int64_t ranks = padded / size;
  int64_t blocks = getNumQuantBlocks(size, block);
  auto rowsOf = [](int64_t rows, int64_t columns, Type element) {
    return RankedTensorType::get({rows, columns}, element);
  };
  Value row = tensor::ExpandShapeOp::create(
      b, loc, rowsOf(1, size, shardType.getElementType()), shard,
      ArrayRef<ReassociationIndices>{{0, 1}});
  Type i8 = b.getI8Type(), f32 = b.getF32Type();
  auto quantize = QuantizeOp::create(b, loc, row, block, bits);
  int64_t bytes = quantize.getValues().getType().getDimSize(1);
  auto levels = AllGatherOp::create(b, loc, rowsOf(ranks, bytes, i8),
                                    quantize.getValues(), mesh, axes,
                                    /*gather_dim=*/0);
  auto scales = AllGatherOp::create(b, loc, rowsOf(ranks, blocks, f32),
                                    quantize.getScales(), mesh, axes,
                                    /*gather_dim=*/0);
  Value rows = DequantizeOp::create(b, loc, rowsOf(ranks, size, element),
                                    levels, scales, block, bits);
  return tensor::CollapseShapeOp::create(
      b, loc, GroupPartition::flatType(element, padded), rows,
      ArrayRef<ReassociationIndices>{{0, 1}});
}

Value zero::gatherWholeQuantized(OpBuilder &b, Location loc, Value shard,
                                 const GroupPartition &layout,
                                 RankedTensorType whole, int64_t block,
                                 int64_t bits) {
  Value flat = gatherQuantized(b, loc, shard, layout.mesh, layout.axes,
                               layout.paddedElements, whole.getElementType(),
                               block, bits);
  return unpadWhole(b, loc, flat, layout, whole);
}
