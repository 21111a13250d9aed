//===- OffloadState.cpp - which state lives in host memory ----------------===//
//
// See Passes.td (zero-offload-state).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

namespace zero {
#define GEN_PASS_DEF_ZEROOFFLOADSTATE
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

llvm::raw_ostream &zero::operator<<(llvm::raw_ostream &os,
                                    const DeviceShare &value) {
  if (value.automatic)
    return os << "auto";
  return os << value.share;
}

bool llvm::cl::parser<DeviceShare>::parse(Option &option, StringRef argName,
                                          StringRef arg, DeviceShare &value) {
  if (arg == "auto") {
    value = {/*automatic=*/true, 0};
    return false;
  }
  double share;
  if (arg.getAsDouble(share) || !(share >= 0 && share <= 1))
    return option.error("expected 'auto' or a share from 0 to 1, got '" + arg +
                        "'");
  value = {/*automatic=*/false, share};
  return false;
}

void llvm::cl::parser<DeviceShare>::printOptionDiff(
    const Option &option, const DeviceShare &value,
    const OptionValue<DeviceShare> &, size_t globalWidth) const {
  printOptionName(option, globalWidth);
  outs() << "= " << value << "\n";
}

void llvm::cl::parser<DeviceShare>::anchor() {}

namespace {

/// Whether `op` sums what it reads down to fewer dimensions, rather than
/// contracting it with something else as a matmul or a convolution does: a
/// linalg op with a reduction loop whose inputs each index every loop, or
/// only the loops its output keeps (the sum's initial value).
bool sumsWhatItReads(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumReductionLoops() == 0 ||
      linalgOp.getNumDpsInits() != 1)
    return false;
  unsigned loops = linalgOp.getNumLoops();
  AffineMap kept =
      linalgOp.getMatchingIndexingMap(linalgOp.getDpsInitOperand(0));
  bool readsEveryLoop = false;
  for (OpOperand *input : linalgOp.getDpsInputOperands()) {
    AffineMap map = linalgOp.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation())
      return false;
    if (map.getNumResults() == loops)
      readsEveryLoop = true;
    else if (map != kept)
      return false;
  }
  return readsEveryLoop && kept.isProjectedPermutation();
}

/// A loop and the position of an iter_arg it carries in host memory.
using CarriedState = std::pair<scf::ForOp, unsigned>;

/// What reads the state of `fn` (its arguments among `state`) other than
/// as the update does. The state arguments' walks meet the same norms (a
/// weight's and its moments' reach one trust ratio): each is judged once.
class StateReaders {
public:
  StateReaders(func::FuncOp fn, const llvm::SmallSetVector<unsigned, 8> &state)
      : fn(fn), state(state) {}

  /// The first op, breadth first from `value` (a state argument, or what a
  /// loop carries of it), that reads it (or what the update computes from
  /// it) other than as an update does: a matmul, a call. Null when only the
  /// update reads it, with its norms (LAMB's, which scale the update and
  /// are part of it), and other readers only read a rounded copy of it. The
  /// function's return ends the walk, and so does the yield of `carrier`, the
  /// loop whose iter_arg `value` is. A loop that takes it as an initial value
  /// carries it from step to step: where the loop's body reads what it carries
  /// only as the update does, and what follows the loop reads its result so
  /// too, the walk goes on past the loop and adds the iter_arg to `carried`.
  Operation *firstOutsideUpdate(Value value,
                                SmallVectorImpl<CarriedState> &carried,
                                Operation *carrier = nullptr) {
    SmallVector<Value> work = {value};
    llvm::SetVector<Operation *> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      for (OpOperand &use : value.getUses()) {
        Operation *user = use.getOwner();
        if (user->hasTrait<OpTrait::ReturnLike>() &&
            (isa<func::FuncOp>(user->getParentOp()) ||
             user->getParentOp() == carrier))
          continue;
        if (auto loop = dyn_cast<scf::ForOp>(user)) {
          BlockArgument iterArg = loop.getTiedLoopRegionIterArg(&use);
          if (!iterArg)
            return loop; // a bound
          if (Operation *reader = firstOutsideUpdate(iterArg, carried, loop))
            return reader;
          OpResult result = loop.getTiedLoopResult(&use);
          carried.push_back({loop, result.getResultNumber()});
          work.push_back(result);
          continue;
        }
        // The model reads a rounded copy (the bf16 copy of fp32 master
        // weights): the device needs the copy, and the value itself only
        // the update, as ZeRO-Offload keeps the masters with the moments.
        // Not where a loop carries the value whole and rounds it every
        // step: the device would read all of it across the link each step.
        if (truncatedElement(&use)) {
          if (roundsCarriedWhole(value, carrier))
            return user;
          continue;
        }
        if (!isUpdateStep(user) && !isNormSum(user))
          return user;
        if (seen.insert(user))
          llvm::append_range(work, user->getResults());
      }
    }
    return nullptr;
  }

  /// Whether `value` is what `carrier`, a loop, carries from step to step:
  /// its iter_arg, read whole in its body.
  static bool roundsCarriedWhole(Value value, Operation *carrier) {
    auto arg = dyn_cast<BlockArgument>(value);
    return carrier && arg && arg.getOwner()->getParentOp() == carrier;
  }

private:
  /// Whether `op` is a norm's sum of squares, whole or the partial sums a
  /// sharded norm gathers (LAMB's trust ratio): it sums what it reads, and
  /// what it reads comes from the step's state, what collectives give (the
  /// reduced gradients, a norm's gathered partial sums) and scalars alone.
  /// A backward pass's sum over the batch, which reads the data, is not
  /// one.
  bool isNormSum(Operation *op) {
    if (!sumsWhatItReads(op))
      return false;
    auto [known, inserted] = normSums.try_emplace(op, false);
    if (inserted)
      known->second = readsOnlyStateAndCollectives(op);
    return known->second;
  }

  /// Whether what `op` reads comes from the step's state, collectives'
  /// results and scalars alone.
  bool readsOnlyStateAndCollectives(Operation *op) {
    SmallVector<Value> work(op->getOperands());
    llvm::SmallPtrSet<Value, 32> seen;
    while (!work.empty()) {
      Value value = work.pop_back_val();
      if (!isa<ShapedType>(value.getType()) || !seen.insert(value).second)
        continue;
      if (auto arg = dyn_cast<BlockArgument>(value)) {
        if (arg.getOwner() == &fn.getFunctionBody().front()) {
          if (!state.contains(arg.getArgNumber()))
            return false;
          continue;
        }
      }
      Operation *def = value.getDefiningOp();
      if (!def) // a region's argument: a payload's, read as its operands are
        continue;
      if (isa<AllReduceOp, ReduceScatterOp, AllGatherOp, AllToAllOp, AwaitOp>(
              def))
        continue;
      llvm::append_range(work, def->getOperands());
    }
    return true;
  }

  func::FuncOp fn;
  const llvm::SmallSetVector<unsigned, 8> &state;
  DenseMap<Operation *, bool> normSums;
};

/// When `update` can start: the latest, by `at`, of the ops of `body` that
/// hold what it reads from outside itself (its gradient's reduce-scatter,
/// say); 0 when it reads nothing else.
template <typename T>
T updateReadyAt(const llvm::SetVector<Operation *> &update, Block &body,
                llvm::function_ref<T(Operation *)> at) {
  T ready = 0;
  for (Operation *op : update)
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp();
          def && !update.contains(def))
        if (Operation *top = body.findAncestorOpInBlock(*def))
          ready = std::max(ready, at(top));
  return ready;
}

/// Whether `op` moves its operands' and results' bytes through memory: a
/// linalg op or an elementwise op (not a view, a collective, a constant).
bool movesBytes(Operation *op) {
  return isa<linalg::LinalgOp>(op) || op->hasTrait<OpTrait::Elementwise>();
}

/// The bytes of `value` (a state argument, an operand or result of an
/// update) when a ranked tensor of known size, else 0.
int64_t valueBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type ? getTensorBytes(type).value_or(0) : 0;
}

/// State arguments whose updates share ops (AdamW's one loop over both
/// moments and the weight): offloaded together or not at all, and what
/// moving their update to the host costs and saves by the cost model.
struct HostUpdate {
  SmallVector<unsigned> arguments;
  llvm::SetVector<Operation *> ops;
  /// Seconds into the step when the update can start.
  double ready = 0;
  /// Its ops' time on the device, as the simulation counts it.
  double deviceSeconds = 0;
  /// The bytes a fused host loop moves (what it reads from outside the
  /// update and what leaves it); of those, what the device holds, copied
  /// down, and what the device reads, copied up.
  HostUpdateBytes bytes;
  /// The chunks the queue would pipeline it in (chooseHostChunks).
  int64_t chunks = 1;
};

/// Whether `fn` carries tensors round a loop: state that offload, which
/// covers a step's arguments, leaves on the device.
bool carriesStateInLoop(func::FuncOp fn) {
  return fn
      .walk([](LoopLikeOpInterface loop) {
        return llvm::any_of(loop.getRegionIterArgs(),
                            [](BlockArgument arg) {
                              return isa<RankedTensorType>(arg.getType());
                            })
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

struct ZeroOffloadStatePass
    : public zero::impl::ZeroOffloadStateBase<ZeroOffloadStatePass> {
  using Base::Base;

  void runOnOperation() override {
    if (offload == Offload::None)
      return;
    FailureOr<CostModelParameters> costs = getCostModelParameters(
        getOperation(), getArgument(), latencyMicroseconds, bandwidthGBps,
        gflops, gelementsPerSecond, reduceBandwidthGBps);
    if (failed(costs) || failed(setOffloadParameters(
                             *costs, getOperation(), getArgument(), hostGBps,
                             linkGBps, chunkOverheadMicroseconds)))
      return signalPassFailure();
    CostModel model(*costs);
    getOperation().walk([&](func::FuncOp fn) {
      if (!fn.isExternal())
        markFunction(fn, model);
    });
  }

  void markFunction(func::FuncOp fn, const CostModel &model) {
    llvm::SmallSetVector<unsigned, 8> state;
    for (std::optional<unsigned> arg : findStateResults(fn))
      if (arg && isa<RankedTensorType>(fn.getArgument(*arg).getType()))
        state.insert(*arg);
    if (state.empty()) {
      emitRemark(fn.getLoc())
          << "zero-offload-state: @" << fn.getName()
          << " keeps everything on the device: no result is the next value "
             "of a tensor argument"
          << (carriesStateInLoop(fn)
                  ? " (a loop carries tensors from step to step, but offload "
                    "covers state that a function takes and returns)"
                  : "");
      return;
    }
    SmallVector<unsigned> offloadable;
    DenseMap<unsigned, SmallVector<CarriedState>> carriedOf;
    StateReaders readers(fn, state);
    for (unsigned i : state) {
      SmallVector<CarriedState> carried;
      Operation *reader =
          readers.firstOutsideUpdate(fn.getArgument(i), carried);
      if (reader && offload == Offload::Optimizer) {
        emitRemark(reader->getLoc())
            << "zero-offload-state: argument " << i << " of @" << fn.getName()
            << " stays on the device: '" << reader->getName() << "' "
            << (isa<LoopLikeOpInterface>(reader)
                    ? "carries it from step to step, which offload follows "
                      "through an scf.for's iter_args only"
                : truncatedElement(&reader->getOpOperand(0))
                    ? "rounds it for the model in every step of a loop "
                      "that carries it whole (its master goes to the host "
                      "where the loop carries its shard: defer-all-gather, "
                      "on more than one rank)"
                    : "reads it outside the update");
        continue;
      }
      // Under offload=params, state the forward pass reads goes to the
      // host too, but a loop carries it on the device.
      if (!reader)
        carriedOf[i] = std::move(carried);
      offloadable.push_back(i);
    }
    std::string why;
    llvm::SmallDenseSet<unsigned> kept =
        offloadDeviceShare.automatic
            ? keptByCostModel(fn, offloadable, model, why)
            : keptInShare(fn, offloadable, offloadDeviceShare.share);
    unsigned marked = 0;
    for (unsigned i : offloadable)
      if (!kept.contains(i)) {
        setHostArgument(fn, i, /*host=*/true);
        ++marked;
        for (auto [loop, position] : carriedOf.lookup(i)) {
          setHostIterArg(loop, position, /*host=*/true);
          emitRemark(loop.getLoc())
              << "zero-offload-state: iter_arg " << position
              << " of the loop, which carries argument " << i << " of @"
              << fn.getName() << " from step to step, in host memory";
        }
      }
    InFlightDiagnostic remark = emitRemark(fn.getLoc());
    remark << "zero-offload-state: " << marked << " of " << state.size()
           << " state arguments of @" << fn.getName() << " in host memory";
    if (offloadDeviceShare.automatic)
      remark << "; " << kept.size()
             << " kept on the device (offload-device-share=auto: " << why
             << ")";
    else if (offloadDeviceShare.share > 0)
      remark << "; " << kept.size()
             << " kept on the device (offload-device-share: the last to be "
                "updated, while they fit in "
             << llvm::formatv("{0:P}", offloadDeviceShare.share)
             << " of the bytes)";
  }

  /// The arguments among `offloadable`, the last ready first (among
  /// equals, the later argument first), each with when its update can
  /// start by `at`.
  static SmallVector<std::pair<unsigned, unsigned>>
  lastReadyFirst(func::FuncOp fn, ArrayRef<unsigned> offloadable,
                 llvm::function_ref<unsigned(Operation *)> at) {
    SmallVector<std::pair<unsigned, unsigned>> order;
    for (unsigned i : offloadable)
      order.push_back(
          {updateReadyAt<unsigned>(getUpdateOps(fn.getArgument(i)),
                                   fn.getFunctionBody().front(), at),
           i});
    llvm::sort(order, [](auto a, auto b) { return a > b; });
    return order;
  }

  /// The arguments among `offloadable` that a fixed offload-device-share
  /// keeps on the device: those whose update can start last, while their
  /// bytes fit in the share.
  static llvm::SmallDenseSet<unsigned>
  keptInShare(func::FuncOp fn, ArrayRef<unsigned> offloadable, double share) {
    llvm::SmallDenseSet<unsigned> kept;
    if (share <= 0)
      return kept;
    DenseMap<Operation *, unsigned> position;
    for (Operation &op : fn.getFunctionBody().front())
      position[&op] = position.size() + 1;
    int64_t total = 0;
    for (unsigned i : offloadable)
      total += valueBytes(fn.getArgument(i));
    double budget = share * double(total);
    int64_t used = 0;
    for (auto [ready, i] : lastReadyFirst(fn, offloadable, [&](Operation *op) {
           return position.lookup(op);
         })) {
      int64_t bytes = valueBytes(fn.getArgument(i));
      if (double(used + bytes) > budget)
        break; // the rest can start earlier: their update hides better
      used += bytes;
      kept.insert(i);
    }
    return kept;
  }

  /// The updates of `offloadable`'s arguments, grouped where they share
  /// ops, in order of when they can start (by `finishedAt`).
  static SmallVector<HostUpdate>
  groupUpdates(func::FuncOp fn, ArrayRef<unsigned> offloadable,
               const DenseMap<Operation *, double> &finishedAt) {
    SmallVector<HostUpdate> groups;
    DenseMap<Operation *, unsigned> groupOf;
    for (unsigned i : offloadable) {
      llvm::SetVector<Operation *> ops = getUpdateOps(fn.getArgument(i));
      llvm::SmallSetVector<unsigned, 4> joined;
      for (Operation *op : ops)
        if (auto it = groupOf.find(op); it != groupOf.end())
          joined.insert(it->second);
      HostUpdate merged;
      merged.arguments.push_back(i);
      merged.ops = std::move(ops);
      for (unsigned g : joined) {
        llvm::append_range(merged.arguments, groups[g].arguments);
        merged.ops.insert(groups[g].ops.begin(), groups[g].ops.end());
        groups[g].arguments.clear();
        groups[g].ops.clear();
      }
      for (Operation *op : merged.ops)
        groupOf[op] = groups.size();
      groups.push_back(std::move(merged));
    }
    llvm::erase_if(groups,
                   [](const HostUpdate &g) { return g.arguments.empty(); });
    Block &body = fn.getFunctionBody().front();
    for (HostUpdate &group : groups) {
      llvm::sort(group.arguments);
      group.ready = updateReadyAt<double>(group.ops, body, [&](Operation *op) {
        return finishedAt.lookup(op);
      });
    }
    llvm::stable_sort(groups, [](const HostUpdate &a, const HostUpdate &b) {
      return a.ready < b.ready;
    });
    return groups;
  }

  /// Fills in `group`'s costs. The host runs the ops of the update before
  /// any collective in it (after one, the new weights' gather and what
  /// reads it stay on the device).
  static void costUpdate(func::FuncOp fn, HostUpdate &group,
                         const llvm::SmallDenseSet<unsigned> &offloadable,
                         ArrayRef<std::optional<unsigned>> stateOf,
                         const CostModel &model) {
    llvm::SmallPtrSet<Operation *, 32> host;
    for (Operation *op : group.ops) // breadth first: producers come first
      if (movesBytes(op) &&
          llvm::none_of(op->getOperands(), [&](Value operand) {
            Operation *def = operand.getDefiningOp();
            return def && group.ops.contains(def) && !host.contains(def) &&
                   !isa<tensor::TensorDialect>(def->getDialect());
          }))
        host.insert(op);
    int64_t hostBytes = 0, downBytes = 0, upBytes = 0;
    llvm::SmallPtrSet<Value, 32> counted;
    for (Operation *op : group.ops) {
      if (!host.contains(op))
        continue;
      group.deviceSeconds += model.computeSeconds(op);
      for (Value operand : op->getOperands()) {
        Operation *def = operand.getDefiningOp();
        if ((def &&
             (host.contains(def) ||
              isa<tensor::EmptyOp, tensor::SplatOp, arith::ConstantOp>(def))) ||
            !counted.insert(operand).second)
          continue;
        hostBytes += valueBytes(operand);
        if (!isHostArgument(fn, operand, offloadable))
          downBytes += valueBytes(operand);
      }
      for (OpResult result : op->getResults()) {
        bool leaves = llvm::any_of(result.getUsers(), [&](Operation *user) {
          return !host.contains(user);
        });
        if (!leaves)
          continue;
        hostBytes += valueBytes(result);
        if (readOnDevice(result, stateOf, offloadable))
          upBytes += valueBytes(result);
      }
    }
    group.bytes = {downBytes, hostBytes, upBytes};
    // The fused loop's iterations: its largest argument's elements.
    int64_t iterations = 1;
    for (unsigned i : group.arguments)
      if (auto type = dyn_cast<ShapedType>(fn.getArgument(i).getType());
          type && type.hasStaticShape())
        iterations = std::max(iterations, type.getNumElements());
    group.chunks =
        chooseHostChunks(model.getParameters(), group.bytes, iterations);
  }

  /// Whether `value` is one of `fn`'s arguments among `offloadable`.
  static bool isHostArgument(func::FuncOp fn, Value value,
                             const llvm::SmallDenseSet<unsigned> &offloadable) {
    auto arg = dyn_cast<BlockArgument>(value);
    return arg && arg.getOwner() == &fn.getFunctionBody().front() &&
           offloadable.contains(arg.getArgNumber());
  }

  /// Whether the device reads `result` of a host update: an op outside the
  /// update does (a collective, a copy into a bucket), or it is the next
  /// value of state the device holds.
  static bool readOnDevice(OpResult result,
                           ArrayRef<std::optional<unsigned>> stateOf,
                           const llvm::SmallDenseSet<unsigned> &offloadable) {
    for (OpOperand &use : result.getUses()) {
      Operation *user = use.getOwner();
      if (!isa<func::ReturnOp>(user))
        return true;
      std::optional<unsigned> arg = stateOf[use.getOperandNumber()];
      if (!arg || !offloadable.contains(*arg))
        return true;
    }
    return false;
  }

  /// The step's seconds by the cost model when `groups`' first `offloaded`
  /// updates run on the host: the device's step less those updates, or the
  /// end of the host's work, as the runtime runs it (HostQueueModel), each
  /// update queued once it is ready (earlier by the device's time on the
  /// updates before it that left) and pipelined in its chunks.
  static double estimateStep(double deviceStep, ArrayRef<HostUpdate> groups,
                             size_t offloaded, const CostModel &model) {
    HostQueueModel queue(model.getParameters());
    double saved = 0, done = 0;
    for (const HostUpdate &group : groups.take_front(offloaded)) {
      done = queue.queue(group.ready - saved, group.bytes, group.chunks);
      saved += group.deviceSeconds;
    }
    return std::max(deviceStep - saved, done);
  }

  /// The arguments among `offloadable` that offload-device-share=auto
  /// keeps on the device: of the choices "the updates that can start last,
  /// k of them", the one the cost model says makes the step shortest (the
  /// fewest kept among equals). `why` says what it estimated.
  static llvm::SmallDenseSet<unsigned>
  keptByCostModel(func::FuncOp fn, ArrayRef<unsigned> offloadable,
                  const CostModel &model, std::string &why) {
    DenseMap<Operation *, double> finishedAt;
    double deviceStep = simulate(fn, model, &finishedAt).stepSeconds;
    SmallVector<HostUpdate> groups = groupUpdates(fn, offloadable, finishedAt);
    llvm::SmallDenseSet<unsigned> offloadableSet(offloadable.begin(),
                                                 offloadable.end());
    SmallVector<std::optional<unsigned>> stateOf = findStateResults(fn);
    const CostModelParameters &rates = model.getParameters();
    double host = 0, link = 0;
    for (HostUpdate &group : groups) {
      costUpdate(fn, group, offloadableSet, stateOf, model);
      host += double(group.bytes.host) / rates.hostBandwidth;
      link += double(group.bytes.in + group.bytes.out) / rates.linkBandwidth;
    }
    size_t n = groups.size(), best = n;
    double bestSeconds = estimateStep(deviceStep, groups, n, model);
    for (size_t offloaded = n; offloaded-- > 0;) {
      double seconds = estimateStep(deviceStep, groups, offloaded, model);
      if (seconds < bestSeconds * (1 - 1e-9)) {
        best = offloaded;
        bestSeconds = seconds;
      }
    }
    llvm::SmallDenseSet<unsigned> kept;
    int64_t keptBytes = 0, total = 0;
    for (auto [index, group] : llvm::enumerate(groups))
      for (unsigned i : group.arguments) {
        int64_t bytes = valueBytes(fn.getArgument(i));
        total += bytes;
        if (index >= best) {
          kept.insert(i);
          keptBytes += bytes;
        }
      }
    why = llvm::formatv(
        "{0:P} of the bytes; estimated step {1:F3} ms, against {2:F3} ms "
        "with all offloaded and {3:F3} ms with none; the host's update "
        "{4:F3} ms and the link's copies {5:F3} ms a step at host-gbps={6} "
        "link-gbps={7}",
        total ? double(keptBytes) / double(total) : 0.0, bestSeconds * 1e3,
        estimateStep(deviceStep, groups, n, model) * 1e3, deviceStep * 1e3,
        host * 1e3, link * 1e3, rates.hostBandwidth * 1e-9,
        rates.linkBandwidth * 1e-9);
    return kept;
  }
};

} // namespace
