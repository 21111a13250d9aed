//===- Sharding.cpp - zero-weight-update-sharding, zero-data-parallel -----===//
//
// The sharding pipelines' options are the options of the passes they run,
// each declared once (zero/Dialect/Zero/Transforms/PassOptions.td).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"
#include "zero/Conversion/Passes.h"
#include "zero/Pipelines/Passes.h"

#include "PipelinePass.h"

namespace zero {
#define GEN_PASS_DEF_ZEROWEIGHTUPDATESHARDING
#define GEN_PASS_DEF_ZERODATAPARALLEL
#include "zero/Pipelines/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// Copies the cost model's parameters (costModelOptions in PassOptions.td)
/// from the pipeline's options to a pass's.
template <typename PassOptions, typename Options>
void copyCostModel(PassOptions &to, const Options &from) {
  to.latencyMicroseconds = from.latencyMicroseconds;
  to.bandwidthGBps = from.bandwidthGBps;
  to.reduceBandwidthGBps = from.reduceBandwidthGBps;
  to.gflops = from.gflops;
  to.gelementsPerSecond = from.gelementsPerSecond;
}

/// Appends zero-weight-update-sharding's passes, with the options `options`
/// holds: the options struct, or the pipeline pass itself, whose option
/// members have the same names.
template <typename Options>
void appendWeightUpdateSharding(OpPassManager &pm, const Options &options) {
  // The program as given, upstream's shard ops included: a collective that
  // some rank may skip is the user's to fix, not zero's to shard.
  if (options.verifyCollectives)
    pm.addPass(createZeroVerifyCollectives());
  // A program from upstream's shard-partition, in zero's ops.
  pm.addPass(createConvertShardToZero());
  if (options.accumulateLocally)
    pm.addPass(createZeroAccumulateLocally());
  ZeroShardWeightUpdateOptions shard;
  shard.minBytes = options.minBytes;
  shard.meshName = options.meshName;
  shard.axes.assign(options.axes.begin(), options.axes.end());
  shard.stage = options.stage;
  shard.shardFunctionBoundary = options.shardFunctionBoundary;
  pm.addPass(createZeroShardWeightUpdate(shard));
  // Stage 3's per-use gathers are compressed by the pass that owns
  // gather-dtype too.
  bool quantizedGathers = options.gatherDtype == GatherDtype::Int8 ||
                          options.gatherDtype == GatherDtype::Int4;
  if (options.deferAllGather || (options.stage == 3 && quantizedGathers)) {
    ZeroDeferAllGatherOptions defer;
    defer.gatherDtype = options.gatherDtype;
    defer.quantizeBlock = options.quantizeBlock;
    defer.shardFunctionBoundary = options.shardFunctionBoundary;
    pm.addPass(createZeroDeferAllGather(defer));
  }
  if (options.bucketBytes > 0) {
    ZeroCombineCollectivesOptions combine;
    combine.bucketBytes = options.bucketBytes;
    combine.alignment = options.alignment;
    copyCostModel(combine, options);
    pm.addPass(createZeroCombineCollectives(combine));
  }
  // Each bucket's reduce-scatter as one compressed exchange.
  if (options.reduceDtype != ReduceDtype::Exact) {
    ZeroCompressReduceScatterOptions compress;
    compress.quantizeBlock = options.quantizeBlock;
    compress.onlyWhereFaster = options.reduceDtype == ReduceDtype::Auto;
    compress.bits = options.reduceDtype == ReduceDtype::Int4   ? 4
                    : options.reduceDtype == ReduceDtype::BF16 ? 16
                                                               : 8;
    compress.reduceErrorBudget = options.reduceErrorBudget;
    compress.errorFeedback = options.errorFeedback;
    copyCostModel(compress, options);
    pm.addPass(createZeroCompressReduceScatter(compress));
  }
  // The update reads what the step before reduced (each bucket's shard),
  // once the buckets are made: a gather that the delay frees from the
  // update's inputs is not bucketed with the update's own.
  if (options.delayUpdate)
    pm.addPass(createZeroDelayUpdate());
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
    copyCostModel(schedule, options);
    pm.addPass(createZeroScheduleOverlap(schedule));
  }
  // Where the state lives beside a GPU: marks only, for the lowering.
  if (options.offload != Offload::None) {
    ZeroOffloadStateOptions offload;
    offload.offload = options.offload;
    offload.offloadDeviceShare = options.offloadDeviceShare;
    offload.hostGBps = options.hostGBps;
    offload.linkGBps = options.linkGBps;
    offload.chunkOverheadMicroseconds = options.chunkOverheadMicroseconds;
    copyCostModel(offload, options);
    pm.addPass(createZeroOffloadState(offload));
  }
  // And zero's own rewrites: what they made must be issued alike too.
  if (options.verifyCollectives)
    pm.addPass(createZeroVerifyCollectives());
}

/// Error feedback keeps what a compressed exchange loses: with exact
/// reduce-scatters there is none to keep. A budget is the planner's.
template <typename Options>
LogicalResult checkShardingOptions(Operation *module, StringRef pipeline,
                                   const Options &options) {
  if (options.errorFeedback && options.reduceDtype == ReduceDtype::Exact)
    return module->emitError()
           << pipeline
           << ": error-feedback keeps what a compressed reduce-scatter "
              "loses; give reduce-dtype=int8, int4, bf16 or auto with it";
  if (options.reduceErrorBudget != 0 &&
      options.reduceDtype != ReduceDtype::Auto)
    return module->emitError()
           << pipeline
           << ": reduce-error-budget plans each reduce-scatter's format; "
              "give reduce-dtype=auto with it";
  return success();
}

template <typename Options>
void appendDataParallel(OpPassManager &pm, const Options &options) {
  // Upstream's partitioner reads linalg, not arith on tensors.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  pm.addNestedPass<func::FuncOp>(shard::createShardingPropagation());
  pm.addNestedPass<func::FuncOp>(shard::createPartition());
  // Erases the shardings the partition leaves unused.
  pm.addPass(createCanonicalizerPass());
  appendWeightUpdateSharding(pm, options);
}

struct ZeroWeightUpdateShardingPass
    : public PipelinePass<zero::impl::ZeroWeightUpdateShardingBase<
          ZeroWeightUpdateShardingPass>> {
  using PipelinePass::PipelinePass;
  // Reads the options.
  template <typename Options>
  friend void appendWeightUpdateSharding(OpPassManager &pm,
                                         const Options &options);
  template <typename PassOptions, typename Options>
  friend void copyCostModel(PassOptions &to, const Options &from);
  template <typename Options>
  friend LogicalResult checkShardingOptions(Operation *module,
                                            StringRef pipeline,
                                            const Options &options);
  void appendPasses(OpPassManager &pm) const override {
    appendWeightUpdateSharding(pm, *this);
  }
  LogicalResult checkOptions() override {
    return checkShardingOptions(getOperation(), getArgument(), *this);
  }
};

struct ZeroDataParallelPass
    : public PipelinePass<
          zero::impl::ZeroDataParallelBase<ZeroDataParallelPass>> {
  using PipelinePass::PipelinePass;
  // Reads the options.
  template <typename Options>
  friend void appendWeightUpdateSharding(OpPassManager &pm,
                                         const Options &options);
  template <typename PassOptions, typename Options>
  friend void copyCostModel(PassOptions &to, const Options &from);
  template <typename Options>
  friend LogicalResult checkShardingOptions(Operation *module,
                                            StringRef pipeline,
                                            const Options &options);
  void appendPasses(OpPassManager &pm) const override {
    appendDataParallel(pm, *this);
  }
  LogicalResult checkOptions() override {
    return checkShardingOptions(getOperation(), getArgument(), *this);
  }
};

} // namespace

void zero::buildWeightUpdateShardingPipeline(
    OpPassManager &pm, const WeightUpdateShardingOptions &options) {
  appendWeightUpdateSharding(pm, options);
}

void zero::buildDataParallelPipeline(
    OpPassManager &pm, const WeightUpdateShardingOptions &options) {
  appendDataParallel(pm, options);
}
