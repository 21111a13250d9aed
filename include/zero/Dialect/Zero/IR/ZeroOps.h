//===- ZeroOps.h - zero operations ------------------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_H
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"

namespace zero {
class MeshOp;

/// The mesh named `name` as seen from `from`, or null when none is in scope.
MeshOp lookupMesh(mlir::Operation *from, mlir::FlatSymbolRefAttr name);

/// The axes of `mesh` that form a group: `axes` when given, all otherwise.
llvm::SmallVector<int64_t> getGroupAxes(MeshOp mesh,
                                        mlir::DenseI64ArrayAttr axes);

/// The number of ranks in each group of `mesh` over `axes` (null: all axes).
int64_t getGroupSize(MeshOp mesh, mlir::DenseI64ArrayAttr axes);

/// The group index of world rank `rank` in its group of `mesh` over `axes`:
/// its coordinates on the group axes, row-major.
int64_t getGroupIndex(MeshOp mesh, mlir::DenseI64ArrayAttr axes, int64_t rank);

/// Whether a reducing collective of `kind` can combine elements of `type`.
bool isReducible(ReductionKind kind, mlir::Type elementType);
} // namespace zero

#include "zero/Dialect/Zero/IR/ZeroInterfaces.h.inc"

#define GET_OP_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOps.h.inc"

namespace zero {
/// Whether `op` (which may be null) is the destination-passing form of a
/// communicating collective: `zero.all_reduce_buffer`,
/// `zero.reduce_scatter_buffer`, `zero.all_gather_buffer` or
/// `zero.all_to_all_buffer`.
bool isBufferCollective(mlir::Operation *op);

/// The `zero.wait` of `request` (a buffer collective's), where that wait is
/// its one use and in its block: where the collective is done. Null where
/// it goes anywhere else (a loop that carries it out of the block).
WaitOp findWaitInBlock(mlir::Value request);

/// Where an argument of a GPU program lives when zero-offload-state placed
/// it in pinned host memory: the argument attribute `zero.memory = "host"`.
/// The one place that spells it: zero-offload-state sets it,
/// zero-offload-to-host and zero-report read it.
bool isHostArgument(mlir::FunctionOpInterface fn, unsigned index);
void setHostArgument(mlir::FunctionOpInterface fn, unsigned index, bool host);
/// Whether any argument of `fn` is placed in host memory.
bool hasHostArguments(mlir::FunctionOpInterface fn);

/// Where a loop keeps state it carries from step to step when
/// zero-offload-state placed it in pinned host memory: the loop's attribute
/// `zero.host_iter_args`, the positions of those iter_args (each with its
/// result). zero-offload-state sets it, zero-offload-to-host places the
/// buffers so and reads it.
constexpr llvm::StringLiteral kHostIterArgsAttrName = "zero.host_iter_args";
bool isHostIterArg(mlir::Operation *loop, unsigned position);
void setHostIterArg(mlir::Operation *loop, unsigned position, bool host);

/// Whether a collective can pass `type`'s buffer to the runtime as a pointer
/// and an element count: a static shape, row-major and dense (a buffer
/// without elements is, whatever its strides).
bool isContiguousBuffer(mlir::MemRefType type);

/// How many blocks of `block` elements `zero.quantize` cuts `size` elements
/// into: the last one may be shorter.
int64_t getNumQuantBlocks(int64_t size, int64_t block);

/// The f32 scales `zero.quantize` gives `floats` (rank 1 or more) in blocks
/// of `block`: its shape, with getNumQuantBlocks in the last dimension.
mlir::RankedTensorType getQuantScalesType(mlir::RankedTensorType floats,
                                          int64_t block);

/// The levels `zero.quantize` gives `floats` (rank 1 or more) at `bits` a
/// level: i8 of its shape for 8 bits; for 4, two levels a byte, so the last
/// dimension holds ceil(size / 2).
mlir::RankedTensorType getQuantValuesType(mlir::RankedTensorType floats,
                                          int64_t bits);

/// The largest level of `bits`-bit symmetric quantization: 127 or 7.
int64_t getQuantLevels(int64_t bits);

/// The name of `bits`-bit quantization in remarks and reports: "int8" or
/// "int4".
llvm::StringRef getQuantFormat(int64_t bits);

/// The formats a compressed exchange sends, by bits an element: 8 and 4
/// are int8 and int4 blocks with an f32 scale each (zero.quantize), this
/// one bf16 (each element rounded to nearest even, no scales).
inline constexpr int64_t kBF16ExchangeBits = 16;

/// The name of the exchange format of `bits`: "int8", "int4" or "bf16".
llvm::StringRef getExchangeFormat(int64_t bits);

/// The layout of a flat value each rank holds its own of (an
/// error-feedback residual, the delayed update's gradients): `type`, one row
/// a rank of a whole `[ranks, elements]` over every axis of `mesh`, so that
/// a launcher or a checkpoint keeps each rank's own.
ShardAttr getPerRankLayout(MeshOp mesh, mlir::RankedTensorType type);

/// A contribution's bound in the exchange format of `bits`, as a share of
/// its block's largest magnitude: half a step of the block's levels, or
/// bf16's unit roundoff (2^-8) of the element itself, which the block's
/// largest bounds.
double getExchangeHalfStepShare(int64_t bits);

/// That bound as remarks and reports state it: "max|block| / 254",
/// "|x| / 256".
std::string describeExchangeBound(int64_t bits);
} // namespace zero

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_H
