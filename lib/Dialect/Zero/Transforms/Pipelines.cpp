//===- Pipelines.cpp - zero-weight-update-sharding ------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "zero/Conversion/Passes.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

using namespace mlir;

void zero::buildWeightUpdateShardingPipeline(
    OpPassManager &pm, const WeightUpdateShardingOptions &options) {
  // A program from upstream's shard-partition, in zero's ops.
  pm.addPass(createConvertShardToZero());
  ZeroShardWeightUpdateOptions shard;
  shard.minBytes = options.minBytes;
  shard.meshName = options.meshName;
  shard.axes.assign(options.axes.begin(), options.axes.end());
  shard.stage = options.stage;
  shard.shardFunctionBoundary = options.shardFunctionBoundary;
  pm.addPass(createZeroShardWeightUpdate(shard));
  if (options.deferAllGather) {
    ZeroDeferAllGatherOptions defer;
    defer.gatherDtype = options.gatherDtype;
    pm.addPass(createZeroDeferAllGather(defer));
  }
  if (options.bucketBytes > 0) {
    ZeroCombineCollectivesOptions combine;
    combine.bucketBytes = options.bucketBytes;
    combine.alignment = options.alignment;
    pm.addPass(createZeroCombineCollectives(combine));
  }
  // One cleanup at the end: merges the slices and small constants each
  // rewrite made and erases what they left unused. The rewrites leave
  // nothing for canonicalize to fold (on every example it only reorders
  // constants) and it would double the pipeline's time on programs with
  // thousands of parameters; run it after the pipeline if you like.
  pm.addPass(createCSEPass());
  // Last: the schedule places the collectives the passes above made (and
  // CSE must not see two equal zero.async ops, whose one future would then
  // be awaited twice).
  if (options.overlap) {
    ZeroScheduleOverlapOptions schedule;
    schedule.maxInFlightBytes = options.maxInFlightBytes;
    schedule.acrossIterations = options.acrossIterations;
    pm.addPass(createZeroScheduleOverlap(schedule));
  }
}

void zero::registerWeightUpdateShardingPipeline() {
  PassPipelineRegistration<WeightUpdateShardingOptions>(
      "zero-weight-update-sharding",
      "Shards every weight update across the replicas and buckets the "
      "resulting collectives: zero-shard-weight-update, "
      "zero-defer-all-gather (optional), zero-combine-collectives, cse, "
      "zero-schedule-overlap (optional)",
      buildWeightUpdateShardingPipeline);
}

void zero::buildDataParallelPipeline(
    OpPassManager &pm, const WeightUpdateShardingOptions &options) {
  // Upstream's partitioner reads linalg, not arith on tensors.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation());
  pm.addNestedPass<func::FuncOp>(shard::createPartition());
  // Erases the shardings the partition leaves unused.
  pm.addPass(createCanonicalizerPass());
  buildWeightUpdateShardingPipeline(pm, options);
}

void zero::registerDataParallelPipeline() {
  PassPipelineRegistration<WeightUpdateShardingOptions>(
      "zero-data-parallel",
      "From one device's training step, its batch annotated with shard.shard "
      "on a grid of N, to zero's sharded data-parallel step: "
      "convert-elementwise-to-linalg, sharding-propagation, shard-partition, "
      "canonicalize (MLIR's own data-parallel flow), then "
      "zero-weight-update-sharding with these options",
      buildDataParallelPipeline);
}
