//===- Artifact.h - load a program compiled ahead of time ------*- C++ -*-===//
//
// zero-compile turns a zero program into one shared library, the artifact. It
// exports:
//   zero_artifact_entry        void (void **args): the entry function, packed
//                              (see PackedCall.h);
//   zero_artifact_description  const char[]: JSON saying what the entry takes
//                              and returns, and what it was built for:
//
//   { "format": "zero-artifact", "version": 1, "runtime_abi": 1,
//     "target": "cpu" | "cuda", "chip": "sm_90" (cuda only),
//     "kernels": "cubin" | "ptx" (cuda only: made by ptxas, or PTX that the
//               driver compiles at load),
//     "memory": "host" | "device" | "managed", where the buffers live (cuda:
//               "device" when the host code never touches their elements,
//               else "managed" and "memory_reason" says which op does),
//     "collectives": "device" | "host" (cuda only: whether collectives
//               move data on the GPU, with cuda-local or nccl, or on the
//               host, with local or mpi),
//     "collectives_uniform": true | false, whether zero-verify-collectives
//               proved that every rank issues every collective alike
//               (absent: false),
//     "entry": "step",
//     "ranks": 4,                        (ranks of the mesh; 0: no mesh)
//     "arguments": [ { "name": "arg0", "dtype": "f32", "shape": [7, 13],
//                      "tensor": true, "per_rank": false }, ...,
//                    { "name": "arg4", "dtype": "f32", "shape": [23], ...,
//                      "per_rank": true,
//                      "shard": { "whole": [7, 13], "shard_elements": 23,
//                                 "group_index": [0, 1, 2, 3] } } ],
//     "results": [ { "name": "result0", ..., "state_of": 0 }, ... ] }
//
// A result with "state_of" is the next value of that argument (same type and
// layout): zero-launch --steps feeds it there. An argument with
// "starts_at_zero": true is state the compiler added (an error-feedback
// residual): a launcher starts it at zero unless an input names it.
//
// A value with a "shard" is each rank's part of a whole tensor (#zero.shard):
// a launcher passes the part of the whole value at the rank's group index.
// Artifact loads the library and reads the description; the runtime ABI it
// was built against must be this runtime's.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_ARTIFACT_H
#define ZERO_RUNTIME_ARTIFACT_H

#include "zero/runtime/PackedCall.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

/// The version of the ABI between compiled code and this runtime: the zero_rt_*
/// and GPU launch functions, and the packed entry. An artifact records the
/// one it was built for.
#define ZERO_RUNTIME_ABI_VERSION 13

namespace zero::rt {

/// The artifact's two exports (above).
inline constexpr char kArtifactEntrySymbol[] = "zero_artifact_entry";
inline constexpr char kArtifactDescriptionSymbol[] =
    "zero_artifact_description";

/// How a shard argument or result lies in its whole tensor.
struct ShardLayout {
  std::vector<int64_t> whole;
  int64_t shardElements = 0;
  /// The group index of each world rank.
  std::vector<int64_t> groupIndex;

  int64_t getWholeElements() const;
};

struct ArtifactValue {
  std::string name;
  ValueType type;
  std::optional<ShardLayout> shard;
  /// A result that is the next value of an argument (a weight, a moment):
  /// that argument's index. A launcher running many steps feeds it there.
  std::optional<size_t> stateOf;
  /// An argument whose first value is zeros, made so when no input names it
  /// (an error-feedback residual or the delayed update's state, which the
  /// compiler added and the caller cannot know to give).
  bool startsAtZero = false;
  /// "host" for a GPU artifact's value kept in pinned host memory (an
  /// offloaded update's state); empty: where the description's "memory"
  /// says.
  std::string memory;
};

struct ArtifactDescription {
  int64_t version = 0;
  int64_t runtimeAbi = 0;
  std::string target;
  std::string chip;
  /// "host", "device" or "managed" (older descriptions: by target).
  std::string memory;
  std::string memoryReason;
  /// "host" or "device" (older descriptions: host).
  std::string collectives;
  /// Proven by the compiler: every rank issues every collective alike.
  bool collectivesUniform = false;
  std::string entry;
  int64_t ranks = 0;
  std::vector<ArtifactValue> arguments, results;
};

/// Parses a description (the JSON above). Returns an error message, empty on
/// success.
std::string parseArtifactDescription(const std::string &json,
                                     ArtifactDescription &description);

/// A program a launcher runs on every rank: an artifact, or a module that
/// zero-run compiled.
class Program {
public:
  virtual ~Program() = default;
  /// The entry function's name.
  virtual const std::string &getEntryName() const = 0;
  /// The entry's arguments and results, with their shard layouts.
  virtual const std::vector<ArtifactValue> &getArguments() const = 0;
  virtual const std::vector<ArtifactValue> &getResults() const = 0;
  /// Calls the entry on the rank bound to this thread with `inputs`, this
  /// rank's values (a shard argument's part), which the call may update in
  /// place. Copies the results into `outputs` unless it is null; sets
  /// `seconds` to the call's wall time. Returns an error message, or "".
  virtual std::string call(std::vector<Array> &inputs,
                           std::vector<Array> *outputs,
                           double &seconds) const = 0;

  /// What a caller of callSteps does around each step; each is optional.
  struct StepHooks {
    /// Runs at the start of each step, before its values are made.
    std::function<void(int64_t step)> beginStep;
    /// Runs just before each call (a barrier, so that the ranks start the
    /// step together and its time is its own); an error message ends the
    /// steps.
    std::function<std::string(int64_t step)> beforeCall;
    /// Where the state goes between steps (a checkpoint): after each step
    /// that `wantsState`, `takeState` gets per argument the value the next
    /// step would take (empty where no result feeds it), copied to the host.
    std::function<bool(int64_t step)> wantsState;
    std::function<std::string(int64_t step, const std::vector<Array> &state)>
        takeState;

    void begin(int64_t step) const {
      if (beginStep)
        beginStep(step);
    }
    bool wants(int64_t step) const { return wantsState && wantsState(step); }
    std::string before(int64_t step) const {
      return beforeCall ? beforeCall(step) : "";
    }
  };

  /// Writes `bytes` bytes of an argument's value at byte `offset` of the
  /// buffer the call reads it from.
  using PieceSink =
      std::function<void(size_t offset, const void *data, size_t bytes)>;

  /// Makes the value of argument `argument` for step `step` (this rank's, a
  /// shard's part); returns an error message, or "". callSteps asks for one
  /// argument at a time, each just before it goes where the call reads it,
  /// so that a rank holds at most one value twice. Where `pieces` is given,
  /// the maker may write the whole value through it in pieces instead,
  /// leaving `value` empty: a large generated value is then never held
  /// twice.
  using StepInputs = std::function<std::string(
      int64_t step, size_t argument, Array &value, const PieceSink *pieces)>;

  /// Calls the entry `steps` times on the bound rank: each call after the
  /// first takes, for every argument that a result feeds (stateOf), that
  /// result of the call before, and the rest from `inputsOf`. Copies the
  /// last call's results into `outputs` unless it is null; `stepSeconds`
  /// gets the wall time of each call; `hooks` run around each call. Returns
  /// an error message, or "". By default the state goes through host arrays;
  /// an artifact keeps it where its buffers live.
  virtual std::string callSteps(int64_t steps, const StepInputs &inputsOf,
                                std::vector<Array> *outputs,
                                std::vector<double> &stepSeconds,
                                const StepHooks &hooks = {}) const;

  /// Per argument, whether a result feeds it (stateOf).
  std::vector<bool> getFedArguments() const;

  /// Whether the compiler proved that every rank issues every collective
  /// of the program alike (zero-verify-collectives): a launcher then need
  /// not have the ranks compare each collective before it runs.
  virtual bool collectivesProven() const { return false; }
};

/// A loaded artifact.
class Artifact : public Program {
public:
  /// Loads the shared library at `path` and checks its description. On
  /// error returns null and sets `error`.
  static std::unique_ptr<Artifact> open(const std::string &path,
                                        std::string &error);
  ~Artifact();

  const ArtifactDescription &getDescription() const { return description; }
  const std::string &getDescriptionText() const { return descriptionText; }

  /// Checks that the artifact can run here on `backend`: the backend moves
  /// its buffers (GPU ones for cuda-local and nccl, host ones for local and
  /// mpi), and for a GPU artifact, a GPU of its chip with its kernels
  /// loaded. Returns an error message, or "".
  std::string checkRunnable(const std::string &backend) const;

  const std::string &getEntryName() const override { return description.entry; }
  bool collectivesProven() const override {
    return description.collectivesUniform;
  }
  const std::vector<ArtifactValue> &getArguments() const override {
    return description.arguments;
  }
  const std::vector<ArtifactValue> &getResults() const override {
    return description.results;
  }
  /// Copies the inputs into buffers where the description says they live
  /// (host, device or managed memory), calls the entry, and copies the
  /// results back.
  std::string call(std::vector<Array> &inputs, std::vector<Array> *outputs,
                   double &seconds) const override;
  /// The state stays in the artifact's buffers (device memory for a GPU
  /// artifact) from one call to the next, and the values from the host are
  /// written into the same buffers every step.
  std::string callSteps(int64_t steps, const StepInputs &inputsOf,
                        std::vector<Array> *outputs,
                        std::vector<double> &stepSeconds,
                        const StepHooks &hooks = {}) const override;

  /// The packed entry itself (see PackedCall.h), for a caller that places
  /// the buffers itself.
  using EntryFn = void (*)(void **);
  EntryFn getEntry() const { return entry; }

private:
  Artifact() = default;
  void *handle = nullptr;
  EntryFn entry = nullptr;
  std::string descriptionText;
  ArtifactDescription description;
};

} // namespace zero::rt

#endif // ZERO_RUNTIME_ARTIFACT_H
