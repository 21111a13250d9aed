//===- Options.h - the GPU target's settings --------------------*- C++ -*-===//
//
// The settings of the CUDA lowering, each with one name and one default in
// every place it is given: the zero-to-nvvm pipeline, its passes and
// zero-compile (`chip`, `gpu-format`, `gpu-collectives`, `cuda-path`).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_GPU_OPTIONS_H
#define ZERO_TARGET_GPU_OPTIONS_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

/// The CUDA toolkit the GPU options default to (`cuda-path`): the one zero
/// was configured with (CMake's ZERO_CUDA_PATH).
#ifndef ZERO_DEFAULT_CUDA_PATH
#define ZERO_DEFAULT_CUDA_PATH "/usr/local/cuda"
#endif

namespace zero {

/// How kernels are embedded (`gpu-format`).
enum class GpuFormat {
  /// bin where ptxas is found (in the toolkit's bin/ or on PATH), else isa.
  Auto,
  /// A cubin, made by ptxas.
  Bin,
  /// PTX, which the driver compiles when the artifact loads.
  Isa,
};

/// Where collectives move data (`gpu-collectives`).
enum class GpuCollectives {
  /// On the GPU: the cuda-local and nccl backends; buffers may stay in
  /// device memory.
  Device,
  /// On the host: the local and mpi backends, on managed memory.
  Host,
};

/// Whose GEMM `zero-gemm-calls` calls (`gemm`).
enum class GemmLibrary {
  /// cuBLAS, on the rank's stream.
  Cublas,
  /// The runtime's CPU replica of it, summing in the same order.
  Host,
};

/// The values of `gpu-format` and `gpu-collectives`, with their help, for
/// every option that takes them.
llvm::cl::ValuesClass gpuFormatValues();
llvm::cl::ValuesClass gpuCollectivesValues();

/// "device" or "host", as the IR (`zero.gpu_collectives`) and an artifact's
/// description record it.
llvm::StringRef stringifyGpuCollectives(GpuCollectives collectives);

/// Whether ptxas is found: in `cudaPath`/bin, else on PATH.
bool hasPtxas(llvm::StringRef cudaPath);

/// `format` with auto resolved (Bin or Isa); an error when Bin is asked for
/// and ptxas is not found.
llvm::Expected<GpuFormat> resolveGpuFormat(GpuFormat format,
                                           llvm::StringRef cudaPath);

} // namespace zero

#endif // ZERO_TARGET_GPU_OPTIONS_H
