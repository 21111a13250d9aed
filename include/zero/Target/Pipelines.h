//===- Pipelines.h - zero-to-llvm and zero-to-nvvm --------------*- C++ -*-===//
//
// The two lowerings of a zero program in tensors: to the LLVM dialect for
// the CPU, and to host code that launches CUDA kernels. Each is a pass
// pipeline of zero's and upstream's passes, registered with every tool that
// calls zero::registerAllPasses(), and a function for your own pass manager.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_PIPELINES_H
#define ZERO_TARGET_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "zero/Target/GPU/Options.h"

#ifndef ZERO_DEFAULT_CUDA_PATH
#define ZERO_DEFAULT_CUDA_PATH "/usr/local/cuda"
#endif

namespace zero {

/// Options of `zero-to-llvm`.
struct ZeroToLLVMOptions : public mlir::PassPipelineOptions<ZeroToLLVMOptions> {
  PassOptions::Option<bool> gpuLoops{
      *this, "gpu-loops",
      llvm::cl::desc(
          "Structure the loop nests as zero-to-nvvm does before it maps them "
          "to kernels (reductions split, matmuls as GEMM calls, here of the "
          "runtime's host GEMM, copies as loop nests, 16-byte accesses, "
          "independent loops merged) and run them in order on the CPU: the "
          "GPU pipeline's rewrites, checked without a GPU"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> runtimeChecks{
      *this, "runtime-checks",
      llvm::cl::desc(
          "Check the program's own accesses at run time "
          "(generate-runtime-verification, then zero-checks-to-runtime): an "
          "index outside its buffer ends every rank with a message naming "
          "the op instead of corrupting memory"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> outlineLoopNests{
      *this, "outline-loop-nests",
      llvm::cl::desc(
          "Move each loop nest into a function of its own "
          "(zero-outline-loop-nests), so that LLVM's compile time stays "
          "linear in the number of loops of a step"),
      llvm::cl::init(true)};
};

/// Builds `zero-to-llvm`: a program in tensors (func, scf, arith, math,
/// tensor, linalg, zero) to the LLVM dialect for the CPU, with collectives as
/// runtime calls. Steps: elementwise ops to linalg and fused, One-Shot
/// Bufferize (function boundaries included,
/// identity layouts), buffer deallocation, linalg to loops,
/// `zero-lower-to-runtime`, and the upstream conversions to LLVM.
void buildZeroToLLVMPipeline(mlir::OpPassManager &pm,
                             const ZeroToLLVMOptions &options = {});

/// Registers `zero-to-llvm` as a pass pipeline.
void registerZeroToLLVMPipeline();

/// Options of `zero-to-nvvm`.
struct ZeroToNVVMOptions : public mlir::PassPipelineOptions<ZeroToNVVMOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip", llvm::cl::desc("The GPU architecture (sm_90: H100, H200)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (+ptx80: PTX 8.0, the least sm_90 takes)"),
      llvm::cl::init("+ptx80")};
  PassOptions::Option<GpuFormat> gpuFormat{
      *this, "gpu-format", llvm::cl::desc("How kernels are embedded"),
      gpuFormatValues(), llvm::cl::init(GpuFormat::Auto)};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path", llvm::cl::desc("The CUDA toolkit (ptxas, libdevice)"),
      llvm::cl::init(ZERO_DEFAULT_CUDA_PATH)};
  PassOptions::Option<GpuCollectives> gpuCollectives{
      *this, "gpu-collectives",
      llvm::cl::desc("Where collectives move data (zero-gpu-buffer-placement)"),
      gpuCollectivesValues(), llvm::cl::init(GpuCollectives::Device)};
  PassOptions::Option<bool> cublas{
      *this, "cublas",
      llvm::cl::desc("Matmuls as calls of cuBLAS through the runtime "
                     "(zero-gemm-calls); false: loop nests, as kernels"),
      llvm::cl::init(true)};
  PassOptions::Option<int64_t> blockSize{
      *this, "block-size", llvm::cl::desc("Threads per block of a kernel"),
      llvm::cl::init(256)};
};

/// `zero-to-nvvm`: the tensor-level program to host code in the LLVM
/// dialect that launches CUDA kernels, one per parallel loop nest, compiled
/// for `chip` and embedded (`gpu.binary`); bufferization as in zero-to-llvm,
/// the host's buffers in managed memory (`zero-gpu-host-memory`).
void buildZeroToNVVMPipeline(mlir::OpPassManager &pm,
                             const ZeroToNVVMOptions &options);
void registerZeroToNVVMPipeline();

} // namespace zero

#endif // ZERO_TARGET_PIPELINES_H
