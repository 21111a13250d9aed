//===- CommandLine.cpp - the runtime tools' one command-line front end ----===//

#include "zero/runtime/CommandLine.h"
#include "zero/runtime/Elements.h"
#include "zero/runtime/Files.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

using namespace zero::rt;

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

std::string zero::rt::spellFlag(const std::string &name) {
  return (name.size() == 1 ? "-" : "--") + name;
}

CommandLine::CommandLine(std::string tool, std::string usage,
                         std::string description)
    : tool(std::move(tool)), usage(std::move(usage)),
      description(std::move(description)) {}

void CommandLine::addOption(const std::string &name,
                            const std::string &valueName,
                            const std::string &help, FlagParser parse) {
  flags.push_back({name, valueName, help, std::move(parse), nullptr});
}

void CommandLine::addSwitch(const std::string &name, const std::string &help,
                            bool &value) {
  flags.push_back({name, "", help, nullptr, &value});
}

const CommandLine::Flag *CommandLine::find(const std::string &name) const {
  for (const Flag &flag : flags)
    if (flag.name == name)
      return &flag;
  return nullptr;
}

std::string CommandLine::parse(int argc, char **argv,
                               std::vector<std::string> &positionals) const {
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word == "--help" || word == "-h") {
      std::fputs(getHelp().c_str(), stdout);
      std::exit(0);
    }
    if (word.size() < 2 || word[0] != '-') {
      positionals.push_back(word);
      continue;
    }
    // "--name", "-name", "--name=value".
    std::string name = word.substr(word[1] == '-' ? 2 : 1);
    size_t equals = name.find('=');
    bool inline_ = equals != std::string::npos;
    std::string value = inline_ ? name.substr(equals + 1) : "";
    name = name.substr(0, equals);
    const Flag *flag = find(name);
    if (!flag)
      return "unknown option '" + word + "' (see --help)";
    if (flag->value) {
      if (!inline_ || value == "true" || value == "1")
        *flag->value = true;
      else if (value == "false" || value == "0")
        *flag->value = false;
      else
        return spellFlag(name) + " takes no value but true or false, got '" +
               value + "'";
      continue;
    }
    if (!inline_) {
      if (i + 1 >= argc)
        return spellFlag(name) + " expects " + flag->valueName;
      value = argv[++i];
    }
    if (std::string error = flag->parse(value); !error.empty())
      return error;
  }
  return "";
}

/// `text` wrapped to lines of at most `width` characters, each after
/// `indent` spaces but the first, which follows what is already on its line.
static std::string wrap(const std::string &text, size_t indent, size_t width) {
  std::string out, line;
  size_t limit = width - indent;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.find(' ', at), text.size());
    std::string word = text.substr(at, end - at);
    if (!line.empty() && line.size() + 1 + word.size() > limit) {
      out += line + "\n" + std::string(indent, ' ');
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
    at = end + 1;
  }
  return out + line + "\n";
}

std::string CommandLine::getHelp() const {
  constexpr size_t kHelpColumn = 21, kWidth = 79;
  std::string help = "usage: " + tool + " " + usage + "\n\n" +
                     wrap(description, 0, kWidth) + "\n";
  for (const Flag &flag : flags) {
    std::string head = "  " + spellFlag(flag.name) +
                       (flag.valueName.empty() ? "" : " " + flag.valueName);
    help += head.size() + 1 > kHelpColumn
                ? head + "\n" + std::string(kHelpColumn, ' ')
                : head + std::string(kHelpColumn - head.size(), ' ');
    help += wrap(flag.help, kHelpColumn, kWidth);
  }
  return help + (epilogue.empty() ? "" : "\n" + epilogue);
}

FlagParser zero::rt::numberFlag(const std::string &flag, double &out,
                                bool (*valid)(double),
                                const std::string &what) {
  return [flag, &out, valid, what](const std::string &text) -> std::string {
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end || !valid(value))
      return spellFlag(flag) + " expects " + what + ", got '" + text + "'";
    out = value;
    return "";
  };
}

FlagParser zero::rt::textFlag(const std::string &flag, std::string &out,
                              const std::string &what) {
  return [flag, &out, what](const std::string &text) -> std::string {
    if (text.empty())
      return spellFlag(flag) + " expects " + what;
    out = text;
    return "";
  };
}

FlagParser zero::rt::textListFlag(const std::string &flag,
                                  std::vector<std::string> &out,
                                  const std::string &what) {
  return [flag, &out, what](const std::string &text) -> std::string {
    std::string value;
    if (std::string error = textFlag(flag, value, what)(text); !error.empty())
      return error;
    out.push_back(value);
    return "";
  };
}

/// What `digits` are as an argument index.
enum class IndexParse { Index, NotDigits, OutOfRange };

/// Parses `digits` as an argument index into `index` (a program has far
/// fewer arguments than any index out of range here).
static IndexParse parseIndex(const std::string &digits, unsigned &index) {
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (digits.empty() || end != digits.data() + digits.size())
    return IndexParse::NotDigits;
  if (ec == std::errc::result_out_of_range)
    return IndexParse::OutOfRange;
  return ec == std::errc() ? IndexParse::Index : IndexParse::NotDigits;
}

/// "--arg: argument index '99999999999' is out of range".
static std::string outOfRange(const std::string &flag,
                              const std::string &digits) {
  return spellFlag(flag) + ": argument index '" + digits + "' is out of range";
}

FlagParser zero::rt::indicesFlag(const std::string &flag,
                                 std::function<void(unsigned)> mark) {
  return [flag, mark](const std::string &text) -> std::string {
    std::vector<unsigned> indices;
    for (size_t at = 0; at <= text.size();) {
      size_t end = std::min(text.find(',', at), text.size());
      std::string digits = text.substr(at, end - at);
      unsigned index;
      switch (parseIndex(digits, index)) {
      case IndexParse::NotDigits:
        return spellFlag(flag) + " expects argument indices I,J,..., got '" +
               text + "'";
      case IndexParse::OutOfRange:
        return outOfRange(flag, digits);
      case IndexParse::Index:
        indices.push_back(index);
      }
      at = end + 1;
    }
    for (unsigned index : indices)
      mark(index);
    return "";
  };
}

FlagParser
zero::rt::indexedFlag(const std::string &flag, const std::string &form,
                      std::function<bool(unsigned, const std::string &)> take) {
  return [flag, form, take](const std::string &text) -> std::string {
    size_t equals = text.find('=');
    std::string expects =
        spellFlag(flag) + " expects " + form + ", got '" + text + "'";
    if (equals == std::string::npos || equals + 1 == text.size())
      return expects;
    std::string digits = text.substr(0, equals);
    unsigned index;
    switch (parseIndex(digits, index)) {
    case IndexParse::NotDigits:
      return expects;
    case IndexParse::OutOfRange:
      return outOfRange(flag, digits);
    case IndexParse::Index:
      break;
    }
    return take(index, text.substr(equals + 1)) ? "" : expects;
  };
}

//===----------------------------------------------------------------------===//
// The flags of a run
//===----------------------------------------------------------------------===//

static bool positive(double value) { return value > 0; }
static bool nonNegative(double value) { return value >= 0; }

void zero::rt::addRunFlags(CommandLine &commandLine, RunFlags &flags) {
  LaunchOptions &launch = flags.launch;
  commandLine.addOption(
      "arg", "I=FILE",
      "argument I from a .npy file; \"{rank}\" in FILE is the rank and "
      "\"{step}\" the step; a shard argument takes the whole tensor and each "
      "rank its part",
      indexedFlag("arg", "I=FILE",
                  [&launch](unsigned index, const std::string &path) {
                    launch.inputs[index].path = path;
                    return true;
                  }));
  commandLine.addOption(
      "per-rank", "I,J,...",
      "generated arguments that differ per rank (local gradients, batches of "
      "data); the others are the same on every rank",
      indicesFlag("per-rank", [&flags](unsigned index) {
        flags.launch.inputs[index].perRank = true;
        flags.generationNamed.insert(index);
      }));
  commandLine.addOption(
      "range", "I=LOW:HIGH",
      "generate argument I uniformly in [LOW, HIGH) (integers: [LOW, HIGH]; "
      "default -1:1)",
      indexedFlag("range", "I=LOW:HIGH with LOW < HIGH",
                  [&flags](unsigned index, const std::string &range) {
                    size_t colon = range.find(':');
                    if (colon == std::string::npos)
                      return false;
                    std::string lowText = range.substr(0, colon),
                                highText = range.substr(colon + 1);
                    char *lowEnd, *highEnd;
                    double low = std::strtod(lowText.c_str(), &lowEnd);
                    double high = std::strtod(highText.c_str(), &highEnd);
                    if (lowText.empty() || highText.empty() || *lowEnd ||
                        *highEnd || !(low < high))
                      return false;
                    flags.launch.inputs[index].low = low;
                    flags.launch.inputs[index].high = high;
                    flags.generationNamed.insert(index);
                    return true;
                  }));
  commandLine.addOption(
      "seed", "N", "the seed of generated arguments (default 1)",
      integerFlag<uint64_t>("seed", launch.seed, 0, "a non-negative integer"));
  commandLine.addOption(
      "backend", "NAME",
      "local (threads; the default for a CPU program), mpi (a process per "
      "rank, under mpirun), cuda-local (threads sharing GPU 0, collectives on "
      "the GPU; the default for a GPU artifact) or nccl (a process per GPU, "
      "under mpirun or torchrun-style RANK, WORLD_SIZE, MASTER_ADDR, ...)",
      textFlag("backend", flags.backend, "a name"));
  commandLine.addOption(
      "ranks", "N",
      "ranks of a local world (default: the size of the program's mesh, "
      "else 1)",
      integerFlag<int32_t>("ranks", flags.ranks, 1, "a positive integer"));
  commandLine.addOption(
      "timeout", "S",
      "seconds a rank waits for the others in a collective (default 60)",
      numberFlag("timeout", launch.timeoutSeconds, positive,
                 "positive seconds"));
  commandLine.addSwitch(
      "check-collectives",
      "have the ranks compare each collective before it runs even when the "
      "compiler proved them alike (zero-verify-collectives; an artifact's "
      "collectives_uniform)",
      launch.checkCollectives);
  commandLine.addOption(
      "steps", "K",
      "training steps: each result that is the next value of an argument (a "
      "weight, a moment; state_of in an artifact's description) feeds it in "
      "the next step, in the program's memory; the other arguments are new "
      "each step, generated with the step in the seed or read from files "
      "with {step} in the name",
      integerFlag<int64_t>("steps", launch.steps, 1, "a positive integer"));
  commandLine.addOption(
      "trace", "FILE",
      "write a Chrome trace (Perfetto) of the last run: per rank a compute "
      "and a communication track; under mpi each process writes its own file "
      "({rank} in FILE, else FILE.rank<r>)",
      textFlag("trace", launch.tracePath, "a file"));
  commandLine.addOption(
      "write-inputs", "DIR",
      "write each rank's arguments (whole values, as generated or read) as "
      "DIR/rank<r>/arg<i>.npy",
      textFlag("write-inputs", launch.inputDir, "a directory"));
  commandLine.addOption("output-dir", "DIR",
                        "write each result as DIR/rank<r>/result<i>.npy",
                        textFlag("output-dir", flags.outputDir, "a directory"));
  commandLine.addSwitch("print", "print each result of each rank", flags.print);
  commandLine.addOption(
      "max-ulp", "K",
      "the largest difference a comparison accepts, in units in the last "
      "place (default 0: bit for bit)",
      numberFlag("max-ulp", flags.maxUlp, nonNegative,
                 "a non-negative number"));
}

std::string zero::rt::checkRunFlags(const RunFlags &flags) {
  for (unsigned index : flags.generationNamed)
    if (!flags.launch.inputs.at(index).path.empty())
      return "--per-rank/--range " + std::to_string(index) + ": argument " +
             std::to_string(index) + " comes from a file (--arg)";
  return "";
}

//===----------------------------------------------------------------------===//
// Reports and comparisons
//===----------------------------------------------------------------------===//

std::string zero::rt::formatRun(const RankRun &run, bool withTimes) {
  char text[256];
  std::string line = "rank " + std::to_string(run.rank) + ":";
  if (withTimes) {
    std::snprintf(text, sizeof text, " %.3f ms;", run.seconds * 1e3);
    line += text;
  }
  for (int k = 0; k < ZERO_NUM_COLLECTIVE_KINDS; ++k) {
    std::snprintf(text, sizeof text, " %s %llu (%llu B)",
                  kindName(static_cast<zero_collective_kind>(k)),
                  static_cast<unsigned long long>(run.counters.issued[k]),
                  static_cast<unsigned long long>(run.counters.bytes_sent[k]));
    line += text;
  }
  if (!withTimes)
    return line;
  if (run.stepSeconds.size() > 1) {
    std::vector<double> later(run.stepSeconds.begin() + 1,
                              run.stepSeconds.end());
    std::sort(later.begin(), later.end());
    std::snprintf(text, sizeof text,
                  "; steps 2-%zu: median %.3f ms, %lld system allocations",
                  run.stepSeconds.size(), later[later.size() / 2] * 1e3,
                  static_cast<long long>(run.laterStepAllocations));
    line += text;
  }
  if (run.savedBytes) {
    std::snprintf(text, sizeof text, "; saved %.1f MB in %.3f s",
                  run.savedBytes / 1e6, run.saveSeconds);
    line += text;
  }
  if (run.loadedBytes) {
    std::snprintf(text, sizeof text, "; loaded %.1f MB in %.3f s",
                  run.loadedBytes / 1e6, run.loadSeconds);
    line += text;
  }
  return line;
}

std::string zero::rt::formatUlp(double ulp) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", ulp);
  return text;
}

std::string zero::rt::formatResult(const RankRun &run, size_t index) {
  return "rank " + std::to_string(run.rank) + " result " +
         std::to_string(index) + ":" + formatValues(run.outputs[index]);
}

std::string zero::rt::writeResults(const std::string &dir,
                                   const std::vector<RankRun> &runs) {
  for (const RankRun &run : runs)
    if (std::string error =
            writeRankValues(dir, run.rank, "result", run.outputs);
        !error.empty())
      return error;
  return "";
}

bool zero::rt::compareWithFiles(const std::vector<ArtifactValue> &results,
                                const RankRun &run, const std::string &dir,
                                double maxUlp, std::string &report) {
  bool ok = true;
  char text[256];
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    Array expected, got = run.outputs[i];
    expected.dtype = got.dtype;
    expected.shape = got.shape;
    std::string path = dir + "/rank" + std::to_string(run.rank) + "/result" +
                       std::to_string(i) + ".npy";
    report += "rank " + std::to_string(run.rank) + " result " +
              std::to_string(i) + ": ";
    if (std::string error = readNpy(path, expected); !error.empty()) {
      report += "cannot compare: " + error + "\n";
      ok = false;
      continue;
    }
    if (const auto &shard = results[i].shard) {
      int64_t index = shard->groupIndex[run.rank];
      zeroShardPadding(expected, shard->getWholeElements(), index);
      zeroShardPadding(got, shard->getWholeElements(), index);
    }
    Difference diff = compare(got, expected);
    if (diff.differing == 0) {
      report += "identical\n";
      continue;
    }
    std::snprintf(text, sizeof text,
                  "%lld of %lld elements differ, by at most %llu ulp (first "
                  "at %lld)\n",
                  static_cast<long long>(diff.differing),
                  static_cast<long long>(got.getNumElements()),
                  static_cast<unsigned long long>(diff.maxUlp),
                  static_cast<long long>(diff.firstIndex));
    report += text;
    if (static_cast<double>(diff.maxUlp) > maxUlp)
      ok = false;
  }
  return ok;
}

bool zero::rt::compareRuns(const std::vector<ArtifactValue> &results,
                           const std::vector<std::string> &resultNames,
                           const std::vector<RankRun> &given,
                           const std::vector<RankRun> &transformed,
                           double maxUlp, std::string &report) {
  bool ok = true;
  for (size_t r = 0; r < results.size(); ++r) {
    uint64_t worst = 0;
    int64_t differing = 0;
    int32_t worstRank = -1;
    const std::optional<ShardLayout> &shard = results[r].shard;
    for (size_t i = 0; i < given.size(); ++i) {
      Array a = given[i].outputs[r], b = transformed[i].outputs[r];
      if (shard) {
        int64_t index = shard->groupIndex[given[i].rank];
        a = takeShard(a, shard->shardElements, index);
        zeroShardPadding(b, shard->getWholeElements(), index);
      }
      if (a.dtype != b.dtype || a.shape != b.shape) {
        report += "result " + std::to_string(r) +
                  ": types differ after the pipeline\n";
        ok = false;
        continue;
      }
      Difference d = compare(a, b);
      differing += d.differing;
      if (d.differing && (worstRank < 0 || d.maxUlp > worst)) {
        worst = d.maxUlp;
        worstRank = given[i].rank;
      }
    }
    report += "result " + std::to_string(r) + " (" + resultNames[r] + "): ";
    if (!differing) {
      report +=
          "bit-identical on " + std::to_string(given.size()) + " rank(s)\n";
      continue;
    }
    report += std::to_string(differing) + " element(s) differ, at most " +
              std::to_string(worst) + " ulp (rank " +
              std::to_string(worstRank) + "); bound " + formatUlp(maxUlp) +
              "\n";
    ok &= static_cast<double>(worst) <= maxUlp;
  }
  return ok;
}
