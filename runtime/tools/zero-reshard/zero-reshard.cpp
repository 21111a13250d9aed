//===- zero-reshard.cpp - a checkpoint for another world, or whole
//---------===//
//
// Turns a checkpoint that zero-launch --save wrote on N ranks into one for
// M ranks (cut as an artifact cuts its state, or evenly on a 1-D mesh), or
// into whole tensors, one .npy per value (DeepSpeed's zero_to_fp32). It
// reads and writes one value at a time, so its memory is about the largest
// value, not the state. It needs the runtime only, no LLVM.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Artifact.h"
#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/CommandLine.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <sys/resource.h>

using namespace zero::rt;

namespace {
int fail(const std::string &message) {
  std::fprintf(stderr, "zero-reshard: error: %s\n", message.c_str());
  return 1;
}

struct Options {
  std::string checkpoint, output, artifact;
  int64_t ranks = 0;
  bool whole = false;
};

std::string parseOptions(int argc, char **argv, Options &options) {
  CommandLine commandLine(
      "zero-reshard",
      "CHECKPOINT -o DIR (--ranks M | --artifact FILE.so | "
      "--whole)",
      "Turns a checkpoint (zero-launch --save: DIR/latest, or a step-<K> "
      "directory) into another. It holds one value at a time and prints its "
      "peak memory.");
  commandLine.addOption(
      "ranks", "M",
      "for M ranks: each sharded value cut evenly in M parts (flattened, "
      "padded), as zero shards on a 1-D mesh; whole values stay whole",
      integerFlag<int64_t>("ranks", options.ranks, 1, "a positive integer",
                           int64_t(1) << 20));
  commandLine.addOption(
      "artifact", "FILE.so",
      "for the artifact's world and layout (its mesh, its shards; a value it "
      "holds whole is written whole)",
      textFlag("artifact", options.artifact, "a file"));
  commandLine.addSwitch("whole",
                        "each value whole, as DIR/<name>.npy (zero_to_fp32)",
                        options.whole);
  commandLine.addOption(
      "o", "DIR",
      "where to write: DIR/step-<K> and DIR/latest (a new step directory: an "
      "existing one is not replaced)",
      textFlag("o", options.output, "a directory"));
  std::vector<std::string> positionals;
  if (std::string error = commandLine.parse(argc, argv, positionals);
      !error.empty())
    return error;
  if (positionals.empty())
    return "no checkpoint given (see --help)";
  if (positionals.size() > 1)
    return "one checkpoint only, got '" + positionals[0] + "' and '" +
           positionals[1] + "'";
  options.checkpoint = positionals[0];
  if (options.output.empty())
    return "no output directory (-o DIR)";
  if (int(options.whole) + int(options.ranks > 0) +
          int(!options.artifact.empty()) !=
      1)
    return "say what to write: one of --ranks M, --artifact FILE.so, --whole";
  return "";
}

/// The process's peak resident memory, in bytes.
int64_t peakResidentBytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;
}

std::string formatBytes(int64_t bytes) {
  char text[32];
  if (bytes >= (int64_t(1) << 20))
    std::snprintf(text, sizeof text, "%.1f MiB", bytes / 1048576.0);
  else if (bytes >= 1024)
    std::snprintf(text, sizeof text, "%.1f KiB", bytes / 1024.0);
  else
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  return text;
}

/// The layout the artifact gives its state, on its mesh's world.
std::string layoutOfArtifact(const std::string &path,
                             CheckpointManifest &target) {
  std::string error;
  std::unique_ptr<Artifact> artifact = Artifact::open(path, error);
  if (!artifact)
    return error;
  target.entry = artifact->getEntryName();
  target.worldSize = std::max<int64_t>(1, artifact->getDescription().ranks);
  target.values = getCheckpointValues(*artifact);
  return "";
}
} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return fail(error);
  CheckpointManifest source;
  std::string stepDir;
  if (std::string error =
          readCheckpointManifest(options.checkpoint, source, stepDir);
      !error.empty())
    return fail(error);

  int64_t largest = 0;
  std::string what;
  if (options.whole) {
    if (std::string error =
            consolidateCheckpoint(stepDir, source, options.output, largest);
        !error.empty())
      return fail(error);
    what = std::to_string(source.values.size()) + " values whole in " +
           options.output;
  } else {
    CheckpointManifest target;
    target.steps = source.steps;
    if (!options.artifact.empty()) {
      if (std::string error = layoutOfArtifact(options.artifact, target);
          !error.empty())
        return fail(error);
      if (std::string error = checkSameState(source.values, target.values,
                                             /*acrossWorlds=*/true);
          !error.empty())
        return fail("the checkpoint is not " + options.artifact +
                    "'s state: " + error);
    } else {
      target.entry = source.entry;
      target.worldSize = options.ranks;
      target.values = cutForWorld(source.values, options.ranks);
    }
    std::string targetDir =
        options.output + "/" + checkpointStepName(target.steps);
    std::error_code ec;
    if (std::filesystem::exists(targetDir, ec))
      return fail(targetDir + " exists: write the new checkpoint elsewhere");
    if (std::string error =
            reshardCheckpoint(stepDir, source, options.output, target, largest);
        !error.empty())
      return fail(error);
    what = std::to_string(source.values.size()) + " values, " +
           std::to_string(source.worldSize) + " ranks -> " +
           std::to_string(target.worldSize) + " ranks: " + targetDir;
    int64_t restarted =
        std::count_if(target.values.begin(), target.values.end(),
                      [](const CheckpointValue &v) { return v.startsAtZero; });
    if (restarted > 0)
      what += " (" + std::to_string(restarted) +
              " value(s) each rank kept for itself start at zero again: "
              "error-feedback residuals, or the delayed update's, whose "
              "first step then updates nothing)";
  }
  std::printf("zero-reshard: %s %s; largest value %s, peak memory %s\n",
              checkpointStepName(source.steps).c_str(), what.c_str(),
              formatBytes(largest).c_str(),
              formatBytes(peakResidentBytes()).c_str());
  return 0;
}
