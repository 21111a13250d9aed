//===- HostQueue.cpp - an offloaded update's host work beside the stream --===//
//
// See HostQueue.h.
//
//===----------------------------------------------------------------------===//

#include "HostQueue.h"
#include "HostAccess.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "zero/Conversion/ZeroToRuntime/HostTasks.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Utils/Buffers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

using namespace mlir;

namespace {

/// The buffers an op reads and writes, each as its root (the allocation or
/// argument it views), or unknown.
struct Access {
  llvm::SmallDenseSet<Value, 4> reads, writes;
  bool unknown = false;

  void clear() {
    reads.clear();
    writes.clear();
    unknown = false;
  }

  void merge(const Access &other) {
    reads.insert(other.reads.begin(), other.reads.end());
    writes.insert(other.writes.begin(), other.writes.end());
    unknown |= other.unknown;
  }

  /// Whether this and `other` may not be reordered: one writes what the
  /// other touches.
  bool conflicts(const Access &other) const {
    if (unknown || other.unknown)
      return true;
    for (Value root : writes)
      if (other.reads.contains(root) || other.writes.contains(root))
        return true;
    return llvm::any_of(other.writes,
                        [&](Value root) { return reads.contains(root); });
  }
};

/// The buffer `value` is a view or the address of: a memref that views no
/// other, or a stack slot. Null where that is unknown: an address computed
/// otherwise, a buffer a loop carries (it may be its initial value), one a
/// call returns.
Value rootOf(Value value) {
  for (;;) {
    if (auto buffer = dyn_cast<MemrefValue>(value)) {
      Value root = zero::bufferOrigin(buffer);
      if (auto argument = dyn_cast<BlockArgument>(root))
        return isa<FunctionOpInterface>(argument.getOwner()->getParentOp())
                   ? root
                   : Value();
      return isa<CallOpInterface>(root.getDefiningOp()) ? Value() : root;
    }
    Operation *def = value.getDefiningOp();
    if (!def)
      return {};
    if (isa<LLVM::AllocaOp>(def))
      return value;
    if (auto address = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(def))
      value = address.getSource();
    else if (isa<LLVM::IntToPtrOp, arith::IndexCastOp, LLVM::GEPOp>(def))
      value = def->getOperand(0);
    else if (auto add = dyn_cast<arith::AddIOp>(def))
      value = add.getLhs(); // pointerTo's address + byte offset
    else
      return {};
  }
}

/// Whether `op` only computes values: no effect on memory, no regions.
bool isPureComputation(Operation *op) {
  return op->getNumRegions() == 0 && isMemoryEffectFree(op);
}

/// The buffers `op` (with the ops nested in it) reads and writes, but for
/// those it allocates inside.
Access collectAccess(Operation *op) {
  Access access;
  auto note = [&](Value value, bool read, bool write) {
    Value root = rootOf(value);
    if (!root) {
      access.unknown = true;
      return;
    }
    if (op->getNumRegions() != 0 &&
        op->isProperAncestor(root.getParentRegion()->getParentOp()))
      return; // a temporary of the op's own
    if (read)
      access.reads.insert(root);
    if (write)
      access.writes.insert(root);
  };
  auto isBufferOrAddress = [](Value v) {
    return isa<BaseMemRefType, LLVM::LLVMPointerType>(v.getType());
  };
  op->walk([&](Operation *inner) {
    if (auto call = dyn_cast<func::CallOp>(inner)) {
      std::optional<zero::RuntimeFunction> function =
          zero::lookupRuntimeFunction(call.getCallee());
      if (!function)
        access.unknown = true;
      for (auto [index, operand] : llvm::enumerate(call.getOperands()))
        if (isBufferOrAddress(operand))
          note(operand, true,
               !function || !zero::isReadOnlyParameter(*function, index));
      return;
    }
    if (zero::isBufferCollective(inner) || isa<zero::WaitOp>(inner)) {
      for (Value operand : inner->getOperands())
        if (isa<BaseMemRefType>(operand.getType()))
          note(operand, true, true);
      return;
    }
    if (auto dealloc = dyn_cast<memref::DeallocOp>(inner)) {
      note(dealloc.getMemref(), false, true);
      return;
    }
    if (auto effects = dyn_cast<MemoryEffectOpInterface>(inner)) {
      SmallVector<MemoryEffects::EffectInstance> instances;
      effects.getEffects(instances);
      for (const MemoryEffects::EffectInstance &effect : instances) {
        bool read = isa<MemoryEffects::Read>(effect.getEffect());
        bool write =
            isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect());
        if (!read && !write)
          continue; // an allocation: fresh memory
        if (Value value = effect.getValue())
          note(value, read, write);
        else
          access.unknown = true;
      }
      return;
    }
    if (inner->getNumRegions() == 0 && !isMemoryEffectFree(inner))
      access.unknown = true;
  });
  return access;
}

/// The alignment every allocator of the runtime gives at least
/// (zero_rt_alloc's; CUDA's is 256): a buffer that asks for no more has
/// its aligned pointer where it was allocated.
constexpr uint64_t kRuntimeAlignment = 64;

/// Whether `dealloc` frees a whole device allocation whose aligned pointer
/// is the allocated one, which is what the runtime's frees take.
bool isQueueableFree(memref::DeallocOp dealloc) {
  auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
  if (!alloc || !alloc.getType().getElementType().isIntOrIndexOrFloat())
    return false;
  std::optional<uint64_t> alignment = alloc.getAlignment();
  return !alignment || kRuntimeAlignment % *alignment == 0;
}

/// The op of `block` that is or holds `op`; null when none does.
Operation *inBlock(Block &block, Operation *op) {
  return op ? block.findAncestorOpInBlock(*op) : nullptr;
}

class BlockSchedule {
public:
  BlockSchedule(Block &block, zero::HostQueueSchedule &stats)
      : block(block), stats(stats) {}

  void run(bool withFrees) {
    if (withFrees)
      queueFrees();
    hoistQueuedOps();
    deferWhatWaits();
    fenceEachRun();
  }

private:
  static bool isQueued(Operation *op) {
    return op->hasAttr(zero::kQueuedAttrName);
  }

  static bool isQueuedFree(Operation *op) {
    return isa<memref::DeallocOp>(op) && isQueued(op);
  }

  /// Marks for the queue the frees of the device buffers that its work only
  /// copies down: read by the copies in of its updates (each an update
  /// with its copies, `scf.execute_region`: the gradient shards) or by its
  /// copies (a delayed update's gradient shard, a weight gathered on the
  /// device into its host argument). A GPU starts an update's copies when
  /// the rank queues it, on a stream of the rank's, so the rank can free a
  /// buffer only those read where it stands, its stream waiting for the
  /// copies when it takes the buffer again (zero_rt_gpu_free_after_copies);
  /// a copy the queue's thread makes is done when the queue's next work
  /// starts, so the queue frees a buffer one reads
  /// (zero_rt_gpu_queue_free), as the CPU's replica frees all of them
  /// (zero_rt_host_queue_free). Either way the step does not hold every
  /// such buffer until the rank waits for the queue. A buffer the queue
  /// writes, or its loops read (a host staging buffer), is freed after the
  /// wait.
  void queueFrees() {
    llvm::SmallDenseSet<Value, 16> copiedDown, otherwise;
    for (Operation &op : block)
      if (isQueued(&op)) {
        const Access &a = access(&op);
        otherwise.insert(a.writes.begin(), a.writes.end());
        bool down = isa<scf::ExecuteRegionOp>(op) || zero::copiesDown(&op);
        (down ? copiedDown : otherwise).insert(a.reads.begin(), a.reads.end());
      }
    Builder b(block.getParentOp()->getContext());
    for (auto dealloc : block.getOps<memref::DeallocOp>()) {
      Value buffer = dealloc.getMemref();
      if (auto staging = buffer.getDefiningOp<zero::HostAllocOp>();
          staging && usedOnlyByQueue(buffer, dealloc)) {
        staging.setStaging(true);
        dealloc->setAttr(zero::kQueuedAttrName, b.getUnitAttr());
        dealloc->setAttr(zero::kStagingAttrName, b.getUnitAttr());
        continue;
      }
      if (copiedDown.contains(buffer) && !otherwise.contains(buffer) &&
          isQueueableFree(dealloc))
        dealloc->setAttr(zero::kQueuedAttrName, b.getUnitAttr());
    }
  }

  /// Makes the host buffer that `dealloc`, a free the rank makes after all,
  /// frees an allocation of the rank's again, not staging: only the queue
  /// gives staging back (zero_rt_host_queue_free_staging), and the rank
  /// frees its buffers as it allocates them.
  static void unstage(memref::DeallocOp dealloc) {
    if (!dealloc->hasAttr(zero::kStagingAttrName))
      return;
    dealloc->removeAttr(zero::kStagingAttrName);
    if (auto staging = dealloc.getMemref().getDefiningOp<zero::HostAllocOp>())
      staging.setStaging(false);
  }

  /// Whether every use of `buffer` (through views) but `dealloc` is inside
  /// a queued op of this block, and one is.
  bool usedOnlyByQueue(Value buffer, memref::DeallocOp dealloc) {
    bool queued = false;
    SmallVector<Value> work = {buffer};
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (Operation *user : value.getUsers()) {
        if (user == dealloc)
          continue;
        Operation *top = inBlock(block, user);
        if (top && isQueued(top) && !isa<memref::DeallocOp>(top)) {
          queued = true;
          continue;
        }
        if (!isa<ViewLikeOpInterface>(user) || top != user)
          return false;
        llvm::append_range(work, user->getResults());
      }
    }
    return queued;
  }

  const Access &access(Operation *op) {
    auto it = accesses.find(op);
    if (it == accesses.end())
      it = accesses.try_emplace(op, collectAccess(op)).first;
    return it->second;
  }

  /// The ops of this block that define values `op` uses.
  SmallVector<Operation *> definersOf(Operation *op) {
    llvm::SetVector<Value> used;
    used.insert(op->getOperands().begin(), op->getOperands().end());
    for (Region &region : op->getRegions())
      getUsedValuesDefinedAbove(region, used);
    SmallVector<Operation *> definers;
    for (Value value : used)
      if (Operation *def = inBlock(block, value.getDefiningOp()))
        definers.push_back(def);
    return definers;
  }

  /// Of `a` and `b` (either null), the later in the block.
  static Operation *later(Operation *a, Operation *b) {
    if (!a)
      return b;
    if (!b)
      return a;
    return a->isBeforeInBlock(b) ? b : a;
  }

  static bool draggable(Operation *op) {
    return isPureComputation(op) || isa<zero::HostAllocOp>(op);
  }

  /// Moves the queued `op` up to just after the last op it depends on,
  /// with the pure definitions of the values it uses.
  void hoist(Operation *op, Operation *bound) {
    llvm::SetVector<Operation *> dragged;
    SmallVector<Operation *> worklist = definersOf(op);
    while (!worklist.empty()) {
      Operation *def = worklist.pop_back_val();
      if (dragged.contains(def))
        continue;
      if (!draggable(def)) {
        bound = later(bound, def);
        continue;
      }
      dragged.insert(def);
      llvm::append_range(worklist, definersOf(def));
    }
    if (bound && !bound->isBeforeInBlock(op))
      return;
    SmallVector<Operation *> moving;
    for (Operation *def : dragged)
      if (!bound || bound->isBeforeInBlock(def))
        moving.push_back(def);
    llvm::sort(moving, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    moving.push_back(op);
    for (Operation *moved : moving) {
      if (bound)
        moved->moveAfter(bound);
      else
        moved->moveBefore(&block, block.begin());
      bound = moved;
    }
  }

  void hoistQueuedOps() {
    DenseMap<Value, Operation *> lastAccess, lastWrite;
    Operation *barrier = nullptr, *previousQueued = nullptr;
    auto record = [&](DenseMap<Value, Operation *> &last, Value root,
                      Operation *op) {
      Operation *&entry = last[root];
      entry = later(entry, op);
    };
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops) {
      const Access &a = access(op);
      if (isQueued(op)) {
        // A free follows what touches its buffer, not the queue's other
        // work, which it leaves where it is.
        bool free = isQueuedFree(op);
        Operation *bound = free ? barrier : later(barrier, previousQueued);
        for (Value root : a.writes)
          bound = later(bound, lastAccess.lookup(root));
        for (Value root : a.reads)
          bound = later(bound, lastWrite.lookup(root));
        hoist(op, bound);
        // The queue's later work stays after a free too: a staging
        // buffer's free must reach the queue before the next update's
        // staging is taken, for the rank's budget to wait for it.
        previousQueued = free ? later(previousQueued, op) : op;
      } else if (a.unknown) {
        barrier = op;
      }
      for (Value root : a.reads)
        record(lastAccess, root, op);
      for (Value root : a.writes) {
        record(lastAccess, root, op);
        record(lastWrite, root, op);
      }
    }
  }

  /// A ticket for the queue's work up to and with the queued op `index` of
  /// this run (zero_rt_host_queue_mark, just after it), made once.
  Value ticketAfter(unsigned index) {
    Value &ticket = tickets[index];
    if (!ticket) {
      Operation *op = queuedOps[index];
      OpBuilder b(op->getContext());
      b.setInsertionPointAfter(op);
      zero::RuntimeCallBuilder calls(
          block.getParentOp()->getParentOfType<ModuleOp>());
      ticket =
          func::CallOp::create(
              b, op->getLoc(),
              calls.declare(b, zero::RuntimeFunction::zero_rt_host_queue_mark),
              ValueRange{})
              .getResult(0);
    }
    return ticket;
  }

  /// Moves the deferred ops before `before`, each after a wait for the
  /// queued work it needs: the part of the queue up to the last queued op
  /// it depends on (zero_rt_host_queue_wait on that op's ticket), or all of
  /// it (zero_rt_host_queue_join), which `before` follows in any case.
  /// Those that need less go first, but after the deferred ops they depend
  /// on: an op that needs only the queue's first updates (a bucket's gather,
  /// a delayed update's) so goes on while later queued work (the next
  /// bucket's update, this step's gradient copies) runs.
  void join(Operation *before) {
    OpBuilder b(before);
    Location loc = before->getLoc();
    zero::RuntimeCallBuilder calls(
        block.getParentOp()->getParentOfType<ModuleOp>());
    int last = int(queuedOps.size()) - 1, waited = -1;
    auto joinAll = [&] {
      func::CallOp::create(
          b, loc,
          calls.declare(b, zero::RuntimeFunction::zero_rt_host_queue_join),
          ValueRange{});
      waited = last;
      ++stats.joins;
    };
    // In order of the queued work each needs, with what it needs through
    // the deferred ops before it: an op comes after those it depends on,
    // and an op that needs less goes ahead of one that needs more.
    for (unsigned i = 0; i < deferred.size(); ++i)
      for (unsigned j = 0; j < i; ++j)
        if (needs[j] > needs[i] && dependsOn(deferred[i], deferred[j]))
          needs[i] = needs[j];
    SmallVector<unsigned> order =
        llvm::to_vector(llvm::seq<unsigned>(0, deferred.size()));
    llvm::stable_sort(
        order, [&](unsigned a, unsigned b) { return needs[a] < needs[b]; });
    keepCopiesDownAlone(order);
    bool copying = false;
    for (unsigned index : order) {
      Operation *op = deferred[index];
      int need = needs[index];
      if (need > waited && need == last) {
        joinAll();
        copying = false;
      } else if (need > waited) {
        func::CallOp::create(
            b, loc,
            calls.declare(b, zero::RuntimeFunction::zero_rt_host_queue_wait),
            ValueRange{ticketAfter(need)});
        waited = need;
        ++stats.partialWaits;
      }
      op->moveBefore(before);
      copying |= op->hasAttr(zero::kCopyDownAttrName);
    }
    // A copy down the rank started is done once its join returns.
    if (waited < last || queuedOps.empty() || copying)
      joinAll();
    stats.deferred += deferred.size();
    deferred.clear();
    needs.clear();
    deferredOps.clear();
    // Cleared in place: GCC warns of a moved SmallDenseSet.
    deferredAccess.clear();
    pending.clear();
    queuedOps.clear();
    tickets.clear();
    copiedDownSources.clear();
    copyDownFrees.clear();
  }

  /// Leaves marked `zero.copy_down` only the deferred copies down that no
  /// op after them in `order` touches but the free of their source (which
  /// keeps its mark: its reuse is ordered after the copy); the others, with
  /// every copy of their source and its free, are the rank's, as other
  /// deferred ops.
  void keepCopiesDownAlone(ArrayRef<unsigned> order) {
    auto freeOf = [&](Operation *op) -> Value {
      auto free = dyn_cast<memref::DeallocOp>(op);
      return free && copyDownFrees.contains(op) ? rootOf(free.getMemref())
                                                : Value();
    };
    llvm::SmallDenseSet<Value, 4> waitedFor;
    for (auto [position, index] : llvm::enumerate(order)) {
      Operation *copy = deferred[index];
      if (!copy->hasAttr(zero::kCopyDownAttrName))
        continue;
      Value source = rootOf(copy->getOperand(0));
      if (llvm::any_of(order.drop_front(position + 1), [&](unsigned i) {
            return freeOf(deferred[i]) != source &&
                   dependsOn(deferred[i], copy);
          }))
        waitedFor.insert(source);
    }
    for (unsigned index : order) {
      Operation *op = deferred[index];
      if (op->hasAttr(zero::kCopyDownAttrName)) {
        if (!waitedFor.contains(rootOf(op->getOperand(0))))
          ++stats.copiesDown;
        else
          op->removeAttr(zero::kCopyDownAttrName);
      } else if (Value source = freeOf(op);
                 source && waitedFor.contains(source)) {
        op->removeAttr(zero::kQueuedAttrName);
      }
    }
  }

  /// Whether `op` must follow `earlier`: it uses a value `earlier` defines,
  /// or one of them writes a buffer the other touches.
  bool dependsOn(Operation *op, Operation *earlier) {
    return access(op).conflicts(access(earlier)) ||
           llvm::is_contained(definersOf(op), earlier);
  }

  bool usesDeferred(Operation *op) {
    return llvm::any_of(definersOf(op), [&](Operation *def) {
      return deferredOps.contains(def);
    });
  }

  /// The last queued op of this run that `op` depends on (a buffer either
  /// writes that the other touches), or -1. An op it depends on through a
  /// deferred op is that op's need, which comes first.
  int needOf(Operation *op) {
    const Access &a = access(op);
    for (int i = int(queuedOps.size()) - 1; i >= 0; --i)
      if (a.conflicts(access(queuedOps[i])))
        return i;
    return -1;
  }

  /// Whether `op` frees, whole, the source of a deferred copy down that the
  /// rank only starts.
  bool freesCopiedDown(Operation *op) {
    auto free = dyn_cast<memref::DeallocOp>(op);
    return free && copiedDownSources.contains(rootOf(free.getMemref())) &&
           isQueueableFree(free);
  }

  /// Defers `op`. A copy down into host memory is marked for the rank only
  /// to start (kCopyDownAttrName), and the free of its source for the
  /// rank's reuse to wait for it (kQueuedAttrName), until
  /// keepCopiesDownAlone finds an op after it that needs the copy done.
  void defer(Operation *op) {
    if (zero::copiesDown(op)) {
      op->setAttr(zero::kCopyDownAttrName, UnitAttr::get(op->getContext()));
      copiedDownSources.insert(rootOf(op->getOperand(0)));
    } else if (freesCopiedDown(op)) {
      op->setAttr(zero::kQueuedAttrName, UnitAttr::get(op->getContext()));
      copyDownFrees.insert(op);
    }
    needs.push_back(needOf(op));
    deferred.push_back(op);
    deferredOps.insert(op);
    deferredAccess.merge(access(op));
  }

  void deferWhatWaits() {
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    bool open = false;
    for (Operation *op : ops) {
      const Access &a = access(op);
      if (isQueued(op)) {
        if (usesDeferred(op) || a.conflicts(deferredAccess)) {
          // A free that must follow the wait is the rank's, as it was (but
          // for that of a buffer the rank only starts to copy down: defer).
          if (!isQueuedFree(op))
            ++stats.unqueued;
          else if (!freesCopiedDown(op))
            unstage(cast<memref::DeallocOp>(op));
          op->removeAttr(zero::kQueuedAttrName);
          defer(op);
          continue;
        }
        open = true;
        pending.merge(a);
        // A free follows every op that touches its buffer: none needs it.
        if (!isQueuedFree(op))
          queuedOps.push_back(op);
        continue;
      }
      if (!open)
        continue;
      if (a.unknown) {
        join(op);
        open = false;
        continue;
      }
      if (usesDeferred(op) || a.conflicts(pending) ||
          a.conflicts(deferredAccess))
        defer(op);
    }
    if (open)
      join(block.getTerminator());
  }

  /// Whether `op` puts no work on the stream: the queue after it needs no
  /// new fence.
  static bool leavesStreamAlone(Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op))
      return zero::lookupRuntimeFunction(call.getCallee()) ==
             zero::RuntimeFunction::zero_rt_host_queue_mark;
    return isPureComputation(op) ||
           isa<memref::AllocOp, memref::DeallocOp, zero::HostAllocOp>(op);
  }

  void fenceEachRun() {
    zero::RuntimeCallBuilder calls(
        block.getParentOp()->getParentOfType<ModuleOp>());
    Operation *lastFence = nullptr;
    for (Operation &op : llvm::make_early_inc_range(block)) {
      if (!isQueued(&op))
        continue;
      // A free needs no fence: it follows the copies down, which follow
      // the stream's work before them, and the rank's later work that may
      // reuse the buffer is on its stream after its earlier work.
      if (isQueuedFree(&op)) {
        ++(op.hasAttr(zero::kStagingAttrName) ? stats.stagingFrees
                                              : stats.frees);
        continue;
      }
      ++stats.queued;
      Operation *previous = op.getPrevNode();
      while (previous && leavesStreamAlone(previous))
        previous = previous->getPrevNode();
      if (previous && (isQueued(previous) || previous == lastFence))
        continue;
      OpBuilder b(&op);
      lastFence = func::CallOp::create(
          b, op.getLoc(),
          calls.declare(b, zero::RuntimeFunction::zero_rt_host_queue_fence),
          ValueRange{});
    }
  }

  Block &block;
  zero::HostQueueSchedule &stats;
  DenseMap<Operation *, Access> accesses;
  // The wait's state: what the queue touches since the last wait, the
  // queued ops since then (with a ticket after each that a wait takes), and
  // the ops that must follow a wait, each with the last queued op it needs.
  Access pending, deferredAccess;
  SmallVector<Operation *> queuedOps;
  DenseMap<int, Value> tickets;
  SmallVector<Operation *> deferred;
  SmallVector<int> needs;
  llvm::DenseSet<Operation *> deferredOps;
  // The sources of the deferred copies down marked for the rank to start,
  // and the frees of them that keep their mark.
  llvm::SmallDenseSet<Value, 4> copiedDownSources;
  llvm::SmallPtrSet<Operation *, 4> copyDownFrees;
};

} // namespace

zero::HostQueueSchedule zero::scheduleHostQueue(func::FuncOp fn,
                                                bool queueFrees) {
  llvm::SetVector<Block *> blocks;
  fn.walk([&](Operation *op) {
    if (op->hasAttr(kQueuedAttrName))
      blocks.insert(op->getBlock());
  });
  HostQueueSchedule stats;
  for (Block *block : blocks)
    BlockSchedule(*block, stats).run(queueFrees);
  return stats;
}
