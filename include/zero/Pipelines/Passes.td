//===- Passes.td - zero's pipelines --------------------------*- tablegen -*-===//
//
// zero's four pipelines: two that shard a training step and two that lower
// it. Each is a pass that runs a fixed sequence of passes as a dynamic
// pipeline, with options declared here or, where they are its passes'
// options, where those passes declare them: one declaration per option. For
// each, zero/Pipelines/Passes.h has a function that appends the same passes
// to a pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_PIPELINES_PASSES_TD
#define ZERO_PIPELINES_PASSES_TD

include "mlir/Pass/PassBase.td"
include "zero/Dialect/Zero/Transforms/PassOptions.td"
include "zero/Target/GPU/Options.td"

//===----------------------------------------------------------------------===//
// Sharding
//===----------------------------------------------------------------------===//

def ZeroWeightUpdateSharding : Pass<"zero-weight-update-sharding",
                                    "mlir::ModuleOp"> {
  let summary = "Shards every weight update across the replicas, buckets the "
                "resulting collectives and schedules them";
  let description = [{
    Runs, in the order they have to run: `convert-shard-to-zero` (a program
    from upstream `shard-partition` in zero's ops), `zero-accumulate-locally`
    (with `accumulate-locally`), `zero-shard-weight-update`,
    `zero-defer-all-gather` (with `defer-all-gather`),
    `zero-combine-collectives` (unless `bucket-bytes=0`),
    `zero-compress-reduce-scatter` (with `reduce-dtype=int8`, or `auto`:
    where the cost model says it pays), `cse`, and
    `zero-schedule-overlap` (with `overlap`), each with its options as given
    here. docs/Pipelines.md says what each step does and why in this order.

    ```
    zero-opt step.mlir --zero-weight-update-sharding='stage=3 overlap'
    ```
  }];
  let options = weightUpdateShardingOptions;
}

def ZeroDataParallel : Pass<"zero-data-parallel", "mlir::ModuleOp"> {
  let summary = "From one device's training step to zero's sharded "
                "data-parallel step";
  let description = [{
    The program is one device's step with its batch annotated with
    `shard.shard` on a grid of N. Runs MLIR's own data-parallel flow
    (`convert-elementwise-to-linalg`, `sharding-propagation`,
    `shard-partition`, `canonicalize`), then `zero-weight-update-sharding`
    with these options.

    ```
    zero-run examples/one_device_sgd.mlir --passes=zero-data-parallel \
        --reference examples/one_device_sgd.mlir
    ```
  }];
  let options = weightUpdateShardingOptions;
}

//===----------------------------------------------------------------------===//
// Lowering
//===----------------------------------------------------------------------===//

def ZeroToLLVM : Pass<"zero-to-llvm", "mlir::ModuleOp"> {
  let summary = "Lowers a zero program in tensors to the LLVM dialect for the "
                "CPU, collectives as calls into zero's runtime";
  let description = [{
    The program is in tensors (func, scf, arith, math, tensor, linalg,
    named linalg ops, zero, and upstream `shard` after `shard-partition`).
    Steps: elementwise ops to linalg and fused, One-Shot Bufferize (function
    boundaries included, identity layouts), ownership-based deallocation,
    linalg to loops, `zero-lower-to-runtime`, and the upstream conversions to
    LLVM. docs/Pipelines.md says what each step does and why.

    ```
    zero-opt step.mlir --zero-to-llvm='runtime-checks'
    ```
  }];
  let options = [
    Option<"gpuLoops", "gpu-loops", "bool", /*default=*/"false",
           "Structure the loop nests as zero-to-nvvm does before it maps "
           "them to kernels (reductions split, matmuls as GEMM calls, here of "
           "the runtime's host GEMM, copies as loop nests, 16-byte accesses, "
           "independent loops merged) and run them in order on the CPU: the "
           "GPU pipeline's rewrites, checked without a GPU">,
    Option<"runtimeChecks", "runtime-checks", "bool", /*default=*/"false",
           "Check the program's own accesses at run time "
           "(generate-runtime-verification, then zero-checks-to-runtime): an "
           "index outside its buffer ends every rank with a message naming "
           "the op instead of corrupting memory">,
    Option<"hostParallelElements", "host-parallel-elements", "int64_t",
           /*default=*/"16384",
           "Split each elementwise loop nest of at least this many "
           "iterations across the rank's share of the host's cores "
           "(zero-host-parallel-loops; 0: every loop on the rank's thread)">,
    Option<"outlineLoopNests", "outline-loop-nests", "bool",
           /*default=*/"true",
           "Move each loop nest into a function of its own "
           "(zero-outline-loop-nests), so that LLVM's compile time stays "
           "linear in the number of loops of a step">,
  ] # offloadQueueOptions;
}

def ZeroToNVVM : Pass<"zero-to-nvvm", "mlir::ModuleOp"> {
  let summary = "Lowers a zero program in tensors to host code that launches "
                "CUDA kernels and calls zero's runtime";
  let description = [{
    Host code in the LLVM dialect that launches CUDA kernels, one per
    parallel loop nest, compiled for `chip` and embedded (`gpu.binary`), and
    calls zero's runtime for collectives and GPU memory. Bufferization is as
    in `zero-to-llvm`; the host's buffers are in managed memory
    (`zero-gpu-host-memory`). `zero-compile --target=cuda` runs it, with its
    `--chip`, `--gpu-format`, `--gpu-collectives` and `--cuda-path` as these
    options. docs/GPU.md says what each step does and what has run on a GPU.

    ```
    zero-opt step.mlir --zero-to-nvvm='chip=sm_80 gpu-format=isa'
    ```
  }];
  let options = [
    Option<"chip", "chip", "std::string", /*default=*/"\"sm_90\"",
           "The GPU architecture (sm_90: H100, H200)">,
    Option<"features", "features", "std::string", /*default=*/"\"+ptx80\"",
           "PTX features (+ptx80: PTX 8.0, the least sm_90 takes)">,
    Option<"gpuFormat", "gpu-format", "::zero::GpuFormat",
           /*default=*/"::zero::GpuFormat::Auto",
           "How kernels are embedded",
           [{::zero::gpuFormatValues()}]>,
    Option<"cudaPath", "cuda-path", "std::string",
           /*default=*/"ZERO_DEFAULT_CUDA_PATH",
           "The CUDA toolkit (ptxas, libdevice); the default is the one zero "
           "was configured with">,
    gpuCollectivesOption,
    Option<"cublas", "cublas", "bool", /*default=*/"true",
           "Matmuls as calls of cuBLAS through the runtime (zero-gemm-calls); "
           "false: loop nests, as kernels">,
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of a kernel">,
  ] # offloadQueueOptions;
}

#endif // ZERO_PIPELINES_PASSES_TD
