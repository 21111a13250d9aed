//===- Calibrate.cpp - measure the cost model on a runtime ----------------===//
//
// Five probe functions in one module, all with the same arguments, so that
// one world runs them all (under mpi a world is the job: it cannot be made
// twice). Each probe is a loop whose iterations depend on each other, so
// none is folded away or run ahead.
//
//===----------------------------------------------------------------------===//

#include "zero/Execution/Calibrate.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>

using namespace mlir;
using namespace zero;
using namespace zero::exec;

namespace {

/// The probes' shapes and iteration counts.
constexpr int64_t kLatencyCalls = 200;
constexpr int64_t kGatherCalls = 20;
constexpr int64_t kMatmulM = 256, kMatmulK = 512, kMatmulCalls = 4;
constexpr int64_t kElements = 1 << 20, kElementwiseCalls = 20;
/// The host's streaming probe: arrays well beyond a cache, made in the
/// probe (no inputs to generate), timed at two lengths so that what the
/// difference leaves is the calls alone, not the first touch of the pages.
constexpr int64_t kStreamElements = 1 << 25, kStreamShortCalls = 2,
                  kStreamLongCalls = 6;

/// The module: @dp of `meshSize` ranks, and one function per probe, each
/// taking (one: 1 f32, shard: the gathered part, a: MxK, w: KxK, x, y:
/// kElements f32, whole: the reduce-scatter's input, meshSize shards).
std::string probeModule(int64_t meshSize, int64_t shardElements) {
  std::string args = llvm::formatv(
      "%one: tensor<1xf32>, %shard: tensor<{0}xf32>, "
      "%a: tensor<{1}x{2}xf32>, %w: tensor<{2}x{2}xf32>, "
      "%x: tensor<{3}xf32>, %y: tensor<{3}xf32>, %whole: tensor<{4}xf32>",
      shardElements, kMatmulM, kMatmulK, kElements, meshSize * shardElements);
  auto loop = [](int64_t calls, StringRef init, StringRef type,
                 StringRef body) {
    return llvm::formatv(R"mlir(
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %calls = arith.constant {0} : index
  %r = scf.for %i = %c0 to %calls step %c1 iter_args(%v = {1}) -> ({2}) {{
{3}
  }
  return %r : {2}
)mlir",
                         calls, init, type, body)
        .str();
  };
  std::string text = llvm::formatv("zero.mesh @dp(shape = [{0}])\n", meshSize);
  text +=
      llvm::formatv("func.func @latency({0}) -> tensor<1xf32> {{{1}}\n", args,
                    loop(kLatencyCalls, "%one", "tensor<1xf32>", R"mlir(
    %s = zero.all_reduce %v on @dp reduce = max : tensor<1xf32>
    scf.yield %s : tensor<1xf32>)mlir"));
  std::string shard = llvm::formatv("tensor<{0}xf32>", shardElements);
  text += llvm::formatv(
      "func.func @bandwidth({0}) -> {1} {{{2}}\n", args, shard,
      loop(kGatherCalls, "%shard", shard,
           llvm::formatv(R"mlir(
    %g = zero.all_gather %v on @dp : {0} -> tensor<{1}xf32>
    %s = tensor.extract_slice %g[0] [{2}] [1] : tensor<{1}xf32> to {0}
    scf.yield %s : {0})mlir",
                         shard, meshSize * shardElements, shardElements)
               .str()));
  // The reduced part written back into the input: the next call reduces
  // what this one made.
  std::string whole =
      llvm::formatv("tensor<{0}xf32>", meshSize * shardElements);
  text += llvm::formatv("func.func @reduce({0}) -> {1} {{{2}}\n", args, whole,
                        loop(kGatherCalls, "%whole", whole,
                             llvm::formatv(R"mlir(
    %s = zero.reduce_scatter %v on @dp reduce = sum : {1} -> {0}
    %n = tensor.insert_slice %s into %v[0] [{2}] [1] : {0} into {1}
    scf.yield %n : {1})mlir",
                                           shard, whole, shardElements)
                                 .str()));
  std::string rows = llvm::formatv("tensor<{0}x{1}xf32>", kMatmulM, kMatmulK);
  text += llvm::formatv(
      "func.func @matmul({0}) -> {1} {{\n"
      "  %zero = arith.constant 0.0 : f32\n"
      "  %e = tensor.empty() : {1}\n"
      "  %f = linalg.fill ins(%zero : f32) outs(%e : {1}) -> {1}{2}}\n",
      args, rows,
      loop(kMatmulCalls, "%a", rows,
           llvm::formatv(R"mlir(
    %m = linalg.matmul ins(%v, %w : {0}, tensor<{1}x{1}xf32>) outs(%f : {0}) -> {0}
    scf.yield %m : {0})mlir",
                         rows, kMatmulK)
               .str()));
  std::string vector = llvm::formatv("tensor<{0}xf32>", kElements);
  text +=
      llvm::formatv("func.func @elementwise({0}) -> {1} {{{2}}\n", args, vector,
                    loop(kElementwiseCalls, "%x", vector,
                         llvm::formatv(R"mlir(
    %s = arith.addf %v, %y : {0}
    scf.yield %s : {0})mlir",
                                       vector)
                             .str()));
  // x + y into x, y carried so that no fusion folds it into a constant:
  // two reads and a write an element, as a host update streams.
  std::string stream = llvm::formatv("tensor<{0}xf32>", kStreamElements);
  for (auto [name, calls] :
       {std::pair<StringRef, int64_t>{"stream_short", kStreamShortCalls},
        {"stream_long", kStreamLongCalls}})
    text += llvm::formatv(R"mlir(func.func @{0}({1}) -> {2} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %calls = arith.constant {3} : index
  %f1 = arith.constant 1.0 : f32
  %f2 = arith.constant 2.0 : f32
  %ex = tensor.empty() : {2}
  %sx = linalg.fill ins(%f1 : f32) outs(%ex : {2}) -> {2}
  %ey = tensor.empty() : {2}
  %sy = linalg.fill ins(%f2 : f32) outs(%ey : {2}) -> {2}
  %r:2 = scf.for %i = %c0 to %calls step %c1 iter_args(%v = %sx, %u = %sy) -> ({2}, {2}) {{
    %s = arith.addf %v, %u : {2}
    scf.yield %s, %u : {2}, {2}
  }
  return %r#0 : {2}
}
)mlir",
                          name, args, stream, calls);
  return text;
}

} // namespace

std::string Calibration::asOptions() const {
  return llvm::formatv("latency-us={0:F1} bandwidth-gbps={1:F3} "
                       "reduce-bandwidth-gbps={4:F3} gflops={2:F3} "
                       "gelements-per-s={3:F3}",
                       parameters.latency * 1e6, parameters.bandwidth * 1e-9,
                       parameters.flopRate * 1e-9,
                       parameters.elementRate * 1e-9,
                       parameters.reduceBandwidth * 1e-9)
      .str();
}

std::string Calibration::asOffloadOptions() const {
  return llvm::formatv("host-gbps={0:F3}", parameters.hostBandwidth * 1e-9)
      .str();
}

llvm::Expected<Calibration> zero::exec::calibrate(MLIRContext &context,
                                                  int64_t meshSize,
                                                  rt::LaunchOptions options,
                                                  int repeats,
                                                  int64_t gatherBytes) {
  if (meshSize < 2)
    return llvm::createStringError(
        "calibration needs 2 ranks or more (communication is what it "
        "measures), got %lld",
        static_cast<long long>(meshSize));
  int64_t shardElements = std::max<int64_t>(gatherBytes / 4, 1);
  std::string text = probeModule(meshSize, shardElements);
  const char *names[] = {"latency", "bandwidth",    "matmul",     "elementwise",
                         "reduce",  "stream_short", "stream_long"};
  constexpr int kProbes = std::size(names);
  // The first five are timed alone; the two streaming runs make one probe,
  // the last, from their difference.
  constexpr int kStreamProbe = 5;
  std::vector<std::unique_ptr<Executable>> executables;
  for (const char *name : names) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return llvm::createStringError("calibration: the probe module does not "
                                     "parse");
    auto exe = Executable::compile(*module, name);
    if (!exe)
      return exe.takeError();
    executables.push_back(std::move(*exe));
  }
  // Weights small enough that the chained matmuls neither overflow nor
  // reach subnormals, which would time something else.
  options.inputs[3].low = -0.05;
  options.inputs[3].high = 0.05;
  options.keepOutputs = false;
  // Every probe `repeats` times, interleaved, in one world.
  std::vector<const rt::Program *> programs;
  for (int r = 0; r < std::max(repeats, 1); ++r)
    for (auto &exe : executables)
      programs.push_back(exe.get());
  std::vector<std::vector<rt::RankRun>> runs;
  if (std::string error = rt::launch(programs, options, runs); !error.empty())
    return llvm::createStringError("%s", error.c_str());
  Calibration calibration;
  calibration.repeats = std::max(repeats, 1);
  double best[kProbes] = {};
  for (auto [p, programRuns] : llvm::enumerate(runs)) {
    double slowest = 0;
    for (const rt::RankRun &run : programRuns) {
      slowest = std::max(slowest, run.seconds);
      calibration.holdsRankZero |= run.rank == 0;
    }
    double &b = best[p % kProbes];
    b = b == 0 ? slowest : std::min(b, slowest);
  }
  int64_t calls[kStreamProbe] = {kLatencyCalls, kGatherCalls, kMatmulCalls,
                                 kElementwiseCalls, kGatherCalls};
  std::string what[kStreamProbe] = {
      "zero.all_reduce of 1 f32",
      llvm::formatv("zero.all_gather of {0} f32 per rank", shardElements),
      llvm::formatv("linalg.matmul {0}x{1} by {1}x{1}", kMatmulM, kMatmulK),
      llvm::formatv("arith.addf of {0} f32", kElements),
      llvm::formatv("zero.reduce_scatter to {0} f32 per rank", shardElements)};
  // Both collectives send (N - 1) shards a rank (Communication.h).
  double sent = double(meshSize - 1) * shardElements * 4;
  double amount[kStreamProbe] = {0, sent, 2.0 * kMatmulM * kMatmulK * kMatmulK,
                                 double(kElements), sent};
  for (int i = 0; i < kStreamProbe; ++i)
    calibration.probes.push_back({what[i], best[i] / calls[i], amount[i]});
  // The streaming probe's calls are what the long run takes beyond the
  // short one (both fill and first touch their arrays alike).
  constexpr int64_t streamCalls = kStreamLongCalls - kStreamShortCalls;
  double streamSeconds =
      std::max(best[kStreamProbe + 1] - best[kStreamProbe], 1e-9) / streamCalls;
  calibration.probes.push_back(
      {llvm::formatv("host stream: x += y, {0} f32", kStreamElements),
       streamSeconds, 12.0 * kStreamElements});
  const Probe &latency = calibration.probes[0], &gather = calibration.probes[1],
              &matmul = calibration.probes[2],
              &elementwise = calibration.probes[3],
              &reduce = calibration.probes[4];
  CostModelParameters &parameters = calibration.parameters;
  parameters.latency = latency.seconds;
  // What the gather takes beyond the latency is the bytes' time; at least
  // a tenth of the gather, should its latency measure as large.
  auto bytesPerSecond = [&](const Probe &collective) {
    return collective.amount / std::max(collective.seconds - latency.seconds,
                                        collective.seconds / 10);
  };
  parameters.bandwidth = bytesPerSecond(gather);
  parameters.reduceBandwidth = bytesPerSecond(reduce);
  parameters.flopRate = matmul.amount / matmul.seconds;
  parameters.elementRate = elementwise.amount / elementwise.seconds;
  const Probe &stream = calibration.probes[kStreamProbe];
  parameters.hostBandwidth = stream.amount / stream.seconds;
  return calibration;
}
