//===- SplitDeallocs.cpp - bufferization.dealloc split by provenance ------===//
//
// Resolves the aliasing questions of ownership-based deallocation by where
// each buffer comes from, in one pass over a dealloc's operands. See
// Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "BufferOrigin.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "zero/Target/CPU/Passes.h"
#include "llvm/ADT/MapVector.h"

namespace zero {
#define GEN_PASS_DEF_ZEROSPLITDEALLOCS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;
using zero::getOrigin;

namespace {

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

/// Splits `dealloc` as Passes.td describes; leaves it alone when an operand's
/// provenance is unknown.
void splitDealloc(bufferization::DeallocOp dealloc) {
  Block *block = dealloc->getBlock();
  // Fresh origins in the order their buffers appear, each with the operands
  // that are views of it and their conditions.
  llvm::MapVector<Value, SmallVector<std::pair<Value, Value>, 1>> fresh;
  SmallVector<Value> olderMemrefs, olderConditions;
  for (auto [memref, condition] :
       llvm::zip_equal(dealloc.getMemrefs(), dealloc.getConditions())) {
    Value origin = getOrigin(memref);
    switch (classify(origin, block)) {
    case Provenance::Fresh:
      fresh[origin].push_back({memref, condition});
      break;
    case Provenance::Older:
      olderMemrefs.push_back(memref);
      olderConditions.push_back(condition);
      break;
    case Provenance::Unknown:
      return;
    }
  }
  SmallVector<Value> retainedOrigins;
  SmallVector<Value> olderRetained;
  for (Value retained : dealloc.getRetained()) {
    Value origin = getOrigin(retained);
    Provenance provenance = classify(origin, block);
    if (provenance == Provenance::Unknown)
      return;
    retainedOrigins.push_back(provenance == Provenance::Fresh ? origin
                                                              : Value());
    if (provenance == Provenance::Older)
      olderRetained.push_back(retained);
  }
  if (fresh.empty())
    return; // Nothing this pass can decide.

  OpBuilder b(dealloc);
  Location loc = dealloc.getLoc();
  // Ownership of each fresh allocation: whether any of its views is owned.
  llvm::SmallDenseMap<Value, Value> owned;
  for (auto &[origin, views] : fresh) {
    SmallVector<Value> conditions =
        llvm::map_to_vector(views, [](auto view) { return view.second; });
    owned[origin] = buildOr(b, loc, conditions);
  }
  // Freed unless a retained value keeps it alive.
  llvm::SmallDenseSet<Value> kept(retainedOrigins.begin(),
                                  retainedOrigins.end());
  for (auto &[origin, views] : fresh)
    if (!kept.contains(origin))
      bufferization::DeallocOp::create(b, loc, views.front().first,
                                       owned[origin], ValueRange());
  // The older buffers, retaining only what they can alias.
  ValueRange olderUpdated;
  if (!olderMemrefs.empty()) {
    olderUpdated = bufferization::DeallocOp::create(
                       b, loc, olderMemrefs, olderConditions, olderRetained)
                       .getUpdatedConditions();
  }
  // Each retained value's ownership, from the part that can alias it.
  Value notOwned;
  unsigned nextOlder = 0;
  for (auto [result, origin] :
       llvm::zip_equal(dealloc.getUpdatedConditions(), retainedOrigins)) {
    Value ownership;
    if (origin && owned.contains(origin)) {
      ownership = owned[origin];
    } else if (!origin && !olderMemrefs.empty()) {
      ownership = olderUpdated[nextOlder];
    } else {
      if (!notOwned)
        notOwned = arith::ConstantOp::create(b, loc, b.getBoolAttr(false));
      ownership = notOwned;
    }
    if (!origin)
      ++nextOlder;
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
    for (bufferization::DeallocOp dealloc : deallocs)
      splitDealloc(dealloc);
  }
};

} // namespace
