//===- ScheduleOverlap.cpp - start collectives early, await them late -----===//
//
// Per block: each communicating collective becomes a zero.async right after
// its input's definition and a zero.await right before its first use, unless
// the cost model sees no computation in between. All-gathers started ahead
// of their use hold their result; max-in-flight-bytes caps the sum. See
// Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROSCHEDULEOVERLAP
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// Moves `collective` into a new zero.async where `b` stands: it starts
/// there, and the future holds its result.
AsyncOp startAsync(OpBuilder &b, CollectiveOpInterface collective) {
  Location loc = collective.getLoc();
  Value result = collective.getResult();
  auto async = AsyncOp::create(
      b, loc, FutureType::get(b.getContext(), result.getType()));
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&async.getBody());
  auto yield = zero::YieldOp::create(b, loc, result);
  collective->moveBefore(yield);
  return async;
}

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

/// Positions of a block's ops that stay cheap to compare while ops move.
/// MLIR numbers a block's ops with small gaps and renumbers the whole block
/// on the first comparison after a move into a gap it has used up: moving
/// thousands of a step's ops, each followed by a comparison, was quadratic.
/// Here the gaps are 2^32 wide, and the block is renumbered only when one
/// runs out.
class OpPositions {
public:
  explicit OpPositions(Block &block) : block(block) { renumber(); }

  bool isBefore(Operation *a, Operation *b) const {
    return at.lookup(a) < at.lookup(b);
  }
  void moveBefore(Operation *op, Operation *next) {
    op->moveBefore(next);
    place(op);
  }
  void moveAfter(Operation *op, Operation *previous) {
    op->moveAfter(previous);
    place(op);
  }

private:
  static constexpr uint64_t kGap = uint64_t(1) << 32;

  /// Numbers `op` between its neighbours.
  void place(Operation *op) {
    Operation *previous = op->getPrevNode(), *next = op->getNextNode();
    uint64_t low = previous ? at.lookup(previous) : 0;
    uint64_t high = next ? at.lookup(next) : low + 2 * kGap;
    if (high - low < 2)
      return renumber();
    at[op] = low + (high - low) / 2;
  }
  void renumber() {
    uint64_t position = kGap;
    for (Operation &op : block) {
      at[&op] = position;
      position += kGap;
    }
  }

  Block &block;
  DenseMap<Operation *, uint64_t> at;
};

class BlockScheduler {
public:
  BlockScheduler(Block &block, const CostModel &model, int64_t maxInFlight)
      : block(block), model(model), maxInFlight(maxInFlight), positions(block) {
  }

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
    // Issue order: by start, then by need (place's order).
    llvm::stable_sort(placements, [](const Placement &a, const Placement &b) {
      return a.start < b.start;
    });
    awaitReturnedCollectivesEarly(placements);
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
    llvm::sort(order, [&](Operation *a, Operation *b) {
      return positions.isBefore(b, a);
    });
    for (Operation *op : order) {
      Operation *firstUser = nullptr;
      for (Operation *user : op->getUsers()) {
        Operation *inBlock = block.findAncestorOpInBlock(*user);
        if (inBlock && (!firstUser || positions.isBefore(inBlock, firstUser)))
          firstUser = inBlock;
      }
      if (firstUser && firstUser != op->getNextNode())
        positions.moveBefore(op, firstUser);
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
          (!latest || positions.isBefore(latest, def)))
        latest = def;
    }
    if (!latest)
      positions.moveBefore(producer, &block.front());
    else if (latest->getNextNode() != producer)
      positions.moveAfter(producer, latest);
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
      // A new weight starts after the last read of the one it replaces.
      size_t afterOldReads = isa<AllGatherOp>(op)
                                 ? afterLastReadOfReplaced(collective, deadline)
                                 : 0;
      bool waitsForOldReads = afterOldReads > placement.start;
      placement.start = std::max(placement.start, afterOldReads);
      if (!computesBetween(placement.start, deadline)) {
        mlir::emitRemark(op->getLoc(), "not overlapped: nothing is computed "
                                       "between ")
            << (waitsForOldReads ? "the last read of the state it replaces"
                                 : "the definition of its input")
            << " and its first use";
        continue;
      }
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
      if (computesBetween(placement.start, placement.deadline))
        return false;
      mlir::emitRemark(
          placement.collective->getLoc(),
          "not overlapped: started any earlier, the weights gathered before "
          "their use would exceed max-in-flight-bytes (")
          << maxInFlight << ")";
      return true;
    });
  }

  /// Whether the block only returns `value`, through views (a bucket's
  /// slices, reshapes): the new weights a step at the function boundary
  /// gathers.
  bool onlyReturned(Value value) const {
    if (!isa<FunctionOpInterface>(block.getParentOp()))
      return false;
    return llvm::all_of(value.getUsers(), [&](Operation *user) {
      if (user == block.getTerminator())
        return user->hasTrait<OpTrait::ReturnLike>();
      return user->getBlock() == &block &&
             isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                 tensor::CollapseShapeOp, tensor::CastOp>(user) &&
             onlyReturned(user->getResult(0));
    });
  }

  /// The index after the last op before `deadline` that reads an argument
  /// whose next value (the result's `zero.state_of`) is what `gather`
  /// gathers, only returned (onlyReturned); 0 when none does. Started
  /// before, the gather would write its result beside the old value, which
  /// is still read, rather than into the argument's buffer: a delayed
  /// update (zero-delay-update) makes the new shards at the step's start,
  /// before the forward and backward read the old weights.
  size_t afterLastReadOfReplaced(CollectiveOpInterface gather,
                                 size_t deadline) {
    auto fn = dyn_cast<FunctionOpInterface>(block.getParentOp());
    if (!fn || !block.isEntryBlock() || !onlyReturned(gather.getResult()))
      return 0;
    size_t after = 0;
    for (unsigned result : returnedAs(gather.getResult())) {
      auto argument = fn.getResultAttrOfType<IntegerAttr>(
          result, StringAttr::get(fn->getContext(), kStateOfAttrName));
      if (!argument || argument.getInt() < 0 ||
          argument.getInt() >= block.getNumArguments())
        continue;
      for (Operation *user :
           usersThroughViews(block.getArgument(argument.getInt()))) {
        size_t at = indexOfAncestor(user);
        if (at < deadline)
          after = std::max(after, at + 1);
      }
    }
    return after;
  }

  /// The positions among the terminator's operands where `value` is
  /// returned, through views (onlyReturned).
  SmallVector<unsigned> returnedAs(Value value) const {
    SmallVector<unsigned> positions;
    for (OpOperand &use : value.getUses()) {
      if (use.getOwner() == block.getTerminator())
        positions.push_back(use.getOperandNumber());
      else
        llvm::append_range(positions, returnedAs(use.getOwner()->getResult(0)));
    }
    return positions;
  }

  /// Awaits each collective whose result the block only returns
  /// (onlyReturned: a step's new weights at the function boundary, a
  /// delayed update's gradient shards) where a collective issued after it
  /// completes: the await of one started later, or one left synchronous,
  /// whichever comes first. A rank runs its collectives one at a time in
  /// issue order, so it is done by then, and the await costs no wait;
  /// awaited before the return, every such result would be held until
  /// then, all at once (a gathered bucket, until zero-donate-state copies
  /// its members out). Nothing is awaited where the cost model only
  /// expects it done: a wrong guess would stall the computation the
  /// schedule overlaps.
  void awaitReturnedCollectivesEarly(SmallVector<Placement> &placements) {
    // The rank's collectives in issue order (`placements`' order, the
    // asyncs placed at an op before it): where each completes at the
    // latest, the latest issued first, so that a later one's await, once
    // moved, is where an earlier one is done too.
    DenseSet<Operation *> placed;
    for (const Placement &placement : placements)
      placed.insert(placement.collective);
    size_t completes = ops.size();
    auto placement = placements.rbegin();
    for (size_t at = ops.size(); at-- > 0;) {
      auto collective = dyn_cast<CollectiveOpInterface>(ops[at]);
      if (collective && !placed.contains(collective) &&
          model.communicationSeconds(collective) > 0)
        completes = at + 1;
      for (; placement != placements.rend() && placement->start == at;
           ++placement) {
        if (onlyReturned(placement->collective.getResult()))
          placement->deadline = std::min(placement->deadline, completes);
        completes = std::min(completes, placement->deadline);
      }
    }
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

  /// Issues `placements` in their order (by start, then by need).
  void rewrite(ArrayRef<Placement> placements) {
    DenseSet<Operation *> moved;
    for (const Placement &placement : placements)
      moved.insert(placement.collective);
    OpBuilder b(block.getParentOp()->getContext());
    DenseSet<Operation *> asyncs;
    SmallVector<std::pair<AsyncOp, Operation *>> awaitsBefore;
    for (const Placement &placement : placements) {
      setInsertionPoint(b, anchor(placement.start, moved));
      AsyncOp async = startAsync(b, placement.collective);
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
  /// The ops' order while sinkConsumers and hoistProducers move them.
  OpPositions positions;
  SmallVector<Operation *> ops;
  DenseMap<Operation *, size_t> index;
  /// computeBefore[i]: seconds of computation of ops[0..i).
  SmallVector<double> computeBefore;
};

/// Whether `op` is a reshape or a static unit-stride slice: the data
/// movement between a gathered tensor and the weights a loop carries, which
/// can be run backwards (see rebuildFromLeaves).
static bool isInvertibleView(Operation *op) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return expand.getResultType().hasStaticShape();
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    return collapse.getSrcType().hasStaticShape();
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op))
    return slice.hasUnitStride() && slice.getOffsets().empty() &&
           slice.getSizes().empty() && slice.getSourceType().hasStaticShape();
  return false;
}

/// Whether two static slices of one tensor share an element.
static bool overlap(tensor::ExtractSliceOp a, tensor::ExtractSliceOp b) {
  for (auto [offsetA, sizeA, offsetB, sizeB] :
       llvm::zip(a.getStaticOffsets(), a.getStaticSizes(), b.getStaticOffsets(),
                 b.getStaticSizes()))
    if (offsetA + sizeA <= offsetB || offsetB + sizeB <= offsetA)
      return false;
  return true;
}

/// A collective at the end of an scf.for body whose result reaches the next
/// iteration only through the loop: the all-gather of a deferred weight,
/// unpadded and unpacked (reshapes and slices) into the copies the loop
/// carries. Such a collective can start at the end of one iteration and be
/// awaited where the next one first reads the copies.
struct CarriedCollective {
  CollectiveOpInterface collective;
  /// The views from the collective's result to the carried copies, in
  /// program order.
  SmallVector<Operation *> views;
  /// Each carried copy (a value the views compute) and its iter_arg index.
  SmallVector<std::pair<Value, unsigned>> leaves;
};

/// Moves, in one scf.for, each carried collective's start to the end of an
/// iteration and its await into the next (see Passes.td).
class BackEdgePrefetcher {
public:
  BackEdgePrefetcher(scf::ForOp loop, const CostModel &model)
      : loop(loop), model(model) {}

  void run() {
    while (std::optional<CarriedCollective> carried = findNext())
      rotate(*carried);
  }

private:
  Block &body() { return *loop.getBody(); }

  /// The next communicating collective of the body that is carried and worth
  /// prefetching; remarks on those carried but left in place.
  std::optional<CarriedCollective> findNext() {
    for (Operation &op : body()) {
      auto collective = dyn_cast<CollectiveOpInterface>(&op);
      if (!collective || model.communicationSeconds(collective) == 0 ||
          tried.contains(&op))
        continue;
      tried.insert(&op);
      std::string why;
      std::optional<CarriedCollective> carried = collect(collective, why);
      if (carried && checkPlacement(*carried, why))
        return carried;
      if (!why.empty())
        mlir::emitRemark(op.getLoc(),
                         "not prefetched across the loop's back edge: ")
            << why;
    }
    return std::nullopt;
  }

  /// The views and carried copies of `collective`; none when its result is
  /// used otherwise (then `why` says how, if the loop carries it at all).
  std::optional<CarriedCollective> collect(CollectiveOpInterface collective,
                                           std::string &why) {
    CarriedCollective carried;
    carried.collective = collective;
    Operation *yield = body().getTerminator();
    SmallVector<Value> worklist = {collective.getResult()};
    bool unsupported = false;
    while (!worklist.empty()) {
      Value value = worklist.pop_back_val();
      if (llvm::is_contained(value.getUsers(), yield)) {
        if (!value.hasOneUse()) {
          why = "a carried copy is also read in the body";
          return std::nullopt;
        }
        carried.leaves.push_back(
            {value, value.getUses().begin()->getOperandNumber()});
        continue;
      }
      SmallVector<Operation *> users(value.getUsers());
      for (Operation *user : users) {
        if (user->getBlock() != &body() || !isInvertibleView(user)) {
          unsupported = true;
          continue;
        }
        carried.views.push_back(user);
        worklist.push_back(user->getResult(0));
      }
      bool reshaped = llvm::any_of(users, [](Operation *user) {
        return !isa<tensor::ExtractSliceOp>(user);
      });
      if (reshaped && users.size() > 1)
        unsupported = true;
      for (auto [i, a] : llvm::enumerate(users))
        for (Operation *b : ArrayRef(users).drop_front(i + 1))
          if (isa<tensor::ExtractSliceOp>(a) &&
              isa<tensor::ExtractSliceOp>(b) &&
              overlap(cast<tensor::ExtractSliceOp>(a),
                      cast<tensor::ExtractSliceOp>(b))) {
            why = "the carried copies overlap in the gathered tensor";
            return std::nullopt;
          }
    }
    if (carried.leaves.empty())
      return std::nullopt;
    if (unsupported) {
      why = "its result is used in the body, or unpacked by an op other than "
            "a static reshape or slice";
      return std::nullopt;
    }
    llvm::sort(carried.views, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    return carried;
  }

  /// The ops of the body that read the carried copies (or values that may
  /// share their buffers): the collective may start only after the last of
  /// them. Fails, with `why`, when the loop yields such a value.
  bool findReaders(CarriedCollective &carried, SetVector<Operation *> &readers,
                   std::string &why) {
    SmallVector<Value> copies =
        llvm::map_to_vector(carried.leaves, [&](auto leaf) -> Value {
          return loop.getRegionIterArgs()[leaf.second];
        });
    readers = findBufferReaders(copies, body());
    if (readers.remove(body().getTerminator())) {
      why = "the loop yields a view of a carried copy";
      return false;
    }
    return true;
  }

  /// Where the async and the await go, and whether any computation runs
  /// while the collective is in flight.
  bool checkPlacement(CarriedCollective &carried, std::string &why) {
    SetVector<Operation *> readers;
    if (!findReaders(carried, readers, why))
      return false;
    Operation *collective = carried.collective;
    startAfter = collective;
    awaitBefore = nullptr;
    for (Operation *reader : readers) {
      if (startAfter->isBeforeInBlock(reader))
        startAfter = reader;
      if (!awaitBefore || reader->isBeforeInBlock(awaitBefore))
        awaitBefore = reader;
    }
    // With no reader in the body, the await goes just before the next start.
    if (!awaitBefore)
      awaitBefore = startAfter->getNextNode();
    double window = 0;
    for (Operation &op : body()) {
      if (&op == awaitBefore)
        break;
      window += model.computeSecondsWithin(&op);
    }
    for (Operation *op = startAfter->getNextNode(); op; op = op->getNextNode())
      window += model.computeSecondsWithin(op);
    return window > 0;
  }

  /// Clones the views from `root` (the collective's value) and returns the
  /// clone of each carried copy.
  SmallVector<Value> cloneViews(OpBuilder &b, CarriedCollective &carried,
                                Value root) {
    IRMapping mapping;
    mapping.map(carried.collective.getResult(), root);
    for (Operation *view : carried.views)
      b.clone(*view, mapping);
    return llvm::map_to_vector(
        carried.leaves, [&](auto leaf) { return mapping.lookup(leaf.first); });
  }

  /// A value of `value`'s type whose views are the carried copies' initial
  /// values: the views run backwards (reshapes inverted, slices inserted
  /// into zeros). Null when no carried copy is computed from `value`.
  Value rebuildFromLeaves(OpBuilder &b, CarriedCollective &carried,
                          Value value) {
    for (auto [leaf, index] : carried.leaves)
      if (leaf == value)
        return loop.getInitArgs()[index];
    Location loc = loop.getLoc();
    auto type = cast<RankedTensorType>(value.getType());
    Value rebuilt;
    for (Operation *user : value.getUsers()) {
      Value part = rebuildFromLeaves(b, carried, user->getResult(0));
      if (!part)
        continue;
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
        return tensor::CollapseShapeOp::create(
            b, loc, type, part, expand.getReassociationIndices());
      if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(user))
        return tensor::ExpandShapeOp::create(
            b, loc, type, part, collapse.getReassociationIndices());
      auto slice = cast<tensor::ExtractSliceOp>(user);
      if (!rebuilt) {
        Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                              type.getElementType());
        Value zero = arith::ConstantOp::create(
            b, loc, b.getZeroAttr(type.getElementType()));
        rebuilt = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
      }
      rebuilt = tensor::InsertSliceOp::create(
          b, loc, part, rebuilt, slice.getMixedOffsets(), slice.getMixedSizes(),
          slice.getMixedStrides());
    }
    return rebuilt;
  }

  void rotate(CarriedCollective &carried) {
    Operation *collective = carried.collective;
    Value value = carried.collective.getResult();
    OpBuilder b(loop);

    // Before the loop: the first iteration's future holds the initial
    // copies, packed as the collective would have gathered them.
    Value initial = rebuildFromLeaves(b, carried, value);
    Value ready = ReadyOp::create(b, loop.getLoc(), initial);

    // In the body: await the future before the first reader and unpack the
    // copies there; start the collective after the last reader.
    Value future = body().addArgument(ready.getType(), loop.getLoc());
    b.setInsertionPoint(awaitBefore);
    Value awaited = AwaitOp::create(b, collective->getLoc(), future);
    for (auto [copy, leaf] :
         llvm::zip(cloneViews(b, carried, awaited), carried.leaves))
      loop.getRegionIterArgs()[leaf.second].replaceAllUsesWith(copy);
    b.setInsertionPointAfter(startAfter);
    AsyncOp async = startAsync(b, carried.collective);

    // The loop: the copies' iter_args give way to the future.
    SmallVector<unsigned> dropped = llvm::map_to_vector(
        carried.leaves, [](auto leaf) { return leaf.second; });
    llvm::sort(dropped);
    Operation *terminator = body().getTerminator();
    terminator->insertOperands(terminator->getNumOperands(), async.getFuture());
    for (unsigned index : llvm::reverse(dropped))
      terminator->eraseOperand(index);
    SmallVector<Value> inits;
    for (auto [index, init] : llvm::enumerate(loop.getInitArgs()))
      if (!llvm::is_contained(dropped, index))
        inits.push_back(init);
    inits.push_back(ready);
    b.setInsertionPoint(loop);
    auto rotated =
        scf::ForOp::create(b, loop.getLoc(), loop.getLowerBound(),
                           loop.getUpperBound(), loop.getStep(), inits);
    rotated.getRegion().takeBody(loop.getRegion());
    for (unsigned index : llvm::reverse(dropped))
      rotated.getBody()->eraseArgument(index + 1);

    // After the loop: the last iteration's collective, unpacked.
    b.setInsertionPointAfter(rotated);
    Value last =
        AwaitOp::create(b, collective->getLoc(), rotated.getResults().back());
    SmallVector<Value> lastCopies = cloneViews(b, carried, last);
    unsigned next = 0;
    for (auto [index, result] : llvm::enumerate(loop.getResults())) {
      auto *leaf = llvm::find_if(
          carried.leaves, [&](auto leaf) { return leaf.second == index; });
      if (leaf != carried.leaves.end())
        result.replaceAllUsesWith(lastCopies[leaf - carried.leaves.begin()]);
      else
        result.replaceAllUsesWith(rotated.getResult(next++));
    }
    for (Operation *view : llvm::reverse(carried.views))
      view->erase();
    loop.erase();
    loop = rotated;
  }

  scf::ForOp loop;
  const CostModel &model;
  DenseSet<Operation *> tried;
  /// Set by checkPlacement: the op the async follows, the one the await
  /// precedes.
  Operation *startAfter = nullptr;
  Operation *awaitBefore = nullptr;
};

struct ZeroScheduleOverlapPass
    : public zero::impl::ZeroScheduleOverlapBase<ZeroScheduleOverlapPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<CostModelParameters> parameters = getCostModelParameters(
        getOperation(), getArgument(), latencyMicroseconds, bandwidthGBps,
        gflops, gelementsPerSecond, reduceBandwidthGBps);
    if (failed(parameters))
      return signalPassFailure();
    CostModel model(*parameters);
    // Across back edges first (innermost loops first): a carried collective
    // gets the rest of its iteration and the start of the next as its window,
    // more than its own block could give it.
    SmallVector<scf::ForOp> loops;
    if (acrossIterations)
      getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    for (scf::ForOp loop : loops)
      BackEdgePrefetcher(loop, model).run();
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
