//===- ZeroDialect.h - the zero dialect -------------------------*- C++ -*-===//
//
// The zero dialect, its attributes and its types. Operations are in
// ZeroOps.h.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_DIALECT_ZERO_IR_ZERODIALECT_H
#define ZERO_DIALECT_ZERO_IR_ZERODIALECT_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"

#include "zero/Dialect/Zero/IR/ZeroDialect.h.inc"
#include "zero/Dialect/Zero/IR/ZeroEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroTypes.h.inc"

#endif // ZERO_DIALECT_ZERO_IR_ZERODIALECT_H
