//===- zero-compile.cpp - a zero program to a shared-library artifact -----===//
//
// Compiles a zero program ahead of time into one shared library that
// zero-launch (runtime/, no LLVM) runs on N ranks:
//
//   zero-compile model.mlir -o model.so [--passes PIPELINE] [--entry NAME]
//   zero-launch model.so --arg 0=w.npy ... --output-dir out
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "zero/Execution/Compile.h"
#include "zero/Execution/Runner.h"
#include "zero/InitZero.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace cl = llvm::cl;

static cl::OptionCategory category("zero-compile options");
static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::init("-"), cl::cat(category));
static cl::opt<std::string> outputFile("o", cl::desc("The artifact to write"),
                                       cl::value_desc("FILE.so"), cl::Required,
                                       cl::cat(category));
static cl::opt<std::string>
    entry("entry",
          cl::desc("Function to compile (default: the module's only public "
                   "one)"),
          cl::cat(category));
static cl::opt<std::string>
    passes("passes",
           cl::desc("Pass pipeline run before lowering, e.g. "
                    "zero-weight-update-sharding"),
           cl::cat(category));
static cl::opt<std::string> loweringOptions(
    "lowering-options", cl::cat(category),
    cl::desc("Options of the lowering, as in a pass pipeline: of "
             "zero-to-llvm (cpu, e.g. 'outline-loop-nests=false') or "
             "zero-to-nvvm (cuda, e.g. 'link-gbps=25'), over those that "
             "zero-compile's flags set"),
    cl::init(""));
static cl::opt<zero::exec::ArtifactTarget> target(
    "target", cl::desc("What the artifact runs on"),
    cl::values(clEnumValN(zero::exec::ArtifactTarget::Cpu, "cpu",
                          "the host's architecture"),
               clEnumValN(zero::exec::ArtifactTarget::Cuda, "cuda",
                          "host code on the CPU, kernels on an NVIDIA GPU")),
    cl::init(zero::exec::ArtifactTarget::Cpu), cl::cat(category));
// The GPU settings are zero-to-nvvm's options, with its defaults
// (zero/Pipelines/Passes.td).
static const zero::ZeroToNVVMOptions nvvmDefaults;
static cl::opt<std::string> chip("chip",
                                 cl::desc("cuda: zero-to-nvvm's chip, the GPU "
                                          "architecture"),
                                 cl::init(nvvmDefaults.chip),
                                 cl::cat(category));
static cl::opt<zero::GpuFormat>
    gpuFormat("gpu-format",
              cl::desc("cuda: zero-to-nvvm's gpu-format, how kernels are "
                       "embedded"),
              zero::gpuFormatValues(), cl::init(nvvmDefaults.gpuFormat),
              cl::cat(category));
static cl::opt<zero::GpuCollectives> gpuCollectives(
    "gpu-collectives",
    cl::desc("cuda: zero-to-nvvm's gpu-collectives, where collectives move "
             "data"),
    zero::gpuCollectivesValues(), cl::init(nvvmDefaults.gpuCollectives),
    cl::cat(category));
static cl::opt<std::string>
    cudaPath("cuda-path",
             cl::desc("cuda: zero-to-nvvm's cuda-path, the CUDA toolkit "
                      "(ptxas, libdevice)"),
             cl::init(nvvmDefaults.cudaPath), cl::cat(category));
static cl::opt<std::string>
    hostCpu("host-cpu",
            cl::desc("CPU of the host code: an LLVM CPU name or native "
                     "(default x86-64-v2, which any recent x86-64 runs)"),
            cl::init("x86-64-v2"), cl::cat(category));
static cl::opt<std::string>
    linker("linker",
           cl::desc("Compiler driver that links the shared library (default: "
                    "the C compiler zero was built with)"),
           cl::cat(category));
static cl::opt<unsigned> codegenThreads(
    "codegen-threads",
    cl::desc("Threads that generate code, each for a partition of the "
             "program's functions (default 0: one per core)"),
    cl::init(0), cl::cat(category));
static cl::opt<bool>
    printDescription("print-description",
                     cl::desc("Print the artifact's description to stdout"),
                     cl::cat(category));

static int fail(const llvm::Twine &message) {
  llvm::errs() << "zero-compile: error: " << message << "\n";
  return 1;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  DialectRegistry registry;
  zero::registerAllDialects(registry);
  zero::registerAllPasses();
  // --mlir-timing: the time of each phase (parse, pipeline, MLIR lowering
  // pass by pass, LLVM optimization, code generation, link).
  mlir::registerDefaultTimingManagerCLOptions();
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv,
      "zero-compile: a zero program to a shared-library artifact for "
      "zero-launch\n");

  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  MLIRContext context(registry);
  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  TimingScope parsing = timing.nest("parse");
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  parsing.stop();
  if (!module)
    return 1; // the parser reported the error with its location

  auto found = zero::exec::findEntryFunction(*module, entry);
  if (!found)
    return fail(llvm::toString(found.takeError()));
  std::string name = *found;
  TimingScope pipeline = timing.nest("--passes pipeline");
  if (llvm::Error e = zero::exec::runPassPipeline(*module, passes))
    return fail(llvm::toString(std::move(e)));
  pipeline.stop();

  zero::exec::ArtifactOptions options;
  options.target = target;
  options.cuda.chip = chip;
  options.cuda.gpuFormat = gpuFormat;
  options.cuda.gpuCollectives = gpuCollectives;
  options.cuda.cudaPath = cudaPath;
  options.hostCpu = hostCpu;
  options.linker = linker;
  options.codegenThreads = codegenThreads;
  options.loweringOptions = loweringOptions;
  std::string description;
  if (llvm::Error e = zero::exec::compileArtifact(
          *module, name, options, outputFile, &description, &timing))
    return fail(llvm::toString(std::move(e)));
  // auto fell back to PTX: say so, since the driver then compiles the
  // kernels each time the artifact loads.
  if (target == zero::exec::ArtifactTarget::Cuda &&
      gpuFormat == zero::GpuFormat::Auto &&
      llvm::StringRef(description).contains("\"kernels\": \"ptx\""))
    llvm::errs() << "zero-compile: note: no ptxas (give the CUDA toolkit "
                    "with --cuda-path): the kernels are embedded as PTX, "
                    "which the driver compiles when the artifact loads\n";
  if (printDescription)
    llvm::outs() << description << "\n";
  return 0;
}
