//===- zero-launch.cpp - run a compiled zero artifact on N ranks ----------===//
//
// The runtime's launcher: loads an artifact made by zero-compile, runs its
// entry function on every rank of a world (local threads or mpi processes),
// with arguments from .npy files, and writes the results as .npy files. It
// needs no LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Artifact.h"
#include "zero/runtime/CommandLine.h"
#include "zero/runtime/Launcher.h"

#include <cstdio>
#include <string>
#include <vector>

using namespace zero::rt;

namespace {
struct Options {
  std::string artifact;
  /// The world, the arguments, the steps, the results.
  RunFlags run;
  bool generate = false;
  std::string expect;
  bool describe = false;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "zero-launch: error: %s\n", message.c_str());
  return 1;
}

/// The command line: a run's flags (zero/runtime/CommandLine.h), and those
/// of an artifact's long runs.
CommandLine makeCommandLine(Options &options) {
  LaunchOptions &launch = options.run.launch;
  CommandLine commandLine(
      "zero-launch", "ARTIFACT [options]",
      "Runs a program compiled by zero-compile on N ranks, with its "
      "arguments from .npy files or generated, and reports each rank's "
      "time and collectives.");
  addRunFlags(commandLine, options.run);
  commandLine.addSwitch(
      "generate",
      "generate the arguments that no --arg gives, as zero-run does: uniform "
      "in [-1, 1), the same on every rank unless --per-rank (without it, "
      "every argument needs an --arg)",
      options.generate);
  commandLine.addOption(
      "save", "DIR",
      "save the state (the arguments results feed) in DIR after the last "
      "step: DIR/step-<K>/, each rank its own files (its shards), and "
      "DIR/latest naming the last whole save (docs/Runtime.md)",
      textFlag("save", launch.saveDir, "a directory"));
  commandLine.addOption("save-every", "K", "also save after every K-th step",
                        integerFlag<int64_t>("save-every", launch.saveEvery, 1,
                                             "a positive integer"));
  commandLine.addOption(
      "load", "DIR",
      "start from the checkpoint in DIR (DIR/latest, or a step-<K> "
      "directory): its state replaces the state arguments, the steps go on "
      "from step K",
      textFlag("load", launch.loadDir, "a directory"));
  commandLine.addOption(
      "first-step", "K",
      "number the steps from K: data generated or read for step K first (to "
      "go on from a state given with --arg)",
      integerFlag<int64_t>("first-step", launch.firstStep, 0,
                           "a non-negative integer"));
  commandLine.addOption(
      "repeat", "K",
      "run the entry K times (inputs made afresh), report the best time",
      integerFlag<int>("repeat", launch.repeat, 1, "a positive integer"));
  commandLine.addOption(
      "expect", "DIR",
      "compare each result with DIR/rank<r>/result<i>.npy (as --output-dir "
      "writes them; shards on their real elements) and fail when one differs "
      "by more than --max-ulp",
      textFlag("expect", options.expect, "a directory"));
  commandLine.addSwitch("describe", "print the artifact's description and exit",
                        options.describe);
  return commandLine;
}

/// Parses the command line; returns an error message or "".
std::string parseOptions(int argc, char **argv, Options &options) {
  std::vector<std::string> positionals;
  if (std::string error =
          makeCommandLine(options).parse(argc, argv, positionals);
      !error.empty())
    return error;
  if (positionals.empty())
    return "no artifact given (see --help)";
  if (positionals.size() > 1)
    return "one artifact only, got '" + positionals[0] + "' and '" +
           positionals[1] + "'";
  options.artifact = positionals[0];
  const LaunchOptions &launch = options.run.launch;
  if (launch.saveEvery && launch.saveDir.empty())
    return "--save-every needs --save DIR";
  if (!launch.saveDir.empty() && launch.repeat > 1)
    return "--save saves the state of one run; --repeat times several";
  return checkRunFlags(options.run);
}

/// Why the options do not fit the artifact's arguments, or "".
std::string checkArguments(const Options &options, const Artifact &artifact) {
  const ArtifactDescription &d = artifact.getDescription();
  const LaunchOptions &launch = options.run.launch;
  std::vector<bool> fed = artifact.getFedArguments();
  for (const auto &[index, spec] : launch.inputs) {
    std::string flag = spec.path.empty() ? "--per-rank/--range " : "--arg ";
    if (index >= d.arguments.size())
      return flag + std::to_string(index) + ": @" + d.entry + " takes " +
             std::to_string(d.arguments.size()) + " arguments";
    if (!spec.path.empty() && fed[index] && !launch.loadDir.empty())
      return flag + std::to_string(index) + ": " + d.arguments[index].name +
             " is state, which the checkpoint (--load) gives";
  }
  for (size_t i = 0; i < d.arguments.size() && !options.generate; ++i) {
    auto it = launch.inputs.find(unsigned(i));
    bool fromFile = it != launch.inputs.end() && !it->second.path.empty();
    if (fromFile || (fed[i] && !launch.loadDir.empty()))
      continue;
    const ArtifactValue &argument = d.arguments[i];
    return "no file for " + argument.name + " (argument " + std::to_string(i) +
           ", " +
           (argument.shard ? "a shard of " + ValueType{argument.type.dtype,
                                                       argument.shard->whole}
                                                 .str()
                           : argument.type.str()) +
           "): pass --arg " + std::to_string(i) + "=FILE.npy, or --generate";
  }
  return "";
}
} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return fail(error);
  std::string error;
  std::unique_ptr<Artifact> artifact = Artifact::open(options.artifact, error);
  if (!artifact)
    return fail(error);
  const ArtifactDescription &d = artifact->getDescription();
  if (options.describe) {
    std::printf("%s\n", artifact->getDescriptionText().c_str());
    return 0;
  }
  if (std::string problem = checkArguments(options, *artifact);
      !problem.empty())
    return fail(problem);
  const RunFlags &run = options.run;
  LaunchOptions launch = run.launch;
  launch.backend = !run.backend.empty() ? run.backend
                   : d.target == "cuda" ? "cuda-local"
                                        : "local";
  if (std::string problem = artifact->checkRunnable(launch.backend);
      !problem.empty())
    return fail(problem);
  launch.ranks = run.ranks ? run.ranks : d.ranks > 0 ? int32_t(d.ranks) : 1;
  launch.meshRanks = d.ranks;
  // The results are copied to the host only when they are printed, written
  // or compared: a copy of the whole state would double a rank's memory.
  launch.keepOutputs =
      run.print || !run.outputDir.empty() || !options.expect.empty();
  std::vector<std::vector<RankRun>> runs;
  if (std::string failure = zero::rt::launch({artifact.get()}, launch, runs);
      !failure.empty())
    return fail(failure);

  bool matches = true;
  for (const RankRun &rankRun : runs.front()) {
    std::string report = formatRun(rankRun, /*withTimes=*/true) + "\n";
    if (run.print)
      for (size_t r = 0; r < rankRun.outputs.size(); ++r)
        report += formatResult(rankRun, r) + "\n";
    if (!options.expect.empty())
      matches &= compareWithFiles(d.results, rankRun, options.expect,
                                  run.maxUlp, report);
    std::fputs(report.c_str(), stdout);
  }
  if (!run.outputDir.empty())
    if (std::string problem = writeResults(run.outputDir, runs.front());
        !problem.empty())
      return fail(problem);
  if (!matches)
    return fail("the results differ from " + options.expect + " by more than " +
                formatUlp(run.maxUlp) + " ulp");
  return 0;
}
