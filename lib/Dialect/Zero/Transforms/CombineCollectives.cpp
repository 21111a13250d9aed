//===- CombineCollectives.cpp - bucket collectives into flat buffers ------===//
//
// Many small collectives cost one latency each; a bucket of them costs one.
// Same-kind, same-dtype, same-group collectives of one block are packed into
// a flat buffer (each member at an aligned offset), exchanged once, and cut
// back into their members. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Layout.h"
#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Analysis/Communication.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROCOMBINECOLLECTIVES
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// The reduction of a reducing collective, or null.
Attribute getReduction(Operation *op) {
  if (auto allReduce = dyn_cast<AllReduceOp>(op))
    return allReduce.getReductionAttr();
  if (auto reduceScatter = dyn_cast<ReduceScatterOp>(op))
    return reduceScatter.getReductionAttr();
  return {};
}

/// Elements each rank contributes to a bucket for `op`: the whole tensor of
/// an all-reduce, the part a rank keeps of a reduce-scatter, the part a rank
/// sends of an all-gather.
int64_t getChunkElements(CollectiveOpInterface op) {
  if (isa<ReduceScatterOp>(op))
    return op.getResult().getType().getNumElements();
  return op.getInput().getType().getNumElements();
}

/// Whether `op` can be a bucket member at all: a communicating collective on
/// a static tensor of whole-byte elements, not already scheduled in a
/// zero.async; reduce-scatters and all-gathers on 1-D tensors (the flat
/// shards zero-shard-weight-update makes), so that a member's part of the
/// bucket is one contiguous run per rank.
bool isCandidate(CollectiveOpInterface op) {
  if (!op.communicates() || isa<AsyncOp>(op->getParentOp()) ||
      !getTensorBytes(op.getInput().getType()) ||
      !getTensorBytes(op.getResult().getType()))
    return false;
  if (isa<AllReduceOp>(op))
    return true;
  return op.getInput().getType().getRank() == 1;
}

/// Whether `a` and `b` do the same exchange on the same group, so one
/// collective can do both.
bool isSameExchange(CollectiveOpInterface a, CollectiveOpInterface b) {
  return a->getName() == b->getName() &&
         a.getInput().getType().getElementType() ==
             b.getInput().getType().getElementType() &&
         a.getMeshAttr() == b.getMeshAttr() &&
         a.getAxesAttr() == b.getAxesAttr() &&
         getReduction(a) == getReduction(b);
}

/// A group of collectives to exchange as one.
struct Bucket {
  SmallVector<CollectiveOpInterface> members;
  int64_t bytes = 0;
  /// Pure ops after the first member that the later members' inputs need:
  /// they move above the first member, where the combined collective goes.
  llvm::SetVector<Operation *> hoisted;
};

/// A zero-filled tensor: the bucket's alignment gaps hold zeros, so that
/// every rank sends the same bytes for them and nothing uninitialized moves.
Value zeros(OpBuilder &b, Location loc, ArrayRef<int64_t> shape, Type element) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, element);
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  return linalg::FillOp::create(b, loc, zero, empty).getResult(0);
}

OpFoldResult index(OpBuilder &b, int64_t value) {
  return b.getIndexAttr(value);
}

struct ZeroCombineCollectivesPass
    : public zero::impl::ZeroCombineCollectivesBase<
          ZeroCombineCollectivesPass> {
  using Base::Base;

  int64_t nextBucketId = 0;

  /// Whether `op`'s input can be ready where `bucket`'s first member is:
  /// whatever computes it after that point is pure and does not depend on a
  /// member. If so, records those ops to hoist. Decided on `position`, the
  /// block's order before any change (asking the block after each change
  /// would renumber it each time).
  bool canJoin(Bucket &bucket, CollectiveOpInterface op,
               const llvm::DenseMap<Operation *, int64_t> &position) {
    int64_t first = position.lookup(bucket.members.front());
    Block *block = op->getBlock();
    BackwardSliceOptions options;
    options.inclusive = true; // the input's own definition moves too
    // Values a region of the slice captures (a tensor.pad's padding value)
    // must move with it.
    options.omitUsesFromAbove = false;
    options.filter = [&](Operation *candidate) {
      return candidate->getBlock() == block &&
             position.lookup(candidate) >= first;
    };
    SetVector<Operation *> slice;
    if (failed(getBackwardSlice(op.getInput(), &slice, options)))
      return false;
    for (CollectiveOpInterface member : bucket.members)
      if (slice.contains(member))
        return false;
    if (!llvm::all_of(slice, isMemoryEffectFree))
      return false;
    bucket.hoisted.insert(slice.begin(), slice.end());
    return true;
  }

  /// Groups the candidate collectives of `block`, in order.
  SmallVector<Bucket> formBuckets(Block &block) {
    llvm::DenseMap<Operation *, int64_t> position;
    SmallVector<CollectiveOpInterface> candidates;
    for (Operation &op : block) {
      position[&op] = position.size();
      if (auto collective = dyn_cast<CollectiveOpInterface>(&op))
        if (isCandidate(collective))
          candidates.push_back(collective);
    }

    SmallVector<Bucket> closed;
    SmallVector<Bucket> open; // at most one per kind of exchange
    for (CollectiveOpInterface op : candidates) {
      int64_t bytes = *getTensorBytes(op.getInput().getType());
      auto it = llvm::find_if(open, [&](const Bucket &bucket) {
        return isSameExchange(bucket.members.front(), op);
      });
      if (it != open.end() && it->bytes + bytes <= bucketBytes &&
          canJoin(*it, op, position)) {
        it->members.push_back(op);
        it->bytes += bytes;
        continue;
      }
      if (it != open.end()) {
        closed.push_back(std::move(*it));
        open.erase(it);
      }
      open.push_back(Bucket{{op}, bytes, {}});
    }
    llvm::append_range(closed, open);
    // Hoisted ops keep their relative order: sorted by their old position.
    for (Bucket &bucket : closed) {
      SmallVector<Operation *> hoisted = bucket.hoisted.takeVector();
      llvm::sort(hoisted, [&](Operation *a, Operation *b) {
        return position.lookup(a) < position.lookup(b);
      });
      bucket.hoisted.insert(hoisted.begin(), hoisted.end());
    }
    return closed;
  }

  /// Offsets of the members' chunks in a bucket, each aligned to
  /// `alignment` bytes; returns the bucket's chunk elements.
  int64_t layOut(Bucket &bucket, SmallVectorImpl<int64_t> &offsets,
                 SmallVectorImpl<int64_t> &sizes) {
    Type element = bucket.members.front().getInput().getType().getElementType();
    int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    int64_t step = std::max<int64_t>(1, alignment / elementBytes);
    int64_t end = 0;
    for (CollectiveOpInterface member : bucket.members) {
      int64_t offset = llvm::alignTo(end, step);
      offsets.push_back(offset);
      sizes.push_back(getChunkElements(member));
      end = offset + sizes.back();
    }
    return end;
  }

  /// Records where each member lives in the bucket, so that a checkpoint
  /// (or a trace) can map the flat buffer back to the members.
  void recordLayout(Operation *combined, Bucket &bucket,
                    ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
    Builder b(combined->getContext());
    SmallVector<Attribute> types;
    for (CollectiveOpInterface member : bucket.members)
      types.push_back(TypeAttr::get(member->getResult(0).getType()));
    combined->setAttr(
        "zero.bucket",
        b.getDictionaryAttr({
            b.getNamedAttr("id", b.getI64IntegerAttr(nextBucketId++)),
            b.getNamedAttr("offsets", b.getDenseI64ArrayAttr(offsets)),
            b.getNamedAttr("sizes", b.getDenseI64ArrayAttr(sizes)),
            b.getNamedAttr("types", b.getArrayAttr(types)),
        }));
  }

  void combine(Bucket &bucket) {
    CollectiveOpInterface first = bucket.members.front();
    for (Operation *op : bucket.hoisted)
      op->moveBefore(first);
    OpBuilder b(first);
    SmallVector<Location> locs;
    for (CollectiveOpInterface member : bucket.members)
      locs.push_back(member.getLoc());
    Location loc = b.getFusedLoc(locs);
    SmallVector<int64_t> offsets, sizes;
    int64_t chunk = layOut(bucket, offsets, sizes);
    Type element = first.getInput().getType().getElementType();
    int64_t ranks = first.getGroupSize(first.lookupMesh());
    auto unit = [&](int64_t n) {
      return SmallVector<OpFoldResult>(n, index(b, 1));
    };

    SmallVector<Value> results;
    Operation *combined;
    if (auto allReduce = dyn_cast<AllReduceOp>(first.getOperation())) {
      Value buffer = zeros(b, loc, {chunk}, element);
      for (auto [member, offset, size] :
           llvm::zip(bucket.members, offsets, sizes))
        buffer = tensor::InsertSliceOp::create(
            b, loc, flatten(b, loc, member.getInput()), buffer,
            {index(b, offset)}, {index(b, size)}, unit(1));
      combined = AllReduceOp::create(b, loc, buffer, allReduce.getMeshAttr(),
                                     allReduce.getAxesAttr(),
                                     allReduce.getReductionAttr());
      for (auto [member, offset, size] :
           llvm::zip(bucket.members, offsets, sizes)) {
        Value part = tensor::ExtractSliceOp::create(
            b, loc, combined->getResult(0), {index(b, offset)},
            {index(b, size)}, unit(1));
        results.push_back(
            unflatten(b, loc, part, member.getResult().getType()));
      }
    } else if (auto reduceScatter =
                   dyn_cast<ReduceScatterOp>(first.getOperation())) {
      // Row r of the [N, chunk] buffer is what rank r keeps: each member's
      // part r sits in it at the member's offset, so every rank keeps the
      // same parts of each member as it would alone.
      Value buffer = zeros(b, loc, {ranks, chunk}, element);
      for (auto [member, offset, size] :
           llvm::zip(bucket.members, offsets, sizes)) {
        Value rows = unflatten(b, loc, member.getInput(),
                               RankedTensorType::get({ranks, size}, element));
        buffer = tensor::InsertSliceOp::create(
            b, loc, rows, buffer, {index(b, 0), index(b, offset)},
            {index(b, ranks), index(b, size)}, unit(2));
      }
      Value flat = flatten(b, loc, buffer);
      combined = ReduceScatterOp::create(
          b, loc, RankedTensorType::get({chunk}, element), flat,
          reduceScatter.getMeshAttr(), reduceScatter.getAxesAttr(),
          reduceScatter.getReductionAttr(), /*scatter_dim=*/0);
      for (auto [offset, size] : llvm::zip(offsets, sizes))
        results.push_back(tensor::ExtractSliceOp::create(
            b, loc, combined->getResult(0), {index(b, offset)},
            {index(b, size)}, unit(1)));
    } else {
      auto allGather = cast<AllGatherOp>(first.getOperation());
      Value buffer = zeros(b, loc, {chunk}, element);
      for (auto [member, offset, size] :
           llvm::zip(bucket.members, offsets, sizes))
        buffer = tensor::InsertSliceOp::create(b, loc, member.getInput(),
                                               buffer, {index(b, offset)},
                                               {index(b, size)}, unit(1));
      combined = AllGatherOp::create(
          b, loc, RankedTensorType::get({ranks * chunk}, element), buffer,
          allGather.getMeshAttr(), allGather.getAxesAttr(), /*gather_dim=*/0);
      // Row r of the gathered [N, chunk] is rank r's chunk; each member is
      // its column range, rows concatenated.
      Value rows = unflatten(b, loc, combined->getResult(0),
                             RankedTensorType::get({ranks, chunk}, element));
      for (auto [offset, size] : llvm::zip(offsets, sizes)) {
        Value part = tensor::ExtractSliceOp::create(
            b, loc, rows, {index(b, 0), index(b, offset)},
            {index(b, ranks), index(b, size)}, unit(2));
        results.push_back(flatten(b, loc, part));
      }
    }
    recordLayout(combined, bucket, offsets, sizes);
    for (auto [member, result] : llvm::zip(bucket.members, results)) {
      member->getResult(0).replaceAllUsesWith(result);
      member->erase();
    }
  }

  void runOnOperation() override {
    if (alignment <= 0) {
      getOperation().emitError("zero-combine-collectives: alignment must be "
                               "positive, got ")
          << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      for (Bucket &bucket : formBuckets(*block))
        if (bucket.members.size() > 1)
          combine(bucket);
  }
};

} // namespace
