//===- CombineCollectives.cpp - bucket collectives into flat buffers ------===//
//
// Many small collectives cost one latency each; a bucket of them costs one.
// Same-kind, same-dtype, same-group collectives of one block are packed into
// a flat buffer (each member at an aligned offset), exchanged once, and cut
// back into their members. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Layout.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

#include <queue>

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
/// a static, non-empty tensor of whole-byte elements, not already scheduled in
/// a zero.async; reduce-scatters and all-gathers on 1-D tensors (the flat
/// shards zero-shard-weight-update makes), so that a member's part of the
/// bucket is one contiguous run per rank. All-to-alls are not packed.
bool isCandidate(CollectiveOpInterface op) {
  if (!op.communicates() || isa<AsyncOp>(op->getParentOp()) ||
      !getTensorBytes(op.getInput().getType()) ||
      !getTensorBytes(op.getResult().getType()) || getChunkElements(op) == 0)
    return false; // (A tensor of no elements has no part in a bucket.)
  if (isa<AllReduceOp>(op))
    return true;
  // An all-to-all's parts are whole rows of its own layout.
  if (isa<AllToAllOp>(op))
    return false;
  return op.getInput().getType().getRank() == 1;
}

/// Whether packing `op` into a bucket saves more than it costs: the copies
/// of its elements into the bucket and of its result out of it (at most
/// twice its input's elements), against the latency of one collective.
bool packingPays(CollectiveOpInterface op, const CostModelParameters &costs) {
  auto type = cast<ShapedType>(op.getInput().getType());
  double copySeconds = 2.0 * type.getNumElements() / costs.elementRate;
  return copySeconds <= costs.latency;
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
};

/// The ops of one block as a dependence graph, and the buckets formed on it.
/// Node i is the block's i-th op (its terminator excluded); a bucket is one
/// node of the quotient graph, so that a collective may join a bucket only
/// when no path leads from the bucket to it or back (joining would make the
/// combined collective depend on itself).
class BlockGraph {
public:
  explicit BlockGraph(Block &block) {
    for (Operation &op : block.without_terminator()) {
      index[&op] = ops.size();
      ops.push_back(&op);
    }
    int64_t n = ops.size();
    succs.resize(n);
    preds.resize(n);
    readyAfter.assign(n, -1);
    leader.resize(n);
    group.resize(n);
    seen.assign(n, 0);
    seenBackward.assign(n, 0);
    for (int64_t i = 0; i < n; ++i) {
      leader[i] = i;
      group[i] = {i};
    }
    int64_t lastEffect = -1;
    for (int64_t i = 0; i < n; ++i) {
      Operation *op = ops[i];
      // Operands of the op, and of ops nested in it, that this block defines.
      op->walk([&](Operation *nested) {
        for (Value operand : nested->getOperands())
          if (Operation *def = operand.getDefiningOp())
            if (auto it = index.find(def); it != index.end())
              addEdge(it->second, i);
      });
      // Ops with memory effects keep their order among themselves.
      if (!isMemoryEffectFree(op)) {
        if (lastEffect >= 0)
          addEdge(lastEffect, i);
        lastEffect = i;
      }
    }
  }

  int64_t size() const { return ops.size(); }
  Operation *op(int64_t i) const { return ops[i]; }
  int64_t indexOf(Operation *op) const { return index.lookup(op); }
  /// The last op that node `i` depends on (-1: none): where it is ready.
  int64_t readyPoint(int64_t i) const { return readyAfter[i]; }

  /// Whether nodes `i` and `j` can be one node without making a cycle.
  bool canMerge(int64_t i, int64_t j) {
    return !reaches(leader[i], leader[j]) && !reaches(leader[j], leader[i]);
  }

  void merge(int64_t i, int64_t j) {
    int64_t a = leader[i], b = leader[j];
    if (a == b)
      return;
    for (int64_t member : group[b]) {
      leader[member] = a;
      group[a].push_back(member);
    }
    group[b].clear();
  }

  /// A topological order of the quotient graph in which each merged node's
  /// ops are consecutive. Among ready nodes the lowest priority goes first:
  /// an op's is its place in the block, so that computation stays where it
  /// was; a merged node's is just after the point where its last member
  /// becomes ready, so that it starts then, and what uses a member waits.
  SmallVector<Operation *> schedule() const {
    int64_t n = ops.size();
    SmallVector<int64_t> priority(n, 0), pending(n, 0);
    for (int64_t i = 0; i < n; ++i) {
      if (leader[i] != i)
        continue;
      if (group[i].size() == 1) {
        priority[i] = 2 * i;
        continue;
      }
      int64_t ready = -1;
      for (int64_t member : group[i])
        ready = std::max(ready, readyAfter[member]);
      priority[i] = 2 * ready + 1;
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t s : succs[i])
        if (leader[s] != leader[i])
          ++pending[leader[s]];
    using Entry = std::pair<int64_t, int64_t>; // priority, node
    std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
    for (int64_t i = 0; i < n; ++i)
      if (leader[i] == i && pending[i] == 0)
        queue.push({priority[i], i});
    SmallVector<Operation *> order;
    while (!queue.empty()) {
      int64_t node = queue.top().second;
      queue.pop();
      SmallVector<int64_t> members = group[node];
      llvm::sort(members);
      for (int64_t member : members) {
        order.push_back(ops[member]);
        for (int64_t s : succs[member])
          if (leader[s] != node && --pending[leader[s]] == 0)
            queue.push({priority[leader[s]], leader[s]});
      }
    }
    assert(static_cast<int64_t>(order.size()) == n && "a cycle");
    return order;
  }

private:
  void addEdge(int64_t from, int64_t to) {
    if (from == to)
      return;
    succs[from].push_back(to);
    preds[to].push_back(from);
    readyAfter[to] = std::max(readyAfter[to], from);
  }

  /// Whether a path of one or more edges leads from quotient node `from` to
  /// quotient node `to`. Searches forward from `from` and backward from `to`
  /// a step at a time each, and stops when either search is done: a
  /// gradient's reduce-scatter has a small past and a large future (the
  /// update, the norm, every later use), a weight's all-gather the reverse,
  /// so the smaller side decides and a block costs far less than a full
  /// search per candidate.
  bool reaches(int64_t from, int64_t to) {
    ++visit;
    SmallVector<int64_t> forward = {from}, backward = {to};
    seen[from] = visit;
    seenBackward[to] = visit;
    auto step = [&](SmallVector<int64_t> &stack,
                    const SmallVector<SmallVector<int64_t>> &edges,
                    SmallVector<int64_t> &mine,
                    const SmallVector<int64_t> &theirs, int64_t target,
                    bool &found) {
      int64_t node = stack.pop_back_val();
      for (int64_t member : group[node])
        for (int64_t neighbour : edges[member]) {
          int64_t next = leader[neighbour];
          if (next == node)
            continue;
          if (next == target || theirs[next] == visit) {
            found = true;
            return;
          }
          if (mine[next] != visit) {
            mine[next] = visit;
            stack.push_back(next);
          }
        }
    };
    bool found = false;
    while (!forward.empty() && !backward.empty()) {
      step(forward, succs, seen, seenBackward, to, found);
      if (found)
        return true;
      step(backward, preds, seenBackward, seen, from, found);
      if (found)
        return true;
    }
    return false;
  }

  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> index;
  SmallVector<SmallVector<int64_t>> succs, preds;
  SmallVector<int64_t> readyAfter;
  SmallVector<int64_t> leader;
  SmallVector<SmallVector<int64_t>> group;
  SmallVector<int64_t> seen, seenBackward;
  int64_t visit = 0;
};

/// The members' `parts` laid side by side along dimension `dim`, part i at
/// `offsets[i]`, `total` long, as one `tensor.concat`. The alignment gaps
/// and the end hold zeros, so that every rank sends the same bytes for them
/// and nothing uninitialized moves. One op, not a chain of insert_slices
/// into one tensor: bufferization's analysis walks such a chain back from
/// each of its reads, which made lowering cubic in the bucket's size.
Value pack(OpBuilder &b, Location loc, ArrayRef<Value> parts,
           ArrayRef<int64_t> offsets, int64_t total, int64_t dim) {
  auto partType = cast<RankedTensorType>(parts.front().getType());
  auto gap = [&](int64_t size) -> Value {
    SmallVector<int64_t> shape(partType.getShape());
    shape[dim] = size;
    auto type = RankedTensorType::get(shape, partType.getElementType());
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(type, b.getZeroAttr(partType.getElementType())));
  };
  SmallVector<Value> pieces;
  int64_t end = 0;
  for (auto [part, offset] : llvm::zip(parts, offsets)) {
    if (offset > end)
      pieces.push_back(gap(offset - end));
    pieces.push_back(part);
    end = offset + cast<RankedTensorType>(part.getType()).getDimSize(dim);
  }
  if (total > end)
    pieces.push_back(gap(total - end));
  return tensor::ConcatOp::create(b, loc, dim, pieces);
}

OpFoldResult index(OpBuilder &b, int64_t value) {
  return b.getIndexAttr(value);
}

struct ZeroCombineCollectivesPass
    : public zero::impl::ZeroCombineCollectivesBase<
          ZeroCombineCollectivesPass> {
  using Base::Base;

  int64_t nextBucketId = 0;

  /// Groups the candidate collectives of `graph`'s block in the order their
  /// inputs become ready (as DDP fills buckets in the order backward produces
  /// gradients): a candidate joins the open bucket of its kind of exchange
  /// when it fits and no dependence runs between them; otherwise that bucket
  /// closes and the candidate opens the next.
  SmallVector<Bucket> formBuckets(BlockGraph &graph,
                                  const CostModelParameters &costs) {
    SmallVector<int64_t> candidates;
    for (int64_t i = 0, e = graph.size(); i < e; ++i)
      if (auto collective = dyn_cast<CollectiveOpInterface>(graph.op(i)))
        if (isCandidate(collective) && packingPays(collective, costs))
          candidates.push_back(i);
    llvm::stable_sort(candidates, [&](int64_t a, int64_t b) {
      return graph.readyPoint(a) < graph.readyPoint(b);
    });

    SmallVector<Bucket> closed;
    SmallVector<Bucket> open; // at most one per kind of exchange
    for (int64_t i : candidates) {
      auto op = cast<CollectiveOpInterface>(graph.op(i));
      int64_t bytes = *getTensorBytes(op.getInput().getType());
      auto it = llvm::find_if(open, [&](const Bucket &bucket) {
        return isSameExchange(bucket.members.front(), op);
      });
      if (it != open.end() && it->bytes + bytes <= bucketBytes) {
        int64_t first = graph.indexOf(it->members.front());
        if (graph.canMerge(first, i)) {
          graph.merge(first, i);
          it->members.push_back(op);
          it->bytes += bytes;
          continue;
        }
      }
      if (it != open.end()) {
        closed.push_back(std::move(*it));
        open.erase(it);
      }
      open.push_back(Bucket{{op}, bytes});
    }
    llvm::append_range(closed, open);
    return closed;
  }

  /// Puts `block` in `graph`'s schedule: each bucket's members become
  /// consecutive, after everything their inputs need and before everything
  /// that uses them.
  void reorder(Block &block, const BlockGraph &graph) {
    Operation *terminator =
        block.mightHaveTerminator() ? block.getTerminator() : nullptr;
    for (Operation *op : graph.schedule()) {
      if (terminator)
        op->moveBefore(terminator);
      else
        op->moveBefore(&block, block.end());
    }
  }

  /// Offsets of the members' chunks in a bucket: a chunk of at least
  /// `alignment` bytes starts at a multiple of it, a smaller one right after
  /// the chunk before (a gap would cost more than the alignment gains: a
  /// norm's partials are a few elements a tensor). Returns the bucket's
  /// chunk elements.
  int64_t layOut(Bucket &bucket, SmallVectorImpl<int64_t> &offsets,
                 SmallVectorImpl<int64_t> &sizes) {
    Type element = bucket.members.front().getInput().getType().getElementType();
    int64_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    int64_t step = std::max<int64_t>(1, alignment / elementBytes);
    int64_t end = 0;
    for (CollectiveOpInterface member : bucket.members) {
      int64_t size = getChunkElements(member);
      int64_t offset = size >= step ? llvm::alignTo(end, step) : end;
      offsets.push_back(offset);
      sizes.push_back(size);
      end = offset + size;
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
    // After reorder, the members are consecutive in the block in the order
    // of `members`: the first's place has every input and precedes every use.
    CollectiveOpInterface first = bucket.members.front();
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
      SmallVector<Value> parts;
      for (CollectiveOpInterface member : bucket.members)
        parts.push_back(flatten(b, loc, member.getInput()));
      Value buffer = pack(b, loc, parts, offsets, chunk, /*dim=*/0);
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
      SmallVector<Value> parts;
      for (auto [member, size] : llvm::zip(bucket.members, sizes))
        parts.push_back(
            unflatten(b, loc, member.getInput(),
                      RankedTensorType::get({ranks, size}, element)));
      Value buffer = pack(b, loc, parts, offsets, chunk, /*dim=*/1);
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
      SmallVector<Value> parts;
      for (CollectiveOpInterface member : bucket.members)
        parts.push_back(member.getInput());
      Value buffer = pack(b, loc, parts, offsets, chunk, /*dim=*/0);
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
    FailureOr<CostModelParameters> costs = getCostModelParameters(
        getOperation(), getArgument(), latencyMicroseconds, bandwidthGBps,
        gflops, gelementsPerSecond, reduceBandwidthGBps);
    if (failed(costs))
      return signalPassFailure();
    if (alignment <= 0) {
      getOperation().emitError("zero-combine-collectives: alignment must be "
                               "positive, got ")
          << static_cast<int64_t>(alignment);
      return signalPassFailure();
    }
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks) {
      BlockGraph graph(*block);
      SmallVector<Bucket> buckets = formBuckets(graph, *costs);
      if (llvm::none_of(buckets, [](const Bucket &bucket) {
            return bucket.members.size() > 1;
          }))
        continue;
      reorder(*block, graph);
      for (Bucket &bucket : buckets) {
        if (bucket.members.size() < 2)
          continue;
        llvm::sort(bucket.members,
                   [](CollectiveOpInterface a, CollectiveOpInterface b) {
                     return a->isBeforeInBlock(b);
                   });
        combine(bucket);
      }
    }
  }
};

} // namespace
