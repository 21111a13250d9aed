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
  /// thread after a wait (they depend on work that waits for the queue).
  unsigned queued = 0, unqueued = 0;
  /// The rank's waits for its queue, and the ops moved after one.
  unsigned joins = 0, deferred = 0;
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
///   moved so, moves after that wait, in order (the frees of the buffers the
///   queue uses among them); a queued op that depends on a moved op loses
///   its mark and runs on the rank's thread there;
/// - each run of queued ops starts with `zero_rt_host_queue_fence`, so that
///   the queue waits for what the rank put on its stream before.
///
/// Two buffers alias only where they are views of one allocation or
/// argument (a buffer carried by a loop, or one given by a call, counts as
/// unknown).
HostQueueSchedule scheduleHostQueue(mlir::func::FuncOp fn);

} // namespace zero

#endif // ZERO_LIB_TARGET_GPU_HOSTQUEUE_H
