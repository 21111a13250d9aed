//===- gpt2_adamw.cpp - GPT-2 small's AdamW, sharded as users run it ------===//
//
// GPT-2 small's 148 parameter tensors (124.4M parameters; --layers scales the
// 12 transformer blocks down), AdamW with global-norm clipping written per
// parameter (Programs.h), sharded in the two forms users run:
//   - a single step with `shard-function-boundary` (state in and out as
//     shards);
//   - a training loop of --steps steps carrying the state;
// at ZeRO stages 1, 2 and 3, on N ranks. For each, zero-report's figures
// per rank against the formulas:
//   - bytes sent per step: stage 1 all-reduces the gradients, 2(N-1)/N * 4S;
//     stages 2 and 3 reduce-scatter them, (N-1)/N * 4S (this optimizer-only
//     step never reads a whole weight, so nothing is gathered within it; the
//     loop gathers w, m and v once when it returns them whole, printed
//     apart);
//   - model state per rank (w, m, v and the reduced gradient, f32): the
//     shards of w, m and v, 12S/N, plus the reduced gradient, whole (4S) at
//     stage 1 and a shard (4S/N) at stages 2 and 3: K*S/N with K = 16 bytes
//     a parameter.
// Then it runs the stage-2 step on the local backend and checks that the
// runtime's byte counters agree with the report.
//
//   zero-bench-gpt2-adamw [--ranks 4] [--layers 12] [--steps 2] [--run]
//
//===----------------------------------------------------------------------===//

#include "Programs.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "zero/Execution/Runner.h"
#include "zero/InitZero.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace mlir;
using namespace zero::exec;
using namespace zero::bench;
namespace cl = llvm::cl;

static cl::OptionCategory toolOptions("zero-bench-gpt2-adamw options");
static cl::opt<int> ranks("ranks", cl::cat(toolOptions), cl::desc("Ranks (N)"),
                          cl::init(4));
static cl::opt<int> layers("layers", cl::cat(toolOptions),
                           cl::desc("Transformer blocks (GPT-2 "
                                    "small has 12)"),
                           cl::init(12));
static cl::opt<int> steps("steps", cl::cat(toolOptions),
                          cl::desc("Steps of the training loop"), cl::init(2));
static cl::opt<bool> run("run", cl::cat(toolOptions),
                         cl::desc("Also run the stage-2 step on the local "
                                  "backend and compare the runtime's byte "
                                  "counters with the report"),
                         cl::init(true));

/// zero-report's figures for one function.
struct Figures {
  int64_t allReduce = 0, reduceScatter = 0, allGather = 0, state = 0;
};

/// Shards `text` with `pipeline` and reads zero-report's JSON figures of
/// `function`; the sharded module is left in `sharded`.
static std::optional<Figures> shardAndReport(MLIRContext &context,
                                             const std::string &text,
                                             StringRef pipeline,
                                             StringRef function,
                                             OwningOpRef<ModuleOp> &sharded) {
  sharded = parseSourceString<ModuleOp>(text, &context);
  if (!sharded)
    return std::nullopt;
  llvm::SmallString<128> path;
  if (llvm::sys::fs::createTemporaryFile("zero-bench-report", "json", path))
    return std::nullopt;
  PassManager pm(&context);
  std::string full =
      llvm::formatv("{0},zero-report{{format=json output={1}}", pipeline, path)
          .str();
  if (failed(parsePassPipeline(full, pm)) || failed(pm.run(*sharded)))
    return std::nullopt;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  llvm::sys::fs::remove(path);
  if (!buffer)
    return std::nullopt;
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    llvm::consumeError(json.takeError());
    return std::nullopt;
  }
  const llvm::json::Array *functions =
      json->getAsObject() ? json->getAsObject()->getArray("functions")
                          : nullptr;
  if (!functions)
    return std::nullopt;
  for (const llvm::json::Value &entry : *functions) {
    const llvm::json::Object *f = entry.getAsObject();
    if (!f || f->getString("function") != function)
      continue;
    Figures figures;
    const llvm::json::Object *kinds = f->getObject("collectives");
    auto bytes = [&](StringRef kind) -> int64_t {
      const llvm::json::Object *k = kinds ? kinds->getObject(kind) : nullptr;
      return k ? k->getInteger("bytes_per_rank").value_or(0) : 0;
    };
    figures.allReduce = bytes("all_reduce");
    figures.reduceScatter = bytes("reduce_scatter");
    figures.allGather = bytes("all_gather");
    if (const llvm::json::Object *state = f->getObject("model_state_bytes"))
      figures.state = state->getInteger("total").value_or(0);
    return figures;
  }
  return std::nullopt;
}

int main(int argc, char **argv) {
  zero::registerAllPasses();
  cl::HideUnrelatedOptions(toolOptions);
  cl::ParseCommandLineOptions(argc, argv,
                              "GPT-2 small AdamW, sharded as users run it\n");
  int n = ranks;
  Gpt2Config config;
  config.layers = layers;
  std::vector<Shape> shapes = gpt2Shapes(config);
  double S = countElements(shapes);
  llvm::outs() << "GPT-2 (" << layers << " blocks): " << shapes.size()
               << " tensors, S = " << int64_t(S)
               << " parameters, AdamW with global-norm clipping, N = " << n
               << "\n";

  DialectRegistry registry;
  zero::registerAllDialects(registry);
  MLIRContext context(registry);
  context.disableMultithreading();

  double ring = double(n - 1) / n * 4 * S;
  llvm::outs() << llvm::format("%-26s %5s %15s %15s %7s %15s %15s %7s\n",
                               "form", "stage", "bytes/step", "formula",
                               "ratio", "state B", "formula", "ratio");
  double worstBytes = 0, worstState = 0;
  for (int loop : {0, 1}) {
    for (int stage = 1; stage <= 3; ++stage) {
      StepOptions options;
      options.mesh = {n};
      options.clip = true;
      options.loopSteps = loop ? steps.getValue() : 0;
      std::string pipeline =
          llvm::formatv("zero-weight-update-sharding{{stage={0}{1}}", stage,
                        loop ? "" : " shard-function-boundary")
              .str();
      OwningOpRef<ModuleOp> sharded;
      std::optional<Figures> f =
          shardAndReport(context, optimizerStep(shapes, options), pipeline,
                         loop ? "train" : "step", sharded);
      if (!f) {
        llvm::errs() << "zero-bench-gpt2-adamw: " << pipeline << " failed\n";
        return 1;
      }
      int calls = loop ? steps.getValue() : 1;
      // The loop's gather of w, m and v at its return happens once a call.
      double perStep =
          double(f->allReduce + f->reduceScatter + (loop ? 0 : f->allGather)) /
          calls;
      double bytesFormula = stage == 1 ? 2 * ring : ring;
      double stateFormula = stage == 1 ? 12 * S / n + 4 * S : 16 * S / n;
      double bytesRatio = perStep / bytesFormula;
      double stateRatio = f->state / stateFormula;
      worstBytes = std::max(worstBytes, bytesRatio);
      worstState = std::max(worstState, stateRatio);
      std::string form = loop ? llvm::formatv("loop of {0} steps", calls).str()
                              : "step, function boundary";
      llvm::outs() << llvm::format(
          "%-26s %5d %15.0f %15.0f %6.4fx %15lld %15.0f %6.4fx\n", form.c_str(),
          stage, perStep, bytesFormula, bytesRatio, (long long)f->state,
          stateFormula, stateRatio);
      if (loop)
        llvm::outs() << llvm::format(
            "%-26s %5s %15lld %15.0f %6.4fx  (w, m, v gathered once at "
            "return)\n",
            "", "", (long long)f->allGather, 3 * ring,
            f->allGather / (3 * ring));
      if (!run || loop || stage != 2)
        continue;
      // The step, executed: the runtime's counters against the report.
      zero::rt::LaunchOptions runOptions;
      runOptions.ranks = n;
      runOptions.keepOutputs = false;
      runOptions.timeoutSeconds = 600;
      for (size_t i = 0; i < shapes.size(); ++i) {
        runOptions.inputs[4 * i + 2].low = 0; // second moments
        runOptions.inputs[4 * i + 3].perRank = true;
      }
      runOptions.inputs[4 * shapes.size()] = {"", false, 1, 100};
      auto start = std::chrono::steady_clock::now();
      auto exe = Executable::compile(*sharded, "step");
      if (!exe) {
        llvm::errs() << llvm::toString(exe.takeError()) << "\n";
        return 1;
      }
      std::vector<std::vector<zero::rt::RankRun>> runs;
      if (std::string error = zero::rt::launch({exe->get()}, runOptions, runs);
          !error.empty()) {
        llvm::errs() << error << "\n";
        return 1;
      }
      const zero_counters &c = runs[0][0].counters;
      uint64_t counted = c.bytes_sent[ZERO_ALL_REDUCE] +
                         c.bytes_sent[ZERO_REDUCE_SCATTER] +
                         c.bytes_sent[ZERO_ALL_GATHER];
      llvm::outs() << llvm::format(
          "%-26s %5s %15llu bytes counted by the runtime on rank 0 (%s the "
          "report; JIT and run %.1f s)\n",
          "  executed", "", (unsigned long long)counted,
          counted == uint64_t(perStep) ? "equal to" : "NOT equal to",
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        start)
              .count());
    }
  }
  llvm::outs() << llvm::formatv(
      "bytes per step against the formulas: worst {0:F4}x (target 1.00); "
      "model state against K*S/N: worst {1:F4}x (target at most 1.01)\n",
      worstBytes, worstState);
  return 0;
}
