//===- CompressReduceScatter.cpp - reduce-scatters as int8 all-to-alls ----===//
//
// See Passes.td (zero-compress-reduce-scatter).
//
//===----------------------------------------------------------------------===//

#include "Boundary.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Utils/Tensors.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdio>
#include <numeric>

namespace zero {
#define GEN_PASS_DEF_ZEROCOMPRESSREDUCESCATTER
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// Why `op` stays exact, or nothing when it can be compressed.
std::optional<std::string> whyNotCompressible(ReduceScatterOp op, MeshOp mesh) {
  RankedTensorType type = op.getInput().getType();
  Type element = type.getElementType();
  if (!isa<Float32Type, BFloat16Type, Float16Type>(element)) {
    std::string why;
    llvm::raw_string_ostream os(why);
    os << "its elements are " << element
       << ": only f32, bf16 and f16 gradients are compressed";
    return why;
  }
  ReductionKind reduction = op.getReduction();
  if (reduction != ReductionKind::Sum && reduction != ReductionKind::Mean)
    return std::string("it reduces by ") +
           stringifyReductionKind(reduction).str() +
           ", which compression would not bound (sum and mean are)";
  if (op.getScatterDim() != 0)
    return "it splits dimension " + std::to_string(op.getScatterDim()) +
           "; only a split of dimension 0 has contiguous parts";
  if (!type.hasStaticShape())
    return std::string("its shape is not static");
  if (!mesh)
    return std::string("its mesh is not in scope");
  if (getGroupSize(mesh, op.getAxesAttr()) == 1)
    return std::string("its group has one rank: nothing to send");
  if (isa<AsyncOp>(op->getParentOp()))
    return std::string("it is already scheduled (zero.async); compress "
                       "before zero-schedule-overlap");
  return std::nullopt;
}

RankedTensorType withElement(RankedTensorType type, Type element) {
  return RankedTensorType::get(type.getShape(), element);
}

/// The format's name and, for blocks, their size: "int8 blocks of 512".
std::string describeFormat(int64_t bits, int64_t block) {
  if (bits == kBF16ExchangeBits)
    return getExchangeFormat(bits).str();
  return (getQuantFormat(bits) + " blocks of " + Twine(block)).str();
}

/// `value` with dimension `dim` moved to the front.
Value moveToFront(OpBuilder &b, Location loc, Value value, int64_t dim) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> permutation = {dim};
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (d != dim)
      permutation.push_back(d);
  SmallVector<int64_t> shape;
  for (int64_t d : permutation)
    shape.push_back(type.getDimSize(d));
  Value init = tensor::EmptyOp::create(b, loc, shape, type.getElementType());
  return linalg::TransposeOp::create(b, loc, value, init, permutation)
      .getResult()[0];
}

/// The sum over dimension 0 of `rows` (f32), in order: row 0 first.
Value sumRows(OpBuilder &b, Location loc, Value rows) {
  auto type = cast<RankedTensorType>(rows.getType());
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
  Value init = tensor::EmptyOp::create(b, loc, type.getShape().drop_front(),
                                       b.getF32Type());
  init = linalg::FillOp::create(b, loc, zero, init).getResult(0);
  auto reduce = linalg::ReduceOp::create(
      b, loc, ValueRange{rows}, ValueRange{init}, ArrayRef<int64_t>{0},
      [](OpBuilder &nb, Location nloc, ValueRange args) {
        // args: the row's element, then the sum so far.
        Value sum = arith::AddFOp::create(nb, nloc, args[1], args[0]);
        linalg::YieldOp::create(nb, nloc, sum);
      });
  return reduce.getResult(0);
}

/// `error` (f32) flat, with each element that is not finite (its block held
/// an infinity or a NaN) set to zero, so that it does not poison every
/// later step.
Value keepFinite(OpBuilder &b, Location loc, Value error) {
  auto type = cast<RankedTensorType>(error.getType());
  Value infinity = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          type, b.getF32FloatAttr(
                    APFloat::getInf(APFloat::IEEEsingle()).convertToFloat())));
  Value finite =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                            math::AbsFOp::create(b, loc, error), infinity);
  Value zeros = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, b.getF32FloatAttr(0)));
  return flatten(b, loc, arith::SelectOp::create(b, loc, finite, error, zeros));
}

/// One hop: `rows` (dimension 0 indexed by the destination's index along
/// `axis`) quantized in the format of `bits` (int8 or int4 blocks of
/// `block`, or bf16), exchanged all-to-all along `axis`, dequantized to f32
/// and summed over the senders.
///
/// With `residual` (error feedback: what this rank's exchanges of these rows
/// lost before, f32, flat), the rows sent are `rows + residual`, and `lost`
/// gets what this exchange loses of them, flat: `rows + residual -
/// dequantize(quantize(rows + residual))`, the very values the receivers
/// sum, so that over steps nothing is lost but the last residual. An
/// element that is not finite (its block held an infinity or a NaN) starts
/// again from zero rather than poison every later step.
Value exchangeQuantized(OpBuilder &b, Location loc, Value rows,
                        FlatSymbolRefAttr mesh, int64_t axis, int64_t block,
                        int64_t bits, Value residual, Value *lost) {
  auto type = cast<RankedTensorType>(rows.getType());
  RankedTensorType f32Rows = withElement(type, b.getF32Type());
  if (residual) {
    if (!type.getElementType().isF32())
      rows = arith::ExtFOp::create(b, loc, f32Rows, rows);
    rows = arith::AddFOp::create(b, loc, rows,
                                 unflatten(b, loc, residual, f32Rows));
  }
  DenseI64ArrayAttr axes = b.getDenseI64ArrayAttr({axis});
  if (bits == kBF16ExchangeBits) {
    // Rounded to bf16 (bf16 rows go as they are), widened on arrival.
    Value sent = rows;
    auto element = cast<RankedTensorType>(rows.getType()).getElementType();
    if (!element.isBF16()) {
      if (!element.isF32())
        rows = arith::ExtFOp::create(b, loc, f32Rows, rows);
      sent = arith::TruncFOp::create(b, loc, withElement(type, b.getBF16Type()),
                                     rows);
    }
    if (residual)
      *lost = keepFinite(
          b, loc,
          arith::SubFOp::create(b, loc, rows,
                                arith::ExtFOp::create(b, loc, f32Rows, sent)));
    Value exchanged =
        AllToAllOp::create(b, loc, sent.getType(), sent, mesh, axes);
    return sumRows(b, loc, arith::ExtFOp::create(b, loc, f32Rows, exchanged));
  }
  auto quantize = QuantizeOp::create(b, loc, rows, block, bits);
  if (residual) {
    Value sent = DequantizeOp::create(b, loc, f32Rows, quantize.getValues(),
                                      quantize.getScales(), block, bits);
    *lost = keepFinite(b, loc, arith::SubFOp::create(b, loc, rows, sent));
  }
  Value levels = AllToAllOp::create(b, loc, quantize.getValues().getType(),
                                    quantize.getValues(), mesh, axes);
  Value received = AllToAllOp::create(b, loc, quantize.getScales().getType(),
                                      quantize.getScales(), mesh, axes);
  Value dequantized =
      DequantizeOp::create(b, loc, f32Rows, levels, received, block, bits);
  return sumRows(b, loc, dequantized);
}

/// The elements of the rows each hop of `op`'s compressed form quantizes,
/// in the order of the hops (the innermost axis first): the whole input,
/// then at each later hop the partial sums the hop before left.
SmallVector<int64_t> getHopElements(ReduceScatterOp op, MeshOp mesh) {
  SmallVector<int64_t> axes = getGroupAxes(mesh, op.getAxesAttr());
  int64_t elements = op.getInput().getType().getNumElements();
  SmallVector<int64_t> hops;
  for (int64_t hop = static_cast<int64_t>(axes.size()) - 1; hop >= 0; --hop) {
    hops.push_back(elements);
    elements /= mesh.getShape()[axes[hop]];
  }
  return hops;
}

/// The compressed form of `op`, in hops along its group's axes, the last
/// (innermost) first. With `residuals` (error feedback), hop h adds
/// `residuals[h]` to the rows it sends and appends what it lost to `lost`.
Value compress(OpBuilder &b, ReduceScatterOp op, MeshOp mesh, int64_t block,
               int64_t bits, ValueRange residuals,
               SmallVectorImpl<Value> &lost) {
  Location loc = op.getLoc();
  RankedTensorType inputType = op.getInput().getType();
  RankedTensorType resultType = op.getResult().getType();
  SmallVector<int64_t> axes = getGroupAxes(mesh, op.getAxesAttr());
  int64_t part = resultType.getNumElements();

  // [A_0, ..., A_k-1, S]: rank g = (i_0, ..., i_k-1) in row-major order
  // keeps [i_0, ..., i_k-1, :].
  SmallVector<int64_t> shape;
  for (int64_t axis : axes)
    shape.push_back(mesh.getShape()[axis]);
  shape.push_back(part);
  Value rows =
      unflatten(b, loc, flatten(b, loc, op.getInput()),
                RankedTensorType::get(shape, inputType.getElementType()));

  for (int64_t hop = static_cast<int64_t>(axes.size()) - 1; hop >= 0; --hop) {
    if (hop > 0)
      rows = moveToFront(b, loc, rows, hop);
    size_t index = axes.size() - 1 - hop;
    Value residual = residuals.empty() ? Value() : residuals[index];
    Value hopLost;
    rows = exchangeQuantized(b, loc, rows, op.getMeshAttr(), axes[hop], block,
                             bits, residual, &hopLost);
    if (residual)
      lost.push_back(hopLost);
  }

  Value sum = rows; // [S], f32
  auto f32Part = RankedTensorType::get({part}, b.getF32Type());
  if (op.getReduction() == ReductionKind::Mean) {
    int64_t n = getGroupSize(mesh, op.getAxesAttr());
    Value count = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(f32Part,
                               b.getF32FloatAttr(static_cast<float>(n))));
    sum = arith::DivFOp::create(b, loc, sum, count);
  }
  Type element = resultType.getElementType();
  if (!element.isF32())
    sum = arith::TruncFOp::create(b, loc,
                                  RankedTensorType::get({part}, element), sum);
  return unflatten(b, loc, sum, resultType);
}

/// Where a compressed exchange's residuals live from one step to the next
/// (error feedback): carried round the `scf.for` loops around it (`loops`,
/// outermost first) from zeros made before the outermost; or, when it is
/// in the body of `function` itself, taken and returned by the function as
/// state that starts at zero.
struct ResidualHome {
  func::FuncOp function;
  SmallVector<scf::ForOp> loops;
};

/// `op`'s residuals' home, or why it has none.
FailureOr<ResidualHome> findResidualHome(ReduceScatterOp op, ModuleOp module,
                                         std::string &why) {
  ResidualHome home;
  for (Operation *parent = op->getParentOp(); parent;
       parent = parent->getParentOp()) {
    if (auto loop = dyn_cast<scf::ForOp>(parent)) {
      home.loops.insert(home.loops.begin(), loop);
      continue;
    }
    home.function = dyn_cast<func::FuncOp>(parent);
    if (!home.function) {
      why = "it sits in " + parent->getName().getStringRef().str() +
            ", which cannot carry a residual from one step to the next";
      return failure();
    }
    break;
  }
  if (!home.function) {
    why = "it is not in a func.func";
    return failure();
  }
  if (!home.loops.empty())
    return home;
  if (std::string fixed = whySignatureFixed(home.function, module);
      !fixed.empty()) {
    why = "@" + home.function.getSymName().str() + " " + fixed +
          ", so it cannot take and return the residual as state";
    return failure();
  }
  return home;
}

/// The residuals, flat f32 tensors of `elements`, where `op` can read them:
/// new region iter_args of each loop of `home` (the outermost's from zeros),
/// or new arguments of `home.function`, shards (#zero.shard) of a whole
/// with one row a rank, so that a launcher or a checkpoint keeps each
/// rank's own, marked to start at zero.
SmallVector<Value> openResiduals(ResidualHome &home, ArrayRef<int64_t> elements,
                                 MeshOp mesh, Location loc) {
  OpBuilder b(home.function.getContext());
  SmallVector<Value> residuals;
  if (home.loops.empty()) {
    func::FuncOp fn = home.function;
    for (int64_t count : elements) {
      auto type = RankedTensorType::get({count}, b.getF32Type());
      ShardAttr shard = getPerRankLayout(mesh, type);
      unsigned index = fn.getNumArguments();
      NamedAttrList attrs;
      attrs.set("zero.shard", shard);
      attrs.set(kStartsAtZeroAttrName, b.getUnitAttr());
      (void)fn.insertArgument(index, type, attrs.getDictionary(b.getContext()),
                              loc);
      residuals.push_back(fn.getArgument(index));
    }
    return residuals;
  }
  b.setInsertionPoint(home.loops.front());
  for (int64_t count : elements) {
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{count},
                                          b.getF32Type());
    auto fill = linalg::FillOp::create(b, loc, zero, empty);
    // What zero-report counts as a residual.
    fill->setAttr(kStartsAtZeroAttrName, b.getUnitAttr());
    residuals.push_back(fill.getResult(0));
  }
  IRRewriter rewriter(b.getContext());
  for (scf::ForOp &loop : home.loops) {
    rewriter.setInsertionPoint(loop);
    // Each iteration yields what it got, until closeResiduals sets it.
    auto carried = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, residuals, /*replaceInitOperandUsesInLoop=*/false,
        [](OpBuilder &, Location, ArrayRef<BlockArgument> args) {
          return SmallVector<Value>(args.begin(), args.end());
        }));
    loop = carried;
    residuals.assign(carried.getRegionIterArgs().take_back(elements.size()));
  }
  return residuals;
}

/// Hands each hop's new residual (`lost`) on: to the next iteration of each
/// loop of `home`, and the loops' last to nowhere; or to the function's
/// results, each marked as the next value of its argument.
void closeResiduals(ResidualHome &home, ValueRange residuals, ValueRange lost) {
  if (home.loops.empty()) {
    func::FuncOp fn = home.function;
    Builder b(fn.getContext());
    for (auto [residual, next] : llvm::zip(residuals, lost)) {
      unsigned argument = cast<BlockArgument>(residual).getArgNumber();
      unsigned index = fn.getNumResults();
      NamedAttrList attrs;
      attrs.set("zero.shard", fn.getArgAttr(argument, "zero.shard"));
      attrs.set(kStateOfAttrName, b.getI64IntegerAttr(argument));
      (void)fn.insertResult(index, next.getType(),
                            attrs.getDictionary(b.getContext()));
      fn.walk(
          [&](func::ReturnOp ret) { ret.getOperandsMutable().append(next); });
    }
    return;
  }
  SmallVector<Value> values(lost);
  for (scf::ForOp loop : llvm::reverse(home.loops)) {
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    unsigned first = yield.getNumOperands() - values.size();
    for (auto [i, value] : llvm::enumerate(values))
      yield.setOperand(first + i, value);
    values.assign(loop.getResults().take_back(values.size()).begin(),
                  loop.getResults().take_back(values.size()).end());
  }
}

/// Records the ops a builder creates in `block` (not those in the regions
/// of the ops it creates).
struct CreatedOps : public OpBuilder::Listener {
  explicit CreatedOps(Block *block) : block(block) {}
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (op->getBlock() == block)
      ops.push_back(op);
  }
  Block *block;
  SmallVector<Operation *> ops;
};

/// The cost model's seconds for `ops` (the compressed exchange): its
/// collectives' communication and the rest's computation, one after the
/// other.
double secondsOf(ArrayRef<Operation *> ops, const CostModel &model) {
  double seconds = 0;
  for (Operation *op : ops) {
    if (auto collective = dyn_cast<CollectiveOpInterface>(op))
      seconds += model.communicationSeconds(collective);
    else
      seconds += model.computeSeconds(op);
  }
  return seconds;
}

/// "<op> at <location>".
std::string describeOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName() << " at " << op->getLoc();
  return text;
}

/// Why what reads `op`'s sum needs it exact, or nothing: a full reduction
/// of it (a norm for clipping, LAMB's trust ratio, a sum) or an inf check,
/// reached through elementwise ops, reshapes and slices.
std::optional<std::string> whyConsumerNeedsExact(ReduceScatterOp op) {
  SmallVector<Value> work{op.getResult()};
  DenseSet<Value> seen;
  while (!work.empty()) {
    Value value = work.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (Operation *user : value.getUsers()) {
      auto compare = dyn_cast<arith::CmpFOp>(user);
      if (isa<math::IsInfOp, math::IsNaNOp, math::IsFiniteOp>(user) ||
          (compare && (compare.getPredicate() == arith::CmpFPredicate::UNO ||
                       compare.getPredicate() == arith::CmpFPredicate::ORD)))
        return "an inf check (" + describeOp(user) + ")";
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
        if (linalgOp.getNumReductionLoops() > 0)
          return "a full reduction, a norm or a sum (" + describeOp(user) + ")";
      } else if (!user->hasTrait<OpTrait::Elementwise>() &&
                 !isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
                      tensor::ExtractSliceOp, tensor::InsertSliceOp,
                      tensor::ConcatOp, tensor::PadOp>(user)) {
        continue;
      }
      llvm::append_range(work, user->getResults());
    }
  }
  return std::nullopt;
}

struct ZeroCompressReduceScatterPass
    : public zero::impl::ZeroCompressReduceScatterBase<
          ZeroCompressReduceScatterPass> {
  using ZeroCompressReduceScatterBase::ZeroCompressReduceScatterBase;

  /// Fails, with an error at the module, on options that do not go
  /// together.
  LogicalResult checkOptions() {
    Operation *module = getOperation();
    if (quantizeBlock <= 0)
      return module->emitError("zero-compress-reduce-scatter: quantize-block "
                               "must be positive, not ")
             << quantizeBlock.getValue();
    if (bits != 8 && bits != 4 && bits != kBF16ExchangeBits)
      return module->emitError("zero-compress-reduce-scatter: bits must be 8, "
                               "4 or 16 (bf16), not ")
             << bits.getValue();
    if (bits == 4 && quantizeBlock % 2)
      return module->emitError("zero-compress-reduce-scatter: int4 levels "
                               "go two a byte, so quantize-block must be "
                               "even, not ")
             << quantizeBlock.getValue();
    if (reduceErrorBudget < 0 || (reduceErrorBudget > 0 && !onlyWhereFaster))
      return module->emitError("zero-compress-reduce-scatter: "
                               "reduce-error-budget (")
             << reduceErrorBudget.getValue()
             << ") plans each exchange's format with only-where-faster "
                "(reduce-dtype=auto), and is not negative";
    if (reduceErrorBudget > 0 && quantizeBlock % 2)
      return module->emitError("zero-compress-reduce-scatter: a planner that "
                               "may pick int4 needs an even quantize-block, "
                               "not ")
             << quantizeBlock.getValue();
    return success();
  }

  /// The formats (bits an element) `op` may go in: the one asked for, or
  /// with a budget each whose bound, over `hops` hops, is within it.
  SmallVector<int64_t> candidateFormats(int64_t hops) {
    if (reduceErrorBudget <= 0)
      return {bits};
    SmallVector<int64_t> formats;
    for (int64_t format : {kBF16ExchangeBits, int64_t(8), int64_t(4)})
      if (hops * getExchangeHalfStepShare(format) <= reduceErrorBudget)
        formats.push_back(format);
    return formats;
  }

  void runOnOperation() override {
    if (failed(checkOptions()))
      return signalPassFailure();
    FailureOr<CostModelParameters> costs = getCostModelParameters(
        getOperation(), getArgument(), latencyMicroseconds, bandwidthGBps,
        gflops, gelementsPerSecond, reduceBandwidthGBps);
    if (failed(costs))
      return signalPassFailure();
    CostModel model(*costs);
    SmallVector<ReduceScatterOp> collectives;
    getOperation().walk([&](ReduceScatterOp op) { collectives.push_back(op); });
    // Asked to compress, and there is nothing to: say so, at each function.
    if (collectives.empty())
      getOperation().walk([](FunctionOpInterface function) {
        if (!function.isExternal())
          mlir::emitRemark(
              function.getLoc(),
              "zero-compress-reduce-scatter: no zero.reduce_scatter to "
              "compress (with zero-weight-update-sharding: every gradient "
              "was left replicated, or its group has one rank)");
      });
    for (ReduceScatterOp op : collectives) {
      MeshOp mesh = lookupMesh(op, op.getMeshAttr());
      if (std::optional<std::string> why = whyNotCompressible(op, mesh)) {
        mlir::emitRemark(op.getLoc(),
                         "zero-compress-reduce-scatter: left exact: ")
            << *why;
        continue;
      }
      if (onlyWhereFaster)
        if (std::optional<std::string> why = whyConsumerNeedsExact(op)) {
          mlir::emitRemark(op.getLoc(),
                           "zero-compress-reduce-scatter: left exact: its sum "
                           "feeds ")
              << *why << ", which the plan keeps exact";
          continue;
        }
      SmallVector<int64_t> hopElements = getHopElements(op, mesh);
      int64_t hops = static_cast<int64_t>(hopElements.size());
      SmallVector<int64_t> formats = candidateFormats(hops);
      char budgetText[32];
      std::snprintf(budgetText, sizeof(budgetText), "%g",
                    reduceErrorBudget.getValue());
      std::string budget = std::string("reduce-error-budget=") + budgetText;
      if (formats.empty()) {
        mlir::emitRemark(op.getLoc(),
                         "zero-compress-reduce-scatter: left exact: no format "
                         "is within ")
            << budget << " over " << hops
            << " hop(s) (a hop's bound, as a share of the largest "
               "magnitude of each contribution's block: bf16 1/256, int8 "
               "1/254, int4 1/14)";
        continue;
      }
      std::string noFeedback;
      FailureOr<ResidualHome> home = failure();
      if (errorFeedback)
        home = findResidualHome(op, getOperation(), noFeedback);

      // Each format's estimate, residuals' ops included (reading
      // placeholders), built and erased.
      double exactUs = 1e6 * model.communicationSeconds(op);
      SmallVector<double> estimates;
      for (int64_t format : formats) {
        CreatedOps created(op->getBlock());
        OpBuilder b(op, &created);
        SmallVector<Value> placeholders, lost;
        if (succeeded(home))
          for (int64_t count : hopElements)
            placeholders.push_back(tensor::EmptyOp::create(
                b, op.getLoc(), ArrayRef<int64_t>{count}, b.getF32Type()));
        compress(b, op, mesh, quantizeBlock, format, placeholders, lost);
        estimates.push_back(1e6 * secondsOf(created.ops, model));
        for (Operation *made : llvm::reverse(created.ops))
          made->erase();
      }
      size_t best = std::min_element(estimates.begin(), estimates.end()) -
                    estimates.begin();
      std::string considered;
      if (reduceErrorBudget > 0) {
        considered = "; planned within " + budget + ":";
        for (auto [format, us] : llvm::zip(formats, estimates))
          considered += llvm::formatv(" {0} {1:f1} us,",
                                      describeFormat(format, quantizeBlock), us)
                            .str();
        considered.pop_back();
      }
      int64_t format = formats[best];
      double compressedUs = estimates[best];
      if (onlyWhereFaster && compressedUs >= exactUs) {
        mlir::emitRemark(op.getLoc(),
                         "zero-compress-reduce-scatter: left exact: the cost "
                         "model gives ")
            << llvm::formatv("{0:f1}", exactUs).str() << " us exact against "
            << llvm::formatv("{0:f1}", compressedUs).str()
            << " us compressed in " << describeFormat(format, quantizeBlock)
            << considered;
        continue;
      }
      SmallVector<Value> residuals, lost;
      if (succeeded(home))
        residuals = openResiduals(*home, hopElements, mesh, op.getLoc());
      OpBuilder b(op);
      Value compressed =
          compress(b, op, mesh, quantizeBlock, format, residuals, lost);
      std::string feedback;
      if (succeeded(home)) {
        closeResiduals(*home, residuals, lost);
        feedback =
            llvm::formatv(
                "; with error feedback: what a rank's exchange loses is sent "
                "in its next one ({0} residual(s), {1} f32 elements a rank, "
                "{2})",
                hopElements.size(),
                std::accumulate(hopElements.begin(), hopElements.end(),
                                int64_t(0)),
                home->loops.empty()
                    ? "taken and returned by @" +
                          home->function.getSymName().str() + ", from zeros"
                    : std::string("carried by the loop from zeros"))
                .str();
      } else if (errorFeedback) {
        feedback = "; without error feedback: " + noFeedback;
      }
      mlir::emitRemark(op.getLoc(),
                       "zero-compress-reduce-scatter: exchanged as ")
          << describeFormat(format, quantizeBlock) << " over "
          << getGroupSize(mesh, op.getAxesAttr())
          << " ranks; each element is within the sum of "
          << describeExchangeBound(format)
          << " of its contributions, not exact (cost model: "
          << llvm::formatv("{0:f1}", compressedUs).str() << " us against "
          << llvm::formatv("{0:f1}", exactUs).str() << " us exact)"
          << considered << feedback;
      op.replaceAllUsesWith(compressed);
      op.erase();
    }
  }
};

} // namespace
