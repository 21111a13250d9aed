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
#include "mlir/Pass/PassManager.h"
#include "zero/Execution/HostArray.h"
#include "zero/Target/Pipelines.h"
#include "zero/runtime/zero_runtime.h"

#include <map>
#include <memory>
#include <optional>

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
  /// Where to write a Chrome trace of the last program's run (empty: none).
  /// Under mpi, each process writes its ranks to the path with "{rank}"
  /// replaced by its first rank (or ".rank<r>" before the extension).
  std::string tracePath;
  /// Where to write each rank's arguments, as DIR/rank<r>/arg<i>.npy (empty:
  /// nowhere).
  std::string inputDir;
};

/// An argument or result of the entry function that is this rank's shard of
/// a whole tensor (`zero.shard = #zero.shard<...>`): the whole tensor,
/// flattened and padded to a multiple of the group size N, cut into N parts
/// of `shardElements`, part i on the rank with group index i.
struct BoundaryShard {
  mlir::RankedTensorType whole;
  int64_t shardElements = 0;
  /// The group index of each world rank.
  std::vector<int64_t> groupIndex;
};

/// Part `groupIndex` of `whole` (row-major), its padding zeroed.
HostArray takeShard(const HostArray &whole, const BoundaryShard &shard,
                    int64_t groupIndex);

/// `shard` with the elements past the end of the whole tensor (padding, of
/// unspecified value) zeroed, so two shards compare on real elements only.
void zeroShardPadding(HostArray &shard, const BoundaryShard &layout,
                      int64_t groupIndex);

/// What a launcher must know of an entry function: its argument and result
/// types, and which of them are shards. Read once, checked (static tensors
/// and scalars of the element types a launcher passes), and shared by the
/// JIT (Executable) and ahead-of-time compilation (zero-compile).
struct EntrySignature {
  std::string name;
  llvm::SmallVector<mlir::Type> argTypes, resultTypes;
  /// Per argument and result: its layout when it is a shard, else none.
  llvm::SmallVector<std::optional<BoundaryShard>> argShards, resultShards;

  /// Reads function `entry` of `module`; the error names what is wrong.
  static llvm::Expected<EntrySignature> read(mlir::ModuleOp module,
                                             llvm::StringRef entry);
  /// The types of the values the arguments and results stand for: the whole
  /// type of a shard, the type itself otherwise. Two programs with the same
  /// whole types run on the same inputs and compare.
  llvm::SmallVector<mlir::Type> getWholeArgumentTypes() const;
  llvm::SmallVector<mlir::Type> getWholeResultTypes() const;
};

/// The public function with a body that a tool runs: `requested` when given,
/// else the module's only one; the error says which is missing and how to
/// name one (--entry).
llvm::Expected<std::string> findEntryFunction(mlir::ModuleOp module,
                                              llvm::StringRef requested);
/// Parses `pipeline` (textual, e.g. "zero-weight-update-sharding") and runs
/// it on `module`; the error names the pipeline. Empty: nothing to run.
llvm::Error runPassPipeline(mlir::ModuleOp module, llvm::StringRef pipeline);
/// Runs the pipeline `build` makes on `module`; the error carries the
/// diagnostics, each with its location.
llvm::Error lowerModule(mlir::ModuleOp module,
                        llvm::function_ref<void(mlir::OpPassManager &)> build);
/// The ranks of the module's mesh; 0 when it has none, or meshes of
/// different sizes.
int64_t getMeshRanks(mlir::ModuleOp module);

/// A module compiled for execution.
class Executable {
public:
  /// Lowers `module` (in tensors; it is modified) with zero-to-llvm and JITs
  /// function `entry`. Errors carry the diagnostics.
  static llvm::Expected<std::unique_ptr<Executable>>
  compile(mlir::ModuleOp module, llvm::StringRef entry,
          const ZeroToLLVMOptions &lowering = {});

  const EntrySignature &getSignature() const { return signature; }
  llvm::ArrayRef<mlir::Type> getArgumentTypes() const {
    return signature.argTypes;
  }
  llvm::ArrayRef<mlir::Type> getResultTypes() const {
    return signature.resultTypes;
  }
  llvm::ArrayRef<std::optional<BoundaryShard>> getArgumentShards() const {
    return signature.argShards;
  }
  llvm::ArrayRef<std::optional<BoundaryShard>> getResultShards() const {
    return signature.resultShards;
  }
  llvm::SmallVector<mlir::Type> getWholeArgumentTypes() const {
    return signature.getWholeArgumentTypes();
  }
  llvm::SmallVector<mlir::Type> getWholeResultTypes() const {
    return signature.getWholeResultTypes();
  }

  /// Runs the entry function on the rank bound to this thread. `inputs` may
  /// be written (the program may update its arguments in place). Without
  /// `copyOutputs` the results are freed unread. `seconds`, when given,
  /// receives the wall time of the call itself.
  llvm::Error invoke(std::vector<HostArray> &inputs,
                     std::vector<HostArray> &outputs, bool copyOutputs = true,
                     double *seconds = nullptr) const;

private:
  Executable() = default;
  EntrySignature signature;
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

/// Runs each program of `programs` in turn (same whole argument types) on
/// every rank of one world, with the same inputs: a program whose argument is
/// a shard gets this rank's part of the input. Returns, per program, the runs
/// of the ranks that live in this process. A failure on any rank fails the
/// whole.
llvm::Expected<std::vector<std::vector<RankRun>>>
runOnRanks(llvm::ArrayRef<const Executable *> programs,
           const RunOptions &options);

} // namespace zero::exec

#endif // ZERO_EXECUTION_RUNNER_H
