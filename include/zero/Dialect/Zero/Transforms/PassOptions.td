//===- PassOptions.td - options of zero's passes, declared once -*- tablegen -*-===//
//
// The options of the passes that zero-weight-update-sharding runs, each
// declared once: each pass takes its own, and the pipelines
// (zero/Pipelines/Passes.td) take them all.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSOPTIONS_TD
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSOPTIONS_TD

include "mlir/Pass/PassBase.td"

// The cost model's parameters (zero/Analysis/CostModel.h), shared by the
// passes that estimate time. `zero-run --calibrate` prints measured values.
defvar costModelOptions = [
  Option<"latencyMicroseconds", "latency-us", "double", /*default=*/"20",
         "Cost model: microseconds every collective pays">,
  Option<"bandwidthGBps", "bandwidth-gbps", "double", /*default=*/"10",
         "Cost model: GB/s one rank sends">,
  Option<"reduceBandwidthGBps", "reduce-bandwidth-gbps", "double",
         /*default=*/"0",
         "Cost model: GB/s one rank sends in a collective that reduces "
         "(all-reduce, reduce-scatter), where it differs (0: "
         "bandwidth-gbps)">,
  Option<"gflops", "gflops", "double", /*default=*/"50",
         "Cost model: GFLOP/s of contractions (matmul)">,
  Option<"gelementsPerSecond", "gelements-per-s", "double", /*default=*/"2",
         "Cost model: billions of elements per second of elementwise ops "
         "and copies">,
];

// Shared by zero-shard-weight-update (the state it shards) and
// zero-defer-all-gather (the weights it carries as shards).
defvar shardFunctionBoundaryOptions = [
    Option<"shardFunctionBoundary", "shard-function-boundary", "bool",
           /*default=*/"false",
           "Pass the state of a step function, or of the training loop in "
           "it, in and out as shards (marked #zero.shard) instead of whole">,
];

// The options of the passes that zero-weight-update-sharding runs, declared
// once: each pass takes its own, and the pipeline passes take them all.
defvar shardWeightUpdateOptions = !listconcat([
    Option<"minBytes", "min-bytes", "int64_t", /*default=*/"0",
           "Leave gradients smaller than this many bytes replicated">,
    Option<"meshName", "mesh", "std::string", /*default=*/"\"\"",
           "Shard only gradients reduced on this mesh (default: any)">,
    ListOption<"axes", "axes", "int64_t",
               "Shard over these mesh axes of each gradient's group and "
               "all-reduce the shard over the rest (hybrid sharding); "
               "default: the whole group">,
    Option<"stage", "stage", "int64_t", /*default=*/"2",
           "ZeRO stage: 1 shards optimizer state, 2 also gradients, 3 also "
           "weights">,
], shardFunctionBoundaryOptions);

defvar deferAllGatherOptions = [
  Option<"gatherDtype", "gather-dtype", "::zero::GatherDtype",
         /*default=*/"::zero::GatherDtype::Auto",
         "Element type of the gathered copy",
         [{::llvm::cl::values(
           clEnumValN(::zero::GatherDtype::Auto, "auto",
                      "the type the forward pass truncates to, or the "
                      "weight's"),
           clEnumValN(::zero::GatherDtype::BF16, "bf16", "bf16"),
           clEnumValN(::zero::GatherDtype::F16, "f16", "f16"),
           clEnumValN(::zero::GatherDtype::F32, "f32", "f32"),
           clEnumValN(::zero::GatherDtype::Int8, "int8",
                      "int8 blocks with an f32 scale each, dequantized into "
                      "the type the forward pass reads (qwZ)"),
           clEnumValN(::zero::GatherDtype::Int4, "int4",
                      "int4 blocks, two levels a byte, with an f32 scale "
                      "each (qwZ in half the bytes; quantize-block must be "
                      "even)"))}]>,
];

// The block of a compressed collective, shared by qwZ (gather-dtype=int8)
// and qgZ (reduce-dtype=int8).
defvar quantizeBlockOptions = [
  Option<"quantizeBlock", "quantize-block", "int64_t", /*default=*/"4096",
         "Elements a scale covers in a compressed collective (gather-dtype "
         "int8 or int4, reduce-dtype int8 or int4; ZeRO++ uses about 4096)">,
];

defvar compressReduceScatterOptions = [
  Option<"reduceDtype", "reduce-dtype", "::zero::ReduceDtype",
         /*default=*/"::zero::ReduceDtype::Exact",
         "What the gradients' reduce-scatter sends",
         [{::llvm::cl::values(
           clEnumValN(::zero::ReduceDtype::Exact, "exact",
                      "the gradients' own type, summed by the collective"),
           clEnumValN(::zero::ReduceDtype::Int8, "int8",
                      "int8 blocks with an f32 scale each, exchanged "
                      "all-to-all and summed in f32 by each rank (qgZ)"),
           clEnumValN(::zero::ReduceDtype::Int4, "int4",
                      "int4 blocks, two levels a byte, with an f32 scale "
                      "each, exchanged and summed as int8's (qgZ's int4)"),
           clEnumValN(::zero::ReduceDtype::BF16, "bf16",
                      "bf16, each element rounded to nearest even, "
                      "exchanged and summed as int8's"),
           clEnumValN(::zero::ReduceDtype::Auto, "auto",
                      "int8 where the cost model says the compressed "
                      "exchange is faster, else exact; with "
                      "reduce-error-budget, the fastest of bf16, int8 and "
                      "int4 within the budget"))}]>,
];

// Shared by zero-compress-reduce-scatter and the sharding pipelines.
defvar errorFeedbackOptions = [
  Option<"errorFeedback", "error-feedback", "bool", /*default=*/"false",
         "Keep what each rank's compressed reduce-scatter loses as state "
         "and send it in the next step's (error feedback)">,
];

// Shared by zero-compress-reduce-scatter and the sharding pipelines.
defvar reduceErrorBudgetOptions = [
  Option<"reduceErrorBudget", "reduce-error-budget", "double",
         /*default=*/"0.0",
         "With only-where-faster (reduce-dtype=auto): the bound allowed, as "
         "a share of the largest magnitude of each contribution's block "
         "(bf16 1/256, int8 1/254, int4 1/14 a hop); each reduce-scatter "
         "goes in the fastest format within it. 0: int8 only">,
];

defvar compressReduceScatterOwnOptions = [
  Option<"bits", "bits", "int64_t", /*default=*/"8",
         "Bits an element: 8 (int8 blocks), 4 (int4 blocks, two levels a "
         "byte; quantize-block must be even) or 16 (bf16, no scales)">,
  Option<"onlyWhereFaster", "only-where-faster", "bool", /*default=*/"false",
         "Compress a reduce-scatter only where the cost model says the "
         "compressed exchange is faster (reduce-dtype=auto)">,
];

// The host's and the link's figures that offload's cost model weighs
// (zero-offload-state's share, zero-offload-to-host's chunks).
defvar offloadCostOptions = [
  Option<"hostGBps", "host-gbps", "double", /*default=*/"20",
         "Cost model of offload: GB/s of host memory one rank's host update "
         "moves (zero-run --calibrate measures it)">,
  Option<"linkGBps", "link-gbps", "double", /*default=*/"50",
         "Cost model of offload: GB/s of one copy between pinned host "
         "memory and the device (50: PCIe Gen5 x16, of its 63 GB/s a "
         "direction)">,
  Option<"chunkOverheadMicroseconds", "chunk-overhead-us", "double",
         /*default=*/"180",
         "Cost model of the host queue's chunks: microseconds each chunk of "
         "a pipelined update costs beside its copies and its loop (a wake "
         "of the host's threads, an event's wait; about 180 on an H200 "
         "with 4 ranks)">,
];

// And the queue's lowering (zero-offload-to-host, and the lowerings that
// run it).
defvar offloadQueueOptions = !listconcat(offloadCostOptions, [
  Option<"queueFrees", "queue-frees", "bool", /*default=*/"true",
         "Free each gradient shard that the host queue's updates only copy "
         "down once they have (on a GPU where the rank stands: it starts "
         "those copies), and each host staging buffer only the queue uses "
         "from the queue once its update is done (taken within "
         "ZERO_STAGING_BYTES a rank), so that the step does not hold them "
         "all until the rank waits for its queue; false: after that wait">,
]);

defvar offloadOptions = !listconcat([
  Option<"offload", "offload", "::zero::Offload",
         /*default=*/"::zero::Offload::None",
         "Which state of a GPU program lives in pinned host memory, updated "
         "there (zero-offload-state)",
         [{::llvm::cl::values(
           clEnumValN(::zero::Offload::None, "none", "all on the device"),
           clEnumValN(::zero::Offload::Optimizer, "optimizer",
                      "the state only the update reads: the optimizer's "
                      "moments, and weights the model reads only through "
                      "another copy (ZeRO-Offload's offload_optimizer)"),
           clEnumValN(::zero::Offload::Params, "params",
                      "every state argument, the weights included "
                      "(offload_param)"))}]>,
  Option<"offloadDeviceShare", "offload-device-share", "::zero::DeviceShare",
         /*default=*/"::zero::DeviceShare{}",
         "The share (0 to 1) of the offloadable state's bytes kept on the "
         "device after all: the state whose update can start last (its "
         "gradient is reduced last), so that the host's update of it does "
         "not follow the backward pass with the device idle; auto: the "
         "share the cost model says makes the step shortest">,
], offloadCostOptions);

defvar combineCollectivesOwnOptions = [
    Option<"bucketBytes", "bucket-bytes", "int64_t",
           /*default=*/"25 * 1024 * 1024",
           "Largest bucket, in bytes of each member's input summed (PyTorch "
           "DDP's default bucket is 25 MiB; 0: combine none)">,
    Option<"alignment", "alignment", "int64_t", /*default=*/"256",
           "Byte alignment of the offset of each member's chunk (of at "
           "least that many bytes) within a rank's chunk">,
];
defvar combineCollectivesOptions =
    !listconcat(combineCollectivesOwnOptions, costModelOptions);

defvar scheduleOverlapOwnOptions = [
    Option<"maxInFlightBytes", "max-in-flight-bytes", "int64_t",
           /*default=*/"0",
           "Most bytes of all-gather results started but not yet used, "
           "together (0: no limit)">,
    Option<"acrossIterations", "across-iterations", "bool",
           /*default=*/"true",
           "Carry collectives across loop back edges (false: schedule each "
           "block on its own)">,
];
defvar scheduleOverlapOptions =
    !listconcat(scheduleOverlapOwnOptions, costModelOptions);

defvar weightUpdateShardingOptions = !listconcat(
  [Option<"accumulateLocally", "accumulate-locally", "bool",
          /*default=*/"false",
          "Reduce accumulated micro-batch gradients once per step "
          "(zero-accumulate-locally; reassociates the sum)">],
  shardWeightUpdateOptions,
  [Option<"verifyCollectives", "verify-collectives", "bool",
          /*default=*/"true",
          "Prove, before the rewrites and after them, that every rank "
          "issues every collective alike (zero-verify-collectives); a "
          "collective it cannot prove fails the pipeline">],
  [Option<"deferAllGather", "defer-all-gather", "bool", /*default=*/"false",
          "Carry loop weights as shards and gather them for the next "
          "iteration (zero-defer-all-gather)">],
  deferAllGatherOptions,
  compressReduceScatterOptions,
  reduceErrorBudgetOptions,
  errorFeedbackOptions,
  quantizeBlockOptions,
  offloadOptions,
  [Option<"delayUpdate", "delay-update", "bool", /*default=*/"false",
          "Update the state from the previous step's gradients, so that "
          "the update (on the host, with offload) runs during the next "
          "step's forward and backward; step 0 updates nothing. Changes "
          "what is computed (zero-delay-update)">],
  combineCollectivesOwnOptions,
  [Option<"overlap", "overlap", "bool", /*default=*/"false",
          "Start collectives early and await them late "
          "(zero-schedule-overlap)">],
  scheduleOverlapOwnOptions,
  costModelOptions);

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSOPTIONS_TD
