//===- DonateState.cpp - state results written into their arguments -------===//
//
// See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Target/CPU/Passes.h"
#include "llvm/ADT/MapVector.h"

namespace zero {
#define GEN_PASS_DEF_ZERODONATESTATE
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;
using zero::isView;
using zero::usersThroughViews;
using zero::viewSource;

namespace {

/// The destination operand of the op that makes `result`, when the op does
/// not read it (so that any tensor of its type may take its place); else
/// null, with `why` saying what stands in the way.
OpOperand *findUnreadDestination(Value result, std::string &why) {
  auto op = result.getDefiningOp<linalg::LinalgOp>();
  if (!op) {
    Operation *def = result.getDefiningOp();
    why = def ? "it is made by '" + def->getName().getStringRef().str() +
                    "', not by a linalg op with a destination"
              : "it is an argument";
    return nullptr;
  }
  OpOperand *init =
      op.getDpsInitOperand(cast<OpResult>(result).getResultNumber());
  if (op.payloadUsesValueFromOperand(init)) {
    why = "the op that makes it reads its destination";
    return nullptr;
  }
  return init;
}

/// What `value` is a reshape (tensor.collapse_shape, tensor.expand_shape)
/// of, through any number of them, each appended to `reshapes`, `value`'s
/// own first.
Value beneathReshapes(Value value, SmallVectorImpl<Operation *> &reshapes) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    reshapes.push_back(def);
    value = def->getOperand(0);
  }
  return value;
}

/// The `zero.async` that starts an `OpTy` collective (an all-gather, a
/// reduce-scatter) whose result `value` is (the `zero.await` of its future,
/// in the async's block); else null. Such a collective is the schedule's
/// (zero-schedule-overlap): started once its input is made, awaited where
/// it is done or before the return.
template <typename OpTy> zero::AsyncOp awaited(Value value) {
  auto await = value.getDefiningOp<zero::AwaitOp>();
  auto async =
      await ? await.getFuture().getDefiningOp<zero::AsyncOp>() : nullptr;
  if (!async || async->getBlock() != await->getBlock() ||
      !isa_and_present<OpTy>(async.getCollective()))
    return nullptr;
  return async;
}

zero::AsyncOp awaitedGather(Value value) {
  return awaited<zero::AllGatherOp>(value);
}

/// A state result that is a view of a tensor made for more than it, or
/// made for it alone by a collective: the slice of a padded or bucketed
/// all-gather that is a sharded step's new weight, or an all-gather of the
/// weight alone, perhaps reshaped; or a reduce-scatter's result, a delayed
/// update's gradient shard (zero-delay-update). Bufferized as it stands,
/// the slice is copied into a buffer of its own to be returned, and the
/// collective writes one, every step; copied into its argument's buffer
/// instead, it needs none (and the collective's own buffer goes too, once
/// `zero-forward-collective-outputs` has it write there).
struct SlicedResult {
  /// The slice (tensor.extract_slice), the all-gather's or reduce-scatter's
  /// result, or the await of one started by `zero.async` (awaited).
  Value source;
  /// The reshapes from the source to the result, the result's own first.
  SmallVector<Operation *> reshapes;

  bool isSlice() const {
    return source.getDefiningOp<tensor::ExtractSliceOp>();
  }
  /// Whether the source is an all-gather's result or a view of one: a
  /// weight the step gathers, not a value it reduces (a delayed update's
  /// gradient shard).
  bool isGathered() const {
    Value viewed = viewSource(source);
    return isa_and_present<zero::AllGatherOp>(viewed.getDefiningOp()) ||
           awaitedGather(viewed);
  }
  /// What the source is, for a remark.
  StringRef what() const {
    if (isSlice())
      return "a slice";
    if (awaitedGather(source))
      return "an awaited all-gather's result";
    if (awaited<zero::ReduceScatterOp>(source))
      return "an awaited reduce-scatter's result";
    return source.getDefiningOp<zero::AllGatherOp>()
               ? "an all-gather's result"
               : "a reduce-scatter's result";
  }
};

std::optional<SlicedResult> findSlicedResult(Value result) {
  SlicedResult sliced;
  sliced.source = beneathReshapes(result, sliced.reshapes);
  if (isa_and_present<tensor::ExtractSliceOp, zero::AllGatherOp,
                      zero::ReduceScatterOp>(sliced.source.getDefiningOp()) ||
      awaitedGather(sliced.source) ||
      awaited<zero::ReduceScatterOp>(sliced.source))
    return sliced;
  return std::nullopt;
}

/// Whether a loop starts from `argument` or a view of it (a sharded loop's
/// moment shard): the loop then updates it in place, and writing the
/// result into the argument as well would make One-Shot Bufferize copy the
/// whole argument before the loop.
bool startsALoop(Value argument) {
  return llvm::any_of(usersThroughViews(argument), [](Operation *user) {
    return isa<LoopLikeOpInterface>(user);
  });
}

/// `dest` (of `reshape`'s result type) reshaped to `reshape`'s source type.
Value unreshape(OpBuilder &b, Operation *reshape, Value dest) {
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape))
    return tensor::CollapseShapeOp::create(b, reshape->getLoc(),
                                           expand.getSrcType(), dest,
                                           expand.getReassociationIndices());
  auto collapse = cast<tensor::CollapseShapeOp>(reshape);
  return tensor::ExpandShapeOp::create(b, reshape->getLoc(),
                                       collapse.getSrcType(), dest,
                                       collapse.getReassociationIndices());
}

/// `argument` seen in the shape beneath `reshapes` (beneathReshapes's, the
/// result's own first): each undone, the last first.
Value argumentBeneathReshapes(OpBuilder &b, ArrayRef<Operation *> reshapes,
                              Value argument) {
  for (Operation *reshape : reshapes)
    argument = unreshape(b, reshape, argument);
  return argument;
}

/// Copies the slice `sliced` views into `argument` (seen in the slice's
/// shape) and returns the copy in the result's shape. The reshapes of the
/// slice that nothing reads any more go: left in place, each would still be
/// bufferized into a copy of its own.
Value copyIntoArgument(OpBuilder &b, SlicedResult &sliced, Value argument) {
  Value dest = argumentBeneathReshapes(b, sliced.reshapes, argument);
  Value copied =
      bufferization::MaterializeInDestinationOp::create(
          b, sliced.source.getLoc(), dest.getType(), sliced.source, dest)
          .getResult();
  for (Operation *reshape : llvm::reverse(sliced.reshapes)) {
    IRMapping mapping;
    mapping.map(reshape->getOperand(0), copied);
    copied = b.clone(*reshape, mapping)->getResult(0);
  }
  return copied;
}

/// copyIntoArgument, in place of the use `result` of the slice `sliced`
/// views: after `after` where given, else before the op that uses it.
void copyIntoArgument(OpOperand &result, SlicedResult &sliced, Value argument,
                      Operation *after = nullptr) {
  OpBuilder b(result.getOwner());
  if (after)
    b.setInsertionPointAfter(after);
  result.set(copyIntoArgument(b, sliced, argument));
  for (Operation *reshape : sliced.reshapes)
    if (reshape->use_empty())
      reshape->erase();
}

/// The latest of `latest` (null: none) and each op of `block` that reads
/// `argument`'s old value (uses it or a view of it, itself no view, or holds
/// such a use in its regions) and that `counts` accepts (by default, every
/// one).
Operation *latestRead(Block *block, Value argument, Operation *latest,
                      function_ref<bool(Operation *)> counts = nullptr) {
  for (Operation *user : usersThroughViews(argument)) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (!inBlock || isView(inBlock) || (counts && !counts(inBlock)))
      continue;
    if (!latest || latest->isBeforeInBlock(inBlock))
      latest = inBlock;
  }
  return latest;
}

/// The op of `block` after which the slice `source` may be copied into
/// `argument`: the latest of the slice's definition and every op of the
/// block that reads the argument's old value (an op holding a read in its
/// regions counts). Copied before the step's return instead, a slice of a
/// bucketed all-gather holds the whole bucket's gathered buffer until then,
/// every bucket's at once; copied here, each bucket's buffer is freed once
/// its members are copied out, and the next bucket reuses it.
Operation *lastOldValueRead(Block *block, Value source, Value argument) {
  return latestRead(block, argument,
                    block->findAncestorOpInBlock(*source.getDefiningOp()));
}

/// Moves the all-gather `gather` of a weight whose result is copied into its
/// argument `argument` to just after what it needs and every read of the
/// old weight: its input, and each op of its block that reads the argument
/// (an op holding a read in its regions counts) before the new weight is
/// used; with `pastLaterReads` false, only the reads before it. Left before
/// the step's return, it would hold every new shard until then; left where
/// a delayed update makes it (zero-delay-update, before the forward and
/// backward read the old weight), it would hold the new weight beside the
/// old. Placed so, each shard is freed after its gather, and the new
/// weight, written into the argument's buffer
/// (zero-forward-collective-outputs), takes no memory of its own.
void moveGatherAfterReads(zero::AllGatherOp gather, Value argument,
                          bool pastLaterReads) {
  Block *block = gather->getBlock();
  // The ops that use the gathered value: the copy into the argument, and
  // whatever else reads the new weight. The gather goes before them all.
  llvm::SmallPtrSet<Operation *, 8> usesResult;
  Operation *firstUse = nullptr;
  for (Operation *user : usersThroughViews(gather.getResult()))
    if (Operation *inBlock = block->findAncestorOpInBlock(*user)) {
      usesResult.insert(inBlock);
      if (!firstUse || inBlock->isBeforeInBlock(firstUse))
        firstUse = inBlock;
    }
  // The input's definition, whatever it is (a view of the new shard too).
  Operation *latest = gather.getInput().getDefiningOp();
  latest = latest ? block->findAncestorOpInBlock(*latest) : nullptr;
  // The reads of the old weight the gather must follow.
  latest = latestRead(block, argument, latest, [&](Operation *read) {
    return read != gather && !usesResult.contains(read) &&
           (!firstUse || read->isBeforeInBlock(firstUse)) &&
           (pastLaterReads || !gather->isBeforeInBlock(read));
  });
  if (latest)
    gather->moveAfter(latest);
  else
    gather->moveBefore(block, block->begin());
}

/// Moves `async`, which starts the all-gather of a weight that `await`
/// awaits and that is copied into its argument `argument`, down to just
/// after the last read of the old weight before the await. Started while
/// the old weight is still read (the schedule starts it once its shard is
/// made; a weight read again later, as a tied embedding is), the gather
/// needs a buffer of its own, held until the await and copied from there;
/// started after, it writes into the argument's buffer
/// (zero-forward-collective-outputs) while the computation after that read
/// runs. Nothing moves up.
void moveAsyncAfterReads(zero::AsyncOp async, Operation *await,
                         Value argument) {
  Operation *latest =
      latestRead(async->getBlock(), argument, nullptr, [&](Operation *read) {
        return read != async && read->isBeforeInBlock(await);
      });
  if (latest && async->isBeforeInBlock(latest))
    async->moveAfter(latest);
}

/// The views (isView) of `value`, through any number of them, in `block`'s
/// order; false where one is not an op of `block` or takes an operand other
/// than what it views (a dynamic offset), so could not move with `value`.
bool collectViews(Value value, Block *block,
                  SmallVectorImpl<Operation *> &views) {
  for (Operation *user : usersThroughViews(value)) {
    if (!isView(user))
      continue;
    if (user->getBlock() != block || user->getNumOperands() != 1)
      return false;
    views.push_back(user);
  }
  llvm::sort(views,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return true;
}

/// Moves the views of `value` (collectViews) up to just after its
/// definition, in their order, where each can move.
void hoistViews(Value value) {
  Block *block = value.getParentBlock();
  SmallVector<Operation *> views;
  if (!collectViews(value, block, views))
    return;
  Operation *at = value.getDefiningOp();
  for (Operation *view : views) {
    view->moveAfter(at);
    at = view;
  }
}

/// moveGatherAfterReads for an all-gather whose result is sliced (a bucket's
/// members, or a padded gather's weight) into state results copied into
/// `arguments`: the gather and the views that cut the members out move down
/// to just after every read of those arguments' old values that precedes
/// the first other use of what it gathered (the return). Left where
/// zero-combine-collectives put it, a delayed update's bucket is gathered
/// before the forward and backward read the old weights, and its gathered
/// buffer is held through them; moved, it is freed once the members are
/// copied out. Nothing moves up. Returns whether the gather moved.
bool moveSlicedGatherAfterReads(zero::AllGatherOp gather,
                                ArrayRef<Value> arguments) {
  Block *block = gather->getBlock();
  SmallVector<Operation *> views;
  if (!collectViews(gather.getResult(), block, views))
    return false;
  llvm::SmallPtrSet<Operation *, 16> cuts(views.begin(), views.end());
  Operation *firstUse = nullptr;
  for (Value value : llvm::concat<Value>(
           gather->getResults(), llvm::map_range(views, [](Operation *v) {
             return v->getResult(0);
           })))
    for (Operation *user : value.getUsers()) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (inBlock && !cuts.contains(inBlock) &&
          (!firstUse || inBlock->isBeforeInBlock(firstUse)))
        firstUse = inBlock;
    }
  Operation *latest = nullptr;
  for (Value argument : arguments)
    latest = latestRead(block, argument, latest, [&](Operation *read) {
      return !firstUse || read->isBeforeInBlock(firstUse);
    });
  if (!latest || !gather->isBeforeInBlock(latest))
    return false;
  gather->moveAfter(latest);
  hoistViews(gather.getResult());
  return true;
}

/// Whether sinkGatherInput may move `op`: it has no effect, and is no
/// collective, whose place the schedule of the step's communication sets.
bool movesWithGatherInput(Operation *op) {
  return isMemoryEffectFree(op) && !op->walk([](zero::CollectiveOpInterface) {
                                        return WalkResult::interrupt();
                                      }).wasInterrupted();
}

/// Moves the ops that make `gathered`, the input of `gather` (an
/// all-gather, or the zero.async that starts one), down to just before it,
/// where none has a side effect or is a collective, and each of their users
/// before it moves too: a delayed update (zero-delay-update) makes the new
/// shard, with the new moments and their step-0 guards, before the forward
/// and backward read the old weight, and the gather follows those reads
/// (moveGatherAfterReads); moved so, the shard is made just before its
/// gather rather than held through the forward and backward. What makes
/// an op's operand moves with it where all that operand's users do.
/// Nothing moves where an op that would have to cannot.
void sinkGatherInput(Operation *gather, Value gathered) {
  Block *block = gather->getBlock();
  Operation *input = gathered.getDefiningOp();
  auto beforeGather = [&](Operation *op) {
    return op && op->getBlock() == block && op->isBeforeInBlock(gather);
  };
  if (!beforeGather(input))
    return;
  llvm::SetVector<Operation *> moving;
  moving.insert(input);
  // Whether each user of `op` in the block moves or follows the gather.
  auto usersMoveOrFollow = [&](Operation *op) {
    return llvm::all_of(op->getUsers(), [&](Operation *user) {
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      return !inBlock || moving.contains(inBlock) || !beforeGather(inBlock);
    });
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (unsigned i = 0; i < moving.size(); ++i) {
      Operation *op = moving[i];
      if (!movesWithGatherInput(op))
        return;
      for (Operation *user : op->getUsers()) {
        Operation *inBlock = block->findAncestorOpInBlock(*user);
        if (beforeGather(inBlock))
          changed |= moving.insert(inBlock);
      }
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (beforeGather(def) && !moving.contains(def) &&
            movesWithGatherInput(def) && usersMoveOrFollow(def))
          changed |= moving.insert(def);
      }
    }
  }
  SmallVector<Operation *> inOrder(moving.begin(), moving.end());
  llvm::sort(inOrder,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : inOrder)
    op->moveBefore(gather);
}

/// Whether the buffer of `value` may be read after `op` in their block: by
/// an op after it, or through what an op before it makes that may share the
/// buffer (a view; a region's result).
bool readAfter(Value value, Operation *op) {
  for (Operation *user : value.getUsers()) {
    if (user == op)
      continue;
    Operation *inBlock = op->getBlock()->findAncestorOpInBlock(*user);
    if (!inBlock || !inBlock->isBeforeInBlock(op))
      return true;
    if (!isView(inBlock) && inBlock->getNumRegions() == 0)
      continue;
    for (Value result : inBlock->getResults())
      if (readAfter(result, op))
        return true;
  }
  return false;
}

/// The next value of `arg`, made by a linalg op in the body that does not
/// read its destination, written into `arg` itself where nothing reads the
/// old value after that op. Returns whether it is.
bool updateInPlace(scf::ForOp loop, BlockArgument arg, Value next) {
  auto op = next.getDefiningOp<linalg::LinalgOp>();
  if (!op || op->getBlock() != loop.getBody() ||
      next.getType() != arg.getType())
    return false;
  std::string why;
  OpOperand *init = findUnreadDestination(next, why);
  // One destination for one result: an op whose other outputs already
  // write into this argument would alias two results.
  if (!init || readAfter(arg, op) ||
      llvm::any_of(op.getDpsInits(), [&](Value v) { return v == arg; }))
    return false;
  init->set(arg);
  return true;
}

/// The next value of `arg` that is a slice (perhaps reshaped) of something
/// else the body made (a carried weight's copy, its part of a gathered
/// bucket), or a gather's whole result: copied into `arg` at the end of the
/// iteration, when every read of the old value is done, rather than into a
/// buffer of its own beside the bucket and the old value. Returns whether it
/// is.
bool copySliceInPlace(scf::ForOp loop, BlockArgument arg, OpOperand &next) {
  std::optional<SlicedResult> sliced = findSlicedResult(next.get());
  if (!sliced || sliced->source.getParentBlock() != loop.getBody() ||
      next.get().getType() != arg.getType() ||
      (sliced->isSlice() && viewSource(sliced->source) == arg))
    return false;
  copyIntoArgument(next, *sliced, arg);
  return true;
}

/// Whether `value` is (a view of) an argument of its function that
/// zero-offload-state placed in host memory.
bool startsInHostMemory(Value value) {
  auto arg = dyn_cast<BlockArgument>(viewSource(value));
  if (!arg)
    return false;
  auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
  return fn && arg.getOwner() == &fn.getBody().front() &&
         zero::isHostArgument(fn, arg.getArgNumber());
}

/// Writes each value `loop` carries into the buffer it came in, where that
/// is safe (updateInPlace, copySliceInPlace): an optimizer's fused update of
/// a weight and its moments, a carried weight's gathered copy. One-Shot
/// Bufferize then keeps one buffer for the value across the loop. Returns
/// the iteration arguments so carried.
llvm::SmallPtrSet<BlockArgument, 8> carryInPlace(scf::ForOp loop) {
  llvm::SmallPtrSet<BlockArgument, 8> inPlace;
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  for (auto [index, arg, next] :
       llvm::enumerate(loop.getRegionIterArgs(), yield->getOpOperands())) {
    // What the loop carries in host memory stays there in place only where
    // the loop starts it from the host: once the iteration argument is
    // folded away (zero-fold-in-place-iter-args), nothing else places it.
    if (zero::isHostIterArg(loop, index) &&
        !startsInHostMemory(loop.getInitArgs()[index]))
      continue;
    if (updateInPlace(loop, arg, next.get()) ||
        copySliceInPlace(loop, arg, next))
      inPlace.insert(arg);
  }
  return inPlace;
}

struct ZeroDonateStatePass
    : public zero::impl::ZeroDonateStateBase<ZeroDonateStatePass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    if (!ret)
      return;
    moveSlicedGathersAfterReads(fn, ret);
    // The loops of the body, each carrying its state in place.
    llvm::DenseMap<Operation *, llvm::SmallPtrSet<BlockArgument, 8>> loops;
    for (auto loop : fn.getBody().front().getOps<scf::ForOp>())
      loops[loop] = carryInPlace(loop);
    for (auto [index, argument] : llvm::enumerate(zero::findStateResults(fn))) {
      if (!argument)
        continue;
      Value result = ret.getOperand(index);
      std::string why;
      if (auto loop = result.getDefiningOp<scf::ForOp>()) {
        // A training loop that starts from the argument and carries it in
        // place leaves its last value in the argument's buffer.
        OpResult carried = cast<OpResult>(result);
        BlockArgument iterArg = loop.getTiedLoopRegionIterArg(carried);
        if (loop.getTiedLoopInit(iterArg)->get() != fn.getArgument(*argument))
          why = "a loop makes it, from a value other than its argument";
        else if (!loops[loop].contains(iterArg))
          why = "a loop makes it, and the next value in each iteration is "
                "not made in place (no linalg op that writes it without "
                "reading its destination, or the old value is read after)";
        else {
          donate(fn, *argument, index);
          continue;
        }
        emitRemark(fn.getLoc()) << "zero-donate-state: result " << index
                                << " (the next value of argument " << *argument
                                << ") keeps a buffer of its own: " << why;
        continue;
      }
      std::optional<SlicedResult> sliced = findSlicedResult(result);
      if (sliced) {
        if (zero::isHostArgument(fn, *argument) && !sliced->isGathered()) {
          // zero-offload-to-host sends such a slice down on the rank's host
          // queue, into pinned memory of its own, as the step goes on: the
          // queue's update may still read the argument's old value. A
          // gathered weight (offload=params) is copied into its argument
          // like any other, on the rank's stream after the device's last
          // read of the old weight, so that the step allocates no pinned
          // memory for it and frees the gather's device buffer at once.
          why = "it is " + sliced->what().str() +
                ", and its argument lives in host memory";
        } else if (startsALoop(fn.getArgument(*argument))) {
          why = "it is " + sliced->what().str() +
                ", and a loop starts from its argument";
        } else {
          Value arg = fn.getArgument(*argument);
          zero::AsyncOp async = awaitedGather(sliced->source);
          if (async && !zero::isHostArgument(fn, *argument)) {
            moveAsyncAfterReads(async, sliced->source.getDefiningOp(), arg);
            // Where some state lives in host memory, an offloaded update
            // runs on the host queue and must start early, beside the
            // forward and backward.
            if (!zero::hasHostArguments(fn))
              sinkGatherInput(async, async.getCollective().getInput());
          }
          copyIntoArgument(
              ret->getOpOperand(index), *sliced, arg,
              sliced->isSlice() || async
                  ? lastOldValueRead(&fn.getBody().front(), sliced->source, arg)
                  : nullptr);
          // A weight in host memory goes through a device buffer of the
          // gather's own, copied into the argument after the device's last
          // read of the old weight wherever the gather stands; moved past
          // those reads, its staging would be held beside the backward
          // pass's gradients instead.
          if (auto gather = sliced->source.getDefiningOp<zero::AllGatherOp>()) {
            moveGatherAfterReads(gather, fn.getArgument(*argument),
                                 !zero::isHostArgument(fn, *argument));
            sinkGatherInput(gather, gather.getInput());
          }
          donate(fn, *argument, index);
          continue;
        }
      }
      SmallVector<Operation *> reshapes;
      // The op that makes the result may make it through reshapes: a
      // delayed update's step-0 guard picks a small weight's next value in
      // the [N][chunk] shape of its bucket, collapsed to the weight's.
      OpOperand *init =
          sliced
              ? nullptr
              : findUnreadDestination(beneathReshapes(result, reshapes), why);
      if (!init) {
        // At the function's location, without the function: printed with
        // each remark, it made a step with many such results quadratic.
        emitRemark(fn.getLoc()) << "zero-donate-state: result " << index
                                << " (the next value of argument " << *argument
                                << ") keeps a buffer of its own: " << why;
        continue;
      }
      OpBuilder b(init->getOwner());
      init->set(
          argumentBeneathReshapes(b, reshapes, fn.getArgument(*argument)));
      donate(fn, *argument, index);
    }
  }

  /// Each all-gather sliced into state results that are copied into their
  /// arguments in device memory (below), moved past the reads of their old
  /// values first: where it stands bounds where each copy may go.
  static void moveSlicedGathersAfterReads(func::FuncOp fn, func::ReturnOp ret) {
    llvm::MapVector<Operation *, SmallVector<Value>> gathers;
    llvm::SetVector<Value> awaited;
    for (auto [index, argument] : llvm::enumerate(zero::findStateResults(fn))) {
      if (!argument || zero::isHostArgument(fn, *argument))
        continue;
      std::optional<SlicedResult> sliced =
          findSlicedResult(ret.getOperand(index));
      Value arg = fn.getArgument(*argument);
      if (!sliced || !sliced->isSlice() || startsALoop(arg))
        continue;
      Value gathered = viewSource(sliced->source);
      if (auto gather = gathered.getDefiningOp<zero::AllGatherOp>())
        gathers[gather].push_back(arg);
      else if (awaitedGather(gathered))
        awaited.insert(gathered);
    }
    // An awaited bucket's members are cut out where it is awaited: copied
    // there, its gathered buffer is freed at once
    // (zero-schedule-overlap awaits it where it is done).
    for (Value value : awaited)
      hoistViews(value);
    // On the device alone, what makes the gather's input follows it down,
    // as for a weight gathered alone: the new shards are then not held
    // through the forward and backward either.
    bool onDevice = !zero::hasHostArguments(fn);
    for (auto &[op, arguments] : gathers) {
      auto gather = cast<zero::AllGatherOp>(op);
      if (moveSlicedGatherAfterReads(gather, arguments) && onDevice)
        sinkGatherInput(gather, gather.getInput());
    }
  }

  static void donate(func::FuncOp fn, unsigned argument, unsigned result) {
    fn.setArgAttr(argument, zero::kAliasingOutputAttrName,
                  OpBuilder(fn).getI64IntegerAttr(result));
  }
};

} // namespace
