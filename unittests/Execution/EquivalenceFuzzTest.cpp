//===- EquivalenceFuzzTest.cpp - random update programs, run both ways ----===//
//
// Generates random weight-update programs (random elementwise DAGs over a
// gradient, a weight and optimizer state; sometimes a full reduction; random
// shapes, reductions and group sizes), runs each on its mesh's ranks as given
// and after the sharding pipeline on the same inputs, and requires every
// result on every rank to be bit-identical. The seed of each case is printed
// on failure, so a failing case reproduces alone.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "zero/Execution/Runner.h"
#include "zero/InitZero.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cmath>
#include <random>

using namespace mlir;
using namespace zero::exec;

namespace {

constexpr int kCases = 200;
constexpr char kPipeline[] = "zero-shard-weight-update,canonicalize,cse";

/// One random program: its text and the size of its mesh.
struct Program {
  std::string text;
  int ranks;
  /// Whether the update is scaled by a floating-point sum over all elements,
  /// which sharding re-associates (partial sums plus an all-reduce).
  bool hasSum = false;
};

Program generate(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  static const int groupSizes[] = {1, 2, 3, 4, 5, 8};
  int ranks = groupSizes[pick(6)];
  std::string shape;
  int rank = 1 + pick(2);
  int64_t numElements = 1;
  for (int d = 0; d < rank; ++d) {
    int extent = 1 + pick(17);
    shape += std::to_string(extent) + "x";
    numElements *= extent;
  }
  std::string t = "tensor<" + shape + "f32>";
  static const char *reductions[] = {"sum", "mean", "max", "min"};

  std::string body;
  llvm::raw_string_ostream os(body);
  os << "zero.mesh @dp(shape = [" << ranks << "])\n";
  os << "func.func @step(%w: " << t << ", %s0: " << t << ", %s1: " << t
     << ", %g_local: " << t << ") -> (" << t << ", " << t << ", " << t
     << ") {\n";
  os << "  %g = zero.all_reduce %g_local on @dp reduce = "
     << reductions[pick(4)] << " : " << t << "\n";
  os << "  %c0 = arith.constant dense<" << (pick(9) + 1) / 10.0 << "> : " << t
     << "\n";
  os << "  %c1 = arith.constant dense<" << (pick(9) + 1) / 4.0 << "> : " << t
     << "\n";
  // Values available to later ops; those derived from the gradient are the
  // update's.
  std::vector<std::string> all = {"%g", "%w", "%s0", "%s1", "%c0", "%c1"};
  std::vector<std::string> fromGradient = {"%g"};
  static const char *binary[] = {"arith.addf", "arith.subf", "arith.mulf",
                                 "arith.maximumf", "arith.minimumf"};
  int numOps = 2 + pick(9);
  for (int i = 0; i < numOps; ++i) {
    std::string lhs = i == 0 ? "%g" : fromGradient[pick(fromGradient.size())];
    std::string rhs = all[pick(all.size())];
    std::string name = "%v" + std::to_string(i);
    switch (pick(7)) {
    case 5: // a division by something kept away from zero
      os << "  " << name << "_d = math.absf " << rhs << " : " << t << "\n";
      os << "  " << name << "_e = arith.addf " << name << "_d, %c1 : " << t
         << "\n";
      os << "  " << name << " = arith.divf " << lhs << ", " << name
         << "_e : " << t << "\n";
      break;
    case 6: // a unary function
      os << "  " << name << " = " << (pick(2) ? "math.tanh " : "math.absf ")
         << lhs << " : " << t << "\n";
      break;
    default:
      os << "  " << name << " = " << binary[pick(5)] << " " << lhs << ", "
         << rhs << " : " << t << "\n";
    }
    all.push_back(name);
    fromGradient.push_back(name);
  }
  // Sometimes a full reduction (a norm-like scalar) scales the update; the
  // pass shards it into partial sums plus an all-reduce.
  std::string last = fromGradient.back();
  bool hasSum = pick(5) == 0;
  if (hasSum) {
    std::string flat = "tensor<" + std::to_string(numElements) + "xf32>";
    std::string reassociation = rank == 1 ? "[[0]]" : "[[0, 1]]";
    os << "  %sq = arith.mulf " << last << ", " << last << " : " << t << "\n";
    os << "  %flat = tensor.collapse_shape %sq " << reassociation << " : " << t
       << " into " << flat << "\n";
    os << "  %zero = arith.constant 0.0 : f32\n";
    os << "  %e = tensor.empty() : tensor<f32>\n";
    os << "  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> "
          "tensor<f32>\n";
    os << "  %sum = linalg.reduce ins(%flat : " << flat
       << ") outs(%init : tensor<f32>) dimensions = [0]\n"
          "    (%in: f32, %acc: f32) {\n"
          "      %a = arith.addf %in, %acc : f32\n"
          "      linalg.yield %a : f32\n"
          "    }\n";
    os << "  %norm = tensor.extract %sum[] : tensor<f32>\n";
    os << "  %scale = tensor.splat %norm : " << t << "\n";
    os << "  %scaled = arith.mulf " << last << ", %scale : " << t << "\n";
    last = "%scaled";
  }
  std::string state0 = fromGradient[pick(fromGradient.size())];
  std::string state1 =
      pick(3) ? fromGradient[pick(fromGradient.size())] : std::string("%s1");
  os << "  %w2 = arith.subf %w, " << last << " : " << t << "\n";
  os << "  return %w2, " << state0 << ", " << state1 << " : " << t << ", " << t
     << ", " << t << "\n}\n";
  return {body, ranks, hasSum};
}

/// The largest difference between two f32 arrays relative to the largest
/// magnitude in `a`: the normwise error of `b` as an approximation of `a`.
double normwiseError(const HostArray &a, const HostArray &b) {
  auto *x = reinterpret_cast<const float *>(a.bytes.data());
  auto *y = reinterpret_cast<const float *>(b.bytes.data());
  double largest = 0, difference = 0;
  for (int64_t i = 0, e = a.getNumElements(); i < e; ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i]))
      return INFINITY;
    if (std::isnan(x[i]) || x[i] == y[i])
      continue;
    difference = std::max(difference, std::fabs(double(x[i]) - double(y[i])));
  }
  for (int64_t i = 0, e = a.getNumElements(); i < e; ++i)
    if (std::isfinite(x[i]))
      largest = std::max(largest, std::fabs(double(x[i])));
  return difference == 0 ? 0 : difference / largest;
}

/// A sum of n terms re-associated into partial sums differs from the
/// sequential one by at most about 2 n u relative to the sum of magnitudes
/// (u = 2^-24); the update scales by that sum and subtracts, so the error of
/// a result is bounded relative to the result's largest magnitude, not per
/// element (a subtraction that cancels makes the per-element ulp distance
/// unbounded). The programs here sum at most 17 * 17 = 289 non-negative
/// squares, which the bound below covers with room to spare.
constexpr double kSumErrorBound = 64 * 0x1p-24;

class EquivalenceFuzz : public ::testing::Test {
protected:
  static void SetUpTestSuite() { zero::registerAllPasses(); }
};

TEST_F(EquivalenceFuzz, RandomUpdateProgramsComputeTheSameAfterSharding) {
  DialectRegistry registry;
  zero::registerAllDialects(registry);
  MLIRContext context(registry);
  context.disableMultithreading();
  int sharded = 0;
  double worstSumError = 0;
  for (int c = 0; c < kCases; ++c) {
    uint64_t seed = 1000 + c;
    Program program = generate(seed);
    SCOPED_TRACE(
        llvm::formatv("case seed {0}:\n{1}", seed, program.text).str());
    OwningOpRef<ModuleOp> given =
        parseSourceString<ModuleOp>(program.text, &context);
    ASSERT_TRUE(given);
    OwningOpRef<ModuleOp> rewritten = given->clone();
    PassManager pm(&context);
    ASSERT_TRUE(succeeded(parsePassPipeline(kPipeline, pm)));
    // The pass reports what it leaves replicated as remarks; they are
    // expected here.
    ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
      return success(d.getSeverity() == DiagnosticSeverity::Remark);
    });
    ASSERT_TRUE(succeeded(pm.run(*rewritten)));
    bool wasSharded = false;
    rewritten->walk([&](Operation *op) {
      wasSharded |= op->getName().getStringRef() == "zero.reduce_scatter";
    });
    sharded += wasSharded;

    auto a = Executable::compile(*given, "step");
    ASSERT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
    auto b = Executable::compile(*rewritten, "step");
    ASSERT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());

    RunOptions options;
    options.ranks = program.ranks;
    options.seed = seed;
    options.inputs[3].perRank = true;
    auto runs = runOnRanks({a->get(), b->get()}, options);
    ASSERT_TRUE(static_cast<bool>(runs)) << llvm::toString(runs.takeError());
    for (size_t r = 0; r < (*runs)[0].size(); ++r)
      for (size_t i = 0; i < (*runs)[0][r].outputs.size(); ++i) {
        Difference d =
            compare((*runs)[0][r].outputs[i], (*runs)[1][r].outputs[i]);
        if (program.hasSum) {
          double error =
              normwiseError((*runs)[0][r].outputs[i], (*runs)[1][r].outputs[i]);
          worstSumError = std::max(worstSumError, error);
          EXPECT_LE(error, kSumErrorBound)
              << "rank " << r << " result " << i << ": " << d.maxUlp
              << " ulp at most";
          continue;
        }
        EXPECT_EQ(d.differing, 0)
            << "rank " << r << " result " << i << ": first at " << d.firstIndex
            << ", " << d.maxUlp << " ulp";
      }
  }
  // Most cases must have been rewritten, or the test would prove little.
  EXPECT_GE(sharded, kCases / 2) << sharded << " of " << kCases << " sharded";
  std::printf("%d of %d random programs sharded, all equivalent (largest "
              "normwise error after a re-associated sum: %.3g u)\n",
              sharded, kCases, worstSumError / 0x1p-24);
}

} // namespace
