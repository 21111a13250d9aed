//===- GpuHostMemory.cpp - host buffers in managed memory -----------------===//

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/StringSet.h"
#include "mlir/IR/BuiltinOps.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Target/GPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUHOSTMEMORY
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {
struct GpuHostMemory : public zero::impl::ZeroGpuHostMemoryBase<GpuHostMemory> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto memory = module->getAttrOfType<StringAttr>("zero.gpu_memory");
    using zero::RuntimeFunction;
    StringRef allocate =
        zero::getRuntimeSymbol(memory && memory.getValue() == "device"
                                   ? RuntimeFunction::zero_rt_gpu_alloc_device
                                   : RuntimeFunction::zero_rt_gpu_alloc);
    StringRef release =
        zero::getRuntimeSymbol(RuntimeFunction::zero_rt_gpu_free);
    // What gpu-to-llvm makes of memref.alloc and memref.dealloc (malloc,
    // free), and what the host pipeline makes of those it lowers (MLIR's
    // generic allocation functions).
    StringRef genericAlloc =
        zero::getRuntimeSymbol(RuntimeFunction::_mlir_memref_to_llvm_alloc);
    StringRef genericFree =
        zero::getRuntimeSymbol(RuntimeFunction::_mlir_memref_to_llvm_free);
    // What zero.host_alloc calls: pinned host memory beside the GPU.
    StringRef hostAlloc =
        zero::getRuntimeSymbol(RuntimeFunction::zero_rt_host_alloc);
    StringRef pinnedAlloc =
        zero::getRuntimeSymbol(RuntimeFunction::zero_rt_gpu_alloc_host);
    StringRef stagingAlloc =
        zero::getRuntimeSymbol(RuntimeFunction::zero_rt_host_alloc_staging);
    StringRef pinnedStaging =
        zero::getRuntimeSymbol(RuntimeFunction::zero_rt_gpu_alloc_staging);
    llvm::StringSet<> redirected;
    for (auto [from, to] : {std::pair<StringRef, StringRef>{"malloc", allocate},
                            {genericAlloc, allocate},
                            {"free", release},
                            {genericFree, release},
                            {hostAlloc, pinnedAlloc},
                            {stagingAlloc, pinnedStaging}}) {
      auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
      if (!function)
        continue;
      if (Operation *existing = module.lookupSymbol(to)) {
        if (!redirected.contains(to)) {
          existing->emitError()
              << "zero-gpu-host-memory: @" << to
              << " is already defined; cannot redirect @" << from << " to it";
          return signalPassFailure();
        }
        // A second name for the same allocator: its calls go to the first.
        if (failed(SymbolTable::replaceAllSymbolUses(
                function, StringAttr::get(&getContext(), to), module)))
          return signalPassFailure();
        function.erase();
        continue;
      }
      if (failed(SymbolTable::replaceAllSymbolUses(
              function, StringAttr::get(&getContext(), to), module)))
        return signalPassFailure();
      SymbolTable::setSymbolName(function, to);
      redirected.insert(to);
    }
  }
};
} // namespace
