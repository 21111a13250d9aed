//===- ExpandTruncF.cpp - f64 to bf16 through f32 rounded to odd ----------===//
//
// LLVM lowers a double-to-bfloat truncation to a call of __truncdfbf2,
// which neither the JIT nor the artifacts' C runtime provides. This pass
// writes it as truncations it can lower, with the same result. See
// Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Transforms/WalkPatternRewriteDriver.h"
#include "zero/Target/CPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROEXPANDTRUNCF
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// `type` (a scalar, vector or tensor type) with element type `element`.
Type withElement(Type type, Type element) {
  if (auto shaped = dyn_cast<ShapedType>(type))
    return shaped.clone(element);
  return element;
}

/// A constant of `type`'s shape holding integer `value`.
Value intConstant(OpBuilder &b, Location loc, Type type, int64_t value) {
  Type element = getElementTypeOrSelf(type);
  TypedAttr attr = b.getIntegerAttr(element, value);
  if (auto shaped = dyn_cast<ShapedType>(type))
    attr = SplatElementsAttr::get(shaped, attr);
  return arith::ConstantOp::create(b, loc, attr);
}

/// f64 to bf16 as f64 to f32 rounded to odd, then f32 to bf16 rounded to
/// nearest even. Rounding to odd keeps the information a second rounding
/// needs: with f32's 24 bits against bf16's 8, the two roundings give the
/// correctly rounded result of one (Boldo and Melquiond).
struct TruncF64ToBF16 : public OpRewritePattern<arith::TruncFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::TruncFOp op,
                                PatternRewriter &rewriter) const override {
    Value x = op.getIn();
    if (!getElementTypeOrSelf(x).isF64() ||
        !getElementTypeOrSelf(op.getType()).isBF16())
      return failure();
    Location loc = op.getLoc();
    Type f32 = withElement(x.getType(), rewriter.getF32Type());
    Type i32 = withElement(x.getType(), rewriter.getI32Type());
    // Rounded to nearest, then moved one step toward zero where that went
    // away from zero: rounded toward zero.
    Value nearest = arith::TruncFOp::create(rewriter, loc, f32, x);
    Value back = arith::ExtFOp::create(rewriter, loc, x.getType(), nearest);
    Value away =
        arith::CmpFOp::create(rewriter, loc, arith::CmpFPredicate::OGT,
                              math::AbsFOp::create(rewriter, loc, back),
                              math::AbsFOp::create(rewriter, loc, x));
    Value bits = arith::BitcastOp::create(rewriter, loc, i32, nearest);
    Value one = intConstant(rewriter, loc, i32, 1);
    Value towardZero = arith::SelectOp::create(
        rewriter, loc, away, arith::SubIOp::create(rewriter, loc, bits, one),
        bits);
    // Inexact (or NaN): the last bit set, which no rounding of the
    // truncated value can be confused with.
    Value inexact = arith::CmpFOp::create(rewriter, loc,
                                          arith::CmpFPredicate::UNE, back, x);
    Value odd = arith::SelectOp::create(
        rewriter, loc, inexact,
        arith::OrIOp::create(rewriter, loc, towardZero, one), towardZero);
    Value rounded = arith::BitcastOp::create(rewriter, loc, f32, odd);
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), rounded);
    return success();
  }
};

struct ZeroExpandTruncFPass
    : public zero::impl::ZeroExpandTruncFBase<ZeroExpandTruncFPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<TruncF64ToBF16>(&getContext());
    walkAndApplyPatterns(getOperation(), std::move(patterns));
  }
};

} // namespace
