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

/// The upstream canonicalization pattern every canonicalization of zero's
/// lowerings leaves out: RemoveDuplicateSuccessorInputUses compares every
/// pair of a loop's iteration arguments, and a training loop carries one
/// buffer per weight, moment and gradient shard (with the 1000 of a
/// ResNet-50 loop one canonicalization took 16 s). zero's programs carry
/// no duplicate iteration arguments for it to merge.
inline constexpr char kQuadraticCanonicalizationPattern[] =
    "(anonymous namespace)::RemoveDuplicateSuccessorInputUses";

} // namespace zero

#endif // ZERO_TARGET_CPU_PASSES_H
