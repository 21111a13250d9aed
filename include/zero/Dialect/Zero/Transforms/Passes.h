//===- Passes.h - zero passes -----------------------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassOptions.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

/// Options of `zero-weight-update-sharding`, one set for all its passes.
struct WeightUpdateShardingOptions
    : public mlir::PassPipelineOptions<WeightUpdateShardingOptions> {
  Option<int64_t> minBytes{
      *this, "min-bytes",
      llvm::cl::desc("Leave gradients smaller than this many bytes "
                     "replicated (zero-shard-weight-update)"),
      llvm::cl::init(0)};
  Option<std::string> meshName{
      *this, "mesh",
      llvm::cl::desc("Shard only gradients reduced on this mesh "
                     "(zero-shard-weight-update)"),
      llvm::cl::init("")};
  ListOption<int64_t> axes{
      *this, "axes",
      llvm::cl::desc("Shard over these mesh axes and all-reduce over the "
                     "rest of each group (zero-shard-weight-update)")};
  Option<int64_t> stage{
      *this, "stage",
      llvm::cl::desc("ZeRO stage: 1 shards optimizer state, 2 also "
                     "gradients, 3 also weights (zero-shard-weight-update)"),
      llvm::cl::init(2)};
  Option<bool> shardFunctionBoundary{
      *this, "shard-function-boundary",
      llvm::cl::desc("Pass the state of a single-step function in and out as "
                     "shards (zero-shard-weight-update)"),
      llvm::cl::init(false)};
  Option<bool> deferAllGather{
      *this, "defer-all-gather",
      llvm::cl::desc("Carry loop weights as shards and gather them for the "
                     "next iteration (zero-defer-all-gather)"),
      llvm::cl::init(false)};
  Option<std::string> gatherDtype{
      *this, "gather-dtype",
      llvm::cl::desc("Element type of deferred gathers: auto, bf16, f16 or "
                     "f32 (zero-defer-all-gather)"),
      llvm::cl::init("auto")};
  Option<int64_t> bucketBytes{
      *this, "bucket-bytes",
      llvm::cl::desc("Largest bucket of combined collectives in bytes; 0 "
                     "combines none (zero-combine-collectives)"),
      llvm::cl::init(25 * 1024 * 1024)};
  Option<int64_t> alignment{
      *this, "alignment",
      llvm::cl::desc("Byte alignment of each member in a bucket "
                     "(zero-combine-collectives)"),
      llvm::cl::init(256)};
  Option<bool> overlap{
      *this, "overlap",
      llvm::cl::desc("Start collectives early and await them late "
                     "(zero-schedule-overlap)"),
      llvm::cl::init(false)};
  Option<int64_t> maxInFlightBytes{
      *this, "max-in-flight-bytes",
      llvm::cl::desc("Most bytes of prefetched all-gather results not yet "
                     "used; 0: no limit (zero-schedule-overlap)"),
      llvm::cl::init(0)};
  Option<bool> acrossIterations{
      *this, "across-iterations",
      llvm::cl::desc("Carry collectives across loop back edges "
                     "(zero-schedule-overlap)"),
      llvm::cl::init(true)};
};

/// Builds `zero-weight-update-sharding`: zero-shard-weight-update,
/// zero-defer-all-gather (with defer-all-gather), zero-combine-collectives
/// (unless bucket-bytes is 0), cse, zero-schedule-overlap (with overlap).
void buildWeightUpdateShardingPipeline(
    mlir::OpPassManager &pm, const WeightUpdateShardingOptions &options);

/// Registers `zero-weight-update-sharding` as a pass pipeline.
void registerWeightUpdateShardingPipeline();

/// Appends `zero-data-parallel` to `pm`: a one-device program whose batch is
/// annotated with `shard.shard`, through MLIR's own data-parallel flow
/// (convert-elementwise-to-linalg, sharding-propagation, shard-partition,
/// canonicalize), then zero-weight-update-sharding with `options`.
void buildDataParallelPipeline(mlir::OpPassManager &pm,
                               const WeightUpdateShardingOptions &options);

/// Registers `zero-data-parallel`.
void registerDataParallelPipeline();

} // namespace zero

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
