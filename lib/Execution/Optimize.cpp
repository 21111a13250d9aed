//===- Optimize.cpp - LLVM's optimization pipeline as zero runs it --------===//

#include "zero/Execution/Optimize.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Target/TargetMachine.h"

using namespace zero;

llvm::Error exec::optimizeModule(llvm::Module &module, unsigned level,
                                 llvm::TargetMachine *machine) {
  llvm::OptimizationLevel optimization;
  switch (level) {
  case 1:
    optimization = llvm::OptimizationLevel::O1;
    break;
  case 2:
    optimization = llvm::OptimizationLevel::O2;
    break;
  case 3:
    optimization = llvm::OptimizationLevel::O3;
    break;
  default:
    return llvm::createStringError("no LLVM optimization level %u", level);
  }
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager sccs;
  llvm::ModuleAnalysisManager modules;
  // Without the standard instrumentation, the pass managers would run
  // every pass on an `optnone` function too.
  llvm::PassInstrumentationCallbacks callbacks;
  llvm::StandardInstrumentations instrumentation(module.getContext(),
                                                 /*DebugLogging=*/false);
  instrumentation.registerCallbacks(callbacks, &modules);
  llvm::PipelineTuningOptions tuning;
  tuning.LoopUnrolling = true;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder builder(machine, tuning, std::nullopt, &callbacks);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(sccs);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, sccs, modules);
  llvm::ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(optimization);
  pipeline.run(module, modules);
  return llvm::Error::success();
}
