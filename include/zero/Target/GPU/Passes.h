//===- Passes.h - the GPU target --------------------------------------*- C++ -*-===//
//
// Passes of the CUDA lowering (zero-to-nvvm): loop nests shaped for kernels,
// matmuls as cuBLAS calls, buffer placement, the host's waits, kernel names.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TARGET_GPU_PASSES_H
#define ZERO_TARGET_GPU_PASSES_H

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
#include "zero/Target/GPU/Options.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Target/GPU/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Target/GPU/Passes.h.inc"

} // namespace zero

#endif // ZERO_TARGET_GPU_PASSES_H
