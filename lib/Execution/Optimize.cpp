//===- Optimize.cpp - LLVM's optimization pipeline as zero runs it --------===//

#include "zero/Execution/Optimize.h"
#include "llvm/Analysis/AssumptionCache.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/Analysis/ScalarEvolution.h"
#include "llvm/Analysis/TargetLibraryInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Module.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Target/TargetMachine.h"

using namespace zero;

/// The most iterations of a loop that runs once a call and is kept rolled.
static constexpr unsigned kRolledTrips = 4096;

/// Keeps LLVM from unrolling the outermost loops of at most kRolledTrips
/// iterations: each runs once a call (a small tensor's elementwise loop
/// in the function of its nest, once a step), where unrolling gains
/// nothing measurable, and unrolled after vectorizing, with its copy for
/// aliasing, it is thousands of instructions to generate code for (GPT-2
/// small's step with the delayed update on a 2x4 mesh compiled in 29.2 s,
/// and in 13.0 s so, its step as fast). The loops inside others, which run
/// many times (a matmul's), unroll as before.
static void keepSmallLoopsRolled(llvm::Module &module) {
  llvm::TargetLibraryInfoImpl libraryInfo(module.getTargetTriple());
  for (llvm::Function &function : module) {
    if (function.isDeclaration() || function.hasOptNone())
      continue;
    llvm::DominatorTree dominators(function);
    llvm::LoopInfo loops(dominators);
    if (loops.empty())
      continue;
    llvm::TargetLibraryInfo library(libraryInfo, &function);
    llvm::AssumptionCache assumptions(function);
    llvm::ScalarEvolution evolution(function, library, assumptions, dominators,
                                    loops);
    for (llvm::Loop *loop : loops) {
      unsigned trips = evolution.getSmallConstantTripCount(loop);
      if (trips != 0 && trips <= kRolledTrips)
        loop->setLoopAlreadyUnrolled();
    }
  }
}

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
  keepSmallLoopsRolled(module);
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
