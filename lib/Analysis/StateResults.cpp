//===- StateResults.cpp - which results are the next state ----------------===//

#include "zero/Analysis/StateResults.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <deque>

using namespace mlir;

/// The operand that `value`, an argument of a linalg op's payload, stands
/// for (an input, or a destination the payload reads); null for any other
/// value.
static Value getPayloadOperand(Value value) {
  auto argument = dyn_cast<BlockArgument>(value);
  if (!argument)
    return nullptr;
  auto op = dyn_cast<linalg::LinalgOp>(argument.getOwner()->getParentOp());
  if (!op || argument.getOwner() != op.getBlock())
    return nullptr;
  return op.getMatchingOpOperand(argument)->get();
}

SmallVector<zero::StateSource>
zero::findStateSources(Value value, function_ref<bool(Value)> accept,
                       function_ref<bool(Operation *)> follow,
                       bool *nearestOnly) {
  // Breadth-first in distance (0-1 BFS): one op further for each producer,
  // none for entering a linalg op's payload or leaving it for the operand
  // an argument of it stands for, so that a payload's ops count as the
  // same ops on tensors would (every input form is as near as another).
  // Into a payload, a result is followed from what the payload yields for
  // it, so that each result of a fused, multi-result update is as near as
  // its own payload makes it to each input, not equally near to all.
  SmallVector<StateSource> found;
  llvm::SmallPtrSet<Value, 32> seen;
  std::deque<StateSource> queue{{0, value}};
  bool stopEarly = nearestOnly && *nearestOnly;
  if (nearestOnly)
    *nearestOnly = false;
  while (!queue.empty()) {
    auto [distance, source] = queue.front();
    // The deque yields nondecreasing distances: past the first found's,
    // what is left is farther.
    if (stopEarly && !found.empty() && distance > found.front().distance) {
      *nearestOnly = true;
      break;
    }
    queue.pop_front();
    if (!seen.insert(source).second)
      continue;
    if (accept(source))
      found.push_back({distance, source});
    if (Value operand = getPayloadOperand(source)) {
      queue.push_front({distance, operand});
      continue;
    }
    // `follow` decides for ops on tensors; a payload's ops belong to the
    // linalg op it already followed.
    Operation *producer = source.getDefiningOp();
    if (!producer ||
        (!isa<linalg::LinalgOp>(producer->getParentOp()) && !follow(producer)))
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(producer);
    if (linalgOp && linalgOp.getBlock()) {
      auto yield = linalgOp.getBlock()->getTerminator();
      unsigned index = cast<OpResult>(source).getResultNumber();
      if (index < yield->getNumOperands()) {
        queue.push_front({distance, yield->getOperand(index)});
        continue;
      }
    }
    // A loop's result comes from its own initial value (and the body, which
    // every result would walk again): the other operands are not its
    // sources.
    if (auto loop = dyn_cast<LoopLikeOpInterface>(producer))
      if (OpOperand *init = loop.getTiedLoopInit(cast<OpResult>(source))) {
        queue.push_back({distance + 1, init->get()});
        continue;
      }
    for (Value operand : producer->getOperands())
      queue.push_back({distance + 1, operand});
    // A result of a branch (an scf.if's) is what its regions yield for it.
    if (!linalgOp && !isa<LoopLikeOpInterface>(producer))
      for (Region &region : producer->getRegions())
        for (Block &block : region)
          if (Operation *end = block.empty() ? nullptr : &block.back();
              end && end->hasTrait<OpTrait::IsTerminator>() &&
              end->getNumOperands() == producer->getNumResults())
            queue.push_back(
                {distance + 1,
                 end->getOperand(cast<OpResult>(source).getResultNumber())});
  }
  return found;
}

SmallVector<std::pair<size_t, Value>>
zero::pairNearestSources(MutableArrayRef<SmallVector<StateSource>> sources,
                         function_ref<void(size_t)> complete) {
  SmallVector<std::pair<size_t, Value>> pairs;
  SmallVector<bool> paired(sources.size());
  llvm::SmallPtrSet<Value, 16> taken;
  for (bool pairedAny = true; pairedAny;) {
    pairedAny = false;
    // This round's claims: each unpaired output's one nearest open source.
    SmallVector<std::pair<size_t, StateSource>> claims;
    for (auto [index, candidates] : llvm::enumerate(sources)) {
      if (paired[index])
        continue;
      auto isOpen = [&](const StateSource &c) {
        return !taken.contains(c.value);
      };
      if (complete && llvm::none_of(candidates, isOpen))
        complete(index);
      auto open = llvm::make_filter_range(candidates, isOpen);
      if (open.empty())
        continue;
      int64_t nearest = (*open.begin()).distance;
      if (llvm::count_if(
              open, [&](const auto &c) { return c.distance == nearest; }) != 1)
        continue;
      claims.push_back({index, *open.begin()});
    }
    // Each claimed source goes to its one nearest claimant.
    for (auto &[index, claim] : claims) {
      bool nearest = llvm::none_of(claims, [&](const auto &other) {
        return other.first != index && other.second.value == claim.value &&
               other.second.distance <= claim.distance;
      });
      if (!nearest)
        continue;
      pairs.push_back({index, claim.value});
      taken.insert(claim.value);
      paired[index] = true;
      pairedAny = true;
    }
  }
  return pairs;
}

SmallVector<std::optional<unsigned>> zero::findStateResults(func::FuncOp fn) {
  SmallVector<std::optional<unsigned>> pairs(fn.getNumResults());
  if (fn.isExternal())
    return pairs;
  Block &entry = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
  if (!ret)
    return pairs;
  // A result feeds an argument of its type and layout: a shard
  // (`zero.shard`) feeds only a shard of the same whole, a whole value only
  // a whole one, though the two may have the same tensor type.
  auto feeds = [&](unsigned index, unsigned argument) {
    return argument < fn.getNumArguments() &&
           fn.getArgument(argument).getType() ==
               ret.getOperand(index).getType() &&
           fn.getArgAttr(argument, "zero.shard") ==
               fn.getResultAttr(index, "zero.shard");
  };
  // The marked pairs first.
  llvm::SmallDenseSet<unsigned> marked;
  for (unsigned index = 0; index < ret.getNumOperands(); ++index)
    if (auto mark =
            fn.getResultAttrOfType<IntegerAttr>(index, kStateOfAttrName))
      if (unsigned argument = mark.getInt();
          feeds(index, argument) && marked.insert(argument).second)
        pairs[index] = argument;
  auto search = [&](unsigned index, bool *nearestOnly) {
    return findStateSources(
        ret.getOperand(index),
        [&](Value value) {
          auto arg = dyn_cast<BlockArgument>(value);
          return arg && arg.getOwner() == &entry &&
                 !marked.contains(arg.getArgNumber()) &&
                 feeds(index, arg.getArgNumber());
        },
        [](Operation *) { return true; }, nearestOnly);
  };
  // The nearest sources of each unmarked result first; the rest only for a
  // result whose nearest all pair with others.
  SmallVector<unsigned> unmarked;
  SmallVector<SmallVector<StateSource>> sources;
  SmallVector<bool> partial;
  for (unsigned index = 0; index < ret.getNumOperands(); ++index) {
    if (pairs[index])
      continue;
    bool nearestOnly = true;
    unmarked.push_back(index);
    sources.push_back(search(index, &nearestOnly));
    partial.push_back(nearestOnly);
  }
  auto complete = [&](size_t i) {
    if (!partial[i])
      return;
    sources[i] = search(unmarked[i], nullptr);
    partial[i] = false;
  };
  for (auto [i, source] : pairNearestSources(sources, complete))
    pairs[unmarked[i]] = cast<BlockArgument>(source).getArgNumber();
  return pairs;
}

void zero::markStateResults(func::FuncOp fn) {
  Builder b(fn.getContext());
  for (auto [index, argument] : llvm::enumerate(findStateResults(fn)))
    if (argument)
      fn.setResultAttr(index, kStateOfAttrName, b.getI64IntegerAttr(*argument));
}

bool zero::isView(Operation *op) {
  return isa_and_present<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
                         tensor::CollapseShapeOp, tensor::CastOp,
                         tensor::ReshapeOp, tensor::BitcastOp, ShardSliceOp>(
      op);
}

Value zero::viewSource(Value value) {
  while (isView(value.getDefiningOp()))
    value = value.getDefiningOp()->getOperand(0);
  return value;
}

SmallVector<Operation *> zero::usersThroughViews(Value value) {
  SmallVector<Operation *> users;
  SmallVector<Value> views = {value};
  while (!views.empty())
    for (Operation *user : views.pop_back_val().getUsers()) {
      users.push_back(user);
      if (isView(user))
        views.push_back(user->getResult(0));
    }
  return users;
}
