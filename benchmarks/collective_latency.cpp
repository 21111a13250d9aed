//===- collective_latency.cpp - what the agreement check costs ------------===//
//
// The time of one small all-reduce on a world whose ranks compare each
// collective before it runs (the runtime's agreement check: mpi exchanges a
// description with an allgather, the local backend compares what the members
// posted) and on one that does not, as a launcher runs a program whose
// collectives zero-verify-collectives proved alike. Each round runs both,
// alternately, in the same process; the best round of each counts.
//
//   zero-bench-collective-latency [--backend local] [--ranks 2]
//   mpirun -n 2 zero-bench-collective-latency --backend mpi
//
// Prints one line per message size (rank 0 of an mpi job):
//   4 B: 12.3 us with the check, 6.1 us without: 6.2 us saved (50%)
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Timing {
  /// Microseconds per all-reduce: the slowest local rank's mean.
  double microseconds;
  int32_t worldSize;
  /// The world rank of this process's first rank.
  int32_t firstRank;
};

/// Times `iterations` all-reduces of `count` f32 on every rank of a world
/// made with `options`, after a warm-up. Exits with the message when the
/// world fails.
Timing timeAllReduce(const zero_options &options, int64_t count,
                     int iterations) {
  zero_world *world = nullptr;
  char error[512];
  if (zero_world_create(&options, &world, error, sizeof error)) {
    std::fprintf(stderr, "zero-bench-collective-latency: %s\n", error);
    std::exit(1);
  }
  int32_t n = zero_world_size(world);
  int32_t first = zero_rank_id(zero_world_local_rank(world, 0));
  int64_t group[] = {1, n, 1, 0};
  std::vector<double> seconds(zero_world_num_local_ranks(world));
  std::vector<std::thread> threads;
  for (int32_t i = 0; i < zero_world_num_local_ranks(world); ++i)
    threads.emplace_back([&, i] {
      zero_rank *rank = zero_world_local_rank(world, i);
      zero_rank_bind(rank);
      std::vector<float> in(count, 1.0f), out(count);
      for (int k = 0; k < 10; ++k)
        zero_rt_all_reduce(in.data(), out.data(), count, ZERO_F32, ZERO_SUM,
                           group);
      auto begin = std::chrono::steady_clock::now();
      for (int k = 0; k < iterations; ++k)
        zero_rt_all_reduce(in.data(), out.data(), count, ZERO_F32, ZERO_SUM,
                           group);
      seconds[i] = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - begin)
                       .count();
      zero_rank_bind(nullptr);
    });
  for (std::thread &t : threads)
    t.join();
  bool failed = zero_world_error(world) != nullptr;
  if (failed)
    std::fprintf(stderr, "zero-bench-collective-latency: %s\n",
                 zero_world_error(world));
  zero_world_destroy(world);
  if (failed)
    std::exit(1);
  return {*std::max_element(seconds.begin(), seconds.end()) / iterations * 1e6,
          n, first};
}

} // namespace

int main(int argc, char **argv) {
  zero_options options;
  zero_options_init(&options);
  options.ranks = 2;
  int iterations = 2000, rounds = 5;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    bool hasValue = i + 1 < argc;
    if (arg == "--backend" && hasValue)
      options.backend = argv[++i];
    else if (arg == "--ranks" && hasValue)
      options.ranks = std::atoi(argv[++i]);
    else if (arg == "--iterations" && hasValue)
      iterations = std::max(1, std::atoi(argv[++i]));
    else if (arg == "--rounds" && hasValue)
      rounds = std::max(1, std::atoi(argv[++i]));
    else {
      std::fprintf(stderr,
                   "usage: zero-bench-collective-latency [--backend local|mpi]"
                   " [--ranks N] [--iterations K] [--rounds R]\n");
      return 2;
    }
  }
  for (int64_t count : {1, 256, 4096}) {
    double best[2] = {1e300, 1e300};
    Timing last{};
    for (int round = 0; round < rounds; ++round)
      for (int check = 1; check >= 0; --check) {
        zero_options o = options;
        o.check = check;
        last = timeAllReduce(o, count, iterations);
        best[check] = std::min(best[check], last.microseconds);
      }
    // One process of an mpi job speaks: the one with world rank 0.
    if (last.firstRank != 0)
      continue;
    if (count == 1)
      std::printf("all-reduce of f32 on %d ranks (%s), best of %d rounds of "
                  "%d:\n",
                  last.worldSize, options.backend, rounds, iterations);
    std::printf("  %6lld B: %8.2f us with the agreement check, %8.2f us "
                "without: %7.2f us saved (%.0f%%)\n",
                static_cast<long long>(count * 4), best[1], best[0],
                best[1] - best[0], (best[1] - best[0]) / best[1] * 100);
  }
  return 0;
}
