//===- Launcher.h - run a program on every rank of a world -------*- C++
//-*-===//
//
// What a launcher does between its command line and its report, once for
// every tool: make a world, give each rank its inputs (read from .npy files
// or generated, a shard argument its part), call the program on every rank,
// collect the results and counters, write the trace. zero-launch runs an
// artifact with it; zero-run a module it JIT-compiles.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LAUNCHER_H
#define ZERO_RUNTIME_LAUNCHER_H

#include "zero/runtime/Artifact.h"
#include "zero/runtime/zero_runtime.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zero::rt {

/// Where one argument's value comes from.
struct InputSpec {
  /// A .npy file; "{rank}" in it is replaced by the rank and "{step}" by the
  /// step. Empty: generated.
  std::string path;
  /// Whether a generated value differs per rank (a local gradient, a batch
  /// of data). Other generated values are the same on every rank.
  bool perRank = false;
  /// Generated values are uniform in [low, high) (integers: [low, high]).
  /// Each step's are new: the step is in their seed (stepSeed).
  double low = -1, high = 1;
};

/// The seed of step `step`'s generated values: `seed` itself at step 0.
uint64_t stepSeed(uint64_t seed, int64_t step);

struct LaunchOptions {
  std::string backend = "local";
  /// Ranks of a local world (mpi and nccl: the job's).
  int32_t ranks = 1;
  /// The ranks the programs were built for; 0: any.
  int64_t meshRanks = 0;
  double timeoutSeconds = 60;
  /// Have the ranks compare each collective before it runs even when the
  /// compiler proved every program's collectives alike (otherwise they
  /// compare only for a program it did not prove).
  bool checkCollectives = false;
  uint64_t seed = 1;
  /// By argument index; arguments not named are generated with defaults.
  std::map<unsigned, InputSpec> inputs;
  /// Whether to keep the results (a benchmark that only times drops them).
  bool keepOutputs = true;
  /// Calls of each program per rank, inputs made afresh for each; the best
  /// time counts, the last call's results are kept.
  int repeat = 1;
  /// Steps of each call: the state results (ArtifactValue::stateOf) of one
  /// step are the next one's state arguments, kept where the program keeps
  /// its buffers; the other arguments are new each step.
  int64_t steps = 1;
  /// The number of the first step: the step in the data's seed and in
  /// "{step}" file names, and in the checkpoints' names. A loaded
  /// checkpoint sets it (the steps it has done).
  int64_t firstStep = 0;
  /// Where to write a Chrome trace of the last program's last call (empty:
  /// none). Under mpi each process writes its ranks to the path with
  /// "{rank}" replaced by its first rank (or ".rank<r>" before the
  /// extension).
  std::string tracePath;
  /// Where to save the state (zero/runtime/Checkpoint.h): after the last
  /// step, and every `saveEvery` steps when positive. Empty: nowhere.
  std::string saveDir;
  int64_t saveEvery = 0;
  /// A checkpoint to start from: its state replaces the state arguments,
  /// and the steps go on from its step (data for step K is step K's).
  std::string loadDir;
  /// Where to write each rank's whole arguments, as DIR/rank<r>/arg<i>.npy
  /// (empty: nowhere).
  std::string inputDir;
};

/// What one rank computed with one program.
struct RankRun {
  int32_t rank = 0;
  std::vector<Array> outputs;
  /// The collectives of the program's calls on this rank.
  zero_counters counters = {};
  /// Wall-clock seconds of the call, collectives included (the best of
  /// the repeats), and of each step of that repeat.
  double seconds = 0;
  std::vector<double> stepSeconds;
  /// Buffers the rank took from the system allocator (or the CUDA driver)
  /// in the steps after the first, of that same repeat (-1 for one step): a
  /// step that reuses its buffers takes none.
  int64_t laterStepAllocations = -1;
  /// This rank's checkpoint files: bytes written by the saves (all of
  /// them) and read by the load, and the seconds the rank spent writing
  /// and reading them (not waiting for the other ranks).
  int64_t savedBytes = 0, loadedBytes = 0;
  double saveSeconds = 0, loadSeconds = 0;
  /// Whether the ranks compared each collective before it ran: not when
  /// every program's collectives were proven alike and none was asked for
  /// (LaunchOptions::checkCollectives).
  bool agreementChecked = true;
};

/// The whole value of each of `arguments` on `rank` at step `step` (a
/// shard's whole tensor), read from its file or generated; where `wanted` is
/// given, only the arguments it marks (the others stay empty). With
/// `shardsAlone`, a generated shard argument is made as the rank's shard
/// only (the same elements as the whole's part, padding zero), so that no
/// rank holds the whole. Returns an error message naming the argument, or
/// "".
std::string makeInputs(const std::vector<ArtifactValue> &arguments,
                       const LaunchOptions &options, int32_t rank,
                       std::vector<Array> &inputs, int64_t step = 0,
                       const std::vector<bool> *wanted = nullptr,
                       bool shardsAlone = false);

/// Runs each of `programs` in turn (the same whole argument types) on every
/// rank of one world, with the same inputs: a program whose argument is a
/// shard gets this rank's part. Fills `runs`, per program, with the runs of
/// the ranks that live in this process. A failure on any rank fails the
/// whole; returns the world's message, or "".
std::string launch(const std::vector<const Program *> &programs,
                   const LaunchOptions &options,
                   std::vector<std::vector<RankRun>> &runs);

} // namespace zero::rt

#endif // ZERO_RUNTIME_LAUNCHER_H
