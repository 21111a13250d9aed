//===- ArtifactExports.cpp - what a launcher exports to artifacts ---------===//
//
// An artifact leaves undefined what MLIR's lowering calls besides the
// runtime: a launcher that links the runtime whole (zero-launch,
// zero-launch-steps) exports these with it. A JIT (zero-run) gets them from
// MLIR's own runner utilities instead, and never pulls this file in.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/zero_runtime.h"

// Compiled code copies between buffers of different layouts with this
// function, as code JIT-compiled by MLIR's ExecutionEngine does.
extern "C" __attribute__((visibility("default"))) void
memrefCopy(int64_t elementBytes, void *source, void *target) {
  zero_rt_memref_copy(elementBytes, source, target);
}
