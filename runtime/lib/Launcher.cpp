//===- Launcher.cpp - run a program on every rank of a world --------------===//

#include "zero/runtime/Launcher.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>
#include <thread>

using namespace zero::rt;

std::string zero::rt::withRank(std::string path, int32_t rank) {
  for (size_t at; (at = path.find("{rank}")) != std::string::npos;)
    path.replace(at, 6, std::to_string(rank));
  return path;
}

std::string zero::rt::withStep(std::string path, int64_t step) {
  for (size_t at; (at = path.find("{step}")) != std::string::npos;)
    path.replace(at, 6, std::to_string(step));
  return path;
}

uint64_t zero::rt::stepSeed(uint64_t seed, int64_t step) {
  // The golden-ratio increment of SplitMix64: distinct steps, distinct
  // streams, for any seed.
  return seed + static_cast<uint64_t>(step) * 0x9E3779B97F4A7C15ull;
}

std::string zero::rt::makeDirectories(const std::string &path) {
  for (size_t at = 1; at <= path.size(); ++at)
    if (at == path.size() || path[at] == '/')
      if (mkdir(path.substr(0, at).c_str(), 0777) != 0 && errno != EEXIST)
        return "cannot create " + path.substr(0, at) + ": " +
               std::strerror(errno);
  return "";
}

std::string zero::rt::writeRankValues(const std::string &dir, int32_t rank,
                                      const std::string &stem,
                                      const std::vector<Array> &values) {
  std::string rankDir = dir + "/rank" + std::to_string(rank);
  if (std::string error = makeDirectories(rankDir); !error.empty())
    return error;
  for (size_t i = 0; i < values.size(); ++i)
    if (std::string error = writeNpy(
            rankDir + "/" + stem + std::to_string(i) + ".npy", values[i]);
        !error.empty())
      return error;
  return "";
}

std::string zero::rt::makeInputs(const std::vector<ArtifactValue> &arguments,
                                 const LaunchOptions &options, int32_t rank,
                                 std::vector<Array> &inputs, int64_t step,
                                 const std::vector<bool> *wanted) {
  inputs.clear();
  for (const auto &[index, spec] : options.inputs)
    if (index >= arguments.size())
      return "argument " + std::to_string(index) +
             " is named (--arg, --per-rank or --range), but the entry takes " +
             std::to_string(arguments.size()) + " arguments";
  for (size_t i = 0; i < arguments.size(); ++i) {
    const ArtifactValue &value = arguments[i];
    Array array;
    if (wanted && !(*wanted)[i]) {
      inputs.push_back(std::move(array));
      continue;
    }
    array.dtype = value.type.dtype;
    array.shape = value.shard ? value.shard->whole : value.type.shape;
    InputSpec spec;
    if (auto it = options.inputs.find(i); it != options.inputs.end())
      spec = it->second;
    if (spec.path.empty()) {
      fillUniform(array, stepSeed(options.seed, step), unsigned(i),
                  spec.perRank ? rank : -1, spec.low, spec.high);
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

/// `inputs` as `program` takes them on world rank `rank`: a shard argument's
/// part.
std::vector<Array> argumentsFor(const Program &program,
                                const std::vector<Array> &inputs,
                                int32_t rank) {
  std::vector<Array> values = inputs;
  const std::vector<ArtifactValue> &arguments = program.getArguments();
  for (size_t i = 0; i < values.size() && i < arguments.size(); ++i)
    if (const auto &shard = arguments[i].shard;
        shard && !values[i].bytes.empty())
      values[i] =
          takeShard(values[i], shard->shardElements, shard->groupIndex[rank]);
  return values;
}

/// Runs every program on the bound rank `rank`; returns an error message,
/// or "" (also when the world failed: it holds the message).
std::string runRank(const std::vector<const Program *> &programs,
                    const LaunchOptions &options, zero_world *world,
                    zero_rank *rank, std::vector<RankRun *> runs) {
  int32_t id = zero_rank_id(rank);
  // Made once: each call gets a copy, which it may update in place.
  std::vector<Array> inputs;
  if (std::string error =
          makeInputs(programs.front()->getArguments(), options, id, inputs);
      !error.empty())
    return error;
  if (!options.inputDir.empty())
    if (std::string error =
            writeRankValues(options.inputDir, id, "arg", inputs);
        !error.empty())
      return error;
  for (size_t p = 0; p < programs.size(); ++p) {
    RankRun &run = *runs[p];
    run.rank = id;
    zero_counters before, after;
    zero_rank_counters(rank, &before);
    for (int k = 0; k < options.repeat; ++k) {
      const Program &program = *programs[p];
      // Step 0's values are the ones made above; later steps make theirs.
      auto inputsOf = [&](int64_t step, const std::vector<bool> &wanted,
                          std::vector<Array> &values) -> std::string {
        if (step == 0) {
          values = argumentsFor(program, inputs, id);
          return "";
        }
        std::vector<Array> whole;
        if (std::string error = makeInputs(program.getArguments(), options, id,
                                           whole, step, &wanted);
            !error.empty())
          return "step " + std::to_string(step) + ": " + error;
        values = argumentsFor(program, whole, id);
        return "";
      };
      bool last = k + 1 == options.repeat;
      double seconds = 0;
      zero_rank_trace_begin(rank);
      std::string error = program.callSteps(
          options.steps, inputsOf,
          last && options.keepOutputs ? &run.outputs : nullptr, seconds);
      zero_rank_trace_end(rank);
      if (!error.empty())
        return error;
      if (zero_world_error(world))
        return "";
      if (k == 0 || seconds < run.seconds)
        run.seconds = seconds;
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
  zero_options worldOptions;
  zero_options_init(&worldOptions);
  worldOptions.backend = options.backend.c_str();
  worldOptions.ranks = options.ranks;
  worldOptions.timeout_seconds = options.timeoutSeconds;
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
  zero_world_set_tracing(world, !options.tracePath.empty());
  runs.assign(programs.size(), std::vector<RankRun>(local));
  auto runLocal = [&](int32_t i) {
    zero_rank *rank = zero_world_local_rank(world, i);
    zero_rank_bind(rank);
    std::vector<RankRun *> rankRuns;
    for (std::vector<RankRun> &programRuns : runs)
      rankRuns.push_back(&programRuns[i]);
    if (std::string error = runRank(programs, options, world, rank, rankRuns);
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
