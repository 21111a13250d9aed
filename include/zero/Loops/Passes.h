//===- Passes.h - loop-structure passes -------------------------------*- C++ -*-===//
//
// Passes on the structure of loop nests in upstream dialects (linalg, scf),
// not on the zero dialect: elementwise fusion, horizontal fusion of
// independent loops, and full reductions in zero's one order.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LOOPS_PASSES_H
#define ZERO_LOOPS_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Loops/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Loops/Passes.h.inc"

} // namespace zero

#endif // ZERO_LOOPS_PASSES_H
