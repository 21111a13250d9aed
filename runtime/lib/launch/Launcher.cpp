//===- Launcher.cpp - run a program on every rank of a world --------------===//

#include "zero/runtime/Launcher.h"
#include "core/FatalSignals.h"
#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/Files.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

using namespace zero::rt;

uint64_t zero::rt::stepSeed(uint64_t seed, int64_t step) {
  // The golden-ratio increment of SplitMix64: distinct steps, distinct
  // streams, for any seed.
  return seed + static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ull;
}

namespace {

/// Why `options` name an argument the entry lacks, or "".
std::string checkNamedArguments(const std::vector<ArtifactValue> &arguments,
                                const LaunchOptions &options) {
  for (const auto &[index, spec] : options.inputs)
    if (index >= arguments.size())
      return "argument " + std::to_string(index) +
             " is named (--arg, --per-rank or --range), but the entry takes " +
             std::to_string(arguments.size()) + " arguments";
  return "";
}

/// How argument `index` is made: as named by the options, or generated.
InputSpec specOf(const LaunchOptions &options, size_t index) {
  auto it = options.inputs.find(index);
  return it == options.inputs.end() ? InputSpec() : it->second;
}

/// Generates `array`'s elements of argument `index` at step `step`, from
/// element `firstElement` of the whole value on.
/// State that starts at zero (ArtifactValue::startsAtZero) is made zeros.
void fillGenerated(Array &array, const ArtifactValue &value,
                   const LaunchOptions &options, const InputSpec &spec,
                   size_t index, int32_t rank, int64_t step,
                   int64_t firstElement = 0) {
  if (value.startsAtZero) {
    array.bytes.assign(array.getNumElements() * getElementBytes(array.dtype),
                       0);
    return;
  }
  fillUniform(array, stepSeed(options.seed, step), unsigned(index),
              spec.perRank ? rank : -1, spec.low, spec.high, firstElement);
}

} // namespace

std::string zero::rt::makeInputs(const std::vector<ArtifactValue> &arguments,
                                 const LaunchOptions &options, int32_t rank,
                                 std::vector<Array> &inputs, int64_t step,
                                 const std::vector<bool> *wanted,
                                 bool shardsAlone) {
  inputs.clear();
  if (std::string error = checkNamedArguments(arguments, options);
      !error.empty())
    return error;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const ArtifactValue &value = arguments[i];
    Array array;
    if (wanted && !(*wanted)[i]) {
      inputs.push_back(std::move(array));
      continue;
    }
    array.dtype = value.type.dtype;
    array.shape = value.shard ? value.shard->whole : value.type.shape;
    InputSpec spec = specOf(options, i);
    if (spec.path.empty() && value.shard && shardsAlone) {
      const ShardLayout &shard = *value.shard;
      int64_t part = shard.groupIndex[rank];
      array.shape = {shard.shardElements};
      fillGenerated(array, value, options, spec, i, rank, step,
                    part * shard.shardElements);
      zeroShardPadding(array, shard.getWholeElements(), part);
    } else if (spec.path.empty()) {
      fillGenerated(array, value, options, spec, i, rank, step);
    } else if (std::string error =
                   readNpy(withStep(withRank(spec.path, rank), step), array);
               !error.empty()) {
      return value.name + " (argument " + std::to_string(i) + "): " + error;
    }
    inputs.push_back(std::move(array));
  }
  return "";
}

namespace {

/// This process's trace file: `path`, with "{rank}" replaced by its first
/// rank, or with ".rank<r>" before the extension when other processes
/// write traces of their own.
std::string tracePath(const std::string &path, zero_world *world) {
  int32_t first = zero_rank_id(zero_world_local_rank(world, 0));
  if (path.find("{rank}") != std::string::npos)
    return withRank(path, first);
  if (zero_world_num_local_ranks(world) == zero_world_size(world))
    return path;
  size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    dot = path.size();
  return path.substr(0, dot) + ".rank" + std::to_string(first) +
         path.substr(dot);
}

/// Argument `index` as `program` takes it on world rank `rank`: a shard
/// argument's part, taken from a whole value (one made as the shard is taken
/// as is).
Array argumentFor(const Program &program, size_t index, Array value,
                  int32_t rank) {
  const std::vector<ArtifactValue> &arguments = program.getArguments();
  if (index < arguments.size())
    if (const auto &shard = arguments[index].shard;
        shard && !value.bytes.empty() && value.shape == shard->whole)
      return takeShard(value, shard->shardElements, shard->groupIndex[rank]);
  return value;
}

/// Writes argument `index` of step `step`, when it is generated whole (not
/// read from a file, not a shard), through `pieces`, a million elements at
/// a time: the elements makeInputs makes, never all at once on the host.
/// False when it is not such an argument (or the options name one the
/// entry lacks, which makeInputs reports).
bool generateInPieces(const std::vector<ArtifactValue> &arguments,
                      const LaunchOptions &options, size_t index, int32_t rank,
                      int64_t step, const Program::PieceSink &pieces) {
  if (!checkNamedArguments(arguments, options).empty())
    return false;
  const ArtifactValue &argument = arguments[index];
  InputSpec spec = specOf(options, index);
  if (argument.shard || !spec.path.empty())
    return false;
  const std::string &dtype = argument.type.dtype;
  int64_t elements = getNumElements(argument.type.shape);
  int64_t elementBytes = getElementBytes(dtype);
  constexpr int64_t kPiece = int64_t(1) << 20;
  for (int64_t first = 0; first < elements; first += kPiece) {
    Array piece;
    piece.dtype = dtype;
    piece.shape = {std::min(kPiece, elements - first)};
    fillGenerated(piece, argument, options, spec, index, rank, step, first);
    pieces(static_cast<size_t>(first * elementBytes), piece.bytes.data(),
           piece.bytes.size());
  }
  return true;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// A rank's barrier over the world that is not the program's
/// (zero_rank_barrier), in memory the backend moves, taken once so that
/// barriers between steps allocate nothing.
class RankBarrier {
public:
  RankBarrier(zero_rank *rank, bool onGpu)
      : rank(rank), onGpu(onGpu),
        scratch(onGpu ? zero_rt_gpu_alloc(sizeof(int64_t))
                      : std::malloc(sizeof(int64_t))) {}
  ~RankBarrier() {
    if (onGpu)
      zero_rt_gpu_free(scratch);
    else
      std::free(scratch);
  }
  RankBarrier(const RankBarrier &) = delete;
  RankBarrier &operator=(const RankBarrier &) = delete;

  /// False when the world failed.
  bool allRanksReached() { return zero_rank_barrier(rank, scratch) == 0; }

private:
  zero_rank *rank;
  bool onGpu;
  void *scratch;
};

/// The checkpoints of a launch: the one it starts from, the ones it saves.
struct Checkpoints {
  /// The state values (of the one program).
  std::vector<CheckpointValue> layout;
  /// --load: its manifest and files; the steps done before this launch.
  CheckpointManifest loaded;
  std::string loadedDir;
  int64_t firstStep = 0;
  /// --save: what the step's manifest says.
  std::string entry;
  int64_t worldSize = 0;
  bool onGpu = false;

  /// Whether the state after step `step` of this call is saved.
  bool due(const LaunchOptions &options, int64_t steps, int64_t step) const {
    if (options.saveDir.empty())
      return false;
    int64_t done = firstStep + step + 1;
    return step + 1 == steps ||
           (options.saveEvery > 0 && done % options.saveEvery == 0);
  }

  /// Writes rank `rank`'s state after `done` steps. Once every rank has
  /// written its files (a world all-reduce, which also carries the failure
  /// of a rank that could not), world rank 0 writes the step's manifest.
  /// Nothing is written after a step the world failed in.
  std::string save(const LaunchOptions &options, zero_rank *rank,
                   RankBarrier &barrier, int64_t done,
                   const std::vector<Array> &state, int64_t &bytes,
                   double &seconds) {
    if (!barrier.allRanksReached())
      return "";
    auto start = std::chrono::steady_clock::now();
    std::string stepDir = options.saveDir + "/" + checkpointStepName(done);
    int32_t id = zero_rank_id(rank);
    std::vector<CheckpointFile> files(layout.size());
    for (size_t i = 0; i < layout.size(); ++i) {
      const Array &value = state[layout[i].argument];
      bytes += static_cast<int64_t>(value.bytes.size());
      if (std::string error =
              writeCheckpointFile(stepDir, id, layout[i], value, files[i]);
          !error.empty())
        return "saving the checkpoint: " + error;
    }
    if (std::string error = writeRankManifest(stepDir, id, files);
        !error.empty())
      return "saving the checkpoint: " + error;
    seconds += secondsSince(start);
    if (!barrier.allRanksReached())
      return ""; // The world failed; it holds the message.
    if (id != 0)
      return "";
    CheckpointManifest manifest{entry, worldSize, done, layout};
    if (std::string error = writeCheckpointManifest(options.saveDir, manifest);
        !error.empty())
      return "saving the checkpoint: " + error;
    return "";
  }
};

/// Runs every program on the bound rank `rank`; returns an error message,
/// or "" (also when the world failed: it holds the message).
std::string runRank(const std::vector<const Program *> &programs,
                    const LaunchOptions &options, zero_world *world,
                    zero_rank *rank, std::vector<RankRun *> runs,
                    Checkpoints &checkpoints) {
  int32_t id = zero_rank_id(rank);
  int64_t firstStep = checkpoints.firstStep;
  RankBarrier barrier(rank, checkpoints.onGpu);
  // Made once: each call gets a copy, which it may update in place.
  // The state a loaded checkpoint holds for this rank replaces the state
  // arguments, which are not made.
  std::vector<Array> loaded;
  std::vector<bool> notLoaded(programs.front()->getArguments().size(), true);
  if (!options.loadDir.empty()) {
    auto start = std::chrono::steady_clock::now();
    if (std::string error = readRankCheckpoint(checkpoints.loadedDir, id,
                                               checkpoints.loaded, loaded);
        !error.empty())
      return error;
    runs.front()->loadSeconds = secondsSince(start);
    for (const Array &value : loaded)
      runs.front()->loadedBytes += static_cast<int64_t>(value.bytes.size());
    for (const CheckpointValue &value : checkpoints.layout)
      notLoaded[value.argument] = false;
  }
  // The first step's values are made as each is needed, like a later
  // step's, unless they are written (--input-dir): then all are made here,
  // whole (a generated shard is otherwise made alone: a rank never holds
  // the whole).
  std::vector<Array> inputs;
  if (!options.inputDir.empty()) {
    if (std::string error =
            makeInputs(programs.front()->getArguments(), options, id, inputs,
                       firstStep, &notLoaded, /*shardsAlone=*/false);
        !error.empty())
      return error;
    if (std::string error =
            writeRankValues(options.inputDir, id, "arg", inputs);
        !error.empty())
      return error;
  }
  for (size_t p = 0; p < programs.size(); ++p) {
    RankRun &run = *runs[p];
    run.rank = id;
    zero_counters before, after;
    zero_rank_counters(rank, &before);
    for (int k = 0; k < options.repeat; ++k) {
      const Program &program = *programs[p];
      // Each value is made when the step needs it; the first step's loaded
      // (and written) ones were made above, and the last call takes them,
      // others a copy.
      bool lastUse = p + 1 == programs.size() && k + 1 == options.repeat;
      std::vector<int64_t> loadedAt(program.getArguments().size(), -1);
      for (size_t i = 0; i < loaded.size(); ++i)
        loadedAt[checkpoints.layout[i].argument] = static_cast<int64_t>(i);
      auto inputsOf = [&](int64_t step, size_t j, Array &value,
                          const Program::PieceSink *pieces) -> std::string {
        if (step == 0 && (loadedAt[j] >= 0 || !inputs.empty())) {
          Array &made = loadedAt[j] >= 0 ? loaded[loadedAt[j]] : inputs[j];
          value = argumentFor(program, j, lastUse ? std::move(made) : made, id);
          return "";
        }
        if (pieces && generateInPieces(program.getArguments(), options, j, id,
                                       firstStep + step, *pieces))
          return "";
        std::vector<bool> wanted(program.getArguments().size());
        wanted[j] = true;
        std::vector<Array> whole;
        if (std::string error =
                makeInputs(program.getArguments(), options, id, whole,
                           firstStep + step, &wanted, /*shardsAlone=*/true);
            !error.empty())
          return step == 0 ? error
                           : "step " + std::to_string(firstStep + step) + ": " +
                                 error;
        value = argumentFor(program, j, std::move(whole[j]), id);
        return "";
      };
      bool last = k + 1 == options.repeat;
      Program::StepHooks hooks;
      zero_counters atSecondStep = {};
      hooks.beginStep = [&](int64_t step) {
        if (step == 1)
          zero_rank_counters(rank, &atSecondStep);
      };
      // The ranks start each later step together, as a peer's benchmark
      // loop does: a step's time is its own, not the skew of the ranks
      // making its data. (The first step's time is not compared.)
      hooks.beforeCall = [&](int64_t step) -> std::string {
        return step == 0 || barrier.allRanksReached() ? "" : "the world failed";
      };
      hooks.wantsState = [&](int64_t step) {
        return last && checkpoints.due(options, options.steps, step);
      };
      hooks.takeState = [&](int64_t step, const std::vector<Array> &state) {
        return checkpoints.save(options, rank, barrier, firstStep + step + 1,
                                state, run.savedBytes, run.saveSeconds);
      };
      std::vector<double> stepSeconds;
      zero_rank_trace_begin(rank);
      std::string error = program.callSteps(
          options.steps, inputsOf,
          last && options.keepOutputs ? &run.outputs : nullptr, stepSeconds,
          hooks);
      zero_rank_trace_end(rank);
      if (zero_world_error(world))
        return "";
      if (!error.empty())
        return error;
      double seconds = 0;
      for (double s : stepSeconds)
        seconds += s;
      if (k == 0 || seconds < run.seconds) {
        run.seconds = seconds;
        run.stepSeconds = std::move(stepSeconds);
        if (options.steps > 1) {
          zero_counters end;
          zero_rank_counters(rank, &end);
          run.laterStepAllocations = static_cast<int64_t>(
              end.system_allocations - atSecondStep.system_allocations);
        }
      }
    }
    zero_rank_counters(rank, &after);
    for (int k = 0; k < ZERO_NUM_COLLECTIVE_KINDS; ++k) {
      run.counters.bytes_sent[k] = after.bytes_sent[k] - before.bytes_sent[k];
      run.counters.issued[k] = after.issued[k] - before.issued[k];
    }
  }
  return "";
}

} // namespace

std::string zero::rt::launch(const std::vector<const Program *> &programs,
                             const LaunchOptions &options,
                             std::vector<std::vector<RankRun>> &runs) {
  if (programs.empty())
    return "no program to run";
  Checkpoints checkpoints;
  checkpoints.firstStep = options.firstStep;
  bool checkpointing = !options.saveDir.empty() || !options.loadDir.empty();
  if (checkpointing && programs.size() != 1)
    return "a checkpoint holds the state of one program; " +
           std::to_string(programs.size()) + " were given";
  checkpoints.layout = getCheckpointValues(*programs.front());
  checkpoints.entry = programs.front()->getEntryName();
  if (checkpointing && checkpoints.layout.empty())
    return "@" + checkpoints.entry + " has no state to " +
           (options.saveDir.empty() ? "load" : "save") +
           ": no result is the next value of an argument (the "
           "description's state_of)";
  if (!options.loadDir.empty()) {
    if (std::string error = readCheckpointManifest(
            options.loadDir, checkpoints.loaded, checkpoints.loadedDir);
        !error.empty())
      return error;
    if (options.firstStep != 0)
      return "the first step is the checkpoint's (" +
             std::to_string(checkpoints.loaded.steps) + "), not given with it";
    checkpoints.firstStep = checkpoints.loaded.steps;
  }
  zero_options worldOptions;
  zero_options_init(&worldOptions);
  worldOptions.backend = options.backend.c_str();
  worldOptions.ranks = options.ranks;
  worldOptions.timeout_seconds = options.timeoutSeconds;
  // The compiler's proof stands in for the ranks' comparison.
  worldOptions.check =
      options.checkCollectives ||
      std::any_of(programs.begin(), programs.end(),
                  [](const Program *p) { return !p->collectivesProven(); });
  zero_world *world = nullptr;
  char message[512];
  if (zero_world_create(&worldOptions, &world, message, sizeof message))
    return message;
  if (options.meshRanks > 0 && zero_world_size(world) != options.meshRanks) {
    std::string why = "@" + programs.front()->getEntryName() + "'s mesh has " +
                      std::to_string(options.meshRanks) + " ranks, the world " +
                      std::to_string(zero_world_size(world));
    zero_world_destroy(world);
    return why;
  }

  int32_t local = zero_world_num_local_ranks(world);
  checkpoints.worldSize = zero_world_size(world);
  checkpoints.onGpu =
      options.backend == "cuda-local" || options.backend == "nccl";
  if (!options.saveDir.empty())
    for (const CheckpointValue &value : checkpoints.layout)
      if (std::string error =
              checkCheckpointValue(value, checkpoints.worldSize);
          !error.empty()) {
        zero_world_destroy(world);
        return "cannot save " + value.name + " (argument " +
               std::to_string(value.argument) + ") in a checkpoint: " + error;
      }
  if (!options.loadDir.empty())
    if (std::string error = checkCheckpoint(
            checkpoints.loaded, checkpoints.layout, checkpoints.worldSize);
        !error.empty()) {
      zero_world_destroy(world);
      return "checkpoint " + checkpoints.loadedDir + ": " + error;
    }
  zero_world_set_tracing(world, !options.tracePath.empty());
  RankRun blank;
  blank.agreementChecked = worldOptions.check != 0;
  runs.assign(programs.size(), std::vector<RankRun>(local, blank));
  // A fault in a step ends the process: it first names the rank.
  reportFatalSignals();
  auto runLocal = [&](int32_t i) {
    FaultStack faultStack;
    zero_rank *rank = zero_world_local_rank(world, i);
    zero_rank_bind(rank);
    std::vector<RankRun *> rankRuns;
    for (std::vector<RankRun> &programRuns : runs)
      rankRuns.push_back(&programRuns[i]);
    if (std::string error =
            runRank(programs, options, world, rank, rankRuns, checkpoints);
        !error.empty())
      zero_rank_fail(rank, error.c_str());
    zero_rank_bind(nullptr);
  };
  // Rank 0 runs on the calling thread (a GPU context, MPI's main thread).
  std::vector<std::thread> threads;
  for (int32_t i = 1; i < local; ++i)
    threads.emplace_back(runLocal, i);
  runLocal(0);
  for (std::thread &thread : threads)
    thread.join();

  const char *error = zero_world_error(world);
  std::string failure = error ? error : "";
  if (failure.empty() && !options.tracePath.empty()) {
    std::string path = tracePath(options.tracePath, world);
    if (zero_world_write_trace(world, path.c_str(), message, sizeof message))
      failure = message;
  }
  zero_world_destroy(world);
  return failure;
}
