//===- GemmCalls.cpp - matmuls as calls of a GEMM through the runtime -----===//
//
// On the GPU a matmul is a library call (cuBLAS, through the runtime), not a
// loop nest of our own: see Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Target/GPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGEMMCALLS
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Why `op` cannot become a GEMM call ("" when it can).
std::string whyNotGemm(linalg::MatmulOp op) {
  if (!op.hasPureBufferSemantics())
    return "it is not on buffers";
  if (op.hasUserDefinedMaps())
    return "it has its own indexing maps";
  for (Value operand : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(operand.getType());
    if (!type || type.getRank() != 2)
      return "an operand is not a 2-D buffer";
    // A dynamic inner stride is checked at run time (replaceWithCall).
    auto [strides, offset] = type.getStridesAndOffset();
    if (strides[1] != 1 && !ShapedType::isDynamic(strides[1]))
      return "an operand's rows are not contiguous";
  }
  Type a = getElementTypeOrSelf(op.getInputs()[0].getType());
  Type b = getElementTypeOrSelf(op.getInputs()[1].getType());
  Type c = getElementTypeOrSelf(op.getOutputs()[0].getType());
  bool same = a == b && a == c;
  bool halfIntoFloat = a == b && (a.isBF16() || a.isF16()) && c.isF32();
  if (!(same && (a.isF32() || a.isF64() || a.isBF16() || a.isF16())) &&
      !halfIntoFloat)
    return "cuBLAS has no GEMM for these element types";
  return "";
}

struct ZeroGemmCallsPass
    : public zero::impl::ZeroGemmCallsBase<ZeroGemmCallsPass> {
  using ZeroGemmCallsBase::ZeroGemmCallsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    zero::RuntimeCallBuilder calls(module);
    SmallVector<linalg::MatmulOp> matmuls;
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
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Value a = op.getInputs()[0], bm = op.getInputs()[1], c = op.getOutputs()[0];
    auto asI64 = [&](Value index) -> Value {
      return arith::IndexCastOp::create(b, loc, i64, index);
    };
    auto dim = [&](Value buffer, int64_t d) {
      return asI64(memref::DimOp::create(b, loc, buffer, d));
    };
    // The leading dimension: the row stride, static or read at run time.
    auto leading = [&](Value buffer) -> Value {
      auto type = cast<MemRefType>(buffer.getType());
      int64_t stride = type.getStridesAndOffset().first[0];
      if (!ShapedType::isDynamic(stride))
        return arith::ConstantIntOp::create(b, loc, i64, stride);
      return asI64(memref::ExtractStridedMetadataOp::create(b, loc, buffer)
                       .getStrides()[0]);
    };
    auto code = [&](Value buffer) -> Value {
      return arith::ConstantIntOp::create(
          b, loc, i32,
          *zero::dtypeCode(getElementTypeOrSelf(buffer.getType())));
    };
    func::FuncOp fn =
        calls.declare(b, gemm == zero::GemmLibrary::Host
                             ? zero::RuntimeFunction::zero_rt_host_matmul
                             : zero::RuntimeFunction::zero_rt_gpu_matmul);
    SmallVector<Value> args = {code(a),     code(c),
                               dim(a, 0),   dim(bm, 1),
                               dim(a, 1),   calls.pointerTo(b, loc, a),
                               leading(a),  calls.pointerTo(b, loc, bm),
                               leading(bm), calls.pointerTo(b, loc, c),
                               leading(c)};
    // Rows known to be contiguous only at run time (a view that a loop
    // carries has a dynamic layout): the call where they are, the loop nest
    // where not.
    Value contiguous = rowsContiguous(b, loc, op);
    if (!contiguous) {
      func::CallOp::create(b, loc, fn, args);
      op.erase();
      return;
    }
    auto branch = scf::IfOp::create(b, loc, contiguous, /*withElse=*/true);
    b.setInsertionPoint(branch.thenBlock()->getTerminator());
    func::CallOp::create(b, loc, fn, args);
    op->moveBefore(branch.elseBlock()->getTerminator());
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
