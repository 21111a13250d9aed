//===- Compile.h - a zero program compiled ahead of time ---------*- C++
//-*-===//
//
// zero-compile as a library: lowers a module in tensors and writes one shared
// library, the artifact, that zero-launch (runtime/, no LLVM) loads and runs.
// The artifact exports the entry function in packed form and a JSON
// description of its arguments and results; runtime/include/zero/runtime/
// Artifact.h documents both.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_EXECUTION_COMPILE_H
#define ZERO_EXECUTION_COMPILE_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <string>

namespace zero::exec {

struct ArtifactOptions {
  /// "cpu" (the host's architecture) or "cuda" (host code on the CPU,
  /// kernels on an NVIDIA GPU, buffers in managed memory).
  std::string target = "cpu";
  /// cuda: the GPU architecture, and how kernels are embedded: "bin" (cubin,
  /// by ptxas), "isa" (PTX, compiled by the driver when loaded), or "auto"
  /// (bin when ptxas is found, in the toolkit's bin/ or on PATH, else isa).
  std::string chip = "sm_90";
  std::string gpuFormat = "auto";
  /// cuda: where collectives move data: "device" (the cuda-local and nccl
  /// backends) or "host" (local and mpi, on managed memory).
  std::string gpuCollectives = "device";
  /// cuda: the CUDA toolkit (empty: zero-to-nvvm's default).
  std::string cudaPath;
  /// The host code's CPU: a name LLVM knows ("x86-64-v3", "znver4") or
  /// "native". The default runs on any x86-64 of the last 15 years.
  std::string hostCpu = "x86-64-v2";
  /// The compiler driver that links the object into a shared library (empty:
  /// the C compiler zero was built with).
  std::string linker;
};

/// Lowers function `entry` of `module` (in tensors; the module is modified)
/// and writes the artifact to `outputPath`; the description it embeds goes
/// to `description` when given. Errors name what failed: the entry's
/// signature, a lowering diagnostic with its location, the linker.
llvm::Error compileArtifact(mlir::ModuleOp module, llvm::StringRef entry,
                            const ArtifactOptions &options,
                            llvm::StringRef outputPath,
                            std::string *description = nullptr);

} // namespace zero::exec

#endif // ZERO_EXECUTION_COMPILE_H
