//===- Passes.h - zero lowering passes and pipelines ------------*- C++ -*-===//

#ifndef ZERO_CONVERSION_PASSES_H
#define ZERO_CONVERSION_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Conversion/Passes.h.inc"

/// Builds `zero-to-llvm`: a program in tensors (func, scf, arith, math,
/// tensor, linalg, zero) to the LLVM dialect for the CPU, with collectives as
/// runtime calls. Steps: elementwise ops to linalg and fused, One-Shot
/// Bufferize (function boundaries included,
/// identity layouts), buffer deallocation, linalg to loops,
/// `zero-lower-to-runtime`, and the upstream conversions to LLVM.
void buildZeroToLLVMPipeline(mlir::OpPassManager &pm);

/// Registers `zero-to-llvm` as a pass pipeline. (The generated
/// registerZeroConversionPasses() registers the passes.)
void registerZeroToLLVMPipeline();

} // namespace zero

#endif // ZERO_CONVERSION_PASSES_H
