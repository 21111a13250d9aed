//===- Lowering.cpp - zero-to-llvm and zero-to-nvvm -----------------------===//

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/BufferizationToMemRef/BufferizationToMemRef.h"
#include "mlir/Conversion/ComplexToLLVM/ComplexToLLVM.h"
#include "mlir/Conversion/ComplexToStandard/ComplexToStandard.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVMPass.h"
#include "mlir/Conversion/GPUCommon/GPUCommonPass.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/IndexToLLVM/IndexToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MathToLibm/MathToLibm.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToGPU/SCFToGPUPass.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "zero/Conversion/Passes.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Loops/Passes.h"
#include "zero/Pipelines/Passes.h"
#include "zero/Target/CPU/Passes.h"
#include "zero/Target/GPU/Passes.h"

#include "PipelinePass.h"

namespace zero {
#define GEN_PASS_DEF_ZEROTOLLVM
#define GEN_PASS_DEF_ZEROTONVVM
#include "zero/Pipelines/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

/// The canonicalizer without zero::kQuadraticCanonicalizationPattern.
static std::unique_ptr<Pass> createCanonicalizer() {
  return createCanonicalizerPass(GreedyRewriteConfig(),
                                 {zero::kQuadraticCanonicalizationPattern});
}

/// Upstream's buffer-deallocation-pipeline, with zero-split-deallocs before
/// the simplification: ownership leaves one dealloc per block listing every
/// buffer of a step, which the simplification's alias queries would take
/// quadratic time over, and which the canonicalizer after ownership would
/// revisit at every change of an operand (zero-canonicalize-deallocs-last).
static void addDeallocationPasses(OpPassManager &pm) {
  memref::ExpandReallocPassOptions realloc;
  realloc.emitDeallocs = false;
  pm.addNestedPass<func::FuncOp>(memref::createExpandReallocPass(realloc));
  pm.addNestedPass<func::FuncOp>(createCanonicalizer());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createOwnershipBasedBufferDeallocationPass());
  pm.addNestedPass<func::FuncOp>(zero::createZeroCanonicalizeDeallocsLast());
  // A donated argument's buffer returned as it is, not cloned.
  pm.addNestedPass<func::FuncOp>(zero::createZeroReturnDonatedBuffers());
  pm.addNestedPass<func::FuncOp>(zero::createZeroSplitDeallocs());
  pm.addNestedPass<func::FuncOp>(
      bufferization::createBufferDeallocationSimplificationPass());
  // A temporary's memory goes after its last use, not at the block's end.
  pm.addNestedPass<func::FuncOp>(zero::createZeroFreeAfterLastUse());
  pm.addPass(bufferization::createLowerDeallocationsPass());
  pm.addNestedPass<func::FuncOp>(createCSEPass());
  pm.addNestedPass<func::FuncOp>(createCanonicalizer());
}

/// Tensors to buffers, shared by the CPU and GPU pipelines.
static void addBufferizationPasses(OpPassManager &pm) {
  // Proven collectives let the runtime skip its agreement check (the
  // artifact's description says so); the rest run under it, with a warning.
  zero::ZeroVerifyCollectivesOptions verify;
  verify.mode = zero::VerifyMode::Warn;
  pm.addPass(zero::createZeroVerifyCollectives(verify));
  // A program from upstream's shard-partition, in zero's ops.
  pm.addPass(zero::createConvertShardToZero());
  // Which results are the next state, on the program as given: folding
  // (a one-rank all-reduce) can make a gradient as near to a moment's next
  // value as the moment is, and the donation below would lose the pair.
  pm.addNestedPass<func::FuncOp>(zero::createZeroMarkStateResults());
  // Block quantization as loop nests, which fuse with their neighbours.
  pm.addPass(zero::createZeroQuantizeToLinalg());
  // Futures that loops carry get buffers that outlive an iteration.
  pm.addPass(zero::createZeroExpandLoopFutures());
  // Matmuls in one form: generic ones named (kept out of fusion, called as
  // GEMMs alike), a transposed weight read as stored, not from a copy.
  pm.addNestedPass<func::FuncOp>(zero::createZeroNormalizeMatmuls());
  // Elementwise arith and math on tensors to linalg, fused into one loop nest
  // per web (fusion keeps each element's sequence of operations): a
  // bucket's whole update is one loop nest, one kernel on the GPU.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // Full reductions in zero's one order (the same bits on every pipeline
  // and every N), before fusion: fusing a norm's squares and the reshape
  // before it into a reduction makes one over several dimensions.
  pm.addNestedPass<func::FuncOp>(zero::createZeroOrderReductions());
  pm.addNestedPass<func::FuncOp>(zero::createZeroFuseElementwise());
  // Tensors to buffers. Function arguments and results get identity layouts
  // so that a launcher can pass plain dense buffers.
  // One destination value per op: CSE's sharing would make One-Shot's
  // conflict analysis quadratic.
  pm.addNestedPass<func::FuncOp>(zero::createZeroUnshareInits());
  // The state updated in its arguments' buffers, where that is safe.
  pm.addNestedPass<func::FuncOp>(zero::createZeroDonateState());
  bufferization::OneShotBufferizePassOptions bufferize;
  bufferize.bufferizeFunctionBoundaries = true;
  bufferize.functionBoundaryTypeConversion =
      bufferization::LayoutMapOption::IdentityLayoutMap;
  // A training loop yields new weights in fresh buffers each step.
  bufferize.allowReturnAllocsFromLoops = true;
  pm.addPass(bufferization::createOneShotBufferizePass(bufferize));
  // What loops carry in place folded away, their host marks kept in step.
  pm.addNestedPass<func::FuncOp>(zero::createZeroFoldInPlaceIterArgs());
  // A new weight gathered into its argument's buffer, not copied there.
  pm.addNestedPass<func::FuncOp>(zero::createZeroForwardCollectiveOutputs());
  addDeallocationPasses(pm);
  pm.addPass(createConvertBufferizationToMemRefPass());
  pm.addPass(createCanonicalizer());
  // The runtime's collectives take dense buffers. Staged here, the copies
  // become kernels on the GPU, not host copies beside the runtime calls.
  pm.addPass(zero::createZeroContiguousCollectiveBuffers());
}

/// Complex arithmetic (a matmul of complex numbers left as a loop nest) as
/// arith and math on its parts, then its parts as LLVM structs.
static void addComplexToLLVMPasses(OpPassManager &pm) {
  pm.addPass(createConvertComplexToStandardPass());
  pm.addPass(createConvertComplexToLLVMPass());
}

/// The host code's conversions to and from bf16 as integer arithmetic: the
/// host has no bf16 instructions, and LLVM's lowering of them calls
/// functions (__truncsfbf2) that the host's runtime library may not have.
static void addHostBf16Expansion(OpPassManager &pm) {
  // f64 to bf16 has no runtime function on the host: through f32.
  pm.addPass(zero::createZeroExpandTruncF());
  arith::ArithExpandOpsPassOptions expand;
  expand.includeBf16 = true;
  expand.includeF8E8M0 = false;
  pm.addPass(arith::createArithExpandOpsPass(expand));
}

/// The host code's arith, math, memref, func and cf to the LLVM dialect,
/// after addHostBf16Expansion.
static void addHostToLLVMPasses(OpPassManager &pm) {
  addComplexToLLVMPasses(pm);
  // Wide accesses (zero-gpu-wide-access) when the GPU's loops run here.
  pm.addPass(createConvertVectorToLLVMPass());
  pm.addPass(createConvertMathToLLVMPass());
  pm.addPass(createConvertMathToLibmPass());
  // Allocations call MLIR's generic functions, which the runtime implements
  // with a pool per rank (zero_rt_alloc): a step's buffers come back from
  // the step before, not from the system (the GPU's, zero-gpu-host-memory
  // sends to the GPU allocator).
  FinalizeMemRefToLLVMConversionPassOptions memrefToLLVM;
  memrefToLLVM.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefToLLVM));
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

/// Loop nests as the GPU runs them, before they are tiled into blocks and
/// threads: copies as loop nests, parallel loops, 16-byte accesses,
/// independent ones merged, each nest 1-D.
static void addGpuLoopPasses(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(zero::createZeroGpuCopies());
  // A reduction over rows: one kernel, not a host loop of them.
  pm.addNestedPass<func::FuncOp>(zero::createZeroGpuParallelFirst());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
  // 16-byte loads and stores in elementwise loops.
  pm.addNestedPass<func::FuncOp>(zero::createZeroGpuWideAccess());
  // Independent loop nests (the updates of a bucket's parameters) as one.
  pm.addNestedPass<func::FuncOp>(zero::createZeroFuseIndependentLoops());
  // Every nest 1-D: any shape fits CUDA's grid, and accesses coalesce.
  pm.addNestedPass<func::FuncOp>(zero::createZeroGpuCollapseLoops());
}

/// Appends zero-to-llvm's passes, with the options `options` holds: the
/// options struct or the pass.
namespace {
/// zero-offload-to-host's options from a lowering pipeline's (its
/// offloadQueueOptions, PassOptions.td).
template <typename Options>
zero::ZeroOffloadToHostOptions offloadToHostOptions(const Options &options) {
  zero::ZeroOffloadToHostOptions offload;
  offload.hostGBps = options.hostGBps;
  offload.linkGBps = options.linkGBps;
  offload.chunkOverheadMicroseconds = options.chunkOverheadMicroseconds;
  offload.queueFrees = options.queueFrees;
  return offload;
}

template <typename Options>
void appendZeroToLLVM(OpPassManager &pm, const Options &options) {
  addBufferizationPasses(pm);
  // Loops, runtime calls, then LLVM. The GPU's structure includes its
  // matmul calls, here of the runtime's host GEMM.
  if (options.gpuLoops) {
    zero::ZeroGemmCallsOptions matmuls;
    matmuls.gemm = zero::GemmLibrary::Host;
    pm.addPass(zero::createZeroGemmCalls(matmuls));
    addGpuLoopPasses(pm);
    // The loops on offloaded state, on the host as the GPU's would be.
    pm.addPass(zero::createZeroOffloadToHost(offloadToHostOptions(options)));
  } else {
    // A CPU program has no device to offload from: refuses the marks.
    zero::ZeroOffloadToHostOptions offload;
    offload.gpu = false;
    pm.addPass(zero::createZeroOffloadToHost(offload));
    // Matmuls, named or generic, call the runtime's GEMM (as XLA's CPU
    // backend calls a library for its dots): vectorized and threaded, where
    // a loop nest adds one rounded product at a time.
    zero::ZeroGemmCallsOptions matmuls;
    matmuls.gemm = zero::GemmLibrary::Host;
    pm.addPass(zero::createZeroGemmCalls(matmuls));
    // Updates across the rank's share of the cores.
    zero::ZeroHostParallelLoopsOptions parallel;
    parallel.minElements = options.hostParallelElements;
    pm.addPass(zero::createZeroHostParallelLoops(parallel));
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  }
  if (options.runtimeChecks) {
    pm.addPass(createGenerateRuntimeVerificationPass());
    pm.addPass(zero::createZeroChecksToRuntime());
  }
  pm.addPass(zero::createZeroLowerToRuntime());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  // Each loop nest a function: LLVM's loop passes grow with the loops of a
  // function, and a step holds thousands.
  if (options.outlineLoopNests)
    pm.addPass(zero::createZeroOutlineLoopNests());
  pm.addPass(zero::createZeroScfToControlFlow());
  addHostBf16Expansion(pm);
  addHostToLLVMPasses(pm);
  pm.addPass(createCanonicalizer());
}

/// Appends zero-to-nvvm's passes, with the options `options` holds.
template <typename Options>
void appendZeroToNVVM(OpPassManager &pm, const Options &options) {
  addBufferizationPasses(pm);
  // Each parallel loop nest becomes a kernel: tiles of `blockSize` iterations
  // are blocks, the iterations of a tile its threads (a guard, not a min,
  // bounds the last tile, so every block has the same size).
  // Matmuls call cuBLAS (as XLA does); the rest are loop nests, kernels.
  if (options.cublas)
    pm.addPass(zero::createZeroGemmCalls());
  addGpuLoopPasses(pm);
  // The loops on offloaded state run on the host, never as kernels.
  pm.addPass(zero::createZeroOffloadToHost(offloadToHostOptions(options)));
  pm.addNestedPass<func::FuncOp>(createParallelLoopTilingPass(
      {options.blockSize}, /*noMinMaxBounds=*/true));
  // Constant tile bounds for the mapping, by propagation only: the
  // canonicalizer would fold a loop of one tile away, and rebuilding a loop
  // drops its mapping.
  pm.addPass(createSCCPPass());
  pm.addNestedPass<func::FuncOp>(createGpuMapParallelLoopsPass());
  pm.addNestedPass<func::FuncOp>(createConvertParallelLoopToGpuPass());
  pm.addPass(createGpuKernelOutliningPass());
  // Kernels are named after their function; PTX allows fewer characters.
  pm.addPass(zero::createZeroGpuKernelNames());
  pm.addPass(createCanonicalizer());
  zero::ZeroGpuBufferPlacementOptions placement;
  placement.gpuCollectives = options.gpuCollectives;
  pm.addPass(zero::createZeroGpuBufferPlacement(placement));
  // Launches go to a stream in order, and the host waits only before it
  // touches memory (a copy, a scalar read, a collective) or returns.
  pm.addNestedPass<func::FuncOp>(createGpuAsyncRegionPass());
  // ... and not before what the runtime orders on the rank's stream.
  pm.addPass(zero::createZeroGpuDeferHostWaits());

  // Collectives, then the host and the kernels to LLVM.
  pm.addPass(zero::createZeroLowerToRuntime());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(zero::createZeroScfToControlFlow());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  // Square roots rounded as on the CPU, not libdevice's approximate ones.
  pm.addNestedPass<gpu::GPUModuleOp>(zero::createZeroGpuIeeeSqrt());
  addComplexToLLVMPasses(pm.nest<gpu::GPUModuleOp>());
  pm.addNestedPass<gpu::GPUModuleOp>(createConvertGpuOpsToNVVMOps());
  // gpu-to-llvm converts the host's arith too: the host update's bf16 casts
  // (a weight gathered in bf16) are expanded first. Kernels keep the
  // device's own conversion instructions.
  addHostBf16Expansion(pm.nest<func::FuncOp>());
  pm.addPass(createGpuToLLVMConversionPass());
  addHostToLLVMPasses(pm);
  pm.addPass(zero::createZeroGpuHostMemory());
  zero::ZeroGpuModulesToBinaryOptions binary;
  binary.format = options.gpuFormat;
  binary.cudaPath = options.cudaPath;
  pm.addPass(zero::createZeroGpuModulesToBinary(binary));
  pm.addPass(createCanonicalizer());
}

struct ZeroToLLVMPass
    : public PipelinePass<zero::impl::ZeroToLLVMBase<ZeroToLLVMPass>> {
  using PipelinePass::PipelinePass;
  // Reads the options.
  template <typename Options>
  friend void appendZeroToLLVM(OpPassManager &pm, const Options &options);
  template <typename Options>
  friend zero::ZeroOffloadToHostOptions
  offloadToHostOptions(const Options &options);
  void appendPasses(OpPassManager &pm) const override {
    appendZeroToLLVM(pm, *this);
  }
};

struct ZeroToNVVMPass
    : public PipelinePass<zero::impl::ZeroToNVVMBase<ZeroToNVVMPass>> {
  using PipelinePass::PipelinePass;
  // Reads the options.
  template <typename Options>
  friend void appendZeroToNVVM(OpPassManager &pm, const Options &options);
  template <typename Options>
  friend zero::ZeroOffloadToHostOptions
  offloadToHostOptions(const Options &options);
  void appendPasses(OpPassManager &pm) const override {
    appendZeroToNVVM(pm, *this);
  }
};
} // namespace

void zero::buildZeroToLLVMPipeline(OpPassManager &pm,
                                   const ZeroToLLVMOptions &options) {
  appendZeroToLLVM(pm, options);
}

void zero::buildZeroToNVVMPipeline(OpPassManager &pm,
                                   const ZeroToNVVMOptions &options) {
  appendZeroToNVVM(pm, options);
}
