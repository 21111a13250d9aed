//===- DelayUpdateTest.cpp - the delayed update's contract, executed ------===//
//
// zero-delay-update (the pipelines' delay-update) makes step t apply the
// gradients of step t - 1 and step 0 apply none. For a step that takes its
// gradients as arguments, T delayed steps over gradients g_0 .. g_{T-1}
// therefore give the state that T - 1 steps of the sharded step as given
// give over g_0 .. g_{T-2}: bit for bit, on every rank, at N = 1, 2, 3, 4,
// 8 and on a 2x4 mesh, on the CPU lowering and on the GPU's CPU replica,
// for AdamW (bias correction from a step-count argument, which the delayed
// update reads as of its own step) and for SGD with global-norm clipping
// (whose norm is delayed with the gradients). On the GPU's replica the
// delayed step with offload=optimizer (the moments and the delayed values
// in host memory, updated there) gives the delayed step's bits.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Execution/Runner.h"
#include "zero/InitZero.h"
#include "zero/runtime/Array.h"
#include "zero/runtime/Launcher.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include "gtest/gtest.h"

#include <cstring>
#include <random>

using namespace mlir;
using namespace zero::exec;

namespace {

/// One tensor's AdamW update: values prefixed `{0}`, of shape `{1}`, from
/// weight `%{0}`, moments `%m{0}`, `%v{0}` and gradient `%g{0}`.
constexpr const char *kAdamWUpdate = R"mlir(
  %{0}i1 = tensor.splat %inv1 : tensor<{1}xf32>
  %{0}i2 = tensor.splat %inv2 : tensor<{1}xf32>
  %{0}b1 = arith.constant dense<0.9> : tensor<{1}xf32>
  %{0}c1 = arith.constant dense<0.1> : tensor<{1}xf32>
  %{0}b2 = arith.constant dense<0.999> : tensor<{1}xf32>
  %{0}c2 = arith.constant dense<0.001> : tensor<{1}xf32>
  %{0}eps = arith.constant dense<1.0e-8> : tensor<{1}xf32>
  %{0}lr = arith.constant dense<0.001> : tensor<{1}xf32>
  %{0}wd = arith.constant dense<0.01> : tensor<{1}xf32>
  %{0}ma = arith.mulf %m{0}, %{0}b1 : tensor<{1}xf32>
  %{0}mb = arith.mulf %g{0}, %{0}c1 : tensor<{1}xf32>
  %{0}m2 = arith.addf %{0}ma, %{0}mb : tensor<{1}xf32>
  %{0}va = arith.mulf %v{0}, %{0}b2 : tensor<{1}xf32>
  %{0}gg = arith.mulf %g{0}, %g{0} : tensor<{1}xf32>
  %{0}vb = arith.mulf %{0}gg, %{0}c2 : tensor<{1}xf32>
  %{0}v2 = arith.addf %{0}va, %{0}vb : tensor<{1}xf32>
  %{0}mh = arith.mulf %{0}m2, %{0}i1 : tensor<{1}xf32>
  %{0}vh = arith.mulf %{0}v2, %{0}i2 : tensor<{1}xf32>
  %{0}sq = math.sqrt %{0}vh : tensor<{1}xf32>
  %{0}den = arith.addf %{0}sq, %{0}eps : tensor<{1}xf32>
  %{0}u = arith.divf %{0}mh, %{0}den : tensor<{1}xf32>
  %{0}dw = arith.mulf %{0}, %{0}wd : tensor<{1}xf32>
  %{0}ud = arith.addf %{0}u, %{0}dw : tensor<{1}xf32>
  %{0}s = arith.mulf %{0}ud, %{0}lr : tensor<{1}xf32>
  %{0}2 = arith.subf %{0}, %{0}s : tensor<{1}xf32>
)mlir";

/// AdamW on a 7x13 weight and a 5-element bias, each rank with its own
/// gradients; `t` is the step count of the bias correction.
constexpr const char *kAdamW = R"mlir(
zero.mesh @dp(shape = [{0}])
func.func @step(%w: tensor<7x13xf32>, %mw: tensor<7x13xf32>,
                %vw: tensor<7x13xf32>, %gw_local: tensor<7x13xf32>,
                %b: tensor<5xf32>, %mb: tensor<5xf32>, %vb: tensor<5xf32>,
                %gb_local: tensor<5xf32>, %t: f32)
    -> (tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>,
        tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {{
  %one = arith.constant 1.0 : f32
  %b1s = arith.constant 0.9 : f32
  %b2s = arith.constant 0.999 : f32
  %p1 = math.powf %b1s, %t : f32
  %p2 = math.powf %b2s, %t : f32
  %corr1 = arith.subf %one, %p1 : f32
  %corr2 = arith.subf %one, %p2 : f32
  %inv1 = arith.divf %one, %corr1 : f32
  %inv2 = arith.divf %one, %corr2 : f32
  %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<7x13xf32>
  %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>
{1}{2}
  return %w2, %wm2, %wv2, %b2, %bm2, %bv2
      : tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>,
        tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}
)mlir";

/// SGD with the global norm of both gradients clipped to 0.5.
constexpr const char *kClippedSGD = R"mlir(
zero.mesh @dp(shape = [{0}])
func.func @step(%w: tensor<7x13xf32>, %b: tensor<5xf32>,
                %gw_local: tensor<7x13xf32>, %gb_local: tensor<5xf32>)
    -> (tensor<7x13xf32>, tensor<5xf32>) {{
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %max_norm = arith.constant 0.5 : f32
  %tiny = arith.constant 1.0e-6 : f32
  %lr_w = arith.constant dense<0.1> : tensor<7x13xf32>
  %lr_b = arith.constant dense<0.1> : tensor<5xf32>
  %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<7x13xf32>
  %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %gw2 = arith.mulf %gw, %gw : tensor<7x13xf32>
  %gw_flat = tensor.collapse_shape %gw2 [[0, 1]] : tensor<7x13xf32> into tensor<91xf32>
  %sw = linalg.reduce ins(%gw_flat : tensor<91xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {{
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %gb2 = arith.mulf %gb, %gb : tensor<5xf32>
  %sb = linalg.reduce ins(%gb2 : tensor<5xf32>) outs(%sw : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {{
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %sq = tensor.extract %sb[] : tensor<f32>
  %norm = math.sqrt %sq : f32
  %den = arith.addf %norm, %tiny : f32
  %ratio = arith.divf %max_norm, %den : f32
  %scale = arith.minimumf %ratio, %one : f32
  %scale_w = tensor.splat %scale : tensor<7x13xf32>
  %cw = arith.mulf %gw, %scale_w : tensor<7x13xf32>
  %dw = arith.mulf %cw, %lr_w : tensor<7x13xf32>
  %w2 = arith.subf %w, %dw : tensor<7x13xf32>
  %scale_b = tensor.splat %scale : tensor<5xf32>
  %cb = arith.mulf %gb, %scale_b : tensor<5xf32>
  %db = arith.mulf %cb, %lr_b : tensor<5xf32>
  %b2 = arith.subf %b, %db : tensor<5xf32>
  return %w2, %b2 : tensor<7x13xf32>, tensor<5xf32>
}
)mlir";

struct DelayedProgram {
  const char *name;
  std::string (*text)(llvm::StringRef mesh);
  /// The gradient arguments (with their shapes) and the state results.
  std::vector<std::pair<unsigned, std::vector<int64_t>>> gradients;
  unsigned stateResults;
  /// The state the delay adds: AdamW's bucket of gradient shards; the
  /// clipped step's two shards (the norm's partial sums read them too) and
  /// its norm; the flag.
  unsigned delayedState;
  /// Arguments with a range of their own: the second moments (not
  /// negative) and the step count.
  std::vector<std::tuple<unsigned, double, double>> ranges;
};

std::string adamwStep(llvm::StringRef mesh) {
  return llvm::formatv(kAdamW, mesh,
                       llvm::formatv(kAdamWUpdate, "w", "7x13").str(),
                       llvm::formatv(kAdamWUpdate, "b", "5").str())
      .str();
}

std::string clippedSGDStep(llvm::StringRef mesh) {
  return llvm::formatv(kClippedSGD, mesh).str();
}

const DelayedProgram kDelayedPrograms[] = {
    {"adamw",
     adamwStep,
     {{3, {7, 13}}, {7, {5}}},
     6,
     2,
     {{2, 0, 1}, {6, 0, 1}, {8, 3, 3}}},
    {"clipped_sgd", clippedSGDStep, {{2, {7, 13}}, {3, {5}}}, 2, 4, {}},
};

const std::pair<const char *, int64_t> kDelayMeshes[] = {
    {"1", 1}, {"2", 2}, {"3", 3}, {"4", 4}, {"8", 8}, {"2, 4", 8}};

rt::Array randomGradient(std::vector<int64_t> shape, std::mt19937 &rng) {
  int64_t count = 1;
  for (int64_t extent : shape)
    count *= extent;
  std::uniform_real_distribution<float> unit(-2.0f, 2.0f);
  std::vector<float> values(count);
  for (float &v : values)
    v = unit(rng);
  rt::Array a{"f32", std::move(shape), {}};
  a.bytes.resize(values.size() * sizeof(float));
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

/// Parameter: whether the lowering is the GPU's loop form.
class DelayUpdate : public ::testing::TestWithParam<bool> {
protected:
  static void SetUpTestSuite() { zero::registerAllPasses(); }
  DelayUpdate() : context(registry()) { context.disableMultithreading(); }
  static DialectRegistry registry() {
    DialectRegistry r;
    zero::registerAllDialects(r);
    return r;
  }
  MLIRContext context;
};

/// Checks the contract for `program` on `mesh` (`ranks` ranks), both
/// sharded with the pipeline options `base`: T delayed steps against T - 1
/// as given; on the GPU's replica, offloaded too. `startsAtZero`: the
/// state the delay must add, when known.
void checkContract(MLIRContext &context, const DelayedProgram &program,
                   llvm::StringRef mesh, int64_t ranks, llvm::StringRef base,
                   const zero::ZeroToLLVMOptions &lowering,
                   std::optional<unsigned> startsAtZero,
                   bool linalgForm = false) {
  const int64_t steps = 4;
  SCOPED_TRACE(std::string(program.name) + " on mesh " + mesh.str() +
               " with '" + base.str() + "'" +
               (linalgForm ? " in linalg form" : ""));
  OwningOpRef<ModuleOp> given =
      parseSourceString<ModuleOp>(program.text(mesh), &context);
  ASSERT_TRUE(given);
  // As an MLIR pipeline emits it: each elementwise op a linalg.generic.
  if (linalgForm) {
    llvm::Error error =
        runPassPipeline(*given, "func.func(convert-elementwise-to-linalg)");
    ASSERT_FALSE(error) << llvm::toString(std::move(error));
  }
  // As given; delayed; on the GPU's replica, delayed with the optimizer's
  // state and the delayed values in host memory too, and with the weights
  // there as well.
  std::vector<const char *> options = {"", " delay-update"};
  if (lowering.gpuLoops) {
    options.push_back(" delay-update offload=optimizer");
    options.push_back(" delay-update offload=params");
  }
  std::vector<OwningOpRef<ModuleOp>> variants;
  for (const char *delay : options) {
    variants.push_back(given->clone());
    llvm::Error error = runPassPipeline(
        *variants.back(), llvm::formatv("zero-weight-update-sharding{{"
                                        "shard-function-boundary {0}{1}}",
                                        base, delay)
                              .str());
    ASSERT_FALSE(error) << llvm::toString(std::move(error));
  }
  auto delayed = variants[1]->lookupSymbol<func::FuncOp>("step");
  ASSERT_TRUE(delayed);
  // Each value the delay keeps starts at zero.
  unsigned added = 0;
  for (unsigned i = 0; i < delayed.getNumArguments(); ++i)
    added += delayed.getArgAttr(i, zero::kDelayedAttrName) ? 1 : 0;
  if (startsAtZero) {
    EXPECT_EQ(added, *startsAtZero);
  }
  EXPECT_GE(added, 2u);

  llvm::SmallString<128> dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("zero-delay", dir));
  std::mt19937 rng(7);
  for (int64_t step = 0; step < steps; ++step)
    for (int64_t rank = 0; rank < ranks; ++rank)
      for (const auto &[arg, shape] : program.gradients)
        ASSERT_EQ(rt::writeNpy(llvm::formatv("{0}/g{1}-{2}-{3}.npy", dir, arg,
                                             rank, step)
                                   .str(),
                               randomGradient(shape, rng)),
                  "");
  std::vector<std::vector<rt::RankRun>> runs;
  for (size_t v = 0; v < variants.size(); ++v) {
    auto exe = Executable::compile(*variants[v], "step", lowering);
    ASSERT_TRUE(static_cast<bool>(exe)) << llvm::toString(exe.takeError());
    rt::LaunchOptions launch;
    launch.ranks = static_cast<int32_t>(ranks);
    // As given: T - 1 steps; delayed: T.
    launch.steps = v == 0 ? steps - 1 : steps;
    for (const auto &[arg, shape] : program.gradients)
      launch.inputs[arg].path =
          llvm::formatv("{0}/g{1}-{{rank}-{{step}.npy", dir, arg).str();
    for (const auto &[arg, low, high] : program.ranges) {
      launch.inputs[arg].low = low;
      launch.inputs[arg].high = high;
    }
    std::vector<std::vector<rt::RankRun>> one;
    ASSERT_EQ(rt::launch({exe->get()}, launch, one), "");
    runs.push_back(std::move(one[0]));
  }
  llvm::sys::fs::remove_directories(dir);
  for (int64_t rank = 0; rank < ranks; ++rank) {
    for (unsigned r = 0; r < program.stateResults; ++r)
      EXPECT_EQ(rt::compare(runs[0][rank].outputs[r], runs[1][rank].outputs[r])
                    .differing,
                0)
          << "rank " << rank << " result " << r;
    // Offload moves where the delayed step runs, not what it computes.
    for (size_t v = 2; v < runs.size(); ++v)
      for (size_t r = 0; r < runs[1][rank].outputs.size(); ++r)
        EXPECT_EQ(
            rt::compare(runs[1][rank].outputs[r], runs[v][rank].outputs[r])
                .differing,
            0)
            << "offloaded (" << options[v] << "): rank " << rank << " result "
            << r;
  }
}

TEST_P(DelayUpdate, StepTAppliesTheGradientsOfStepTMinusOne) {
  zero::ZeroToLLVMOptions lowering;
  lowering.gpuLoops = GetParam();
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  for (const DelayedProgram &program : kDelayedPrograms)
    for (const auto &[mesh, ranks] : kDelayMeshes)
      for (bool linalgForm : {false, true})
        checkContract(context, program, mesh, ranks, "", lowering,
                      program.delayedState, linalgForm);
}

// The other options the pipelines take with it: ZeRO's stages 1 and 3, the
// deferred gather, the collectives' overlap, and a compressed exchange
// with error feedback (whose residual evolves as it does undelayed: the
// exchange does not read the update). Gradients given as arguments do not
// depend on the weights, so the contract holds with each.
TEST_P(DelayUpdate, ComposesWithThePipelinesOtherOptions) {
  zero::ZeroToLLVMOptions lowering;
  lowering.gpuLoops = GetParam();
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &d) {
    return success(d.getSeverity() == DiagnosticSeverity::Remark);
  });
  for (const char *base :
       {"stage=1", "stage=3", "defer-all-gather", "overlap",
        "reduce-dtype=int8 error-feedback quantize-block=16"})
    for (const auto &[mesh, ranks] :
         {std::pair<const char *, int64_t>{"4", 4}, {"2, 4", 8}})
      for (const DelayedProgram &program : kDelayedPrograms)
        checkContract(context, program, mesh, ranks, base, lowering,
                      std::nullopt);
}

INSTANTIATE_TEST_SUITE_P(Lowerings, DelayUpdate, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "GpuLoops" : "Cpu";
                         });

} // namespace
