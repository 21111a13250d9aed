//===- GemmCalls.cpp - matmuls as calls of a GEMM through the runtime -----===//
//
// On the GPU a matmul is a library call (cuBLAS, through the runtime), not a
// loop nest of our own: see Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Loops/NormalizeMatmuls.h"
#include "zero/Target/GPU/Passes.h"
#include "zero/Utils/Buffers.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGEMMCALLS
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// How a GEMM reads one input of a matmul: the buffer, whether it holds the
/// transpose of the operand the GEMM multiplies (an indexing map that
/// transposes it, or a column-major layout, but not both), and which of its
/// strides is the leading dimension.
struct GemmInput {
  Value buffer;
  bool transposed = false;
  unsigned leadingStride = 0;
};

/// The GEMM's reading of input `index` of `op`, or why it has none. A map
/// that transposes the operand and a column-major buffer cancel out.
FailureOr<GemmInput> gemmInput(linalg::MatmulOp op, unsigned index,
                               std::string &why) {
  // A reads (m, k), B (k, n): iterations d0 = m, d1 = n, d2 = k.
  AffineMap map = op.getIndexingMapsArray()[index];
  std::optional<bool> byMap = index == 0 ? zero::readsTransposed(map, 0, 2)
                                         : zero::readsTransposed(map, 2, 1);
  if (!byMap) {
    why = "its indexing maps broadcast an operand";
    return failure();
  }
  Value buffer = op.getInputs()[index];
  auto [strides, offset] =
      cast<MemRefType>(buffer.getType()).getStridesAndOffset();
  // Unit inner stride, or one known only at run time (checked there):
  // row-major, led by the row stride.
  if (strides[1] == 1 || ShapedType::isDynamic(strides[1]))
    return GemmInput{buffer, *byMap, 0};
  if (strides[0] == 1)
    return GemmInput{buffer, !*byMap, 1};
  why = "an operand is neither row- nor column-major";
  return failure();
}

/// Why `op` cannot become a GEMM call ("" when it can).
std::string whyNotGemm(linalg::MatmulOp op) {
  if (!op.hasPureBufferSemantics())
    return "it is not on buffers";
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || type.getRank() != 2)
      return "an operand is not a 2-D buffer";
  }
  std::string why;
  for (unsigned input : {0u, 1u})
    if (failed(gemmInput(op, input, why)))
      return why;
  if (std::optional<bool> c =
          zero::readsTransposed(op.getIndexingMapsArray()[2], 0, 1);
      !c || *c)
    return "its result is not indexed (m, n)";
  // A dynamic inner stride is checked at run time (replaceWithCall).
  int64_t inner = cast<MemRefType>(op.getOutputs()[0].getType())
                      .getStridesAndOffset()
                      .first[1];
  if (inner != 1 && !ShapedType::isDynamic(inner))
    return "its result's rows are not contiguous";
  Type a = getElementTypeOrSelf(op.getInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getOutputs()[0].getType());
  bool same = a == b && a == c;
  bool halfIntoFloat = a == b && (a.isBF16() || a.isF16()) && c.isF32();
  if (!(same && (a.isF32() || a.isF64() || a.isBF16() || a.isF16())) &&
      !halfIntoFloat)
    return "there is no GEMM for these element types (cuBLAS's and the "
           "runtime's: f32, f64, and bf16 or f16 into themselves or f32)";
  return "";
}

/// The fill of +0.0 that makes `op`'s C just before it, in its block, with
/// nothing between that touches C's buffer: the host's GEMM then need not
/// read C (its sums plus zero are the bits the zeros give). Else null.
linalg::FillOp findZeroFill(linalg::MatmulOp op) {
  Value c = op.getOutputs()[0];
  Value buffer = zero::bufferOrigin(c);
  for (Operation *it = op->getPrevNode(); it; it = it->getPrevNode()) {
    auto fill = dyn_cast<linalg::FillOp>(it);
    if (fill && fill.getOutputs()[0] == c) {
      auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
      auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
      bool positiveZero = value && value.getValue().isPosZero();
      return positiveZero ? fill : linalg::FillOp();
    }
    if (zero::usesViewOf(it, buffer))
      return {};
  }
  return {};
}

struct ZeroGemmCallsPass
    : public zero::impl::ZeroGemmCallsBase<ZeroGemmCallsPass> {
  using ZeroGemmCallsBase::ZeroGemmCallsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    zero::RuntimeCallBuilder calls(module);
    SmallVector<linalg::MatmulOp> matmuls;
    // A matmul's generic form on buffers is the linalg.matmul it is.
    SmallVector<linalg::GenericOp> generics;
    module.walk([&](linalg::GenericOp op) {
      if (op.hasPureBufferSemantics())
        generics.push_back(op);
    });
    IRRewriter rewriter(module.getContext());
    for (linalg::GenericOp op : generics)
      (void)zero::specializeMatmul(rewriter, op);
    module.walk([&](linalg::MatmulOp op) { matmuls.push_back(op); });
    for (linalg::MatmulOp op : matmuls) {
      if (std::string why = whyNotGemm(op); !why.empty()) {
        mlir::emitRemark(op.getLoc()) << "matmul left as a loop nest: " << why;
        continue;
      }
      replaceWithCall(op, calls);
    }
  }

  void replaceWithCall(linalg::MatmulOp op, zero::RuntimeCallBuilder &calls) {
    // The host's GEMM takes C's zeros as read, with no pass over C to write
    // them (the fill stays for the loop nest where there is one). cuBLAS is
    // called as before: its beta = 0 would not add the zero, and a sum of -0
    // would keep its sign.
    linalg::FillOp zeroFill;
    if (gemm == zero::GemmLibrary::Host)
      zeroFill = findZeroFill(op);
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    std::string unused;
    GemmInput a = *gemmInput(op, 0, unused), bm = *gemmInput(op, 1, unused);
    Value c = op.getOutputs()[0];
    auto asI64 = [&](Value index) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, index);
    };
    auto dim = [&](Value buffer, int64_t d) {
      return asI64(memref::DimOp::create(b, loc, buffer, d));
    };
    // The leading dimension: a stride, static or read at run time.
    auto leading = [&](Value buffer, unsigned stride) -> Value {
      auto type = cast<MemRefType>(buffer.getType());
      int64_t value = type.getStridesAndOffset().first[stride];
      if (!ShapedType::isDynamic(value))
        return arith::ConstantIntOp::create(b, loc, i64, value);
      return asI64(memref::ExtractStridedMetadataOp::create(b, loc, buffer)
                       .getStrides()[stride]);
    };
    auto code = [&](Value buffer) -> Value {
      return arith::ConstantIntOp::create(
          b, loc, i32,
          *zero::dtypeCode(getElementTypeOrSelf(buffer.getType())));
    };
    auto flag = [&](bool set) -> Value {
      return arith::ConstantIntOp::create(b, loc, i32, set);
    };
    // k is A's second dimension as the op reads it.
    bool aByMap = *zero::readsTransposed(op.getIndexingMapsArray()[0], 0, 2);
    func::FuncOp fn =
        calls.declare(b, gemm == zero::GemmLibrary::Host
                             ? zero::RuntimeFunction::zero_rt_host_matmul
                             : zero::RuntimeFunction::zero_rt_gpu_matmul);
    SmallVector<Value> args = {code(a.buffer),
                               code(c),
                               dim(c, 0),
                               dim(c, 1),
                               dim(a.buffer, aByMap ? 0 : 1),
                               calls.pointerTo(b, loc, a.buffer),
                               leading(a.buffer, a.leadingStride),
                               flag(a.transposed),
                               calls.pointerTo(b, loc, bm.buffer),
                               leading(bm.buffer, bm.leadingStride),
                               flag(bm.transposed),
                               calls.pointerTo(b, loc, c),
                               leading(c, 0)};
    if (gemm == zero::GemmLibrary::Host)
      args.push_back(flag(!zeroFill));
    // Rows known to be contiguous only at run time (a view that a loop
    // carries has a dynamic layout): the call where they are, the loop nest
    // where not.
    Value contiguous = rowsContiguous(b, loc, op);
    if (!contiguous) {
      func::CallOp::create(b, loc, fn, args);
      op.erase();
      if (zeroFill)
        zeroFill.erase();
      return;
    }
    auto branch = scf::IfOp::create(b, loc, contiguous, /*withElse=*/true);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    func::CallOp::create(b, loc, fn, args);
    op->moveBefore(branch.elseBlock()->getTerminator());
    if (zeroFill)
      zeroFill->moveBefore(op);
  }

  /// Whether every operand's inner stride is 1, for operands whose stride is
  /// dynamic; null when there are none.
  static Value rowsContiguous(OpBuilder &b, Location loc, linalg::MatmulOp op) {
    Value all;
    for (Value operand : op->getOperands()) {
      auto type = cast<MemRefType>(operand.getType());
      if (!ShapedType::isDynamic(type.getStridesAndOffset().first[1]))
        continue;
      Value stride = memref::ExtractStridedMetadataOp::create(b, loc, operand)
                         .getStrides()[1];
      Value one = arith::ConstantIndexOp::create(b, loc, 1);
      Value unit =
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, stride, one);
      all = all ? arith::AndIOp::create(b, loc, all, unit).getResult() : unit;
    }
    return all;
  }
};

} // namespace
