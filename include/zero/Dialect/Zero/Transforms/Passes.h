//===- Passes.h - zero passes -----------------------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

namespace zero {

#define GEN_PASS_DECL
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

} // namespace zero

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
