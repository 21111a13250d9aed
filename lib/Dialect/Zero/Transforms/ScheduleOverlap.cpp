//===- ScheduleOverlap.cpp - start collectives early, await them late -----===//
//
// Per block: each communicating collective becomes a zero.async right after
// its input's definition and a zero.await right before its first use, unless
// the cost model sees no computation in between. All-gathers started ahead
// of their use hold their result; max-in-flight-bytes caps the sum. See
// Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROSCHEDULEOVERLAP
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// Where one collective of a block starts and ends, as indices of the
/// block's original ops: the async goes before op `start`, the await before
/// op `deadline`.
struct Placement {
  CollectiveOpInterface collective;
  size_t start = 0;
  size_t deadline = 0;
  /// Bytes of result an all-gather holds while in flight and unused.
  int64_t heldBytes = 0;
};

class BlockScheduler {
public:
  BlockScheduler(Block &block, const CostModel &model, int64_t maxInFlight)
      : block(block), model(model), maxInFlight(maxInFlight) {}

  void run() {
    sinkConsumers();
    for (Operation &op : llvm::make_early_inc_range(block))
      if (auto collective = dyn_cast<CollectiveOpInterface>(&op))
        if (model.communicationSeconds(collective) > 0)
          hoistProducers(collective.getInput());
    indexOps();
    SmallVector<Placement> placements = place();
    limitInFlightGathers(placements);
    dropEmptyWindows(placements);
    rewrite(placements);
  }

private:
  /// Whether `op` may move anywhere its operands dominate: it has no memory
  /// effects and is not the block's terminator or a scheduling op.
  static bool isMovable(Operation *op) {
    return !op->hasTrait<OpTrait::IsTerminator>() &&
           !isa<AsyncOp, AwaitOp>(op) && isMemoryEffectFree(op);
  }

  /// Moves the side-effect-free ops that (transitively) consume a
  /// communicating collective's result down to just before their first use
  /// in this block. What the program does with a reduced gradient (the
  /// shard's update, the gather of the new weights) is needed only at the
  /// end of the step, so the backward pass in between becomes the
  /// collective's window instead of ending it.
  void sinkConsumers() {
    SetVector<Operation *> consumers;
    SmallVector<Value> worklist;
    for (Operation &op : block)
      if (auto collective = dyn_cast<CollectiveOpInterface>(&op))
        if (model.communicationSeconds(collective) > 0)
          worklist.push_back(collective.getResult());
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      for (Operation *user : value.getUsers()) {
        Operation *inBlock = block.findAncestorOpInBlock(*user);
        if (!inBlock || !isMovable(inBlock) || !consumers.insert(inBlock))
          continue;
        llvm::append_range(worklist, inBlock->getResults());
      }
    }
    // Latest first: an op's users are in their final place when it moves,
    // and each op only moves down, so every definition still dominates.
    SmallVector<Operation *> order(consumers.begin(), consumers.end());
    llvm::sort(order, [](Operation *a, Operation *b) {
      return b->isBeforeInBlock(a);
    });
    for (Operation *op : order) {
      Operation *firstUser = nullptr;
      for (Operation *user : op->getUsers()) {
        Operation *inBlock = block.findAncestorOpInBlock(*user);
        if (inBlock && (!firstUser || inBlock->isBeforeInBlock(firstUser)))
          firstUser = inBlock;
      }
      if (firstUser && firstUser != op->getNextNode())
        op->moveBefore(firstUser);
    }
  }

  /// Moves the side-effect-free ops that compute `value` in this block up
  /// to just after their own operands: the flattening and padding before a
  /// collective sit next to it, and would otherwise hold its start back to
  /// there.
  void hoistProducers(Value value) {
    Operation *producer = value.getDefiningOp();
    if (!producer || producer->getBlock() != &block ||
        isa<CollectiveOpInterface, AsyncOp, AwaitOp>(producer) ||
        !isMemoryEffectFree(producer) ||
        (producer->getNumRegions() && !isa<tensor::PadOp>(producer)))
      return;
    // Its operands, and what its regions (a pad's value) use from above.
    SetVector<Value> inputs(producer->getOperands().begin(),
                            producer->getOperands().end());
    getUsedValuesDefinedAbove(producer->getRegions(), inputs);
    Operation *latest = nullptr;
    for (Value operand : inputs) {
      hoistProducers(operand);
      Operation *def = operand.getDefiningOp();
      if (def && def->getBlock() == &block &&
          (!latest || latest->isBeforeInBlock(def)))
        latest = def;
    }
    if (!latest)
      producer->moveBefore(&block.front());
    else if (latest->getNextNode() != producer)
      producer->moveAfter(latest);
  }

  void indexOps() {
    computeBefore.push_back(0);
    for (Operation &op : block) {
      index[&op] = ops.size();
      ops.push_back(&op);
      computeBefore.push_back(computeBefore.back() +
                              model.computeSecondsWithin(&op));
    }
  }

  /// Whether ops[begin..end) cost any computation: what a collective in
  /// flight over them could overlap.
  bool computesBetween(size_t begin, size_t end) const {
    return computeBefore[end] - computeBefore[begin] > 0;
  }

  /// The index of the op of this block that is or holds `op`.
  size_t indexOfAncestor(Operation *op) {
    return index.lookup(block.findAncestorOpInBlock(*op));
  }

  /// Earliest and latest places of each collective worth overlapping.
  SmallVector<Placement> place() {
    SmallVector<Placement> placements;
    DenseMap<Operation *, size_t> awaitOf;
    for (Operation *op : ops) {
      auto collective = dyn_cast<CollectiveOpInterface>(op);
      if (!collective || model.communicationSeconds(collective) == 0 ||
          collective.getResult().use_empty())
        continue;
      Placement placement;
      placement.collective = collective;
      // The input exists after its definition, or after the await of the
      // collective that computes it.
      Operation *producer = collective.getInput().getDefiningOp();
      if (producer && producer->getBlock() == &block)
        placement.start = awaitOf.count(producer) ? awaitOf.lookup(producer)
                                                  : index.lookup(producer) + 1;
      size_t deadline = ops.size() - 1;
      for (Operation *user : collective.getResult().getUsers())
        deadline = std::min(deadline, indexOfAncestor(user));
      placement.deadline = deadline;
      if (!computesBetween(placement.start, deadline))
        continue;
      if (isa<AllGatherOp>(op))
        placement.heldBytes =
            getTensorBytes(collective.getResult().getType()).value_or(0);
      awaitOf[op] = deadline;
      placements.push_back(placement);
    }
    // Needed first, issued first (stable: program order among equals).
    llvm::stable_sort(placements, [](const Placement &a, const Placement &b) {
      return a.deadline < b.deadline;
    });
    return placements;
  }

  /// Delays all-gathers whose results would together hold more than
  /// `maxInFlight` bytes before use.
  void limitInFlightGathers(SmallVector<Placement> &placements) {
    if (maxInFlight <= 0)
      return;
    SmallVector<int64_t> held(ops.size() + 1, 0);
    for (Placement &placement : placements) {
      if (!placement.heldBytes)
        continue;
      if (placement.heldBytes > maxInFlight) {
        placement.start = placement.deadline;
        continue;
      }
      for (size_t at = placement.deadline; at > placement.start; --at) {
        if (held[at - 1] + placement.heldBytes > maxInFlight) {
          placement.start = at;
          break;
        }
      }
      for (size_t at = placement.start; at < placement.deadline; ++at)
        held[at] += placement.heldBytes;
    }
  }

  /// Drops placements left with no computation to overlap (a delayed
  /// gather that now starts at its use).
  void dropEmptyWindows(SmallVector<Placement> &placements) {
    llvm::erase_if(placements, [&](const Placement &placement) {
      return !computesBetween(placement.start, placement.deadline);
    });
  }

  /// The op that stays where it is at or after index `at`: scheduled
  /// collectives move into their zero.async. Null for the block's end.
  Operation *anchor(size_t at, const DenseSet<Operation *> &moved) {
    for (; at < ops.size(); ++at)
      if (!moved.contains(ops[at]))
        return ops[at];
    return nullptr;
  }

  void setInsertionPoint(OpBuilder &b, Operation *before) {
    if (before)
      b.setInsertionPoint(before);
    else
      b.setInsertionPointToEnd(&block);
  }

  void rewrite(SmallVector<Placement> &placements) {
    // Issue order: by start, then by need.
    llvm::stable_sort(placements, [](const Placement &a, const Placement &b) {
      return a.start < b.start;
    });
    DenseSet<Operation *> moved;
    for (Placement &placement : placements)
      moved.insert(placement.collective);
    OpBuilder b(block.getParentOp()->getContext());
    DenseSet<Operation *> asyncs;
    SmallVector<std::pair<AsyncOp, Operation *>> awaitsBefore;
    for (Placement &placement : placements) {
      Operation *op = placement.collective;
      Value result = placement.collective.getResult();
      setInsertionPoint(b, anchor(placement.start, moved));
      auto async = AsyncOp::create(
          b, op->getLoc(), FutureType::get(op->getContext(), result.getType()));
      b.createBlock(&async.getBody());
      auto yield = zero::YieldOp::create(b, op->getLoc(), result);
      op->moveBefore(yield);
      asyncs.insert(async);
      awaitsBefore.push_back({async, anchor(placement.deadline, moved)});
    }
    // Awaits go in issue order, ahead of the asyncs placed at the same op
    // (which may start a collective of the awaited value).
    for (auto [async, before] : awaitsBefore) {
      Operation *at = before;
      Operation *prev = at ? at->getPrevNode() : &block.back();
      for (; prev && asyncs.contains(prev); prev = prev->getPrevNode())
        at = prev;
      setInsertionPoint(b, at);
      Value result = async.getCollective().getResult();
      auto await = AwaitOp::create(b, async.getLoc(), async.getFuture());
      result.replaceUsesWithIf(await.getResult(), [&](OpOperand &use) {
        return use.getOwner()->getParentOp() != async;
      });
    }
  }

  Block &block;
  const CostModel &model;
  int64_t maxInFlight;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, size_t> index;
  /// computeBefore[i]: seconds of computation of ops[0..i).
  SmallVector<double> computeBefore;
};

struct ZeroScheduleOverlapPass
    : public zero::impl::ZeroScheduleOverlapBase<ZeroScheduleOverlapPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<CostModelParameters> parameters = getCostModelParameters(
        getOperation(), getArgument(), latencyMicroseconds, bandwidthGBps,
        gflops, gelementsPerSecond);
    if (failed(parameters))
      return signalPassFailure();
    CostModel model(*parameters);
    SmallVector<Block *> blocks;
    getOperation().walk([&](Operation *op) {
      if (isa<AsyncOp, linalg::LinalgOp>(op))
        return;
      for (Region &region : op->getRegions())
        for (Block &block : region)
          blocks.push_back(&block);
    });
    for (Block *block : blocks)
      BlockScheduler(*block, model, maxInFlightBytes).run();
  }
};

} // namespace
