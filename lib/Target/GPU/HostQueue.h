//===- HostQueue.h - an offloaded update's host work beside the stream -*-===//
//
// zero-offload-to-host marks the host's part of an offloaded update (its
// loops and its copies across the link) for the rank's host queue
// (zero_rt_host_queue_*): a thread that runs it in order while the rank's
// thread goes on launching the rest of the step. scheduleHostQueue places
// that work as early, and the rank's wait for it as late, as the program's
// dependences allow.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_TARGET_GPU_HOSTQUEUE_H
#define ZERO_LIB_TARGET_GPU_HOSTQUEUE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace zero {

/// What scheduleHostQueue did.
struct HostQueueSchedule {
  /// Ops left on the queue, and queued ops that had to run on the rank's
  /// thread after a wait (they depend on work that waits for the queue);
  /// frees apart.
  unsigned queued = 0, unqueued = 0;
  /// The copies down into host memory after a wait that the rank only
  /// starts (kCopyDownAttrName).
  unsigned copiesDown = 0;
  /// The rank's waits for its queue, those for the first part of it, and
  /// the ops moved after one.
  unsigned joins = 0, partialWaits = 0, deferred = 0;
  /// Frees of device buffers made once the queue has copied them down.
  unsigned frees = 0;
  /// Host staging buffers that only the queue uses, freed by the queue.
  unsigned stagingFrees = 0;
};

/// Schedules the ops of `fn` marked `zero.queued` (kQueuedAttrName) in each
/// block that holds them:
///
/// - each moves up to just after the last op it depends on: one that
///   defines a value it uses (the pure ops and host allocations that define
///   them move up with it), one that touches a buffer it touches where
///   either writes, an op whose effects are unknown, or the previous queued
///   op (the queue runs in order);
/// - the rank waits for the queue (`zero_rt_host_queue_join`) once, before
///   the block's terminator or an op whose effects are unknown: every op
///   after the first queued one that depends on the queued work, or on an op
///   moved so, moves there, each after a wait for the queue's work up to
///   the last queued op it depends on (`zero_rt_host_queue_wait` on the
///   ticket `zero_rt_host_queue_mark` gives just after that op), in the
///   order of what they wait for where they do not depend on each other,
///   else in order; a queued op that depends on a moved op loses its mark
///   and runs on the rank's thread there;
/// - a moved copy down into host memory (a weight gathered on the device
///   into its host argument) that no moved op after it touches the buffers
///   of, but the free of its source, is marked `zero.copy_down`
///   (kCopyDownAttrName) for the rank only to start, that free is marked
///   `zero.queued` (its reuse waits for the copy), and a join follows;
/// - the frees (`memref.dealloc`) of the device buffers that the queue's
///   updates only copy down (the gradient shards) are marked too, each just
///   after the last op that touches its buffer, where the buffer is a whole
///   allocation whose aligned pointer is the allocated one (no alignment
///   above the runtime's 64 bytes): the buffer goes back to the rank's pool
///   once it is copied down (on a GPU, where the rank started the copies,
///   at once with its reuse ordered after them), so that the step does not
///   hold every gradient shard until the rank's wait; the others, and
///   those that an op after the wait touches, follow the wait;
/// - so are the frees of the host buffers (`zero.host_alloc`) that only
///   queued ops use (an update's staging of its gradient shard and new
///   weight), marked `zero.staging` too, with their allocation made
///   `staging`: the queue frees each once its work on it is done, and the
///   rank takes the next within its staging budget
///   (zero_rt_host_alloc_staging), so that it does not hold one for every
///   update of the step;
/// - each run of queued ops starts with `zero_rt_host_queue_fence`, so that
///   the queue waits for what the rank put on its stream before (a free
///   needs none).
///
/// Two buffers alias only where they are views of one allocation or
/// argument (a buffer carried by a loop, or one given by a call, counts as
/// unknown).
///
/// With `queueFrees` false, the frees stay the rank's, after its wait.
HostQueueSchedule scheduleHostQueue(mlir::func::FuncOp fn, bool queueFrees);

} // namespace zero

#endif // ZERO_LIB_TARGET_GPU_HOSTQUEUE_H
