//===- Passes.h - what zero tells of a program ------------------*- C++ -*-===//
//
// zero-report (Passes.td): per-rank bytes, model state and the cost model's
// time of every function's collectives.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_REPORT_PASSES_H
#define ZERO_REPORT_PASSES_H

#include "mlir/Pass/Pass.h"

namespace zero {

/// What zero-report writes (format).
enum class ReportFormat { Text, Json };

#define GEN_PASS_DECL
#include "zero/Report/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Report/Passes.h.inc"

} // namespace zero

#endif // ZERO_REPORT_PASSES_H
