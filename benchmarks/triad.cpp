//===- triad.cpp - the machine's memory roofline, STREAM's triad ----------===//
//
// Prints the bandwidth of STREAM's triad, a[i] = b[i] + s * c[i] on doubles,
// run by T threads at once, each on arrays of its own (as T ranks of the
// local backend share the memory): bytes counted as STREAM counts them, 24
// per element, the best of --repeat runs. zero's speed benchmarks divide a
// step's bytes by it for the step's roofline time.
//
//   zero-bench-triad [--threads T] [--mb MB-per-array] [--repeat K]
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace {
struct Options {
  int threads = 1;
  long megabytes = 256;
  int repeat = 10;
};

bool parse(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    auto value = [&](long low, long &out) {
      if (i + 1 >= argc)
        return false;
      char *end;
      out = std::strtol(argv[++i], &end, 10);
      return *end == 0 && out >= low && out <= (1L << 20);
    };
    long v;
    if (!std::strcmp(argv[i], "--threads") && value(1, v))
      options.threads = int(v);
    else if (!std::strcmp(argv[i], "--mb") && value(1, v))
      options.megabytes = v;
    else if (!std::strcmp(argv[i], "--repeat") && value(1, v))
      options.repeat = int(v);
    else
      return false;
  }
  return true;
}
} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr, "usage: zero-bench-triad [--threads T] [--mb MB] "
                         "[--repeat K]\n");
    return 2;
  }
  size_t n = size_t(options.megabytes) * (1 << 20) / sizeof(double);
  std::vector<double> best(options.repeat, 0);
  std::barrier sync(options.threads);
  std::vector<double> seconds(size_t(options.threads) * options.repeat);
  auto work = [&](int t) {
    std::unique_ptr<double[]> a(new double[n]), b(new double[n]),
        c(new double[n]);
    for (size_t i = 0; i < n; ++i) {
      a[i] = 0;
      b[i] = 1;
      c[i] = 2;
    }
    const double s = 3;
    for (int k = 0; k < options.repeat; ++k) {
      sync.arrive_and_wait();
      auto start = std::chrono::steady_clock::now();
      for (size_t i = 0; i < n; ++i)
        a[i] = b[i] + s * c[i];
      seconds[size_t(t) * options.repeat + k] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count();
    }
    // Keep the stores: the result is read.
    if (a[n / 2] != 7)
      std::fprintf(stderr, "zero-bench-triad: wrong result\n");
  };
  std::vector<std::thread> threads;
  for (int t = 1; t < options.threads; ++t)
    threads.emplace_back(work, t);
  work(0);
  for (std::thread &thread : threads)
    thread.join();
  double fastest = 1e30;
  for (int k = 0; k < options.repeat; ++k) {
    double slowest = 0; // a run ends when its last thread does
    for (int t = 0; t < options.threads; ++t)
      slowest = std::max(slowest, seconds[size_t(t) * options.repeat + k]);
    fastest = std::min(fastest, slowest);
  }
  double bytes = 24.0 * double(n) * options.threads;
  std::printf("triad threads=%d mb_per_array=%ld GB/s=%.2f\n", options.threads,
              options.megabytes, bytes / fastest / 1e9);
  return 0;
}
