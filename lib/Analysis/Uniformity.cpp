//===- Uniformity.cpp - which values every rank holds alike ---------------===//
//
// A forward fixpoint over every function of the module: each value's axis
// set only grows, so the iteration ends after at most one round per axis bit
// and per join. Branches in a CFG make the blocks they decide, up to their
// immediate post-dominator, run under that branch's control; the
// post-dominator's arguments take the branch's variance (the divergence
// analysis of GPU compilers, with ranks for threads).
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Uniformity.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"

using namespace mlir;
using namespace zero;

//===----------------------------------------------------------------------===//
// Which ops are collectives, and what they do to variance
//===----------------------------------------------------------------------===//

namespace {

/// How a collective changes its input's variance along its group's axes.
enum class GroupEffect {
  /// Every member receives the same value (all-reduce, all-gather,
  /// broadcast): the result no longer differs along the group's axes.
  Combines,
  /// Each member receives its own part (reduce-scatter, a slice, a
  /// point-to-point exchange): the result differs along them.
  Splits,
};

/// A collective's mesh, its group's axes (none: all of the mesh's for
/// zero's ops; for shard's, an empty list is a group of one) and its effect.
struct GroupInfo {
  FlatSymbolRefAttr mesh;
  SmallVector<int64_t> axes;
  bool allAxes = false;
  GroupEffect effect;
  /// The tensor or buffer every member contributes (null for an index op).
  Value input;
};

std::optional<GroupInfo> getGroupInfo(Operation *op) {
  auto zeroAxes = [](std::optional<ArrayRef<int64_t>> axes, GroupInfo &info) {
    if (axes)
      info.axes.assign(axes->begin(), axes->end());
    else
      info.allAxes = true;
  };
  GroupInfo info;
  if (auto c = dyn_cast<CollectiveOpInterface>(op)) {
    info.mesh = c.getMeshAttr();
    DenseI64ArrayAttr axes = c.getAxesAttr();
    zeroAxes(axes ? std::optional(axes.asArrayRef()) : std::nullopt, info);
    info.effect = isa<AllReduceOp, AllGatherOp>(op) ? GroupEffect::Combines
                                                    : GroupEffect::Splits;
    info.input = c.getInput();
    return info;
  }
  if (auto r = dyn_cast<ReplicaIndexOp>(op)) {
    info.mesh = r.getMeshAttr();
    zeroAxes(r.getAxes(), info);
    info.effect = GroupEffect::Splits;
    return info;
  }
  if (isa<AllReduceBufferOp, ReduceScatterBufferOp, AllGatherBufferOp,
          AllToAllBufferOp>(op)) {
    info.mesh = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
    auto axes = op->getAttrOfType<DenseI64ArrayAttr>("axes");
    zeroAxes(axes ? std::optional(axes.asArrayRef()) : std::nullopt, info);
    info.effect = isa<ReduceScatterBufferOp, AllToAllBufferOp>(op)
                      ? GroupEffect::Splits
                      : GroupEffect::Combines;
    info.input = op->getOperand(0);
    return info;
  }
  if (op->getDialect() && op->getDialect()->getNamespace() == "shard") {
    info.mesh = op->getAttrOfType<FlatSymbolRefAttr>("grid");
    if (!info.mesh)
      return std::nullopt;
    if (isa<shard::ProcessLinearIndexOp>(op)) {
      info.allAxes = true;
      info.effect = GroupEffect::Splits;
      return info;
    }
    auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
    if (axes)
      for (int16_t axis : axes.asArrayRef())
        info.axes.push_back(axis);
    // An index op that names no axes names them all.
    if (isa<shard::ProcessMultiIndexOp, shard::NeighborsLinearIndicesOp>(op)) {
      info.allAxes = info.axes.empty();
      info.effect = GroupEffect::Splits;
      return info;
    }
    if (!isa<shard::AllGatherOp, shard::AllReduceOp, shard::AllSliceOp,
             shard::AllToAllOp, shard::BroadcastOp, shard::GatherOp,
             shard::RecvOp, shard::ReduceOp, shard::ReduceScatterOp,
             shard::ScatterOp, shard::SendOp, shard::ShiftOp>(op))
      return std::nullopt;
    info.effect =
        isa<shard::AllGatherOp, shard::AllReduceOp, shard::BroadcastOp>(op)
            ? GroupEffect::Combines
            : GroupEffect::Splits;
    info.input = op->getNumOperands() ? op->getOperand(0) : Value();
    return info;
  }
  return std::nullopt;
}

/// Does `op` reduce its input across ranks (so that an argument reaching it
/// is a local gradient or this rank's data)?
bool isReducing(Operation *op) {
  return isa<AllReduceOp, ReduceScatterOp, AllReduceBufferOp,
             ReduceScatterBufferOp, shard::AllReduceOp, shard::ReduceScatterOp,
             shard::ReduceOp>(op);
}

} // namespace

std::string zero::formatLocation(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto file = loc->findInstanceOf<FileLineColLoc>())
    os << file.getFilename().getValue() << ":" << file.getLine() << ":"
       << file.getColumn();
  else
    loc.print(os);
  return text;
}

bool zero::isRankCollective(Operation *op) {
  // A shard slice only selects; the index ops have no input.
  if (isa<ShardSliceOp>(op))
    return false;
  std::optional<GroupInfo> info = getGroupInfo(op);
  return info && info->input;
}

//===----------------------------------------------------------------------===//
// The analysis
//===----------------------------------------------------------------------===//

struct Uniformity::Impl {
  explicit Impl(ModuleOp module);

  // Axis bits.
  void collectMeshes();
  AxisSet getGroupAxes(const GroupInfo &info) const;
  AxisSet getMeshAxes(FlatSymbolRefAttr mesh) const;

  // Facts.
  AxisSet axesOf(Value value) const {
    auto it = causes.find(value);
    return it == causes.end() ? 0 : it->second.axes;
  }
  void add(Value to, AxisSet axes, Value from, StringRef source = {});
  void flow(Value to, Value from) { add(to, axesOf(from), from); }
  /// A write of a value with `axes`, coming from `from`, to memory in `fn`.
  void addToMemory(func::FuncOp fn, AxisSet axes, Value from);

  // Transfer.
  void seedArguments(func::FuncOp fn);
  void visit(Operation *op);
  void visitGeneric(Operation *op);
  void visitCall(func::CallOp call);
  void visitDivergence(Region &region);
  AxisSet getLoopBoundsAxes(Operation *op, Value &varying) const;

  /// The control of the block itself (a branch it lies under in its
  /// region), without its parents'.
  std::optional<VaryingControl> getBlockControl(Block *block) const;
  /// The varying control that an op with regions imposes on them.
  std::optional<VaryingControl> getRegionControl(Operation *op) const;

  ModuleOp module;
  llvm::StringMap<std::pair<unsigned, SmallVector<int64_t>>> meshes;
  AxisSet everyAxis = 0;
  DenseMap<Value, VarianceCause> causes;
  /// Blocks of a CFG under a branch that differs between ranks.
  DenseMap<Block *, VaryingControl> divergent;
  /// Per function: the axes of values written to memory (one value for all
  /// of memory), and where they came from.
  DenseMap<Operation *, std::pair<AxisSet, Value>> memory;
  DenseMap<Operation *, SmallVector<func::CallOp>> callSites;
  DenseMap<Operation *, std::unique_ptr<PostDominanceInfo>> postDominance;
  SymbolTable symbols;
  bool changed = false;
};

Uniformity::Impl::Impl(ModuleOp module) : module(module), symbols(module) {
  collectMeshes();
  module.walk([&](func::CallOp call) {
    if (auto callee = symbols.lookup<func::FuncOp>(call.getCallee()))
      callSites[callee].push_back(call);
  });
  SmallVector<func::FuncOp> functions;
  module.walk([&](func::FuncOp fn) {
    if (fn.isDeclaration())
      return;
    functions.push_back(fn);
    postDominance[fn] = std::make_unique<PostDominanceInfo>(fn);
    seedArguments(fn);
  });
  do {
    changed = false;
    for (func::FuncOp fn : functions) {
      fn.walk<WalkOrder::PreOrder>([&](Operation *op) {
        visit(op);
        for (Region &region : op->getRegions())
          if (!region.hasOneBlock() && !region.empty())
            visitDivergence(region);
      });
    }
  } while (changed);
}

void Uniformity::Impl::collectMeshes() {
  unsigned next = 0;
  module.walk([&](Operation *op) {
    SmallVector<int64_t> shape;
    StringAttr name;
    if (auto mesh = dyn_cast<MeshOp>(op)) {
      name = mesh.getSymNameAttr();
      shape.assign(mesh.getShape().begin(), mesh.getShape().end());
    } else if (auto grid = dyn_cast<shard::GridOp>(op)) {
      name = grid.getSymNameAttr();
      shape.assign(grid.getShape().begin(), grid.getShape().end());
    } else {
      return;
    }
    meshes[name.getValue()] = {next, shape};
    next += shape.size();
  });
  for (auto &entry : meshes)
    everyAxis |= getMeshAxes(
        FlatSymbolRefAttr::get(module.getContext(), entry.getKey()));
}

AxisSet Uniformity::Impl::getMeshAxes(FlatSymbolRefAttr mesh) const {
  GroupInfo info;
  info.mesh = mesh;
  info.allAxes = true;
  return getGroupAxes(info);
}

AxisSet Uniformity::Impl::getGroupAxes(const GroupInfo &info) const {
  auto it = info.mesh ? meshes.find(info.mesh.getValue()) : meshes.end();
  // A mesh out of sight: every rank may differ.
  if (it == meshes.end())
    return everyAxis ? everyAxis : 1;
  auto &[first, shape] = it->second;
  SmallVector<int64_t> axes = info.axes;
  if (info.allAxes)
    axes = llvm::to_vector(llvm::seq<int64_t>(shape.size()));
  AxisSet set = 0;
  for (int64_t axis : axes) {
    // Ranks never differ along an axis of one rank (or a dynamic one, which
    // a verifier rejects elsewhere: count it).
    if (axis < 0 || axis >= static_cast<int64_t>(shape.size()) ||
        shape[axis] == 1)
      continue;
    set |= AxisSet(1) << std::min<unsigned>(first + axis, 63);
  }
  return set;
}

void Uniformity::Impl::add(Value to, AxisSet axes, Value from,
                           StringRef source) {
  if (!axes)
    return;
  VarianceCause &cause = causes[to];
  if ((cause.axes | axes) == cause.axes)
    return;
  if (!cause.axes) {
    cause.from = from;
    cause.source = source.str();
  }
  cause.axes |= axes;
  changed = true;
}

/// Calls `f` on each value that a terminator of one of `op`'s regions passes
/// on (yields, forwards, returns).
static void forEachTerminatorOperand(Operation *op,
                                     function_ref<void(Value)> f) {
  for (Region &region : op->getRegions())
    for (Block &block : region)
      if (!block.empty() && block.back().hasTrait<OpTrait::IsTerminator>())
        for (Value value : block.back().getOperands())
          f(value);
}

/// The argument of `fn` that `input`, a reduction's input, is itself: the
/// argument seen through ops that only change its type, shape or place (a
/// cast, a reshape, a widening or narrowing, a padding, an insertion into a
/// bucket). Such an argument is what is reduced: a local gradient.
static std::optional<unsigned> getReducedArgument(func::FuncOp fn,
                                                  Value input) {
  SmallVector<Value> worklist{input};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == &fn.getBody().front())
        return arg.getArgNumber();
      continue;
    }
    Operation *producer = value.getDefiningOp();
    if (isa<tensor::CastOp, tensor::CollapseShapeOp, tensor::ExpandShapeOp,
            tensor::ReshapeOp, tensor::BitcastOp, tensor::PadOp, arith::ExtFOp,
            arith::TruncFOp, arith::BitcastOp>(producer))
      worklist.push_back(producer->getOperand(0));
    else if (auto insert = dyn_cast<tensor::InsertSliceOp>(producer))
      worklist.append({insert.getSource(), insert.getDest()});
    else if (auto concat = dyn_cast<tensor::ConcatOp>(producer))
      llvm::append_range(worklist, concat.getInputs());
  }
  return std::nullopt;
}

/// The arguments of `fn` that reach the input of a collective that reduces
/// across ranks, not through the result of one.
/// `direct` gets those that are a reduction's input themselves (see
/// getReducedArgument).
static llvm::SmallDenseSet<unsigned>
getArgumentsReachingReductions(func::FuncOp fn,
                               DenseMap<unsigned, Operation *> &reached,
                               DenseMap<unsigned, Operation *> &direct) {
  llvm::SmallDenseSet<unsigned> found;
  SmallVector<std::pair<Value, Operation *>> worklist;
  fn.walk([&](Operation *op) {
    if (!isReducing(op))
      return;
    worklist.push_back({op->getOperand(0), op});
    if (std::optional<unsigned> arg = getReducedArgument(fn, op->getOperand(0)))
      direct.try_emplace(*arg, op);
  });
  DenseSet<Value> seen;
  auto pushAll = [&](auto values, Operation *reduction) {
    for (Value v : values)
      worklist.push_back({v, reduction});
  };
  Block *entry = &fn.getBody().front();
  while (!worklist.empty()) {
    auto [value, reduction] = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    if (auto arg = dyn_cast<BlockArgument>(value)) {
      if (arg.getOwner() == entry) {
        found.insert(arg.getArgNumber());
        reached.try_emplace(arg.getArgNumber(), reduction);
        continue;
      }
      Operation *parent = arg.getOwner()->getParentOp();
      pushAll(parent->getOperands(), reduction);
      forEachTerminatorOperand(parent, [&](Value v) {
        worklist.push_back({v, reduction});
      });
      // Branches into this block forward their operands to it.
      for (Block *pred : arg.getOwner()->getPredecessors())
        pushAll(pred->getTerminator()->getOperands(), reduction);
      continue;
    }
    Operation *producer = value.getDefiningOp();
    // What crossed a combining collective is the same on every rank.
    if (auto info = getGroupInfo(producer);
        info && info->effect == GroupEffect::Combines)
      continue;
    pushAll(producer->getOperands(), reduction);
    forEachTerminatorOperand(producer, [&](Value v) {
      worklist.push_back({v, reduction});
    });
  }
  return found;
}

/// Pushes the values that `use` carries its value into along a data path:
/// the user's results, a yielded value's result and loop argument, a
/// forwarded operand's block argument. Not a branch's condition or a loop's
/// bound (control, not data), nor a collective's result. Sets `returned`
/// to the index of a function result the use returns.
static void pushDataSuccessors(OpOperand &use, SmallVectorImpl<Value> &next,
                               std::optional<unsigned> &returned) {
  Operation *user = use.getOwner();
  unsigned index = use.getOperandNumber();
  if (getGroupInfo(user))
    return;
  if (isa<func::ReturnOp>(user)) {
    returned = index;
    return;
  }
  if (isa<scf::IfOp>(user))
    return;
  if (auto loop = dyn_cast<scf::ForOp>(user)) {
    if (index >= 3) {
      next.push_back(loop.getRegionIterArgs()[index - 3]);
      next.push_back(loop.getResult(index - 3));
    }
    return;
  }
  if (auto branch = dyn_cast<BranchOpInterface>(user)) {
    if (std::optional<BlockArgument> arg =
            branch.getSuccessorBlockArgument(index))
      next.push_back(*arg);
    return;
  }
  if (user->hasTrait<OpTrait::IsTerminator>()) {
    Operation *parent = user->getParentOp();
    if (auto loop = dyn_cast<scf::ForOp>(parent))
      next.push_back(loop.getRegionIterArgs()[index]);
    if (auto loop = dyn_cast<scf::WhileOp>(parent)) {
      // The condition's forwarded values, or the body's yield.
      if (isa<scf::ConditionOp>(user)) {
        if (index == 0)
          return;
        next.push_back(loop.getAfterArguments()[index - 1]);
        next.push_back(loop.getResult(index - 1));
      } else {
        next.push_back(loop.getBeforeArguments()[index]);
      }
      return;
    }
    if (index < parent->getNumResults())
      next.push_back(parent->getResult(index));
    return;
  }
  llvm::append_range(next, user->getResults());
}

/// The results of `fn` that `arg` reaches along a data path that crosses no
/// collective and no branch's condition.
static llvm::SmallDenseSet<unsigned> getDataReachedResults(BlockArgument arg) {
  llvm::SmallDenseSet<unsigned> reached;
  SmallVector<Value> worklist{arg};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (OpOperand &use : value.getUses()) {
      std::optional<unsigned> returned;
      pushDataSuccessors(use, worklist, returned);
      if (returned)
        reached.insert(*returned);
    }
  }
  return reached;
}

void Uniformity::Impl::seedArguments(func::FuncOp fn) {
  // A private function that is called takes its arguments from its callers.
  if (fn.isPrivate() && callSites.count(fn))
    return;
  DenseMap<unsigned, Operation *> reached;
  DenseMap<unsigned, Operation *> direct;
  llvm::SmallDenseSet<unsigned> reaching =
      getArgumentsReachingReductions(fn, reached, direct);
  // State: an argument paired with the result that is its next value,
  // which it reaches as data (not only through a collective, nor only as a
  // branch's condition: a gradient that decides a skip is no weight).
  // Only an argument that reaches a reduction, and not as it is, needs it.
  llvm::SmallDenseSet<unsigned> state;
  for (auto [result, arg] : llvm::enumerate(findStateResults(fn)))
    if (arg && reaching.contains(*arg) && !direct.count(*arg) &&
        getDataReachedResults(fn.getArgument(*arg)).contains(result))
      state.insert(*arg);
  std::string name = "@" + fn.getSymName().str();
  for (BlockArgument arg : fn.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::string which = "argument " + std::to_string(i) + " of " + name;
    if (auto shard = fn.getArgAttrOfType<ShardAttr>(i, "zero.shard")) {
      GroupInfo info;
      info.mesh = shard.getMesh();
      info.axes.assign(shard.getAxes().begin(), shard.getAxes().end());
      add(arg, getGroupAxes(info), {},
          which + ", a shard (#zero.shard): each rank holds its own part");
      continue;
    }
    if (fn.getArgAttr(i, kPerRankAttrName)) {
      add(arg, everyAxis, {}, which + ", marked " + kPerRankAttrName.str());
      continue;
    }
    // State that a step returns is the same on every rank (data
    // parallelism keeps it so), unless the step reduces it as it is.
    if (fn.getArgAttr(i, kReplicatedAttrName) || !reaching.contains(i) ||
        state.contains(i))
      continue;
    auto at = [](Operation *op) {
      return op->getName().getStringRef().str() + " at " +
             formatLocation(op->getLoc());
    };
    std::string why =
        direct.count(i)
            ? "it is what the " + at(direct.lookup(i)) +
                  " reduces (a local gradient)"
            : "it flows into the " + at(reached.lookup(i)) +
                  " (a local gradient, or this rank's data) and is not "
                  "state " +
                  name + " returns";
    add(arg, everyAxis, {},
        which + ", which differs between ranks: " + why + "; mark it " +
            kReplicatedAttrName.str() + " if every rank holds it alike");
  }
}

AxisSet Uniformity::Impl::getLoopBoundsAxes(Operation *op,
                                            Value &varying) const {
  SmallVector<Value> bounds;
  if (auto loop = dyn_cast<scf::ForOp>(op))
    bounds = {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()};
  else if (auto loop = dyn_cast<scf::ForallOp>(op)) {
    llvm::append_range(bounds, loop.getDynamicLowerBound());
    llvm::append_range(bounds, loop.getDynamicUpperBound());
    llvm::append_range(bounds, loop.getDynamicStep());
  } else if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
    llvm::append_range(bounds, loop.getLowerBound());
    llvm::append_range(bounds, loop.getUpperBound());
    llvm::append_range(bounds, loop.getStep());
  }
  AxisSet axes = 0;
  for (Value bound : bounds)
    if (AxisSet a = axesOf(bound)) {
      if (!axes)
        varying = bound;
      axes |= a;
    }
  return axes;
}

void Uniformity::Impl::visit(Operation *op) {
  if (std::optional<GroupInfo> info = getGroupInfo(op)) {
    AxisSet group = getGroupAxes(*info);
    AxisSet in = info->input ? axesOf(info->input) : 0;
    StringRef name = op->getName().getStringRef();
    for (Value result : op->getResults()) {
      if (info->effect == GroupEffect::Combines) {
        // A group that spans its whole mesh spans the world.
        AxisSet left = group == getMeshAxes(info->mesh) ? 0 : in & ~group;
        add(result, left, info->input);
        continue;
      }
      add(result, in, info->input);
      add(result, group, {},
          "the result of the " + name.str() + " at " +
              formatLocation(op->getLoc()) +
              (info->input ? ", each rank's own part" : ", this rank's index"));
    }
    // A buffer collective that splits writes each rank's part to its
    // output: one value for all of memory.
    if (isa<ReduceScatterBufferOp>(op)) {
      Value output = op->getOperand(1);
      add(output, group, {},
          "the output of the " + name.str() + " at " +
              formatLocation(op->getLoc()) + ", each rank's own part");
      addToMemory(op->getParentOfType<func::FuncOp>(), group, output);
    }
    return;
  }
  if (auto branch = dyn_cast<scf::IfOp>(op)) {
    for (auto [i, result] : llvm::enumerate(branch.getResults())) {
      for (Region *region : {&branch.getThenRegion(), &branch.getElseRegion()})
        if (!region->empty())
          flow(result, region->front().getTerminator()->getOperand(i));
      flow(result, branch.getCondition());
    }
    return;
  }
  if (auto loop = dyn_cast<scf::ForOp>(op)) {
    Value bound;
    AxisSet trip = getLoopBoundsAxes(op, bound);
    flow(loop.getInductionVar(), loop.getLowerBound());
    flow(loop.getInductionVar(), loop.getStep());
    auto yielded = loop.getYieldedValues();
    for (auto [i, arg] : llvm::enumerate(loop.getRegionIterArgs())) {
      flow(arg, loop.getInitArgs()[i]);
      flow(arg, yielded[i]);
      add(arg, trip, bound);
      flow(loop.getResult(i), arg);
    }
    return;
  }
  if (auto loop = dyn_cast<scf::WhileOp>(op)) {
    scf::ConditionOp condition = loop.getConditionOp();
    Value cond = condition.getCondition();
    Operation *yield = loop.getAfterBody()->getTerminator();
    for (auto [i, arg] : llvm::enumerate(loop.getBeforeArguments())) {
      flow(arg, loop.getInits()[i]);
      flow(arg, yield->getOperand(i));
      flow(arg, cond);
    }
    for (auto [i, arg] : llvm::enumerate(loop.getAfterArguments())) {
      flow(arg, condition.getArgs()[i]);
      flow(arg, cond);
      flow(loop.getResult(i), arg);
    }
    return;
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    visitCall(call);
    return;
  }
  if (auto branch = dyn_cast<BranchOpInterface>(op)) {
    for (auto [i, successor] : llvm::enumerate(op->getSuccessors())) {
      OperandRange forwarded =
          branch.getSuccessorOperands(i).getForwardedOperands();
      unsigned produced =
          branch.getSuccessorOperands(i).getProducedOperandCount();
      for (auto [j, operand] : llvm::enumerate(forwarded))
        flow(successor->getArgument(produced + j), operand);
    }
    return;
  }
  visitGeneric(op);
}

void Uniformity::Impl::visitGeneric(Operation *op) {
  SetVector<Value> inputs;
  inputs.insert(op->operand_begin(), op->operand_end());
  if (op->getNumRegions()) {
    getUsedValuesDefinedAbove(op->getRegions(), inputs);
    forEachTerminatorOperand(op, [&](Value v) { inputs.insert(v); });
  }
  auto fn = op->getParentOfType<func::FuncOp>();
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  bool hasMemref =
      llvm::any_of(op->getOperandTypes(), llvm::IsaPred<MemRefType>);
  bool reads = effects ? effects.hasEffect<MemoryEffects::Read>()
                       : hasMemref && !isPure(op);
  bool writes = effects ? effects.hasEffect<MemoryEffects::Write>()
                        : hasMemref && !isPure(op);
  for (Value result : op->getResults()) {
    for (Value input : inputs)
      flow(result, input);
    if (reads)
      if (auto it = memory.find(fn); it != memory.end())
        add(result, it->second.first, it->second.second);
  }
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (BlockArgument arg : block.getArguments())
        for (Value input : op->getOperands())
          flow(arg, input);
  if (writes)
    for (Value input : inputs)
      addToMemory(fn, axesOf(input), input);
}

void Uniformity::Impl::addToMemory(func::FuncOp fn, AxisSet axes, Value from) {
  auto &[memoryAxes, memoryFrom] = memory[fn];
  if ((memoryAxes | axes) == memoryAxes)
    return;
  if (!memoryAxes)
    memoryFrom = from;
  memoryAxes |= axes;
  changed = true;
}

void Uniformity::Impl::visitCall(func::CallOp call) {
  auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
  if (!callee || callee.isDeclaration()) {
    for (Value result : call.getResults())
      add(result, everyAxis, {},
          "the result of a call to @" + call.getCallee().str() +
              ", whose body zero cannot see");
    return;
  }
  if (callee.isPrivate())
    for (auto [arg, operand] :
         llvm::zip(callee.getArguments(), call.getOperands()))
      flow(arg, operand);
  callee.walk([&](func::ReturnOp ret) {
    for (auto [result, operand] :
         llvm::zip(call.getResults(), ret.getOperands())) {
      flow(result, operand);
      // Which return a rank takes differs where its block's control does.
      if (std::optional<VaryingControl> control =
              getBlockControl(ret->getBlock()))
        flow(result, control->condition);
    }
  });
}

void Uniformity::Impl::visitDivergence(Region &region) {
  auto fn = region.getParentOp()->getParentOfType<func::FuncOp>();
  if (auto here = dyn_cast<func::FuncOp>(region.getParentOp()))
    fn = here;
  PostDominanceInfo &post = *postDominance[fn];
  for (Block &block : region) {
    Operation *terminator = block.getTerminator();
    if (!terminator || terminator->getNumSuccessors() < 2)
      continue;
    Value condition;
    if (auto branch = dyn_cast<cf::CondBranchOp>(terminator))
      condition = branch.getCondition();
    else if (auto branch = dyn_cast<cf::SwitchOp>(terminator))
      condition = branch.getFlag();
    else
      for (Value operand : terminator->getOperands())
        if (axesOf(operand)) {
          condition = operand;
          break;
        }
    AxisSet axes = condition ? axesOf(condition) : 0;
    if (!axes)
      continue;
    DominanceInfoNode *node = post.getNode(&block);
    Block *join =
        node && node->getIDom() ? node->getIDom()->getBlock() : nullptr;
    SmallVector<Block *> worklist(terminator->getSuccessors());
    while (!worklist.empty()) {
      Block *next = worklist.pop_back_val();
      if (next == join)
        continue;
      if (!divergent.try_emplace(next, VaryingControl{terminator, condition})
               .second)
        continue;
      changed = true;
      llvm::append_range(worklist, next->getSuccessors());
    }
    if (join)
      for (BlockArgument arg : join->getArguments())
        add(arg, axes, condition);
  }
}

std::optional<VaryingControl>
Uniformity::Impl::getBlockControl(Block *block) const {
  auto it = divergent.find(block);
  if (it == divergent.end())
    return std::nullopt;
  return it->second;
}

std::optional<VaryingControl>
Uniformity::Impl::getRegionControl(Operation *op) const {
  Value condition;
  if (auto branch = dyn_cast<scf::IfOp>(op))
    condition = branch.getCondition();
  else if (auto loop = dyn_cast<scf::WhileOp>(op))
    condition = loop.getConditionOp().getCondition();
  else if (auto sw = dyn_cast<scf::IndexSwitchOp>(op))
    condition = sw.getArg();
  else if (isa<scf::ForOp, scf::ForallOp, scf::ParallelOp>(op))
    getLoopBoundsAxes(op, condition);
  if (!condition || !axesOf(condition))
    return std::nullopt;
  return VaryingControl{op, condition};
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

Uniformity::Uniformity(ModuleOp module)
    : impl(std::make_unique<Impl>(module)) {}

Uniformity::~Uniformity() = default;

const VarianceCause *Uniformity::getCause(Value value) const {
  auto it = impl->causes.find(value);
  return it == impl->causes.end() ? nullptr : &it->second;
}

std::optional<VaryingControl>
Uniformity::getVaryingControl(Operation *op) const {
  DenseSet<Operation *> visited;
  Operation *at = op;
  while (at) {
    Block *block = at->getBlock();
    if (!block)
      return std::nullopt;
    if (auto control = impl->getBlockControl(block))
      return control;
    Operation *parent = block->getParentOp();
    if (!parent)
      return std::nullopt;
    if (auto fn = dyn_cast<func::FuncOp>(parent)) {
      // A function runs under the control of its calls.
      if (!visited.insert(fn).second)
        return std::nullopt;
      for (func::CallOp call : impl->callSites.lookup(fn))
        if (auto control = getVaryingControl(call))
          return control;
      return std::nullopt;
    }
    if (auto control = impl->getRegionControl(parent))
      return control;
    at = parent;
  }
  return std::nullopt;
}

Value Uniformity::getVaryingShapeSource(Value value) const {
  SmallVector<Value> worklist{value};
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value next = worklist.pop_back_val();
    if (!seen.insert(next).second)
      continue;
    auto shaped = dyn_cast<ShapedType>(next.getType());
    if (shaped && shaped.hasStaticShape())
      continue;
    if (!shaped) {
      if (impl->axesOf(next))
        return next;
      continue;
    }
    Operation *producer = next.getDefiningOp();
    if (!producer) {
      auto arg = cast<BlockArgument>(next);
      auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
      if (!fn || !arg.getOwner()->isEntryBlock()) {
        // A loop's carried value: its shape is as varied as its value.
        if (impl->axesOf(next))
          return next;
        continue;
      }
      // A function's argument has its callers' shapes; an entry's has
      // the same shape on every rank (data parallelism: equal batches,
      // equal gradients) unless it is marked per-rank.
      auto calls = impl->callSites.find(fn);
      if (fn.isPrivate() && calls != impl->callSites.end()) {
        for (func::CallOp call : calls->second)
          worklist.push_back(call.getOperand(arg.getArgNumber()));
        continue;
      }
      if (fn.getArgAttr(arg.getArgNumber(), kPerRankAttrName))
        return next;
      continue;
    }
    for (Value operand : producer->getOperands())
      if (operand.getType().isIntOrIndex() ||
          isa<ShapedType>(operand.getType()))
        worklist.push_back(operand);
  }
  return nullptr;
}

SmallVector<Value> Uniformity::getChain(Value value, unsigned limit) const {
  SmallVector<Value> chain;
  DenseSet<Value> seen;
  while (value && chain.size() < limit && seen.insert(value).second) {
    chain.push_back(value);
    const VarianceCause *cause = getCause(value);
    if (!cause)
      break;
    value = cause->from;
  }
  return chain;
}

std::string Uniformity::describeSource(Value source) const {
  const VarianceCause *cause = getCause(source);
  if (cause && !cause->source.empty())
    return cause->source;
  return "a value that differs between ranks";
}
