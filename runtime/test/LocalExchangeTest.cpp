//===- LocalExchangeTest.cpp - the local backend's exchange contract ------===//
//
// A local world hands the data movement of each collective to a
// LocalExchange (the host's, or cuda-local's on the GPU). The GPU exchange
// cannot run here, so its contract with the backend is tested with an
// exchange that records what it is asked: prepare on the starting thread,
// exchange on every member once all have posted (in group order), finish
// exactly once per prepared call on the waiting thread, and errors that end
// the world with a message naming the rank, the collective and the group.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"

#include "zero/runtime/zero_runtime.h"

#include "gtest/gtest.h"

#include <atomic>
#include <mutex>
#include <thread>

using namespace zero::rt;

namespace {

Group wholeWorld(int32_t rank, int32_t size) {
  int64_t descriptor[] = {1, size, 1, 0};
  Group group;
  std::string error;
  EXPECT_TRUE(decodeGroup(descriptor, rank, size, group, error)) << error;
  return group;
}

/// Records each call; sums the members' first input element into every
/// output (enough to see that it saw every member's buffers).
class RecordingExchange : public LocalExchange {
public:
  std::string failPrepareOf; // "rank:sequence" whose prepare fails
  bool failExchange = false;
  std::atomic<int> prepared{0}, exchanged{0}, finishedOk{0}, finishedFailed{0};
  std::mutex mutex;
  std::vector<std::thread::id> prepareThreads;

  std::string prepare(Collective &c) override {
    std::string who = std::to_string(c.group.members[c.group.index]) + ":" +
                      std::to_string(c.sequence);
    if (who == failPrepareOf)
      return "no stream for it";
    {
      std::lock_guard<std::mutex> lock(mutex);
      prepareThreads.push_back(std::this_thread::get_id());
    }
    c.backendData = new int(c.group.index);
    ++prepared;
    return "";
  }
  std::string exchange(const std::vector<const Collective *> &posted,
                       const Collective &c) override {
    ++exchanged;
    if (failExchange && c.group.index == 1)
      return "the device is on fire";
    // Every member's own data travels with its call, in group order.
    for (size_t k = 0; k < posted.size(); ++k)
      EXPECT_EQ(*static_cast<int *>(posted[k]->backendData),
                static_cast<int>(k));
    float sum = 0;
    for (const Collective *member : posted)
      sum += *static_cast<const float *>(member->in);
    *static_cast<float *>(c.out) = sum;
    return "";
  }
  std::string finish(Collective &c, bool ok, Pending &) override {
    delete static_cast<int *>(c.backendData);
    c.backendData = nullptr;
    ++(ok ? finishedOk : finishedFailed);
    return "";
  }
};

/// Runs one all-reduce of one float per rank on `ranks` threads; returns
/// each rank's wait() and output.
std::vector<std::pair<bool, float>> allReduceOnce(Backend &backend,
                                                  int32_t ranks) {
  std::vector<std::pair<bool, float>> results(ranks);
  std::vector<std::thread> threads;
  for (int32_t r = 0; r < ranks; ++r)
    threads.emplace_back([&, r] {
      float in = static_cast<float>(r + 1), out = -1;
      Collective c{};
      c.kind = ZERO_ALL_REDUCE;
      c.in = &in;
      c.out = &out;
      c.count = 1;
      c.dtype = ZERO_F32;
      c.reduction = ZERO_SUM;
      c.group = wholeWorld(r, ranks);
      c.sequence = 0;
      std::unique_ptr<Pending> pending = backend.start(r, c);
      bool ok = pending->wait();
      results[r] = {ok, out};
    });
  for (std::thread &t : threads)
    t.join();
  return results;
}

TEST(LocalExchange, EveryCallIsPreparedExchangedAndFinishedOnce) {
  auto recording = std::make_unique<RecordingExchange>();
  RecordingExchange &exchange = *recording;
  std::string error;
  std::unique_ptr<Backend> backend =
      createLocalBackend(3, 10, error, std::move(recording));
  ASSERT_TRUE(backend) << error;
  for (auto [ok, out] : allReduceOnce(*backend, 3)) {
    EXPECT_TRUE(ok);
    EXPECT_EQ(out, 6.0f);
  }
  EXPECT_EQ(exchange.prepared, 3);
  EXPECT_EQ(exchange.exchanged, 3);
  EXPECT_EQ(exchange.finishedOk, 3);
  EXPECT_EQ(exchange.finishedFailed, 0);
  // prepare ran on the ranks' own threads, not on a communication thread.
  EXPECT_EQ(exchange.prepareThreads.size(), 3u);
  EXPECT_EQ(backend->error(), "");
}

TEST(LocalExchange, AnExchangeErrorEndsTheWorldAndNamesTheCall) {
  auto recording = std::make_unique<RecordingExchange>();
  recording->failExchange = true;
  RecordingExchange &exchange = *recording;
  std::string error;
  std::unique_ptr<Backend> backend =
      createLocalBackend(2, 10, error, std::move(recording));
  ASSERT_TRUE(backend) << error;
  for (auto [ok, out] : allReduceOnce(*backend, 2))
    EXPECT_FALSE(ok);
  EXPECT_EQ(backend->error(), "rank 1: all_reduce #0 of 1 f32 (sum) on group "
                              "ranks 0,1 (mesh [2] axes [0]): the device is "
                              "on fire");
  // The failed calls are still finished (their events released).
  EXPECT_EQ(exchange.finishedOk + exchange.finishedFailed, 2);
}

TEST(LocalExchange, APrepareErrorEndsTheWorldWithoutAFinish) {
  auto recording = std::make_unique<RecordingExchange>();
  recording->failPrepareOf = "0:0";
  RecordingExchange &exchange = *recording;
  std::string error;
  std::unique_ptr<Backend> backend =
      createLocalBackend(2, 2, error, std::move(recording));
  ASSERT_TRUE(backend) << error;
  for (auto [ok, out] : allReduceOnce(*backend, 2))
    EXPECT_FALSE(ok);
  EXPECT_EQ(backend->error(),
            "rank 0: all_reduce #0 of 1 f32 (sum): no stream for it");
  EXPECT_EQ(exchange.prepared, 1);
  EXPECT_EQ(exchange.finishedOk + exchange.finishedFailed, 1);
}

/// Creates a world of `ranks` on `backend` with `env` set (restored after);
/// returns why it failed, or "" (the world is then ended).
std::string worldError(const char *backend, int32_t ranks,
                       std::vector<std::pair<const char *, const char *>> env) {
  for (auto [name, value] : env)
    setenv(name, value, 1);
  zero_options options;
  zero_options_init(&options);
  options.backend = backend;
  options.ranks = ranks;
  options.timeout_seconds = 5;
  zero_world *world = nullptr;
  char error[512] = {};
  int failed = zero_world_create(&options, &world, error, sizeof error);
  for (auto [name, value] : env)
    unsetenv(name);
  if (!failed) {
    zero_world_destroy(world);
    return "";
  }
  return error;
}

// Without a GPU (CI), asking for cuda-local says why; with one, the world
// starts.
TEST(LocalExchange, CudaLocalNeedsAGpu) {
  char why[256] = {};
  bool haveGpu = zero_gpu_init(why, sizeof why) == 0;
  std::string error = worldError("cuda-local", 2, {});
  if (haveGpu) {
    EXPECT_EQ(error, "");
    return;
  }
  EXPECT_EQ(error, std::string("the cuda-local backend needs a GPU: ") + why);
  EXPECT_EQ(worldError("cuda-local", 65, {}),
            "a cuda-local world runs 1 to 64 ranks, not 65");
}

// The nccl backend starts torchrun-style or under mpirun; without either it
// says how, and on a machine without a GPU (CI) it gets as far as the
// rendezvous and then says there is no GPU.
TEST(NcclBackend, SaysHowToStartAndThatItNeedsAGpu) {
  char why[256] = {};
  if (zero_gpu_init(why, sizeof why) == 0)
    GTEST_SKIP() << "a GPU is visible; this checks the errors without one";
  std::string noLauncher = worldError("nccl", 1, {});
  if (noLauncher.find("built without NCCL") != std::string::npos ||
      noLauncher.find("cannot be loaded") != std::string::npos)
    GTEST_SKIP() << noLauncher;
  EXPECT_NE(noLauncher.find("the nccl backend starts under mpirun or "
                            "torchrun-style"),
            std::string::npos)
      << noLauncher;
  std::string noGpu = worldError("nccl", 1,
                                 {{"RANK", "0"},
                                  {"WORLD_SIZE", "1"},
                                  {"MASTER_ADDR", "127.0.0.1"},
                                  {"MASTER_PORT", "29631"}});
  EXPECT_EQ(noGpu, std::string("the nccl backend needs a GPU: ") + why)
      << noGpu;
}

} // namespace
