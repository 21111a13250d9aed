//===- update_bandwidth.cpp - an update kernel against a device copy ------===//
//
// Runs a device-memory artifact (zero-compile --target=cuda of a program
// whose host code only allocates and launches, e.g. adamw_shard.mlir.in) and
// a device-to-device copy moving the same bytes, in the same process, and
// prints both rates and their ratio:
//
//   zero-bench-gpu-update ARTIFACT [--repeat K]
//
// Bytes moved: every tensor argument read once and every result written
// once (what one fused kernel must move); the copy of half as many bytes
// reads and writes the same total. Times are the best of K runs, each
// synchronized (kernel launches are synchronous).
//
// Built with the runtime alone (benchmarks/gpu/CMakeLists.txt): it runs on
// the GPU machine, which has no LLVM.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Array.h"
#include "zero/runtime/Artifact.h"
#include "zero/runtime/PackedCall.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace zero::rt;

namespace {

int fail(const std::string &message) {
  std::fprintf(stderr, "zero-bench-gpu-update: error: %s\n", message.c_str());
  return 1;
}

double seconds() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// The best of `repeat` timings of `run` (synchronized).
template <typename Fn> double best(int repeat, Fn run) {
  double fastest = 1e30;
  for (int r = 0; r < repeat; ++r) {
    double begin = seconds();
    run();
    zero_rt_gpu_synchronize();
    fastest = std::min(fastest, seconds() - begin);
  }
  return fastest;
}

} // namespace

int main(int argc, char **argv) {
  std::string path;
  int repeat = 20;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc)
      repeat = std::max(1, std::atoi(argv[++i]));
    else if (path.empty() && arg[0] != '-')
      path = arg;
    else
      return fail("usage: zero-bench-gpu-update ARTIFACT [--repeat K]");
  }
  if (path.empty())
    return fail("usage: zero-bench-gpu-update ARTIFACT [--repeat K]");
  std::string error;
  std::unique_ptr<Artifact> artifact = Artifact::open(path, error);
  if (!artifact)
    return fail(error);
  const ArtifactDescription &d = artifact->getDescription();
  if (d.target != "cuda" || d.memory != "device")
    return fail(path + " keeps its buffers in " + d.memory +
                " memory; this benchmark needs a GPU artifact in device "
                "memory" +
                (d.memoryReason.empty() ? "" : " (" + d.memoryReason + ")"));
  char why[512];
  if (zero_gpu_init(why, sizeof why))
    return fail(why);
  if (const char *loadError = zero_gpu_error())
    return fail(std::string("loading the kernels failed: ") + loadError);

  // Arguments: tensors in device memory (values in [0, 1): second moments
  // must not be negative), scalars 10 (a step count).
  std::vector<ValueType> argTypes, resultTypes;
  std::vector<Array> hostArgs;
  std::vector<void *> buffers;
  double bytesMoved = 0;
  hostArgs.reserve(d.arguments.size()); // scalars are passed by address
  for (size_t i = 0; i < d.arguments.size(); ++i) {
    const ValueType &type = d.arguments[i].type;
    argTypes.push_back(type);
    Array &array = hostArgs.emplace_back(Array{type.dtype, type.shape, {}});
    fillUniform(array, 1, unsigned(i), -1, 0, 1);
    if (!type.isTensor) {
      storeElement(array.dtype, 10.0, array.bytes.data());
      buffers.push_back(array.bytes.data());
      continue;
    }
    void *buffer = zero_rt_gpu_alloc_device(array.bytes.size());
    if (zero_gpu_copy_to_device(buffer, array.bytes.data(), array.bytes.size()))
      return fail(zero_gpu_error());
    buffers.push_back(buffer);
    bytesMoved += array.bytes.size();
  }
  for (const ArtifactValue &value : d.results) {
    resultTypes.push_back(value.type);
    if (value.type.isTensor)
      bytesMoved +=
          value.type.getNumElements() * getElementBytes(value.type.dtype);
  }

  PackedCall call(argTypes, resultTypes);
  auto runUpdate = [&] {
    artifact->getEntry()(call.pack(buffers).data());
    zero_rt_gpu_synchronize();
    for (size_t i = 0; i < resultTypes.size(); ++i)
      if (void *result = call.unpackResult(i, nullptr))
        zero_rt_gpu_free(result); // back to the pool for the next run
  };
  runUpdate(); // first run: module load, allocations
  double update = best(repeat, runUpdate);

  size_t copyBytes = static_cast<size_t>(bytesMoved / 2);
  void *from = zero_rt_gpu_alloc_device(copyBytes);
  void *to = zero_rt_gpu_alloc_device(copyBytes);
  zero_gpu_copy_on_device(to, from, copyBytes);
  double copy =
      best(repeat, [&] { zero_gpu_copy_on_device(to, from, copyBytes); });
  if (const char *failure = zero_gpu_error())
    return fail(failure);

  char chip[32], name[256];
  zero_gpu_device(chip, sizeof chip, name, sizeof name);
  std::printf("%s (%s), %s, best of %d\n", name, chip, path.c_str(), repeat);
  std::printf("update: %.1f MB moved in %.3f ms: %.0f GB/s\n", bytesMoved / 1e6,
              update * 1e3, bytesMoved / update / 1e9);
  std::printf("copy:   %.1f MB moved in %.3f ms: %.0f GB/s\n",
              2.0 * copyBytes / 1e6, copy * 1e3, 2.0 * copyBytes / copy / 1e9);
  std::printf("update at %.2f of the copy's rate\n",
              (bytesMoved / update) / (2.0 * copyBytes / copy));
  return 0;
}
