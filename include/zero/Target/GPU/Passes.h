//===- Passes.h - the GPU target --------------------------------------*- C++ -*-===//
//
// Passes of the CUDA lowering (zero-to-nvvm): loop nests shaped for kernels,
// matmuls as cuBLAS calls, buffer placement, the host's waits, kernel names.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_GPU_PASSES_H
#define ZERO_TARGET_GPU_PASSES_H

#include "mlir/Pass/Pass.h"
#include "zero/Target/GPU/Options.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Target/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Target/GPU/Passes.h.inc"

} // namespace zero

#endif // ZERO_TARGET_GPU_PASSES_H
