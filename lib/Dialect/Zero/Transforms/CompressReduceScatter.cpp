//===- CompressReduceScatter.cpp - reduce-scatters as int8 all-to-alls ----===//
//
// See Passes.td (zero-compress-reduce-scatter).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Utils/Tensors.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

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

/// One hop: `rows` (dimension 0 indexed by the destination's index along
/// `axis`) quantized, exchanged all-to-all along `axis`, dequantized to f32
/// and summed over the senders.
Value exchangeQuantized(OpBuilder &b, Location loc, Value rows,
                        FlatSymbolRefAttr mesh, int64_t axis, int64_t block,
                        int64_t bits) {
  auto type = cast<RankedTensorType>(rows.getType());
  auto quantize = QuantizeOp::create(b, loc, rows, block, bits);
  DenseI64ArrayAttr axes = b.getDenseI64ArrayAttr({axis});
  Value levels = AllToAllOp::create(b, loc, quantize.getValues().getType(),
                                    quantize.getValues(), mesh, axes);
  Value received = AllToAllOp::create(b, loc, quantize.getScales().getType(),
                                      quantize.getScales(), mesh, axes);
  Value dequantized = DequantizeOp::create(
      b, loc, withElement(type, b.getF32Type()), levels, received, block, bits);
  return sumRows(b, loc, dequantized);
}

/// The compressed form of `op`, in hops along its group's axes, the last
/// (innermost) first.
Value compress(OpBuilder &b, ReduceScatterOp op, MeshOp mesh, int64_t block,
               int64_t bits) {
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
    rows = exchangeQuantized(b, loc, rows, op.getMeshAttr(), axes[hop], block,
                             bits);
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

struct ZeroCompressReduceScatterPass
    : public zero::impl::ZeroCompressReduceScatterBase<
          ZeroCompressReduceScatterPass> {
  using ZeroCompressReduceScatterBase::ZeroCompressReduceScatterBase;

  void runOnOperation() override {
    if (quantizeBlock <= 0) {
      getOperation().emitError("zero-compress-reduce-scatter: quantize-block "
                               "must be positive, not ")
          << quantizeBlock.getValue();
      return signalPassFailure();
    }
    if (bits != 8 && bits != 4) {
      getOperation().emitError("zero-compress-reduce-scatter: bits must be 8 "
                               "or 4, not ")
          << bits.getValue();
      return signalPassFailure();
    }
    if (bits == 4 && quantizeBlock % 2) {
      getOperation().emitError("zero-compress-reduce-scatter: int4 levels "
                               "go two a byte, so quantize-block must be "
                               "even, not ")
          << quantizeBlock.getValue();
      return signalPassFailure();
    }
    StringRef format = getQuantFormat(bits);
    int64_t halfSteps = 2 * getQuantLevels(bits);
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
          function.emitRemark(
              "zero-compress-reduce-scatter: no zero.reduce_scatter to "
              "compress (with zero-weight-update-sharding: every gradient "
              "was left replicated, or its group has one rank)");
      });
    for (ReduceScatterOp op : collectives) {
      MeshOp mesh = lookupMesh(op, op.getMeshAttr());
      if (std::optional<std::string> why = whyNotCompressible(op, mesh)) {
        op.emitRemark("zero-compress-reduce-scatter: left exact: ") << *why;
        continue;
      }
      CreatedOps created(op->getBlock());
      OpBuilder b(op, &created);
      Value compressed = compress(b, op, mesh, quantizeBlock, bits);
      int64_t groupSize = getGroupSize(mesh, op.getAxesAttr());
      double exactUs = 1e6 * model.communicationSeconds(op);
      double compressedUs = 1e6 * secondsOf(created.ops, model);
      if (onlyWhereFaster && compressedUs >= exactUs) {
        for (Operation *made : llvm::reverse(created.ops))
          made->erase();
        op.emitRemark("zero-compress-reduce-scatter: left exact: the cost "
                      "model gives ")
            << llvm::formatv("{0:f1}", exactUs).str() << " us exact against "
            << llvm::formatv("{0:f1}", compressedUs).str()
            << " us compressed in " << format << " blocks of "
            << quantizeBlock.getValue();
        continue;
      }
      op.emitRemark("zero-compress-reduce-scatter: exchanged as ")
          << format << " blocks of " << quantizeBlock.getValue() << " over "
          << groupSize << " ranks; each element is within the sum of "
          << "max|block| / " << halfSteps
          << " of its contributions, not exact (cost model: "
          << llvm::formatv("{0:f1}", compressedUs).str() << " us against "
          << llvm::formatv("{0:f1}", exactUs).str() << " us exact)";
      op.replaceAllUsesWith(compressed);
      op.erase();
    }
  }
};

} // namespace
