//===- Runner.h - run a zero program on N ranks -----------------*- C++ -*-===//
//
// What zero-run does, as a library (the equivalence tests use it too):
// lower a module in tensors with `zero-to-llvm`, JIT it with MLIR's
// ExecutionEngine, and run its entry function on every rank of a world of
// zero's runtime, with inputs read from .npy files or made by a seeded
// generator.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_EXECUTION_RUNNER_H
#define ZERO_EXECUTION_RUNNER_H

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "zero/Execution/HostArray.h"
#include "zero/runtime/zero_runtime.h"

#include <map>
#include <memory>

namespace zero::exec {

/// Where one argument's value comes from.
struct InputSpec {
  /// A .npy file; "{rank}" in it is replaced by the rank. Empty: generated.
  std::string path;
  /// Whether a generated value differs per rank (a local gradient, a batch of
  /// data). Other generated values are the same on every rank.
  bool perRank = false;
  /// Generated values are uniform in [low, high) (integers: [low, high]).
  double low = -1, high = 1;
};

struct RunOptions {
  std::string backend = "local";
  int32_t ranks = 1;
  double timeoutSeconds = 60;
  uint64_t seed = 1;
  /// By argument index; arguments not named are generated with defaults.
  std::map<unsigned, InputSpec> inputs;
  /// Whether to keep the results (a benchmark that only times can drop them
  /// and save their memory).
  bool keepOutputs = true;
};

/// A module compiled for execution.
class Executable {
public:
  /// Lowers `module` (in tensors; it is modified) with zero-to-llvm and JITs
  /// function `entry`. Errors carry the diagnostics.
  static llvm::Expected<std::unique_ptr<Executable>>
  compile(mlir::ModuleOp module, llvm::StringRef entry);

  llvm::ArrayRef<mlir::Type> getArgumentTypes() const { return argTypes; }
  llvm::ArrayRef<mlir::Type> getResultTypes() const { return resultTypes; }

  /// Runs the entry function on the rank bound to this thread. `inputs` may
  /// be written (the program may update its arguments in place). Without
  /// `copyOutputs` the results are freed unread. `seconds`, when given,
  /// receives the wall time of the call itself.
  llvm::Error invoke(std::vector<HostArray> &inputs,
                     std::vector<HostArray> &outputs, bool copyOutputs = true,
                     double *seconds = nullptr) const;

private:
  Executable() = default;
  std::string entry;
  llvm::SmallVector<mlir::Type> argTypes, resultTypes;
  std::unique_ptr<mlir::ExecutionEngine> engine;
};

/// What one rank computed with one program.
struct RankRun {
  int32_t rank = 0;
  std::vector<HostArray> outputs;
  zero_counters counters = {};
  /// Wall-clock seconds of the call on this rank, collectives included.
  double seconds = 0;
};

/// The inputs of `rank` for a program with arguments `types`.
llvm::Error makeInputs(llvm::ArrayRef<mlir::Type> types,
                       const RunOptions &options, int32_t rank,
                       std::vector<HostArray> &inputs);

/// Runs each program of `programs` in turn (same signature) on every rank of
/// one world, with the same inputs. Returns, per program, the runs of the
/// ranks that live in this process. A failure on any rank fails the whole.
llvm::Expected<std::vector<std::vector<RankRun>>>
runOnRanks(llvm::ArrayRef<const Executable *> programs,
           const RunOptions &options);

} // namespace zero::exec

#endif // ZERO_EXECUTION_RUNNER_H
