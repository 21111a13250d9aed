//===- Passes.h - the host's lowering ---------------------------------*- C++ -*-===//
//
// Passes of the lowering of host code (the CPU's, and a GPU program's host
// side): bufferization kept linear in the program's size, state updated in
// place, scf to cf, and what the host cannot run as written. Declarations
// only: each pass's source includes the dialects it builds.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_CPU_PASSES_H
#define ZERO_TARGET_CPU_PASSES_H

#include "mlir/Pass/Pass.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Target/CPU/Passes.h.inc"

} // namespace zero

#endif // ZERO_TARGET_CPU_PASSES_H
