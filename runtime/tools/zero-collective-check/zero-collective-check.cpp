//===- zero-collective-check.cpp - every collective, checked on a backend -===//
//
// Runs every collective kind and reduction on every dtype, each on its own
// and all of one dtype as one batch (zero_batch_begin/end), on the whole
// world and on both axes of a 2 x N/2 mesh, on the chosen backend, and
// checks every element of every rank's result. On the GPU backends
// (cuda-local, nccl) the buffers are device memory.
//
// The inputs are small integers, so every sum is exact in every dtype and in
// any order of addition: a backend may add in its own order (NCCL's rings)
// and still must give the exact result. A mean is the exact sum divided by
// the group size, within one ulp of the dtype (NCCL's ncclAvg rounds in its
// own way). What is checked is what each backend moves and reduces; the
// bit-exact order of addition is tested elsewhere (the local backend's unit
// tests, cuda-local against local in benchmarks/gpu/check.sh).
//
// Like nccl-tests, it is also what a user with several GPUs runs first:
//   torchrun --nproc-per-node 8 zero-collective-check --backend nccl
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/CommandLine.h"
#include "zero/runtime/Elements.h"
#include "zero/runtime/zero_runtime.h"

#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace zero::rt;

namespace {

struct Kind {
  zero_collective_kind kind;
  zero_reduction reduction;
  const char *name;
};

const Kind kKinds[] = {
    {ZERO_ALL_REDUCE, ZERO_SUM, "all_reduce(sum)"},
    {ZERO_ALL_REDUCE, ZERO_MEAN, "all_reduce(mean)"},
    {ZERO_ALL_REDUCE, ZERO_MAX, "all_reduce(max)"},
    {ZERO_ALL_REDUCE, ZERO_MIN, "all_reduce(min)"},
    {ZERO_REDUCE_SCATTER, ZERO_SUM, "reduce_scatter(sum)"},
    {ZERO_REDUCE_SCATTER, ZERO_MEAN, "reduce_scatter(mean)"},
    {ZERO_ALL_GATHER, ZERO_SUM, "all_gather"},
    {ZERO_ALL_TO_ALL, ZERO_SUM, "all_to_all"},
};

const zero_dtype kDtypes[] = {ZERO_F32, ZERO_BF16, ZERO_F16, ZERO_F64,
                              ZERO_I32, ZERO_I64,  ZERO_I8};
static_assert(std::size(kDtypes) == kNumDtypes, "a dtype is not checked");

bool isFloat(zero_dtype dtype) { return !isIntegerDtype(dtype); }

/// Bits of precision (with the implicit one) of a float dtype.
int precision(zero_dtype dtype) {
  switch (dtype) {
  case ZERO_BF16:
    return 8;
  case ZERO_F16:
    return 11;
  case ZERO_F32:
    return 24;
  default:
    return 53;
  }
}

/// Rank `rank`'s element `i`: a small integer, exact in every dtype.
double inputOf(int32_t rank, int64_t i) {
  return static_cast<double>((rank * 5 + i * 3) % 9) - 4;
}

/// A group of the world: its runtime descriptor, and the calling rank's
/// view of it, worked out here rather than by the runtime's decodeGroup,
/// so that a wrong decoding shows as wrong results.
struct Group {
  std::vector<int64_t> descriptor;
  std::vector<int32_t> members;
  int32_t index = 0;
  std::string name;
};

/// The groups rank `rank` of a world of `n` checks: the whole world, and
/// when n is even and at least 4, both axes of a 2 x n/2 mesh.
std::vector<Group> groupsOf(int32_t rank, int32_t n) {
  std::vector<Group> groups;
  Group world;
  world.descriptor = {1, n, 1, 0};
  for (int32_t r = 0; r < n; ++r)
    world.members.push_back(r);
  world.index = rank;
  world.name = "the world (" + std::to_string(n) + " ranks)";
  groups.push_back(world);
  if (n % 2 != 0 || n < 4)
    return groups;
  int32_t m = n / 2, row = rank / m, column = rank % m;
  Group inRow, inColumn;
  inRow.descriptor = {2, 2, m, 1, 1};
  for (int32_t j = 0; j < m; ++j)
    inRow.members.push_back(row * m + j);
  inRow.index = column;
  inRow.name = "mesh [2x" + std::to_string(m) + "] axis 1";
  inColumn.descriptor = {2, 2, m, 1, 0};
  inColumn.members = {column, m + column};
  inColumn.index = row;
  inColumn.name = "mesh [2x" + std::to_string(m) + "] axis 0";
  groups.push_back(inRow);
  groups.push_back(inColumn);
  return groups;
}

/// What element `i` of the result of `kind` on `group` must be, for the
/// calling rank, with `count` elements in.
double expected(const Kind &kind, const Group &group, int64_t count,
                int64_t i) {
  int64_t n = static_cast<int64_t>(group.members.size());
  if (kind.kind == ZERO_ALL_GATHER)
    return inputOf(group.members[i / count], i % count);
  // Part p of the result is this rank's part of member p's input.
  if (kind.kind == ZERO_ALL_TO_ALL) {
    int64_t part = count / n;
    return inputOf(group.members[i / part], group.index * part + i % part);
  }
  int64_t at =
      kind.kind == ZERO_REDUCE_SCATTER ? group.index * (count / n) + i : i;
  double result = inputOf(group.members[0], at);
  for (int64_t k = 1; k < n; ++k) {
    double v = inputOf(group.members[k], at);
    switch (kind.reduction) {
    case ZERO_SUM:
    case ZERO_MEAN:
      result += v;
      break;
    case ZERO_MAX:
      result = std::max(result, v);
      break;
    case ZERO_MIN:
      result = std::min(result, v);
      break;
    }
  }
  return kind.reduction == ZERO_MEAN ? result / static_cast<double>(n) : result;
}

/// One collective's buffers, on the host or the GPU.
struct Buffers {
  std::vector<char> in, out;
  void *deviceIn = nullptr, *deviceOut = nullptr;
};

struct Checker {
  bool gpu = false;
  int64_t count = 1680;
  std::mutex mutex;
  std::atomic<int64_t> checked{0}, failed{0};

  void report(const std::string &line) {
    std::lock_guard<std::mutex> lock(mutex);
    std::fprintf(stderr, "%s\n", line.c_str());
  }

  int64_t outputCount(const Kind &kind, const Group &group) const {
    int64_t n = static_cast<int64_t>(group.members.size());
    if (kind.kind == ZERO_REDUCE_SCATTER)
      return count / n;
    if (kind.kind == ZERO_ALL_GATHER)
      return count * n;
    return count;
  }

  void prepare(const Kind &kind, const Group &group, zero_dtype dtype,
               int32_t rank, Buffers &b) {
    size_t size = dtypeSize(dtype);
    b.in.assign(count * size, 0);
    b.out.assign(outputCount(kind, group) * size, 0);
    for (int64_t i = 0; i < count; ++i)
      storeElement(dtype, b.in.data(), i, inputOf(rank, i));
    if (!gpu)
      return;
    b.deviceIn = zero_rt_gpu_alloc_device(b.in.size());
    b.deviceOut = zero_rt_gpu_alloc_device(b.out.size());
    zero_gpu_copy_to_device(b.deviceIn, b.in.data(), b.in.size());
    zero_gpu_copy_to_device(b.deviceOut, b.out.data(), b.out.size());
  }

  zero_handle *start(const Kind &kind, const Group &group, zero_dtype dtype,
                     Buffers &b) {
    const void *in = gpu ? b.deviceIn : b.in.data();
    void *out = gpu ? b.deviceOut : b.out.data();
    const int64_t *g = group.descriptor.data();
    switch (kind.kind) {
    case ZERO_ALL_REDUCE:
      return zero_rt_all_reduce_start(in, out, count, dtype, kind.reduction, g);
    case ZERO_REDUCE_SCATTER:
      return zero_rt_reduce_scatter_start(in, out, count, dtype, kind.reduction,
                                          g);
    case ZERO_ALL_TO_ALL:
      return zero_rt_all_to_all_start(in, out, count, dtype, g);
    default:
      return zero_rt_all_gather_start(in, out, count, dtype, g);
    }
  }

  /// Compares the result with what it must be; after the rank's waits (and,
  /// on the GPU, its stream).
  void check(const Kind &kind, const Group &group, zero_dtype dtype,
             int32_t rank, const char *mode, Buffers &b) {
    if (gpu) {
      zero_gpu_copy_to_host(b.out.data(), b.deviceOut, b.out.size());
      zero_rt_gpu_free(b.deviceIn);
      zero_rt_gpu_free(b.deviceOut);
    }
    ++checked;
    int64_t n = outputCount(kind, group);
    for (int64_t i = 0; i < n; ++i) {
      double want = expected(kind, group, count, i);
      double got = loadElement(dtype, b.out.data(), i);
      double tolerance = kind.reduction == ZERO_MEAN && isFloat(dtype)
                             ? std::ldexp(std::fabs(want), 1 - precision(dtype))
                             : 0;
      if (std::fabs(got - want) <= tolerance)
        continue;
      ++failed;
      report("FAIL " + std::string(kind.name) + " " + dtypeName(dtype) + " " +
             mode + " on " + group.name + ": rank " + std::to_string(rank) +
             " element " + std::to_string(i) + ": got " + std::to_string(got) +
             ", expected " + std::to_string(want));
      return;
    }
  }

  /// Every kind and dtype on `group`: each alone, then each dtype's kinds
  /// as one batch.
  void run(int32_t rank, zero_rank *handle, const Group &group) {
    for (zero_dtype dtype : kDtypes)
      for (const Kind &kind : kKinds) {
        if (kind.reduction == ZERO_MEAN && !isFloat(dtype))
          continue; // the runtime refuses an inexact integer mean
        Buffers b;
        prepare(kind, group, dtype, rank, b);
        zero_rt_wait(start(kind, group, dtype, b));
        if (gpu)
          zero_rt_gpu_synchronize();
        check(kind, group, dtype, rank, "alone", b);
      }
    for (zero_dtype dtype : kDtypes) {
      std::vector<const Kind *> kinds;
      for (const Kind &kind : kKinds)
        if (kind.reduction != ZERO_MEAN || isFloat(dtype))
          kinds.push_back(&kind);
      std::vector<Buffers> buffers(kinds.size());
      std::vector<zero_handle *> handles;
      for (size_t k = 0; k < kinds.size(); ++k)
        prepare(*kinds[k], group, dtype, rank, buffers[k]);
      zero_batch_begin(handle);
      for (size_t k = 0; k < kinds.size(); ++k)
        handles.push_back(start(*kinds[k], group, dtype, buffers[k]));
      zero_batch_end(handle);
      for (zero_handle *h : handles)
        zero_rt_wait(h);
      if (gpu)
        zero_rt_gpu_synchronize();
      for (size_t k = 0; k < kinds.size(); ++k)
        check(*kinds[k], group, dtype, rank, "batched", buffers[k]);
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  zero_options options;
  zero_options_init(&options);
  options.ranks = 4;
  Checker checker;
  std::string backend = "local";
  CommandLine commandLine(
      "zero-collective-check", "[options]",
      "Runs every collective (all-reduce sum/mean/max/min, reduce-scatter "
      "sum/mean, all-gather) on every dtype, alone and batched, on the whole "
      "world and on both axes of a 2 x N/2 mesh (N even, at least 4), and "
      "checks every rank's results.");
  commandLine.addOption("backend", "NAME",
                        "local (default), cuda-local, mpi or nccl",
                        textFlag("backend", backend, "a name"));
  commandLine.addOption(
      "ranks", "N", "ranks of a local or cuda-local world (default 4)",
      integerFlag<int32_t>("ranks", options.ranks, 1, "a positive integer"));
  commandLine.addOption(
      "count", "C",
      "elements each rank contributes (default 1680; a multiple of every "
      "group's size)",
      integerFlag<int64_t>("count", checker.count, 1, "a positive integer"));
  commandLine.addOption(
      "timeout", "S", "seconds a rank waits for the others (default 60)",
      numberFlag(
          "timeout", options.timeout_seconds,
          [](double seconds) { return seconds > 0; }, "positive seconds"));
  std::vector<std::string> positionals;
  std::string problem = commandLine.parse(argc, argv, positionals);
  if (problem.empty() && !positionals.empty())
    problem = "unexpected argument '" + positionals[0] + "' (see --help)";
  if (!problem.empty()) {
    std::fprintf(stderr, "zero-collective-check: %s\n", problem.c_str());
    return 2;
  }
  options.backend = backend.c_str();
  checker.gpu = backend == "cuda-local" || backend == "nccl";
  if (checker.gpu) {
    char why[512];
    if (zero_gpu_init(why, sizeof why)) {
      std::fprintf(stderr, "zero-collective-check: %s needs a GPU: %s\n",
                   backend.c_str(), why);
      return 1;
    }
  }
  zero_world *world = nullptr;
  char error[1024];
  if (zero_world_create(&options, &world, error, sizeof error)) {
    std::fprintf(stderr, "zero-collective-check: %s\n", error);
    return 1;
  }
  int32_t n = zero_world_size(world);
  for (int32_t size = 1; size <= n; ++size)
    if (n % size == 0 && checker.count % size != 0) {
      std::fprintf(stderr,
                   "zero-collective-check: --count %lld is not a multiple of "
                   "the group size %d\n",
                   static_cast<long long>(checker.count), size);
      return 2;
    }
  std::vector<std::thread> threads;
  for (int32_t i = 0; i < zero_world_num_local_ranks(world); ++i)
    threads.emplace_back([&, i] {
      zero_rank *rank = zero_world_local_rank(world, i);
      zero_rank_bind(rank);
      int32_t id = zero_rank_id(rank);
      for (const Group &group : groupsOf(id, n))
        checker.run(id, rank, group);
      zero_rank_bind(nullptr);
    });
  for (std::thread &t : threads)
    t.join();
  const char *failure = zero_world_error(world);
  std::string worldError = failure ? failure : "";
  // One process of several (mpi, nccl) speaks for its rank.
  std::string who;
  if (zero_world_num_local_ranks(world) < n)
    who = " (rank " +
          std::to_string(zero_rank_id(zero_world_local_rank(world, 0))) + ")";
  zero_world_destroy(world);
  if (!worldError.empty()) {
    std::fprintf(stderr, "zero-collective-check: error: %s\n",
                 worldError.c_str());
    return 1;
  }
  std::printf("zero-collective-check: %s, %d rank(s)%s: %lld results "
              "checked (a rank's collective each), %lld failed\n",
              backend.c_str(), n, who.c_str(),
              static_cast<long long>(checker.checked.load()),
              static_cast<long long>(checker.failed.load()));
  return checker.failed ? 1 : 0;
}
