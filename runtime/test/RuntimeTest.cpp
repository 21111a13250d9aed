//===- RuntimeTest.cpp - the runtime's local backend ----------------------===//

#include "backends/Backend.h"
#include "core/BufferPool.h"
#include "core/Reduce.h"
#include "zero/runtime/zero_runtime.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

/// A local world of `ranks` ranks, each running `body(rank, id)` on its own
/// thread.
struct LocalWorld {
  explicit LocalWorld(int32_t ranks, double timeout = 10) {
    zero_options options;
    zero_options_init(&options);
    options.ranks = ranks;
    options.timeout_seconds = timeout;
    char error[256];
    EXPECT_EQ(zero_world_create(&options, &world, error, sizeof error), 0)
        << error;
  }
  ~LocalWorld() { zero_world_destroy(world); }

  void run(const std::function<void(zero_rank *, int32_t)> &body) {
    std::vector<std::thread> threads;
    for (int32_t i = 0; i < zero_world_num_local_ranks(world); ++i)
      threads.emplace_back([&, i] {
        zero_rank *rank = zero_world_local_rank(world, i);
        zero_rank_bind(rank);
        body(rank, zero_rank_id(rank));
        zero_rank_bind(nullptr);
      });
    for (std::thread &t : threads)
      t.join();
  }

  std::string error() const {
    const char *e = zero_world_error(world);
    return e ? e : "";
  }

  zero_world *world = nullptr;
};

const int64_t kMesh4[] = {1, 4, 1, 0};
const int64_t kMesh2[] = {1, 2, 1, 0};

/// Values whose sum depends on the order of addition.
float valueOf(int32_t rank, int64_t i) {
  return (rank % 2 ? 1e8f : 1.0f) * static_cast<float>(i % 7 + 1) / 3.0f +
         static_cast<float>(rank) * 0.1f;
}

TEST(LocalBackend, AllReduceAddsInRankOrderAndMatchesReduceScatter) {
  constexpr int64_t count = 1000;
  LocalWorld world(4);
  std::vector<std::vector<float>> reduced(4), scattered(4);
  world.run([&](zero_rank *, int32_t id) {
    std::vector<float> in(count);
    for (int64_t i = 0; i < count; ++i)
      in[i] = valueOf(id, i);
    reduced[id].resize(count);
    zero_rt_all_reduce(in.data(), reduced[id].data(), count, ZERO_F32, ZERO_SUM,
                       kMesh4);
    scattered[id].resize(count / 4);
    zero_rt_reduce_scatter(in.data(), scattered[id].data(), count, ZERO_F32,
                           ZERO_SUM, kMesh4);
  });
  ASSERT_EQ(world.error(), "");
  for (int64_t i = 0; i < count; ++i) {
    float expected = valueOf(0, i);
    for (int32_t r = 1; r < 4; ++r)
      expected += valueOf(r, i);
    for (int32_t r = 0; r < 4; ++r)
      ASSERT_EQ(std::memcmp(&reduced[r][i], &expected, 4), 0) << i;
    ASSERT_EQ(std::memcmp(&scattered[i / 250][i % 250], &expected, 4), 0);
  }
}

TEST(LocalBackend, InPlaceMeanMaxAndMin) {
  LocalWorld world(3);
  std::vector<std::vector<double>> mean(3);
  std::vector<std::vector<int64_t>> maxed(3), minned(3);
  const int64_t mesh[] = {1, 3, 1, 0};
  world.run([&](zero_rank *, int32_t id) {
    mean[id] = {double(id), 2.0 * id, 5.0, -1.0, 7.0};
    zero_rt_all_reduce(mean[id].data(), mean[id].data(), 5, ZERO_F64, ZERO_MEAN,
                       mesh);
    maxed[id] = {id, -id, 10};
    minned[id] = maxed[id];
    zero_rt_all_reduce(maxed[id].data(), maxed[id].data(), 3, ZERO_I64,
                       ZERO_MAX, mesh);
    zero_rt_all_reduce(minned[id].data(), minned[id].data(), 3, ZERO_I64,
                       ZERO_MIN, mesh);
  });
  ASSERT_EQ(world.error(), "");
  for (int r = 0; r < 3; ++r) {
    EXPECT_EQ(mean[r], (std::vector<double>{1.0, 2.0, 5.0, -1.0, 7.0}));
    EXPECT_EQ(maxed[r], (std::vector<int64_t>{2, 0, 10}));
    EXPECT_EQ(minned[r], (std::vector<int64_t>{0, -2, 10}));
  }
}

/// Every count of inputs (those with a loop of their own and the general
/// one), past a block's end, in place: each element is the inputs combined
/// in rank order, a mean divided once at the end.
TEST(Reduce, EveryCountOfInputsFollowsTheDefinitionBitForBit) {
  constexpr int64_t len = 64 * 2 + 5;
  for (int32_t n = 1; n <= 9; ++n)
    for (zero_reduction reduction : {ZERO_SUM, ZERO_MEAN, ZERO_MAX, ZERO_MIN}) {
      std::vector<std::vector<float>> inputs(n, std::vector<float>(len + 3));
      std::vector<const void *> ins(n);
      for (int32_t r = 0; r < n; ++r) {
        for (int64_t i = 0; i < len + 3; ++i)
          inputs[r][i] = valueOf(r, i) * (i % 3 ? 1.0f : -1.0f);
        ins[r] = inputs[r].data();
      }
      std::vector<float> expected(len);
      for (int64_t e = 0; e < len; ++e) {
        float acc = inputs[0][e + 3];
        for (int32_t r = 1; r < n; ++r) {
          float x = inputs[r][e + 3];
          acc = reduction == ZERO_MAX   ? std::max(acc, x)
                : reduction == ZERO_MIN ? std::min(acc, x)
                                        : acc + x;
        }
        expected[e] =
            reduction == ZERO_MEAN ? acc / static_cast<float>(n) : acc;
      }
      std::vector<float> out(len + 1);
      zero::rt::reduceRange(ZERO_F32, reduction, ins.data(), n, 3, out.data(),
                            1, len);
      ASSERT_EQ(std::memcmp(out.data() + 1, expected.data(), len * 4), 0)
          << n << " inputs, reduction " << reduction;
      // In place: the output is the first input, at the same offset.
      zero::rt::reduceRange(ZERO_F32, reduction, ins.data(), n, 3,
                            inputs[0].data(), 3, len);
      ASSERT_EQ(std::memcmp(inputs[0].data() + 3, expected.data(), len * 4), 0)
          << n << " inputs in place, reduction " << reduction;
    }
}

TEST(LocalBackend, AllGatherConcatenatesInGroupOrder) {
  LocalWorld world(4);
  std::vector<std::vector<int32_t>> out(4);
  world.run([&](zero_rank *, int32_t id) {
    int32_t in[2] = {10 * id, 10 * id + 1};
    out[id].resize(8);
    zero_rt_all_gather(in, out[id].data(), 2, ZERO_I32, kMesh4);
  });
  ASSERT_EQ(world.error(), "");
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(out[r], (std::vector<int32_t>{0, 1, 10, 11, 20, 21, 30, 31}));
}

TEST(LocalBackend, AllGatherInPlaceFromEachRanksOwnPart) {
  // Each rank's input is its own part of its output, on a 2x4 mesh's
  // groups of 4 along axis 1: group index, not world rank, names the part.
  const int64_t inner[] = {2, 2, 4, 1, 1};
  LocalWorld world(8);
  std::vector<std::vector<int32_t>> out(8);
  world.run([&](zero_rank *, int32_t id) {
    out[id].assign(8, -1);
    int64_t part = zero_rt_group_index(inner);
    out[id][2 * part] = 10 * id;
    out[id][2 * part + 1] = 10 * id + 1;
    zero_rt_all_gather(out[id].data() + 2 * part, out[id].data(), 2, ZERO_I32,
                       inner);
  });
  ASSERT_EQ(world.error(), "");
  for (int r = 0; r < 8; ++r) {
    int32_t first = r < 4 ? 0 : 40;
    EXPECT_EQ(out[r], (std::vector<int32_t>{first, first + 1, first + 10,
                                            first + 11, first + 20, first + 21,
                                            first + 30, first + 31}));
  }
}

TEST(LocalBackend, HybridMeshGroupsOnOneAxis) {
  // Mesh 2x4: axis 1 groups ranks {0..3} and {4..7}; axis 0 groups {r, r+4}.
  const int64_t inner[] = {2, 2, 4, 1, 1};
  const int64_t outer[] = {2, 2, 4, 1, 0};
  LocalWorld world(8);
  std::vector<int64_t> innerSum(8), outerSum(8), innerIndex(8), outerIndex(8);
  world.run([&](zero_rank *, int32_t id) {
    int64_t mine = id;
    zero_rt_all_reduce(&mine, &innerSum[id], 1, ZERO_I64, ZERO_SUM, inner);
    zero_rt_all_reduce(&mine, &outerSum[id], 1, ZERO_I64, ZERO_SUM, outer);
    innerIndex[id] = zero_rt_group_index(inner);
    outerIndex[id] = zero_rt_group_index(outer);
  });
  ASSERT_EQ(world.error(), "");
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(innerSum[r], r < 4 ? 0 + 1 + 2 + 3 : 4 + 5 + 6 + 7);
    EXPECT_EQ(outerSum[r], (r % 4) * 2 + 4);
    EXPECT_EQ(innerIndex[r], r % 4);
    EXPECT_EQ(outerIndex[r], r / 4);
  }
}

TEST(LocalBackend, AMeshOfTheWrongSizeIsAnError) {
  LocalWorld world(2);
  world.run([&](zero_rank *, int32_t) {
    float x = 1, y = 0;
    zero_rt_all_reduce(&x, &y, 1, ZERO_F32, ZERO_SUM, kMesh4);
  });
  EXPECT_NE(world.error().find("mesh [4] has 4 ranks but the world has 2"),
            std::string::npos)
      << world.error();
}

TEST(LocalBackend, Bf16Sum) {
  const int64_t mesh[] = {1, 2, 1, 0};
  LocalWorld world(2);
  std::vector<uint16_t> out(2);
  world.run([&](zero_rank *, int32_t id) {
    uint16_t in = id == 0 ? 0x3f80 /*1.0*/ : 0x4000 /*2.0*/;
    zero_rt_all_reduce(&in, &out[id], 1, ZERO_BF16, ZERO_SUM, mesh);
  });
  ASSERT_EQ(world.error(), "");
  EXPECT_EQ(out[0], 0x4040); // 3.0
  EXPECT_EQ(out[1], 0x4040);
}

TEST(LocalBackend, DisagreementNamesTheCollectiveAndTheRanks) {
  LocalWorld world(4);
  auto start = std::chrono::steady_clock::now();
  world.run([&](zero_rank *, int32_t id) {
    std::vector<float> in(8, 1.0f), out(8);
    zero_rt_all_reduce(in.data(), out.data(), id == 2 ? 4 : 8, ZERO_F32,
                       ZERO_SUM, kMesh4);
    // Later collectives return at once.
    zero_rt_all_reduce(in.data(), out.data(), 8, ZERO_F32, ZERO_SUM, kMesh4);
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  std::string error = world.error();
  EXPECT_NE(error.find("ranks disagree on collective #0"), std::string::npos)
      << error;
  EXPECT_NE(error.find("rank 2 calls all_reduce #0 of 4 f32"),
            std::string::npos)
      << error;
}

TEST(LocalBackend, AMissingRankTimesOutWithItsName) {
  LocalWorld world(4, /*timeout=*/0.5);
  world.run([&](zero_rank *, int32_t id) {
    if (id == 3)
      return;
    float x = 1, y = 0;
    zero_rt_all_reduce(&x, &y, 1, ZERO_F32, ZERO_SUM, kMesh4);
  });
  std::string error = world.error();
  EXPECT_NE(error.find("timed out after 0.5 s: rank 3 did not arrive"),
            std::string::npos)
      << error;
}

TEST(LocalBackend, AFailedRankEndsTheOthers) {
  LocalWorld world(3, /*timeout=*/30);
  const int64_t mesh[] = {1, 3, 1, 0};
  auto start = std::chrono::steady_clock::now();
  std::vector<int> status(3);
  world.run([&](zero_rank *rank, int32_t id) {
    if (id == 1) {
      zero_rank_fail(rank, "could not read its input");
      return;
    }
    float x = 1, y = 0;
    status[id] =
        zero_wait(zero_all_reduce(rank, &x, &y, 1, ZERO_F32, ZERO_SUM, mesh));
  });
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(status[0], 1);
  EXPECT_EQ(status[2], 1);
  EXPECT_EQ(world.error(), "rank 1 failed: could not read its input");
}

TEST(LocalBackend, AStartReturnsBeforeTheCollectiveCompletes) {
  // Rank 1 calls the collective only once rank 0's start has returned, or
  // after 5 s: a start that waited for rank 1 would be seen as rank 1
  // giving up on it. Rank 0's wait returns only once rank 1 has called it.
  // No wall-clock bound: a loaded machine may pause a thread for long.
  using namespace std::chrono;
  LocalWorld world(2);
  const int64_t mesh[] = {1, 2, 1, 0};
  std::atomic<bool> started{false}, arrived{false};
  bool startedFirst = false, arrivedBeforeTheWaitReturned = false;
  world.run([&](zero_rank *, int32_t id) {
    float x = 1, y = 0;
    if (id == 1) {
      auto limit = steady_clock::now() + seconds(5);
      while (!started.load() && steady_clock::now() < limit)
        std::this_thread::sleep_for(milliseconds(1));
      startedFirst = started.load();
      arrived.store(true);
      zero_rt_all_reduce(&x, &y, 1, ZERO_F32, ZERO_SUM, mesh);
      return;
    }
    zero_handle *h =
        zero_rt_all_reduce_start(&x, &y, 1, ZERO_F32, ZERO_SUM, mesh);
    started.store(true);
    zero_rt_wait(h);
    arrivedBeforeTheWaitReturned = arrived.load();
    EXPECT_EQ(y, 2.0f);
  });
  ASSERT_EQ(world.error(), "");
  EXPECT_TRUE(startedFirst);                 // the start did not wait
  EXPECT_TRUE(arrivedBeforeTheWaitReturned); // the wait did
}

TEST(LocalBackend, ABatchGivesTheResultsOfItsCollectives) {
  LocalWorld world(4);
  world.run([&](zero_rank *rank, int32_t id) {
    std::vector<float> in(8, static_cast<float>(id + 1)), sum(8), part(2);
    zero_batch_begin(rank);
    zero_handle *a = zero_rt_all_reduce_start(in.data(), sum.data(), 8,
                                              ZERO_F32, ZERO_SUM, kMesh4);
    zero_handle *b = zero_rt_reduce_scatter_start(in.data(), part.data(), 8,
                                                  ZERO_F32, ZERO_MAX, kMesh4);
    zero_batch_end(rank);
    zero_rt_wait(b);
    zero_rt_wait(a);
    EXPECT_EQ(sum[5], 10.0f);
    EXPECT_EQ(part[1], 4.0f);
  });
  EXPECT_EQ(world.error(), "");
}

TEST(LocalBackend, UnbalancedBatchesAreErrors) {
  LocalWorld nested(1);
  nested.run([&](zero_rank *rank, int32_t) {
    zero_rt_batch_begin();
    zero_rt_batch_begin();
  });
  EXPECT_EQ(nested.error(),
            "rank 0: zero_batch_begin in a batch (batches do not nest)");
  LocalWorld unopened(1);
  unopened.run([&](zero_rank *rank, int32_t) { zero_rt_batch_end(); });
  EXPECT_EQ(unopened.error(),
            "rank 0: zero_batch_end without zero_batch_begin");
}

TEST(LocalBackend, CountersFollowTheRingFormulas) {
  LocalWorld world(4);
  std::vector<zero_counters> counters(4);
  world.run([&](zero_rank *rank, int32_t id) {
    std::vector<float> a(1000, 1.0f), b(1000), c(250);
    zero_handle *h1 = zero_rt_all_reduce_start(a.data(), b.data(), 1000,
                                               ZERO_F32, ZERO_SUM, kMesh4);
    zero_handle *h2 = zero_rt_reduce_scatter_start(a.data(), c.data(), 1000,
                                                   ZERO_F32, ZERO_SUM, kMesh4);
    zero_rt_wait(h2);
    zero_rt_wait(h1);
    zero_rt_all_gather(c.data(), b.data(), 250, ZERO_F32, kMesh4);
    zero_rank_counters(rank, &counters[id]);
  });
  ASSERT_EQ(world.error(), "");
  for (const zero_counters &c : counters) {
    EXPECT_EQ(c.bytes_sent[ZERO_ALL_REDUCE], 2u * 3 * 4000 / 4);
    EXPECT_EQ(c.bytes_sent[ZERO_REDUCE_SCATTER], 3u * 4000 / 4);
    EXPECT_EQ(c.bytes_sent[ZERO_ALL_GATHER], 3u * 1000);
    EXPECT_EQ(c.issued[ZERO_ALL_REDUCE], 1u);
    EXPECT_EQ(c.issued[ZERO_REDUCE_SCATTER], 1u);
    EXPECT_EQ(c.issued[ZERO_ALL_GATHER], 1u);
  }
}

TEST(LocalBackend, ALaunchersBarrierIsNotTheProgramsCollective) {
  LocalWorld world(4);
  std::vector<zero_counters> counters(4);
  world.run([&](zero_rank *rank, int32_t id) {
    int64_t scratch = 0;
    EXPECT_EQ(zero_rank_barrier(rank, &scratch), 0);
    // The program's first collective is still #0: one rank's disagreeing
    // count would name it so (the numbering is checked in mpi.test).
    std::vector<float> a(8, 1.0f);
    zero_rt_all_reduce(a.data(), a.data(), 8, ZERO_F32, ZERO_SUM, kMesh4);
    EXPECT_EQ(zero_rank_barrier(rank, &scratch), 0);
    zero_rank_counters(rank, &counters[id]);
  });
  ASSERT_EQ(world.error(), "");
  for (const zero_counters &c : counters) {
    EXPECT_EQ(c.issued[ZERO_ALL_REDUCE], 1u);
    EXPECT_EQ(c.bytes_sent[ZERO_ALL_REDUCE], 2u * 3 * 32 / 4);
  }
}

TEST(LocalBackend, ABarrierNumbersItselfApartFromTheProgram) {
  LocalWorld world(2);
  world.run([&](zero_rank *rank, int32_t id) {
    int64_t scratch = 0;
    zero_rank_barrier(rank, &scratch);
    std::vector<float> a(id ? 4 : 2, 1.0f);
    zero_rt_all_reduce(a.data(), a.data(), a.size(), ZERO_F32, ZERO_SUM,
                       kMesh2);
  });
  EXPECT_NE(world.error().find("collective #0"), std::string::npos)
      << world.error();
}

TEST(Runtime, UnknownBackendIsAnError) {
  zero_options options;
  zero_options_init(&options);
  options.backend = "carrier-pigeon";
  zero_world *world = nullptr;
  char error[256] = {};
  EXPECT_NE(zero_world_create(&options, &world, error, sizeof error), 0);
  EXPECT_EQ(std::string(error),
            "unknown backend 'carrier-pigeon' (expected local, cuda-local, "
            "mpi or nccl)");
}

} // namespace

namespace {

/// C[2x3] += A[2x2] B[2x3] with leading dimensions wider than the rows, in
/// f32: small integers, so every order of summation gives the same result.
TEST(HostMatmul, AccumulatesIntoCWithLeadingDimensions) {
  // A is 2x2 in rows of 3, B 2x3 in rows of 4, C 2x3 in rows of 5.
  std::vector<float> a = {1, 2, -1, 3, 4, -1};
  std::vector<float> b = {1, 0, 2, -1, 0, 1, 1, -1};
  std::vector<float> c = {10, 20, 30, -1, -1, 40, 50, 60, -1, -1};
  zero_rt_host_matmul(ZERO_F32, ZERO_F32, 2, 3, 2, a.data(), 3, 0, b.data(), 4,
                      0, c.data(), 5, 1);
  // Row 0: [1 2] B = [1 2 4]; row 1: [3 4] B = [3 4 10]. Padding unchanged.
  EXPECT_EQ(c, (std::vector<float>{11, 22, 34, -1, -1, 43, 54, 70, -1, -1}));
}

/// Operands stored transposed (A as k x m, B as n x k, each in wider rows)
/// give what the same operands stored as they are give.
TEST(HostMatmul, ReadsTransposedOperands) {
  // op(A) = [1 2; 3 4] stored as its transpose in rows of 3; op(B) =
  // [1 0 2; -1 0 1] stored as its 3x2 transpose in rows of 2.
  std::vector<float> at = {1, 3, -1, 2, 4, -1};
  std::vector<float> bt = {1, -1, 0, 0, 2, 1};
  std::vector<float> c = {10, 20, 30, 40, 50, 60};
  zero_rt_host_matmul(ZERO_F32, ZERO_F32, 2, 3, 2, at.data(), 3, 1, bt.data(),
                      2, 1, c.data(), 3, 1);
  // Row 0: [1 2] op(B) = [-1 0 4]; row 1: [3 4] op(B) = [-1 0 10].
  EXPECT_EQ(c, (std::vector<float>{9, 20, 34, 39, 50, 70}));
  // One operand transposed: op(A) as stored, op(B) transposed.
  std::vector<float> a = {1, 2, 3, 4}, d = {0, 0, 0, 0, 0, 0};
  zero_rt_host_matmul(ZERO_F32, ZERO_F32, 2, 3, 2, a.data(), 2, 0, bt.data(), 2,
                      1, d.data(), 3, 1);
  EXPECT_EQ(d, (std::vector<float>{-1, 0, 4, -1, 0, 10}));
}

/// The panels' vector kernels give, for every element, the sum a row at a
/// time gives: fused multiply-adds from zero in k's order, then added to C.
/// Sizes that leave partial blocks and panels, each transpose, bf16 inputs
/// into f32 and into bf16, several threads, and each kernel the host runs.
class HostMatmulKernels : public ::testing::TestWithParam<const char *> {};

INSTANTIATE_TEST_SUITE_P(Isa, HostMatmulKernels,
                         ::testing::Values("avx512", "avx2", "portable"));

TEST_P(HostMatmulKernels, PanelsGiveTheSumsInKsOrder) {
  setenv("ZERO_HOST_GEMM_ISA", GetParam(), 1);
  const int64_t m = 7, n = 45, k = 33;
  uint32_t seed = 12345;
  auto next = [&] {
    seed = seed * 1664525u + 1013904223u;
    return static_cast<float>(seed >> 8) / float(1 << 24) * 2 - 1;
  };
  using zero::rt::bf16ToFloat;
  using zero::rt::floatToBf16;
  std::vector<float> a(m * k), b(k * n), c0(m * n);
  for (float &x : a)
    x = next();
  for (float &x : b)
    x = next();
  for (float &x : c0)
    x = next();
  setenv("ZERO_HOST_THREADS", "3", 1);
  setenv("ZERO_HOST_CHUNK", "1", 1);
  for (int32_t ta : {0, 1})
    for (int32_t tb : {0, 1}) {
      // op(A) = a (m x k) and op(B) = b (k x n), stored as asked.
      std::vector<float> as(m * k), bs(k * n);
      for (int64_t i = 0; i < m; ++i)
        for (int64_t p = 0; p < k; ++p)
          as[ta ? p * m + i : i * k + p] = a[i * k + p];
      for (int64_t p = 0; p < k; ++p)
        for (int64_t j = 0; j < n; ++j)
          bs[tb ? j * k + p : p * n + j] = b[p * n + j];
      std::vector<float> expected = c0, got = c0;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum = std::fma(a[i * k + p], b[p * n + j], sum);
          expected[i * n + j] += sum;
        }
      zero_rt_host_matmul(ZERO_F32, ZERO_F32, m, n, k, as.data(), ta ? m : k,
                          ta, bs.data(), tb ? k : n, tb, got.data(), n, 1);
      EXPECT_EQ(std::memcmp(got.data(), expected.data(), got.size() * 4), 0)
          << "transpose a " << ta << ", b " << tb;
      // bf16 inputs, summed in f32, into f32 and into bf16.
      std::vector<uint16_t> ah(m * k), bh(k * n), ch(m * n);
      for (size_t e = 0; e < as.size(); ++e)
        ah[e] = floatToBf16(as[e]);
      for (size_t e = 0; e < bs.size(); ++e)
        bh[e] = floatToBf16(bs[e]);
      for (size_t e = 0; e < ch.size(); ++e)
        ch[e] = floatToBf16(c0[e]);
      std::vector<float> wide = c0, wideExpected = c0;
      std::vector<uint16_t> narrowExpected = ch;
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
          float sum = 0;
          for (int64_t p = 0; p < k; ++p)
            sum = std::fma(bf16ToFloat(ah[ta ? p * m + i : i * k + p]),
                           bf16ToFloat(bh[tb ? j * k + p : p * n + j]), sum);
          wideExpected[i * n + j] += sum;
          narrowExpected[i * n + j] =
              floatToBf16(bf16ToFloat(ch[i * n + j]) + sum);
        }
      zero_rt_host_matmul(ZERO_BF16, ZERO_F32, m, n, k, ah.data(), ta ? m : k,
                          ta, bh.data(), tb ? k : n, tb, wide.data(), n, 1);
      EXPECT_EQ(std::memcmp(wide.data(), wideExpected.data(), wide.size() * 4),
                0)
          << "bf16 into f32, transpose a " << ta << ", b " << tb;
      zero_rt_host_matmul(ZERO_BF16, ZERO_BF16, m, n, k, ah.data(), ta ? m : k,
                          ta, bh.data(), tb ? k : n, tb, ch.data(), n, 1);
      EXPECT_EQ(ch, narrowExpected)
          << "bf16 into bf16, transpose a " << ta << ", b " << tb;
      // accumulate 0: C is not read (NaN here), and each element is what
      // a C of zeros gives.
      std::vector<float> zeros(m * n, 0.0f), unread(m * n, std::nanf(""));
      zero_rt_host_matmul(ZERO_F32, ZERO_F32, m, n, k, as.data(), ta ? m : k,
                          ta, bs.data(), tb ? k : n, tb, zeros.data(), n, 1);
      zero_rt_host_matmul(ZERO_F32, ZERO_F32, m, n, k, as.data(), ta ? m : k,
                          ta, bs.data(), tb ? k : n, tb, unread.data(), n, 0);
      EXPECT_EQ(std::memcmp(unread.data(), zeros.data(), zeros.size() * 4), 0)
          << "C unread, transpose a " << ta << ", b " << tb;
      std::vector<uint16_t> narrowZeros(m * n, 0), narrowUnread(m * n, 0x7fc0);
      zero_rt_host_matmul(ZERO_BF16, ZERO_BF16, m, n, k, ah.data(), ta ? m : k,
                          ta, bh.data(), tb ? k : n, tb, narrowZeros.data(), n,
                          1);
      zero_rt_host_matmul(ZERO_BF16, ZERO_BF16, m, n, k, ah.data(), ta ? m : k,
                          ta, bh.data(), tb ? k : n, tb, narrowUnread.data(), n,
                          0);
      EXPECT_EQ(narrowUnread, narrowZeros)
          << "bf16 C unread, transpose a " << ta << ", b " << tb;
    }
  unsetenv("ZERO_HOST_THREADS");
  unsetenv("ZERO_HOST_CHUNK");
  unsetenv("ZERO_HOST_GEMM_ISA");
}

/// Each dot product is accumulated from zero with fused multiply-adds and
/// then added to C, as a GPU GEMM does; the loop nest of linalg.matmul adds
/// each rounded product to C in turn, and gets other results.
TEST(HostMatmul, SumsInAGpuGemmsOrder) {
  // x * x = 1 + 2^-11 + 2^-24 is no float: rounded, the 2^-24 is lost.
  float x = 1.0f + 0x1p-12f;
  std::vector<float> a = {-1.0f, x}, b = {1.0f, x}, c = {0.0f};
  zero_rt_host_matmul(ZERO_F32, ZERO_F32, 1, 1, 2, a.data(), 2, 0, b.data(), 1,
                      0, c.data(), 1, 1);
  // fma(x, x, -1) keeps it; the loop nest's -1 + round(x * x) is 2^-11.
  EXPECT_EQ(c[0], 0x1p-11f + 0x1p-24f);
  // C is added last: 2^53 + (1 + 1) in f64, where the loop nest's
  // (2^53 + 1) + 1 rounds to 2^53 twice.
  std::vector<double> a64 = {1.0, 1.0}, b64 = {1.0, 1.0}, c64 = {0x1p53};
  zero_rt_host_matmul(ZERO_F64, ZERO_F64, 1, 1, 2, a64.data(), 2, 0, b64.data(),
                      1, 0, c64.data(), 1, 1);
  EXPECT_EQ(c64[0], 0x1p53 + 2.0);
  // accumulate 0: C is not read, and the sum is added to zero.
  c64 = {std::nan("")};
  zero_rt_host_matmul(ZERO_F64, ZERO_F64, 1, 1, 2, a64.data(), 2, 0, b64.data(),
                      1, 0, c64.data(), 1, 0);
  EXPECT_EQ(c64[0], 2.0);
  // A sum of -0 (a product below the smallest float, rounded to -0 from
  // the negative side) plus zero is +0, as a C of zeros gives, not the
  // sum's -0.
  std::vector<float> tiny = {-0x1p-100f}, small = {0x1p-100f}, d = {1.0f};
  zero_rt_host_matmul(ZERO_F32, ZERO_F32, 1, 1, 1, tiny.data(), 1, 0,
                      small.data(), 1, 0, d.data(), 1, 0);
  EXPECT_EQ(d[0], 0.0f);
  EXPECT_FALSE(std::signbit(d[0]));
}

/// bf16 inputs accumulate in f32 into an f32 output, as cuBLAS's
/// CUBLAS_COMPUTE_32F does.
TEST(HostMatmul, Bf16IntoF32) {
  using zero::rt::floatToBf16; // exact for these values
  std::vector<uint16_t> a = {floatToBf16(1.5f), floatToBf16(-2.0f)};
  std::vector<uint16_t> b = {floatToBf16(4.0f), floatToBf16(0.25f)};
  std::vector<float> c = {1.0f};
  zero_rt_host_matmul(ZERO_BF16, ZERO_F32, 1, 1, 2, a.data(), 2, 0, b.data(), 1,
                      0, c.data(), 1, 1);
  EXPECT_EQ(c[0], 1.0f + (6.0f - 0.5f));
}

/// Dtypes with no GEMM fail the bound rank's world with the call's shape.
TEST(HostMatmul, UnsupportedDtypesFailTheWorld) {
  LocalWorld world(1);
  world.run([](zero_rank *, int32_t) {
    int32_t a = 1, b = 1, c = 0;
    zero_rt_host_matmul(ZERO_I32, ZERO_I32, 1, 1, 1, &a, 1, 0, &b, 1, 0, &c, 1,
                        1);
  });
  EXPECT_NE(world.error().find("zero_rt_host_matmul (1x1x1): no GEMM for "
                               "dtypes 4 -> 4"),
            std::string::npos)
      << world.error();
}

} // namespace

namespace {
/// A rank-2 memref descriptor over `data` (allocated, aligned, offset,
/// sizes, strides), passed as MLIR's unranked memref.
struct Descriptor2D {
  float *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};
struct Unranked {
  int64_t rank;
  void *descriptor;
};
} // namespace

TEST(MemRefCopy, DenseRowsIntoAStridedBucket) {
  // Two rows of 3 into columns 2..4 of a 2x6 buffer (a bucket member).
  std::vector<float> from = {1, 2, 3, 4, 5, 6}, to(12, 0);
  Descriptor2D src{from.data(), from.data(), 0, {2, 3}, {3, 1}};
  Descriptor2D dst{to.data(), to.data(), 2, {2, 3}, {6, 1}};
  Unranked a{2, &src}, b{2, &dst};
  zero_rt_memref_copy(sizeof(float), &a, &b);
  EXPECT_EQ(to, (std::vector<float>{0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 0}));
}

TEST(MemRefCopy, TransposedElementByElement) {
  // A 2x3 into the transpose of a 3x2 buffer: no dimension is dense.
  std::vector<float> from = {1, 2, 3, 4, 5, 6}, to(6, 0);
  Descriptor2D src{from.data(), from.data(), 0, {2, 3}, {3, 1}};
  Descriptor2D dst{to.data(), to.data(), 0, {2, 3}, {1, 2}};
  Unranked a{2, &src}, b{2, &dst};
  zero_rt_memref_copy(sizeof(float), &a, &b);
  EXPECT_EQ(to, (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

namespace {
/// Adds one to each element of its range: a chunk of a host loop.
struct CountedRange {
  std::vector<std::atomic<int>> visits;
  std::atomic<int> chunks{0};
  explicit CountedRange(size_t n) : visits(n) {}
  static void task(void *context, int64_t begin, int64_t end) {
    auto *self = static_cast<CountedRange *>(context);
    ++self->chunks;
    for (int64_t i = begin; i < end; ++i)
      ++self->visits[i];
  }
};
} // namespace

TEST(HostParallel, EveryIterationRunsOnceOnEveryRankAtOnce) {
  // Three chunks a call (ZERO_HOST_THREADS), of at least one iteration, on
  // four ranks calling together: the pool's threads and the callers share
  // the chunks, and every iteration of every call runs exactly once.
  setenv("ZERO_HOST_THREADS", "3", 1);
  setenv("ZERO_HOST_CHUNK", "1", 1);
  LocalWorld world(4);
  std::vector<std::unique_ptr<CountedRange>> ranges;
  for (int i = 0; i < 4; ++i)
    ranges.push_back(std::make_unique<CountedRange>(1000 + i));
  world.run([&](zero_rank *, int32_t id) {
    CountedRange &range = *ranges[id];
    for (int call = 0; call < 20; ++call)
      zero_rt_parallel_for(CountedRange::task, &range,
                           static_cast<int64_t>(range.visits.size()), 1);
  });
  unsetenv("ZERO_HOST_THREADS");
  unsetenv("ZERO_HOST_CHUNK");
  for (const auto &range : ranges) {
    EXPECT_EQ(range->chunks.load(), 20 * 3);
    for (const std::atomic<int> &visits : range->visits)
      ASSERT_EQ(visits.load(), 20);
  }
}

namespace {
/// A queued task's context: where it writes, and what it saw.
struct QueuedStep {
  std::vector<int> *log;
  int value;
  static void task(void *context, int64_t begin, int64_t end) {
    auto *step = static_cast<QueuedStep *>(context);
    for (int64_t i = begin; i < end; ++i)
      if (i == 0)
        step->log->push_back(step->value + (zero_bound_rank() ? 1000 : 0));
  }
};
} // namespace

TEST(HostQueue, RunsInOrderBesideTheRankAndJoins) {
  // Each rank queues tasks and copies: they run in the order queued, on the
  // queue's thread with the rank bound, from a copy of the context (the
  // caller's slot changes at once), and the join waits for all of them.
  LocalWorld world(3);
  std::vector<std::vector<int>> logs(3);
  world.run([&](zero_rank *, int32_t id) {
    std::vector<int> &log = logs[id];
    std::vector<int> source(64, id), target(64, -1);
    for (int i = 0; i < 50; ++i) {
      QueuedStep step{&log, i};
      zero_rt_host_queue_fence(); // no GPU stream: nothing to wait for
      zero_rt_host_queue_for(QueuedStep::task, &step, sizeof step, 1);
      step.value = -1;
    }
    zero_rt_host_queue_copy(target.data(), source.data(),
                            static_cast<int64_t>(sizeof(int) * 64));
    zero_rt_host_queue_join();
    EXPECT_EQ(target, source);
  });
  for (const std::vector<int> &log : logs) {
    ASSERT_EQ(log.size(), 50u);
    for (int i = 0; i < 50; ++i)
      EXPECT_EQ(log[i], 1000 + i);
  }
}

namespace {
/// A queued task that holds the queue until it is let go (or 20 s pass).
struct Held {
  std::atomic<bool> *go, *ran;
  static void task(void *context, int64_t, int64_t) {
    auto *held = static_cast<Held *>(context);
    for (int i = 0; i < 20000 && !held->go->load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    held->ran->store(true);
  }
};
} // namespace

TEST(HostQueue, WaitsForTheWorkATicketCounts) {
  // A ticket after the first copy: the wait for it returns while the task
  // queued after it still holds the queue, and the join waits for that too.
  LocalWorld world(2);
  world.run([&](zero_rank *, int32_t id) {
    std::vector<int> source(16, id + 1), target(16, 0);
    std::atomic<bool> go{false}, ran{false};
    Held held{&go, &ran};
    zero_rt_host_queue_copy(target.data(), source.data(),
                            static_cast<int64_t>(sizeof(int) * 16));
    int64_t ticket = zero_rt_host_queue_mark();
    zero_rt_host_queue_for(Held::task, &held, sizeof held, 1);
    EXPECT_EQ(zero_rt_host_queue_mark(), ticket + 1);
    zero_rt_host_queue_wait(ticket);
    EXPECT_EQ(target, source);
    EXPECT_FALSE(ran.load());
    go.store(true);
    zero_rt_host_queue_join();
    EXPECT_TRUE(ran.load());
  });
}

TEST(HostQueue, StagingWaitsForTheQueuesFreesWithinItsBudget) {
  // A budget of 1000 bytes a rank. The first 800-byte staging buffer's free
  // is queued behind a task that holds the queue: the rank's next 800 bytes
  // wait until the queue has run that free, and then take the same buffer.
  // With no free of its queue to wait for, a rank takes staging beyond its
  // budget at once, and a buffer larger than the budget too.
  setenv("ZERO_STAGING_BYTES", "1000", 1);
  LocalWorld world(2);
  world.run([&](zero_rank *, int32_t) {
    std::atomic<bool> go{false}, ran{false};
    Held held{&go, &ran};
    void *first = zero_rt_host_alloc_staging(800);
    zero_rt_host_queue_for(Held::task, &held, sizeof held, 1);
    zero_rt_host_queue_free_staging(first);
    std::thread letGo([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      go.store(true);
    });
    void *second = zero_rt_host_alloc_staging(800);
    EXPECT_TRUE(ran.load());  // it waited for the queue's free
    EXPECT_EQ(second, first); // and took the buffer the queue freed
    void *third = zero_rt_host_alloc_staging(800); // no free to wait for
    void *large = zero_rt_host_alloc_staging(5000);
    EXPECT_NE(third, second);
    for (void *buffer : {second, third, large})
      zero_rt_host_queue_free_staging(buffer);
    zero_rt_host_queue_join();
    letGo.join();
  });
  unsetenv("ZERO_STAGING_BYTES");
}

TEST(HostQueue, ReleasingHostMemoryReturnsTheKeptStaging) {
  // A staging buffer the queue freed goes back to the rank's arena: taking
  // one of its size again reaches no allocator. zero_host_memory_release
  // (which an allocation that failed calls before it tries again) returns
  // the arena, nothing in it in use, so the next one is a new allocation.
  LocalWorld world(1);
  world.run([&](zero_rank *rank, int32_t) {
    auto allocations = [&] {
      zero_counters counters;
      zero_rank_counters(rank, &counters);
      return counters.system_allocations;
    };
    void *first = zero_rt_host_alloc_staging(4096);
    zero_rt_host_queue_free_staging(first);
    zero_rt_host_queue_join();
    uint64_t before = allocations();
    void *kept = zero_rt_host_alloc_staging(4096);
    EXPECT_EQ(kept, first);
    EXPECT_EQ(allocations(), before);
    zero_rt_host_queue_free_staging(kept);
    zero_rt_host_queue_join();
    zero_host_memory_release();
    void *fresh = zero_rt_host_alloc_staging(4096);
    EXPECT_EQ(allocations(), before + 1);
    zero_rt_host_queue_free_staging(fresh);
    zero_rt_host_queue_join();
  });
}

namespace {
/// Staging from an allocator of its own (as the CUDA backend's pinned
/// memory is), counting what goes back to it.
std::atomic<int> ownReleased{0};
void *ownAllocate(int64_t bytes) { return std::malloc(size_t(bytes)); }
void ownRelease(void *pointer) {
  ++ownReleased;
  std::free(pointer);
}
} // namespace

TEST(HostQueue, KeptStagingGoesBackToItsOwnAllocator) {
  // The pinned staging an allocation of pinned memory that failed returns
  // is the CUDA backend's alone: a rank has an arena for each allocator,
  // and releasing those of one release function leaves the others.
  LocalWorld world(1);
  world.run([&](zero_rank *, int32_t) {
    void *own = zero::rt::takeStaging(2048, ownAllocate, ownRelease);
    void *host = zero_rt_host_alloc_staging(2048);
    zero_rt_host_queue_free_staging(own);
    zero_rt_host_queue_free_staging(host);
    zero_rt_host_queue_join();
    zero_host_memory_release(); // the host's kept staging only
    EXPECT_EQ(ownReleased.load(), 0);
    zero::rt::releaseIdleStaging(ownRelease);
    EXPECT_EQ(ownReleased.load(), 1);
    zero::rt::releaseIdleStaging(ownRelease); // nothing kept any more
    EXPECT_EQ(ownReleased.load(), 1);
  });
}

namespace {
/// out[i] = 2 * in[i] into a staging buffer that the queue takes (its
/// address in the context's second slot), noting that address.
struct DoubledIntoStaging {
  const float *in;
  float *out;
  float **seen;
  static void task(void *context, int64_t begin, int64_t end) {
    auto *d = static_cast<DoubledIntoStaging *>(context);
    *d->seen = d->out;
    for (int64_t i = begin; i < end; ++i)
      d->out[i] = 2 * d->in[i];
  }
};
} // namespace

TEST(HostQueue, TakesTheStagingOfAnUpdateWhenItRunsIt) {
  // Two updates, each writing 200 floats into a staging buffer that only
  // its copy out reads, queued behind a task that holds the queue, with a
  // budget of 1000 bytes a rank. The rank takes neither buffer (the table
  // and the context hold 0 for it), so it queues both at once with nothing
  // to wait for; the queue takes each when it runs that update, and the
  // second reuses the first's, given back once its copy out is done.
  setenv("ZERO_STAGING_BYTES", "1000", 1);
  LocalWorld world(1);
  world.run([&](zero_rank *, int32_t) {
    std::atomic<bool> go{false}, ran{false};
    Held held{&go, &ran};
    zero_rt_host_queue_for(Held::task, &held, sizeof held, 1);
    std::vector<float> in(200), first(200, -1), second(200, -1);
    for (int i = 0; i < 200; ++i)
      in[i] = float(i);
    float *seen[2] = {nullptr, nullptr};
    for (int k = 0; k < 2; ++k) {
      DoubledIntoStaging context{in.data(), nullptr, &seen[k]};
      int64_t copies[] = {
          reinterpret_cast<int64_t>((k ? second : first).data()), 0, 4};
      int64_t staged[] = {800, /*context slot=*/1, /*copy=*/0};
      zero_rt_host_queue_update(DoubledIntoStaging::task, &context,
                                sizeof context, 200, copies, 0, 1,
                                /*chunk_bytes=*/0, staged, 1);
    }
    EXPECT_FALSE(ran.load()); // neither call waited for the queue
    go.store(true);
    zero_rt_host_queue_join();
    for (int i = 0; i < 200; ++i) {
      ASSERT_EQ(first[i], 2.0f * i) << i;
      ASSERT_EQ(second[i], 2.0f * i) << i;
    }
    EXPECT_NE(seen[0], nullptr);
    EXPECT_EQ(seen[1], seen[0]);
    EXPECT_FALSE(zero::rt::isStaging(seen[0])); // given back
  });
  unsetenv("ZERO_STAGING_BYTES");
  EXPECT_EQ(world.error(), "");
}

TEST(HostQueue, TakesStagingWithoutWaitingForItsOwnFrees) {
  // The rank holds 800 bytes of staging, within a budget of 1000, and
  // queues an update that stages 800 more, then the free of its own
  // buffer. The queue takes the update's staging before it reaches that
  // free, past the budget: were it to wait for the rank's pending free as
  // the rank does, it would wait for itself. The watchdog fails the test
  // rather than let it hang.
  setenv("ZERO_STAGING_BYTES", "1000", 1);
  LocalWorld world(1);
  std::atomic<bool> done{false};
  std::thread watchdog([&] {
    for (int i = 0; i < 1000 && !done.load(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (!done.load()) {
      std::fprintf(stderr, "the queue waited for its own staging free\n");
      std::abort();
    }
  });
  world.run([&](zero_rank *, int32_t) {
    void *held = zero_rt_host_alloc_staging(800);
    std::vector<float> in(200), out(200, -1);
    for (int i = 0; i < 200; ++i)
      in[i] = float(i);
    float *seen = nullptr;
    DoubledIntoStaging context{in.data(), nullptr, &seen};
    int64_t copies[] = {reinterpret_cast<int64_t>(out.data()), 0, 4};
    int64_t staged[] = {800, /*context slot=*/1, /*copy=*/0};
    zero_rt_host_queue_update(DoubledIntoStaging::task, &context,
                              sizeof context, 200, copies, 0, 1,
                              /*chunk_bytes=*/0, staged, 1);
    zero_rt_host_queue_free_staging(held);
    zero_rt_host_queue_join();
    EXPECT_NE(seen, held);
    for (int i = 0; i < 200; ++i)
      ASSERT_EQ(out[i], 2.0f * i) << i;
  });
  done.store(true);
  watchdog.join();
  unsetenv("ZERO_STAGING_BYTES");
  EXPECT_EQ(world.error(), "");
}

namespace {
/// An allocator of staging that counts what it allocates, aligned as
/// CUDA's.
std::atomic<int> countedAllocations{0};
void *countedAllocate(int64_t bytes) {
  ++countedAllocations;
  return std::aligned_alloc(256, (size_t(bytes) + 255) / 256 * 256);
}
/// An update on the host queue: the rank queues the next ones meanwhile.
struct Updating {
  static void task(void *, int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
  }
};
} // namespace

TEST(HostQueue, StagingOfMixedSizesStopsAllocatingOnceItsArenaHasGrown) {
  // A step's staging of many sizes, 119 KiB in all, within a budget of 64 KiB,
  // each freed after an update on the queue that the rank does not wait
  // for: the rank runs ahead until it waits for the queue's frees, and once
  // its arena has grown to
  // what it holds at once (the first steps), its steps reach no allocator.
  // The buffers it holds at once never overlap, and each is aligned as a
  // CUDA allocation.
  setenv("ZERO_STAGING_BYTES", "65536", 1);
  // GPT-2 small's gradient shards at N = 1 over 4096, the order of its
  // backward pass: twelve layers, then the position and token embeddings.
  std::vector<int64_t> sizes;
  for (int layer = 0; layer < 12; ++layer)
    for (int64_t bytes : {2304, 3, 2304, 1, 1, 576, 1, 1728, 2, 1, 1})
      sizes.push_back(bytes);
  sizes.push_back(768);
  sizes.push_back(37694);
  LocalWorld world(2);
  world.run([&](zero_rank *, int32_t) {
    for (int step = 0; step < 6; ++step) {
      if (step == 3)
        countedAllocations = 0;
      for (int64_t bytes : sizes) {
        auto *buffer = static_cast<unsigned char *>(
            zero::rt::takeStaging(bytes, countedAllocate, std::free));
        EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % 256, 0u);
        std::memset(buffer, 0xa5, size_t(bytes));
        zero_rt_host_queue_for(Updating::task, nullptr, 0, 1);
        zero_rt_host_queue_free_staging(buffer);
      }
      zero_rt_host_queue_join();
    }
    std::vector<std::pair<char *, int64_t>> together;
    for (int64_t bytes : {int64_t(9000), int64_t(700), int64_t(20000)})
      together.push_back({static_cast<char *>(zero::rt::takeStaging(
                              bytes, countedAllocate, std::free)),
                          bytes});
    for (size_t i = 0; i < together.size(); ++i)
      for (size_t j = i + 1; j < together.size(); ++j)
        EXPECT_TRUE(
            together[i].first + together[i].second <= together[j].first ||
            together[j].first + together[j].second <= together[i].first);
    for (auto [buffer, bytes] : together)
      zero_rt_host_queue_free_staging(buffer);
    zero_rt_host_queue_join();
  });
  EXPECT_EQ(countedAllocations.load(), 0);
  unsetenv("ZERO_STAGING_BYTES");
}

TEST(HostQueueDeathTest, TheRankCannotFreeStaging) {
  // Staging goes back only through the queue: zero_rt_free of a staging
  // buffer (the arena's first, one outside the arena while it grows, or one
  // carved after the first) ends the process with a message rather than
  // handing it to the rank's pool.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  for (int which = 0; which < 3; ++which)
    EXPECT_EXIT(
        {
          void *first = zero_rt_host_alloc_staging(512);
          void *outside = zero_rt_host_alloc_staging(512);
          if (which < 2)
            zero_rt_free(which == 0 ? first : outside);
          zero_rt_host_queue_free_staging(first);
          zero_rt_host_queue_free_staging(outside);
          zero_rt_host_queue_join();
          // The arena has grown to hold both: the second is carved.
          void *again = zero_rt_host_alloc_staging(512);
          void *carved = zero_rt_host_alloc_staging(512);
          if (carved == static_cast<char *>(again) + 512)
            zero_rt_free(carved);
        },
        ::testing::ExitedWithCode(1),
        "zero_rt_free of a staging buffer, which only the host queue frees");
}

namespace {
/// A pipelined update's buffers: staged in, computed, staged out.
struct Doubling {
  float *in, *out;
  static void task(void *context, int64_t begin, int64_t end) {
    auto *buffers = static_cast<Doubling *>(context);
    for (int64_t i = begin; i < end; ++i) {
      buffers->out[2 * i] = 2 * buffers->in[i];
      buffers->out[2 * i + 1] = -buffers->in[i];
    }
  }
};
} // namespace

TEST(HostQueue, PipelinesAnUpdateInChunks) {
  // 1000 iterations, one float in and two out each, in chunks of 3
  // iterations (36 bytes of copies: ZERO_HOST_QUEUE_CHUNK): every chunk's
  // copies in come before its iterations, its copies out after, at the
  // chunk's offset in each buffer.
  setenv("ZERO_HOST_QUEUE_CHUNK", "36", 1);
  std::vector<float> source(1000), stagedIn(1000, -7), stagedOut(2000, -7),
      target(2000, -7);
  for (int i = 0; i < 1000; ++i)
    source[i] = float(i);
  Doubling buffers{stagedIn.data(), stagedOut.data()};
  int64_t copies[] = {reinterpret_cast<int64_t>(stagedIn.data()),
                      reinterpret_cast<int64_t>(source.data()),
                      4,
                      reinterpret_cast<int64_t>(target.data()),
                      reinterpret_cast<int64_t>(stagedOut.data()),
                      8};
  zero_rt_host_queue_update(Doubling::task, &buffers, sizeof buffers, 1000,
                            copies, 1, 1, /*chunk_bytes=*/0, nullptr, 0);
  zero_rt_host_queue_join();
  unsetenv("ZERO_HOST_QUEUE_CHUNK");
  for (int i = 0; i < 1000; ++i) {
    ASSERT_EQ(target[2 * i], 2.0f * i) << i;
    ASSERT_EQ(target[2 * i + 1], -float(i)) << i;
  }
}

namespace {
/// Counts the calls of its task (the queue runs a copy of the context, so
/// the count lives outside it): with one host thread, one a chunk.
struct CountedCalls {
  int64_t *calls;
  static void task(void *context, int64_t, int64_t) {
    ++*static_cast<CountedCalls *>(context)->calls;
  }
};

/// The chunks zero_rt_host_queue_update runs 1000 iterations of 12 bytes
/// of copies in, given `chunkBytes`.
int64_t chunksOfAnUpdate(int64_t chunkBytes) {
  std::vector<float> from(3000), to(3000);
  int64_t copies[] = {reinterpret_cast<int64_t>(to.data()),
                      reinterpret_cast<int64_t>(from.data()), 12};
  int64_t calls = 0;
  CountedCalls counted{&calls};
  zero_rt_host_queue_update(CountedCalls::task, &counted, sizeof counted, 1000,
                            copies, 1, 0, chunkBytes, nullptr, 0);
  zero_rt_host_queue_join();
  return calls;
}
} // namespace

TEST(HostQueue, ChunksAsTheCompilerChoseUnlessTheEnvironmentSays) {
  setenv("ZERO_HOST_THREADS", "1", 1);
  // 0: the whole update; 120 bytes: 10 iterations a chunk; the
  // environment overrides both.
  EXPECT_EQ(chunksOfAnUpdate(0), 1);
  EXPECT_EQ(chunksOfAnUpdate(120), 100);
  setenv("ZERO_HOST_QUEUE_CHUNK", "1200", 1);
  EXPECT_EQ(chunksOfAnUpdate(120), 10);
  EXPECT_EQ(chunksOfAnUpdate(0), 10);
  unsetenv("ZERO_HOST_QUEUE_CHUNK");
  unsetenv("ZERO_HOST_THREADS");
}

TEST(HostQueue, AStagedBufferOutsideTheContextOrTheCopiesOutFailsTheWorld) {
  // A staged triple must name a slot of the context and a copy out: here
  // copy 0 is a copy in. The world fails with what was wrong, and nothing
  // is queued.
  LocalWorld world(1);
  world.run([&](zero_rank *, int32_t) {
    std::vector<float> from(4), to(4);
    int64_t calls = 0;
    CountedCalls counted{&calls};
    int64_t copies[] = {reinterpret_cast<int64_t>(to.data()),
                        reinterpret_cast<int64_t>(from.data()), 4};
    int64_t staged[] = {16, 0, 0};
    zero_rt_host_queue_update(CountedCalls::task, &counted, sizeof counted, 4,
                              copies, 1, 0, /*chunk_bytes=*/0, staged, 1);
    zero_rt_host_queue_join();
    EXPECT_EQ(calls, 0);
  });
  EXPECT_NE(world.error().find("zero_rt_host_queue_update: staged buffer 0 "
                               "(16 bytes, context slot 0, copy 0) is not a "
                               "slot of the 8-byte context and a copy out of "
                               "1 + 0"),
            std::string::npos)
      << world.error();
}

namespace {
/// out[i] = in[i] * scale[0], over staging buffers: the scale comes whole.
struct Scaled {
  const float *in, *scale;
  float *out;
  static void task(void *context, int64_t begin, int64_t end) {
    auto *s = static_cast<Scaled *>(context);
    for (int64_t i = begin; i < end; ++i)
      s->out[i] = s->in[i] * s->scale[0];
  }
};
} // namespace

TEST(HostQueue, CopiesWholeWhatDoesNotSplitByIterations) {
  // A triple with negative bytes is copied whole: the scale (4 bytes) in
  // before the first chunk, and the staged scale out after the last (its
  // bytes back where another reads them), around 10 iterations in chunks
  // of 2 (16 bytes of copies a chunk).
  std::vector<float> source(10), stagedIn(10), stagedOut(10), target(10, -1);
  for (int i = 0; i < 10; ++i)
    source[i] = float(i);
  float scale = 3, stagedScale = 0, scaleBack = 0;
  Scaled context{stagedIn.data(), &stagedScale, stagedOut.data()};
  auto at = [](const void *p) { return reinterpret_cast<int64_t>(p); };
  int64_t copies[] = {at(stagedIn.data()), at(source.data()),    4,
                      at(&stagedScale),    at(&scale),           -4,
                      at(target.data()),   at(stagedOut.data()), 4,
                      at(&scaleBack),      at(&stagedScale),     -4};
  zero_rt_host_queue_update(Scaled::task, &context, sizeof context, 10, copies,
                            2, 2, /*chunk_bytes=*/16, nullptr, 0);
  zero_rt_host_queue_join();
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(target[i], 3.0f * i) << i;
  EXPECT_EQ(scaleBack, 3.0f);
  // With only whole copies, the update is one chunk of every iteration.
  setenv("ZERO_HOST_THREADS", "1", 1);
  int64_t calls = 0;
  CountedCalls counted{&calls};
  float copied = 0;
  int64_t whole[] = {at(&copied), at(&scale), -4};
  zero_rt_host_queue_update(CountedCalls::task, &counted, sizeof counted, 1000,
                            whole, 1, 0, /*chunk_bytes=*/0, nullptr, 0);
  zero_rt_host_queue_join();
  unsetenv("ZERO_HOST_THREADS");
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(copied, 3.0f);
}

TEST(HostQueue, StartsTheCopiesInAheadWhereTheEngineIsGiven) {
  // A GPU's update (zero_rt_gpu_queue_update): the calling thread starts
  // every chunk's copies in at once, with a mark after each, and the queue
  // waits for a chunk's mark before its task. 10 iterations of 4 bytes in
  // chunks of 3 iterations (12 bytes): 4 chunks.
  setenv("ZERO_HOST_THREADS", "1", 1);
  std::vector<float> from(10), to(10, -1);
  for (int i = 0; i < 10; ++i)
    from[i] = float(i);
  std::mutex mutex;
  std::vector<std::string> log;
  auto note = [&](std::string line) {
    std::lock_guard<std::mutex> lock(mutex);
    log.push_back(std::move(line));
  };
  std::thread::id caller = std::this_thread::get_id();
  int64_t marks = 0;
  zero::rt::CopyEngine ahead{
      [&](void *target, const void *source, int64_t bytes) {
        note(std::string("in ") + std::to_string(bytes) +
             (std::this_thread::get_id() == caller ? " by the caller"
                                                   : " by the queue"));
        std::memcpy(target, source, size_t(bytes));
        return true;
      },
      [&] { return marks++; },
      [&](int64_t mark) {
        note("wait " + std::to_string(mark));
        return true;
      }};
  int64_t calls = 0;
  CountedCalls counted{&calls};
  int64_t copies[] = {reinterpret_cast<int64_t>(to.data()),
                      reinterpret_cast<int64_t>(from.data()), 4};
  zero::rt::enqueueUpdate(
      CountedCalls::task, &counted, sizeof counted, 10, copies, 1, 0, 12,
      nullptr, 0, {zero::rt::allocateHostBuffer, zero::rt::releaseHostBuffer},
      [] {
        return zero::rt::CopyEngine{
            [](void *, const void *, int64_t) { return true; },
            [] { return int64_t(0); }, [](int64_t) { return true; }};
      },
      ahead);
  // Every copy in has started when the call returns.
  {
    std::lock_guard<std::mutex> lock(mutex);
    EXPECT_EQ(std::vector<std::string>(log.begin(), log.begin() + 4),
              (std::vector<std::string>{
                  "in 12 by the caller", "in 12 by the caller",
                  "in 12 by the caller", "in 4 by the caller"}));
  }
  zero_rt_host_queue_join();
  unsetenv("ZERO_HOST_THREADS");
  EXPECT_EQ(std::vector<std::string>(log.begin() + 4, log.end()),
            (std::vector<std::string>{"wait 0", "wait 1", "wait 2", "wait 3"}));
  EXPECT_EQ(calls, 4);
  EXPECT_EQ(to, from);
}

TEST(BufferPool, TakesTheSmallestKeptBufferWithinAnEighthMore) {
  // Addresses only: the pool never touches its buffers.
  char a, b, c;
  zero::rt::BufferPool<bool> pool;
  for (auto [buffer, size] :
       {std::pair<char *, size_t>{&a, 1000}, {&b, 1100}, {&c, 2000}}) {
    pool.add(buffer, size, false);
    ASSERT_TRUE(pool.put(buffer));
  }
  EXPECT_EQ(pool.take(true, 1000), nullptr);  // another kind
  EXPECT_EQ(pool.take(false, 1000), &a);      // exact
  EXPECT_EQ(pool.take(false, 980), &b);       // 120 more, within 122
  EXPECT_EQ(pool.take(false, 1000), nullptr); // 2000 is twice that
  EXPECT_EQ(pool.take(false, 1800), &c);      // 200 more, within 225
  EXPECT_EQ(pool.take(false, 1), nullptr);
  EXPECT_FALSE(pool.put(&pool)); // not one of its allocations
  // From 16 MiB, whole 2 MiB: two buckets a few bytes apart share a size.
  using Pool = zero::rt::BufferPool<bool>;
  EXPECT_EQ(Pool::sizeClass(1000), 1000u);
  EXPECT_EQ(Pool::sizeClass(size_t(16) << 20), size_t(16) << 20);
  EXPECT_EQ(Pool::sizeClass((size_t(16) << 20) + 1), size_t(18) << 20);
  EXPECT_EQ(Pool::sizeClass(103956544), Pool::sizeClass(103959616));
}

TEST(HostMemory, ABufferFreedServesTheNextOfNearlyItsSize) {
  // A step's buckets differ by a few members: one allocation serves them.
  constexpr int64_t bytes = (3 << 20) + 4096;
  void *bucket = zero_rt_alloc(bytes);
  zero_rt_free(bucket);
  void *smaller = zero_rt_alloc(bytes - 64 * 1024);
  EXPECT_EQ(smaller, bucket);
  // A buffer a quarter its size is another: this one would waste 3/4.
  void *quarter = zero_rt_alloc(bytes / 4);
  EXPECT_NE(quarter, bucket);
  zero_rt_free(quarter);
  zero_rt_free(smaller);
  // From 16 MiB, the next bucket a few bytes larger takes it too: both are
  // allocated in whole 2 MiB.
  constexpr int64_t large = (20 << 20) + 100;
  void *first = zero_rt_alloc(large);
  zero_rt_free(first);
  void *next = zero_rt_alloc(large + 3000);
  EXPECT_EQ(next, first);
  zero_rt_free(next);
}

TEST(HostQueue, FreesABufferOnceTheWorkBeforeItIsDone) {
  // zero_rt_host_queue_free: the queued task still reads the buffer; the
  // free follows it, and the buffer goes back to the pool, whose next
  // allocation of its size takes it.
  constexpr int64_t bytes = 1 << 20;
  auto *buffer = static_cast<float *>(zero_rt_alloc(bytes));
  for (int64_t i = 0; i < bytes / 4; ++i)
    buffer[i] = 1.0f;
  struct Sum {
    const float *buffer;
    double *total;
    static void task(void *context, int64_t begin, int64_t end) {
      auto *sum = static_cast<Sum *>(context);
      // Slow enough that the free, if it did not wait, would come first.
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      for (int64_t i = begin; i < end; ++i)
        *sum->total += sum->buffer[i];
    }
  };
  double total = 0;
  Sum sum{buffer, &total};
  setenv("ZERO_HOST_THREADS", "1", 1);
  zero_rt_host_queue_for(Sum::task, &sum, sizeof sum, bytes / 4);
  zero_rt_host_queue_free(buffer);
  // While the task runs, the buffer is not the pool's: a buffer of its size
  // allocated now is another, and writing it changes nothing the task
  // reads.
  auto *other = static_cast<float *>(zero_rt_alloc(bytes));
  std::memset(other, 0, bytes);
  zero_rt_host_queue_join();
  unsetenv("ZERO_HOST_THREADS");
  EXPECT_EQ(total, double(bytes / 4));
  // Once it has run, the buffer is.
  EXPECT_EQ(zero_rt_alloc(bytes), static_cast<void *>(buffer));
  zero_rt_free(buffer);
  zero_rt_free(other);
}

TEST(HostParallel, ChunksCountTheElementsOfARow) {
  // 100 rows of 1000 elements are 100000 elements: 4 chunks of at least
  // 4096 elements on 4 threads; as 100 elements, one.
  setenv("ZERO_HOST_THREADS", "4", 1);
  CountedRange rows(100);
  zero_rt_parallel_for(CountedRange::task, &rows, 100, 1000);
  CountedRange elements(100);
  zero_rt_parallel_for(CountedRange::task, &elements, 100, 1);
  unsetenv("ZERO_HOST_THREADS");
  EXPECT_EQ(rows.chunks.load(), 4);
  EXPECT_EQ(elements.chunks.load(), 1);
  for (const CountedRange *range : {&rows, &elements})
    for (const std::atomic<int> &visits : range->visits)
      EXPECT_EQ(visits.load(), 1);
}

TEST(HostParallel, ASmallLoopRunsOnTheCaller) {
  // Fewer iterations than a chunk's least (4096 by default): one chunk.
  CountedRange range(100);
  zero_rt_parallel_for(CountedRange::task, &range, 100, 1);
  EXPECT_EQ(range.chunks.load(), 1);
  zero_rt_parallel_for(CountedRange::task, &range, 0, 1);
  EXPECT_EQ(range.chunks.load(), 1);
  for (const std::atomic<int> &visits : range.visits)
    EXPECT_EQ(visits.load(), 1);
}
