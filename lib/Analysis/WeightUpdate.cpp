//===- WeightUpdate.cpp - find the update code of a gradient --------------===//

#include "zero/Analysis/WeightUpdate.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace zero;

bool zero::isSplat(Value value) {
  if (value.getDefiningOp<tensor::SplatOp>() ||
      value.getDefiningOp<tensor::EmptyOp>())
    return true;
  if (auto fill = value.getDefiningOp<linalg::FillOp>())
    return !isa<ShapedType>(fill.getInputs()[0].getType());
  if (auto broadcast = value.getDefiningOp<linalg::BroadcastOp>())
    return broadcast.getInput().getType().getRank() == 0;
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.isSplat();
}

std::optional<ReductionCombiner>
zero::matchFullReduction(linalg::ReduceOp reduce) {
  if (reduce.getInputs().size() != 1 || reduce.getInits().size() != 1)
    return std::nullopt;
  auto input = dyn_cast<RankedTensorType>(reduce.getInputs()[0].getType());
  auto init = dyn_cast<RankedTensorType>(reduce.getInits()[0].getType());
  if (!input || !init || init.getRank() != 0 ||
      reduce.getDimensions().size() != static_cast<size_t>(input.getRank()))
    return std::nullopt;
  // The body is `yield (combine %x, %acc)`, in either operand order.
  Block &body = reduce.getCombiner().front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  Operation &combine = body.front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (combine.getNumOperands() != 2 || combine.getNumResults() != 1 ||
      yield.getValues() != combine.getResults())
    return std::nullopt;
  Value x = body.getArgument(0), acc = body.getArgument(1);
  Value lhs = combine.getOperand(0), rhs = combine.getOperand(1);
  if (!((lhs == x && rhs == acc) || (lhs == acc && rhs == x)))
    return std::nullopt;

  Type element = init.getElementType();
  Builder b(reduce.getContext());
  auto identity = [](TypedAttr attr) { return ReductionCombiner{attr}; };
  if (auto type = dyn_cast<FloatType>(element)) {
    const llvm::fltSemantics &semantics = type.getFloatSemantics();
    // -0.0, not +0.0: -0 + x == x for every x, +0 included.
    if (isa<arith::AddFOp>(combine))
      return identity(b.getFloatAttr(type, APFloat::getZero(semantics, true)));
    if (isa<arith::MulFOp>(combine))
      return identity(b.getFloatAttr(type, 1.0));
    if (isa<arith::MaximumFOp>(combine))
      return identity(b.getFloatAttr(type, APFloat::getInf(semantics, true)));
    if (isa<arith::MinimumFOp>(combine))
      return identity(b.getFloatAttr(type, APFloat::getInf(semantics, false)));
    return std::nullopt;
  }
  auto type = dyn_cast<IntegerType>(element);
  if (!type)
    return std::nullopt;
  unsigned width = type.getWidth();
  auto integer = [&](const APInt &value) {
    return identity(b.getIntegerAttr(type, value));
  };
  if (isa<arith::AddIOp, arith::OrIOp, arith::XOrIOp, arith::MaxUIOp>(combine))
    return integer(APInt::getZero(width));
  if (isa<arith::MulIOp>(combine))
    return integer(APInt(width, 1));
  if (isa<arith::AndIOp, arith::MinUIOp>(combine))
    return integer(APInt::getAllOnes(width));
  if (isa<arith::MaxSIOp>(combine))
    return integer(APInt::getSignedMinValue(width));
  if (isa<arith::MinSIOp>(combine))
    return integer(APInt::getSignedMaxValue(width));
  return std::nullopt;
}

namespace {

/// The shapes update code may have: the gradient's and its flattening.
struct UpdateShapes {
  SmallVector<int64_t> full;
  SmallVector<int64_t> flat;

  bool contains(Type type) const {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && containsShape(tensor.getShape());
  }
  bool containsShape(ArrayRef<int64_t> shape) const {
    return shape == ArrayRef<int64_t>(full) || shape == ArrayRef<int64_t>(flat);
  }
};

/// Whether `op` computes each element of its results from the same element
/// of its operands, all of one update shape, with no other effect.
bool isElementwiseUpdate(Operation *op, const UpdateShapes &shapes) {
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0 ||
      !isMemoryEffectFree(op) || op->getNumResults() == 0)
    return false;
  Type first = op->getResult(0).getType();
  auto sameShape = [&](Type type) {
    return shapes.contains(type) &&
           cast<RankedTensorType>(type).getShape() ==
               cast<RankedTensorType>(first).getShape();
  };
  return llvm::all_of(op->getOperandTypes(), sameShape) &&
         llvm::all_of(op->getResultTypes(), sameShape);
}

/// Why the linalg op `op` is not elementwise update code, or an empty string
/// when it is: pure tensor semantics, parallel iterators over one update
/// shape, each tensor operand read whole at the same element (an identity
/// map) or as one element shared by all (a 0-d tensor), and a body that does
/// not ask for the iteration index (which a shard renumbers).
std::string whyNotElementwise(linalg::LinalgOp op, const UpdateShapes &shapes) {
  if (!op.hasPureTensorSemantics())
    return "it does not have pure tensor semantics";
  if (op.getNumReductionLoops() != 0 ||
      op.getNumParallelLoops() != op.getNumLoops())
    return "not all its iterators are parallel";
  if (!shapes.containsShape(op.getStaticLoopRanges()))
    return "its iteration space is not the gradient's shape";
  for (OpOperand &operand : op->getOpOperands()) {
    auto tensor = dyn_cast<RankedTensorType>(operand.get().getType());
    if (!tensor)
      continue; // A scalar, the same for every element.
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (map.isIdentity() && shapes.contains(tensor))
      continue;
    if (tensor.getRank() == 0 && op.isDpsInput(&operand))
      continue;
    std::string why;
    llvm::raw_string_ostream os(why);
    os << "operand #" << operand.getOperandNumber() << " is read through "
       << map << ", neither the element itself nor a 0-d tensor";
    return why;
  }
  for (Operation &inner : op.getBlock()->without_terminator()) {
    if (isa<linalg::IndexOp>(inner))
      return "its body reads the iteration index";
    if (!isMemoryEffectFree(&inner))
      return "its body has side effects ('" +
             inner.getName().getStringRef().str() + "')";
  }
  return "";
}

/// Whether `op` flattens a full-shape value: the shard of both is the same.
bool isFlattening(Operation *op, const UpdateShapes &shapes) {
  auto collapse = dyn_cast<tensor::CollapseShapeOp>(op);
  return collapse &&
         collapse.getSrcType().getShape() == ArrayRef<int64_t>(shapes.full) &&
         collapse.getResultType().getShape() == ArrayRef<int64_t>(shapes.flat);
}

/// Whether `op` is a full reduction of its input (`use`) that can run as
/// partial reductions plus an all-reduce.
bool isFullReductionOf(Operation *op, OpOperand &use) {
  auto reduce = dyn_cast<linalg::ReduceOp>(op);
  return reduce && use.getOperandNumber() == 0 && matchFullReduction(reduce);
}

/// Why `op` is not code on full-shape values that the update may take in
/// (elementwise ops in arith, math or linalg form, and flattenings), or an
/// empty string when it is.
std::string whyNotShardable(Operation *op, const UpdateShapes &shapes) {
  if (isElementwiseUpdate(op, shapes) || isFlattening(op, shapes))
    return "";
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return whyNotElementwise(linalgOp, shapes);
  return "it is not elementwise update code";
}

bool isShardableProducer(Operation *op, const UpdateShapes &shapes) {
  return whyNotShardable(op, shapes).empty();
}

/// `ops` ordered so that each comes after the ops of the set it reads. Block
/// order would do too, but asking it (isBeforeInBlock) after the previous
/// gradient's rewrite renumbers the whole block: quadratic in a program with
/// thousands of parameters.
SmallVector<Operation *>
sortByDependence(const llvm::SetVector<Operation *> &ops) {
  SmallVector<Operation *> sorted;
  llvm::SmallPtrSet<Operation *, 32> done;
  // Iterative post-order DFS over operands inside the set.
  for (Operation *root : ops) {
    if (done.contains(root))
      continue;
    SmallVector<std::pair<Operation *, unsigned>> stack{{root, 0}};
    done.insert(root);
    while (!stack.empty()) {
      auto &[op, next] = stack.back();
      if (next < op->getNumOperands()) {
        Operation *producer = op->getOperand(next++).getDefiningOp();
        if (producer && ops.contains(producer) && done.insert(producer).second)
          stack.push_back({producer, 0});
        continue;
      }
      sorted.push_back(op);
      stack.pop_back();
    }
  }
  return sorted;
}

} // namespace

FailureOr<WeightUpdate> zero::findWeightUpdate(AllReduceOp gradient,
                                               std::string &whyNot) {
  llvm::raw_string_ostream why(whyNot);
  WeightUpdate update;
  update.gradient = gradient;
  Block *block = gradient->getBlock();
  RankedTensorType type = gradient.getType();
  UpdateShapes shapes{llvm::to_vector(type.getShape()),
                      {type.getNumElements()}};

  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist{gradient.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != block) {
        why << "the gradient reaches '" << user->getName()
            << "' in another block";
        return failure();
      }
      if (user->hasTrait<OpTrait::IsTerminator>()) {
        update.outputs.push_back(&use);
        continue;
      }
      // A full reduction's 0-d result is replicated again after the
      // all-reduce of the partials: the update ends there.
      if (isFullReductionOf(user, use)) {
        ops.insert(user);
        continue;
      }
      if (isa<linalg::ReduceOp>(user)) {
        why << "the gradient reaches a '" << user->getName()
            << "' that is not a full reduction with one associative "
               "combiner of known identity";
        return failure();
      }
      if (std::string notShardable = whyNotShardable(user, shapes);
          !notShardable.empty()) {
        why << "the gradient is used by '" << user->getName()
            << "': " << notShardable;
        return failure();
      }
      if (ops.insert(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  if (ops.empty()) {
    why << "no update code uses the gradient";
    return failure();
  }

  // Producers that only the update uses (the momentum decay m * beta, which
  // does not depend on the gradient) belong to it too, so that all update
  // work runs on the shard.
  auto onlyFeeds = [&](Operation *producer,
                       const llvm::SetVector<Operation *> &consumers) {
    return producer && producer->getBlock() == block &&
           isShardableProducer(producer, shapes) &&
           llvm::all_of(producer->getUsers(), [&](Operation *user) {
             return consumers.contains(user);
           });
  };
  auto growBackward = [&](llvm::SetVector<Operation *> &set) {
    for (bool grew = true; grew;) {
      grew = false;
      for (unsigned i = 0; i < set.size(); ++i)
        for (Value operand : set[i]->getOperands()) {
          Operation *producer = operand.getDefiningOp();
          if (!set.contains(producer) && onlyFeeds(producer, set))
            grew |= set.insert(producer);
        }
    }
  };
  growBackward(ops);

  // What the update reads from outside: weights, state, constants.
  auto readsFromOutside = [&](const llvm::SetVector<Operation *> &set) {
    llvm::SetVector<Value> inputs;
    for (Operation *op : set)
      for (Value operand : op->getOperands())
        if (operand != gradient.getResult() &&
            !set.contains(operand.getDefiningOp()) && !isSplat(operand) &&
            shapes.contains(operand.getType()))
          inputs.insert(operand);
    return inputs;
  };
  llvm::SetVector<Value> inputs = readsFromOutside(ops);

  // Full reductions of what the update reads anyway (||w|| in LAMB's trust
  // ratio) shard with it: their input is sliced for the update already. They
  // are found from the inputs' users, through elementwise code, so that the
  // search costs the size of the update, not of the block.
  llvm::SetVector<Operation *> reached;
  SmallVector<Value> frontier(inputs.begin(), inputs.end());
  while (!frontier.empty()) {
    Value value = frontier.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != block || ops.contains(user) ||
          reached.contains(user))
        continue;
      auto reduce = dyn_cast<linalg::ReduceOp>(user);
      if (reduce && isFullReductionOf(reduce, use)) {
        reached.insert(reduce);
        llvm::SetVector<Operation *> chain;
        chain.insert(reduce);
        growBackward(chain);
        llvm::SetVector<Value> leaves = readsFromOutside(chain);
        if (!leaves.empty() && llvm::all_of(leaves, [&](Value leaf) {
              return inputs.contains(leaf);
            }))
          ops.insert(chain.begin(), chain.end());
        continue;
      }
      if (isShardableProducer(user, shapes) && reached.insert(user))
        llvm::append_range(frontier, user->getResults());
    }
  }

  update.inputs = readsFromOutside(ops);
  update.ops = sortByDependence(ops);
  return update;
}

bool zero::isUpdateStep(Operation *op) {
  if (op->hasTrait<OpTrait::Elementwise>() ||
      isa<tensor::TensorDialect>(op->getDialect()))
    return true;
  if (isa<ZeroDialect>(op->getDialect()))
    return true;
  if (auto reduce = dyn_cast<linalg::ReduceOp>(op))
    return matchFullReduction(reduce).has_value();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
  return false;
}

Type zero::truncatedElement(OpOperand *reader) {
  Operation *op = reader->getOwner();
  if (auto trunc = dyn_cast<arith::TruncFOp>(op))
    return getElementTypeOrSelf(trunc.getType());
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 1 || linalgOp.getNumDpsInits() != 1 ||
      !linalgOp.isDpsInput(reader) ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
      !llvm::all_of(linalgOp.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return {};
  Block *body = linalgOp.getBlock();
  auto trunc = dyn_cast<arith::TruncFOp>(&body->front());
  if (!trunc || trunc.getIn() != body->getArgument(0) ||
      body->getTerminator()->getOperands() != trunc->getResults())
    return {};
  return trunc.getType();
}

llvm::SetVector<Operation *> zero::getUpdateOps(Value state) {
  llvm::SetVector<Operation *> update;
  SmallVector<Value> work = {state};
  while (!work.empty()) {
    Value value = work.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if ((user->hasTrait<OpTrait::ReturnLike>() &&
           isa<func::FuncOp>(user->getParentOp())) ||
          !isUpdateStep(user) || !update.insert(user))
        continue;
      llvm::append_range(work, user->getResults());
    }
  }
  return update;
}
