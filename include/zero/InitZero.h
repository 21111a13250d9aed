//===- InitZero.h - register zero with an MLIR tool -------------*- C++ -*-===//
//
// One call each for a tool that embeds zero: the dialect with the upstream
// dialects a training program uses, and every zero pass and pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_INITZERO_H
#define ZERO_INITZERO_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace zero {

/// Registers the zero dialect only.
void registerZeroDialect(mlir::DialectRegistry &registry);

/// Registers the zero dialect and the upstream dialects (with their interface
/// models) that zero programs are written and lowered in: func, scf, arith,
/// math, tensor, linalg, memref, bufferization and shard.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Registers every zero pass and pass pipeline with the global registry, so
/// that they parse from the command line and from pass pipeline strings.
void registerAllPasses();

} // namespace zero

#endif // ZERO_INITZERO_H
