//===- ChecksToRuntime.cpp - cf.assert as calls of zero_rt_check ----------===//
//
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/InferIntRangeInterface.h"
#include "zero/Conversion/Passes.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"

namespace zero {
#define GEN_PASS_DEF_ZEROCHECKSTORUNTIME
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Integer ranges of the values a check's condition is computed from,
/// inferred on demand along its definitions only: upstream's
/// InferIntRangeInterface for each op, the bounds of scf.for and
/// scf.parallel for their induction variables, the branches of scf.if, and
/// the static layout behind memref.extract_strided_metadata. A value it
/// cannot follow gets its type's whole range, so a range is never narrower
/// than the values the program computes. Upstream's int-range-optimizations
/// proves the same checks, but its data-flow solver visits the whole module
/// and costs more than the checks it removes.
class CheckProver {
public:
  /// Whether `condition` holds wherever it is computed.
  bool alwaysHolds(Value condition) {
    std::optional<APInt> value = rangeOf(condition, 0).getConstantValue();
    return value && value->isOne();
  }

private:
  /// Deeper than this, a value gets its type's whole range.
  static constexpr unsigned kMaxDepth = 32;

  ConstantIntRanges rangeOf(Value value, unsigned depth) {
    auto known = ranges.find(value);
    if (known != ranges.end())
      return known->second;
    ConstantIntRanges range = infer(value, depth);
    ranges.try_emplace(value, range);
    return range;
  }

  static ConstantIntRanges wholeRange(Value value) {
    return IntegerValueRange::getMaxRange(value).getValue();
  }

  ConstantIntRanges infer(Value value, unsigned depth) {
    if (depth > kMaxDepth)
      return wholeRange(value);
    if (auto argument = dyn_cast<BlockArgument>(value))
      return inferArgument(argument, depth);
    Operation *op = value.getDefiningOp();
    if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(op))
      if (std::optional<int64_t> constant = staticMetadata(metadata, value))
        return ConstantIntRanges::constant(
            APInt(wholeRange(value).smin().getBitWidth(), *constant,
                  /*isSigned=*/true));
    if (auto branch = dyn_cast<scf::IfOp>(op))
      return inferIfResult(branch, cast<OpResult>(value), depth);
    auto inferable = dyn_cast<InferIntRangeInterface>(op);
    if (!inferable)
      return wholeRange(value);
    SmallVector<IntegerValueRange> operands;
    for (Value operand : op->getOperands()) {
      if (!operand.getType().isIntOrIndex()) {
        operands.emplace_back();
        continue;
      }
      operands.emplace_back(rangeOf(operand, depth + 1));
    }
    std::optional<ConstantIntRanges> result;
    inferable.inferResultRangesFromOptional(
        operands, [&](Value of, const IntegerValueRange &range) {
          if (of == value && !range.isUninitialized())
            result = range.getValue();
        });
    return result ? *result : wholeRange(value);
  }

  /// An induction variable of a loop that counts up, signed, from its lower
  /// bound while below its upper bound; where the loop never runs, nothing
  /// in its body needs a range.
  ConstantIntRanges inferArgument(BlockArgument argument, unsigned depth) {
    Operation *owner = argument.getOwner()->getParentOp();
    Value lower, upper, step;
    if (auto loop = dyn_cast<scf::ForOp>(owner)) {
      if (argument != loop.getInductionVar() || loop.getUnsignedCmp())
        return wholeRange(argument);
      lower = loop.getLowerBound();
      upper = loop.getUpperBound();
      step = loop.getStep();
    } else if (auto loop = dyn_cast<scf::ParallelOp>(owner)) {
      auto ivs = loop.getInductionVars();
      auto position = llvm::find(ivs, argument);
      if (position == ivs.end())
        return wholeRange(argument);
      size_t i = position - ivs.begin();
      lower = loop.getLowerBound()[i];
      upper = loop.getUpperBound()[i];
      step = loop.getStep()[i];
    } else {
      return wholeRange(argument);
    }
    ConstantIntRanges lowerRange = rangeOf(lower, depth + 1);
    ConstantIntRanges upperRange = rangeOf(upper, depth + 1);
    ConstantIntRanges stepRange = rangeOf(step, depth + 1);
    if (!stepRange.smin().isStrictlyPositive() ||
        upperRange.smax().sle(lowerRange.smin()))
      return wholeRange(argument);
    return ConstantIntRanges::fromSigned(lowerRange.smin(),
                                         upperRange.smax() - 1);
  }

  /// A result of scf.if: what the branch taken yields, or either branch
  /// where the condition is not known.
  ConstantIntRanges inferIfResult(scf::IfOp branch, OpResult result,
                                  unsigned depth) {
    if (branch.getElseRegion().empty())
      return wholeRange(result);
    unsigned i = result.getResultNumber();
    std::optional<APInt> taken =
        rangeOf(branch.getCondition(), depth + 1).getConstantValue();
    ConstantIntRanges thenRange =
        rangeOf(branch.thenYield().getOperand(i), depth + 1);
    if (taken && taken->isOne())
      return thenRange;
    ConstantIntRanges elseRange =
        rangeOf(branch.elseYield().getOperand(i), depth + 1);
    if (taken)
      return elseRange;
    return thenRange.rangeUnion(elseRange);
  }

  /// The offset, size or stride `value` of a memref whose layout is static,
  /// in its own type or in the type of what memref.cast made it from (the
  /// checks of a cast read the metadata of its source cast to a fully
  /// dynamic type).
  static std::optional<int64_t>
  staticMetadata(memref::ExtractStridedMetadataOp metadata, Value value) {
    Value source = metadata.getSource();
    while (auto cast = source.getDefiningOp<memref::CastOp>())
      source = cast.getSource();
    auto type = dyn_cast<MemRefType>(source.getType());
    if (!type)
      return std::nullopt;
    SmallVector<int64_t> strides;
    int64_t offset;
    if (failed(type.getStridesAndOffset(strides, offset)))
      return std::nullopt;
    int64_t constant = ShapedType::kDynamic;
    if (value == metadata.getOffset())
      constant = offset;
    for (auto [size, result] : llvm::zip(type.getShape(), metadata.getSizes()))
      if (value == result)
        constant = size;
    for (auto [stride, result] : llvm::zip(strides, metadata.getStrides()))
      if (value == result)
        constant = stride;
    if (ShapedType::isDynamic(constant))
      return std::nullopt;
    return constant;
  }

  DenseMap<Value, ConstantIntRanges> ranges;
};

/// The message of `check` as a constant NUL-terminated string.
Value messagePointer(OpBuilder &b, cf::AssertOp check, unsigned index,
                     zero::RuntimeCallBuilder &calls) {
  StringRef text = check.getMsg();
  SmallVector<int8_t> bytes(text.begin(), text.end());
  bytes.push_back(0);
  return calls.constantPointer(
      b, check.getLoc(), "__zero_check_" + std::to_string(index),
      DenseIntElementsAttr::get(
          RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                b.getI8Type()),
          ArrayRef<int8_t>(bytes)));
}

struct ZeroChecksToRuntimePass
    : public zero::impl::ZeroChecksToRuntimeBase<ZeroChecksToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    zero::RuntimeCallBuilder calls(module);
    // A check the program passes wherever it runs costs compile and run
    // time and catches nothing: most of what generate-runtime-verification
    // emits is an index of a loop that counts within its buffer.
    CheckProver prover;
    SmallVector<cf::AssertOp> checks;
    module.walk([&](cf::AssertOp check) {
      if (prover.alwaysHolds(check.getArg()))
        check.erase();
      else
        checks.push_back(check);
    });
    if (checks.empty())
      return;
    OpBuilder declarations(module.getContext());
    func::FuncOp checkFn =
        calls.declare(declarations, zero::RuntimeFunction::zero_rt_check);
    for (auto [index, check] : llvm::enumerate(checks)) {
      OpBuilder b(check);
      Value holds = arith::ExtUIOp::create(b, check.getLoc(), b.getI32Type(),
                                           check.getArg());
      func::CallOp::create(
          b, check.getLoc(), checkFn,
          ValueRange{holds, messagePointer(b, check, index, calls)});
      check.erase();
    }
  }
};

} // namespace
