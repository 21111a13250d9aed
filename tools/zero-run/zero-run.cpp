//===- zero-run.cpp - run a zero program on N ranks -----------------------===//
//
// Lowers a module in tensors with zero-to-llvm, JIT-compiles it, and runs its
// entry function on every rank of a local (threads) or MPI world. With
// --equivalent-after it also runs the program transformed by a pass pipeline
// on the same inputs, and compares every result on every rank.
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
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstring>

using namespace mlir;
using namespace zero::exec;
namespace cl = llvm::cl;

static cl::OptionCategory category("zero-run options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string>
    entry("entry",
          cl::desc("Function to run (default: the module's only "
                   "public function with a body)"),
          cl::cat(category));
static cl::opt<std::string>
    backend("backend",
            cl::desc("Runtime backend: local (threads) or mpi "
                     "(one process per rank, under mpirun)"),
            cl::init("local"), cl::cat(category));
static cl::opt<int> ranks("ranks",
                          cl::desc("Ranks of a local world (default: the "
                                   "size of the module's mesh, else 1)"),
                          cl::init(0), cl::cat(category));
static cl::opt<double> timeout("timeout",
                               cl::desc("Seconds a rank waits for the others "
                                        "in a collective"),
                               cl::init(60), cl::cat(category));
static cl::opt<bool> checkCollectives(
    "check-collectives",
    cl::desc("Have the ranks compare each collective before it runs even "
             "when zero-verify-collectives proved them alike"),
    cl::init(false), cl::cat(category));
static cl::opt<uint64_t> seed("seed", cl::desc("Seed of generated inputs"),
                              cl::init(1), cl::cat(category));
static cl::opt<int64_t>
    steps("steps",
          cl::desc("Training steps: each result that is the next value of "
                   "an argument (a weight, a moment) feeds it in the next "
                   "step; the other arguments are new each step (the step "
                   "in the seed, or {step} in an --arg file name)"),
          cl::init(1), cl::cat(category));
static cl::list<std::string>
    argFiles("arg",
             cl::desc("I=FILE.npy: argument I from a .npy file; "
                      "{rank} in FILE is replaced by the rank, {step} by "
                      "the step"),
             cl::cat(category));
static cl::list<unsigned>
    perRank("per-rank", cl::CommaSeparated, cl::value_desc("I,J,..."),
            cl::desc("Arguments whose generated values differ per rank "
                     "(local gradients, batches of data)"),
            cl::cat(category));
static cl::list<std::string>
    ranges("range", cl::value_desc("I=LOW:HIGH"),
           cl::desc("I=LOW:HIGH: generate argument I uniformly in "
                    "[LOW, HIGH) (default -1:1)"),
           cl::cat(category));
static cl::opt<std::string>
    passes("passes",
           cl::desc("Pass pipeline run before lowering, e.g. "
                    "'zero-shard-weight-update,canonicalize'"),
           cl::cat(category));
static cl::opt<bool> gpuLoops(
    "gpu-loops",
    cl::desc("Lower the program after --equivalent-after (else the program) "
             "with zero-to-llvm{gpu-loops}: its loop nests as zero-to-nvvm "
             "structures them for kernels, run on the CPU"),
    cl::cat(category));
static cl::opt<bool> runtimeChecks(
    "runtime-checks",
    cl::desc("Check each program's own memory accesses as it runs "
             "(zero-to-llvm{runtime-checks}): an index outside its buffer "
             "ends every rank with a message naming the op (default on)"),
    cl::init(true), cl::cat(category));

static cl::opt<bool> gpuLoopsGiven(
    "gpu-loops-given",
    cl::desc("With --equivalent-after: lower the program as given with "
             "zero-to-llvm{gpu-loops} too, so that both run as the GPU runs "
             "them (the comparison of the GPU check: the rewrite alone, "
             "the same splits and GEMM calls on both sides)"),
    cl::cat(category));
static cl::opt<std::string> equivalentAfter(
    "equivalent-after",
    cl::desc("Also run the program after this pass pipeline, on the same "
             "inputs, and compare every result on every rank"),
    cl::cat(category));
static cl::opt<std::string> reference(
    "reference",
    cl::desc("The one-device program the input was partitioned from "
             "(upstream sharding-propagation and shard-partition): run on one "
             "rank with each argument whole, a per-rank argument being the "
             "concatenation of the ranks' parts along the dimension the two "
             "programs' shapes differ in, and its results compared with every "
             "rank's within --max-ulp"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<uint64_t>
    maxUlp("max-ulp",
           cl::desc("Largest difference --equivalent-after accepts, in "
                    "units in the last place (default 0: bit-identical); also "
                    "--reference's"),
           cl::init(0), cl::cat(category));
static cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write each result as DIR/rank<r>/result<i>.npy"),
              cl::cat(category));
static cl::opt<std::string> inputDir(
    "write-inputs",
    cl::desc("Write each rank's arguments (whole values, as generated or "
             "read) as DIR/rank<r>/arg<i>.npy, e.g. for zero-launch"),
    cl::value_desc("DIR"), cl::cat(category));
static cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Write a Chrome trace (Perfetto) of the run to FILE: per rank a "
             "compute and a communication track; with --equivalent-after, of "
             "the rewritten program. Under mpi each process writes its own "
             "file ({rank} in FILE, else FILE.rank<r>)"),
    cl::value_desc("FILE"), cl::cat(category));
static cl::opt<bool> calibrateRuntime(
    "calibrate",
    cl::desc("Measure the cost model's parameters on this runtime (--backend; "
             "--ranks, default 2, or under mpi the job's size) and print them "
             "as options of zero-schedule-overlap and zero-report; takes no "
             "input file"),
    cl::cat(category));
static cl::opt<bool> printResults("print",
                                  cl::desc("Print each result of each rank"),
                                  cl::cat(category));

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

/// Parses `text` as I=REST.
static bool splitIndexed(StringRef text, unsigned &index, StringRef &rest) {
  auto [head, tail] = text.split('=');
  rest = tail;
  return !head.getAsInteger(10, index) && !tail.empty();
}

static llvm::Error fillInputs(rt::LaunchOptions &options) {
  for (const std::string &spec : argFiles) {
    unsigned index;
    StringRef path;
    if (!splitIndexed(spec, index, path))
      return llvm::createStringError("--arg expects I=FILE, got '%s'",
                                     spec.c_str());
    options.inputs[index].path = path.str();
  }
  for (unsigned index : perRank)
    options.inputs[index].perRank = true;
  for (const std::string &spec : ranges) {
    unsigned index;
    StringRef range;
    double low, high;
    if (!splitIndexed(spec, index, range) ||
        range.split(':').first.getAsDouble(low) ||
        range.split(':').second.getAsDouble(high) || !(low < high))
      return llvm::createStringError(
          "--range expects I=LOW:HIGH with LOW < HIGH, got '%s'", spec.c_str());
    options.inputs[index].low = low;
    options.inputs[index].high = high;
  }
  return llvm::Error::success();
}

static llvm::Expected<std::unique_ptr<Executable>>
compileVariant(ModuleOp original, StringRef pipeline, StringRef name,
               bool withGpuLoops) {
  OwningOpRef<ModuleOp> module = original.clone();
  if (llvm::Error error = runPassPipeline(*module, pipeline))
    return std::move(error);
  zero::ZeroToLLVMOptions lowering;
  lowering.gpuLoops = withGpuLoops;
  lowering.runtimeChecks = runtimeChecks;
  return Executable::compile(*module, name, lowering);
}

static void printCounters(const rt::RankRun &run) {
  static const char *kinds[] = {"all_reduce", "reduce_scatter", "all_gather"};
  report << "rank " << run.rank << ":";
  for (int k = 0; k < ZERO_NUM_COLLECTIVE_KINDS; ++k)
    report << " " << kinds[k] << " " << run.counters.issued[k] << " ("
           << run.counters.bytes_sent[k] << " B)";
  report << "\n";
}

static void printResult(const rt::RankRun &run, size_t index) {
  report << "rank " << run.rank << " result " << index << ":"
         << rt::formatValues(run.outputs[index]) << "\n";
}

static llvm::Error writeOutputs(const std::vector<rt::RankRun> &runs) {
  for (const rt::RankRun &run : runs)
    if (std::string error =
            rt::writeRankValues(outputDir, run.rank, "result", run.outputs);
        !error.empty())
      return llvm::createStringError("%s", error.c_str());
  return llvm::Error::success();
}

/// Compares the variant's results with the original's; prints one line per
/// result and returns whether all are within the bound. A result the variant
/// returns as a shard (#zero.shard) is compared with the same part of the
/// original's whole result, on its real elements.
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
  auto file = openInputFile(reference, &error);
  if (!file)
    return llvm::createStringError(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module || failed(zero::stripShardingAnnotations(*module)))
    return llvm::createStringError("cannot read --reference " + reference);
  auto entryName = findEntryFunction(*module, entry);
  if (!entryName)
    return entryName.takeError();
  zero::ZeroToLLVMOptions lowering;
  lowering.runtimeChecks = runtimeChecks;
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
                        : "after '" + equivalentAfter.getValue() + "', ")
             << "result " << r << ": ";
      if (!differing)
        report << "bit-identical to the one-device program on every rank\n";
      else
        report << differing << " element(s) differ from the one-device "
               << "program, at most " << worst << " ulp; bound " << maxUlp
               << "\n";
      ok &= worst <= maxUlp;
    }
  }
  return ok;
}

static bool reportEquivalence(const std::vector<rt::RankRun> &given,
                              const std::vector<rt::RankRun> &transformed,
                              const Executable &variant) {
  bool ok = true;
  ArrayRef<Type> resultTypes = variant.getSignature().wholeResultTypes;
  for (size_t r = 0; r < resultTypes.size(); ++r) {
    uint64_t worst = 0;
    int64_t differing = 0;
    int32_t worstRank = -1;
    const std::optional<rt::ShardLayout> &shard = variant.getResults()[r].shard;
    for (size_t i = 0; i < given.size(); ++i) {
      rt::Array a = given[i].outputs[r], b = transformed[i].outputs[r];
      if (shard) {
        int64_t index = shard->groupIndex[given[i].rank];
        a = rt::takeShard(a, shard->shardElements, index);
        rt::zeroShardPadding(b, shard->getWholeElements(), index);
      }
      if (a.dtype != b.dtype || a.shape != b.shape) {
        report << "result " << r << ": types differ after the pipeline\n";
        ok = false;
        continue;
      }
      rt::Difference d = rt::compare(a, b);
      differing += d.differing;
      if (d.differing && (worstRank < 0 || d.maxUlp > worst)) {
        worst = d.maxUlp;
        worstRank = given[i].rank;
      }
    }
    report << "result " << r << " (" << resultTypes[r] << "): ";
    if (!differing) {
      report << "bit-identical on " << given.size() << " rank(s)\n";
      continue;
    }
    report << differing << " element(s) differ, at most " << worst
           << " ulp (rank " << worstRank << "); bound " << maxUlp << "\n";
    ok &= worst <= maxUlp;
  }
  return ok;
}

/// The ranks of the world `--calibrate` measures: --ranks, else under mpi
/// the job's size as the launcher tells it, else 2.
static int calibrationRanks() {
  if (ranks > 0)
    return ranks;
  if (backend != "mpi")
    return 2;
  for (const char *variable : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *value = std::getenv(variable))
      return std::atoi(value);
  return 0;
}

static int calibrate(MLIRContext &context) {
  int meshSize = calibrationRanks();
  if (meshSize <= 0)
    return fail("--calibrate under mpi: cannot tell the job's size; give "
                "--ranks");
  rt::LaunchOptions options;
  options.backend = backend;
  options.ranks = meshSize;
  options.timeoutSeconds = timeout;
  options.checkCollectives = checkCollectives;
  options.seed = seed;
  auto calibration = zero::exec::calibrate(context, meshSize, options);
  if (!calibration)
    return fail(llvm::toString(calibration.takeError()));
  // Under mpi every process measured; the one of rank 0 prints.
  if (!calibration->holdsRankZero)
    return 0;
  report << "zero-run --calibrate: " << meshSize << " rank(s) (" << backend
         << "), per call: the slowest rank, best of " << calibration->repeats
         << "\n";
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
  report << "cost model: " << calibration->asOptions() << "\n";
  return 0;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  FlushReport flushAtExit;
  zero::registerAllPasses();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "zero-run: run a zero program on N ranks\n");

  // As zero-launch: a value given must mean what it says.
  if (ranks.getNumOccurrences() && ranks <= 0)
    return fail("--ranks expects a positive integer, got " +
                llvm::Twine(ranks.getValue()));
  if (steps < 1)
    return fail("--steps expects a positive integer, got " +
                llvm::Twine(steps.getValue()));
  if (!(timeout > 0))
    return fail("--timeout expects positive seconds, got " +
                llvm::formatv("{0}", timeout.getValue()).str());

  DialectRegistry registry;
  if (backend == "cuda-local" || backend == "nccl")
    return fail("zero-run runs programs on the CPU, and " + backend +
                " moves GPU buffers: compile for the GPU (zero-compile "
                "--target=cuda) and run the artifact with zero-launch "
                "--backend " +
                backend);
  zero::registerAllDialects(registry);
  MLIRContext context(registry);
  context.disableMultithreading(); // each rank runs on its own thread
  if (calibrateRuntime)
    return calibrate(context);

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1; // the parser reported the error with its location

  auto found = findEntryFunction(*module, entry);
  if (!found)
    return fail(llvm::toString(found.takeError()));
  std::string name = *found;

  rt::LaunchOptions options;
  options.backend = backend;
  int64_t meshRanks = getMeshRanks(*module);
  options.ranks = ranks > 0 ? ranks : meshRanks > 0 ? meshRanks : 1;
  options.timeoutSeconds = timeout;
  options.checkCollectives = checkCollectives;
  options.seed = seed;
  options.steps = steps;
  options.tracePath = traceFile;
  options.inputDir = inputDir;
  if (llvm::Error e = fillInputs(options))
    return fail(llvm::toString(std::move(e)));

  // --gpu-loops applies to the program under test: the rewritten one when
  // there are two (and to both with --gpu-loops-given).
  if (gpuLoopsGiven && equivalentAfter.empty())
    return fail("--gpu-loops-given compares two programs: it needs "
                "--equivalent-after");
  auto given =
      compileVariant(*module, passes, name,
                     gpuLoopsGiven || (gpuLoops && equivalentAfter.empty()));
  if (!given)
    return fail(llvm::toString(given.takeError()));
  std::vector<const rt::Program *> programs = {given->get()};
  std::unique_ptr<Executable> variant;
  if (!equivalentAfter.empty()) {
    std::string pipeline = passes.empty() ? std::string(equivalentAfter)
                                          : passes + "," + equivalentAfter;
    auto compiled =
        compileVariant(*module, pipeline, name, gpuLoops || gpuLoopsGiven);
    if (!compiled)
      return fail(llvm::toString(compiled.takeError()));
    variant = std::move(*compiled);
    if (variant->getSignature().wholeResultTypes !=
            (*given)->getSignature().resultTypes ||
        variant->getSignature().wholeArgTypes !=
            (*given)->getSignature().argTypes)
      return fail("the pipeline changed @" + name +
                  "'s signature (beyond arguments and results it shards)");
    programs.push_back(variant.get());
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
  for (auto [p, programRuns] : llvm::enumerate(runs)) {
    if (programs.size() > 1)
      report << (p == 0 ? "as given:\n" : "after '" + equivalentAfter + "':\n");
    for (const rt::RankRun &run : programRuns) {
      printCounters(run);
      if (printResults)
        for (size_t i = 0; i < run.outputs.size(); ++i)
          printResult(run, i);
    }
  }
  if (!outputDir.empty())
    if (llvm::Error e = writeOutputs(runs.back()))
      return fail(llvm::toString(std::move(e)));
  if (!reference.empty()) {
    auto matches = compareWithReference(context, **given, options, runs);
    if (!matches)
      return fail(llvm::toString(matches.takeError()));
    if (!*matches)
      return fail("the results differ from the one-device program by more "
                  "than " +
                  llvm::Twine(maxUlp) + " ulp");
    report << "matches the one-device program: "
           << (*given)->getResults().size()
           << " result(s) on every rank within " << maxUlp << " ulp\n";
  }
  if (programs.size() > 1) {
    if (!reportEquivalence(runs[0], runs[1], *variant))
      return fail("the results differ by more than " + llvm::Twine(maxUlp) +
                  " ulp after '" + equivalentAfter + "'");
    // Under mpi each process compares the ranks it ran; it says so.
    std::string where =
        options.backend == "local"
            ? std::string("every rank")
            : "this process's " + std::to_string(runs[0].size()) + " rank(s)";
    report << "equivalent: " << (*given)->getResults().size()
           << " result(s) on " << where << " within " << maxUlp << " ulp\n";
  }
  return 0;
}
