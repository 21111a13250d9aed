//===- adamw_reference.cpp - a hand-written CPU AdamW, DeepSpeed's kind ---===//
//
// The CPU AdamW that DeepSpeed's CPU Adam stands for: one fused loop over
// each tensor (w, m and v read and written once, g read once), vectorized
// for the machine it is built on (-march=native), its elements split across
// T threads, each tensor in T contiguous parts. host_update.py runs it beside
// zero's compiled update and PyTorch's AdamW on the same shapes: it says how
// fast an update written by hand for this machine goes, so that the gap
// between zero and PyTorch is read against what the hardware allows.
//
// With --kernel bytes it runs the same loads and stores with an add for each
// store in place of AdamW's arithmetic (m += g, v += g, w += m): the least
// time any loop that moves an fp32 AdamW's bytes takes on this machine, and
// so the most any such update can be faster than another.
//
// Prints one line: the threads, the median step in ms over steps 2..K (the
// first step touches the state), and the peak resident memory (MB).
//
//   zero-bench-adamw-reference --shapes FILE [--threads T] [--steps K]
//                              [--kernel adamw|bytes]
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <barrier>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <sys/resource.h>
#include <thread>
#include <vector>

namespace {
struct Options {
  std::string shapes;
  bool bytesOnly = false;
  int threads = 1;
  int steps = 6;
};

bool parse(int argc, char **argv, Options &options) {
  for (int i = 1; i < argc; ++i) {
    if (i + 1 >= argc)
      return false;
    const char *value = argv[++i];
    if (!std::strcmp(argv[i - 1], "--shapes")) {
      options.shapes = value;
      continue;
    }
    if (!std::strcmp(argv[i - 1], "--kernel")) {
      if (std::strcmp(value, "adamw") && std::strcmp(value, "bytes"))
        return false;
      options.bytesOnly = !std::strcmp(value, "bytes");
      continue;
    }
    char *end;
    long v = std::strtol(value, &end, 10);
    if (*end || v < 1 || v > 4096)
      return false;
    if (!std::strcmp(argv[i - 1], "--threads"))
      options.threads = int(v);
    else if (!std::strcmp(argv[i - 1], "--steps"))
      options.steps = int(v);
    else
      return false;
  }
  return !options.shapes.empty() && options.steps >= 2;
}

/// The elements of each shape in `path` ("AxB" a line or a word); empty
/// with a message when it cannot be read.
std::vector<size_t> readSizes(const std::string &path) {
  std::ifstream in(path);
  std::vector<size_t> sizes;
  if (!in) {
    std::fprintf(stderr, "zero-bench-adamw-reference: cannot read %s\n",
                 path.c_str());
    return sizes;
  }
  std::string shape;
  while (in >> shape) {
    size_t elements = 1;
    for (size_t start = 0; start <= shape.size();) {
      size_t x = shape.find('x', start);
      std::string dim = shape.substr(start, x - start);
      char *end;
      unsigned long long d = std::strtoull(dim.c_str(), &end, 10);
      if (dim.empty() || *end || d == 0 || d > (1ull << 40)) {
        std::fprintf(stderr, "zero-bench-adamw-reference: %s: bad shape '%s'\n",
                     path.c_str(), shape.c_str());
        return {};
      }
      elements *= d;
      if (x == std::string::npos)
        break;
      start = x + 1;
    }
    sizes.push_back(elements);
  }
  if (sizes.empty() && in.eof())
    std::fprintf(stderr, "zero-bench-adamw-reference: %s: no shapes\n",
                 path.c_str());
  return sizes;
}

/// One tensor's state.
struct Tensor {
  std::unique_ptr<float[]> w, g, m, v;
  size_t size;
};

/// AdamW on elements [begin, end) of `t`, step `step` (from 1), as
/// torch.optim.AdamW computes it (decoupled weight decay, bias-corrected
/// moments).
void update(Tensor &t, size_t begin, size_t end, int step) {
  const float lr = 1e-3f, beta1 = 0.9f, beta2 = 0.999f, eps = 1e-8f,
              decay = 0.01f;
  const float correction1 = 1 / (1 - std::pow(beta1, float(step)));
  const float correction2 = 1 / (1 - std::pow(beta2, float(step)));
  float *__restrict w = t.w.get(), *__restrict m = t.m.get(),
                    *__restrict v = t.v.get();
  const float *__restrict g = t.g.get();
  for (size_t i = begin; i < end; ++i) {
    float gi = g[i];
    float mi = beta1 * m[i] + (1 - beta1) * gi;
    float vi = beta2 * v[i] + (1 - beta2) * gi * gi;
    m[i] = mi;
    v[i] = vi;
    float denominator = std::sqrt(vi * correction2) + eps;
    w[i] = w[i] * (1 - lr * decay) - lr * (mi * correction1) / denominator;
  }
}

/// AdamW's loads and stores on elements [begin, end) of `t`, with an add
/// for each store in place of its arithmetic.
void moveBytes(Tensor &t, size_t begin, size_t end) {
  float *__restrict w = t.w.get(), *__restrict m = t.m.get(),
                    *__restrict v = t.v.get();
  const float *__restrict g = t.g.get();
  for (size_t i = begin; i < end; ++i) {
    float gi = g[i];
    float mi = m[i] + gi;
    m[i] = mi;
    v[i] += gi;
    w[i] += mi;
  }
}
} // namespace

int main(int argc, char **argv) {
  Options options;
  if (!parse(argc, argv, options)) {
    std::fprintf(stderr, "usage: zero-bench-adamw-reference --shapes FILE "
                         "[--threads T] [--steps K (>= 2)] "
                         "[--kernel adamw|bytes]\n");
    return 2;
  }
  std::vector<size_t> sizes = readSizes(options.shapes);
  if (sizes.empty())
    return 1;
  std::vector<Tensor> tensors;
  for (size_t size : sizes) {
    Tensor t{std::make_unique<float[]>(size), std::make_unique<float[]>(size),
             std::make_unique<float[]>(size), std::make_unique<float[]>(size),
             size};
    for (size_t i = 0; i < size; ++i) {
      t.w[i] = float(i % 97) / 97 - 0.5f;
      t.g[i] = float(i % 89) / 89 - 0.5f;
    }
    tensors.push_back(std::move(t));
  }
  int threads = options.threads;
  std::barrier sync(threads);
  std::vector<double> seconds(options.steps);
  auto work = [&](int id) {
    for (int step = 0; step < options.steps; ++step) {
      sync.arrive_and_wait();
      auto start = std::chrono::steady_clock::now();
      for (Tensor &t : tensors) {
        size_t begin = t.size * id / threads, end = t.size * (id + 1) / threads;
        if (options.bytesOnly)
          moveBytes(t, begin, end);
        else
          update(t, begin, end, step + 1);
      }
      sync.arrive_and_wait();
      if (id == 0)
        seconds[step] = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    }
  };
  std::vector<std::thread> pool;
  for (int id = 1; id < threads; ++id)
    pool.emplace_back(work, id);
  work(0);
  for (std::thread &thread : pool)
    thread.join();
  std::vector<double> later(seconds.begin() + 1, seconds.end());
  std::sort(later.begin(), later.end());
  double median =
      later.size() % 2
          ? later[later.size() / 2]
          : (later[later.size() / 2 - 1] + later[later.size() / 2]) / 2;
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  // Keep the stores: the state is read.
  double checksum = 0;
  for (const Tensor &t : tensors)
    checksum += t.w[t.size / 2];
  std::printf("adamw_reference kernel=%s threads=%d step_ms=%.3f peak_mb=%.1f "
              "checksum=%.6g\n",
              options.bytesOnly ? "bytes" : "adamw", threads, median * 1e3,
              usage.ru_maxrss / 1024.0, checksum);
  return 0;
}
