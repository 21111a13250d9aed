//===- ShardWeightUpdate.cpp - shard elementwise weight updates -----------===//
//
// all_reduce + elementwise update on N ranks  ==>  reduce_scatter + the update
// on a 1/N shard + all_gather. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Flatten.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROSHARDWEIGHTUPDATE
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// How one gradient's elements are laid out across its group: flattened to
/// `numElements`, padded to `paddedElements` = N * `shardElements`.
struct ShardLayout {
  mlir::FlatSymbolRefAttr mesh; // the group: the all-reduce's mesh and axes
  mlir::DenseI64ArrayAttr axes;
  int64_t numElements;
  int64_t shardElements;
  int64_t paddedElements;

  ShardLayout(AllReduceOp gradient, int64_t groupSize)
      : mesh(gradient.getMeshAttr()), axes(gradient.getAxesAttr()),
        numElements(gradient.getType().getNumElements()),
        shardElements(llvm::divideCeil(numElements, groupSize)),
        paddedElements(shardElements * groupSize) {}

  RankedTensorType flatType(Type element, int64_t size) const {
    return RankedTensorType::get({size}, element);
  }
};

/// Flattens `value` and pads it with zeros to the padded size. The padding is
/// computed on and dropped, never read into a real element.
Value flattenAndPad(OpBuilder &b, Location loc, Value value,
                    const ShardLayout &layout) {
  Type element = cast<RankedTensorType>(value.getType()).getElementType();
  value = flatten(b, loc, value);
  if (layout.paddedElements == layout.numElements)
    return value;
  Value zero = arith::ConstantOp::create(b, loc, b.getZeroAttr(element));
  return tensor::createPadHighOp(
      layout.flatType(element, layout.paddedElements), value, zero,
      /*nofold=*/false, loc, b);
}

/// The inverse of flattenAndPad on a gathered tensor: `whole` is the type of
/// the value that was flattened (the full shape, or already flat).
Value unpadAndReshape(OpBuilder &b, Location loc, Value flat,
                      const ShardLayout &layout, RankedTensorType whole) {
  if (layout.paddedElements != layout.numElements)
    flat = tensor::ExtractSliceOp::create(
        b, loc, flat, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(layout.numElements)},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  return unflatten(b, loc, flat, whole);
}

/// This rank's shard of the whole value `full`.
Value sliceShard(OpBuilder &b, Location loc, Value full,
                 const ShardLayout &layout) {
  Type element = cast<RankedTensorType>(full.getType()).getElementType();
  return ShardSliceOp::create(
      b, loc, layout.flatType(element, layout.shardElements),
      flattenAndPad(b, loc, full, layout), layout.mesh, layout.axes, /*dim=*/0);
}

/// The whole value, of type `whole`, of which `shard` is this rank's part.
Value gatherWhole(OpBuilder &b, Location loc, Value shard,
                  const ShardLayout &layout, RankedTensorType whole) {
  Value padded = AllGatherOp::create(
      b, loc, layout.flatType(whole.getElementType(), layout.paddedElements),
      shard, layout.mesh, layout.axes, /*gather_dim=*/0);
  return unpadAndReshape(b, loc, padded, layout, whole);
}

/// `shard` with its padding elements replaced by `identity`, so that a
/// reduction over it sees only real elements. The padding is the tail of the
/// flattened value: element i of this rank's shard is real when
/// groupIndex * shardElements + i < numElements.
Value maskPadding(OpBuilder &b, Location loc, Value shard,
                  const ShardLayout &layout, TypedAttr identity) {
  if (layout.paddedElements == layout.numElements)
    return shard;
  auto type = cast<RankedTensorType>(shard.getType());
  Value index = ReplicaIndexOp::create(b, loc, b.getIndexType(), layout.mesh,
                                       layout.axes);
  Value offset = arith::MulIOp::create(
      b, loc, index,
      arith::ConstantIndexOp::create(b, loc, layout.shardElements));
  Value real = arith::ConstantIndexOp::create(b, loc, layout.numElements);
  Value fill = arith::ConstantOp::create(b, loc, identity);
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(1);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{shard}, ValueRange{empty},
             ArrayRef<AffineMap>{id, id},
             ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
             /*doc=*/"", /*libraryCall=*/"",
             [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
               Value i = linalg::IndexOp::create(nested, nestedLoc, 0);
               Value global =
                   arith::AddIOp::create(nested, nestedLoc, i, offset);
               Value isReal = arith::CmpIOp::create(
                   nested, nestedLoc, arith::CmpIPredicate::ult, global, real);
               Value kept = arith::SelectOp::create(nested, nestedLoc, isReal,
                                                    args[0], fill);
               linalg::YieldOp::create(nested, nestedLoc, kept);
             })
      .getResult(0);
}

/// A copy of the full reduction `reduce` over the flat `input` into `init`.
Value cloneReduction(OpBuilder &b, linalg::ReduceOp reduce, Value input,
                     Value init) {
  IRMapping mapping;
  mapping.map(reduce.getInputs()[0], input);
  mapping.map(reduce.getInits()[0], init);
  auto clone = cast<linalg::ReduceOp>(b.clone(*reduce, mapping));
  clone.setDimensions({0});
  return clone.getResult(0);
}

/// Replaces the full reduction `reduce` of a sharded value by the reduction
/// of this rank's shard (padding masked to the identity), an all-reduce of
/// the partial results, and the original combiner applied to the total and
/// the original init. Every rank gets the same replicated result.
void shardReduction(OpBuilder &b, linalg::ReduceOp reduce, Value shard,
                    const ShardLayout &layout) {
  Location loc = reduce.getLoc();
  ReductionCombiner combiner = *matchFullReduction(reduce);
  auto scalarType = cast<RankedTensorType>(reduce.getResult(0).getType());
  Value masked = maskPadding(b, loc, shard, layout, combiner.identity);
  Value identity = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(scalarType, combiner.identity));
  auto kind = ReductionKindAttr::get(b.getContext(), combiner.kind);
  Value partial = cloneReduction(b, reduce, masked, identity);

  // The runtime has no i1: or/and of booleans travel as i32 max/min.
  Value total;
  if (scalarType.getElementType().isInteger(1)) {
    auto wide = RankedTensorType::get({}, b.getI32Type());
    Value widened = arith::ExtUIOp::create(b, loc, wide, partial);
    Value reduced =
        AllReduceOp::create(b, loc, widened, layout.mesh, layout.axes, kind);
    total = arith::TruncIOp::create(b, loc, scalarType, reduced);
  } else {
    total =
        AllReduceOp::create(b, loc, partial, layout.mesh, layout.axes, kind);
  }
  Value result =
      cloneReduction(b, reduce, flatten(b, loc, total), reduce.getInits()[0]);
  reduce.getResult(0).replaceAllUsesWith(result);
}

/// The scf.for iteration argument that the yield operand `output` feeds.
BlockArgument carriedArgument(OpOperand *output) {
  auto loop = cast<scf::ForOp>(output->getOwner()->getParentOp());
  return loop.getRegionIterArgs()[output->getOperandNumber()];
}

/// Loop-carried values of an scf.for that only this update reads and that
/// the update produces again for the next iteration (optimizer state, such as
/// a momentum): they can stay shards across iterations. Returns the yield
/// operands of those values.
SmallVector<OpOperand *> findCarriedState(const WeightUpdate &update) {
  if (!isa<scf::ForOp>(update.gradient->getParentOp()))
    return {};
  llvm::SmallPtrSet<Operation *, 16> inUpdate(update.ops.begin(),
                                              update.ops.end());
  SmallVector<OpOperand *> carried;
  for (OpOperand *output : update.outputs) {
    if (!isa<scf::YieldOp>(output->getOwner()))
      continue;
    BlockArgument arg = carriedArgument(output);
    if (!arg.use_empty() && llvm::all_of(arg.getUsers(), [&](Operation *user) {
          return inUpdate.contains(user);
        }))
      carried.push_back(output);
  }
  return carried;
}

/// Rewrites one update onto shards. `position` orders the ops of each block
/// as they were before the pass: the update's ops are rewritten in block
/// order, so that each value's shard is made before its first use.
void shardUpdate(WeightUpdate &update, const ShardLayout &layout,
                 const llvm::DenseMap<Operation *, int64_t> &position) {
  llvm::sort(update.ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  AllReduceOp gradient = update.gradient;
  OpBuilder b(gradient);
  Location loc = gradient.getLoc();
  FlatSymbolRefAttr mesh = layout.mesh;
  DenseI64ArrayAttr axes = layout.axes;
  auto shardType = [&](Type full) {
    return layout.flatType(cast<RankedTensorType>(full).getElementType(),
                           layout.shardElements);
  };

  IRMapping shards;
  Value padded = flattenAndPad(b, loc, gradient.getInput(), layout);
  shards.map(gradient.getResult(),
             ReduceScatterOp::create(
                 b, loc, shardType(gradient.getType()), padded, mesh, axes,
                 gradient.getReductionAttr(), /*scatter_dim=*/0)
                 .getResult());

  // The shard of a value the update reads, made once, before its first use.
  SmallVector<Operation *> fullSplats;
  auto shardOf = [&](Value full, Location useLoc) -> Value {
    if (Value known = shards.lookupOrNull(full))
      return known;
    Value shard;
    DenseElementsAttr splat;
    if (auto scalar = full.getDefiningOp<tensor::SplatOp>()) {
      shard = tensor::SplatOp::create(b, useLoc, scalar.getInput(),
                                      shardType(full.getType()));
    } else if (matchPattern(full, m_Constant(&splat)) && splat.isSplat()) {
      auto type = shardType(full.getType());
      shard =
          arith::ConstantOp::create(b, useLoc, type, splat.resizeSplat(type));
      fullSplats.push_back(full.getDefiningOp());
    } else {
      shard = sliceShard(b, useLoc, full, layout);
    }
    shards.map(full, shard);
    return shard;
  };

  // Loop-carried state that only the update reads becomes a carried shard:
  // sliced once before the loop, gathered once after it. Its padding then
  // carries computed values from one iteration to the next, which no real
  // element ever reads (the update is elementwise).
  SmallVector<OpOperand *> carried = findCarriedState(update);
  llvm::SmallPtrSet<OpOperand *, 4> carriedSet(carried.begin(), carried.end());
  for (OpOperand *output : carried) {
    BlockArgument arg = carriedArgument(output);
    Operation *loop = arg.getOwner()->getParentOp();
    OpOperand *init = cast<scf::ForOp>(loop).getTiedLoopInit(arg);
    OpBuilder before(loop);
    init->set(sliceShard(before, loop->getLoc(), init->get(), layout));
    arg.setType(init->get().getType());
    shards.map(arg, arg);
  }

  for (Operation *op : update.ops) {
    b.setInsertionPoint(op);
    if (auto reduce = dyn_cast<linalg::ReduceOp>(op)) {
      shardReduction(b, reduce, shardOf(reduce.getInputs()[0], op->getLoc()),
                     layout);
      continue;
    }
    // A flattening's shard is its source's: shards are flat already.
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
      shards.map(collapse.getResult(),
                 shardOf(collapse.getSrc(), op->getLoc()));
      continue;
    }
    for (Value operand : op->getOperands())
      shardOf(operand, op->getLoc());
    Operation *clone = b.clone(*op, shards);
    for (OpResult result : clone->getResults())
      result.setType(shardType(result.getType()));
  }

  // Carried state: the shard goes round the loop; the whole value is
  // gathered from the loop's result.
  for (OpOperand *output : carried) {
    auto whole = cast<RankedTensorType>(output->get().getType());
    Value shard = shards.lookup(output->get());
    output->set(shard);
    BlockArgument arg = carriedArgument(output);
    auto loop = cast<scf::ForOp>(arg.getOwner()->getParentOp());
    OpResult result = loop.getTiedLoopResult(arg);
    result.setType(shard.getType());
    SmallVector<OpOperand *> uses =
        llvm::to_vector(llvm::make_pointer_range(result.getUses()));
    OpBuilder after(loop->getContext());
    after.setInsertionPointAfter(loop);
    Value full = gatherWhole(after, loop.getLoc(), result, layout, whole);
    for (OpOperand *use : uses)
      use->set(full);
  }

  // Whole values again where they leave the block.
  IRMapping gathered;
  for (OpOperand *output : update.outputs) {
    if (carriedSet.contains(output))
      continue;
    Value full = output->get();
    if (!gathered.contains(full)) {
      b.setInsertionPoint(output->getOwner());
      gathered.map(full,
                   gatherWhole(b, full.getLoc(), shards.lookup(full), layout,
                               cast<RankedTensorType>(full.getType())));
    }
    output->set(gathered.lookup(full));
  }

  for (Operation *op : llvm::reverse(update.ops))
    op->erase();
  gradient->erase();
  // Full-shape splats whose only users were the update.
  for (Operation *splat : fullSplats)
    if (splat->use_empty())
      splat->erase();
}

struct ZeroShardWeightUpdatePass
    : public zero::impl::ZeroShardWeightUpdateBase<ZeroShardWeightUpdatePass> {
  using Base::Base;

  /// Why `gradient` is left replicated, or an empty string to shard it.
  std::string whyReplicated(AllReduceOp gradient, int64_t groupSize) {
    RankedTensorType type = gradient.getType();
    if (!type.hasStaticShape())
      return "its shape is not static";
    if (type.getRank() == 0)
      return "it is a 0-d tensor";
    if (groupSize == 1)
      return "its group has one rank";
    std::optional<int64_t> bytes = getTensorBytes(type);
    if (!bytes || *bytes < minBytes)
      return "it is smaller than min-bytes=" + std::to_string(minBytes);
    return "";
  }

  void runOnOperation() override {
    // Positions of the ops as given. Asking the block for its order
    // (isBeforeInBlock) after each rewrite would renumber the block each
    // time: quadratic in a program with thousands of parameters. The
    // rewrite inserts and erases ops but never reorders the originals, so
    // these positions stay valid for them.
    llvm::DenseMap<Operation *, int64_t> position;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](Operation *op) { position[op] = position.size(); });
    SmallVector<AllReduceOp> gradients;
    getOperation().walk([&](AllReduceOp op) {
      if (!isa<AsyncOp>(op->getParentOp()))
        gradients.push_back(op);
    });
    for (AllReduceOp gradient : gradients) {
      MeshOp mesh = lookupMesh(gradient, gradient.getMeshAttr());
      if (!mesh) // the verifier has said so already
        continue;
      int64_t groupSize = zero::getGroupSize(mesh, gradient.getAxesAttr());
      std::string why = whyReplicated(gradient, groupSize);
      FailureOr<WeightUpdate> update = failure();
      if (why.empty())
        update = findWeightUpdate(gradient, why);
      if (failed(update)) {
        gradient.emitRemark("left replicated: ") << why;
        continue;
      }
      shardUpdate(*update, ShardLayout(gradient, groupSize), position);
    }
  }
};

} // namespace
