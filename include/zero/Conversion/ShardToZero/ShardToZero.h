//===- ShardToZero.h - the upstream shard dialect to zero -------*- C++ -*-===//
//
// Patterns that rewrite what upstream `shard-partition` emits into zero's
// ops, for an embedder's own conversion (the pass is
// `convert-shard-to-zero`).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_SHARDTOZERO_SHARDTOZERO_H
#define ZERO_CONVERSION_SHARDTOZERO_SHARDTOZERO_H

#include "mlir/IR/PatternMatch.h"

namespace zero {

/// `shard.grid` to `zero.mesh` (static shapes); `shard.all_reduce` (sum,
/// average as mean, max, min; tensors of one type), `all_gather`,
/// `reduce_scatter` and `all_slice` to `zero.all_reduce`, `all_gather`,
/// `reduce_scatter` and `shard_slice` on the same axes in the same order (a
/// collective over no axes is its input); `process_linear_index` and
/// `process_multi_index` to `zero.replica_index`; `grid_shape` to constants.
/// Conversion patterns: run them with a ConversionTarget that makes the
/// shard dialect illegal.
void populateShardToZeroPatterns(mlir::RewritePatternSet &patterns);

/// Whether `root` holds any op of the shard dialect.
bool containsShardOps(mlir::Operation *root);

/// The one-device program that a program annotated for sharding-propagation
/// stands for: each `shard.shard` is its source, and the shardings and the
/// grids nothing else names are erased. Fails, with an error on it, when a
/// grid is still named (the program has collectives: it was partitioned).
mlir::LogicalResult stripShardingAnnotations(mlir::ModuleOp module);

/// What `convert-shard-to-zero` does to `root`: fails, with an error on each
/// op zero cannot take and nothing changed, or converts every shard op.
mlir::LogicalResult convertShardToZero(mlir::Operation *root);

} // namespace zero

#endif // ZERO_CONVERSION_SHARDTOZERO_SHARDTOZERO_H
