//===- FuseIndependentLoops.cpp - one loop for independent loop nests -----===//
//
// Horizontal fusion: consecutive scf.parallel loops that touch disjoint
// buffers become one 1-D loop over the sum of their iteration counts, whose
// body picks the member an iteration belongs to (a balanced tree of scf.if on
// the linear index) and runs that member's body at its own indices. On the
// GPU that is one kernel where there were several: the updates of a bucket's
// parameters, each its own loop nest after zero-fuse-elementwise (their
// shapes differ), become one launch. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Loops/Passes.h"
#include "zero/Utils/Buffers.h"

namespace zero {
#define GEN_PASS_DEF_ZEROFUSEINDEPENDENTLOOPS
#include "zero/Loops/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// The memory a buffer value lies in, as far as aliasing goes: the value it
/// is a view of, classified.
struct Root {
  enum Kind { Allocation, FunctionArgument, Global, Unknown };
  Kind kind = Unknown;
  /// The allocation or argument (or the view chain's end), or for a global
  /// the symbol's name.
  const void *key = nullptr;
  /// The view chain's end.
  Value value;

  /// Whether two roots may share memory. Distinct globals are distinct; the
  /// entry block's arguments do not alias each other (One-Shot Bufferize's
  /// assumption at function boundaries), nor any buffer the program
  /// allocates, nor a global. A buffer allocated in the program is none of
  /// those, and no value that existed before it was allocated (a loop's
  /// iteration argument inside whose body it is allocated: a program that
  /// used a freed buffer would be wrong already). But a value of unknown
  /// origin defined after an allocation may be a view of it: a loop's
  /// iteration argument whose initial value is the allocation.
  bool mayAlias(const Root &other, DominanceInfo &dominance) const {
    if (key == other.key)
      return true;
    if (kind == Allocation || other.kind == Allocation) {
      const Root &allocation = kind == Allocation ? *this : other;
      const Root &rest = kind == Allocation ? other : *this;
      return rest.kind == Unknown &&
             !dominance.properlyDominates(rest.value,
                                          allocation.value.getDefiningOp());
    }
    if (kind == other.kind && kind != Unknown)
      return false;
    return true;
  }
};

Root getRoot(Value buffer) {
  buffer = zero::bufferOrigin(buffer);
  Root root;
  root.key = buffer.getAsOpaquePointer();
  root.value = buffer;
  if (auto global = buffer.getDefiningOp<memref::GetGlobalOp>()) {
    root.kind = Root::Global;
    root.key = global.getNameAttr().getAttr().getAsOpaquePointer();
  } else if (buffer.getDefiningOp<memref::AllocOp>() ||
             buffer.getDefiningOp<memref::AllocaOp>()) {
    root.kind = Root::Allocation;
  } else if (auto argument = dyn_cast<BlockArgument>(buffer)) {
    if (isa<FunctionOpInterface>(argument.getOwner()->getParentOp()))
      root.kind = Root::FunctionArgument;
  }
  return root;
}

/// The buffers an op reads and writes, or `unknown` when it has effects the
/// pass cannot place (a call, an effect on no value).
struct Accesses {
  SmallVector<Root> reads, writes;
  bool unknown = false;

  void add(Operation *op) {
    std::optional<SmallVector<MemoryEffects::EffectInstance>> effects =
        getEffectsRecursively(op);
    if (!effects) {
      unknown = true;
      return;
    }
    for (const MemoryEffects::EffectInstance &effect : *effects) {
      // A new buffer cannot be one that an earlier op touches.
      if (isa<MemoryEffects::Allocate>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value || !isa<BaseMemRefType>(value.getType())) {
        unknown = true;
        continue;
      }
      // A buffer that lives inside `op` (an alloca in a loop body) is no
      // other op's business.
      if (op->isAncestor(value.getParentBlock()->getParentOp()))
        continue;
      (isa<MemoryEffects::Read>(effect.getEffect()) ? reads : writes)
          .push_back(getRoot(value));
    }
  }
  bool empty() const { return !unknown && reads.empty() && writes.empty(); }

  /// Whether this reads a buffer that may be one of `buffers`.
  bool readsAny(ArrayRef<Root> buffers, DominanceInfo &dominance) const {
    return llvm::any_of(reads, [&](const Root &x) {
      return llvm::any_of(
          buffers, [&](const Root &y) { return x.mayAlias(y, dominance); });
    });
  }

  /// Whether the two may not be reordered.
  bool conflictsWith(const Accesses &other, DominanceInfo &dominance) const {
    if ((unknown && !other.empty()) || (other.unknown && !empty()))
      return true;
    auto overlap = [&](ArrayRef<Root> a, ArrayRef<Root> b) {
      return llvm::any_of(a, [&](const Root &x) {
        return llvm::any_of(
            b, [&](const Root &y) { return x.mayAlias(y, dominance); });
      });
    };
    return overlap(writes, other.reads) || overlap(writes, other.writes) ||
           overlap(reads, other.writes);
  }
};

/// A loop the pass can merge: no results (reductions stay apart), not yet
/// mapped to the GPU, not inside another parallel loop.
bool isCandidate(Operation *op) {
  auto loop = dyn_cast<scf::ParallelOp>(op);
  return loop && loop.getNumResults() == 0 && !loop->hasAttr("mapping") &&
         !loop->getParentOfType<scf::ParallelOp>();
}

/// An op that the pass does not move loops across: zero's collectives and
/// their futures (moving a computation past an await would undo
/// zero-schedule-overlap) and calls.
bool isBarrier(Operation *op) {
  return isa<zero::ZeroDialect>(op->getDialect()) || isa<CallOpInterface>(op) ||
         op->hasTrait<OpTrait::IsTerminator>();
}

class LoopMerger {
public:
  explicit LoopMerger(OpBuilder &b) : b(b) {}

  /// Replaces `loops` (in block order, at least two) with one loop in place
  /// of the last.
  void merge(ArrayRef<scf::ParallelOp> loops);

private:
  Value index(int64_t value) {
    return b.createOrFold<arith::ConstantIndexOp>(loc, value);
  }
  /// Iterations of `loop` in dimension `d`, and in all of them.
  Value iterations(scf::ParallelOp loop, int64_t d);
  Value tripCount(scf::ParallelOp loop);
  /// Emits the body of the member among `[lo, hi)` that linear iteration
  /// `iv` belongs to.
  void emitMembers(ArrayRef<scf::ParallelOp> loops, ArrayRef<Value> offsets,
                   size_t lo, size_t hi, Value iv);
  void emitMember(scf::ParallelOp loop, Value local);

  OpBuilder &b;
  Location loc = b.getUnknownLoc();
};

Value LoopMerger::iterations(scf::ParallelOp loop, int64_t d) {
  Value span = b.createOrFold<arith::SubIOp>(loc, loop.getUpperBound()[d],
                                             loop.getLowerBound()[d]);
  return b.createOrFold<arith::CeilDivUIOp>(loc, span, loop.getStep()[d]);
}

Value LoopMerger::tripCount(scf::ParallelOp loop) {
  Value total = index(1);
  for (int64_t d = 0, e = loop.getNumLoops(); d < e; ++d)
    total = b.createOrFold<arith::MulIOp>(loc, total, iterations(loop, d));
  return total;
}

void LoopMerger::emitMember(scf::ParallelOp loop, Value local) {
  // Row-major: the last dimension varies fastest, as in the loop itself.
  IRMapping mapping;
  Value rest = local;
  for (int64_t d = loop.getNumLoops() - 1; d >= 0; --d) {
    Value lb = loop.getLowerBound()[d], step = loop.getStep()[d];
    Value count = iterations(loop, d);
    Value position =
        d == 0 ? rest : b.createOrFold<arith::RemUIOp>(loc, rest, count);
    if (d > 0)
      rest = b.createOrFold<arith::DivUIOp>(loc, rest, count);
    Value scaled = b.createOrFold<arith::MulIOp>(loc, position, step);
    mapping.map(loop.getInductionVars()[d],
                b.createOrFold<arith::AddIOp>(loc, lb, scaled));
  }
  for (Operation &op : loop.getBody()->without_terminator())
    b.clone(op, mapping);
}

void LoopMerger::emitMembers(ArrayRef<scf::ParallelOp> loops,
                             ArrayRef<Value> offsets, size_t lo, size_t hi,
                             Value iv) {
  if (hi - lo == 1) {
    Value local = b.createOrFold<arith::SubIOp>(loc, iv, offsets[lo]);
    emitMember(loops[lo], local);
    return;
  }
  size_t mid = (lo + hi) / 2;
  Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, iv,
                                      offsets[mid]);
  auto branch = scf::IfOp::create(b, loc, below, /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(branch.thenBlock()->getTerminator());
  emitMembers(loops, offsets, lo, mid, iv);
  b.setInsertionPoint(branch.elseBlock()->getTerminator());
  emitMembers(loops, offsets, mid, hi, iv);
}

void LoopMerger::merge(ArrayRef<scf::ParallelOp> loops) {
  scf::ParallelOp last = loops.back();
  loc = b.getFusedLoc(llvm::map_to_vector(
      loops, [](scf::ParallelOp loop) { return loop.getLoc(); }));
  b.setInsertionPoint(last);
  // offsets[i]: the first linear iteration of member i; the last is the
  // total.
  SmallVector<Value> offsets = {index(0)};
  for (scf::ParallelOp loop : loops)
    offsets.push_back(
        b.createOrFold<arith::AddIOp>(loc, offsets.back(), tripCount(loop)));
  scf::ParallelOp::create(
      b, loc, ValueRange{index(0)}, ValueRange{offsets.back()},
      ValueRange{index(1)}, [&](OpBuilder &, Location, ValueRange ivs) {
        emitMembers(loops, offsets, 0, loops.size(), ivs.front());
      });
  for (scf::ParallelOp loop : loops)
    loop.erase();
}

/// The buffers defined outside `loop` that its body uses: each is an
/// argument of the kernel the loop becomes, and a kernel's arguments have a
/// size limit (4 KiB before CUDA 12.1).
llvm::SetVector<Value> buffersUsedIn(Operation &loop) {
  llvm::SetVector<Value> buffers;
  loop.walk([&](Operation *op) {
    for (Value operand : op->getOperands())
      if (isa<BaseMemRefType>(operand.getType()) &&
          !loop.isAncestor(operand.getParentBlock()->getParentOp()))
        buffers.insert(operand);
  });
  return buffers;
}

struct ZeroFuseIndependentLoopsPass
    : public zero::impl::ZeroFuseIndependentLoopsBase<
          ZeroFuseIndependentLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<Block *> blocks;
    getOperation()->walk([&](Block *block) { blocks.push_back(block); });
    OpBuilder b(&getContext());
    LoopMerger merger(b);
    DominanceInfo &dominance = getAnalysis<DominanceInfo>();
    for (Block *block : blocks)
      fuseInBlock(*block, merger, dominance);
  }

  /// For each of `ops` (a block's, in order, with their `accesses`),
  /// whether its work waits for a gather of the block: it reads what one
  /// wrote (or what an op that waits wrote), or, for a candidate loop, what
  /// it writes is read later only by ops that wait (a sum's zero before its
  /// terms).
  static SmallVector<bool> waitingForGathers(ArrayRef<Operation *> ops,
                                             ArrayRef<Accesses> accesses,
                                             DominanceInfo &dominance) {
    SmallVector<bool> waits;
    SmallVector<Root> gathered;
    for (auto [op, a] : llvm::zip(ops, accesses)) {
      bool waiting =
          isa<zero::AllGatherBufferOp>(op) || a.readsAny(gathered, dominance);
      if (waiting)
        gathered.append(a.writes);
      waits.push_back(waiting);
    }
    auto readersWait = [&](size_t i) {
      bool read = false;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        if (!accesses[j].readsAny(accesses[i].writes, dominance))
          continue;
        if (!waits[j])
          return false;
        read = true;
      }
      return read;
    };
    SmallVector<bool> waiting(waits);
    for (size_t i = 0; i < ops.size(); ++i)
      if (isCandidate(ops[i]) && !waits[i])
        waiting[i] = readersWait(i);
    return waiting;
  }

  /// Merges each run of candidate loops whose members, and the ops between
  /// them, touch disjoint buffers: every member moves down to the last one,
  /// past ops that do not conflict with it. The members of a run either all
  /// wait for a gather of the block or none does (waitingForGathers): a
  /// merged loop starts once all its inputs are there, so a loop that needs
  /// no gather would wait for another's (the forward pass's first kernel
  /// for the gather of the next step's weights, which waits for the host's
  /// update when it is offloaded).
  void fuseInBlock(Block &block, LoopMerger &merger, DominanceInfo &dominance) {
    // The block's ops as they are before any merge: a merged loop takes the
    // place of its last member, among the ops already passed.
    SmallVector<Operation *> ops;
    SmallVector<Accesses> accesses;
    for (Operation &op : block) {
      ops.push_back(&op);
      accesses.emplace_back().add(&op);
    }
    SmallVector<bool> waiting = waitingForGathers(ops, accesses, dominance);
    SmallVector<scf::ParallelOp> group;
    Accesses groupAccesses;
    llvm::SetVector<Value> groupBuffers;
    bool groupWaits = false;
    auto flush = [&] {
      if (group.size() >= 2)
        merger.merge(group);
      group.clear();
      groupAccesses = Accesses();
      groupBuffers.clear();
    };
    for (auto [op, access, waits] : llvm::zip(ops, accesses, waiting)) {
      if (isCandidate(op)) {
        llvm::SetVector<Value> loopBuffers = buffersUsedIn(*op);
        llvm::SetVector<Value> buffers = groupBuffers;
        buffers.insert(loopBuffers.begin(), loopBuffers.end());
        if (!group.empty() &&
            (access.unknown || waits != groupWaits ||
             access.conflictsWith(groupAccesses, dominance) ||
             static_cast<int64_t>(buffers.size()) > maxBuffers)) {
          flush();
          buffers = std::move(loopBuffers);
        }
        if (access.unknown)
          continue;
        group.push_back(cast<scf::ParallelOp>(op));
        groupAccesses.reads.append(access.reads);
        groupAccesses.writes.append(access.writes);
        groupBuffers = std::move(buffers);
        groupWaits = waits;
        continue;
      }
      if (group.empty())
        continue;
      if (isBarrier(op)) {
        flush();
        continue;
      }
      if (access.conflictsWith(groupAccesses, dominance))
        flush();
    }
    flush();
  }
};

} // namespace
