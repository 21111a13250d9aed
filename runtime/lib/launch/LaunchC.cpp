//===- LaunchC.cpp - the launcher's C interface ---------------------------===//

#include "zero/runtime/Files.h"
#include "zero/runtime/Launcher.h"
#include "zero/runtime/zero_launch.h"

#include <cstdio>

using namespace zero::rt;

struct zero_artifact {
  std::unique_ptr<Artifact> artifact;
};

struct zero_launch_result {
  std::vector<RankRun> runs;
};

namespace {
int failWith(const std::string &message, char *error, size_t size) {
  if (error && size)
    std::snprintf(error, size, "%s", message.c_str());
  return 1;
}
} // namespace

int zero_artifact_open(const char *path, zero_artifact **artifact, char *error,
                       size_t error_size) {
  *artifact = nullptr;
  std::string message;
  std::unique_ptr<Artifact> loaded = Artifact::open(path ? path : "", message);
  if (!loaded)
    return failWith(message, error, error_size);
  *artifact = new zero_artifact{std::move(loaded)};
  return 0;
}

void zero_artifact_close(zero_artifact *artifact) { delete artifact; }

size_t zero_artifact_num_arguments(const zero_artifact *artifact) {
  return artifact->artifact->getArguments().size();
}

size_t zero_artifact_num_results(const zero_artifact *artifact) {
  return artifact->artifact->getResults().size();
}

void zero_launch_options_init(zero_launch_options *options) {
  *options = zero_launch_options();
  options->timeout_seconds = 60;
  options->steps = 1;
  options->seed = 1;
}

int zero_launch_steps(const zero_artifact *artifact,
                      const zero_launch_options *options,
                      zero_launch_result **result, char *error,
                      size_t error_size) {
  *result = nullptr;
  const Artifact &program = *artifact->artifact;
  const ArtifactDescription &d = program.getDescription();
  if (options->steps < 1)
    return failWith("steps must be positive, got " +
                        std::to_string(options->steps),
                    error, error_size);
  LaunchOptions launch;
  launch.backend = options->backend     ? options->backend
                   : d.target == "cuda" ? "cuda-local"
                                        : "local";
  if (std::string problem = program.checkRunnable(launch.backend);
      !problem.empty())
    return failWith(problem, error, error_size);
  launch.ranks = options->ranks > 0 ? options->ranks
                 : d.ranks > 0      ? int32_t(d.ranks)
                                    : 1;
  launch.meshRanks = d.ranks;
  launch.timeoutSeconds =
      options->timeout_seconds > 0 ? options->timeout_seconds : 60;
  launch.seed = options->seed;
  launch.steps = options->steps;
  if (options->trace_path)
    launch.tracePath = options->trace_path;
  if (options->save_every < 0 || options->first_step < 0)
    return failWith("save_every and first_step must not be negative", error,
                    error_size);
  if (options->save_dir)
    launch.saveDir = options->save_dir;
  else if (options->save_every > 0)
    return failWith("save_every needs save_dir", error, error_size);
  launch.saveEvery = options->save_every;
  if (options->load_dir)
    launch.loadDir = options->load_dir;
  launch.firstStep = options->first_step;
  for (size_t i = 0; i < d.arguments.size(); ++i) {
    InputSpec spec;
    if (options->argument_files && options->argument_files[i])
      spec.path = options->argument_files[i];
    spec.perRank = options->per_rank && options->per_rank[i];
    launch.inputs[unsigned(i)] = spec;
  }
  std::vector<std::vector<RankRun>> runs;
  if (std::string failure = zero::rt::launch({&program}, launch, runs);
      !failure.empty())
    return failWith(failure, error, error_size);
  *result = new zero_launch_result{std::move(runs.front())};
  return 0;
}

void zero_launch_result_destroy(zero_launch_result *result) { delete result; }

int32_t zero_launch_result_num_ranks(const zero_launch_result *result) {
  return int32_t(result->runs.size());
}

int32_t zero_launch_result_rank(const zero_launch_result *result, int32_t i) {
  return result->runs.at(i).rank;
}

const void *zero_launch_result_data(const zero_launch_result *result, int32_t i,
                                    size_t index, size_t *bytes) {
  if (i < 0 || size_t(i) >= result->runs.size() ||
      index >= result->runs[i].outputs.size()) {
    if (bytes)
      *bytes = 0;
    return nullptr;
  }
  const Array &value = result->runs[i].outputs[index];
  if (bytes)
    *bytes = value.bytes.size();
  return value.bytes.data();
}

int zero_launch_result_write(const zero_launch_result *result, const char *dir,
                             char *error, size_t error_size) {
  for (const RankRun &run : result->runs)
    if (std::string problem =
            writeRankValues(dir ? dir : ".", run.rank, "result", run.outputs);
        !problem.empty())
      return failWith(problem, error, error_size);
  return 0;
}
