//===- CommandLineTest.cpp - the runtime tools' command-line front end ----===//

#include "zero/runtime/CommandLine.h"

#include "gtest/gtest.h"

using namespace zero::rt;

namespace {

/// Parses `words` (after a program name) with `commandLine`.
std::string parseWords(const CommandLine &commandLine,
                       std::vector<std::string> words,
                       std::vector<std::string> &positionals) {
  std::vector<char *> argv = {const_cast<char *>("tool")};
  for (std::string &word : words)
    argv.push_back(word.data());
  return commandLine.parse(int(argv.size()), argv.data(), positionals);
}

TEST(CommandLine, ValueFormsAndSwitches) {
  int64_t count = 0;
  std::string name;
  bool on = false, off = true;
  CommandLine commandLine("tool", "[options]", "A tool.");
  commandLine.addOption("count", "N", "how many",
                        integerFlag<int64_t>("count", count, 1, "a count"));
  commandLine.addOption("o", "DIR", "where", textFlag("o", name, "a dir"));
  commandLine.addSwitch("on", "on", on);
  commandLine.addSwitch("off", "off", off);
  std::vector<std::string> positionals;
  EXPECT_EQ(parseWords(commandLine,
                       {"in.mlir", "--count", "3", "-o", "out", "--on",
                        "--off=false", "last"},
                       positionals),
            "");
  EXPECT_EQ(count, 3);
  EXPECT_EQ(name, "out");
  EXPECT_TRUE(on);
  EXPECT_FALSE(off);
  EXPECT_EQ(positionals, (std::vector<std::string>{"in.mlir", "last"}));

  EXPECT_EQ(parseWords(commandLine, {"--count=7", "-count", "8"}, positionals),
            "");
  EXPECT_EQ(count, 8);
}

TEST(CommandLine, RepeatedTextFlagKeepsEachValueInOrder) {
  std::vector<std::string> pipelines;
  CommandLine commandLine("tool", "[options]", "A tool.");
  commandLine.addOption("after", "P", "a pipeline",
                        textListFlag("after", pipelines, "a pass pipeline"));
  std::vector<std::string> positionals;
  EXPECT_EQ(parseWords(commandLine, {"--after", "a,b", "--after=c{x y}"},
                       positionals),
            "");
  EXPECT_EQ(pipelines, (std::vector<std::string>{"a,b", "c{x y}"}));
  EXPECT_NE(parseWords(commandLine, {"--after="}, positionals)
                .find("--after expects a pass pipeline"),
            std::string::npos);
}

TEST(CommandLine, BadWordsAreNamed) {
  int32_t ranks = 0;
  bool on = false;
  CommandLine commandLine("tool", "", "");
  commandLine.addOption(
      "ranks", "N", "",
      integerFlag<int32_t>("ranks", ranks, 1, "a positive integer"));
  commandLine.addSwitch("on", "", on);
  std::vector<std::string> positionals;
  EXPECT_EQ(parseWords(commandLine, {"--pigeon"}, positionals),
            "unknown option '--pigeon' (see --help)");
  EXPECT_EQ(parseWords(commandLine, {"--ranks"}, positionals),
            "--ranks expects N");
  EXPECT_EQ(parseWords(commandLine, {"--ranks", "0"}, positionals),
            "--ranks expects a positive integer, got '0'");
  EXPECT_EQ(parseWords(commandLine, {"--ranks", "-3"}, positionals),
            "--ranks expects a positive integer, got '-3'");
  EXPECT_EQ(parseWords(commandLine, {"--ranks=99999999999"}, positionals),
            "--ranks expects a positive integer, got '99999999999'");
  EXPECT_EQ(parseWords(commandLine, {"--ranks", "2x"}, positionals),
            "--ranks expects a positive integer, got '2x'");
  EXPECT_EQ(parseWords(commandLine, {"--on=maybe"}, positionals),
            "--on takes no value but true or false, got 'maybe'");
  EXPECT_EQ(ranks, 0);
}

TEST(CommandLine, RunFlags) {
  RunFlags flags;
  CommandLine commandLine("tool", "", "");
  addRunFlags(commandLine, flags);
  std::vector<std::string> positionals;
  ASSERT_EQ(parseWords(commandLine,
                       {"--arg", "0=w.npy", "--per-rank", "1,2", "--range",
                        "3=0:4", "--seed", "18446744073709551615", "--steps",
                        "5", "--max-ulp", "2", "--backend", "mpi"},
                       positionals),
            "");
  EXPECT_EQ(flags.launch.inputs.at(0).path, "w.npy");
  EXPECT_TRUE(flags.launch.inputs.at(1).perRank);
  EXPECT_TRUE(flags.launch.inputs.at(2).perRank);
  EXPECT_EQ(flags.launch.inputs.at(3).low, 0);
  EXPECT_EQ(flags.launch.inputs.at(3).high, 4);
  EXPECT_EQ(flags.launch.seed, 18446744073709551615ull);
  EXPECT_EQ(flags.launch.steps, 5);
  EXPECT_EQ(flags.maxUlp, 2);
  EXPECT_EQ(flags.backend, "mpi");
  EXPECT_EQ(checkRunFlags(flags), "");

  EXPECT_EQ(parseWords(commandLine, {"--range", "1=3:2"}, positionals),
            "--range expects I=LOW:HIGH with LOW < HIGH, got '1=3:2'");
  EXPECT_EQ(parseWords(commandLine, {"--per-rank", "1,,2"}, positionals),
            "--per-rank expects argument indices I,J,..., got '1,,2'");
  EXPECT_EQ(parseWords(commandLine, {"--arg", "99999999999999999999=x.npy"},
                       positionals),
            "--arg: argument index '99999999999999999999' is out of range");
  EXPECT_EQ(parseWords(commandLine, {"--arg", "x"}, positionals),
            "--arg expects I=FILE, got 'x'");

  // A file's argument cannot also be generated.
  ASSERT_EQ(parseWords(commandLine, {"--arg", "1=g.npy"}, positionals), "");
  EXPECT_EQ(checkRunFlags(flags),
            "--per-rank/--range 1: argument 1 comes from a file (--arg)");
}

TEST(CommandLine, HelpWrapsUnderEachFlag) {
  bool on = false;
  CommandLine commandLine("tool", "IN [options]", "Does a thing.");
  commandLine.addSwitch("a-rather-long-switch-name",
                        "words words words words words words words words "
                        "words words words words words words words",
                        on);
  std::string help = commandLine.getHelp();
  EXPECT_EQ(help, "usage: tool IN [options]\n"
                  "\n"
                  "Does a thing.\n"
                  "\n"
                  "  --a-rather-long-switch-name\n"
                  "                     words words words words words words "
                  "words words words\n"
                  "                     words words words words words words\n");
}

TEST(CommandLine, RunReportsAndComparisons) {
  RankRun run;
  run.rank = 1;
  run.seconds = 0.0025;
  run.counters.issued[ZERO_ALL_REDUCE] = 2;
  run.counters.bytes_sent[ZERO_ALL_REDUCE] = 64;
  run.counters.issued[ZERO_ALL_TO_ALL] = 1;
  run.counters.bytes_sent[ZERO_ALL_TO_ALL] = 24;
  EXPECT_EQ(formatRun(run, false),
            "rank 1: all_reduce 2 (64 B) reduce_scatter 0 (0 B) "
            "all_gather 0 (0 B) all_to_all 1 (24 B)");
  EXPECT_EQ(formatRun(run, true),
            "rank 1: 2.500 ms; all_reduce 2 (64 B) reduce_scatter 0 (0 B) "
            "all_gather 0 (0 B) all_to_all 1 (24 B)");

  Array a;
  a.dtype = "f32";
  a.shape = {2};
  a.bytes.assign(8, 0);
  Array b = a;
  b.bytes[4] = 1; // the second element: the smallest subnormal, 1 ulp off
  RankRun given, transformed;
  given.outputs = {a};
  transformed.outputs = {b};
  std::vector<ArtifactValue> results(1);
  std::string report;
  EXPECT_FALSE(compareRuns(results, {"tensor<2xf32>"}, {given}, {transformed},
                           0, report));
  EXPECT_EQ(report, "result 0 (tensor<2xf32>): 1 element(s) differ, at most "
                    "1 ulp (rank 0); bound 0\n");
  report.clear();
  EXPECT_TRUE(compareRuns(results, {"tensor<2xf32>"}, {given}, {transformed}, 1,
                          report));
}

} // namespace
