//===- SplitDeallocs.cpp - bufferization.dealloc split by provenance ------===//
//
// Resolves the aliasing questions of ownership-based deallocation by where
// each buffer comes from, in one pass over a dealloc's operands. See
// Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "zero/Target/CPU/Passes.h"
#include "zero/Utils/Buffers.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"

namespace zero {
#define GEN_PASS_DEF_ZEROSPLITDEALLOCS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

// Beyond views, two region ops of ownership-based deallocation's output
// pass buffers on without making them alias anything new: a loop whose
// body yields, at each position, its iteration argument there or memory it
// allocated; and an scf.if that yields an outer buffer or a fresh clone of
// it ("return it if owned, else a clone"). Their results are followed to
// the buffer they can hold (originOf), so that a dealloc after them still
// splits by allocation.

/// The buffers values can hold, as far as views, those loops and those
/// scf.ifs tell, with what it has found of each loop.
class BufferProvenance {
public:
  /// The buffer `value` holds, followed through views, loops that hold
  /// only their inits and scf.ifs that hold only one outer buffer (or
  /// memory fresh in them).
  Value originOf(Value value);
  /// Whether the buffer `origin` holds may reach another value than its
  /// views and the results it is passed on to (passedOnTo): it, or such a
  /// value, is yielded, passed to an op with regions (but a linalg op's) or
  /// to a call, or read by an op with a memref result that is none of
  /// those. Only such a buffer can alias a value of unknown provenance.
  /// `allowed` is a use that does not count (a loop's yield of its own
  /// iteration argument).
  bool mayEscape(Value origin, OpOperand *allowed = nullptr);

private:
  bool loopHoldsOnlyInits(scf::ForOp loop);
  Value ifHoldsOnly(scf::IfOp ifOp, unsigned index);
  Value passedOnTo(OpOperand &use);

  /// Per loop asked about, whether it holds only its inits; false while
  /// being found, for a use in its own body.
  llvm::DenseMap<Operation *, bool> loops;
};

/// Whether `origin` (an originOf) is memory an op inside `region`
/// allocates: fresh in it, distinct from everything outside it.
bool allocatedIn(Value origin, Region &region) {
  Operation *def = origin.getDefiningOp();
  return def && region.isAncestor(def->getParentRegion()) &&
         hasEffect<MemoryEffects::Allocate>(def, origin);
}

/// Whether each memref result of `loop` can only hold its init's buffer or
/// memory the loop allocated: at each position the body yields its
/// iteration argument there or memory it allocated (yielded nowhere else),
/// and no iteration argument escapes the body (mayEscape).
bool BufferProvenance::loopHoldsOnlyInits(scf::ForOp loop) {
  if (auto [it, inserted] = loops.try_emplace(loop, false); !inserted)
    return it->second;
  Region &body = loop.getRegion();
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  bool holds = true;
  llvm::SmallDenseSet<Value, 8> yieldedFresh;
  for (auto [i, yielded] : llvm::enumerate(yield.getOperands())) {
    if (!isa<BaseMemRefType>(yielded.getType()))
      continue;
    Value origin = originOf(yielded);
    if (origin == loop.getRegionIterArgs()[i])
      continue;
    if (!allocatedIn(origin, body) || !yieldedFresh.insert(origin).second)
      holds = false;
  }
  for (auto [i, iterArg] : llvm::enumerate(loop.getRegionIterArgs()))
    if (holds && isa<BaseMemRefType>(iterArg.getType()) &&
        mayEscape(iterArg, &yield->getOpOperand(i)))
      holds = false;
  loops[loop] = holds;
  return holds;
}

/// The value of outer origin that result `index` of `ifOp` can hold beside
/// memory its branches allocate, when every branch yields there either a
/// value of that one origin or memory it allocated (yielded nowhere else in
/// the branch); else null.
Value BufferProvenance::ifHoldsOnly(scf::IfOp ifOp, unsigned index) {
  if (ifOp.getElseRegion().empty())
    return Value();
  Value outer, outerOrigin;
  for (Region *branch : {&ifOp.getThenRegion(), &ifOp.getElseRegion()}) {
    auto yield = cast<scf::YieldOp>(branch->front().getTerminator());
    Value origin = originOf(yield.getOperand(index));
    if (allocatedIn(origin, *branch)) {
      for (auto [i, other] : llvm::enumerate(yield.getOperands()))
        if (i != index && isa<BaseMemRefType>(other.getType()) &&
            originOf(other) == origin)
          return Value();
      continue;
    }
    if (branch->isAncestor(origin.getParentRegion()) ||
        (outerOrigin && origin != outerOrigin))
      return Value();
    outer = yield.getOperand(index);
    outerOrigin = origin;
  }
  return outer;
}

/// The value `use` passes its buffer on to without a new alias: the result
/// of a loop whose init it is, or of an scf.if that yields it, where those
/// hold only it (or fresh memory); else null.
Value BufferProvenance::passedOnTo(OpOperand &use) {
  Operation *user = use.getOwner();
  if (auto loop = dyn_cast<scf::ForOp>(user)) {
    unsigned controls = loop.getNumControlOperands();
    if (use.getOperandNumber() < controls || !loopHoldsOnlyInits(loop))
      return Value();
    return loop.getResult(use.getOperandNumber() - controls);
  }
  auto yield = dyn_cast<scf::YieldOp>(user);
  auto ifOp = yield ? dyn_cast<scf::IfOp>(yield->getParentOp()) : nullptr;
  if (!ifOp)
    return Value();
  unsigned index = use.getOperandNumber();
  Value outer = ifHoldsOnly(ifOp, index);
  if (!outer || originOf(outer) != originOf(use.get()))
    return Value();
  return ifOp.getResult(index);
}

Value BufferProvenance::originOf(Value value) {
  while (true) {
    value = zero::bufferOrigin(value);
    auto result = dyn_cast<OpResult>(value);
    if (!result)
      return value;
    unsigned index = result.getResultNumber();
    if (auto loop = dyn_cast<scf::ForOp>(result.getOwner())) {
      if (loop.getInitArgs()[index].getType() != value.getType() ||
          !loopHoldsOnlyInits(loop))
        return value;
      value = loop.getInitArgs()[index];
      continue;
    }
    if (auto ifOp = dyn_cast<scf::IfOp>(result.getOwner())) {
      Value outer = ifHoldsOnly(ifOp, index);
      if (!outer)
        return value;
      value = outer;
      continue;
    }
    return value;
  }
}

bool BufferProvenance::mayEscape(Value origin, OpOperand *allowed) {
  SmallVector<Value> views{origin};
  llvm::SmallDenseSet<Value, 8> seen;
  while (!views.empty()) {
    Value view = views.pop_back_val();
    if (!seen.insert(view).second)
      continue;
    for (OpOperand &use : view.getUses()) {
      Operation *user = use.getOwner();
      if (&use == allowed || isa<bufferization::DeallocOp>(user))
        continue;
      if (Value next = passedOnTo(use)) {
        views.push_back(next);
        continue;
      }
      // A linalg op's region takes elements, not the buffer.
      if (user->hasTrait<OpTrait::IsTerminator>() ||
          (user->getNumRegions() != 0 && !isa<linalg::LinalgOp>(user)) ||
          isa<CallOpInterface>(user))
        return true;
      auto viewLike = dyn_cast<ViewLikeOpInterface>(user);
      for (Value result : user->getResults()) {
        if (!isa<BaseMemRefType>(result.getType()))
          continue;
        if (!viewLike || viewLike.getViewSource() != view)
          return true;
        views.push_back(result);
      }
    }
  }
  return false;
}

enum class Provenance {
  /// Allocated by an op directly in the dealloc's block: distinct from every
  /// other allocation and from all memory older than the block's execution.
  Fresh,
  /// Existed when the block began: an argument of it or of an enclosing
  /// block, or defined outside it.
  Older,
  /// Computed by some other op in the block (a loop's or call's result):
  /// may alias anything.
  Unknown,
};

Provenance classify(Value origin, Block *block) {
  Operation *def = origin.getDefiningOp();
  if (!def)
    return cast<BlockArgument>(origin).getOwner() == block ||
                   !block->getParent()->isAncestor(
                       cast<BlockArgument>(origin).getOwner()->getParent())
               ? Provenance::Older
               : Provenance::Unknown;
  if (def->getBlock() != block)
    return block->getParentOp()->isProperAncestor(def) ? Provenance::Unknown
                                                       : Provenance::Older;
  if (hasEffect<MemoryEffects::Allocate>(def, origin))
    return Provenance::Fresh;
  return Provenance::Unknown;
}

/// The disjunction of `conditions`, folded where they are constants.
Value buildOr(OpBuilder &b, Location loc, ArrayRef<Value> conditions) {
  Value result;
  for (Value condition : conditions) {
    if (matchPattern(condition, m_One()))
      return condition;
    if (matchPattern(condition, m_Zero()))
      continue;
    result = result
                 ? arith::OrIOp::create(b, loc, result, condition).getResult()
                 : condition;
  }
  if (!result)
    result = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
  return result;
}

/// Splits `dealloc` as Passes.td describes.
void splitDealloc(bufferization::DeallocOp dealloc,
                  BufferProvenance &provenances) {
  Block *block = dealloc->getBlock();
  // Each fresh origin that nothing else can alias, in the order its buffers
  // appear, with those operands and their conditions, and whether one of
  // them is a region's result (then it may be another buffer than the
  // origin: memory the region allocated).
  struct Group {
    SmallVector<std::pair<Value, Value>, 1> operands;
    bool throughRegion = false;
  };
  llvm::MapVector<Value, Group> fresh;
  SmallVector<Value> restMemrefs, restConditions;
  bool unknown = false;
  SmallVector<std::tuple<Value, Value, Value>> candidates;
  for (auto [memref, condition] :
       llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
    Value origin = provenances.originOf(memref);
    Provenance provenance = classify(origin, block);
    unknown |= provenance == Provenance::Unknown;
    if (provenance == Provenance::Fresh) {
      candidates.push_back({memref, condition, origin});
    } else {
      restMemrefs.push_back(memref);
      restConditions.push_back(condition);
    }
  }
  SmallVector<Value> retainedOrigins;
  SmallVector<Provenance> retainedProvenance;
  // The retained values of each fresh origin, by index.
  llvm::SmallDenseMap<Value, SmallVector<unsigned, 1>> retainedOf;
  for (auto [index, retained] : llvm::enumerate(dealloc.getRetained())) {
    Value origin = provenances.originOf(retained);
    Provenance provenance = classify(origin, block);
    unknown |= provenance == Provenance::Unknown;
    retainedOrigins.push_back(origin);
    retainedProvenance.push_back(provenance);
    if (provenance == Provenance::Fresh)
      retainedOf[origin].push_back(index);
  }
  // Beside a buffer of unknown provenance, a fresh one that may escape into
  // it stays with it.
  llvm::SmallDenseMap<Value, bool> escapes;
  for (auto [memref, condition, origin] : candidates) {
    auto [it, inserted] = escapes.try_emplace(origin, false);
    if (inserted && unknown)
      it->second = provenances.mayEscape(origin);
    if (it->second) {
      restMemrefs.push_back(memref);
      restConditions.push_back(condition);
      continue;
    }
    Group &group = fresh[origin];
    group.operands.push_back({memref, condition});
    group.throughRegion |= zero::bufferOrigin(memref) != origin;
  }
  if (fresh.empty())
    return; // Nothing this pass can decide.

  // What the rest keeps alive: beside an unknown buffer, every retained
  // value but those of the fresh groups; else those of older origin, which
  // no fresh allocation can alias.
  SmallVector<Value> restRetained;
  SmallVector<bool> fromRest;
  for (auto [retained, origin, provenance] : llvm::zip_equal(
           dealloc.getRetained(), retainedOrigins, retainedProvenance)) {
    bool grouped = provenance == Provenance::Fresh && fresh.contains(origin);
    bool rest = !grouped && (unknown || provenance == Provenance::Older);
    fromRest.push_back(rest);
    if (rest)
      restRetained.push_back(retained);
  }

  OpBuilder b(dealloc);
  Location loc = dealloc.getLoc();
  // A plain group's ownership (whether any of its views is owned); a region
  // result's group, a dealloc of its own and each retained value's updated
  // ownership from it.
  llvm::SmallDenseMap<Value, Value> owned;
  DenseMap<unsigned, Value> groupUpdated;
  for (auto &[origin, group] : fresh) {
    auto found = retainedOf.find(origin);
    ArrayRef<unsigned> retainedHere;
    if (found != retainedOf.end())
      retainedHere = found->second;
    for (unsigned index : retainedHere)
      group.throughRegion |=
          zero::bufferOrigin(dealloc.getRetained()[index]) != origin;
    if (group.throughRegion) {
      SmallVector<Value> memrefs, conditions, retained;
      for (auto [memref, condition] : group.operands) {
        memrefs.push_back(memref);
        conditions.push_back(condition);
      }
      for (unsigned index : retainedHere)
        retained.push_back(dealloc.getRetained()[index]);
      auto split = bufferization::DeallocOp::create(b, loc, memrefs, conditions,
                                                    retained);
      for (auto [index, updated] :
           llvm::zip_equal(retainedHere, split.getUpdatedConditions()))
        groupUpdated[index] = updated;
      continue;
    }
    SmallVector<Value> conditions = llvm::map_to_vector(
        group.operands, [](auto operand) { return operand.second; });
    owned[origin] = buildOr(b, loc, conditions);
    // Freed unless a retained value keeps it alive.
    if (retainedHere.empty())
      bufferization::DeallocOp::create(b, loc, group.operands.front().first,
                                       owned[origin], ValueRange());
  }
  ValueRange restUpdated;
  if (!restMemrefs.empty())
    restUpdated = bufferization::DeallocOp::create(b, loc, restMemrefs,
                                                   restConditions, restRetained)
                      .getUpdatedConditions();
  // Each retained value's ownership, from the part that can alias it.
  Value notOwned;
  unsigned nextRest = 0;
  for (auto [index, result] : llvm::enumerate(dealloc.getUpdatedConditions())) {
    Value ownership;
    if (fromRest[index]) {
      if (!restMemrefs.empty())
        ownership = restUpdated[nextRest];
      ++nextRest;
    } else if (Value updated = groupUpdated.lookup(index)) {
      ownership = updated;
    } else if (Value plain = owned.lookup(retainedOrigins[index])) {
      ownership = plain;
    }
    if (!ownership) {
      if (!notOwned)
        notOwned = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
      ownership = notOwned;
    }
    result.replaceAllUsesWith(ownership);
  }
  dealloc.erase();
}

struct ZeroSplitDeallocsPass
    : public zero::impl::ZeroSplitDeallocsBase<ZeroSplitDeallocsPass> {
  void runOnOperation() override {
    SmallVector<bufferization::DeallocOp> deallocs;
    getOperation()->walk(
        [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
    // What it finds of a loop holds while the deallocs change: splitting
    // one only replaces it, and deallocs do not count as uses.
    BufferProvenance provenances;
    for (bufferization::DeallocOp dealloc : deallocs)
      splitDealloc(dealloc, provenances);
  }
};

} // namespace
