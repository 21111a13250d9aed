//===- LauncherTest.cpp - running a program on every rank -----------------===//
//
// A program written here (no compiler): each rank all-reduces its argument
// and returns the sum, so the launcher's inputs, shards, counters, repeats
// and errors can be checked on the local backend.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Launcher.h"
#include "zero/runtime/Artifact.h"

#include "gtest/gtest.h"

#include <cstring>

using namespace zero::rt;

namespace {

/// `step(x: tensor<4xf32> or its shard) -> tensor<4xf32>`: the all-reduce
/// (sum) of each rank's x, on a mesh of `ranks`; with `sharded`, x is each
/// rank's part of a whole tensor<5xf32> (parts of 2 elements, padded), and
/// the result the sum of the parts.
class SumProgram : public Program {
public:
  SumProgram(int64_t ranks, bool sharded) : ranks(ranks) {
    ArtifactValue x{"arg0", {"f32", {4}, true}, std::nullopt};
    if (sharded) {
      ShardLayout layout{{5}, 2, {}};
      for (int64_t r = 0; r < ranks; ++r)
        layout.groupIndex.push_back(r);
      x = {"arg0", {"f32", {2}, true}, layout};
    }
    arguments = {x};
    results = {{"result0", x.type, std::nullopt}};
  }
  const std::string &getEntryName() const override { return name; }
  const std::vector<ArtifactValue> &getArguments() const override {
    return arguments;
  }
  const std::vector<ArtifactValue> &getResults() const override {
    return results;
  }
  std::string call(std::vector<Array> &inputs, std::vector<Array> *outputs,
                   double &seconds) const override {
    ++calls;
    Array sum = inputs[0];
    int64_t group[] = {1, ranks, 1, 0};
    zero_rt_all_reduce(inputs[0].bytes.data(), sum.bytes.data(),
                       sum.getNumElements(), ZERO_F32, ZERO_SUM, group);
    if (outputs)
      *outputs = {sum};
    seconds = 1.0 / calls;
    return "";
  }
  /// Makes the result the next value of x, as a training step's weights.
  void feedResultToArgument() { results[0].stateOf = 0; }
  bool collectivesProven() const override { return proven; }
  /// As zero-verify-collectives would mark it.
  bool proven = false;
  mutable std::atomic<int> calls{0};

private:
  int64_t ranks;
  std::string name = "step";
  std::vector<ArtifactValue> arguments, results;
};

float element(const Array &array, int64_t i) {
  float value;
  std::memcpy(&value, array.bytes.data() + 4 * i, 4);
  return value;
}

TEST(Launcher, RunsOnEveryRankWithGeneratedInputs) {
  SumProgram program(3, /*sharded=*/false);
  LaunchOptions options;
  options.ranks = 3;
  options.inputs[0].perRank = true;
  std::vector<std::vector<RankRun>> runs;
  ASSERT_EQ(launch({&program}, options, runs), "");
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].size(), 3u);
  // Every rank holds the sum of the three ranks' generated values.
  std::vector<Array> inputs[3];
  for (int32_t r = 0; r < 3; ++r)
    ASSERT_EQ(makeInputs(program.getArguments(), options, r, inputs[r]), "");
  for (const RankRun &run : runs[0]) {
    EXPECT_EQ(run.counters.issued[ZERO_ALL_REDUCE], 1u);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(element(run.outputs[0], i),
                (element(inputs[0][0], i) + element(inputs[1][0], i)) +
                    element(inputs[2][0], i));
  }
}

TEST(Launcher, ProvenCollectivesRunWithoutTheAgreementCheck) {
  SumProgram given(2, /*sharded=*/false), proven(2, /*sharded=*/false);
  proven.proven = true;
  LaunchOptions options;
  options.ranks = 2;
  options.inputs[0].perRank = true;
  std::vector<std::vector<RankRun>> checked, unchecked, forced;
  ASSERT_EQ(launch({&given}, options, checked), "");
  ASSERT_EQ(launch({&proven}, options, unchecked), "");
  EXPECT_TRUE(checked[0][0].agreementChecked);
  EXPECT_FALSE(unchecked[0][0].agreementChecked);
  // The same sums either way.
  EXPECT_EQ(checked[0][1].outputs[0].bytes, unchecked[0][1].outputs[0].bytes);
  // One unproven program among several keeps the check; so does asking.
  ASSERT_EQ(launch({&proven, &given}, options, forced), "");
  EXPECT_TRUE(forced[0][0].agreementChecked);
  options.checkCollectives = true;
  ASSERT_EQ(launch({&proven}, options, forced), "");
  EXPECT_TRUE(forced[0][0].agreementChecked);
}

TEST(Launcher, AShardArgumentGetsItsPartOfTheWhole) {
  SumProgram program(3, /*sharded=*/true);
  LaunchOptions options;
  options.ranks = 3;
  std::vector<std::vector<RankRun>> runs;
  ASSERT_EQ(launch({&program}, options, runs), "");
  // The whole value is the same on every rank; the parts are its elements
  // 0-1, 2-3 and 4 with a zero.
  std::vector<Array> whole;
  ASSERT_EQ(makeInputs(program.getArguments(), options, 0, whole), "");
  ASSERT_EQ(whole[0].shape, std::vector<int64_t>{5});
  EXPECT_EQ(element(runs[0][0].outputs[0], 0),
            (element(whole[0], 0) + element(whole[0], 2)) +
                element(whole[0], 4));
  EXPECT_EQ(element(runs[0][0].outputs[0], 1),
            (element(whole[0], 1) + element(whole[0], 3)) + 0.0f);
}

TEST(Launcher, AShardMadeAloneIsThePartOfTheWhole) {
  SumProgram program(3, /*sharded=*/true);
  LaunchOptions options;
  options.ranks = 3;
  options.inputs[0].perRank = true;
  for (int32_t rank = 0; rank < 3; ++rank) {
    std::vector<Array> whole, alone;
    ASSERT_EQ(makeInputs(program.getArguments(), options, rank, whole, 2), "");
    ASSERT_EQ(makeInputs(program.getArguments(), options, rank, alone, 2,
                         nullptr, /*shardsAlone=*/true),
              "");
    const ShardLayout &shard = *program.getArguments()[0].shard;
    Array part =
        takeShard(whole[0], shard.shardElements, shard.groupIndex[rank]);
    EXPECT_EQ(alone[0].shape, part.shape) << "rank " << rank;
    EXPECT_EQ(alone[0].bytes, part.bytes) << "rank " << rank;
  }
}

TEST(Launcher, RepeatsKeepTheBestTimeAndCountEveryCall) {
  SumProgram program(2, /*sharded=*/false);
  LaunchOptions options;
  options.ranks = 2;
  options.repeat = 3;
  std::vector<std::vector<RankRun>> runs;
  ASSERT_EQ(launch({&program}, options, runs), "");
  EXPECT_EQ(program.calls, 6);
  for (const RankRun &run : runs[0]) {
    EXPECT_EQ(run.counters.issued[ZERO_ALL_REDUCE], 3u);
    EXPECT_LT(run.seconds, 0.5); // the later calls report shorter times
  }
}

TEST(Launcher, StepsFeedTheStateResultToItsArgument) {
  SumProgram program(2, /*sharded=*/false);
  program.feedResultToArgument();
  LaunchOptions options;
  options.ranks = 2;
  options.steps = 3;
  options.inputs[0].perRank = true;
  std::vector<std::vector<RankRun>> runs;
  ASSERT_EQ(launch({&program}, options, runs), "");
  EXPECT_EQ(program.calls, 6);
  // Step 1 sums the ranks' x; steps 2 and 3 sum that sum, held by both.
  std::vector<Array> x0, x1;
  ASSERT_EQ(makeInputs(program.getArguments(), options, 0, x0), "");
  ASSERT_EQ(makeInputs(program.getArguments(), options, 1, x1), "");
  for (const RankRun &run : runs[0]) {
    EXPECT_EQ(run.counters.issued[ZERO_ALL_REDUCE], 3u);
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(element(run.outputs[0], i),
                4 * (element(x0[0], i) + element(x1[0], i)));
  }
}

TEST(Launcher, ErrorsNameTheArgumentAndTheMesh) {
  SumProgram program(2, /*sharded=*/false);
  LaunchOptions options;
  options.ranks = 2;
  options.inputs[0].path = "/nonexistent/x{rank}.npy";
  std::vector<std::vector<RankRun>> runs;
  std::string error = launch({&program}, options, runs);
  EXPECT_NE(error.find("arg0 (argument 0): /nonexistent/x"), std::string::npos)
      << error;

  options.inputs.clear();
  options.meshRanks = 4;
  EXPECT_EQ(launch({&program}, options, runs),
            "@step's mesh has 4 ranks, the world 2");

  options.meshRanks = 0;
  options.inputs[1].perRank = true;
  error = launch({&program}, options, runs);
  EXPECT_NE(error.find("failed: argument 1 is named (--arg, --per-rank or "
                       "--range), but the entry takes 1 arguments"),
            std::string::npos)
      << error;
}

/// A GPU step's description whose result 0 is the next value of argument 0,
/// the result's memory `resultMemory` and the argument's `argumentMemory`
/// (null: the program's memory).
std::string describeStatePair(const char *argumentMemory,
                              const char *resultMemory) {
  auto value = [](const char *name, const char *memory, const char *extra) {
    std::string text = std::string("{\"name\": \"") + name +
                       "\", \"dtype\": \"f32\", \"shape\": [4], "
                       "\"tensor\": true, \"per_rank\": false" +
                       extra;
    if (memory)
      text += std::string(", \"memory\": \"") + memory + "\"";
    return text + "}";
  };
  return std::string("{\"format\": \"zero-artifact\", \"version\": 1, "
                     "\"runtime_abi\": ") +
         std::to_string(ZERO_RUNTIME_ABI_VERSION) +
         ", \"target\": \"cuda\", \"memory\": \"device\", "
         "\"entry\": \"step\", \"ranks\": 1, \"arguments\": [" +
         value("arg0", argumentMemory, "") + "], \"results\": [" +
         value("result0", resultMemory, ", \"state_of\": 0") + "]}";
}

TEST(Launcher, AStateResultMustBeInItsArgumentsMemory) {
  auto check = [](const char *argumentMemory, const char *resultMemory) {
    ArtifactDescription description;
    return parseArtifactDescription(
        describeStatePair(argumentMemory, resultMemory), description);
  };
  EXPECT_EQ(check("host", "host"), "");
  EXPECT_EQ(check(nullptr, nullptr), "");
  // The launcher would hand a device buffer to a program that reads the
  // argument on the host.
  EXPECT_EQ(check("host", nullptr),
            "results[0].state_of: a result in the program's memory cannot "
            "feed argument 0, in host memory");
  EXPECT_EQ(check(nullptr, "host"),
            "results[0].state_of: a result in host memory cannot feed "
            "argument 0, in the program's memory");
}

/// How FaultProgram's rank faults.
enum class Fault {
  /// It reads address 16.
  Read,
  /// It recurses until its stack runs out.
  Overflow,
  /// Its work on its host queue does (zero_rt_host_queue_for).
  OverflowOnItsQueue,
};

/// `step(x: tensor<4xf32>)` whose rank `faulting` faults as `fault` says.
class FaultProgram : public Program {
public:
  FaultProgram(int32_t faulting, Fault fault)
      : faulting(faulting), fault(fault) {
    arguments = {{"arg0", {"f32", {4}, true}, std::nullopt}};
  }
  const std::string &getEntryName() const override { return name; }
  const std::vector<ArtifactValue> &getArguments() const override {
    return arguments;
  }
  const std::vector<ArtifactValue> &getResults() const override {
    return results;
  }
  std::string call(std::vector<Array> &, std::vector<Array> *,
                   double &seconds) const override {
    seconds = 0;
    if (zero_rank_id(zero_bound_rank()) != faulting)
      return "";
    switch (fault) {
    case Fault::Read: {
      volatile int *address = reinterpret_cast<volatile int *>(16);
      return std::to_string(*address);
    }
    case Fault::Overflow:
      return std::to_string(deeper(1));
    case Fault::OverflowOnItsQueue:
      zero_rt_host_queue_for(
          [](void *, int64_t, int64_t) { (void)deeper(1); }, nullptr, 0, 1);
      zero_rt_host_queue_join();
      return "";
    }
    return "";
  }

private:
  /// Frames of 4 KiB each, without end (the flag is never cleared).
  static int deeper(int depth) {
    volatile char frame[4096];
    frame[0] = char(depth);
    return keepGoing ? deeper(depth + 1) + frame[0] : frame[0];
  }
  static inline volatile bool keepGoing = true;
  int32_t faulting;
  Fault fault;
  std::string name = "step";
  std::vector<ArtifactValue> arguments, results;
};

/// Launches `program` on 2 ranks (for a death test: it does not return).
void launchTwo(const Program &program) {
  LaunchOptions options;
  options.ranks = 2;
  std::vector<std::vector<RankRun>> runs;
  (void)launch({&program}, options, runs);
}

TEST(LauncherDeathTest, AFaultNamesItsRankAndTheAddress) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  FaultProgram program(/*faulting=*/1, Fault::Read);
  EXPECT_DEATH(launchTwo(program),
               "zero: error: rank 1: SIGSEGV \\(an access to memory it may "
               "not touch\\) at address 0x10, in .*ZeroRuntimeTests.*; the "
               "process ends, and every rank in it");
}

TEST(LauncherDeathTest, AStackOverflowIsReportedFromItsOwnStack) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  FaultProgram program(/*faulting=*/0, Fault::Overflow);
  EXPECT_DEATH(launchTwo(program), "zero: error: rank 0: SIGSEGV");
}

TEST(LauncherDeathTest, AFaultInARanksHostQueueNamesTheRank) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  FaultProgram program(/*faulting=*/1, Fault::OverflowOnItsQueue);
  EXPECT_DEATH(launchTwo(program), "zero: error: rank 1: SIGSEGV");
}

} // namespace
