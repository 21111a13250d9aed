//===- GpuIeeeSqrt.cpp - correctly rounded square roots in kernels --------===//
//
// convert-gpu-to-nvvm lowers math.sqrt to libdevice's __nv_sqrtf, which
// picks its precision by __nvvm_reflect("__CUDA_PREC_SQRT"); nothing sets
// that here, so it is the approximate sqrt.approx.f32, which differs from the
// CPU's square root in the last bit. libdevice's __nv_fsqrt_rn and
// __nv_dsqrt_rn are sqrt.rn, rounded as IEEE 754 asks, as on the CPU. See
// Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Target/GPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUIEEESQRT
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// libdevice's correctly rounded square root of `type`, or "".
StringRef roundedSqrt(Type type) {
  if (type.isF32())
    return "__nv_fsqrt_rn";
  if (type.isF64())
    return "__nv_dsqrt_rn";
  return "";
}

struct ZeroGpuIeeeSqrtPass
    : public zero::impl::ZeroGpuIeeeSqrtBase<ZeroGpuIeeeSqrtPass> {
  void runOnOperation() override {
    gpu::GPUModuleOp module = getOperation();
    IRRewriter rewriter(&getContext());
    module.walk([&](math::SqrtOp sqrt) {
      // A square root that may be approximate (fastmath afn) keeps
      // libdevice's choice; vectors do not occur in kernels.
      StringRef name = roundedSqrt(sqrt.getType());
      if (name.empty() ||
          bitEnumContainsAny(sqrt.getFastmath(), arith::FastMathFlags::afn))
        return;
      auto callee = module.lookupSymbol<LLVM::LLVMFuncOp>(name);
      if (!callee) {
        OpBuilder::InsertionGuard guard(rewriter);
        rewriter.setInsertionPointToStart(module.getBody());
        callee = LLVM::LLVMFuncOp::create(
            rewriter, module.getLoc(), name,
            LLVM::LLVMFunctionType::get(sqrt.getType(), sqrt.getType()));
      }
      rewriter.setInsertionPoint(sqrt);
      rewriter.replaceOpWithNewOp<LLVM::CallOp>(sqrt, callee,
                                                sqrt.getOperand());
    });
  }
};

} // namespace
