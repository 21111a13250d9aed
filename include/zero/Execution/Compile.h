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
#include "mlir/Support/Timing.h"
#include "zero/Pipelines/Passes.h"
#include "llvm/Support/Error.h"

#include <string>

namespace zero::exec {

/// What an artifact runs on.
enum class ArtifactTarget {
  /// The host's architecture.
  Cpu,
  /// Host code on the CPU, kernels on an NVIDIA GPU.
  Cuda,
};

/// How zero-compile builds an artifact.
struct ArtifactOptions {
  ArtifactTarget target = ArtifactTarget::Cpu;
  /// cuda: zero-to-nvvm's options (chip, gpu-format, gpu-collectives,
  /// cuda-path, ...), with the defaults zero/Pipelines/Passes.td declares.
  ZeroToNVVMOptions cuda;
  /// The host code's CPU: a name LLVM knows ("x86-64-v3", "znver4") or
  /// "native". The default runs on any x86-64 of the last 15 years.
  std::string hostCpu = "x86-64-v2";
  /// The compiler driver that links the object into a shared library (empty:
  /// the C compiler zero was built with).
  std::string linker;
  /// cpu: options of `zero-to-llvm` in its textual form, e.g.
  /// "outline-loop-nests=false"; empty: its defaults.
  std::string loweringOptions;
  /// Threads that generate code, each for a partition of the program's
  /// functions (0: one per core).
  unsigned codegenThreads = 0;
};

/// Lowers function `entry` of `module` (in tensors; the module is modified)
/// and writes the artifact to `outputPath`; the description it embeds goes
/// to `description` when given. Errors name what failed: the entry's
/// signature, a lowering diagnostic with its location, the linker. With
/// `timing`, its phases are timed under it: MLIR lowering (pass by pass),
/// translation to LLVM IR, LLVM optimization, code generation, link.
llvm::Error compileArtifact(mlir::ModuleOp module, llvm::StringRef entry,
                            const ArtifactOptions &options,
                            llvm::StringRef outputPath,
                            std::string *description = nullptr,
                            mlir::TimingScope *timing = nullptr);

} // namespace zero::exec

#endif // ZERO_EXECUTION_COMPILE_H
