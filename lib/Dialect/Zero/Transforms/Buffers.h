//===- Buffers.h - what bufferization will make of zero's values -*- C++
//-*-===//
//
// Shared by the passes that place a collective's buffers before
// bufferization (zero-schedule-overlap across loop back edges,
// zero-expand-loop-futures) and by the bufferization of the collectives.
// Internal to ZeroTransforms.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_DIALECT_ZERO_TRANSFORMS_BUFFERS_H
#define ZERO_LIB_DIALECT_ZERO_TRANSFORMS_BUFFERS_H

#include "mlir/IR/Builders.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/SetVector.h"

namespace zero {

/// The ops of `block` that read one of `roots`, or a value that may share
/// its buffer, or that hold such a read in their regions: everything that
/// must run before the buffer is overwritten. Views (reshapes, slices,
/// casts, zero.shard_slice) and ops with regions may share a buffer with
/// their operands;
/// computation reading a read-only buffer writes a new one. May include
/// `block`'s terminator.
llvm::SetVector<mlir::Operation *> findBufferReaders(mlir::ValueRange roots,
                                                     mlir::Block &block);

/// The identity-layout memref of a ranked tensor type: the buffer a
/// collective writes its result into (and reads its input from, where it
/// is given one of its own).
mlir::MemRefType getDenseBufferType(mlir::Type tensor);

/// The destination-passing `*_buffer` form of `collective`, reading `input`
/// and writing `output`, returning a `!zero.request` when `request` is set
/// (then it only starts). Keeps the collective's annotations (zero.bucket).
/// Null for a collective that does not communicate (zero.shard_slice).
mlir::Operation *createBufferCollective(mlir::OpBuilder &b,
                                        CollectiveOpInterface collective,
                                        mlir::Type request, mlir::Value input,
                                        mlir::Value output);

} // namespace zero

#endif // ZERO_LIB_DIALECT_ZERO_TRANSFORMS_BUFFERS_H
