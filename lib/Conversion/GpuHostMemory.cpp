//===- GpuHostMemory.cpp - host buffers in managed memory -----------------===//

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "zero/Conversion/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUHOSTMEMORY
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {
struct GpuHostMemory : public zero::impl::ZeroGpuHostMemoryBase<GpuHostMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [from, to] : {std::pair{"malloc", "zero_rt_gpu_alloc"},
                            std::pair{"free", "zero_rt_gpu_free"}}) {
      auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
      if (!function)
        continue;
      if (Operation *existing = module.lookupSymbol(to)) {
        existing->emitError()
            << "zero-gpu-host-memory: @" << to
            << " is already defined; cannot redirect @" << from << " to it";
        return signalPassFailure();
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              function, StringAttr::get(&getContext(), to), module)))
        return signalPassFailure();
      SymbolTable::setSymbolName(function, to);
    }
  }
};
} // namespace
