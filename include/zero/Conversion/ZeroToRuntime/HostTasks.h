//===- HostTasks.h - a host loop across the host's cores --------*- C++ -*-===//
//
// The host's loops split across its cores: a loop's body becomes a task,
// and the loop a call of the runtime's zero_rt_parallel_for, which cuts its
// iterations into chunks for the calling rank's share of the cores (the
// cores over the ranks sharing the host; ZERO_HOST_THREADS and
// ZERO_HOST_CHUNK set it). Each iteration runs the same operations on the
// same elements as in the loop, so results do not change. Used by
// zero-offload-to-host (an offloaded update beside a GPU) and
// zero-host-parallel-loops (the CPU lowering's elementwise loops).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_ZEROTORUNTIME_HOSTTASKS_H
#define ZERO_CONVERSION_ZEROTORUNTIME_HOSTTASKS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

namespace zero {

/// The attribute that marks a task function: host code, even in a program
/// for a GPU.
inline constexpr llvm::StringLiteral kHostTaskAttrName = "zero.host_task";

/// `nest` as a nest of `scf.for` over the same bounds, in its place; returns
/// the outermost loop (null for a nest of no loops).
mlir::scf::ForOp toSequentialLoops(mlir::scf::ParallelOp nest);

/// The attribute that marks an op of a GPU program's host queue
/// (zero-offload-to-host): a host loop or a copy across the link that runs
/// on the rank's queue (zero_rt_host_queue_*), beside its stream, or the
/// free of a device buffer that the queue's work only copies down, made
/// once it has (zero_rt_gpu_free_after_copies, zero_rt_gpu_queue_free,
/// zero_rt_host_queue_free).
inline constexpr llvm::StringLiteral kQueuedAttrName = "zero.queued";

/// The attribute that marks, beside kQueuedAttrName, the free of a host
/// staging buffer (`zero.host_alloc staging`) that only the rank's queue
/// uses: the queue frees it once its work before is done
/// (zero_rt_host_queue_free_staging).
inline constexpr llvm::StringLiteral kStagingAttrName = "zero.staging";

/// The attribute that marks a copy down from a device buffer into host
/// memory that must follow the rank's wait for its queue (a weight gathered
/// on the device after the wait, into its host argument): on a GPU the rank
/// starts it on its copy stream and goes on (zero_rt_gpu_copy_down), the
/// rank's later join waiting for it; nothing before that join touches its
/// target or writes its source, whose free (kQueuedAttrName) is ordered
/// after it. The GPU's CPU replica copies at once.
inline constexpr llvm::StringLiteral kCopyDownAttrName = "zero.copy_down";

/// What a task's context takes (runAcrossCores), as remarks say it.
inline constexpr llvm::StringLiteral kTaskValues =
    "a number or a buffer of static shape";

/// What keeps runAcrossCores from making `loop` a task: the first value its
/// body uses from outside that neither passes through the context
/// (kTaskValues) nor is a constant; null when none.
mlir::Value valueTaskCannotTake(mlir::scf::ForOp loop);

/// A loop made a task (outlineTask): what a runtime call that runs it
/// takes. The task (!llvm.ptr), its context (!llvm.ptr to 64-bit slots on
/// the function's stack, filled where the loop is), the context's bytes and
/// the loop's iterations (i64).
struct HostTask {
  mlir::Value task, context, contextBytes, iterations;
  /// Each value that passes through the context, and its first slot.
  llvm::SmallDenseMap<mlir::Value, int64_t> slots;
};

/// `loop`'s body as the task `@<function>_host<index>(context, begin, end)`
/// (see runAcrossCores), with the values a call takes made just before the
/// loop, which stays for the caller to replace. None, with nothing changed,
/// when a value cannot pass.
std::optional<HostTask> outlineTask(mlir::scf::ForOp loop,
                                    mlir::func::FuncOp fn, unsigned index);

/// `loops` (each with constant bounds) as one task, as outlineTask makes
/// one of a loop: the task's iterations are those of the largest loop, P,
/// and a range [begin, end) of them runs iterations [n * begin / P,
/// n * end / P) of each loop of n, one loop after another. Each loop's
/// iterations are run once, by the same operations; the loops must not
/// depend on one another, for different ranges run at once. None, with
/// nothing changed, when a value cannot pass or n * P could overflow.
std::optional<HostTask> outlineTask(llvm::ArrayRef<mlir::scf::ForOp> loops,
                                    mlir::func::FuncOp fn, unsigned index);

/// How many iterations `loop` makes, where its bounds are constants.
std::optional<int64_t> constantTripCount(mlir::scf::ForOp loop);

/// Runs `loop` (one `scf.for`, independent iterations) across the host's
/// cores: its body becomes a task, `@<function>_host<index>(context, begin,
/// end)` marked `zero.host_task`, over iterations [begin, end), and the loop
/// a call of `zero_rt_parallel_for` (an iteration `grain` elements, for its
/// chunks' size), or with `queued` of `zero_rt_host_queue_for` (the rank's
/// host queue runs it later; `grain` must be 1). The
/// values the body uses from outside go through the context, a slot each (a
/// number, or a buffer of static shape as its address, with its offset and
/// strides where those are dynamic), constants are copied into the task. Leaves
/// the loop as it is, and returns false, when a value cannot pass.
bool runAcrossCores(mlir::scf::ForOp loop, mlir::func::FuncOp fn,
                    unsigned index, bool queued = false, int64_t grain = 1);

/// Runs `loops` (constant bounds, independent of one another, in one block,
/// with nothing between them that touches memory) across the host's cores
/// as one task (outlineTask of several), called where the last loop is:
/// one zero_rt_parallel_for, each thread running its part of every loop,
/// with no wait between them; `grain` is the elements of one of the
/// task's iterations. Leaves the loops, and returns false, where
/// outlineTask makes none.
bool runTogetherAcrossCores(llvm::ArrayRef<mlir::scf::ForOp> loops,
                            mlir::func::FuncOp fn, unsigned index,
                            int64_t grain);

} // namespace zero

#endif // ZERO_CONVERSION_ZEROTORUNTIME_HOSTTASKS_H
