//===- Passes.h - the host's lowering ---------------------------------*- C++ -*-===//
//
// Passes of the lowering of host code (the CPU's, and a GPU program's host
// side): bufferization kept linear in the program's size, scf to cf, and
// what the host cannot run as written.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_CPU_PASSES_H
#define ZERO_TARGET_CPU_PASSES_H

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
#include "zero/Target/CPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Target/CPU/Passes.h.inc"

} // namespace zero

#endif // ZERO_TARGET_CPU_PASSES_H
