//===- QuantizeTest.cpp - block quantization, run and checked -------------===//
//
// Runs zero.quantize and zero.dequantize through the CPU lowering and its
// GPU-loop form on inputs made to hit every case (magnitudes from 1e-30 to
// 1e30 a block, a block of zeros, ties between two levels, a short last
// block, a NaN, an infinity), and checks every element against the stated
// semantics computed here in float: the same scales, levels and values bit
// for bit, and each value within max|block| / 254 of its input.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
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

template <typename T> T element(const rt::Array &a, int64_t i) {
  T v;
  std::memcpy(&v, a.bytes.data() + i * sizeof(T), sizeof(T));
  return v;
}

bool sameBits(float a, float b) {
  return std::memcmp(&a, &b, sizeof(float)) == 0 ||
         (std::isnan(a) && std::isnan(b));
}

std::string program(const Case &c) {
  int64_t blocks = zero::getNumQuantBlocks(c.size, c.block);
  return llvm::formatv(R"mlir(
func.func @step(%x: tensor<{0}x{1}xf32>)
    -> (tensor<{0}x{1}xi8>, tensor<{0}x{2}xf32>, tensor<{0}x{1}xf32>) {{
  %q, %s = zero.quantize %x block = {3}
      : tensor<{0}x{1}xf32> -> tensor<{0}x{1}xi8>, tensor<{0}x{2}xf32>
  %d = zero.dequantize %q, %s block = {3}
      : tensor<{0}x{1}xi8>, tensor<{0}x{2}xf32> -> tensor<{0}x{1}xf32>
  return %q, %s, %d : tensor<{0}x{1}xi8>, tensor<{0}x{2}xf32>, tensor<{0}x{1}xf32>
}
)mlir",
                       c.rows, c.size, blocks, c.block)
      .str();
}

class Quantize : public ::testing::TestWithParam<bool> {
protected:
  static void SetUpTestSuite() { zero::registerAllPasses(); }
  Quantize() : context(registry()) { context.disableMultithreading(); }
  static DialectRegistry registry() {
    DialectRegistry r;
    zero::registerAllDialects(r);
    return r;
  }
  MLIRContext context;
};

/// Checks block `b` of row `r`: scale, levels and values against the
/// semantics, and the bound.
void checkBlock(const Case &c, const std::vector<float> &x,
                const std::vector<rt::Array> &out, int64_t r, int64_t b) {
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
  float scale = largest / 127.0f;
  float got = element<float>(out[1], r * blocks + b);
  ASSERT_TRUE(sameBits(got, scale))
      << "row " << r << " block " << b << ": scale " << got << ", expected "
      << scale;
  for (int64_t i = begin; i < end; ++i) {
    int64_t at = r * c.size + i;
    float level = std::nearbyint(x[at] / scale);
    level =
        std::isnan(level) ? 0 : std::fmax(std::fmin(level, 127.0f), -127.0f);
    int8_t q = element<int8_t>(out[0], at);
    ASSERT_EQ(q, static_cast<int8_t>(level))
        << "element " << at << " (" << x[at] << ", scale " << scale << ")";
    float value = element<float>(out[2], at);
    ASSERT_TRUE(sameBits(value, static_cast<float>(q) * scale))
        << "element " << at;
    if (std::isfinite(largest)) {
      double bound = largest / 254.0 + largest * std::ldexp(1.0, -20);
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
  lowering.gpuLoops = GetParam();
  const Case cases[] = {{1, 10, 4}, {3, 4096, 4096}, {2, 5000, 4096},
                        {1, 1, 16}, {5, 33, 8},      {4, 1000, 7},
                        {6, 64, 64}};
  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("zero-quantize", dir));
  uint64_t seed = 1;
  for (const Case &c : cases) {
    SCOPED_TRACE(
        llvm::formatv("{0}x{1}, blocks of {2}", c.rows, c.size, c.block).str());
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(program(c), &context);
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
        checkBlock(c, x, out, r, b);
  }
  llvm::sys::fs::remove_directories(dir);
}

INSTANTIATE_TEST_SUITE_P(Lowerings, Quantize, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "GpuLoops" : "Cpu";
                         });

} // namespace
