//===- Optimize.h - LLVM's optimization pipeline, as zero runs it -*- C++ -*-//
//
// The LLVM optimization that zero-compile's artifacts and zero-run's JIT
// share: LLVM's default pipeline at a level (the outermost loops of at most
// 4096 iterations, which run once a call, kept rolled), with the
// instrumentation that
// `opt` runs it with, so that a function marked `optnone` is left alone
// (PackedEntry.h's selectEntryQuickly marks the entry so) and LLVM's
// -time-passes and -print-after reach it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_EXECUTION_OPTIMIZE_H
#define ZERO_EXECUTION_OPTIMIZE_H

#include "llvm/Support/Error.h"

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace zero::exec {

/// Runs LLVM's default module pipeline at -O`level` (1 to 3) on `module`,
/// tuned for `machine` where one is given. Loop unrolling, interleaving and
/// both vectorizers are on, as MLIR's ExecutionEngine has them.
llvm::Error optimizeModule(llvm::Module &module, unsigned level,
                           llvm::TargetMachine *machine);

} // namespace zero::exec

#endif // ZERO_EXECUTION_OPTIMIZE_H
