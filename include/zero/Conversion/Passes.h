//===- Passes.h - conversions into and out of zero --------------*- C++ -*-===//
//
// The shard dialect to zero (ShardToZero/), and zero's collectives to calls
// of its runtime (ZeroToRuntime/).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_PASSES_H
#define ZERO_CONVERSION_PASSES_H

#include "mlir/Pass/Pass.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Conversion/Passes.h.inc"

} // namespace zero

#endif // ZERO_CONVERSION_PASSES_H
