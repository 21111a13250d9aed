//===- GpuModulesToBinary.cpp - GPU modules to binaries, in parallel ------===//
//
// Upstream's gpu-module-to-binary serializes one gpu.module after another;
// a step has one per kernel. Each serialization (translation to LLVM IR in
// an LLVM context of its own, NVPTX code generation, a ptxas process) reads
// only its module, so they run on MLIR's thread pool; the modules become
// gpu.binary ops afterwards, on this thread, in their order. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Threading.h"
#include "zero/Target/GPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUMODULESTOBINARY
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// What a module serializes to: one object per target, in its order.
struct Serialized {
  gpu::GPUModuleOp module;
  SmallVector<SmallVector<char, 0>> objects;
};

/// Serializes `entry.module` for each of its targets into `entry.objects`,
/// or fails with an error on the module.
LogicalResult serialize(Serialized &entry, const gpu::TargetOptions &options) {
  gpu::GPUModuleOp module = entry.module;
  ArrayAttr targets = module.getTargetsAttr();
  if (!targets || targets.empty())
    return module.emitError("zero-gpu-modules-to-binary: @")
           << module.getName()
           << " has no target attribute (gpu-nvvm-attach-target attaches "
              "one)";
  for (Attribute attribute : targets) {
    auto target = dyn_cast<gpu::TargetAttrInterface>(attribute);
    if (!target)
      return module.emitError("zero-gpu-modules-to-binary: @")
             << module.getName() << "'s target " << attribute
             << " cannot serialize a module";
    std::optional<SmallVector<char, 0>> object =
        target.serializeToObject(module, options);
    if (!object)
      return module.emitError("zero-gpu-modules-to-binary: @")
             << module.getName() << " failed to serialize for " << attribute;
    entry.objects.push_back(std::move(*object));
  }
  return success();
}

struct ZeroGpuModulesToBinaryPass
    : public zero::impl::ZeroGpuModulesToBinaryBase<
          ZeroGpuModulesToBinaryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp top = getOperation();
    llvm::Expected<zero::GpuFormat> resolved =
        zero::resolveGpuFormat(format, cudaPath);
    if (!resolved) {
      top.emitError("zero-gpu-modules-to-binary: ")
          << llvm::toString(resolved.takeError());
      return signalPassFailure();
    }
    // The symbol table a target may ask for, built before the threads
    // share it (upstream's builds it lazily, on one thread).
    SymbolTable symbols(top);
    auto symbolTable = [&]() -> SymbolTable * { return &symbols; };
    gpu::TargetOptions options(cudaPath, /*librariesToLink=*/{},
                               /*cmdOptions=*/"", /*elfSection=*/"",
                               *resolved == zero::GpuFormat::Bin
                                   ? gpu::CompilationTarget::Binary
                                   : gpu::CompilationTarget::Assembly,
                               symbolTable);
    SmallVector<Serialized> entries;
    for (auto module : top.getBody()->getOps<gpu::GPUModuleOp>())
      entries.push_back({module, {}});
    if (failed(failableParallelForEach(
            &getContext(), entries,
            [&](Serialized &entry) { return serialize(entry, options); })))
      return signalPassFailure();
    for (Serialized &entry : entries)
      if (failed(replaceByBinary(entry, options)))
        return signalPassFailure();
  }

  /// Replaces `entry.module` by a gpu.binary of its objects, each made by
  /// its target as upstream's pass makes it.
  static LogicalResult replaceByBinary(Serialized &entry,
                                       const gpu::TargetOptions &options) {
    gpu::GPUModuleOp module = entry.module;
    SmallVector<Attribute> objects;
    for (auto [attribute, object] :
         llvm::zip_equal(module.getTargetsAttr(), entry.objects)) {
      auto target = cast<gpu::TargetAttrInterface>(attribute);
      Attribute made = target.createObject(module, object, options);
      if (!made)
        return module.emitError("zero-gpu-modules-to-binary: @")
               << module.getName() << ": " << attribute
               << " could not make an object of its binary";
      objects.push_back(made);
    }
    OpBuilder b(module);
    gpu::BinaryOp::create(b, module.getLoc(), module.getName(),
                          module.getOffloadingHandlerAttr(),
                          b.getArrayAttr(objects));
    module.erase();
    return success();
  }
};

} // namespace
