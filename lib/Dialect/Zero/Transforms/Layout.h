//===- Layout.h - flat layouts of shards and buckets ------------*- C++ -*-===//
//
// Shards and buckets are flat: zero-shard-weight-update,
// zero-defer-all-gather and zero-combine-collectives turn tensors of any rank
// into 1-D tensors and back, and the first two cut them into the parts of a
// group (the layout #zero.shard describes). Internal to ZeroTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_LAYOUT_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_LAYOUT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Utils/Tensors.h"

namespace zero {

/// How a tensor of `numElements` elements is cut into the parts of a group:
/// flattened, padded at the end to `paddedElements` = N * `shardElements`,
/// part i on the rank with group index i. `shardElements` is ceil(numElements
/// / N) rounded up to a multiple of `alignment` (ShardAttr::getShardElements):
/// the blocks of a full reduction (kReductionBlock) when the shard feeds one.
struct GroupPartition {
  mlir::FlatSymbolRefAttr mesh;
  mlir::DenseI64ArrayAttr axes;
  int64_t numElements;
  int64_t alignment;
  int64_t shardElements;
  int64_t paddedElements;

  GroupPartition(mlir::FlatSymbolRefAttr mesh, mlir::DenseI64ArrayAttr axes,
                 int64_t numElements, int64_t groupSize, int64_t alignment = 1)
      : mesh(mesh), axes(axes), numElements(numElements), alignment(alignment),
        shardElements(
            ShardAttr::getShardElements(numElements, groupSize, alignment)),
        paddedElements(shardElements * groupSize) {}

  /// The 1-D tensor type of `size` elements of `element`.
  static mlir::RankedTensorType flatType(mlir::Type element, int64_t size) {
    return mlir::RankedTensorType::get({size}, element);
  }
  /// The type of a shard of a tensor with element type `element`.
  mlir::RankedTensorType shardType(mlir::Type element) const {
    return flatType(element, shardElements);
  }
};

/// `value` flattened and padded with zeros to the padded size.
mlir::Value flattenAndPad(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value value, const GroupPartition &layout);

/// This rank's shard of the whole value `full`: flattenAndPad, then
/// `zero.shard_slice`.
mlir::Value sliceShard(mlir::OpBuilder &b, mlir::Location loc, mlir::Value full,
                       const GroupPartition &layout);

/// The whole value, of type `whole`, of which `shard` is this rank's part:
/// `zero.all_gather` (returned in `gather` when given), then the padding
/// dropped and the shape restored.
mlir::Value gatherWhole(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value shard, const GroupPartition &layout,
                        mlir::RankedTensorType whole,
                        AllGatherOp *gather = nullptr);

/// Every rank's float `shard`, gathered flat in `element` (any float type)
/// over `axes` of `mesh` into `padded` elements, sent in `bits`-bit levels
/// (8: int8; 4: int4, two a byte): `zero.quantize` of the shard as one row
/// of blocks of `block`, `zero.all_gather` of the levels and of the scales,
/// `zero.dequantize` into `element`.
mlir::Value gatherQuantized(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value shard, mlir::FlatSymbolRefAttr mesh,
                            mlir::DenseI64ArrayAttr axes, int64_t padded,
                            mlir::Type element, int64_t block, int64_t bits);

/// The whole value, of type `whole` (any float element type), of which the
/// float `shard` is this rank's part, sent in `bits`-bit levels (8: int8;
/// 4: int4, two a byte): `zero.quantize` of the
/// shard as one row of blocks of `block`, `zero.all_gather` of the levels
/// and of the scales, `zero.dequantize` into `whole`'s element type, then
/// the padding dropped and the shape restored.
mlir::Value gatherWholeQuantized(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value shard,
                                 const GroupPartition &layout,
                                 mlir::RankedTensorType whole, int64_t block,
                                 int64_t bits);

} // namespace zero

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_LAYOUT_H
