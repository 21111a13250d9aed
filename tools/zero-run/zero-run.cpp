//===- zero-run.cpp - run a zero program on N ranks -----------------------===//
//
// Lowers a module in tensors with zero-to-llvm, JIT-compiles it, and runs its
// entry function on every rank of a local (threads) or MPI world. With
// --equivalent-after it also runs the program transformed by a pass pipeline
// (by each of several, the program as given compiled once) on the same
// inputs, and compares every result on every rank.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "zero/Conversion/ShardToZero/ShardToZero.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Execution/Calibrate.h"
#include "zero/Execution/Runner.h"
#include "zero/InitZero.h"
#include "zero/runtime/CommandLine.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace zero::exec;
namespace {
/// zero-run's command line: a run's flags (zero/runtime/CommandLine.h), as
/// zero-launch takes them, and those of a program it compiles itself.
struct Options {
  std::string inputFile = "-";
  rt::RunFlags run;
  std::string entry, passes, reference;
  /// --equivalent-after, in the order given: each pipeline's program is
  /// compared with the program as given.
  std::vector<std::string> equivalentAfter;
  bool gpuLoops = false, gpuLoopsGiven = false, runtimeChecks = true;
  bool calibrate = false;
  /// Bytes a rank the bandwidth probes gather and reduce-scatter.
  int64_t calibrateBytes = 4 << 20;
};
} // namespace

static Options cli;

static rt::CommandLine makeCommandLine() {
  rt::CommandLine commandLine(
      "zero-run", "[INPUT.mlir] [options]",
      "Lowers a zero program (a module in tensors; standard input by "
      "default), JIT-compiles it and runs its entry on N ranks, with "
      "generated or given arguments; with --equivalent-after, also the "
      "program after a pass pipeline, on the same inputs, comparing every "
      "result on every rank.");
  rt::addRunFlags(commandLine, cli.run);
  commandLine.addOption("entry", "NAME",
                        "the function to run (default: the module's only "
                        "public function with a body)",
                        rt::textFlag("entry", cli.entry, "a name"));
  commandLine.addOption("passes", "PIPELINE",
                        "a pass pipeline run before lowering, e.g. "
                        "'zero-shard-weight-update,canonicalize'",
                        rt::textFlag("passes", cli.passes, "a pass pipeline"));
  commandLine.addOption(
      "equivalent-after", "PIPELINE",
      "also run the program after this pass pipeline, on the same inputs, "
      "and compare every result on every rank within --max-ulp; repeated, "
      "each pipeline's program is compared with the one program as given",
      rt::textListFlag("equivalent-after", cli.equivalentAfter,
                       "a pass pipeline"));
  commandLine.addOption(
      "reference", "FILE",
      "the one-device program the input was partitioned from (upstream "
      "sharding-propagation and shard-partition): run on one rank with each "
      "argument whole, a per-rank argument being the concatenation of the "
      "ranks' parts along the dimension the two programs' shapes differ in, "
      "and its results compared with every rank's within --max-ulp",
      rt::textFlag("reference", cli.reference, "a file"));
  commandLine.addSwitch(
      "gpu-loops",
      "lower the program after --equivalent-after (else the program) with "
      "zero-to-llvm{gpu-loops}: its loop nests as zero-to-nvvm structures "
      "them for kernels, run on the CPU",
      cli.gpuLoops);
  commandLine.addSwitch(
      "gpu-loops-given",
      "with --equivalent-after: lower the program as given with "
      "zero-to-llvm{gpu-loops} too, so that both run as the GPU runs them "
      "(the comparison of the GPU check: the rewrite alone, the same splits "
      "and GEMM calls on both sides)",
      cli.gpuLoopsGiven);
  commandLine.addSwitch(
      "runtime-checks",
      "check each program's own memory accesses as it runs "
      "(zero-to-llvm{runtime-checks}): an index outside its buffer ends "
      "every rank with a message naming the op (default on; "
      "--runtime-checks=false turns it off)",
      cli.runtimeChecks);
  commandLine.addSwitch(
      "calibrate",
      "measure the cost model's parameters on this runtime (--backend; "
      "--ranks, default 2, or under mpi the job's size) and print them as "
      "options of zero-schedule-overlap and zero-report; takes no input file",
      cli.calibrate);
  commandLine.addOption(
      "calibrate-bytes", "N",
      "bytes a rank the --calibrate bandwidth probes gather and "
      "reduce-scatter (default 4 MiB): a collective's rate can depend on its "
      "size, so measure at the size of the program's buckets",
      rt::integerFlag<int64_t>("calibrate-bytes", cli.calibrateBytes, 4,
                               "bytes from 4 to 4 GiB", int64_t(1) << 32));
  return commandLine;
}

/// Everything zero-run reports on stdout, written in one piece at exit, so
/// that the reports of processes sharing a terminal or a pipe (under mpirun)
/// never mix within a line.
static std::string reportText;
static llvm::raw_string_ostream report(reportText);
namespace {
struct FlushReport {
  ~FlushReport() {
    llvm::outs() << reportText;
    llvm::outs().flush();
  }
};
} // namespace

static int fail(const llvm::Twine &message) {
  llvm::errs() << "zero-run: error: " << message << "\n";
  return 1;
}

static llvm::Expected<std::unique_ptr<Executable>>
compileVariant(ModuleOp original, StringRef pipeline, StringRef name,
               bool withGpuLoops) {
  OwningOpRef<ModuleOp> module = original.clone();
  if (llvm::Error error = runPassPipeline(*module, pipeline))
    return std::move(error);
  zero::ZeroToLLVMOptions lowering;
  lowering.gpuLoops = withGpuLoops;
  lowering.runtimeChecks = cli.runtimeChecks;
  return Executable::compile(*module, name, lowering);
}

/// The whole value of which `parts` (rank order) are the consecutive
/// blocks along dimension `dim`.
static rt::Array concatenate(ArrayRef<rt::Array> parts, int64_t dim) {
  rt::Array whole = parts.front();
  whole.shape[dim] *= parts.size();
  int64_t outer = 1, chunk = rt::getElementBytes(whole.dtype);
  for (int64_t d = 0; d < static_cast<int64_t>(whole.shape.size()); ++d)
    (d < dim ? outer : chunk) *= d < dim ? whole.shape[d] : parts[0].shape[d];
  whole.bytes.clear();
  for (int64_t o = 0; o < outer; ++o)
    for (const rt::Array &part : parts)
      whole.bytes.insert(whole.bytes.end(), part.bytes.begin() + o * chunk,
                         part.bytes.begin() + (o + 1) * chunk);
  return whole;
}

/// The dimension along which `part` is one of `n` equal blocks of `whole`,
/// or -1.
static int64_t getSplitDimension(RankedTensorType whole, RankedTensorType part,
                                 int64_t n) {
  if (whole.getElementType() != part.getElementType() ||
      whole.getRank() != part.getRank())
    return -1;
  int64_t split = -1;
  for (int64_t d = 0; d < whole.getRank(); ++d) {
    if (whole.getDimSize(d) == part.getDimSize(d))
      continue;
    if (split >= 0 || whole.getDimSize(d) != n * part.getDimSize(d))
      return -1;
    split = d;
  }
  return split;
}

/// Runs the one-device program of --reference on one rank, on the whole
/// batch the ranks of `options` ran on in parts, and compares its results
/// with each run of `runs`. Reports; returns whether every result is within
/// --max-ulp.
static llvm::Expected<bool>
compareWithReference(MLIRContext &context, const Executable &partitioned,
                     const rt::LaunchOptions &options,
                     ArrayRef<std::vector<rt::RankRun>> runs) {
  if (options.backend != "local")
    return llvm::createStringError("--reference runs on the local backend");
  std::string error;
  auto file = openInputFile(cli.reference, &error);
  if (!file)
    return llvm::createStringError(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(zero::stripShardingAnnotations(*module)))
    return llvm::createStringError("cannot read --reference " + cli.reference);
  auto entryName = findEntryFunction(*module, cli.entry);
  if (!entryName)
    return entryName.takeError();
  zero::ZeroToLLVMOptions lowering;
  lowering.runtimeChecks = cli.runtimeChecks;
  auto one = Executable::compile(*module, *entryName, lowering);
  if (!one)
    return one.takeError();
  if ((*one)->getSignature().resultTypes !=
      partitioned.getSignature().wholeResultTypes)
    return llvm::createStringError(
        "--reference's results are not the partitioned program's");

  // Every rank's inputs, as the run made them; whole ones for the reference.
  ArrayRef<Type> partTypes = partitioned.getSignature().wholeArgTypes;
  ArrayRef<Type> wholeTypes = (*one)->getSignature().argTypes;
  if (partTypes.size() != wholeTypes.size())
    return llvm::createStringError(
        "--reference takes another number of arguments");
  std::vector<std::vector<rt::Array>> rankInputs(options.ranks);
  for (int32_t rank = 0; rank < options.ranks; ++rank)
    if (std::string e = rt::makeInputs(partitioned.getArguments(), options,
                                       rank, rankInputs[rank]);
        !e.empty())
      return llvm::createStringError("%s", e.c_str());
  SmallString<64> directory;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("zero-run-reference", directory))
    return llvm::createStringError(ec, "cannot make a temporary directory");
  rt::LaunchOptions oneRank = options;
  oneRank.ranks = 1;
  oneRank.tracePath.clear();
  oneRank.inputDir.clear();
  for (size_t i = 0; i < wholeTypes.size(); ++i) {
    rt::Array whole = rankInputs[0][i];
    if (wholeTypes[i] != partTypes[i]) {
      auto wholeType = dyn_cast<RankedTensorType>(wholeTypes[i]);
      auto partType = dyn_cast<RankedTensorType>(partTypes[i]);
      int64_t dim = wholeType && partType
                        ? getSplitDimension(wholeType, partType, options.ranks)
                        : -1;
      if (dim < 0)
        return llvm::createStringError(
            "argument #" + std::to_string(i) +
            " is neither the same in both programs nor one of " +
            std::to_string(options.ranks) + " equal parts of the whole");
      SmallVector<rt::Array> parts;
      for (int32_t rank = 0; rank < options.ranks; ++rank)
        parts.push_back(rankInputs[rank][i]);
      whole = concatenate(parts, dim);
    }
    SmallString<128> path(directory);
    llvm::sys::path::append(path, "arg" + std::to_string(i) + ".npy");
    if (std::string e = rt::writeNpy(std::string(path), whole); !e.empty())
      return llvm::createStringError("%s", e.c_str());
    oneRank.inputs[i] = {std::string(path), false, 0, 1};
  }
  std::vector<std::vector<rt::RankRun>> oneRun;
  std::string failure = rt::launch({one->get()}, oneRank, oneRun);
  llvm::sys::fs::remove_directories(directory);
  if (!failure.empty())
    return llvm::createStringError("%s", failure.c_str());
  const rt::RankRun &expected = oneRun[0][0];

  bool ok = true;
  for (auto [p, programRuns] : llvm::enumerate(runs)) {
    for (size_t r = 0; r < expected.outputs.size(); ++r) {
      uint64_t worst = 0;
      int64_t differing = 0;
      for (const rt::RankRun &run : programRuns) {
        const rt::Array &got = run.outputs[r];
        if (got.dtype != expected.outputs[r].dtype ||
            got.shape != expected.outputs[r].shape)
          return llvm::createStringError(
              "result #" + std::to_string(r) +
              " is not whole on every rank: compare before sharding it at "
              "the function boundary");
        rt::Difference d = rt::compare(expected.outputs[r], got);
        differing += d.differing;
        worst = std::max<uint64_t>(worst, d.maxUlp);
      }
      report << (p == 0 ? std::string()
                        : "after '" + cli.equivalentAfter[p - 1] + "', ")
             << "result " << r << ": ";
      if (!differing)
        report << "bit-identical to the one-device program on every rank\n";
      else
        report << differing << " element(s) differ from the one-device "
               << "program, at most " << worst << " ulp; bound "
               << rt::formatUlp(cli.run.maxUlp) << "\n";
      ok &= static_cast<double>(worst) <= cli.run.maxUlp;
    }
  }
  return ok;
}

/// The ranks of the world `--calibrate` measures: --ranks, else under mpi
/// the job's size as the launcher tells it, else 2.
static int calibrationRanks(const rt::LaunchOptions &launch) {
  if (cli.run.ranks > 0)
    return cli.run.ranks;
  if (launch.backend != "mpi")
    return 2;
  for (const char *variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *value = std::getenv(variable))
      return std::atoi(value);
  return 0;
}

static int calibrate(MLIRContext &context, rt::LaunchOptions options) {
  int meshSize = calibrationRanks(options);
  if (meshSize <= 0)
    return fail("--calibrate under mpi: cannot tell the job's size; give "
                "--ranks");
  options.ranks = meshSize;
  auto calibration = zero::exec::calibrate(context, meshSize, options,
                                           /*repeats=*/3, cli.calibrateBytes);
  if (!calibration)
    return fail(llvm::toString(calibration.takeError()));
  // Under mpi every process measured; the one of rank 0 prints.
  if (!calibration->holdsRankZero)
    return 0;
  report << "zero-run --calibrate: " << meshSize << " rank(s) ("
         << options.backend << "), per call: the slowest rank, best of "
         << calibration->repeats << "\n";
  ArrayRef<zero::exec::Probe> probes = calibration->probes;
  auto row = [&](const zero::exec::Probe &probe, const llvm::Twine &rate) {
    report << llvm::formatv("  {0,-42} {1,10:F3} ms  {2}\n", probe.what,
                            probe.seconds * 1e3, rate.str());
  };
  row(probes[0], "");
  row(probes[1],
      llvm::formatv("{0} B sent per rank", int64_t(probes[1].amount)).str());
  row(probes[2], llvm::formatv("{0:F3} GFLOP/s",
                               probes[2].amount / probes[2].seconds / 1e9)
                     .str());
  row(probes[3], llvm::formatv("{0:F3} G elements/s",
                               probes[3].amount / probes[3].seconds / 1e9)
                     .str());
  row(probes[4],
      llvm::formatv("{0} B sent per rank", int64_t(probes[4].amount)).str());
  row(probes[5], llvm::formatv("{0:F3} GB/s a rank",
                               probes[5].amount / probes[5].seconds / 1e9)
                     .str());
  report << "cost model: " << calibration->asOptions() << "\n";
  report << "offload: " << calibration->asOffloadOptions()
         << " (link-gbps is the device's; its default, 50, is PCIe Gen5 "
            "x16's)\n";
  return 0;
}

/// Compares the runs of the program after `pipeline` with those of the
/// program as given, and reports the outcome: on stdout, and a failure on
/// stderr. Returns whether every result is within --max-ulp.
static bool reportEquivalence(const Executable &variant,
                              const std::vector<rt::RankRun> &givenRuns,
                              const std::vector<rt::RankRun> &variantRuns,
                              StringRef pipeline,
                              const rt::LaunchOptions &options) {
  std::vector<std::string> resultNames;
  for (Type type : variant.getSignature().wholeResultTypes)
    resultNames.push_back(llvm::formatv("{0}", type).str());
  std::string comparison;
  bool equivalent =
      rt::compareRuns(variant.getResults(), resultNames, givenRuns,
                      variantRuns, cli.run.maxUlp, comparison);
  report << comparison;
  std::string maxUlp = rt::formatUlp(cli.run.maxUlp);
  if (!equivalent) {
    fail("the results differ by more than " + maxUlp + " ulp after '" +
         pipeline + "'");
    return false;
  }
  // Under mpi each process compares the ranks it ran; it says so.
  std::string where =
      options.backend == "local"
          ? std::string("every rank")
          : "this process's " + std::to_string(givenRuns.size()) + " rank(s)";
  report << "equivalent: " << variant.getResults().size() << " result(s) on "
         << where << " within " << maxUlp << " ulp\n";
  return true;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  FlushReport flushAtExit;
  zero::registerAllPasses();
  std::vector<std::string> positionals;
  if (std::string error = makeCommandLine().parse(argc, argv, positionals);
      !error.empty())
    return fail(error);
  if (positionals.size() > 1)
    return fail("one input file only, got '" + positionals[0] + "' and '" +
                positionals[1] + "'");
  if (!positionals.empty())
    cli.inputFile = positionals[0];
  if (std::string error = rt::checkRunFlags(cli.run); !error.empty())
    return fail(error);

  rt::LaunchOptions options = cli.run.launch;
  options.backend = cli.run.backend.empty() ? "local" : cli.run.backend;
  if (options.backend == "cuda-local" || options.backend == "nccl")
    return fail("zero-run runs programs on the CPU, and " + options.backend +
                " moves GPU buffers: compile for the GPU (zero-compile "
                "--target=cuda) and run the artifact with zero-launch "
                "--backend " +
                options.backend);
  DialectRegistry registry;
  zero::registerAllDialects(registry);
  MLIRContext context(registry);
  context.disableMultithreading(); // each rank runs on its own thread
  if (cli.calibrate)
    return calibrate(context, options);

  std::string error;
  auto file = openInputFile(cli.inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // the parser reported the error with its location

  auto found = findEntryFunction(*module, cli.entry);
  if (!found)
    return fail(llvm::toString(found.takeError()));
  std::string name = *found;
  int64_t meshRanks = getMeshRanks(*module);
  options.ranks = cli.run.ranks > 0 ? cli.run.ranks
                  : meshRanks > 0   ? meshRanks
                                    : 1;

  // --gpu-loops applies to the programs under test: the rewritten ones when
  // there are some (and to the program as given too with --gpu-loops-given).
  ArrayRef<std::string> pipelines = cli.equivalentAfter;
  if (cli.gpuLoopsGiven && pipelines.empty())
    return fail("--gpu-loops-given compares two programs: it needs "
                "--equivalent-after");
  auto given = compileVariant(*module, cli.passes, name,
                              cli.gpuLoopsGiven ||
                                  (cli.gpuLoops && pipelines.empty()));
  if (!given)
    return fail(llvm::toString(given.takeError()));
  std::vector<const rt::Program *> programs = {given->get()};
  std::vector<std::unique_ptr<Executable>> variants;
  for (const std::string &equivalentAfter : pipelines) {
    std::string pipeline = cli.passes.empty()
                               ? equivalentAfter
                               : cli.passes + "," + equivalentAfter;
    auto compiled = compileVariant(*module, pipeline, name,
                                   cli.gpuLoops || cli.gpuLoopsGiven);
    if (!compiled)
      return fail(llvm::toString(compiled.takeError()));
    const EntrySignature &rewritten = (*compiled)->getSignature();
    if (rewritten.wholeResultTypes != (*given)->getSignature().resultTypes ||
        rewritten.wholeArgTypes != (*given)->getSignature().argTypes) {
      // State the pipeline added (an error-feedback residual, the delayed
      // update's gradients) says why one call cannot compare.
      bool addedState =
          llvm::any_of(rewritten.arguments, [](const rt::ArtifactValue &v) {
            return v.startsAtZero;
          });
      return fail(
          "the pipeline '" + equivalentAfter + "' changed @" + name +
          "'s signature (beyond arguments and results it shards)" +
          (addedState
               ? ": it added state that starts at zero (error-feedback "
                 "residuals, or delay-update's gradients, with which step t "
                 "applies step t - 1's), so one call of each does not "
                 "compare; compare runs of several steps (zero-launch "
                 "--steps) instead"
               : ""));
    }
    programs.push_back(compiled->get());
    variants.push_back(std::move(*compiled));
  }

  std::vector<std::vector<rt::RankRun>> runs;
  if (std::string failure = rt::launch(programs, options, runs);
      !failure.empty())
    return fail(failure);

  report << "zero-run: @" << name << " on "
         << (options.backend == "local" ? options.ranks
                                        : static_cast<int>(runs[0].size()))
         << (options.backend == "local" ? " rank(s)" : " local rank(s)") << " ("
         << options.backend << ")\n";
  // The counters only: a run's time is zero-launch's to report, and
  // zero-run's report stays the same from run to run.
  for (auto [p, programRuns] : llvm::enumerate(runs)) {
    if (programs.size() > 1)
      report << (p == 0 ? std::string("as given:\n")
                        : "after '" + pipelines[p - 1] + "':\n");
    for (const rt::RankRun &run : programRuns) {
      report << rt::formatRun(run, /*withTimes=*/false) << "\n";
      if (cli.run.print)
        for (size_t i = 0; i < run.outputs.size(); ++i)
          report << rt::formatResult(run, i) << "\n";
    }
  }
  if (!cli.run.outputDir.empty())
    if (std::string problem = rt::writeResults(cli.run.outputDir, runs.back());
        !problem.empty())
      return fail(problem);
  std::string maxUlp = rt::formatUlp(cli.run.maxUlp);
  if (!cli.reference.empty()) {
    auto matches = compareWithReference(context, **given, options, runs);
    if (!matches)
      return fail(llvm::toString(matches.takeError()));
    if (!*matches)
      return fail("the results differ from the one-device program by more "
                  "than " +
                  maxUlp + " ulp");
    report << "matches the one-device program: "
           << (*given)->getResults().size()
           << " result(s) on every rank within " << maxUlp << " ulp\n";
  }
  // Every pipeline is compared, so that one run reports each of them.
  bool allEquivalent = true;
  for (auto [v, variant] : llvm::enumerate(variants)) {
    if (variants.size() > 1)
      report << "compared after '" << pipelines[v] << "':\n";
    allEquivalent &= reportEquivalence(*variant, runs[0], runs[v + 1],
                                       pipelines[v], options);
  }
  return allEquivalent ? 0 : 1;
}
