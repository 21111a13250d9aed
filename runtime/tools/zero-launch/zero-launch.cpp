//===- zero-launch.cpp - run a compiled zero artifact on N ranks ----------===//
//
// The runtime's launcher: loads an artifact made by zero-compile, runs its
// entry function on every rank of a world (local threads or mpi processes),
// with arguments from .npy files, and writes the results as .npy files. It
// needs no LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Artifact.h"
#include "zero/runtime/Launcher.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace zero::rt;

namespace {
const char *usage =
    "usage: zero-launch ARTIFACT [options]\n"
    "\n"
    "Runs a program compiled by zero-compile on N ranks.\n"
    "\n"
    "  --arg I=FILE.npy   argument I; \"{rank}\" in FILE is the rank; a shard\n"
    "                     argument takes the whole tensor and each rank its\n"
    "                     part\n"
    "  --generate         generate the arguments that no --arg gives, as\n"
    "                     zero-run does: uniform in [-1, 1), the same on "
    "every\n"
    "                     rank unless --per-rank (without it, every argument\n"
    "                     needs an --arg)\n"
    "  --seed N           the generator's seed (default 1)\n"
    "  --per-rank I,J,... generated arguments that differ per rank\n"
    "  --range I=LOW:HIGH generate argument I in [LOW, HIGH) (integers:\n"
    "                     [LOW, HIGH])\n"
    "  --backend NAME     local (threads; the default for a CPU artifact),\n"
    "                     cuda-local (threads sharing GPU 0, collectives on\n"
    "                     the GPU; the default for a GPU artifact), mpi, or\n"
    "                     nccl (one process per GPU, under mpirun or\n"
    "                     torchrun-style: RANK, WORLD_SIZE, MASTER_ADDR, ...)\n"
    "  --ranks N          ranks of a local world (default: the artifact's "
    "mesh)\n"
    "  --timeout S        seconds a rank waits for the others (default 60)\n"
    "  --check-collectives have the ranks compare each collective before it\n"
    "                     runs even when the artifact's description says the\n"
    "                     compiler proved them alike (collectives_uniform)\n"
    "  --output-dir DIR   write each result as DIR/rank<r>/result<i>.npy\n"
    "  --print            print each result of each rank\n"
    "  --steps K          run K training steps: each result the description\n"
    "                     marks state_of an argument feeds it in the next\n"
    "                     step, in the artifact's memory (on the GPU for a\n"
    "                     GPU artifact); the other arguments are new each\n"
    "                     step: generated with the step in the seed, or read\n"
    "                     from files with {step} (and {rank}) in the name\n"
    "  --save DIR         save the state (the arguments results feed) in\n"
    "                     DIR after the last step: DIR/step-<K>/, each rank\n"
    "                     its own files (its shards), and DIR/latest\n"
    "                     naming the last whole save (docs/Runtime.md)\n"
    "  --save-every K     also save after every K-th step\n"
    "  --load DIR         start from the checkpoint in DIR (DIR/latest, or a\n"
    "                     step-<K> directory): its state replaces the state\n"
    "                     arguments, the steps go on from step K\n"
    "  --first-step K     number the steps from K: data generated or read\n"
    "                     for step K first (to go on from a state given\n"
    "                     with --arg)\n"
    "  --repeat K         run the entry K times (inputs reloaded), report the\n"
    "                     best time\n"
    "  --trace FILE       write a Chrome trace of the last run\n"
    "  --expect DIR       compare each result with DIR/rank<r>/result<i>.npy\n"
    "                     (as --output-dir writes them; shards on their real\n"
    "                     elements) and fail when one differs by more than\n"
    "  --max-ulp K        units in the last place (default 0: bit for bit)\n"
    "  --describe         print the artifact's description and exit\n";

struct Options {
  std::string artifact;
  std::map<unsigned, std::string> args;
  bool generate = false;
  std::map<unsigned, InputSpec> generated;
  /// Empty: by the artifact (cuda-local for a GPU's, else local).
  std::string backend;
  int32_t ranks = 0;
  /// What the launcher takes as given: the seed, timeout, steps, repeats,
  /// trace and checkpoints.
  LaunchOptions launch;
  std::string outputDir;
  bool print = false;
  std::string expect;
  double maxUlp = 0;
  bool describe = false;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "zero-launch: error: %s\n", message.c_str());
  return 1;
}

/// `digits` as an argument index, or nullopt when it overflows (a program has
/// far fewer arguments than any index this rejects).
std::optional<unsigned> parseIndex(const std::string &digits) {
  unsigned index = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return std::nullopt;
  return index;
}

/// Parses the command line; returns an error message or "".
std::string parseOptions(int argc, char **argv, Options &options) {
  auto number = [](const char *text, double &value) {
    char *end;
    value = std::strtod(text, &end);
    return *text && !*end;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string text;
    double n;
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (arg == "--print") {
      options.print = true;
    } else if (arg == "--describe") {
      options.describe = true;
    } else if (arg == "--arg") {
      size_t eq;
      if (!value(text) || (eq = text.find('=')) == std::string::npos ||
          eq == 0 || eq + 1 == text.size() ||
          text.find_first_not_of("0123456789") != eq)
        return "--arg expects I=FILE, got '" + text + "'";
      std::optional<unsigned> index = parseIndex(text.substr(0, eq));
      if (!index)
        return "--arg: argument index '" + text.substr(0, eq) +
               "' is out of range";
      options.args[*index] = text.substr(eq + 1);
    } else if (arg == "--generate") {
      options.generate = true;
    } else if (arg == "--seed") {
      if (!value(text) || !number(text.c_str(), n) || n < 0 ||
          n >= 18446744073709551616.0 || n != double(uint64_t(n)))
        return "--seed expects a non-negative integer, got '" + text + "'";
      options.launch.seed = uint64_t(n);
    } else if (arg == "--per-rank") {
      if (!value(text) || text.empty() ||
          text.find_first_not_of("0123456789,") != std::string::npos)
        return "--per-rank expects argument indices I,J,..., got '" + text +
               "'";
      for (size_t at = 0; at < text.size();) {
        size_t end = std::min(text.find(',', at), text.size());
        if (end == at)
          return "--per-rank expects argument indices I,J,..., got '" + text +
                 "'";
        std::optional<unsigned> index = parseIndex(text.substr(at, end - at));
        if (!index)
          return "--per-rank: argument index '" + text.substr(at, end - at) +
                 "' is out of range";
        options.generated[*index].perRank = true;
        at = end + 1;
      }
    } else if (arg == "--range") {
      size_t eq, colon;
      double low, high;
      if (!value(text) || (eq = text.find('=')) == std::string::npos ||
          eq == 0 || text.find_first_not_of("0123456789") != eq ||
          (colon = text.find(':', eq)) == std::string::npos ||
          !number(text.substr(eq + 1, colon - eq - 1).c_str(), low) ||
          !number(text.substr(colon + 1).c_str(), high) || !(low < high))
        return "--range expects I=LOW:HIGH with LOW < HIGH, got '" + text + "'";
      std::optional<unsigned> index = parseIndex(text.substr(0, eq));
      if (!index)
        return "--range: argument index '" + text.substr(0, eq) +
               "' is out of range";
      InputSpec &spec = options.generated[*index];
      spec.low = low;
      spec.high = high;
    } else if (arg == "--backend") {
      if (!value(options.backend))
        return "--backend expects a name";
    } else if (arg == "--ranks") {
      if (!value(text) || !number(text.c_str(), n) || n < 1 ||
          n > std::numeric_limits<int32_t>::max() || n != int32_t(n))
        return "--ranks expects a positive integer, got '" + text + "'";
      options.ranks = int32_t(n);
    } else if (arg == "--check-collectives") {
      options.launch.checkCollectives = true;
    } else if (arg == "--timeout") {
      if (!value(text) || !number(text.c_str(), n) || n <= 0)
        return "--timeout expects positive seconds, got '" + text + "'";
      options.launch.timeoutSeconds = n;
    } else if (arg == "--steps") {
      if (!value(text) || !number(text.c_str(), n) || n < 1 || n > 1e15 ||
          n != double(int64_t(n)))
        return "--steps expects a positive integer, got '" + text + "'";
      options.launch.steps = int64_t(n);
    } else if (arg == "--save") {
      if (!value(options.launch.saveDir) || options.launch.saveDir.empty())
        return "--save expects a directory";
    } else if (arg == "--save-every") {
      if (!value(text) || !number(text.c_str(), n) || n < 1 || n > 1e15 ||
          n != double(int64_t(n)))
        return "--save-every expects a positive integer, got '" + text + "'";
      options.launch.saveEvery = int64_t(n);
    } else if (arg == "--first-step") {
      if (!value(text) || !number(text.c_str(), n) || n < 0 || n > 1e15 ||
          n != double(int64_t(n)))
        return "--first-step expects a non-negative integer, got '" + text +
               "'";
      options.launch.firstStep = int64_t(n);
    } else if (arg == "--load") {
      if (!value(options.launch.loadDir) || options.launch.loadDir.empty())
        return "--load expects a directory";
    } else if (arg == "--repeat") {
      if (!value(text) || !number(text.c_str(), n) || n < 1 ||
          n > std::numeric_limits<int>::max() || n != int(n))
        return "--repeat expects a positive integer, got '" + text + "'";
      options.launch.repeat = int(n);
    } else if (arg == "--output-dir") {
      if (!value(options.outputDir))
        return "--output-dir expects a directory";
    } else if (arg == "--expect") {
      if (!value(options.expect))
        return "--expect expects a directory";
    } else if (arg == "--max-ulp") {
      if (!value(text) || !number(text.c_str(), n) || n < 0)
        return "--max-ulp expects a non-negative number, got '" + text + "'";
      options.maxUlp = n;
    } else if (arg == "--trace") {
      if (!value(options.launch.tracePath))
        return "--trace expects a file";
    } else if (!arg.empty() && arg[0] == '-') {
      return "unknown option '" + arg + "' (see --help)";
    } else if (options.artifact.empty()) {
      options.artifact = arg;
    } else {
      return "one artifact only, got '" + options.artifact + "' and '" + arg +
             "'";
    }
  }
  if (options.artifact.empty())
    return "no artifact given (see --help)";
  if (options.launch.saveEvery && options.launch.saveDir.empty())
    return "--save-every needs --save DIR";
  if (!options.launch.saveDir.empty() && options.launch.repeat > 1)
    return "--save saves the state of one run; --repeat times several";
  return "";
}

/// Compares each result of `run` with the one in `dir`; prints a line per
/// result and returns whether all are within `maxUlp`.
bool compareResults(const ArtifactDescription &d, const RankRun &run,
                    const std::string &dir, double maxUlp) {
  bool ok = true;
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    Array expected, got = run.outputs[i];
    expected.dtype = got.dtype;
    expected.shape = got.shape;
    std::string path = dir + "/rank" + std::to_string(run.rank) + "/result" +
                       std::to_string(i) + ".npy";
    std::printf("rank %d result %zu: ", run.rank, i);
    if (std::string error = readNpy(path, expected); !error.empty()) {
      std::printf("cannot compare: %s\n", error.c_str());
      ok = false;
      continue;
    }
    if (const auto &shard = d.results[i].shard) {
      int64_t index = shard->groupIndex[run.rank];
      zeroShardPadding(expected, shard->getWholeElements(), index);
      zeroShardPadding(got, shard->getWholeElements(), index);
    }
    Difference diff = compare(got, expected);
    if (diff.differing == 0) {
      std::printf("identical\n");
      continue;
    }
    std::printf("%lld of %lld elements differ, by at most %llu ulp (first at "
                "%lld)\n",
                static_cast<long long>(diff.differing),
                static_cast<long long>(got.getNumElements()),
                static_cast<unsigned long long>(diff.maxUlp),
                static_cast<long long>(diff.firstIndex));
    if (static_cast<double>(diff.maxUlp) > maxUlp)
      ok = false;
  }
  return ok;
}

void printResult(const RankRun &run, size_t index) {
  std::printf("rank %d result %zu:%s\n", run.rank, index,
              formatValues(run.outputs[index]).c_str());
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
  for (const auto &[index, path] : options.args)
    if (index >= d.arguments.size())
      return fail("--arg " + std::to_string(index) + ": @" + d.entry +
                  " takes " + std::to_string(d.arguments.size()) +
                  " arguments");
  std::vector<bool> fed = artifact->getFedArguments();
  for (const auto &[index, path] : options.args)
    if (fed[index] && !options.launch.loadDir.empty())
      return fail("--arg " + std::to_string(index) + ": " +
                  d.arguments[index].name +
                  " is state, which the checkpoint (--load) gives");
  for (const auto &[index, spec] : options.generated)
    if (index >= d.arguments.size() || options.args.count(index))
      return fail("--per-rank/--range " + std::to_string(index) + ": " +
                  (options.args.count(index)
                       ? "argument " + std::to_string(index) +
                             " comes from a file (--arg)"
                       : "@" + d.entry + " takes " +
                             std::to_string(d.arguments.size()) +
                             " arguments"));
  for (size_t i = 0; i < d.arguments.size() && !options.generate; ++i)
    if (!options.args.count(i) && !(fed[i] && !options.launch.loadDir.empty()))
      return fail("no file for " + d.arguments[i].name + " (argument " +
                  std::to_string(i) + ", " +
                  (d.arguments[i].shard
                       ? "a shard of " + ValueType{d.arguments[i].type.dtype,
                                                   d.arguments[i].shard->whole}
                                             .str()
                       : d.arguments[i].type.str()) +
                  "): pass --arg " + std::to_string(i) +
                  "=FILE.npy, or --generate");
  LaunchOptions launch = options.launch;
  launch.backend = options.backend.empty()
                       ? (d.target == "cuda" ? "cuda-local" : "local")
                       : options.backend;
  if (std::string problem = artifact->checkRunnable(launch.backend);
      !problem.empty())
    return fail(problem);
  launch.ranks = options.ranks ? options.ranks
                 : d.ranks > 0 ? int32_t(d.ranks)
                               : 1;
  launch.meshRanks = d.ranks;
  launch.inputs = options.generated;
  // The results are copied to the host only when they are printed, written
  // or compared: a copy of the whole state would double a rank's memory.
  launch.keepOutputs =
      options.print || !options.outputDir.empty() || !options.expect.empty();
  for (const auto &[index, path] : options.args)
    launch.inputs[index].path = path;
  std::vector<std::vector<RankRun>> runs;
  if (std::string failure = zero::rt::launch({artifact.get()}, launch, runs);
      !failure.empty())
    return fail(failure);

  static const char *kinds[] = {"all_reduce", "reduce_scatter", "all_gather"};
  bool matches = true;
  for (const RankRun &run : runs.front()) {
    std::printf("rank %d: %.3f ms;", run.rank, run.seconds * 1e3);
    for (int k = 0; k < ZERO_NUM_COLLECTIVE_KINDS; ++k)
      std::printf(" %s %llu (%llu B)", kinds[k],
                  static_cast<unsigned long long>(run.counters.issued[k]),
                  static_cast<unsigned long long>(run.counters.bytes_sent[k]));
    if (run.stepSeconds.size() > 1) {
      std::vector<double> later(run.stepSeconds.begin() + 1,
                                run.stepSeconds.end());
      std::sort(later.begin(), later.end());
      std::printf("; steps 2-%zu: median %.3f ms, %lld system allocations",
                  run.stepSeconds.size(), later[later.size() / 2] * 1e3,
                  static_cast<long long>(run.laterStepAllocations));
    }
    if (run.savedBytes)
      std::printf("; saved %.1f MB in %.3f s", run.savedBytes / 1e6,
                  run.saveSeconds);
    if (run.loadedBytes)
      std::printf("; loaded %.1f MB in %.3f s", run.loadedBytes / 1e6,
                  run.loadSeconds);
    std::printf("\n");
    if (options.print)
      for (size_t r = 0; r < run.outputs.size(); ++r)
        printResult(run, r);
    if (!options.expect.empty())
      matches &= compareResults(d, run, options.expect, options.maxUlp);
    if (!options.outputDir.empty())
      if (std::string problem = writeRankValues(options.outputDir, run.rank,
                                                "result", run.outputs);
          !problem.empty())
        return fail(problem);
  }
  if (!matches)
    return fail("the results differ from " + options.expect + " by more than " +
                std::to_string(static_cast<long long>(options.maxUlp)) +
                " ulp");
  return 0;
}
