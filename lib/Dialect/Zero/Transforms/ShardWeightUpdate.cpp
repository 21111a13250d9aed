//===- ShardWeightUpdate.cpp - shard elementwise weight updates -----------===//
//
// all_reduce + elementwise update on N ranks  ==>  reduce_scatter + the update
// on a 1/N shard + all_gather. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Boundary.h"
#include "Layout.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Loops/ReductionOrder.h"

namespace zero {
#define GEN_PASS_DEF_ZEROSHARDWEIGHTUPDATE
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// `shard` with its padding elements replaced by `identity`, so that a
/// reduction over it sees only real elements. The padding is the tail of the
/// flattened value: element i of this rank's shard is real when
/// groupIndex * shardElements + i < numElements.
Value maskPadding(OpBuilder &b, Location loc, Value shard,
                  const GroupPartition &layout, TypedAttr identity) {
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

/// Replaces the full reduction `reduce` of a sharded value by zero's order
/// for it (ReductionOrder.h) on shards: the partials of this rank's blocks
/// (the shard is block-aligned; its padding masked to the identity), an
/// all-gather of every rank's partials in group order, and the init and
/// the real blocks' partials combined in index order. Every rank computes
/// the same bits as the program as given, whatever the group size: never a
/// backend's all-reduce, whose order is its own.
void shardReduction(OpBuilder &b, linalg::ReduceOp reduce, Value shard,
                    const GroupPartition &layout) {
  Location loc = reduce.getLoc();
  TypedAttr identity = matchFullReduction(reduce)->identity;
  Value masked = maskPadding(b, loc, shard, layout, identity);
  Value partials = reduceBlocks(b, loc, reduce, masked, identity,
                                getReductionBlock(layout.numElements));
  auto partialsType = cast<RankedTensorType>(partials.getType());
  Type element = partialsType.getElementType();
  // The runtime moves no i1: booleans travel as i32.
  Type wire = element.isInteger(1) ? b.getI32Type() : element;
  if (wire != element)
    partials = arith::ExtUIOp::create(
        b, loc, RankedTensorType::get(partialsType.getShape(), wire), partials);
  int64_t groupSize = layout.paddedElements / layout.shardElements;
  Value gathered = AllGatherOp::create(
      b, loc,
      RankedTensorType::get({partialsType.getNumElements() * groupSize}, wire),
      partials, layout.mesh, layout.axes, /*gather_dim=*/0);
  // The blocks past the real elements hold only padding: dropped, so that
  // the combine is the program as given's.
  int64_t realBlocks = countBlocks(layout.numElements);
  Value real = tensor::ExtractSliceOp::create(
      b, loc, gathered, ArrayRef<OpFoldResult>{b.getIndexAttr(0)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(realBlocks)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  if (wire != element)
    real = arith::TruncIOp::create(
        b, loc, RankedTensorType::get({realBlocks}, element), real);
  Value result = combineInOrder(b, loc, reduce, real, reduce.getInits()[0]);
  reduce.getResult(0).replaceAllUsesWith(result);
}

/// The shard-shaped splats of the whole pass run, one per value and type in
/// each block. Every update over the same shard shape reads the same
/// constants (a learning rate, a beta); making each once keeps the rewritten
/// program small, and canonicalize and CSE have less to merge afterwards.
class SplatCache {
public:
  /// A splat constant of `attr`'s value and type, at the start of `block`.
  Value constant(Block *block, DenseElementsAttr attr, Location loc) {
    Value &cached = constants[{block, attr}];
    if (!cached) {
      OpBuilder b = OpBuilder::atBlockBegin(block);
      cached = arith::ConstantOp::create(b, loc, attr.getType(), attr);
    }
    return cached;
  }

  /// `tensor.splat` of `scalar` to `type`, right after `scalar` is defined.
  Value splat(Value scalar, RankedTensorType type, Location loc) {
    Value &cached = splats[{scalar, type}];
    if (!cached) {
      OpBuilder b(scalar.getContext());
      if (Operation *def = scalar.getDefiningOp())
        b.setInsertionPointAfter(def);
      else
        b.setInsertionPointToStart(cast<BlockArgument>(scalar).getOwner());
      cached = tensor::SplatOp::create(b, loc, scalar, type);
    }
    return cached;
  }

private:
  llvm::DenseMap<std::pair<Block *, Attribute>, Value> constants;
  llvm::DenseMap<std::pair<Value, Type>, Value> splats;
};

/// A value that stays a shard from one step to the next: optimizer state
/// carried by an scf.for, or an argument of a step function that is returned
/// as a shard. Stage 3 adds the weights.
struct PersistentShard {
  /// The iteration argument or function argument; a shard from now on.
  BlockArgument arg;
  /// The yield or return operand that passes on its next value.
  OpOperand *output;
  /// Uses of `arg` outside the update (stage 3: the forward and backward
  /// passes), each of which gets the whole value gathered just before it.
  SmallVector<OpOperand *> otherUses;
  /// Carried state only: the function's return operand that passes on the
  /// loop's final value, when the function's argument and result are the
  /// shard (shard-function-boundary); null when it enters and leaves whole.
  OpOperand *returned = nullptr;
};

/// Rewrites one weight update onto shards. See Passes.td for the contract.
class UpdateSharder {
public:
  UpdateSharder(WeightUpdate &update, const GroupPartition &layout,
                int64_t stage, bool shardBoundary, int64_t &gatherCount,
                SplatCache &splats, DenseI64ArrayAttr replicaAxes)
      : update(update), layout(layout), replicaAxes(replicaAxes), stage(stage),
        shardBoundary(shardBoundary), gatherCount(gatherCount), splats(splats),
        inUpdate(update.ops.begin(), update.ops.end()), b(update.gradient) {}

  /// `position` orders the ops of each block as they were before the pass:
  /// the update's ops are rewritten in that order, so that each value's
  /// shard is made before its first use. Returns whether any value stays a
  /// shard between steps (false: the weights and state enter and leave
  /// whole).
  bool run(const llvm::DenseMap<Operation *, int64_t> &position);

private:
  RankedTensorType shardType(Type full) const {
    return layout.shardType(cast<RankedTensorType>(full).getElementType());
  }
  Value shardOf(Value full, Location loc);
  void shardGradient();
  SmallVector<OpOperand *> usesOutsideUpdate(Value value) const;
  SmallVector<PersistentShard> findCarriedState();
  SmallVector<PersistentShard> findBoundaryState();
  OpOperand *findCarriedReturn(const PersistentShard &state);
  void sliceCarriedInit(PersistentShard &state);
  void gatherCarriedResult(PersistentShard &state, RankedTensorType whole);
  void markBoundary(PersistentShard &state, RankedTensorType whole);
  void gatherForOtherUses(PersistentShard &state, RankedTensorType whole);
  void remarkWholeResults(const llvm::SmallPtrSetImpl<OpOperand *> &persistent);
  Value uniformShard(Value full, Location loc);
  void rewriteLinalgOp(mlir::linalg::LinalgOp op);
  void rewriteUpdateOps();
  void gatherOutputs(const llvm::SmallPtrSetImpl<OpOperand *> &persistent);

  WeightUpdate &update;
  const GroupPartition &layout;
  /// Axes of the gradient's group that the shard is replicated over (hybrid
  /// sharding), or null: the reduce-scatter's shard is all-reduced over them.
  DenseI64ArrayAttr replicaAxes;
  int64_t stage;
  bool shardBoundary;
  int64_t &gatherCount;
  SplatCache &splats;
  llvm::SmallPtrSet<Operation *, 16> inUpdate;
  OpBuilder b;
  /// Each value the update reads or computes, mapped to its shard.
  IRMapping shards;
  /// Full-shape splat constants whose shards were made: erased when the
  /// update was their only user.
  SmallVector<Operation *> fullSplats;
  /// Why each returned output that pairs with no argument does not.
  llvm::DenseMap<OpOperand *, std::string> unpairedWhy;
};

Value UpdateSharder::shardOf(Value full, Location loc) {
  if (Value known = shards.lookupOrNull(full))
    return known;
  Value shard;
  DenseElementsAttr splat;
  if (auto scalar = full.getDefiningOp<tensor::SplatOp>()) {
    shard = splats.splat(scalar.getInput(), shardType(full.getType()), loc);
    fullSplats.push_back(scalar);
  } else if (matchPattern(full, m_Constant(&splat)) && splat.isSplat()) {
    shard = splats.constant(b.getInsertionBlock(),
                            splat.resizeSplat(shardType(full.getType())), loc);
    fullSplats.push_back(full.getDefiningOp());
  } else if (isSplat(full)) {
    shard = uniformShard(full, loc);
  } else {
    shard = sliceShard(b, loc, full, layout);
  }
  shards.map(full, shard);
  return shard;
}

/// Stage 1 keeps the all-reduce and slices its result; stages 2 and 3
/// reduce-scatter instead, so no rank holds the whole reduced gradient.
void UpdateSharder::shardGradient() {
  AllReduceOp gradient = update.gradient;
  b.setInsertionPoint(gradient);
  Location loc = gradient.getLoc();
  if (stage == 1) {
    b.setInsertionPointAfter(gradient);
    shards.map(gradient.getResult(),
               sliceShard(b, loc, gradient.getResult(), layout));
    return;
  }
  Value padded = flattenAndPad(b, loc, gradient.getInput(), layout);
  Value shard = ReduceScatterOp::create(
      b, loc, shardType(gradient.getType()), padded, layout.mesh, layout.axes,
      gradient.getReductionAttr(), /*scatter_dim=*/0);
  if (replicaAxes)
    shard = AllReduceOp::create(b, loc, shard, layout.mesh, replicaAxes,
                                gradient.getReductionAttr());
  shards.map(gradient.getResult(), shard);
}

SmallVector<OpOperand *> UpdateSharder::usesOutsideUpdate(Value value) const {
  SmallVector<OpOperand *> uses;
  for (OpOperand &use : value.getUses())
    if (!inUpdate.contains(use.getOwner()))
      uses.push_back(&use);
  return uses;
}

/// Loop-carried values of an scf.for that the update reads and produces again
/// for the next iteration. Below stage 3 only those nothing else reads
/// (optimizer state, such as a momentum); stage 3 takes the weights too, and
/// the copies of them that the update makes and the loop carries without the
/// update reading them (a bf16 model copy beside fp32 master weights).
SmallVector<PersistentShard> UpdateSharder::findCarriedState() {
  auto loop = dyn_cast<scf::ForOp>(update.gradient->getParentOp());
  if (!loop)
    return {};
  SmallVector<PersistentShard> carried;
  for (OpOperand *output : update.outputs) {
    if (!isa<scf::YieldOp>(output->getOwner()))
      continue;
    BlockArgument arg = loop.getRegionIterArgs()[output->getOperandNumber()];
    if (!update.inputs.contains(arg) && stage != 3)
      continue;
    SmallVector<OpOperand *> others = usesOutsideUpdate(arg);
    if (others.empty() || stage == 3)
      carried.push_back({arg, output, std::move(others)});
  }
  return carried;
}

/// Function arguments that the update reads, paired with the results that
/// return their next values, when `shard-function-boundary` is set. A result
/// pairs with the argument of its type that is nearest to it in the update's
/// data flow (fewest ops between them) when exactly one is nearest: `w' = w -
/// lr * m'` pairs with `w` (one op away), not with `lr` or `m` (further).
/// Paired arguments leave the race, so `m'` = `beta * m + g` gets `m` either
/// way. A result with two nearest candidates stays whole.
SmallVector<PersistentShard> UpdateSharder::findBoundaryState() {
  auto func = dyn_cast<func::FuncOp>(update.gradient->getParentOp());
  if (!shardBoundary || !func)
    return {};
  llvm::SmallPtrSet<Value, 8> candidates;
  for (Value input : update.inputs) {
    auto arg = dyn_cast<BlockArgument>(input);
    if (arg && arg.getOwner() == &func.getBody().front() &&
        (stage == 3 || usesOutsideUpdate(arg).empty()))
      candidates.insert(arg);
  }
  // For each returned output, the candidates of its type by distance,
  // through the update's ops.
  SmallVector<OpOperand *> returned;
  SmallVector<SmallVector<StateSource>> sources;
  for (OpOperand *output : update.outputs) {
    if (!isa<func::ReturnOp>(output->getOwner()))
      continue;
    returned.push_back(output);
    sources.push_back(findStateSources(
        output->get(),
        [&](Value value) {
          return candidates.contains(value) &&
                 value.getType() == output->get().getType();
        },
        [&](Operation *producer) { return inUpdate.contains(producer); }));
  }
  SmallVector<PersistentShard> boundary;
  llvm::SmallPtrSet<Value, 8> taken;
  SmallVector<bool> paired(returned.size());
  for (auto [index, source] : pairNearestSources(sources)) {
    auto arg = cast<BlockArgument>(source);
    boundary.push_back({arg, returned[index], usesOutsideUpdate(arg)});
    taken.insert(arg);
    paired[index] = true;
  }
  // Why each result left unpaired stays whole.
  for (auto [index, output] : llvm::enumerate(returned)) {
    if (paired[index])
      continue;
    const SmallVector<StateSource> &near = sources[index];
    int64_t open = llvm::count_if(near, [&](const StateSource &c) {
      return !taken.contains(c.value) && c.distance == near.front().distance;
    });
    unpairedWhy[output] =
        open > 1 ? std::to_string(open) +
                       " arguments of its type are equally near it in the "
                       "update's data flow"
                 : "it pairs with no argument that the update reads";
  }
  return boundary;
}

/// With `shard-function-boundary`, the return operand through which a
/// training loop's carried state leaves its function as the shard itself
/// (findCarriedReturn). Null, with a remark saying why, when the state
/// enters and leaves whole.
OpOperand *UpdateSharder::findCarriedReturn(const PersistentShard &state) {
  if (!shardBoundary)
    return nullptr;
  auto loop = cast<scf::ForOp>(state.arg.getOwner()->getParentOp());
  std::string why;
  if (OpOperand *returned = zero::findCarriedReturn(loop, state.arg, why))
    return returned;
  mlir::emitRemark(loop.getLoc())
      << "iter_arg " << state.arg.getArgNumber() - loop.getNumInductionVars()
      << " enters and leaves the function whole, sliced before the loop and "
         "gathered after it: "
      << why;
  return nullptr;
}

/// Before the loop: the state enters as this rank's shard.
void UpdateSharder::sliceCarriedInit(PersistentShard &state) {
  auto loop = cast<scf::ForOp>(state.arg.getOwner()->getParentOp());
  OpOperand *init = loop.getTiedLoopInit(state.arg);
  OpBuilder before(loop);
  init->set(sliceShard(before, loop.getLoc(), init->get(), layout));
  state.arg.setType(init->get().getType());
}

/// After the loop: the whole value, gathered once, for the loop's users.
void UpdateSharder::gatherCarriedResult(PersistentShard &state,
                                        RankedTensorType whole) {
  auto loop = cast<scf::ForOp>(state.arg.getOwner()->getParentOp());
  OpResult result = loop.getTiedLoopResult(state.arg);
  result.setType(state.arg.getType());
  SmallVector<OpOperand *> uses =
      llvm::to_vector(llvm::make_pointer_range(result.getUses()));
  OpBuilder after(loop->getContext());
  after.setInsertionPointAfter(loop);
  Value full = gatherWhole(after, loop.getLoc(), result, layout, whole);
  for (OpOperand *use : uses)
    use->set(full);
}

/// A single-step function's argument and the result it pairs with.
void UpdateSharder::markBoundary(PersistentShard &state,
                                 RankedTensorType whole) {
  auto func = cast<func::FuncOp>(state.arg.getOwner()->getParentOp());
  markShardBoundary(func, state.arg.getArgNumber(),
                    state.output->getOperandNumber(), layout, whole);
}

/// Stage 3: every use outside the update gets the whole value gathered just
/// before it, and nothing holds the whole weight between uses. The gathers
/// carry distinct `zero.for_use` numbers, so that CSE does not merge them
/// back into one whole weight kept alive from the forward to the backward
/// pass.
void UpdateSharder::gatherForOtherUses(PersistentShard &state,
                                       RankedTensorType whole) {
  // One gather per op, however many of its operands read the weight (a
  // linalg op reading it as input and as init, `w * w`).
  llvm::SmallDenseMap<Operation *, Value> gathered;
  for (OpOperand *use : state.otherUses) {
    Operation *user = use->getOwner();
    Value &full = gathered[user];
    if (!full) {
      OpBuilder before(user);
      AllGatherOp gather;
      full = gatherWhole(before, user->getLoc(), state.arg, layout, whole,
                         &gather);
      gather->setAttr("zero.for_use", before.getI64IntegerAttr(gatherCount++));
    }
    use->set(full);
  }
}

/// Stage 3 at a function boundary: a result of the update that pairs with no
/// argument (a model copy the step makes from the new weights, with its
/// previous value not among the arguments the update reads) leaves whole,
/// and the caller holds it whole between steps. Says so.
void UpdateSharder::remarkWholeResults(
    const llvm::SmallPtrSetImpl<OpOperand *> &persistent) {
  for (OpOperand *output : update.outputs)
    if (isa<func::ReturnOp>(output->getOwner()) && !persistent.contains(output))
      mlir::emitRemark(output->get().getDefiningOp()->getLoc())
          << "stage 3: result #" << output->getOperandNumber()
          << " is returned whole, so the caller holds it whole between "
             "steps: "
          << unpairedWhy.lookup(output);
}

/// The shard of a value whose elements are all the same (or undefined),
/// made by the same op on the shard's shape: an empty tensor, a fill of a
/// scalar, a broadcast of a 0-d tensor.
Value UpdateSharder::uniformShard(Value full, Location loc) {
  RankedTensorType type = shardType(full.getType());
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Operation *def = full.getDefiningOp();
  fullSplats.push_back(def);
  if (auto fill = dyn_cast<linalg::FillOp>(def))
    return linalg::FillOp::create(b, loc, fill.getInputs()[0], empty)
        .getResult(0);
  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(def))
    return linalg::BroadcastOp::create(b, loc, broadcast.getInput(), empty,
                                       ArrayRef<int64_t>{0})
        .getResult()[0];
  return empty;
}

/// A linalg op of the update on shards. Shards are flat, so every operand
/// read at its element becomes a 1-D identity, and a 0-d operand or scalar
/// one read by every element. A generic is rebuilt with those maps and the
/// same body. A named op keeps its name: cloned onto the shards when it reads
/// only elements (linalg.add, linalg.map, ...), with the new maps when it
/// spells them out (linalg.elementwise), else (no way to say a 0-d operand)
/// rebuilt as a generic.
void UpdateSharder::rewriteLinalgOp(linalg::LinalgOp op) {
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  AffineMap element = AffineMap::getMultiDimIdentityMap(1, context);
  AffineMap shared = AffineMap::get(1, 0, {}, context);
  bool elementsOnly = true;
  SmallVector<AffineMap> maps;
  SmallVector<Value> operands;
  for (OpOperand &operand : op->getOpOperands()) {
    Value value = operand.get();
    auto tensor = dyn_cast<RankedTensorType>(value.getType());
    bool whole = tensor && op.getMatchingIndexingMap(&operand).isIdentity();
    maps.push_back(whole ? element : shared);
    elementsOnly &= whole || !tensor;
    operands.push_back(whole ? shardOf(value, loc) : value);
  }
  SmallVector<Type> resultTypes = llvm::map_to_vector(
      op->getResultTypes(), [&](Type type) -> Type { return shardType(type); });
  Operation *sharded;
  if (auto broadcast = dyn_cast<linalg::BroadcastOp>(op.getOperation())) {
    // Of a 0-d tensor (the only broadcast the analysis takes): onto the
    // shard's one dimension.
    sharded = linalg::BroadcastOp::create(b, loc, operands[0], operands[1],
                                          ArrayRef<int64_t>{0});
    shards.map(broadcast->getResult(0), sharded->getResult(0));
    return;
  }
  // A named op that spells out its maps (linalg.elementwise) keeps its name
  // with the shard's maps.
  bool spellsMaps = op->hasAttr("indexing_maps");
  if (!isa<linalg::GenericOp>(op) && (elementsOnly || spellsMaps)) {
    IRMapping mapping;
    mapping.map(op->getOperands(), operands);
    sharded = b.clone(*op, mapping);
    for (auto [result, type] : llvm::zip(sharded->getResults(), resultTypes))
      result.setType(type);
    if (spellsMaps)
      sharded->setAttr("indexing_maps", b.getAffineMapArrayAttr(maps));
  } else {
    auto inputs = ArrayRef<Value>(operands).take_front(op.getNumDpsInputs());
    auto inits = ArrayRef<Value>(operands).drop_front(op.getNumDpsInputs());
    auto generic = linalg::GenericOp::create(
        b, loc, resultTypes, inputs, inits, maps,
        SmallVector<utils::IteratorType>{utils::IteratorType::parallel});
    IRMapping body;
    op->getRegion(0).cloneInto(&generic.getRegion(), body);
    sharded = generic;
  }
  for (auto [full, shard] : llvm::zip(op->getResults(), sharded->getResults()))
    shards.map(full, shard);
}

void UpdateSharder::rewriteUpdateOps() {
  for (Operation *op : update.ops) {
    b.setInsertionPoint(op);
    if (auto reduce = dyn_cast<linalg::ReduceOp>(op)) {
      shardReduction(b, reduce, shardOf(reduce.getInputs()[0], op->getLoc()),
                     layout);
      continue;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      rewriteLinalgOp(linalgOp);
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
}

/// Whole values again where they leave the block, except the persistent
/// shards, which leave as shards.
void UpdateSharder::gatherOutputs(
    const llvm::SmallPtrSetImpl<OpOperand *> &persistent) {
  IRMapping gathered;
  for (OpOperand *output : update.outputs) {
    Value full = output->get();
    if (persistent.contains(output)) {
      output->set(shards.lookup(full));
      continue;
    }
    if (!gathered.contains(full)) {
      b.setInsertionPoint(output->getOwner());
      gathered.map(full,
                   gatherWhole(b, full.getLoc(), shards.lookup(full), layout,
                               cast<RankedTensorType>(full.getType())));
    }
    output->set(gathered.lookup(full));
  }
}

bool UpdateSharder::run(const llvm::DenseMap<Operation *, int64_t> &position) {
  llvm::sort(update.ops, [&](Operation *a, Operation *b) {
    return position.lookup(a) < position.lookup(b);
  });
  shardGradient();

  SmallVector<PersistentShard> persistent = findCarriedState();
  bool inLoop = !persistent.empty();
  if (!inLoop)
    persistent = findBoundaryState();
  llvm::SmallPtrSet<OpOperand *, 4> persistentOutputs;
  for (PersistentShard &state : persistent)
    persistentOutputs.insert(state.output);
  if (stage == 3 && shardBoundary && !inLoop)
    remarkWholeResults(persistentOutputs);
  SmallVector<RankedTensorType> wholeTypes;
  for (PersistentShard &state : persistent) {
    auto whole = cast<RankedTensorType>(state.arg.getType());
    wholeTypes.push_back(whole);
    if (inLoop && (state.returned = findCarriedReturn(state)))
      startFromShard(cast<scf::ForOp>(state.arg.getOwner()->getParentOp()),
                     state.arg, state.returned, layout, whole);
    else if (inLoop)
      sliceCarriedInit(state);
    else
      markBoundary(state, whole);
    shards.map(state.arg, state.arg);
    gatherForOtherUses(state, whole);
  }

  rewriteUpdateOps();
  gatherOutputs(persistentOutputs);
  if (inLoop)
    for (auto [state, whole] : llvm::zip(persistent, wholeTypes))
      if (!state.returned)
        gatherCarriedResult(state, whole);

  for (Operation *op : llvm::reverse(update.ops))
    op->erase();
  if (stage != 1)
    update.gradient->erase();
  for (Operation *splat : fullSplats)
    if (splat->use_empty())
      splat->erase();
  return !persistent.empty();
}

struct ZeroShardWeightUpdatePass
    : public zero::impl::ZeroShardWeightUpdateBase<ZeroShardWeightUpdatePass> {
  using Base::Base;

  /// Why `gradient` is left replicated, or an empty string to shard it.
  std::string whyReplicated(AllReduceOp gradient, int64_t groupSize) {
    RankedTensorType type = gradient.getType();
    if (!type.hasStaticShape())
      return "its shape is not static";
    if (type.getNumElements() == 0)
      return "it has no elements";
    if (groupSize == 1)
      return "its group has one rank";
    std::optional<int64_t> bytes = getTensorBytes(type);
    if (!bytes || *bytes < minBytes)
      return "it is smaller than min-bytes=" + std::to_string(minBytes);
    return "";
  }

  /// The `mesh` and `axes` options: which gradients to shard, and over
  /// which axes of their group. Sets `shardAxes` (null: the whole group) and
  /// `replicaAxes` (the rest of the group, null when none); returns why the
  /// gradient stays replicated, or an empty string.
  std::string splitAxes(AllReduceOp gradient, MeshOp mesh,
                        DenseI64ArrayAttr &shardAxes,
                        DenseI64ArrayAttr &replicaAxes) {
    if (!meshName.empty() && gradient.getMesh() != meshName)
      return "it is on mesh @" + gradient.getMesh().str() + ", not @" +
             meshName;
    if (axes.empty())
      return "";
    SmallVector<int64_t> group = getGroupAxes(mesh, gradient.getAxesAttr());
    for (int64_t axis : axes)
      if (!llvm::is_contained(group, axis))
        return "its group does not span mesh axis " + std::to_string(axis) +
               " of the axes option";
    SmallVector<int64_t> rest;
    for (int64_t axis : group)
      if (!llvm::is_contained(axes, axis))
        rest.push_back(axis);
    MLIRContext *context = &getContext();
    shardAxes = DenseI64ArrayAttr::get(context, llvm::to_vector(axes));
    if (!rest.empty())
      replicaAxes = DenseI64ArrayAttr::get(context, rest);
    return "";
  }

  void runOnOperation() override {
    if (stage < 1 || stage > 3) {
      getOperation().emitError("zero-shard-weight-update: stage must be 1, "
                               "2 or 3, got ")
          << static_cast<int64_t>(stage);
      return signalPassFailure();
    }
    // Positions of the ops as given. Asking the block for its order
    // (isBeforeInBlock) after each rewrite would renumber the block each
    // time: quadratic in a program with thousands of parameters. The
    // rewrite inserts and erases ops but never reorders the originals, so
    // these positions stay valid for them.
    // Norms fused into one generic (or generalized from linalg.reduce) in
    // the form the analysis knows and the lowering orders, first.
    zero::splitFullReductions(getOperation());
    llvm::DenseMap<Operation *, int64_t> position;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](Operation *op) { position[op] = position.size(); });
    SmallVector<AllReduceOp> gradients;
    // A 0-d all-reduce is a statistic (a loss), not a gradient.
    getOperation().walk([&](AllReduceOp op) {
      if (!isa<AsyncOp>(op->getParentOp()) && op.getType().getRank() != 0)
        gradients.push_back(op);
    });
    // Which results are the next state, while each step is as given: a
    // bucket's gather makes every member's result as near to each member's
    // argument.
    llvm::SetVector<func::FuncOp> steps;
    for (AllReduceOp gradient : gradients)
      if (auto fn = gradient->getParentOfType<func::FuncOp>())
        steps.insert(fn);
    for (func::FuncOp fn : steps)
      zero::markStateResults(fn);
    llvm::DenseMap<Operation *, bool> boundaryAllowed;
    llvm::SetVector<func::FuncOp> changed;
    // Functions whose updates keep nothing sharded between steps at stage 3.
    llvm::MapVector<Operation *, int64_t> heldWhole;
    int64_t gatherCount = 0;
    SplatCache splats;
    for (AllReduceOp gradient : gradients) {
      MeshOp mesh = lookupMesh(gradient, gradient.getMeshAttr());
      if (!mesh) // the verifier has said so already
        continue;
      DenseI64ArrayAttr shardAxes = gradient.getAxesAttr(), replicaAxes;
      std::string why = splitAxes(gradient, mesh, shardAxes, replicaAxes);
      int64_t groupSize = zero::getGroupSize(mesh, shardAxes);
      if (why.empty())
        why = whyReplicated(gradient, groupSize);
      FailureOr<WeightUpdate> update = failure();
      if (why.empty())
        update = findWeightUpdate(gradient, why);
      if (failed(update)) {
        mlir::emitRemark(gradient.getLoc(), "left replicated: ") << why;
        continue;
      }
      // A step function, or the training loop in its body.
      Operation *step = gradient->getParentOp();
      if (isa<scf::ForOp>(step))
        step = step->getParentOp();
      bool boundary = false;
      if (auto func = dyn_cast<func::FuncOp>(step);
          func && shardFunctionBoundary) {
        auto [it, inserted] = boundaryAllowed.try_emplace(func, false);
        if (inserted) {
          std::string why = whySignatureFixed(func, getOperation());
          if (!why.empty())
            mlir::emitRemark(func.getLoc(), "state not sharded at the "
                                            "function boundary: the function ")
                << why;
          it->second = why.empty();
        }
        boundary = it->second;
        if (boundary)
          changed.insert(func);
      }
      // Shards that a full reduction reads start and end on its blocks.
      bool reduced = llvm::any_of(update->ops, llvm::IsaPred<linalg::ReduceOp>);
      GroupPartition layout(
          gradient.getMeshAttr(), shardAxes,
          gradient.getType().getNumElements(), groupSize,
          reduced ? getReductionBlock(gradient.getType().getNumElements()) : 1);
      // The sharder erases the gradient's all-reduce.
      Operation *function = gradient->getParentOfType<FunctionOpInterface>();
      bool persistent = UpdateSharder(*update, layout, stage, boundary,
                                      gatherCount, splats, replicaAxes)
                            .run(position);
      if (stage == 3 && !persistent)
        ++heldWhole[function];
    }
    for (func::FuncOp func : changed)
      updateFunctionType(func);
    for (auto [function, count] : heldWhole)
      emitRemark(function->getLoc())
          << "stage 3 is stage 2 for " << count
          << " weight update(s) here: their weights enter and leave whole, "
             "being neither carried by an scf.for nor arguments sharded at "
             "the function boundary (shard-function-boundary)";
  }
};

} // namespace
