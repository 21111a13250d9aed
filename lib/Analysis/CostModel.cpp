//===- CostModel.cpp - time of computation and communication --------------===//

#include "zero/Analysis/CostModel.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zero/Analysis/Communication.h"

using namespace mlir;
using namespace zero;

FailureOr<CostModelParameters>
zero::getCostModelParameters(Operation *op, StringRef pass,
                             double latencyMicroseconds, double bandwidthGBps,
                             double gflops, double gelementsPerSecond,
                             double reduceBandwidthGBps) {
  CostModelParameters parameters;
  parameters.latency = latencyMicroseconds * 1e-6;
  parameters.bandwidth = bandwidthGBps * 1e9;
  parameters.reduceBandwidth = reduceBandwidthGBps * 1e9;
  parameters.flopRate = gflops * 1e9;
  parameters.elementRate = gelementsPerSecond * 1e9;
  if (parameters.bandwidth > 0 && parameters.reduceBandwidth >= 0 &&
      parameters.flopRate > 0 && parameters.elementRate > 0 &&
      parameters.latency >= 0)
    return parameters;
  return op->emitError(pass) << ": the cost model's rates must be positive "
                                "and its latency not negative";
}

LogicalResult zero::setOffloadParameters(CostModelParameters &parameters,
                                         Operation *op, StringRef pass,
                                         double hostGBps, double linkGBps,
                                         double chunkOverheadMicroseconds) {
  if (!(hostGBps > 0 && linkGBps > 0))
    return op->emitError(pass) << ": host-gbps and link-gbps must be positive";
  if (!(chunkOverheadMicroseconds >= 0))
    return op->emitError(pass) << ": chunk-overhead-us must not be negative";
  parameters.hostBandwidth = hostGBps * 1e9;
  parameters.linkBandwidth = linkGBps * 1e9;
  parameters.hostChunkOverhead = chunkOverheadMicroseconds * 1e-6;
  return success();
}

double HostQueueModel::queue(double ready, const HostUpdateBytes &update,
                             int64_t chunks) {
  chunks = std::max<int64_t>(chunks, 1);
  double down = double(update.in) / parameters.linkBandwidth / chunks,
         loop = double(update.host) / parameters.hostBandwidth / chunks +
                parameters.hostChunkOverhead,
         up = double(update.out) / parameters.linkBandwidth / chunks;
  double copiedDown = std::max(copyStream, ready), copiedUp = 0;
  for (int64_t k = 0; k < chunks; ++k) {
    copiedDown += down;
    thread = std::max(thread, copiedDown) + loop;
    copiedUp = std::max(copiedUp, thread) + up;
  }
  copyStream = copiedDown;
  thread = copiedUp;
  return thread;
}

int64_t zero::chooseHostChunks(const CostModelParameters &parameters,
                               const HostUpdateBytes &update,
                               int64_t iterations) {
  auto seconds = [&](int64_t chunks) {
    return HostQueueModel(parameters).queue(0, update, chunks);
  };
  // The fewest among equals, rounding aside: each chunk costs the runtime
  // a wake and a wait that the rates may not show.
  int64_t most = std::clamp<int64_t>(iterations, 1, 256);
  SmallVector<double> times;
  for (int64_t n = 1; n <= most; ++n)
    times.push_back(seconds(n));
  double least = *llvm::min_element(times);
  return 1 +
         llvm::find_if(times,
                       [&](double s) { return s <= least * (1 + 1e-9); }) -
         times.begin();
}

double CostModel::communicationSeconds(CollectiveOpInterface op) const {
  if (!op.communicates())
    return 0;
  MeshOp mesh = op.lookupMesh();
  if (!mesh)
    return 0;
  int64_t groupSize = op.getGroupSize(mesh);
  if (groupSize <= 1)
    return 0;
  std::optional<int64_t> bytes = getBytesSentPerRank(op, groupSize);
  double bandwidth =
      isa<AllReduceOp, ReduceScatterOp>(op) && parameters.reduceBandwidth > 0
          ? parameters.reduceBandwidth
          : parameters.bandwidth;
  return parameters.latency + (bytes ? *bytes / bandwidth : 0);
}

/// Elements of a statically shaped tensor, else 0.
static int64_t staticElements(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.hasStaticShape() ? tensor.getNumElements() : 0;
}

double CostModel::computeSeconds(Operation *op) const {
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
    int64_t iterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges()) {
      if (ShapedType::isDynamic(range))
        return 0;
      iterations *= range;
    }
    // A contraction does a multiply and an add per iteration.
    if (linalgOp.getNumReductionLoops() > 0)
      return 2.0 * iterations / parameters.flopRate;
    int64_t payload = 0;
    for (Operation &inner : linalgOp.getBlock()->without_terminator())
      payload += !isa<linalg::IndexOp>(inner);
    return double(iterations) * std::max<int64_t>(payload, 1) /
           parameters.elementRate;
  }
  // Block quantization reads its input twice: the block's largest
  // magnitude, a reduction (priced as the linalg reductions above), then
  // the levels, elementwise; dequantization once.
  if (auto quantize = dyn_cast<QuantizeOp>(op)) {
    double elements = staticElements(quantize.getInput().getType());
    return 2.0 * elements / parameters.flopRate +
           elements / parameters.elementRate;
  }
  if (auto dequantize = dyn_cast<DequantizeOp>(op))
    return staticElements(dequantize.getType()) / parameters.elementRate;
  if (op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1)
    return staticElements(op->getResult(0).getType()) / parameters.elementRate;
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op))
    return staticElements(insert.getSourceType()) / parameters.elementRate;
  if (auto pad = dyn_cast<tensor::PadOp>(op))
    return staticElements(pad.getResultType()) / parameters.elementRate;
  return 0;
}

double CostModel::computeSecondsWithin(Operation *op) const {
  double seconds = computeSeconds(op);
  // A linalg op's body is its payload, already counted per iteration.
  if (isa<linalg::LinalgOp, CollectiveOpInterface>(op))
    return seconds;
  double nested = 0;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &inner : block)
        nested += computeSecondsWithin(&inner);
  if (auto loop = dyn_cast<scf::ForOp>(op))
    if (std::optional<APInt> trips = loop.getStaticTripCount())
      nested *= trips->getSExtValue();
  return seconds + nested;
}

namespace {

/// The two streams of one rank, as far as the simulation has played them.
struct StreamState {
  /// When the computation stream reaches the current op.
  double compute = 0;
  /// When the communication stream is free.
  double communication = 0;
  double computeTotal = 0;
  double communicationTotal = 0;
  double exposed = 0;
  /// When each started collective completes.
  DenseMap<Value, double> done;

  void shift(const StreamState &before, const StreamState &after,
             int64_t times) {
    double step = after.compute - before.compute;
    compute += times * step;
    communication = std::max(communication + times * step, compute);
    computeTotal += times * (after.computeTotal - before.computeTotal);
    communicationTotal +=
        times * (after.communicationTotal - before.communicationTotal);
    exposed += times * (after.exposed - before.exposed);
  }
};

class Simulator {
public:
  explicit Simulator(const CostModel &model) : model(model) {}

  void run(Block &block, StreamState &state) {
    for (Operation &op : block)
      run(&op, state);
  }

private:
  /// A collective that occupies the communication stream from when both
  /// streams reach it; returns when it completes.
  double issue(CollectiveOpInterface collective, StreamState &state) {
    double seconds = model.communicationSeconds(collective);
    double start = std::max(state.compute, state.communication);
    state.communication = start + seconds;
    state.communicationTotal += seconds;
    return state.communication;
  }

  void wait(double done, StreamState &state) {
    if (done <= state.compute)
      return;
    state.exposed += done - state.compute;
    state.compute = done;
  }

public:
  void run(Operation *op, StreamState &state) {
    if (auto async = dyn_cast<AsyncOp>(op)) {
      if (CollectiveOpInterface collective = async.getCollective())
        state.done[async.getFuture()] = issue(collective, state);
      return;
    }
    if (auto await = dyn_cast<AwaitOp>(op)) {
      wait(state.done.lookup(await.getFuture()), state);
      return;
    }
    if (auto collective = dyn_cast<CollectiveOpInterface>(op)) {
      wait(issue(collective, state), state);
      return;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      runLoop(loop, state);
      return;
    }
    if (auto branch = dyn_cast<scf::IfOp>(op)) {
      StreamState elseState = state;
      run(branch.getThenRegion().front(), state);
      if (!branch.getElseRegion().empty()) {
        run(branch.getElseRegion().front(), elseState);
        if (elseState.compute > state.compute)
          state = std::move(elseState);
      }
      return;
    }
    double seconds = model.computeSeconds(op);
    state.compute += seconds;
    state.computeTotal += seconds;
    if (isa<linalg::LinalgOp>(op))
      return;
    for (Region &region : op->getRegions())
      for (Block &block : region)
        run(block, state);
  }

private:
  void runLoop(scf::ForOp loop, StreamState &state) {
    std::optional<APInt> trips = loop.getStaticTripCount();
    int64_t count = trips ? trips->getSExtValue() : 1;
    if (count <= 0)
      return;
    runIteration(loop, state);
    if (count > 1) {
      StreamState before = state;
      runIteration(loop, state);
      if (count > 2) {
        double step = state.compute - before.compute;
        state.shift(before, state, count - 2);
        for (BlockArgument argument : loop.getRegionIterArgs())
          if (isa<FutureType>(argument.getType()))
            state.done[argument] += (count - 2) * step;
      }
    }
    // A future the last iteration started is awaited after the loop.
    for (auto [result, argument] :
         llvm::zip(loop.getResults(), loop.getRegionIterArgs()))
      if (isa<FutureType>(result.getType()))
        state.done[result] = state.done.lookup(argument);
  }

  /// One iteration; a future it yields is the next iteration's argument.
  void runIteration(scf::ForOp loop, StreamState &state) {
    run(*loop.getBody(), state);
    for (auto [argument, yielded] :
         llvm::zip(loop.getRegionIterArgs(), loop.getYieldedValues()))
      if (isa<FutureType>(argument.getType()))
        state.done[argument] = state.done.lookup(yielded);
  }

  const CostModel &model;
};

} // namespace

TimeEstimate zero::simulate(FunctionOpInterface function,
                            const CostModel &model,
                            DenseMap<Operation *, double> *finishedAt) {
  TimeEstimate estimate;
  if (function.isExternal())
    return estimate;
  StreamState state;
  Simulator simulator(model);
  for (Operation &op : function.getFunctionBody().front()) {
    simulator.run(&op, state);
    if (finishedAt)
      (*finishedAt)[&op] = state.compute;
  }
  estimate.stepSeconds = std::max(state.compute, state.communication);
  estimate.computeSeconds = state.computeTotal;
  estimate.communicationSeconds = state.communicationTotal;
  estimate.exposedSeconds = state.exposed;
  return estimate;
}
