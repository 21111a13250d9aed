//===- Passes.h - loop-structure passes -------------------------------*- C++
//-*-===//
//
// Passes on the structure of loop nests in upstream dialects (linalg, scf),
// not on the zero dialect: matmuls in one form, elementwise
// fusion, horizontal fusion of independent loops, and full reductions in
// zero's one order.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LOOPS_PASSES_H
#define ZERO_LOOPS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Loops/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Loops/Passes.h.inc"

} // namespace zero

#endif // ZERO_LOOPS_PASSES_H
