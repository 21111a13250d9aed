//===- Pipelines.cpp - zero-weight-update-sharding ------------------------===//

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

using namespace mlir;

void zero::buildWeightUpdateShardingPipeline(
    OpPassManager &pm, const WeightUpdateShardingOptions &options) {
  ZeroShardWeightUpdateOptions shard;
  shard.minBytes = options.minBytes;
  pm.addPass(createZeroShardWeightUpdate(shard));
  // Folds the pads and reshapes of values that are already whole and merges
  // the slices of one value, so that bucketing sees one collective per
  // exchange.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (options.bucketBytes > 0) {
    ZeroCombineCollectivesOptions combine;
    combine.bucketBytes = options.bucketBytes;
    combine.alignment = options.alignment;
    pm.addPass(createZeroCombineCollectives(combine));
    pm.addPass(createCanonicalizerPass());
    pm.addPass(createCSEPass());
  }
}

void zero::registerWeightUpdateShardingPipeline() {
  PassPipelineRegistration<WeightUpdateShardingOptions>(
      "zero-weight-update-sharding",
      "Shards every weight update across the replicas and buckets the "
      "resulting collectives: zero-shard-weight-update, canonicalize, cse, "
      "zero-combine-collectives, canonicalize, cse",
      buildWeightUpdateShardingPipeline);
}
