//===- QuantizeToLinalg.cpp - block quantization to linalg ----------------===//
//
// Each block becomes a row of a (blocks, block) view of the last dimension,
// so that the largest magnitude is a reduction over the view's last
// dimension and a scale broadcasts along it: plain linalg that every
// lowering, the GPU's included, runs with the blocks in parallel.
//
//===----------------------------------------------------------------------===//

#include "zero/Conversion/QuantizeToLinalg/QuantizeToLinalg.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Utils/Utils.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "zero/Conversion/Passes.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

namespace zero {
#define GEN_PASS_DEF_ZEROQUANTIZETOLINALG
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

RankedTensorType withShape(RankedTensorType type, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, type.getElementType());
}

/// The shape of `type` with its last dimension as (blocks, block).
SmallVector<int64_t> blockedShape(RankedTensorType type, int64_t block) {
  SmallVector<int64_t> shape(type.getShape().drop_back());
  shape.push_back(getNumQuantBlocks(type.getShape().back(), block));
  shape.push_back(block);
  return shape;
}

/// Groups every dimension alone but the last two: (blocks, block).
SmallVector<ReassociationIndices> blockReassociation(int64_t rank) {
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d + 1 < rank; ++d)
    groups.push_back({d});
  groups.push_back({rank - 1, rank});
  return groups;
}

/// `value` with its last dimension padded with zeros to whole blocks and
/// viewed as (blocks, block).
Value blockView(OpBuilder &b, Location loc, Value value, int64_t block) {
  auto type = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> blocked = blockedShape(type, block);
  SmallVector<int64_t> padded(type.getShape());
  padded.back() = blocked[blocked.size() - 2] * block;
  if (padded.back() != type.getShape().back()) {
    Value zero =
        arith::ConstantOp::create(b, loc, b.getZeroAttr(type.getElementType()));
    value = tensor::createPadHighOp(withShape(type, padded), value, zero,
                                    /*nofold=*/false, loc, b);
  }
  return tensor::ExpandShapeOp::create(b, loc, withShape(type, blocked), value,
                                       blockReassociation(type.getRank()));
}

/// The inverse of blockView: `blocked` as `type`, the padding cut off.
Value unblockView(OpBuilder &b, Location loc, Value blocked,
                  RankedTensorType type) {
  auto blockedType = cast<RankedTensorType>(blocked.getType());
  SmallVector<int64_t> padded(type.getShape());
  int64_t rank = type.getRank();
  padded.back() =
      blockedType.getShape()[rank - 1] * blockedType.getShape()[rank];
  Value value =
      tensor::CollapseShapeOp::create(b, loc, withShape(blockedType, padded),
                                      blocked, blockReassociation(rank));
  if (padded.back() == type.getShape().back())
    return value;
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : type.getShape())
    sizes.push_back(b.getIndexAttr(size));
  return tensor::ExtractSliceOp::create(b, loc, type, value, offsets, sizes,
                                        strides);
}

/// Over the blocked view's loops, the map of a blocked operand and of a
/// per-block one (the scales: the view without its last dimension).
AffineMap blockedMap(MLIRContext *context, int64_t loops) {
  return AffineMap::getMultiDimIdentityMap(loops, context);
}
AffineMap perBlockMap(MLIRContext *context, int64_t loops) {
  return blockedMap(context, loops).dropResult(loops - 1);
}

Value toF32(OpBuilder &b, Location loc, Value x) {
  Type f32 = b.getF32Type();
  if (x.getType() == f32)
    return x;
  if (x.getType().getIntOrFloatBitWidth() < 32)
    return arith::ExtFOp::create(b, loc, f32, x);
  return arith::TruncFOp::create(b, loc, f32, x);
}

Value fromF32(OpBuilder &b, Location loc, Value x, Type type) {
  if (type == x.getType())
    return x;
  if (type.getIntOrFloatBitWidth() < 32)
    return arith::TruncFOp::create(b, loc, type, x);
  return arith::ExtFOp::create(b, loc, type, x);
}

/// 4-bit levels (in [-7, 7], an i8 each) two a byte: element 2k of the
/// last dimension in the low half of byte k, element 2k + 1 in the high.
/// The last dimension (a block) is even.
Value packPairs(OpBuilder &b, Location loc, Value levels) {
  auto type = cast<RankedTensorType>(levels.getType());
  int64_t loops = type.getRank();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() /= 2;
  MLIRContext *context = b.getContext();
  AffineMap packed = AffineMap::getMultiDimIdentityMap(loops, context);
  auto half = [&](int64_t offset) {
    SmallVector<AffineExpr> results(packed.getResults());
    results.back() = results.back() * 2 + offset;
    return AffineMap::get(loops, 0, results, context);
  };
  Type i8 = b.getI8Type();
  return linalg::GenericOp::create(
             b, loc, TypeRange{RankedTensorType::get(shape, i8)},
             ValueRange{levels, levels},
             ValueRange{tensor::EmptyOp::create(b, loc, shape, i8)},
             SmallVector<AffineMap>{half(0), half(1), packed},
             SmallVector<utils::IteratorType>(loops,
                                              utils::IteratorType::parallel),
             [i8](OpBuilder &b, Location loc, ValueRange args) {
               Value mask =
                   arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, 15));
               Value four =
                   arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, 4));
               Value low = arith::AndIOp::create(b, loc, args[0], mask);
               Value high = arith::ShLIOp::create(b, loc, args[1], four);
               linalg::YieldOp::create(
                   b, loc, ValueRange{arith::OrIOp::create(b, loc, low, high)});
             })
      .getResult(0);
}

/// The level of element `index` (of the last dimension) from `byte`, which
/// holds it and its pair: its half, sign extended.
Value unpackLevel(OpBuilder &b, Location loc, Value byte, Value index) {
  Type i8 = b.getI8Type();
  Value two = arith::ConstantIndexOp::create(b, loc, 2);
  Value odd = arith::IndexCastOp::create(
      b, loc, i8, arith::RemUIOp::create(b, loc, index, two));
  Value four = arith::ConstantOp::create(b, loc, b.getIntegerAttr(i8, 4));
  // Low half: shifted up 4, then down 4 with its sign; high half: down 4.
  Value up = arith::ShLIOp::create(
      b, loc, byte,
      arith::SubIOp::create(b, loc, four,
                            arith::MulIOp::create(b, loc, odd, four)));
  return arith::ShRSIOp::create(b, loc, up, four);
}

struct QuantizeToLinalg : OpRewritePattern<QuantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(QuantizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    MLIRContext *context = getContext();
    auto inputType = op.getInput().getType();
    auto scalesType = op.getScales().getType();
    int64_t rank = inputType.getRank();
    int64_t loops = rank + 1;
    Value blocked = blockView(rewriter, loc, op.getInput(), op.getBlock());
    auto blockedType = cast<RankedTensorType>(blocked.getType());

    // Each block's largest magnitude; the zero it starts from is no larger
    // than any magnitude, and a NaN wins (maximumf).
    Value zeros =
        linalg::FillOp::create(
            rewriter, loc,
            ValueRange{arith::ConstantOp::create(rewriter, loc,
                                                 rewriter.getF32FloatAttr(0))},
            ValueRange{tensor::EmptyOp::create(
                rewriter, loc, scalesType.getShape(), rewriter.getF32Type())})
            .getResult(0);
    SmallVector<utils::IteratorType> reduceIterators(
        loops, utils::IteratorType::parallel);
    reduceIterators.back() = utils::IteratorType::reduction;
    Value largest =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{scalesType}, ValueRange{blocked},
            ValueRange{zeros},
            SmallVector<AffineMap>{blockedMap(context, loops),
                                   perBlockMap(context, loops)},
            reduceIterators,
            [](OpBuilder &b, Location loc, ValueRange args) {
              Value magnitude =
                  math::AbsFOp::create(b, loc, toF32(b, loc, args[0]));
              linalg::YieldOp::create(b, loc,
                                      ValueRange{arith::MaximumFOp::create(
                                          b, loc, magnitude, args[1])});
            })
            .getResult(0);

    SmallVector<utils::IteratorType> parallel(loops,
                                              utils::IteratorType::parallel);
    AffineMap perBlock = AffineMap::getMultiDimIdentityMap(rank, context);
    double top = static_cast<double>(getQuantLevels(op.getBits()));
    Value scales =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{scalesType}, ValueRange{largest},
            ValueRange{tensor::EmptyOp::create(
                rewriter, loc, scalesType.getShape(), rewriter.getF32Type())},
            SmallVector<AffineMap>{perBlock, perBlock},
            SmallVector<utils::IteratorType>(rank,
                                             utils::IteratorType::parallel),
            [top](OpBuilder &b, Location loc, ValueRange args) {
              Value levels =
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(top));
              linalg::YieldOp::create(
                  b, loc,
                  ValueRange{arith::DivFOp::create(b, loc, args[0], levels)});
            })
            .getResult(0);

    // x / scale to the nearest level; NaN (0 / 0 in a block of zeros) is 0.
    Type i8 = rewriter.getI8Type();
    Value levelsBlocked =
        linalg::GenericOp::create(
            rewriter, loc,
            TypeRange{RankedTensorType::get(blockedType.getShape(), i8)},
            ValueRange{scales, blocked},
            ValueRange{tensor::EmptyOp::create(rewriter, loc,
                                               blockedType.getShape(), i8)},
            SmallVector<AffineMap>{perBlockMap(context, loops),
                                   blockedMap(context, loops),
                                   blockedMap(context, loops)},
            parallel,
            [i8, top](OpBuilder &b, Location loc, ValueRange args) {
              Value ratio = arith::DivFOp::create(
                  b, loc, toF32(b, loc, args[1]), args[0]);
              Value rounded = math::RoundEvenOp::create(b, loc, ratio);
              Value highest =
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(top));
              Value lowest =
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(-top));
              Value clamped = arith::MaximumFOp::create(
                  b, loc, arith::MinimumFOp::create(b, loc, rounded, highest),
                  lowest);
              Value isNaN = arith::CmpFOp::create(
                  b, loc, arith::CmpFPredicate::UNO, clamped, clamped);
              Value zero =
                  arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
              Value level =
                  arith::SelectOp::create(b, loc, isNaN, zero, clamped);
              linalg::YieldOp::create(
                  b, loc,
                  ValueRange{arith::FPToSIOp::create(b, loc, i8, level)});
            })
            .getResult(0);
    if (op.getBits() == 4)
      levelsBlocked = packPairs(rewriter, loc, levelsBlocked);
    rewriter.replaceOp(op, {unblockView(rewriter, loc, levelsBlocked,
                                        op.getValues().getType()),
                            scales});
    return success();
  }
};

struct DequantizeToLinalg : OpRewritePattern<DequantizeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(DequantizeOp op,
                                PatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    auto resultType = op.getResult().getType();
    Type element = resultType.getElementType();
    int64_t loops = resultType.getRank() + 1;
    bool packed = op.getBits() == 4;
    // 4-bit levels: a block of the values is half a block of elements.
    Value blocked = blockView(rewriter, loc, op.getValues(),
                              packed ? op.getBlock() / 2 : op.getBlock());
    SmallVector<int64_t> shape(
        cast<RankedTensorType>(blocked.getType()).getShape());
    shape.back() = op.getBlock();
    AffineMap levels = blockedMap(getContext(), loops);
    if (packed) {
      SmallVector<AffineExpr> results(levels.getResults());
      results.back() = results.back().floorDiv(2);
      levels = AffineMap::get(loops, 0, results, getContext());
    }
    Value floats =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{RankedTensorType::get(shape, element)},
            ValueRange{op.getScales(), blocked},
            ValueRange{tensor::EmptyOp::create(rewriter, loc, shape, element)},
            SmallVector<AffineMap>{perBlockMap(getContext(), loops), levels,
                                   blockedMap(getContext(), loops)},
            SmallVector<utils::IteratorType>(loops,
                                             utils::IteratorType::parallel),
            [element, packed, loops](OpBuilder &b, Location loc,
                                     ValueRange args) {
              Value stored = args[1];
              if (packed)
                stored = unpackLevel(
                    b, loc, stored, linalg::IndexOp::create(b, loc, loops - 1));
              Value level =
                  arith::SIToFPOp::create(b, loc, b.getF32Type(), stored);
              Value value = arith::MulFOp::create(b, loc, level, args[0]);
              linalg::YieldOp::create(
                  b, loc, ValueRange{fromF32(b, loc, value, element)});
            })
            .getResult(0);
    rewriter.replaceOp(op, unblockView(rewriter, loc, floats, resultType));
    return success();
  }
};

struct ZeroQuantizeToLinalgPass
    : public zero::impl::ZeroQuantizeToLinalgBase<ZeroQuantizeToLinalgPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateQuantizeToLinalgPatterns(patterns);
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace

void zero::populateQuantizeToLinalgPatterns(RewritePatternSet &patterns) {
  patterns.add<QuantizeToLinalg, DequantizeToLinalg>(patterns.getContext());
}
