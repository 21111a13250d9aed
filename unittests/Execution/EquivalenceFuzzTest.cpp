//===- EquivalenceFuzzTest.cpp - random update programs, run both ways ----===//
//
// Generates random weight-update programs (random elementwise DAGs over a
// gradient, a weight and optimizer state; sometimes a full reduction; random
// shapes, reductions and group sizes), runs each on its mesh's ranks as given
// and after the sharding pipeline on the same inputs, and requires every
// result on every rank to be bit-identical. The seed of each case is printed
// on failure, so a failing case reproduces alone. A second generator makes
// programs of several parameters with interleaved norm terms, 2-D meshes,
// every ZeRO stage and small buckets, through the whole pipeline.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
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
constexpr int kManyCases = 60;
constexpr char kPipeline[] = "zero-shard-weight-update,canonicalize,cse";

/// One random program: its text and the size of its mesh.
struct Program {
  std::string text;
  int ranks;
};

using Rng = std::mt19937_64;

int pick(Rng &rng, int n) { return static_cast<int>(rng() % n); }

/// A random static shape of rank 1 or 2: its tensor type, rank and size.
struct RandomShape {
  std::string type;
  int rank;
  int64_t numElements;
};

RandomShape randomShape(Rng &rng) {
  RandomShape shape{"tensor<", 1 + pick(rng, 2), 1};
  for (int d = 0; d < shape.rank; ++d) {
    int extent = 1 + pick(rng, 17);
    shape.type += std::to_string(extent) + "x";
    shape.numElements *= extent;
  }
  shape.type += "f32>";
  return shape;
}

/// Writes a random elementwise DAG over the reduced gradient `%g<k>`, the
/// weight `%w<k>`, the state `%s0<k>`, `%s1<k>` and two constants; returns
/// the values derived from the gradient, the last one the update.
std::vector<std::string> writeUpdateDag(llvm::raw_ostream &os, Rng &rng,
                                        const std::string &t,
                                        const std::string &k) {
  os << "  %c0" << k << " = arith.constant dense<" << (pick(rng, 9) + 1) / 10.0
     << "> : " << t << "\n";
  os << "  %c1" << k << " = arith.constant dense<" << (pick(rng, 9) + 1) / 4.0
     << "> : " << t << "\n";
  std::vector<std::string> all = {"%g" + k,  "%w" + k,  "%s0" + k,
                                  "%s1" + k, "%c0" + k, "%c1" + k};
  std::vector<std::string> fromGradient = {"%g" + k};
  static const char *binary[] = {"arith.addf", "arith.subf", "arith.mulf",
                                 "arith.maximumf", "arith.minimumf"};
  int numOps = 2 + pick(rng, 9);
  for (int i = 0; i < numOps; ++i) {
    std::string lhs =
        i == 0 ? "%g" + k : fromGradient[pick(rng, fromGradient.size())];
    std::string rhs = all[pick(rng, all.size())];
    std::string name = "%v" + std::to_string(i) + "_" + k;
    switch (pick(rng, 7)) {
    case 5: // a division by something kept away from zero
      os << "  " << name << "_d = math.absf " << rhs << " : " << t << "\n";
      os << "  " << name << "_e = arith.addf " << name << "_d, %c1" << k
         << " : " << t << "\n";
      os << "  " << name << " = arith.divf " << lhs << ", " << name
         << "_e : " << t << "\n";
      break;
    case 6: // a unary function
      os << "  " << name << " = "
         << (pick(rng, 2) ? "math.tanh " : "math.absf ") << lhs << " : " << t
         << "\n";
      break;
    default:
      os << "  " << name << " = " << binary[pick(rng, 5)] << " " << lhs << ", "
         << rhs << " : " << t << "\n";
    }
    all.push_back(name);
    fromGradient.push_back(name);
  }
  return fromGradient;
}

/// Writes `%<name> = sum(x * x)` over `x` of `shape` into a 0-d accumulator
/// that starts at `init`.
void writeSumOfSquares(llvm::raw_ostream &os, const std::string &x,
                       const RandomShape &shape, const std::string &init,
                       const std::string &name) {
  std::string flat = "tensor<" + std::to_string(shape.numElements) + "xf32>";
  std::string reassociation = shape.rank == 1 ? "[[0]]" : "[[0, 1]]";
  os << "  " << name << "_sq = arith.mulf " << x << ", " << x << " : "
     << shape.type << "\n";
  os << "  " << name << "_flat = tensor.collapse_shape " << name << "_sq "
     << reassociation << " : " << shape.type << " into " << flat << "\n";
  os << "  " << name << " = linalg.reduce ins(" << name << "_flat : " << flat
     << ") outs(" << init << " : tensor<f32>) dimensions = [0]\n"
     << "    (%in: f32, %acc: f32) {\n"
     << "      %a = arith.addf %in, %acc : f32\n"
     << "      linalg.yield %a : f32\n"
     << "    }\n";
}

const char *kZeroAccumulator =
    "  %zero = arith.constant 0.0 : f32\n"
    "  %e = tensor.empty() : tensor<f32>\n"
    "  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> "
    "tensor<f32>\n";

Program generate(uint64_t seed) {
  Rng rng(seed);
  static const int groupSizes[] = {1, 2, 3, 4, 5, 8};
  int ranks = groupSizes[pick(rng, 6)];
  RandomShape shape = randomShape(rng);
  const std::string &t = shape.type;
  static const char *reductions[] = {"sum", "mean", "max", "min"};

  std::string body;
  llvm::raw_string_ostream os(body);
  os << "zero.mesh @dp(shape = [" << ranks << "])\n";
  os << "func.func @step(%w: " << t << ", %s0: " << t << ", %s1: " << t
     << ", %g_local: " << t << ") -> (" << t << ", " << t << ", " << t
     << ") {\n";
  os << "  %g = zero.all_reduce %g_local on @dp reduce = "
     << reductions[pick(rng, 4)] << " : " << t << "\n";
  std::vector<std::string> fromGradient = writeUpdateDag(os, rng, t, "");
  // Sometimes a full reduction (a norm-like scalar) scales the update; the
  // pass shards it into blocks' partials plus an all-gather of them.
  std::string last = fromGradient.back();
  if (pick(rng, 5) == 0) {
    os << kZeroAccumulator;
    writeSumOfSquares(os, last, shape, "%init", "%sum");
    os << "  %norm = tensor.extract %sum[] : tensor<f32>\n";
    os << "  %scale = tensor.splat %norm : " << t << "\n";
    os << "  %scaled = arith.mulf " << last << ", %scale : " << t << "\n";
    last = "%scaled";
  }
  std::string state0 = fromGradient[pick(rng, fromGradient.size())];
  std::string state1 = pick(rng, 3)
                           ? fromGradient[pick(rng, fromGradient.size())]
                           : std::string("%s1");
  os << "  %w2 = arith.subf %w, " << last << " : " << t << "\n";
  os << "  return %w2, " << state0 << ", " << state1 << " : " << t << ", " << t
     << ", " << t << "\n}\n";
  return {body, ranks};
}

/// A random program of several parameters written as users write them:
/// per parameter its all-reduce, then (sometimes) its norm term chained into
/// a global norm that scales every update, on a 1-D or 2-D mesh.
struct ManyParameters {
  Program program;
  std::string pipeline;
  int numParameters;
};

ManyParameters generateMany(uint64_t seed) {
  Rng rng(seed);
  static const int meshes[][2] = {{1, 2}, {1, 3}, {1, 4}, {2, 2},
                                  {2, 4}, {1, 8}, {3, 2}};
  const int *mesh = meshes[pick(rng, 7)];
  bool twoD = mesh[0] > 1;
  bool onAxis1 = twoD && pick(rng, 2);
  int ranks = mesh[0] * mesh[1];
  int numParameters = 2 + pick(rng, 4);
  bool clip = pick(rng, 2);
  std::vector<RandomShape> shapes;
  for (int k = 0; k < numParameters; ++k)
    shapes.push_back(randomShape(rng));

  std::string body;
  llvm::raw_string_ostream os(body);
  os << "zero.mesh @dp(shape = [";
  if (twoD)
    os << mesh[0] << ", ";
  os << mesh[1] << "])\nfunc.func @step(";
  std::string results;
  for (int k = 0; k < numParameters; ++k) {
    const std::string &t = shapes[k].type;
    std::string n = std::to_string(k);
    os << "%w" << n << ": " << t << ", %s0" << n << ": " << t << ", %s1" << n
       << ": " << t << ", %l" << n << ": " << t << ", ";
    results += (k ? ", " : "") + t + ", " + t;
  }
  os << "%unused: f32) -> (" << results << ") {\n";
  if (clip)
    os << kZeroAccumulator;
  std::string total = "%init";
  for (int k = 0; k < numParameters; ++k) {
    std::string n = std::to_string(k);
    os << "  %g" << n << " = zero.all_reduce %l" << n << " on @dp"
       << (onAxis1 ? " axes = [1]" : "")
       << " reduce = mean : " << shapes[k].type << "\n";
    if (clip) {
      writeSumOfSquares(os, "%g" + n, shapes[k], total, "%acc" + n);
      total = "%acc" + n;
    }
  }
  if (clip)
    os << "  %ssq = tensor.extract " << total << "[] : tensor<f32>\n"
       << "  %one = arith.constant 1.0 : f32\n"
       << "  %den = arith.addf %ssq, %one : f32\n"
       << "  %clip = arith.divf %one, %den : f32\n";
  std::string returned, types;
  for (int k = 0; k < numParameters; ++k) {
    const std::string &t = shapes[k].type;
    std::string n = std::to_string(k);
    std::vector<std::string> fromGradient = writeUpdateDag(os, rng, t, n);
    std::string update = fromGradient.back();
    if (clip) {
      os << "  %cs" << n << " = tensor.splat %clip : " << t << "\n"
         << "  %cu" << n << " = arith.mulf " << update << ", %cs" << n << " : "
         << t << "\n";
      update = "%cu" + n;
    }
    os << "  %W" << n << " = arith.subf %w" << n << ", " << update << " : " << t
       << "\n";
    returned += (k ? ", %W" : "%W") + n + ", " +
                fromGradient[pick(rng, fromGradient.size())];
    types += (k ? ", " : "") + t + ", " + t;
  }
  os << "  return " << returned << " : " << types << "\n}\n";
  int stage = 1 + pick(rng, 3);
  static const int bucketBytes[] = {0, 64, 512, 25 << 20};
  std::string pipeline =
      llvm::formatv("zero-weight-update-sharding{{stage={0} bucket-bytes={1} "
                    "min-bytes=0{2}}",
                    stage, bucketBytes[pick(rng, 4)], onAxis1 ? " axes=1" : "")
          .str();
  return {{body, ranks}, pipeline, numParameters};
}

/// zero's dialects, which each test's context loads (the context runs
/// without MLIR's thread pool).
static DialectRegistry zeroDialects() {
  DialectRegistry registry;
  zero::registerAllDialects(registry);
  return registry;
}

class EquivalenceFuzz : public ::testing::Test {
protected:
  static void SetUpTestSuite() { zero::registerAllPasses(); }
  EquivalenceFuzz() : context(zeroDialects()) {
    context.disableMultithreading();
  }
  MLIRContext context;
};

/// Runs `program` as given and after `pipeline` on the same inputs
/// (arguments `perRank` differ per rank) and requires every result on every
/// rank to be bit-identical, norms included: both lower every full
/// reduction in zero's one order. Returns whether the pipeline sharded an
/// update (a reduce-scatter, or at stage 1 a slice of the reduced
/// gradient).
bool expectEquivalent(MLIRContext &context, const Program &program,
                      StringRef pipeline, uint64_t seed,
                      ArrayRef<int> perRank) {
  OwningOpRef<ModuleOp> given =
      parseSourceString<ModuleOp>(program.text, &context);
  EXPECT_TRUE(given);
  if (!given)
    return false;
  OwningOpRef<ModuleOp> rewritten = given->clone();
  PassManager pm(&context);
  EXPECT_TRUE(succeeded(parsePassPipeline(pipeline, pm)));
  // The pass reports what it leaves replicated as remarks; they are
  // expected here.
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  EXPECT_TRUE(succeeded(pm.run(*rewritten)));
  bool wasSharded = false;
  rewritten->walk([&](Operation *op) {
    wasSharded |= isa<zero::ReduceScatterOp, zero::ShardSliceOp>(op);
  });

  auto a = Executable::compile(*given, "step");
  EXPECT_TRUE(static_cast<bool>(a)) << llvm::toString(a.takeError());
  auto b = Executable::compile(*rewritten, "step");
  EXPECT_TRUE(static_cast<bool>(b)) << llvm::toString(b.takeError());
  if (!a || !b)
    return wasSharded;

  rt::LaunchOptions options;
  options.ranks = program.ranks;
  options.seed = seed;
  for (int arg : perRank)
    options.inputs[arg].perRank = true;
  std::vector<std::vector<rt::RankRun>> runs;
  std::string failure = rt::launch({a->get(), b->get()}, options, runs);
  EXPECT_EQ(failure, "");
  if (!failure.empty())
    return wasSharded;
  for (size_t r = 0; r < runs[0].size(); ++r)
    for (size_t i = 0; i < runs[0][r].outputs.size(); ++i) {
      rt::Difference d =
          rt::compare(runs[0][r].outputs[i], runs[1][r].outputs[i]);
      EXPECT_EQ(d.differing, 0)
          << "rank " << r << " result " << i << ": first at " << d.firstIndex
          << ", " << d.maxUlp << " ulp";
    }
  return wasSharded;
}

/// `program` in the form an MLIR pipeline would hand zero: its elementwise
/// ops as linalg.generic (`convert-elementwise-to-linalg`), and by `form`
/// also fused into one generic per web (`linalg-fuse-elementwise-ops`) and
/// with every named op generalized (`linalg-generalize-named-ops`).
Program toLinalgForm(MLIRContext &context, const Program &program, int form) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(program.text, &context);
  EXPECT_TRUE(module);
  if (!module)
    return program;
  const char *pipelines[] = {
      "func.func(convert-elementwise-to-linalg)",
      "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops)",
      "func.func(convert-elementwise-to-linalg,linalg-fuse-elementwise-ops,"
      "linalg-generalize-named-ops)"};
  PassManager pm(&context);
  EXPECT_TRUE(succeeded(parsePassPipeline(pipelines[form % 3], pm)));
  EXPECT_TRUE(succeeded(pm.run(*module)));
  Program linalg{"", program.ranks};
  llvm::raw_string_ostream os(linalg.text);
  module->print(os);
  return linalg;
}

TEST_F(EquivalenceFuzz, RandomUpdateProgramsComputeTheSameAfterSharding) {
  int sharded = 0;
  for (int c = 0; c < kCases; ++c) {
    uint64_t seed = 1000 + c;
    Program program = generate(seed);
    SCOPED_TRACE(
        llvm::formatv("case seed {0}:\n{1}", seed, program.text).str());
    sharded += expectEquivalent(context, program, kPipeline, seed, {3});
  }
  // Most cases must have been rewritten, or the test would prove little.
  EXPECT_GE(sharded, kCases / 2) << sharded << " of " << kCases << " sharded";
  std::printf("%d of %d random programs sharded, all bit-identical\n", sharded,
              kCases);
}

// Several parameters per program, each all-reduced and then (in half the
// cases) its norm term chained into a global norm before any update, as
// users write clipping; 1-D and 2-D meshes (sharded on axis 1 or on both),
// ZeRO stages 1 to 3, and buckets from none to tiny to one for all: the
// whole pipeline, bucketing's reordering included.
TEST_F(EquivalenceFuzz,
       RandomManyParameterProgramsComputeTheSameAfterSharding) {
  int sharded = 0;
  for (int c = 0; c < kManyCases; ++c) {
    uint64_t seed = 5000 + c;
    ManyParameters many = generateMany(seed);
    SCOPED_TRACE(llvm::formatv("case seed {0}, {1}:\n{2}", seed, many.pipeline,
                               many.program.text)
                     .str());
    std::vector<int> gradients;
    for (int k = 0; k < many.numParameters; ++k)
      gradients.push_back(4 * k + 3);
    sharded +=
        expectEquivalent(context, many.program, many.pipeline, seed, gradients);
  }
  EXPECT_GE(sharded, kManyCases / 2)
      << sharded << " of " << kManyCases << " sharded";
  std::printf("%d of %d random many-parameter programs sharded, all "
              "bit-identical\n",
              sharded, kManyCases);
}

// The same random programs in the linalg forms MLIR pipelines emit: each
// shards exactly when its arith form does, and gives the same bits.
TEST_F(EquivalenceFuzz, RandomProgramsInLinalgFormComputeTheSameAfterSharding) {
  int sharded = 0, cases = 0;
  for (int c = 0; c < kCases; c += 4, ++cases) {
    uint64_t seed = 1000 + c;
    Program program = generate(seed);
    Program linalg = toLinalgForm(context, program, c / 4);
    SCOPED_TRACE(llvm::formatv("case seed {0}, form {1}:\n{2}", seed, c / 4 % 3,
                               linalg.text)
                     .str());
    bool arith = expectEquivalent(context, program, kPipeline, seed, {3});
    bool form = expectEquivalent(context, linalg, kPipeline, seed, {3});
    EXPECT_EQ(arith, form) << "the linalg form was sharded differently";
    sharded += form;
  }
  for (int c = 0; c < kManyCases; c += 4, ++cases) {
    uint64_t seed = 5000 + c;
    ManyParameters many = generateMany(seed);
    Program linalg = toLinalgForm(context, many.program, c / 4);
    SCOPED_TRACE(llvm::formatv("case seed {0}, form {1}, {2}:\n{3}", seed,
                               c / 4 % 3, many.pipeline, linalg.text)
                     .str());
    std::vector<int> gradients;
    for (int k = 0; k < many.numParameters; ++k)
      gradients.push_back(4 * k + 3);
    sharded +=
        expectEquivalent(context, linalg, many.pipeline, seed, gradients);
  }
  EXPECT_GE(sharded, cases / 2) << sharded << " of " << cases << " sharded";
  std::printf("%d of %d random programs in linalg form sharded, all "
              "bit-identical\n",
              sharded, cases);
}

} // namespace
