//===- Passes.h - zero passes -----------------------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace zero {

/// The element type of the copy zero-defer-all-gather gathers (gather-dtype).
enum class GatherDtype { Auto, BF16, F16, F32 };

/// What zero-report writes (format).
enum class ReportFormat { Text, Json };

/// What zero-verify-collectives does with a collective it cannot prove
/// (mode).
enum class VerifyMode { Error, Warn };

#define GEN_PASS_DECL
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

/// The options of `zero-weight-update-sharding` and `zero-data-parallel`:
/// those of the passes they run, declared once in Passes.td.
using WeightUpdateShardingOptions = ZeroWeightUpdateShardingOptions;

/// Builds `zero-weight-update-sharding`: zero-shard-weight-update,
/// zero-defer-all-gather (with defer-all-gather), zero-combine-collectives
/// (unless bucket-bytes is 0), cse, zero-schedule-overlap (with overlap).
void buildWeightUpdateShardingPipeline(
    mlir::OpPassManager &pm, const WeightUpdateShardingOptions &options);

/// Appends `zero-data-parallel` to `pm`: a one-device program whose batch is
/// annotated with `shard.shard`, through MLIR's own data-parallel flow
/// (convert-elementwise-to-linalg, sharding-propagation, shard-partition,
/// canonicalize), then zero-weight-update-sharding with `options`.
void buildDataParallelPipeline(mlir::OpPassManager &pm,
                               const WeightUpdateShardingOptions &options);

} // namespace zero

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
