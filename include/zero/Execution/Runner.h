//===- Runner.h - run a zero program on N ranks -----------------*- C++ -*-===//
//
// What zero-run does, as a library (the equivalence tests use it too):
// lower a module in tensors with `zero-to-llvm` and JIT it with MLIR's
// ExecutionEngine, as a program the runtime's launcher (zero/runtime/
// Launcher.h) runs on every rank of a world.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_EXECUTION_RUNNER_H
#define ZERO_EXECUTION_RUNNER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"
#include "zero/Pipelines/Passes.h"
#include "zero/runtime/Launcher.h"

#include <memory>
#include <optional>

namespace mlir {
class ExecutionEngine;
} // namespace mlir

namespace zero::exec {

namespace rt = ::zero::rt;

/// The runtime's name of an element type ("f32", "bf16", "index", ...), as
/// in artifact descriptions; empty for a type a launcher cannot pass.
std::string getDtypeName(mlir::Type type);

/// What a launcher must know of an entry function: its argument and result
/// types, and which of them are shards. Read once, checked (static tensors
/// and scalars of the element types a launcher passes), and shared by the
/// JIT (Executable) and ahead-of-time compilation (zero-compile).
struct EntrySignature {
  std::string name;
  llvm::SmallVector<mlir::Type> argTypes, resultTypes;
  /// The types of the values the arguments and results stand for: the whole
  /// type of a shard, the type itself otherwise. Two programs with the same
  /// whole types run on the same inputs and compare.
  llvm::SmallVector<mlir::Type> wholeArgTypes, wholeResultTypes;
  /// The arguments and results as the runtime sees them (named arg<i> and
  /// result<i>), each shard with its layout.
  std::vector<rt::ArtifactValue> arguments, results;

  /// Reads function `entry` of `module`; the error names what is wrong.
  static llvm::Expected<EntrySignature> read(mlir::ModuleOp module,
                                             llvm::StringRef entry);
};

/// The public function with a body that a tool runs: `requested` when given,
/// else the module's only one; the error says which is missing and how to
/// name one (--entry).
llvm::Expected<std::string> findEntryFunction(mlir::ModuleOp module,
                                              llvm::StringRef requested);
/// Parses `pipeline` (textual, e.g. "zero-weight-update-sharding") and runs
/// it on `module`; the error names the pipeline. Empty: nothing to run.
llvm::Error runPassPipeline(mlir::ModuleOp module, llvm::StringRef pipeline);
/// Runs the pipeline `build` makes on `module` and verifies the result once
/// (not after each pass); the error carries the diagnostics, each with its
/// location. With `timing`, each pass is timed under it.
llvm::Error lowerModule(mlir::ModuleOp module,
                        llvm::function_ref<void(mlir::OpPassManager &)> build,
                        mlir::TimingScope *timing = nullptr);
/// The ranks of the module's mesh; 0 when it has none, or meshes of
/// different sizes.
int64_t getMeshRanks(mlir::ModuleOp module);

/// A module compiled for execution: a program the runtime's launcher runs.
class Executable : public rt::Program {
public:
  /// Lowers `module` (in tensors; it is modified) with zero-to-llvm and JITs
  /// function `entry`. Errors carry the diagnostics.
  static llvm::Expected<std::unique_ptr<Executable>>
  compile(mlir::ModuleOp module, llvm::StringRef entry,
          const ZeroToLLVMOptions &lowering = {});

  ~Executable() override;

  const EntrySignature &getSignature() const { return signature; }

  const std::string &getEntryName() const override { return signature.name; }
  const std::vector<rt::ArtifactValue> &getArguments() const override {
    return signature.arguments;
  }
  const std::vector<rt::ArtifactValue> &getResults() const override {
    return signature.results;
  }
  bool collectivesProven() const override { return collectivesUniform; }
  /// Calls the JIT-compiled entry on the bound rank; results the program
  /// allocated are copied out (when `outputs` is given) and freed.
  std::string call(std::vector<rt::Array> &inputs,
                   std::vector<rt::Array> *outputs,
                   double &seconds) const override;

private:
  Executable() = default;
  EntrySignature signature;
  std::unique_ptr<mlir::ExecutionEngine> engine;
  /// The engine's `zero_artifact_entry` (PackedEntry.h).
  void (*entry)(void **) = nullptr;
  /// zero-verify-collectives proved the module's collectives alike on every
  /// rank.
  bool collectivesUniform = false;
};

} // namespace zero::exec

#endif // ZERO_EXECUTION_RUNNER_H
