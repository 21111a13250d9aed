//===- Passes.h - conversions into and out of zero --------------*- C++ -*-===//
//
// The shard dialect to zero (ShardToZero/), and zero's collectives to calls
// of its runtime (ZeroToRuntime/).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_PASSES_H
#define ZERO_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Conversion/Passes.h.inc"

} // namespace zero

#endif // ZERO_CONVERSION_PASSES_H
