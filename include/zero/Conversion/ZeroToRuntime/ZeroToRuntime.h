//===- ZeroToRuntime.h - bufferized collectives to runtime calls -*- C++
//-*-===//
//
// The conversion behind `zero-lower-to-runtime`, for an embedder's own
// pipeline: a type converter, the patterns, the legality they need, and the
// checks that make the conversion total on a module that passes them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_ZEROTORUNTIME_ZEROTORUNTIME_H
#define ZERO_CONVERSION_ZEROTORUNTIME_ZEROTORUNTIME_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <optional>
#include <string>

namespace zero {

/// Registers the dialects the patterns below create ops of (arith, func,
/// llvm, memref): a pass that applies them declares these as its dependent
/// dialects, and a tool that prints their result loads them.
void registerZeroToRuntimeDialects(mlir::DialectRegistry &registry);

/// Gives `!zero.request` the runtime's handle type (`zero_handle *`, an
/// `!llvm.ptr`) and keeps every other type.
class RuntimeTypeConverter : public mlir::TypeConverter {
public:
  explicit RuntimeTypeConverter(mlir::MLIRContext *context);
};

/// Conversion patterns to runtime calls: `zero.all_reduce_buffer`,
/// `zero.reduce_scatter_buffer`, `zero.all_gather_buffer` and
/// `zero.all_to_all_buffer` to
/// `zero_rt_<collective>` (blocking) or `zero_rt_<collective>_start` (with a
/// request, which becomes the handle); `zero.wait` to `zero_rt_wait`;
/// `zero.completed_request` to a null handle; `zero.replica_index` to
/// `zero_rt_group_index`. Loops and branches that carry requests are
/// converted with `typeConverter` too. The meshes stay: the patterns read
/// them (see eraseMeshes).
void populateZeroToRuntimePatterns(mlir::TypeConverter &typeConverter,
                                   mlir::RewritePatternSet &patterns);

/// Makes the ops above illegal, and the structural ops legal once their
/// types are.
void configureZeroToRuntimeTarget(mlir::ConversionTarget &target,
                                  mlir::TypeConverter &typeConverter);

/// Why the patterns cannot lower the buffer collective or replica index
/// `op` (its mesh unknown, an element type the runtime lacks, a buffer or a
/// rank's part that is not contiguous), as the text of an error on it; none
/// when they can.
std::optional<std::string> whyNotLowerableToRuntime(mlir::Operation *op);

/// Checks what the conversion needs of `module`, with an error on each op
/// that fails: no collective left in tensor form, every request consumed
/// once (by a `zero.wait` in its block or by the `scf.for` that carries it),
/// and every op lowerable (whyNotLowerableToRuntime). On a module that
/// passes, the conversion succeeds.
mlir::LogicalResult checkLowerableToRuntime(mlir::ModuleOp module);

/// Erases the `zero.mesh` symbols, after the conversion: LLVM has no use
/// for them. Attributes that name a mesh (an argument's sharding, which
/// zero-compile describes) keep the name as a record.
void eraseMeshes(mlir::ModuleOp module);

/// Brackets each run of two or more collectives started one after another,
/// with nothing but their arguments between them, by `zero_rt_batch_begin`
/// and `zero_rt_batch_end`: what one step of the schedule issues together,
/// which the nccl backend issues as one NCCL group.
void batchStartedCollectives(mlir::ModuleOp module);

} // namespace zero

#endif // ZERO_CONVERSION_ZEROTORUNTIME_ZEROTORUNTIME_H
