//===- CommandLine.h - the runtime tools' one command-line front end -*- C++
//-*-===//
//
// How zero-run, zero-launch, zero-reshard and zero-collective-check read
// their command lines, and what zero-run and zero-launch share once they
// have run a program: the flags of a run (the world, the program's
// arguments, the steps, what becomes of the results), the report of each
// rank's run, the printing and writing of results, and their comparison. It
// needs no LLVM, so that zero-launch stays without it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_COMMANDLINE_H
#define ZERO_RUNTIME_COMMANDLINE_H

#include "zero/runtime/Launcher.h"

#include <charconv>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

namespace zero::rt {

/// Stores a flag's value, or returns what the flag expects ("" when the
/// value is good).
using FlagParser = std::function<std::string(const std::string &value)>;

/// A tool's flags, each with its help, parsed from `argv`: "--name VALUE"
/// or "--name=VALUE" (one dash or two), a switch as "--name" or
/// "--name=true|false". Other words are positional.
class CommandLine {
public:
  /// `usage`: what follows the tool's name on the usage line;
  /// `description`: a paragraph on what the tool does.
  CommandLine(std::string tool, std::string usage, std::string description);

  /// A flag that takes a value, shown in the help as `valueName`.
  void addOption(const std::string &name, const std::string &valueName,
                 const std::string &help, FlagParser parse);
  /// A flag that sets `value`.
  void addSwitch(const std::string &name, const std::string &help, bool &value);
  /// Text shown after the flags in the help.
  void addEpilogue(const std::string &text) { epilogue += text; }

  /// Parses argv[1..]: positional words go to `positionals`. "--help" (or
  /// "-h") prints the help and exits with status 0. Returns an error
  /// message, or "".
  std::string parse(int argc, char **argv,
                    std::vector<std::string> &positionals) const;

  std::string getHelp() const;
  const std::string &getTool() const { return tool; }

private:
  struct Flag {
    std::string name, valueName, help;
    /// Null for a switch.
    FlagParser parse;
    bool *value = nullptr;
  };
  const Flag *find(const std::string &name) const;

  std::string tool, usage, description, epilogue;
  std::vector<Flag> flags;
};

/// How a flag is written: "-o" for a one-letter name, else "--name".
std::string spellFlag(const std::string &name);

/// A parser of an integer flag in [min, max]: "--FLAG expects WHAT, got
/// 'VALUE'" otherwise.
template <typename T>
FlagParser integerFlag(const std::string &flag, T &out, T min,
                       const std::string &what,
                       T max = std::numeric_limits<T>::max()) {
  return [flag, &out, min, max, what](const std::string &text) -> std::string {
    T value{};
    auto [end, ec] =
        std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() ||
        value < min || value > max)
      return spellFlag(flag) + " expects " + what + ", got '" + text + "'";
    out = value;
    return "";
  };
}
/// A parser of a number flag that `valid` accepts.
FlagParser numberFlag(const std::string &flag, double &out,
                      bool (*valid)(double), const std::string &what);
/// A parser of a non-empty text flag ("--FLAG expects WHAT").
FlagParser textFlag(const std::string &flag, std::string &out,
                    const std::string &what);
/// A parser of a repeatable text flag: each non-empty value is appended to
/// `out`, in the order given.
FlagParser textListFlag(const std::string &flag, std::vector<std::string> &out,
                        const std::string &what);
/// A parser of argument indices I,J,...; each `mark`ed.
FlagParser indicesFlag(const std::string &flag,
                       std::function<void(unsigned)> mark);
/// A parser of I=REST: `take(I, REST)` stores REST, or returns false when it
/// is not of `form`.
FlagParser indexedFlag(const std::string &flag, const std::string &form,
                       std::function<bool(unsigned, const std::string &)> take);

/// What zero-run and zero-launch both take from their command line.
struct RunFlags {
  /// The arguments (--arg, --per-rank, --range), seed, timeout, steps,
  /// trace, --check-collectives and --write-inputs; the backend and ranks
  /// are the tool's to settle, from those below and the program.
  LaunchOptions launch;
  /// Empty: the tool's default for the program.
  std::string backend;
  /// 0: the program's mesh, else 1.
  int32_t ranks = 0;
  bool print = false;
  std::string outputDir;
  /// The largest difference a comparison accepts, in units in the last
  /// place.
  double maxUlp = 0;
  /// The arguments --per-rank or --range name: generated ones.
  std::set<unsigned> generationNamed;
};

/// Adds the flags of RunFlags to `commandLine`.
void addRunFlags(CommandLine &commandLine, RunFlags &flags);
/// Why the flags of a run contradict each other, or "".
std::string checkRunFlags(const RunFlags &flags);

/// The line that reports a rank's run: "rank R: [T ms; ]all_reduce N (B B)
/// reduce_scatter ... all_gather ...", and with times, for several steps
/// the later steps' median time and system allocations and the checkpoint
/// traffic.
std::string formatRun(const RankRun &run, bool withTimes);
/// A bound in units in the last place as the user gave it: "0", "2", "0.5".
std::string formatUlp(double ulp);
/// "rank R result I: VALUES".
std::string formatResult(const RankRun &run, size_t index);
/// Writes each run's results as DIR/rank<r>/result<i>.npy. Returns an error
/// message, or "".
std::string writeResults(const std::string &dir,
                         const std::vector<RankRun> &runs);

/// Compares each result of `run` with DIR/rank<r>/result<i>.npy (as
/// writeResults writes them; a shard on its real elements), a line per
/// result appended to `report`. Returns whether every result is within
/// `maxUlp`.
bool compareWithFiles(const std::vector<ArtifactValue> &results,
                      const RankRun &run, const std::string &dir, double maxUlp,
                      std::string &report);

/// Compares the results of two programs run on the same inputs, rank by
/// rank: `given` returns every result whole; `transformed` may return one
/// as a shard (`results[r].shard`), compared with its part of the whole on
/// its real elements. A line per result, naming it by `resultNames[r]`, is
/// appended to `report`. Returns whether every result is within `maxUlp`.
bool compareRuns(const std::vector<ArtifactValue> &results,
                 const std::vector<std::string> &resultNames,
                 const std::vector<RankRun> &given,
                 const std::vector<RankRun> &transformed, double maxUlp,
                 std::string &report);

} // namespace zero::rt

#endif // ZERO_RUNTIME_COMMANDLINE_H
