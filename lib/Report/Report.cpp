//===- Report.cpp - per-rank communication report -------------------------===//

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Support/FileUtilities.h"
#include "zero/Analysis/Accumulation.h"
#include "zero/Analysis/Communication.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Conversion/ShardToZero/ShardToZero.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Report/Passes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

namespace zero {
#define GEN_PASS_DEF_ZEROREPORT
#include "zero/Report/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {
/// Traffic of one collective kind in one function.
struct KindTraffic {
  int64_t count = 0;
  int64_t bytesPerRank = 0;
  int64_t unknown = 0; // collectives whose bytes could not be sized
};

/// One compressed exchange: the collective that moves a zero.quantize's
/// levels.
struct CompressedExchange {
  StringRef kind;
  int64_t block = 0;
  /// Bits a level: 8 or 4.
  int64_t bits = 8;
  /// Elements quantized (what the exchange sends, one level each).
  int64_t elements = 0;
  int64_t executions = 1;

  /// Bits an element: 8 or 4 (blocks with a scale each), or bf16's.
  bool isBF16() const { return bits == kBF16ExchangeBits; }
  StringRef format() const { return getExchangeFormat(bits); }
  std::string bound() const { return describeExchangeBound(bits); }
};

struct FunctionTraffic {
  std::string name;
  SmallVector<CompressedExchange> compressed;
  llvm::MapVector<StringRef, KindTraffic> kinds;
  KindTraffic total;
  /// Elements computed per call by elementwise ops on tensors: the update
  /// work of a rank (a sharded update computes 1/N of them).
  int64_t updateElements = 0;
  /// Model state a rank holds: the weights and optimizer state that go from
  /// one step to the next, and the reduced gradients.
  int64_t stateBytes = 0;
  /// Error-feedback residuals: what each rank's compressed exchanges lost,
  /// kept for the next step (state too, but no weight's).
  int64_t residualBytes = 0;
  /// The delayed update's state: the step before's reduced gradients (and
  /// what else it computed from its data) that the update reads.
  int64_t delayedBytes = 0;
  /// Of those, the bytes in host memory beside a GPU (measureHostState).
  int64_t hostStateBytes = 0;
  int64_t gradientBytes = 0;
  int64_t modelStateBytes() const {
    return stateBytes + residualBytes + delayedBytes + gradientBytes;
  }
  /// The cost model's time of one call.
  TimeEstimate estimate;
  /// The same figures recorded for the program as given, when a previous
  /// zero-report{record-given} in the pipeline recorded them.
  std::optional<int64_t> givenBytes, givenUpdateElements, givenModelStateBytes;
};

/// Bytes of `type` when it is a tensor of known size, else 0.
int64_t tensorBytes(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor ? getTensorBytes(tensor).value_or(0) : 0;
}

bool feedsReducedSum(Operation *op);

/// Whether `value` is sent all-to-all as quantized blocks or rounded to
/// bf16 (a compressed reduce-scatter, zero-compress-reduce-scatter).
bool isSentCompressed(Value value) {
  return llvm::any_of(value.getUsers(), [](Operation *user) {
    Value sent;
    if (auto quantize = dyn_cast<QuantizeOp>(user))
      sent = quantize.getValues();
    else if (isa<arith::TruncFOp>(user))
      sent = user->getResult(0);
    return sent && llvm::any_of(sent.getUsers(), llvm::IsaPred<AllToAllOp>);
  });
}

/// Whether `value` is read only by reducing collectives, directly or
/// through the reshapes, padding and bucket packing (`tensor.concat`) that
/// lay it out for one, or by the compressed form of one (its rows widened,
/// a residual added, quantized or rounded to bf16 and sent; what was lost
/// subtracted): a local gradient.
bool onlyFeedsReductions(Value value) {
  return !value.use_empty() &&
         llvm::all_of(value.getUses(), [&](OpOperand &use) {
           Operation *user = use.getOwner();
           // An all-to-all is what a compressed reduce-scatter sends (bf16
           // rows as they are).
           if (isa<AllReduceOp, ReduceScatterOp, AllToAllOp>(user))
             return true;
           if (isa<QuantizeOp, arith::TruncFOp>(user))
             return isSentCompressed(value);
           if (isa<arith::SubFOp>(user))
             return use.getOperandNumber() == 0 && isSentCompressed(value);
           if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                   tensor::PadOp, tensor::ConcatOp, tensor::ExtractSliceOp,
                   linalg::TransposeOp, arith::ExtFOp>(user))
             // A transpose of buffers has no result: it is no gradient's.
             return user->getNumResults() == 1 &&
                    onlyFeedsReductions(user->getResult(0));
           // A residual added before the send, or a micro-batch's sum.
           if (isa<arith::AddFOp>(user) &&
               onlyFeedsReductions(user->getResult(0)))
             return true;
           return feedsReducedSum(user);
         });
}

/// Whether `op` adds its operand to a sum that an accumulation loop carries
/// and the loop's result only feeds reductions (a micro-batch's gradient).
bool feedsReducedSum(Operation *op) {
  auto loop = dyn_cast<scf::ForOp>(op->getParentOp());
  if (!loop || !getElementwiseSummands(op) || !isAccumulationLoop(loop) ||
      op->getNumResults() != 1)
    return false;
  for (OpOperand &use : op->getResult(0).getUses())
    if (use.getOwner() == loop.getBody()->getTerminator())
      return onlyFeedsReductions(loop.getResult(use.getOperandNumber()));
  return false;
}

/// Whether `value` is state that starts at zero (an error-feedback
/// residual): an argument marked so, or a loop's iteration argument whose
/// first value is made so.
bool startsAtZero(Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg)
    return false;
  Operation *owner = arg.getOwner()->getParentOp();
  if (auto func = dyn_cast<FunctionOpInterface>(owner))
    return static_cast<bool>(
        func.getArgAttr(arg.getArgNumber(), kStartsAtZeroAttrName));
  if (auto loop = dyn_cast<scf::ForOp>(owner))
    if (OpOperand *init = loop.getTiedLoopInit(arg))
      if (Operation *def = init->get().getDefiningOp())
        return def->hasAttr(kStartsAtZeroAttrName);
  return false;
}

/// The bytes of `func`'s arguments for which `counts` holds.
int64_t argumentBytes(FunctionOpInterface func,
                      llvm::function_ref<bool(BlockArgument)> counts) {
  int64_t bytes = 0;
  for (BlockArgument arg : func.getArguments())
    if (counts(arg))
      bytes += tensorBytes(arg.getType());
  return bytes;
}

/// Whether `arg` of `func` is the delayed update's state.
bool isDelayed(FunctionOpInterface func, BlockArgument arg) {
  return static_cast<bool>(
      func.getArgAttr(arg.getArgNumber(), kDelayedAttrName));
}

/// The error-feedback residuals of `func` per rank: the state, as
/// measureState finds it, that starts at zero (and is not the delayed
/// update's).
int64_t measureResiduals(FunctionOpInterface func) {
  int64_t bytes = argumentBytes(func, [&](BlockArgument arg) {
    return startsAtZero(arg) && !isDelayed(func, arg);
  });
  func.walk([&](scf::ForOp loop) {
    if (loop->getParentOfType<scf::ForOp>())
      return;
    for (Value arg : loop.getRegionIterArgs())
      if (startsAtZero(arg))
        bytes += tensorBytes(arg.getType());
  });
  return bytes;
}

/// The training loops of `func`: its outermost scf.fors with collectives
/// inside that are not accumulations of micro-batches.
SmallVector<scf::ForOp> trainingLoops(FunctionOpInterface func) {
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) {
    if (loop->getParentOfType<scf::ForOp>() || isAccumulationLoop(loop))
      return;
    if (loop.walk([](CollectiveOpInterface) { return WalkResult::interrupt(); })
            .wasInterrupted())
      loops.push_back(loop);
  });
  return loops;
}

/// The weights and optimizer state of `func` per rank. In a training loop
/// they are the values the loop carries; in a single step, the tensor
/// arguments other than those only collectives read (the local gradients,
/// also through a sum of micro-batches).
int64_t measureState(FunctionOpInterface func) {
  SmallVector<scf::ForOp> loops = trainingLoops(func);
  int64_t state = 0;
  for (scf::ForOp loop : loops)
    for (Value arg : loop.getRegionIterArgs())
      if (!startsAtZero(arg))
        state += tensorBytes(arg.getType());
  if (!loops.empty())
    return state;
  for (BlockArgument arg : func.getArguments())
    if (!onlyFeedsReductions(arg) && !startsAtZero(arg))
      state += tensorBytes(arg.getType());
  return state;
}

/// Of that state, the bytes in host memory beside a GPU: what a training
/// loop carries there (`zero.host_iter_args`), or in a single step the
/// arguments zero-offload-state placed there (`zero.memory = "host"`).
int64_t measureHostState(FunctionOpInterface func) {
  SmallVector<scf::ForOp> loops = trainingLoops(func);
  int64_t bytes = 0;
  for (scf::ForOp loop : loops)
    for (auto [position, arg] : llvm::enumerate(loop.getRegionIterArgs()))
      if (!startsAtZero(arg) && isHostIterArg(loop, position))
        bytes += tensorBytes(arg.getType());
  if (!loops.empty())
    return bytes;
  return argumentBytes(func, [&](BlockArgument arg) {
    return isHostArgument(func, arg.getArgNumber());
  });
}

/// Bytes of the reduced gradients a rank holds: the results of all-reduces
/// (whole) and reduce-scatters (a shard) of tensors of rank 1 or more.
int64_t measureGradients(FunctionOpInterface func) {
  int64_t bytes = 0;
  func.walk([&](Operation *op) {
    if (isa<AllReduceOp, ReduceScatterOp>(op) &&
        cast<RankedTensorType>(op->getResult(0).getType()).getRank() > 0)
      bytes += tensorBytes(op->getResult(0).getType());
  });
  return bytes;
}

/// Where zero-report{record-given} leaves its figures for a later report.
constexpr StringLiteral kGivenAttr = "zero.report_given";

FunctionTraffic measureFunction(FunctionOpInterface func,
                                const CostModel &model) {
  FunctionTraffic traffic;
  traffic.name = func.getName().str();
  func.walk([&](CollectiveOpInterface op) {
    KindTraffic &kind = traffic.kinds[op->getName().stripDialect()];
    MeshOp mesh = op.lookupMesh();
    std::optional<int64_t> count = getExecutionCount(op);
    std::optional<int64_t> bytes =
        mesh ? getBytesSentPerRank(op, op.getGroupSize(mesh)) : std::nullopt;
    for (KindTraffic *t : {&kind, &traffic.total}) {
      t->count += count.value_or(1);
      if (bytes && count)
        t->bytesPerRank += *bytes * *count;
      else
        ++t->unknown;
    }
  });
  func.walk([&](Operation *op) {
    if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumResults() != 1)
      return;
    auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (type && type.hasStaticShape())
      traffic.updateElements +=
          type.getNumElements() * getExecutionCount(op).value_or(1);
  });
  func.walk([&](QuantizeOp quantize) {
    for (Operation *user : quantize.getValues().getUsers())
      if (auto collective = dyn_cast<CollectiveOpInterface>(user))
        traffic.compressed.push_back(
            {collective->getName().stripDialect(),
             static_cast<int64_t>(quantize.getBlock()),
             static_cast<int64_t>(quantize.getBits()),
             quantize.getInput().getType().getNumElements(),
             getExecutionCount(quantize).value_or(1)});
  });
  // zero-compress-reduce-scatter's bf16 rows, rounded for the exchange.
  func.walk([&](arith::TruncFOp trunc) {
    auto type = dyn_cast<RankedTensorType>(trunc.getType());
    if (!type || !type.getElementType().isBF16())
      return;
    for (Operation *user : trunc->getUsers())
      if (isa<AllToAllOp>(user))
        traffic.compressed.push_back({user->getName().stripDialect(), 0,
                                      kBF16ExchangeBits, type.getNumElements(),
                                      getExecutionCount(trunc).value_or(1)});
  });
  traffic.stateBytes = measureState(func);
  traffic.residualBytes = measureResiduals(func);
  // The delayed update's state, and what offload placed in host memory.
  traffic.delayedBytes = argumentBytes(
      func, [&](BlockArgument arg) { return isDelayed(func, arg); });
  traffic.hostStateBytes = measureHostState(func);
  traffic.gradientBytes = measureGradients(func);
  traffic.estimate = simulate(func, model);
  return traffic;
}

/// "N (given G, ratio R)" when the given figure is known.
std::string withGiven(int64_t now, std::optional<int64_t> given) {
  if (!given)
    return std::to_string(now);
  return llvm::formatv("{0}  (given {1}, ratio {2:F3})", now, *given,
                       *given ? double(now) / *given : 0.0)
      .str();
}

/// `seconds` in the unit that suits it: "42.7 us", "3.125 ms", "1.500 s".
std::string formatSeconds(double seconds) {
  if (seconds < 1e-3)
    return llvm::formatv("{0:F1} us", seconds * 1e6).str();
  if (seconds < 1)
    return llvm::formatv("{0:F3} ms", seconds * 1e3).str();
  return llvm::formatv("{0:F3} s", seconds).str();
}

void printText(ArrayRef<FunctionTraffic> functions, raw_ostream &os) {
  for (const FunctionTraffic &f : functions) {
    os << "zero-report: @" << f.name << "\n";
    os << llvm::formatv("  {0,-16}{1,8}{2,24}\n", "collective", "count",
                        "bytes sent per rank");
    auto row = [&](StringRef name, const KindTraffic &t) {
      os << llvm::formatv("  {0,-16}{1,8}{2,24}", name, t.count,
                          t.bytesPerRank);
      if (t.unknown)
        os << "  (+" << t.unknown << " of unknown size)";
      os << "\n";
    };
    for (auto &[kind, traffic] : f.kinds)
      row(kind, traffic);
    row("total", f.total);
    // What zero.quantize states for its blocks (ZeroOps.td), per
    // contribution: a reduce-scatter's all-to-all sums N of them a hop.
    for (const CompressedExchange &c : f.compressed)
      os << llvm::formatv("  compressed {0}: {1}{2}, {3} elements x {4}; "
                          "each element within {5} a contribution\n",
                          c.kind, c.format(),
                          c.isBF16() ? std::string()
                                     : ", blocks of " + std::to_string(c.block),
                          c.elements, c.executions, c.bound());
    os << "  bytes sent per rank: "
       << withGiven(f.total.bytesPerRank, f.givenBytes) << "\n";
    os << "  update elements per rank: "
       << withGiven(f.updateElements, f.givenUpdateElements) << "\n";
    os << "  model state bytes per rank: "
       << withGiven(f.modelStateBytes(), f.givenModelStateBytes) << "\n";
    os << "    weights and optimizer state: " << f.stateBytes;
    if (f.residualBytes > 0)
      os << ", error-feedback residuals: " << f.residualBytes;
    if (f.delayedBytes > 0)
      os << ", delayed update: " << f.delayedBytes;
    os << ", reduced gradients: " << f.gradientBytes << "\n";
    if (f.hostStateBytes > 0)
      os << "    offloaded: state in host memory " << f.hostStateBytes
         << ", on the device " << f.modelStateBytes() - f.hostStateBytes
         << "\n";
    const TimeEstimate &e = f.estimate;
    os << "  estimated time per call: " << formatSeconds(e.stepSeconds)
       << " (computation " << formatSeconds(e.computeSeconds)
       << ", communication " << formatSeconds(e.communicationSeconds) << ")\n";
    if (std::optional<double> hidden = e.hiddenShare())
      os << "    exposed communication: " << formatSeconds(e.exposedSeconds)
         << llvm::formatv(", {0:F0}% of communication hidden\n", *hidden * 100);
    else
      os << "    no communication\n";
  }
}

llvm::json::Object toJson(const KindTraffic &t) {
  return llvm::json::Object{{"count", t.count},
                            {"bytes_per_rank", t.bytesPerRank},
                            {"unknown", t.unknown}};
}

void printJson(ArrayRef<FunctionTraffic> functions, raw_ostream &os) {
  llvm::json::Array array;
  for (const FunctionTraffic &f : functions) {
    llvm::json::Object kinds;
    for (auto &[kind, traffic] : f.kinds)
      kinds[kind] = toJson(traffic);
    llvm::json::Object entry{
        {"function", f.name},
        {"collectives", std::move(kinds)},
        {"total", toJson(f.total)},
        {"update_elements", f.updateElements},
        {"model_state_bytes",
         llvm::json::Object{
             {"total", f.modelStateBytes()},
             {"weights_and_optimizer_state", f.stateBytes},
             {"error_feedback_residuals", f.residualBytes},
             {"delayed_update", f.delayedBytes},
             {"reduced_gradients", f.gradientBytes},
             {"host", f.hostStateBytes},
             {"device", f.modelStateBytes() - f.hostStateBytes}}},
        {"estimate",
         llvm::json::Object{
             {"step_seconds", f.estimate.stepSeconds},
             {"compute_seconds", f.estimate.computeSeconds},
             {"communication_seconds", f.estimate.communicationSeconds},
             {"exposed_seconds", f.estimate.exposedSeconds},
             {"hidden_share", f.estimate.hiddenShare()
                                  ? llvm::json::Value(*f.estimate.hiddenShare())
                                  : llvm::json::Value(nullptr)}}}};
    llvm::json::Array compressed;
    for (const CompressedExchange &c : f.compressed)
      compressed.push_back(
          llvm::json::Object{{"collective", c.kind},
                             {"format", c.format()},
                             {"block", c.block},
                             {"elements", c.elements},
                             {"executions", c.executions},
                             {"bound", c.bound() + " a contribution"}});
    entry["compressed"] = std::move(compressed);
    if (f.givenBytes)
      entry["given"] =
          llvm::json::Object{{"bytes_per_rank", *f.givenBytes},
                             {"update_elements", *f.givenUpdateElements},
                             {"model_state_bytes", *f.givenModelStateBytes}};
    array.push_back(std::move(entry));
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(llvm::json::Object{
                                   {"functions", std::move(array)}}))
     << "\n";
}

struct ZeroReportPass : public zero::impl::ZeroReportBase<ZeroReportPass> {
  using Base::Base;

  void runOnOperation() override {
    FailureOr<CostModelParameters> parameters = getCostModelParameters(
        getOperation(), getArgument(), latencyMicroseconds, bandwidthGBps,
        gflops, gelementsPerSecond, reduceBandwidthGBps);
    if (failed(parameters))
      return signalPassFailure();
    CostModel model(*parameters);
    ModuleOp module = getOperation();
    // The upstream shard dialect's collectives count too: measured on a copy
    // in zero's ops.
    OwningOpRef<ModuleOp> converted;
    ModuleOp measured = module;
    if (zero::containsShardOps(module)) {
      converted = module.clone();
      if (failed(zero::convertShardToZero(*converted)))
        return signalPassFailure();
      measured = *converted;
    }
    std::vector<FunctionTraffic> functions;
    measured.walk([&](FunctionOpInterface func) {
      if (!func.isExternal())
        functions.push_back(measureFunction(func, model));
    });
    Builder b(module.getContext());
    if (recordGiven) {
      // Figures of the program as given, for the report after the rewrite.
      SmallVector<NamedAttribute> given;
      for (const FunctionTraffic &f : functions)
        given.push_back(b.getNamedAttr(
            f.name,
            b.getDenseI64ArrayAttr({f.total.bytesPerRank, f.updateElements,
                                    f.modelStateBytes()})));
      module->setAttr(kGivenAttr, b.getDictionaryAttr(given));
      return;
    }
    if (auto given = module->getAttrOfType<DictionaryAttr>(kGivenAttr)) {
      for (FunctionTraffic &f : functions)
        if (auto figures = given.getAs<DenseI64ArrayAttr>(f.name);
            figures && figures.size() == 3) {
          f.givenBytes = figures[0];
          f.givenUpdateElements = figures[1];
          f.givenModelStateBytes = figures[2];
        }
      module->removeAttr(kGivenAttr);
    }

    std::string error;
    std::unique_ptr<llvm::ToolOutputFile> file =
        openOutputFile(outputFile, &error);
    if (!file) {
      getOperation().emitError("zero-report: ") << error;
      return signalPassFailure();
    }
    if (format == ReportFormat::Json)
      printJson(functions, file->os());
    else
      printText(functions, file->os());
    file->keep();
    markAllAnalysesPreserved();
  }
};
} // namespace
