//===- QuantizeTest.cpp - block quantization, run and checked -------------===//
//
// Runs zero.quantize and zero.dequantize through the CPU lowering and its
// GPU-loop form on inputs made to hit every case (magnitudes from 1e-30 to
// 1e30 a block, a block of zeros, ties between two levels, a short last
// block, a NaN, an infinity), at 8 and 4 bits a level, and checks every
// element against the stated semantics computed here in float: the same
// scales, levels (for 4 bits, two a byte) and values bit for bit, and each
// value within max|block| / (2 L) of its input (L = 127 or 7).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Execution/Runner.h"
#include "zero/InitZero.h"
#include "zero/runtime/Array.h"
#include "zero/runtime/Launcher.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

using namespace mlir;
using namespace zero::exec;

namespace {

struct Case {
  int64_t rows, size, block;
};

/// Row `r`'s values: a magnitude per block from 1e-30 to 1e30, one block of
/// zeros, one of exact ties (k + 0.5 levels of a scale of 1), and in the
/// last row a NaN in one block and an infinity in another.
std::vector<float> makeInput(const Case &c, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::vector<float> x(c.rows * c.size);
  int64_t blocks = zero::getNumQuantBlocks(c.size, c.block);
  for (int64_t r = 0; r < c.rows; ++r)
    for (int64_t b = 0; b < blocks; ++b) {
      float magnitude =
          std::pow(10.0f, static_cast<float>((r * 7 + b * 13) % 61 - 30));
      for (int64_t i = b * c.block; i < std::min(c.size, (b + 1) * c.block);
           ++i) {
        float &v = x[r * c.size + i];
        switch ((r + b) % 5) {
        case 1:
          v = 0;
          break;
        case 2:
          // max|block| = 127, so the scale is 1 and k + 0.5 is a tie.
          v = i == b * c.block ? 127.0f
                               : static_cast<float>((i % 200) - 100) + 0.5f;
          break;
        default:
          v = magnitude * unit(rng);
        }
      }
    }
  if (blocks > 2) {
    x[(c.rows - 1) * c.size] = std::numeric_limits<float>::quiet_NaN();
    x[(c.rows - 1) * c.size + c.block] = std::numeric_limits<float>::infinity();
  }
  return x;
}

rt::Array toArray(const std::vector<float> &x, std::vector<int64_t> shape) {
  rt::Array a{"f32", std::move(shape), {}};
  a.bytes.resize(x.size() * sizeof(float));
  std::memcpy(a.bytes.data(), x.data(), a.bytes.size());
  return a;
}

/// Element `i` of an f32 or i8 result (exact through the double).
template <typename T> T element(const rt::Array &a, int64_t i) {
  return static_cast<T>(rt::getElementAsDouble(a, i));
}

bool sameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof(float)) == 0 ||
         (std::isnan(a) && std::isnan(b));
}

/// Bytes a row of `size` levels takes at `bits` a level.
int64_t rowBytes(int64_t size, int64_t bits) {
  return bits == 4 ? (size + 1) / 2 : size;
}

std::string program(const Case &c, int64_t bits) {
  int64_t blocks = zero::getNumQuantBlocks(c.size, c.block);
  return llvm::formatv(R"mlir(
func.func @step(%x: tensor<{0}x{1}xf32>)
    -> (tensor<{0}x{5}xi8>, tensor<{0}x{2}xf32>, tensor<{0}x{1}xf32>) {{
  %q, %s = zero.quantize %x block = {3} bits = {4}
      : tensor<{0}x{1}xf32> -> tensor<{0}x{5}xi8>, tensor<{0}x{2}xf32>
  %d = zero.dequantize %q, %s block = {3} bits = {4}
      : tensor<{0}x{5}xi8>, tensor<{0}x{2}xf32> -> tensor<{0}x{1}xf32>
  return %q, %s, %d : tensor<{0}x{5}xi8>, tensor<{0}x{2}xf32>, tensor<{0}x{1}xf32>
}
)mlir",
                       c.rows, c.size, blocks, c.block, bits,
                       rowBytes(c.size, bits))
      .str();
}

/// A context with zero's dialects (run without MLIR's thread pool).
class QuantizeContext : public ::testing::Test {
protected:
  static void SetUpTestSuite() { zero::registerAllPasses(); }
  QuantizeContext() : context(registry()) { context.disableMultithreading(); }
  static DialectRegistry registry() {
    DialectRegistry r;
    zero::registerAllDialects(r);
    return r;
  }
  MLIRContext context;
};

/// Parameters: whether the lowering is the GPU's loop form; bits a level.
class Quantize
    : public QuantizeContext,
      public ::testing::WithParamInterface<std::tuple<bool, int64_t>> {};

/// Level `i` of row `r` (of `size` levels) in `levels`, at `bits` a level.
int8_t levelAt(const rt::Array &levels, int64_t r, int64_t size, int64_t i,
               int64_t bits) {
  if (bits == 8)
    return element<int8_t>(levels, r * size + i);
  auto byte = static_cast<uint8_t>(
      element<int8_t>(levels, r * rowBytes(size, bits) + i / 2));
  int nibble = i % 2 ? byte >> 4 : byte & 15;
  return static_cast<int8_t>(nibble >= 8 ? nibble - 16 : nibble);
}

/// Checks block `b` of row `r`: scale, levels and values against the
/// semantics, and the bound.
void checkBlock(const Case &c, int64_t bits, const std::vector<float> &x,
                const std::vector<rt::Array> &out, int64_t r, int64_t b) {
  const float top = static_cast<float>(zero::getQuantLevels(bits));
  int64_t blocks = zero::getNumQuantBlocks(c.size, c.block);
  int64_t begin = b * c.block, end = std::min(c.size, begin + c.block);
  // maximumf: a NaN anywhere in the block is the block's maximum.
  float largest = 0;
  bool hasNaN = false;
  for (int64_t i = begin; i < end; ++i) {
    hasNaN |= std::isnan(x[r * c.size + i]);
    largest = std::fmax(std::fabs(x[r * c.size + i]), largest);
  }
  if (hasNaN)
    largest = std::numeric_limits<float>::quiet_NaN();
  float scale = largest / top;
  float got = element<float>(out[1], r * blocks + b);
  ASSERT_TRUE(sameBits(got, scale))
      << "row " << r << " block " << b << ": scale " << got << ", expected "
      << scale;
  for (int64_t i = begin; i < end; ++i) {
    int64_t at = r * c.size + i;
    float level = std::nearbyint(x[at] / scale);
    level = std::isnan(level) ? 0 : std::fmax(std::fmin(level, top), -top);
    int8_t q = levelAt(out[0], r, c.size, i, bits);
    ASSERT_EQ(q, static_cast<int8_t>(level))
        << "element " << at << " (" << x[at] << ", scale " << scale << ")";
    float value = element<float>(out[2], at);
    ASSERT_TRUE(sameBits(value, static_cast<float>(q) * scale))
        << "element " << at;
    if (std::isfinite(largest)) {
      double bound = largest / (2.0 * top) + largest * std::ldexp(1.0, -20);
      ASSERT_LE(std::fabs(static_cast<double>(x[at]) - value), bound)
          << "element " << at << " (" << x[at] << ") came back as " << value;
    } else {
      ASSERT_TRUE(std::isnan(value))
          << "element " << at << " of a block with a NaN or an infinity";
    }
  }
}

TEST_P(Quantize, EveryElementFollowsTheSemanticsWithinTheBound) {
  zero::ZeroToLLVMOptions lowering;
  lowering.gpuLoops = std::get<0>(GetParam());
  int64_t bits = std::get<1>(GetParam());
  const Case cases[] = {{1, 10, 4}, {3, 4096, 4096}, {2, 5000, 4096},
                        {1, 1, 16}, {5, 33, 8},      {4, 1000, 7},
                        {6, 64, 64}};
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("zero-quantize", dir));
  uint64_t seed = 1;
  for (const Case &c : cases) {
    if (bits == 4 && c.block % 2)
      continue; // 4-bit blocks are even: no byte holds two blocks' levels
    SCOPED_TRACE(
        llvm::formatv("{0}x{1}, blocks of {2}", c.rows, c.size, c.block).str());
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(program(c, bits), &context);
    ASSERT_TRUE(module);
    auto executable = Executable::compile(*module, "step", lowering);
    ASSERT_TRUE(static_cast<bool>(executable))
        << llvm::toString(executable.takeError());
    std::vector<float> x = makeInput(c, seed++);
    std::string path = (dir + "/x.npy").str();
    ASSERT_EQ(rt::writeNpy(path, toArray(x, {c.rows, c.size})), "");
    rt::LaunchOptions options;
    options.inputs[0].path = path;
    std::vector<std::vector<rt::RankRun>> runs;
    std::vector<const rt::Program *> programs{executable->get()};
    ASSERT_EQ(rt::launch(programs, options, runs), "");
    const std::vector<rt::Array> &out = runs[0][0].outputs;
    for (int64_t r = 0; r < c.rows; ++r)
      for (int64_t b = 0; b < zero::getNumQuantBlocks(c.size, c.block); ++b)
        checkBlock(c, bits, x, out, r, b);
  }
  llvm::sys::fs::remove_directories(dir);
}

/// A training loop whose gradient does not depend on its forward pass, so
/// that the weights are the same with and without compression, and whose
/// forward pass returns what it read of the weight in the last iteration.
std::string trainingLoop(const std::string &meshShape, int64_t elements,
                         int steps) {
  return llvm::formatv(R"mlir(
zero.mesh @dp(shape = {0})
func.func @step(%w0: tensor<{1}xf32>, %gl: tensor<{1}xf32>, %x: tensor<{1}xf32>)
    -> (tensor<{1}xf32>, tensor<{1}xf32>) {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {2} : index
  %lr = arith.constant dense<0.25> : tensor<{1}xf32>
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%w = %w0, %seen = %x)
      -> (tensor<{1}xf32>, tensor<{1}xf32>) {{
    %y = arith.mulf %w, %x : tensor<{1}xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<{1}xf32>
    %d = arith.mulf %g, %lr : tensor<{1}xf32>
    %w2 = arith.subf %w, %d : tensor<{1}xf32>
    scf.yield %w2, %y : tensor<{1}xf32>, tensor<{1}xf32>
  }
  return %r#0, %r#1 : tensor<{1}xf32>, tensor<{1}xf32>
}
)mlir",
                       meshShape, elements, steps)
      .str();
}

/// Parameters: the bits a level of the gathered copy, 8 (gather-dtype=int8)
/// or 4 (gather-dtype=int4); whether the gather is stage 3's, before the op
/// that reads the weight, rather than the deferred one.
class QuantizedGather
    : public QuantizeContext,
      public ::testing::WithParamInterface<std::tuple<int64_t, bool>> {};

// qwZ end to end: the loop sharded with the deferred gather in int8 or int4
// (zero-weight-update-sharding{defer-all-gather gather-dtype=int8|int4}), or
// with stage 3's gather before the forward pass's read ({stage=3
// gather-dtype=int8|int4}), against the loop as given, on the same inputs, at N
// = 1, 2, 3, 4, 8 and on a 2x4 mesh. The weights, which the carried fp32 shard
// holds, must be the same bits; what the forward pass read of them (times ones)
// must be within max|block| / 254 (int8) or / 14 (int4) of the weight, each
// block being one of this rank's shard.
TEST_P(QuantizedGather, CopyIsWithinTheBoundAndTheWeightsExact) {
  const int64_t elements = 1000, block = 64;
  const auto [bits, stage3] = GetParam();
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("zero-qwz", dir));
  std::string ones = (dir + "/ones.npy").str();
  ASSERT_EQ(rt::writeNpy(
                ones, toArray(std::vector<float>(elements, 1.0f), {elements})),
            "");
  const std::pair<const char *, int> meshes[] = {{"[1]", 1}, {"[2]", 2},
                                                 {"[3]", 3}, {"[4]", 4},
                                                 {"[8]", 8}, {"[2, 4]", 8}};
  for (auto [shape, ranks] : meshes) {
    SCOPED_TRACE(std::string("mesh ") + shape);
    std::string text = trainingLoop(shape, elements, /*steps=*/3);
    OwningOpRef<ModuleOp> given = parseSourceString<ModuleOp>(text, &context);
    ASSERT_TRUE(given);
    OwningOpRef<ModuleOp> compressed = given->clone();
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
      return success(d.getSeverity() == mlir::DiagnosticSeverity::Remark);
    });
    llvm::Error error = runPassPipeline(
        *compressed,
        llvm::formatv("zero-weight-update-sharding{{{0} gather-dtype={1} "
                      "quantize-block={2}}",
                      stage3 ? "stage=3" : "defer-all-gather",
                      zero::getQuantFormat(bits), block)
            .str());
    ASSERT_FALSE(error) << llvm::toString(std::move(error));
    int quantized = 0;
    compressed->walk([&](zero::QuantizeOp) { ++quantized; });
    EXPECT_EQ(quantized, ranks > 1 ? 1 : 0);
    auto a = Executable::compile(*given, "step");
    ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
    auto b = Executable::compile(*compressed, "step");
    ASSERT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());
    rt::LaunchOptions options;
    options.ranks = ranks;
    options.inputs[1].perRank = true;
    options.inputs[2].path = ones;
    std::vector<std::vector<rt::RankRun>> runs;
    std::vector<const rt::Program *> programs{a->get(), b->get()};
    ASSERT_EQ(rt::launch(programs, options, runs), "");
    int64_t shard = (elements + ranks - 1) / ranks;
    for (int r = 0; r < ranks; ++r) {
      const rt::Array &weight = runs[0][r].outputs[0];
      EXPECT_EQ(rt::compare(weight, runs[1][r].outputs[0]).differing, 0)
          << "rank " << r << ": the weights differ";
      const rt::Array &exact = runs[0][r].outputs[1];
      const rt::Array &copy = runs[1][r].outputs[1];
      if (ranks > 1) {
        EXPECT_GT(rt::compare(exact, copy).differing, 0)
            << "rank " << r << ": the copy was not compressed";
      }
      // Blocks restart at each rank's shard.
      for (int64_t first = 0; first < elements; first += shard)
        for (int64_t begin = first; begin < std::min(elements, first + shard);
             begin += block) {
          int64_t end = std::min({elements, first + shard, begin + block});
          float largest = 0;
          for (int64_t i = begin; i < end; ++i)
            largest = std::fmax(largest, std::fabs(element<float>(exact, i)));
          double bound = largest / (2.0 * zero::getQuantLevels(bits)) +
                         largest * std::ldexp(1.0, -20);
          for (int64_t i = begin; i < end; ++i)
            ASSERT_LE(std::fabs(static_cast<double>(element<float>(exact, i)) -
                                element<float>(copy, i)),
                      bound)
                << "rank " << r << " element " << i;
        }
    }
  }
  llvm::sys::fs::remove_directories(dir);
}

INSTANTIATE_TEST_SUITE_P(
    Bits, QuantizedGather,
    ::testing::Combine(::testing::Values(int64_t(8), int64_t(4)),
                       ::testing::Values(false, true)),
    [](const ::testing::TestParamInfo<std::tuple<int64_t, bool>> &info) {
      return zero::getQuantFormat(std::get<0>(info.param)).str() +
             (std::get<1>(info.param) ? "Stage3" : "Deferred");
    });

/// One reduce-scatter of a gradient that differs per rank.
std::string reduceScatter(const std::string &meshShape, int64_t ranks,
                          int64_t part) {
  return llvm::formatv(R"mlir(
zero.mesh @dp(shape = {0})
func.func @step(%g: tensor<{1}xf32>) -> tensor<{2}xf32> {{
  %r = zero.reduce_scatter %g on @dp reduce = sum
      : tensor<{1}xf32> -> tensor<{2}xf32>
  return %r : tensor<{2}xf32>
}
)mlir",
                       meshShape, ranks * part, part)
      .str();
}

/// Rank `rank`'s gradient: a magnitude per block of 16 from 1e-3 to 1e3,
/// so that blocks of one rank's part differ in scale.
std::vector<float> gradientOf(int rank, int64_t elements) {
  std::mt19937_64 rng(1000 + rank);
  std::uniform_real_distribution<float> unit(-1, 1);
  std::vector<float> g(elements);
  for (int64_t i = 0; i < elements; ++i)
    g[i] = std::pow(10.0f, static_cast<float>((rank * 5 + i / 16) % 7 - 3)) *
           unit(rng);
  return g;
}

/// Each rank's gradient (gradientOf) of `ranks` parts, written to
/// DIR/g<rank>.npy.
std::vector<std::vector<float>> writeGradients(const std::string &dir,
                                               int64_t ranks, int64_t part) {
  std::vector<std::vector<float>> gradients;
  for (int r = 0; r < ranks; ++r) {
    gradients.push_back(gradientOf(r, ranks * part));
    EXPECT_EQ(rt::writeNpy(dir + "/g" + std::to_string(r) + ".npy",
                           toArray(gradients.back(), {ranks * part})),
              "");
  }
  return gradients;
}

/// The largest magnitude of `values[begin, end)`.
double largest(const std::vector<float> &values, int64_t begin, int64_t end) {
  double m = 0;
  for (int64_t i = begin; i < end; ++i)
    m = std::max(m, static_cast<double>(std::fabs(values[i])));
  return m;
}

/// One compressed reduce-scatter's bound on elements [begin, end) of part
/// `g`, on an `outer` x `inner` mesh of ranks whose gradients are
/// `gradients`: hop 1 (along the inner axis) each rank's block of part g,
/// hop 2 (outer) each row's partial sum over its inner ranks, each
/// contribution within max|block| / halfSteps. `magnitude` gets the sum of
/// the contributions' largest magnitudes, for the rounding.
double oneStepBound(const std::vector<std::vector<float>> &gradients, int64_t g,
                    int64_t part, int64_t begin, int64_t end, int64_t outer,
                    int64_t inner, double halfSteps, double &magnitude) {
  auto blockOf = [&](int64_t rank) {
    return largest(gradients[rank], g * part + begin, g * part + end);
  };
  double bound = 0;
  magnitude = 0;
  for (int64_t i0 = 0; i0 < outer; ++i0) {
    double hop1 = 0;
    std::vector<float> partial(end - begin, 0.0f);
    for (int64_t i1 = 0; i1 < inner; ++i1) {
      int64_t rank = i0 * inner + i1;
      hop1 += blockOf(rank) / halfSteps;
      magnitude += blockOf(rank);
      for (int64_t e = begin; e < end; ++e)
        partial[e - begin] += gradients[rank][g * part + e];
    }
    bound += hop1;
    if (outer > 1)
      bound += (largest(partial, 0, end - begin) + hop1) / halfSteps;
  }
  return bound;
}

/// The meshes the reduce-scatters run on: each a shape and its extents.
const std::pair<const char *, std::vector<int64_t>> kReduceMeshes[] = {
    {"[1]", {1}}, {"[2]", {2}}, {"[3]", {3}},
    {"[4]", {4}}, {"[8]", {8}}, {"[2, 4]", {2, 4}}};

/// A contribution's bound as a share of its block's largest magnitude, as
/// its inverse: 2L for L levels a side, 256 for bf16.
double halfStepsOf(int64_t bits) {
  return 1.0 / zero::getExchangeHalfStepShare(bits);
}

/// Parameters: whether the lowering is the GPU's loop form; bits an element
/// (8, 4: int8, int4 blocks; 16: bf16).
class QuantizedReduceScatter
    : public QuantizeContext,
      public ::testing::WithParamInterface<std::tuple<bool, int64_t>> {};

// qgZ: zero-compress-reduce-scatter against the exact reduce-scatter, at
// N = 1, 2, 3, 4, 8 and on a 2x4 mesh (two hops: along axis 1, then axis
// 0), with parts that blocks divide and parts whose last block is short.
// Every element must be within the stated bound of the exact sum: the sum
// over contributions of max|block| / (2 L) (L = 127 for int8, 7 for int4;
// hop by hop, the second hop's contributions being the first hop's partial
// sums), plus float rounding. The bytes each rank sends must be
// (bits / 8 + 4/B)/4 of the exact collective's where B divides the part
// (bf16: a half, no scales; its bound is |x| / 256 a contribution, checked
// as the block's largest / 256).
// Both programs are lowered alike: the CPU's loops, or the GPU's loop form.
TEST_P(QuantizedReduceScatter, EveryElementWithinTheBoundAndBytesAsStated) {
  const int64_t block = 64;
  zero::ZeroToLLVMOptions lowering;
  lowering.gpuLoops = std::get<0>(GetParam());
  int64_t bits = std::get<1>(GetParam());
  const double halfSteps = halfStepsOf(bits);
  for (int64_t part : {192, 100}) {
    for (const auto &[shape, axes] : kReduceMeshes) {
      int64_t ranks = 1;
      for (int64_t size : axes)
        ranks *= size;
      SCOPED_TRACE(std::string("mesh ") + shape + ", part " +
                   std::to_string(part));
      OwningOpRef<ModuleOp> given = parseSourceString<ModuleOp>(
          reduceScatter(shape, ranks, part), &context);
      ASSERT_TRUE(given);
      OwningOpRef<ModuleOp> compressed = given->clone();
      ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
        return success(d.getSeverity() == mlir::DiagnosticSeverity::Remark);
      });
      llvm::Error error = runPassPipeline(
          *compressed,
          llvm::formatv("zero-compress-reduce-scatter{{quantize-block={0} "
                        "bits={1}}",
                        block, bits)
              .str());
      ASSERT_FALSE(error) << llvm::toString(std::move(error));
      int exchanges = 0;
      compressed->walk([&](zero::AllToAllOp) { ++exchanges; });
      // Levels and scales a hop; bf16 has no scales.
      int perHop = bits == zero::kBF16ExchangeBits ? 1 : 2;
      EXPECT_EQ(exchanges,
                ranks > 1 ? perHop * static_cast<int>(axes.size()) : 0);

      llvm::SmallString<128> dir;
      ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("zero-qgz", dir));
      std::vector<std::vector<float>> gradients =
          writeGradients(dir.str().str(), ranks, part);
      auto a = Executable::compile(*given, "step", lowering);
      ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
      auto b = Executable::compile(*compressed, "step", lowering);
      ASSERT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());
      rt::LaunchOptions options;
      options.ranks = static_cast<int32_t>(ranks);
      options.inputs[0].path = (dir + "/g{rank}.npy").str();
      std::vector<std::vector<rt::RankRun>> runs;
      std::vector<const rt::Program *> programs{a->get(), b->get()};
      ASSERT_EQ(rt::launch(programs, options, runs), "");
      llvm::sys::fs::remove_directories(dir);

      // Rank g = (g0, g1) of an A0 x A1 mesh (A0 = 1 on a 1-D mesh).
      int64_t inner = axes.back(), outer = ranks / inner;
      for (int64_t g = 0; g < ranks; ++g) {
        const rt::Array &exact = runs[0][g].outputs[0];
        const rt::Array &approx = runs[1][g].outputs[0];
        if (ranks == 1) {
          EXPECT_EQ(rt::compare(exact, approx).differing, 0);
          continue;
        }
        EXPECT_GT(rt::compare(exact, approx).differing, 0)
            << "rank " << g << ": nothing was compressed";
        int64_t g0 = g / inner, g1 = g % inner;
        for (int64_t begin = 0; begin < part; begin += block) {
          int64_t end = std::min(part, begin + block);
          double magnitude;
          double bound = oneStepBound(gradients, g, part, begin, end, outer,
                                      inner, halfSteps, magnitude);
          // Float rounding: the sums' and each dequantized value's.
          bound += magnitude * ranks * std::ldexp(1.0, -20);
          for (int64_t e = begin; e < end; ++e)
            ASSERT_LE(std::fabs(rt::getElementAsDouble(exact, e) -
                                rt::getElementAsDouble(approx, e)),
                      bound)
                << "rank " << g << " (" << g0 << ", " << g1 << ") element "
                << e;
        }
        // Bytes: blocks divide the part only when it is 192.
        uint64_t exactBytes =
            runs[0][g].counters.bytes_sent[ZERO_REDUCE_SCATTER];
        uint64_t sent = runs[1][g].counters.bytes_sent[ZERO_ALL_TO_ALL];
        EXPECT_EQ(runs[1][g].counters.bytes_sent[ZERO_REDUCE_SCATTER], 0u);
        if (part % block == 0) {
          uint64_t scaleBits = bits == zero::kBF16ExchangeBits ? 0 : 32;
          EXPECT_EQ(sent * 32 * block, exactBytes * (bits * block + scaleBits))
              << "rank " << g << ": " << sent << " bytes against "
              << exactBytes;
        }
      }
    }
  }
}

/// A step that adds its reduce-scattered gradient to a running sum, the
/// state `acc`: after T steps, `acc` is the sum of every step's result.
std::string accumulatedReduceScatter(const std::string &meshShape,
                                     int64_t ranks, int64_t part) {
  return llvm::formatv(R"mlir(
zero.mesh @dp(shape = {0})
func.func @step(%g: tensor<{1}xf32>, %acc: tensor<{2}xf32>) -> tensor<{2}xf32> {{
  %r = zero.reduce_scatter %g on @dp reduce = sum
      : tensor<{1}xf32> -> tensor<{2}xf32>
  %next = arith.addf %acc, %r : tensor<{2}xf32>
  return %next : tensor<{2}xf32>
}
)mlir",
                       meshShape, ranks * part, part)
      .str();
}

// qgZ with error feedback: each rank keeps what its exchange lost (the
// residual, state that starts at zero) and sends it in the next step, so
// over T steps the sum of the results telescopes to the exact sum less the
// last residuals: its error stays within one step's bound (the
// contributions being gradient plus residual: a factor 2L / (2L - 1)),
// where without feedback it grows with every step (each rank's gradient is
// the same every step, so each step loses the same). Checked element by
// element after T steps at N = 1, 2, 3, 4, 8 and 2x4 (two hops, a residual
// each), on both lowerings.
TEST_P(QuantizedReduceScatter, ErrorFeedbackKeepsTheSumOfStepsWithinOneBound) {
  const int64_t block = 64, part = 100, steps = 12;
  zero::ZeroToLLVMOptions lowering;
  lowering.gpuLoops = std::get<0>(GetParam());
  int64_t bits = std::get<1>(GetParam());
  const double halfSteps = halfStepsOf(bits);
  for (const auto &[shape, axes] : kReduceMeshes) {
    int64_t ranks = 1;
    for (int64_t size : axes)
      ranks *= size;
    SCOPED_TRACE(std::string("mesh ") + shape);
    OwningOpRef<ModuleOp> given = parseSourceString<ModuleOp>(
        accumulatedReduceScatter(shape, ranks, part), &context);
    ASSERT_TRUE(given);
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
      return success(d.getSeverity() == mlir::DiagnosticSeverity::Remark);
    });
    std::vector<OwningOpRef<ModuleOp>> compressed;
    for (const char *feedback : {"", " error-feedback"}) {
      compressed.push_back(given->clone());
      llvm::Error error = runPassPipeline(
          *compressed.back(),
          llvm::formatv("zero-compress-reduce-scatter{{quantize-block={0} "
                        "bits={1}{2}}",
                        block, bits, feedback)
              .str());
      ASSERT_FALSE(error) << llvm::toString(std::move(error));
    }
    // One residual a hop, taken and returned by the step.
    auto withFeedback = compressed.back()->lookupSymbol<func::FuncOp>("step");
    unsigned hops = ranks > 1 ? static_cast<unsigned>(axes.size()) : 0;
    ASSERT_EQ(withFeedback.getNumArguments(), 2 + hops);
    ASSERT_EQ(withFeedback.getNumResults(), 1 + hops);

    llvm::SmallString<128> dir;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("zero-qgz-ef", dir));
    std::vector<std::vector<float>> gradients =
        writeGradients(dir.str().str(), ranks, part);
    std::vector<std::unique_ptr<Executable>> executables;
    for (ModuleOp module : {*given, *compressed[0], *compressed[1]}) {
      auto exe = Executable::compile(module, "step", lowering);
      ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
      executables.push_back(std::move(*exe));
    }
    // The three programs differ in their arguments: one launch each.
    std::vector<std::vector<rt::RankRun>> runs(3);
    for (size_t p = 0; p < executables.size(); ++p) {
      rt::LaunchOptions options;
      options.ranks = static_cast<int32_t>(ranks);
      options.steps = steps;
      options.inputs[0].path = (dir + "/g{rank}.npy").str();
      options.inputs[1].low = options.inputs[1].high = 0;
      std::vector<std::vector<rt::RankRun>> one;
      ASSERT_EQ(rt::launch({executables[p].get()}, options, one), "");
      runs[p] = std::move(one[0]);
    }
    llvm::sys::fs::remove_directories(dir);

    int64_t inner = axes.back(), outer = ranks / inner;
    double worstWithout = 0, worstWith = 0;
    for (int64_t g = 0; g < ranks; ++g) {
      const rt::Array &exact = runs[0][g].outputs[0];
      const rt::Array &without = runs[1][g].outputs[0];
      const rt::Array &with = runs[2][g].outputs[0];
      if (ranks == 1) {
        EXPECT_EQ(rt::compare(exact, with).differing, 0);
        continue;
      }
      for (int64_t begin = 0; begin < part; begin += block) {
        int64_t end = std::min(part, begin + block);
        double magnitude;
        double bound = oneStepBound(gradients, g, part, begin, end, outer,
                                    inner, halfSteps, magnitude);
        bound *= halfSteps / (halfSteps - 1);
        // Float rounding: T sums of T steps' values.
        bound += magnitude * ranks * steps * steps * std::ldexp(1.0, -20);
        for (int64_t e = begin; e < end; ++e) {
          double sum = rt::getElementAsDouble(exact, e);
          double errorWith = std::fabs(rt::getElementAsDouble(with, e) - sum);
          ASSERT_LE(errorWith, bound) << "rank " << g << " element " << e;
          worstWith = std::max(worstWith, errorWith / bound);
          worstWithout = std::max(
              worstWithout,
              std::fabs(rt::getElementAsDouble(without, e) - sum) / bound);
        }
      }
    }
    // Without feedback the same loss adds up step by step.
    if (ranks > 1) {
      EXPECT_GT(worstWithout, 4 * worstWith)
          << "without feedback " << worstWithout << " of one step's bound, "
          << "with it " << worstWith;
    }
  }
}

std::string
loweringName(const ::testing::TestParamInfo<std::tuple<bool, int64_t>> &info) {
  int64_t bits = std::get<1>(info.param);
  return std::string(std::get<0>(info.param) ? "GpuLoops" : "Cpu") +
         (bits == zero::kBF16ExchangeBits ? std::string("BF16")
                                          : "Int" + std::to_string(bits));
}
INSTANTIATE_TEST_SUITE_P(Lowerings, Quantize,
                         ::testing::Combine(::testing::Values(false, true),
                                            ::testing::Values(int64_t(8),
                                                              int64_t(4))),
                         loweringName);
INSTANTIATE_TEST_SUITE_P(
    Lowerings, QuantizedReduceScatter,
    ::testing::Combine(::testing::Values(false, true),
                       ::testing::Values(int64_t(8), int64_t(4),
                                         zero::kBF16ExchangeBits)),
    loweringName);

} // namespace
