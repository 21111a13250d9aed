//===- Passes.h - zero's pipelines ------------------------------*- C++ -*-===//
//
// zero's four pipelines (Passes.td): zero-weight-update-sharding and
// zero-data-parallel shard a training step, zero-to-llvm and zero-to-nvvm
// lower it. Each is a pass, registered with every tool that calls
// zero::registerAllPasses(), and a function that appends the same passes to
// your own pass manager, with the pass's options as a struct.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_PIPELINES_PASSES_H
#define ZERO_PIPELINES_PASSES_H

#include "mlir/Pass/Pass.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Target/GPU/Options.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace zero {

#define GEN_PASS_DECL
#include "zero/Pipelines/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Pipelines/Passes.h.inc"

/// The options of `zero-weight-update-sharding` and `zero-data-parallel`:
/// those of the passes they run.
using WeightUpdateShardingOptions = ZeroWeightUpdateShardingOptions;

/// Appends `zero-weight-update-sharding` to `pm`: zero-verify-collectives,
/// convert-shard-to-zero, zero-accumulate-locally (with
/// accumulate-locally), zero-shard-weight-update, zero-defer-all-gather
/// (with defer-all-gather), zero-combine-collectives (unless bucket-bytes is
/// 0), cse, zero-schedule-overlap (with overlap), zero-verify-collectives.
void buildWeightUpdateShardingPipeline(
    mlir::OpPassManager &pm, const WeightUpdateShardingOptions &options);

/// Appends `zero-data-parallel` to `pm`: a one-device program whose batch is
/// annotated with `shard.shard`, through MLIR's own data-parallel flow
/// (convert-elementwise-to-linalg, sharding-propagation, shard-partition,
/// canonicalize), then zero-weight-update-sharding with `options`.
void buildDataParallelPipeline(mlir::OpPassManager &pm,
                               const WeightUpdateShardingOptions &options);

/// Appends `zero-to-llvm` to `pm`: a program in tensors to the LLVM dialect
/// for the CPU, with collectives as runtime calls.
void buildZeroToLLVMPipeline(mlir::OpPassManager &pm,
                             const ZeroToLLVMOptions &options = {});

/// Appends `zero-to-nvvm` to `pm`: a program in tensors to host code in the
/// LLVM dialect that launches CUDA kernels, embedded for `options.chip`.
void buildZeroToNVVMPipeline(mlir::OpPassManager &pm,
                             const ZeroToNVVMOptions &options = {});

} // namespace zero

#endif // ZERO_PIPELINES_PASSES_H
