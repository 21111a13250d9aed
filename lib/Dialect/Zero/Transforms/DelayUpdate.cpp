//===- DelayUpdate.cpp - a step's update from the previous step's data ----===//
//
// See Passes.td (zero-delay-update).
//
//===----------------------------------------------------------------------===//

#include "Boundary.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"

namespace zero {
#define GEN_PASS_DEF_ZERODELAYUPDATE
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// Whether `type` is data of the step: a tensor of rank 1 or more, where a
/// scalar or a 0-d tensor is a hyperparameter (a learning rate, a step
/// count).
bool isDataType(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() > 0;
}

/// Whether `value` is computed from the step's data: what flows into it
/// reaches an argument of `fn` that is data and not state (a batch, a
/// gradient given as an argument). A value made from state and
/// hyperparameters alone (a bias correction from the step count) is not.
bool isFromStepData(Value value, func::FuncOp fn,
                    const llvm::SmallDenseSet<unsigned> &state) {
  llvm::SmallPtrSet<Value, 32> seen;
  SmallVector<Value> work = {value};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == &fn.getBody().front()) {
        if (!state.contains(arg.getArgNumber()) && isDataType(arg.getType()))
          return true;
        continue;
      }
      // A region's argument: what its op takes.
      llvm::append_range(work, arg.getOwner()->getParentOp()->getOperands());
      continue;
    }
    Operation *def = v.getDefiningOp();
    llvm::append_range(work, def->getOperands());
    // Values a region uses from outside flow into its results too.
    def->walk([&](Operation *inner) {
      if (inner != def)
        llvm::append_range(work, inner->getOperands());
    });
  }
  return false;
}

/// Moves `update`, with what it reads from the body (hyperparameters, not
/// the step's data, which it no longer reads), to the start of `fn`'s body
/// in the order they were: it can run first, beside the forward and
/// backward passes (on the host's queue, under offload), instead of after
/// them.
void hoistUpdate(func::FuncOp fn, const llvm::SetVector<Operation *> &update) {
  Block &body = fn.getBody().front();
  llvm::SmallPtrSet<Operation *, 32> hoisted;
  SmallVector<Operation *> work(update.begin(), update.end());
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    if (!hoisted.insert(op).second)
      continue;
    auto visit = [&](Value operand) {
      if (Operation *def = operand.getDefiningOp())
        if (Operation *top = body.findAncestorOpInBlock(*def))
          work.push_back(top);
    };
    for (Value operand : op->getOperands())
      visit(operand);
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands())
        visit(operand);
    });
  }
  Operation *anchor = nullptr;
  SmallVector<Operation *> order;
  for (Operation &op : body.without_terminator()) {
    if (!hoisted.contains(&op))
      anchor = anchor ? anchor : &op;
    else if (anchor)
      order.push_back(&op);
  }
  for (Operation *op : order)
    op->moveBefore(anchor);
}

/// Whether `op` only moves or reshapes the elements of its first operand:
/// a gather, a shard's slice, a reshape, a slice, a pad.
bool movesElements(Operation *op) {
  return isa<AllGatherOp, ShardSliceOp, tensor::CollapseShapeOp,
             tensor::ExpandShapeOp, tensor::ExtractSliceOp, tensor::PadOp>(op);
}

/// `value` before the ops that only move its elements (movesElements); with
/// `user`, the op of that chain that reads what it returns.
Value beforeMoves(Value value, Operation **user = nullptr) {
  while (Operation *def = value.getDefiningOp()) {
    if (!movesElements(def))
      break;
    if (user)
      *user = def;
    value = def->getOperand(0);
  }
  return value;
}

/// Whether `op` is a collective that makes more than it takes (a gather):
/// keeping its input from one step to the next keeps less.
bool gathers(Operation *op) {
  if (!isa<CollectiveOpInterface>(op) || op->getNumOperands() != 1 ||
      op->getNumResults() != 1)
    return false;
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  return in && out && in.hasStaticShape() && out.hasStaticShape() &&
         out.getNumElements() > in.getNumElements();
}

/// Whether `op` maps element to element through a region of its own: a
/// linalg op of parallel loops only, as `convert-elementwise-to-linalg`
/// makes of an elementwise op on tensors.
bool isElementwiseLinalg(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics() &&
         linalgOp.getNumLoops() == linalgOp.getNumParallelLoops();
}

/// Whether `op` may join the update from below: an update step all of
/// whose results only the update reads, with no region but an elementwise
/// linalg op's (the same step in linalg form: a scaled gradient, (1 - b1) g
/// and (1 - b2) g^2 of Adam), and no collective that reduces (whose result
/// is where the step's data arrives, smaller than what it takes) or any
/// other that does not gather.
bool joinsFromBelow(Operation *op, const llvm::SetVector<Operation *> &update) {
  if (!isUpdateStep(op) ||
      (op->getNumRegions() > 0 && !isElementwiseLinalg(op)) ||
      (isa<CollectiveOpInterface>(op) && !gathers(op)))
    return false;
  return llvm::all_of(op->getUsers(),
                      [&](Operation *user) { return update.contains(user); });
}

/// The update of `fn`'s `state` arguments: the ops that compute their next
/// values from them, and the ops before them that only they read, down to
/// the collectives that bring the step's data (a reduce-scatter's
/// gradient shard) and what else the update cannot take in.
llvm::SetVector<Operation *> findUpdate(func::FuncOp fn,
                                        ArrayRef<unsigned> state) {
  // The update steps that read the state, of which those whose results
  // reach the return through update steps (not a forward pass's use of a
  // weight, which leads into a matmul).
  llvm::SetVector<Operation *> reading;
  for (unsigned i : state) {
    llvm::SetVector<Operation *> ops = getUpdateOps(fn.getArgument(i));
    reading.insert(ops.begin(), ops.end());
  }
  Block &body = fn.getBody().front();
  llvm::SetVector<Operation *> update;
  for (Value result : body.getTerminator()->getOperands())
    if (Operation *def = result.getDefiningOp(); def && reading.contains(def))
      update.insert(def);
  for (size_t i = 0; i < update.size(); ++i)
    for (Value operand : update[i]->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && reading.contains(def))
        update.insert(def);
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < update.size(); ++i)
      for (Value operand : update[i]->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if (def && def->getBlock() == &body && !update.contains(def) &&
            !matchPattern(operand, m_Constant()) && joinsFromBelow(def, update))
          grew |= update.insert(def);
      }
  }
  return update;
}

/// The first op of `update` that reads what it computes from `delayed` and
/// whose result something outside the update reads (not the return), or
/// null: such a value would change meaning.
Operation *findLeak(const llvm::SetVector<Operation *> &update,
                    const llvm::SetVector<Value> &delayed) {
  llvm::SmallPtrSet<Value, 32> fromDelayed(delayed.begin(), delayed.end());
  for (Operation *op : update) {
    if (llvm::none_of(op->getOperands(),
                      [&](Value v) { return fromDelayed.contains(v); }))
      continue;
    for (Value result : op->getResults()) {
      fromDelayed.insert(result);
      for (Operation *user : result.getUsers())
        if (!update.contains(user) && !isa<func::ReturnOp>(user))
          return user;
    }
  }
  return nullptr;
}

/// The values `update` reads that the step computes from its data (its
/// reduced gradients, a clipping coefficient), in the order it reads them.
llvm::SetVector<Value> findDelayed(func::FuncOp fn,
                                   const llvm::SetVector<Operation *> &update,
                                   const llvm::SmallDenseSet<unsigned> &state) {
  llvm::SetVector<Value> delayed;
  for (Operation *op : update)
    for (Value operand : op->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if ((def && update.contains(def)) ||
          matchPattern(operand, m_Constant()) || delayed.contains(operand))
        continue;
      if (isFromStepData(operand, fn, state))
        delayed.insert(operand);
    }
  return delayed;
}

/// The one mesh `fn`'s collectives run on, null when none; failure when
/// several.
FailureOr<MeshOp> findMesh(func::FuncOp fn) {
  MeshOp mesh;
  WalkResult walk = fn.walk([&](CollectiveOpInterface op) {
    MeshOp own = op.lookupMesh();
    if (mesh && own && own != mesh)
      return WalkResult::interrupt();
    if (own)
      mesh = own;
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return mesh;
}

/// The layout of a value each rank holds its own of (null without a mesh).
Attribute perRankLayout(MeshOp mesh, RankedTensorType type) {
  return mesh ? getPerRankLayout(mesh, type) : Attribute();
}

/// Adds an argument of `type` to `fn` that starts at zero, with `layout`,
/// and a result `next` (its next value); returns the argument.
BlockArgument addStateStartingAtZero(func::FuncOp fn, RankedTensorType type,
                                     Attribute layout, Value next,
                                     func::ReturnOp ret) {
  Builder b(fn.getContext());
  unsigned index = fn.getNumArguments();
  NamedAttrList argAttrs;
  if (layout)
    argAttrs.set("zero.shard", layout);
  argAttrs.set(kStartsAtZeroAttrName, b.getUnitAttr());
  argAttrs.set(kDelayedAttrName, b.getUnitAttr());
  (void)fn.insertArgument(index, type, argAttrs.getDictionary(b.getContext()),
                          fn.getLoc());
  NamedAttrList resultAttrs;
  if (layout)
    resultAttrs.set("zero.shard", layout);
  resultAttrs.set(kStateOfAttrName, b.getI64IntegerAttr(index));
  (void)fn.insertResult(fn.getNumResults(), type,
                        resultAttrs.getDictionary(b.getContext()));
  ret.getOperandsMutable().append(next);
  return fn.getArgument(index);
}

struct ZeroDelayUpdatePass
    : public zero::impl::ZeroDelayUpdateBase<ZeroDelayUpdatePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    module.walk([&](func::FuncOp fn) {
      if (!fn.isExternal())
        delayFunction(fn, module);
    });
  }

  /// Why `fn` cannot take and return the delayed values, or "".
  static std::string whyNotAStep(func::FuncOp fn, ModuleOp module) {
    std::string why = whySignatureFixed(fn, module);
    if (why.empty())
      return why;
    return "it " + why +
           ", so it cannot take and return the delayed values as state";
  }

  void delayFunction(func::FuncOp fn, ModuleOp module) {
    auto leave = [&](Location loc, const Twine &why) {
      emitRemark(loc) << "zero-delay-update: @" << fn.getName()
                      << " left as it is: " << why;
    };
    if (std::string why = whyNotAStep(fn, module); !why.empty())
      return leave(fn.getLoc(), why);
    SmallVector<std::optional<unsigned>> stateOf = findStateResults(fn);
    // The model's state: not what starts at zero (an error-feedback
    // residual, which its exchange updates from this step's gradients).
    SmallVector<unsigned> stateList;
    for (std::optional<unsigned> arg : stateOf)
      if (arg && isa<RankedTensorType>(fn.getArgument(*arg).getType()) &&
          !fn.getArgAttr(*arg, kStartsAtZeroAttrName))
        stateList.push_back(*arg);
    if (stateList.empty())
      return leave(fn.getLoc(),
                   "no result is the next value of a tensor argument (state "
                   "carried by a loop is outside what it covers)");
    llvm::SmallDenseSet<unsigned> state(stateList.begin(), stateList.end());
    llvm::SetVector<Operation *> update = findUpdate(fn, stateList);
    Block &body = fn.getBody().front();
    for (Operation *op : update)
      if (op->getBlock() != &body)
        return leave(op->getLoc(), "'" + op->getName().getStringRef() +
                                       "' updates state inside a region");
    llvm::SetVector<Value> delayed = findDelayed(fn, update, state);
    if (delayed.empty())
      return leave(fn.getLoc(),
                   "its update reads nothing the step computes from its data");
    if (Operation *user = findLeak(update, delayed))
      return leave(user->getLoc(), "'" + user->getName().getStringRef() +
                                       "' reads what the update computes "
                                       "from the step's data");
    for (Value value : delayed) {
      auto tensor = dyn_cast<RankedTensorType>(value.getType());
      if (tensor ? tensor.hasStaticShape() : value.getType().isIntOrFloat())
        continue;
      std::string type;
      llvm::raw_string_ostream(type) << value.getType();
      return leave(value.getLoc(), "the update reads a value of type " + type +
                                       ", which it cannot keep as state");
    }
    FailureOr<MeshOp> mesh = findMesh(fn);
    if (failed(mesh))
      return leave(fn.getLoc(), "its collectives run on several meshes");
    // The pairs as given, before the new results make them less plain.
    markStateResults(fn);
    rewrite(fn, update, delayed, *mesh, stateOf, state);
    hoistUpdate(fn, update);
    emitRemark(fn.getLoc())
        << "zero-delay-update: @" << fn.getName() << " updates its state from "
        << delayed.size()
        << " value(s) of the step before (the first step updates nothing)";
  }

  /// Makes `value` the next value of a new state argument that starts at
  /// zero, flat (one row a rank of the layout; a scalar is one element).
  /// Returns what reads that argument as `value`'s type.
  static Value keepAsState(func::FuncOp fn, Value value, MeshOp mesh,
                           func::ReturnOp ret) {
    OpBuilder b(ret);
    Location loc = value.getLoc();
    auto tensor = dyn_cast<RankedTensorType>(value.getType());
    if (tensor && tensor.getRank() == 1)
      return addStateStartingAtZero(fn, tensor, perRankLayout(mesh, tensor),
                                    value, ret);
    Type element = tensor ? tensor.getElementType() : value.getType();
    int64_t elements = tensor ? tensor.getNumElements() : 1;
    auto flat = RankedTensorType::get({elements}, element);
    // All dimensions in one (none for a 0-d tensor).
    SmallVector<ReassociationIndices> all;
    if (tensor && tensor.getRank() > 0)
      all.push_back(llvm::to_vector(llvm::seq<int64_t>(0, tensor.getRank())));
    Value next =
        !tensor
            ? tensor::FromElementsOp::create(b, loc, flat, value).getResult()
        : tensor.getRank() == 0
            ? tensor::ExpandShapeOp::create(b, loc, flat, value, all)
                  .getResult()
            : tensor::CollapseShapeOp::create(b, loc, value, all).getResult();
    BlockArgument pending =
        addStateStartingAtZero(fn, flat, perRankLayout(mesh, flat), next, ret);
    b.setInsertionPointToStart(&fn.getBody().front());
    if (!tensor) {
      Value zero = arith::ConstantIndexOp::create(b, loc, 0);
      return tensor::ExtractOp::create(b, loc, pending, zero);
    }
    if (tensor.getRank() == 0)
      return tensor::CollapseShapeOp::create(b, loc, tensor, pending, all);
    return tensor::ExpandShapeOp::create(b, loc, tensor, pending, all);
  }

  /// Reads `delayed` in `update` from new state arguments that start at
  /// zero and returns this step's values as their next; keeps each result
  /// of the model's `state` at its argument until a flag, starting at zero
  /// and set by each step, says a step has run before.
  static void rewrite(func::FuncOp fn,
                      const llvm::SetVector<Operation *> &update,
                      const llvm::SetVector<Value> &delayed, MeshOp mesh,
                      ArrayRef<std::optional<unsigned>> stateOf,
                      const llvm::SmallDenseSet<unsigned> &state) {
    auto ret = cast<func::ReturnOp>(fn.getBody().front().getTerminator());
    OpBuilder b(fn.getContext());
    Location loc = fn.getLoc();
    SmallVector<Value> originalResults(ret.getOperands());
    for (Value value : delayed) {
      Value read = keepAsState(fn, value, mesh, ret);
      value.replaceUsesWithIf(read, [&](OpOperand &use) {
        return update.contains(use.getOwner());
      });
    }
    // The flag: 0 until a step has run, then 1.
    b.setInsertionPoint(ret);
    auto flagType = RankedTensorType::get({1}, b.getF32Type());
    Value one = arith::ConstantOp::create(
        b, loc, DenseElementsAttr::get(flagType, b.getF32FloatAttr(1)));
    BlockArgument flag = addStateStartingAtZero(
        fn, flagType, perRankLayout(mesh, flagType), one, ret);
    b.setInsertionPointToStart(&fn.getBody().front());
    Value zeroIndex = arith::ConstantIndexOp::create(b, loc, 0);
    Value flagValue = tensor::ExtractOp::create(b, loc, flag, zeroIndex);
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    Value applies = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE,
                                          flagValue, zero);
    // Each state result the update makes stays at its argument until then.
    // Where it cannot be kept inside the update, the select follows the
    // value's producer and stands for it everywhere: every reader (the
    // weight's update reading a new moment, the return) reads the kept
    // value, so that the producer's one reader is the select, which fuses
    // with it into one loop, instead of a loop of its own at the end.
    for (auto [index, arg] : llvm::enumerate(stateOf)) {
      Value next = originalResults[index];
      if (!arg || !state.contains(*arg) || !next.getDefiningOp())
        continue;
      if (keepInUpdate(next, fn.getArgument(*arg), applies))
        continue;
      b.setInsertionPointAfter(next.getDefiningOp());
      Value kept = select(b, applies, next, fn.getArgument(*arg));
      next.replaceAllUsesExcept(kept, kept.getDefiningOp());
    }
  }

  /// `applies ? now : before`, element by element.
  static Value select(OpBuilder &b, Value applies, Value now, Value before) {
    auto type = cast<RankedTensorType>(now.getType());
    Value cond = tensor::SplatOp::create(
        b, now.getLoc(), RankedTensorType::get(type.getShape(), b.getI1Type()),
        applies);
    return arith::SelectOp::create(b, now.getLoc(), cond, now, before);
  }

  /// The operand of a bucket's concatenation that `next` is gathered from:
  /// `next` is (a reshape of, or a 1-D prefix of a reshape of: a padded
  /// shard's weight) the slice [0, offset] [N, size] of the bucket's
  /// gather, reshaped to [N][chunk], and the operand is the one that fills
  /// [offset, offset + size) of the chunk. Null otherwise.
  static OpOperand *bucketMemberOf(Value next) {
    Value value = next;
    for (;;) {
      Operation *def = value.getDefiningOp();
      auto prefix = dyn_cast_or_null<tensor::ExtractSliceOp>(def);
      if (!isa_and_present<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(
              def) &&
          !(prefix && prefix.getSourceType().getRank() == 1 &&
            prefix.hasUnitStride() && prefix.hasZeroOffset()))
        break;
      value = def->getOperand(0);
    }
    auto slice = value.getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice || slice.getSourceType().getRank() != 2 ||
        !slice.hasUnitStride() || !slice.getSourceType().hasStaticShape())
      return nullptr;
    auto expand = slice.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    auto gather =
        expand ? expand.getSrc().getDefiningOp<AllGatherOp>() : AllGatherOp();
    auto concat = gather ? gather.getInput().getDefiningOp<tensor::ConcatOp>()
                         : tensor::ConcatOp();
    ArrayRef<int64_t> offsets = slice.getStaticOffsets(),
                      sizes = slice.getStaticSizes();
    int64_t ranks = slice.getSourceType().getDimSize(0);
    if (!concat || concat.getDim() != 0 || gather.getGatherDim() != 0 ||
        expand.getSrcType().getRank() != 1 ||
        concat.getResultType().getRank() != 1 ||
        slice.getSourceType().getDimSize(1) !=
            concat.getResultType().getDimSize(0) ||
        ShapedType::isDynamic(offsets[1]) || ShapedType::isDynamic(sizes[1]) ||
        offsets[0] != 0 || sizes[0] != ranks)
      return nullptr;
    int64_t at = 0;
    for (OpOperand &operand : concat->getOpOperands()) {
      int64_t size =
          cast<RankedTensorType>(operand.get().getType()).getDimSize(0);
      if (at == offsets[1] && size == sizes[1])
        return &operand;
      at += size;
    }
    return nullptr;
  }

  /// Keeps the state result `next` (of argument `state`) at the old value
  /// where the update makes it, when it can: at the elementwise op (or its
  /// linalg form) that computes the new value, element for element, from a
  /// view of `state` (a shard of the weight or of a moment;
  /// oldAtItsElements), before the gather and reshapes that carry it to
  /// the result. There the select joins the update's loop over the shard,
  /// not a pass of its own over the whole. Returns whether it did.
  static bool keepInUpdate(Value next, BlockArgument state, Value applies) {
    Operation *chainUser = nullptr;
    Value now = beforeMoves(next, &chainUser);
    // A weight gathered in a bucket: its shard is one operand of the
    // bucket's concatenation.
    if (OpOperand *member = bucketMemberOf(next)) {
      chainUser = member->getOwner();
      now = member->get();
    }
    Operation *producer = now.getDefiningOp();
    if (!chainUser || !producer)
      return false;
    Value old = oldAtItsElements(now, state);
    if (!old)
      return false;
    OpBuilder b(producer->getContext());
    b.setInsertionPointAfter(producer);
    Value kept = select(b, applies, now, old);
    now.replaceUsesWithIf(
        kept, [&](OpOperand &use) { return use.getOwner() == chainUser; });
    return true;
  }

  /// A view of `state` of `now`'s type from which `now` is computed element
  /// for element: an operand of the elementwise op (or its linalg form)
  /// that makes it, or of those that make its operands of its type (the
  /// old moment that Adam's new one is made from through b1 * m): the old
  /// value at the new one's elements. Null where there is none.
  static Value oldAtItsElements(Value now, BlockArgument state) {
    SmallVector<Value> work = {now};
    llvm::SmallPtrSet<Value, 16> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      Operation *op = value.getDefiningOp();
      if (!op || !seen.insert(value).second || op->getNumResults() != 1 ||
          !(op->hasTrait<OpTrait::Elementwise>() || isElementwiseLinalg(op)))
        continue;
      // In linalg form, values meet element for element only where the op
      // writes its result and reads them through identity maps.
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      auto atItsElement = [&](OpOperand &use) {
        return !linalgOp || linalgOp.getMatchingIndexingMap(&use).isIdentity();
      };
      if (linalgOp && !atItsElement(*linalgOp.getDpsInitOperand(0)))
        continue;
      for (OpOperand &use : op->getOpOperands()) {
        Value operand = use.get();
        if (operand.getType() != now.getType() || !atItsElement(use))
          continue;
        if (beforeMoves(operand) == state)
          return operand;
        work.push_back(operand);
      }
    }
    return {};
  }
};

} // namespace
