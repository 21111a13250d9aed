//===- GpuKernelNames.cpp - kernels named as PTX allows -------------------===//
//
// Outlined kernels are named after their function, and an MLIR symbol may
// hold characters a PTX identifier may not. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringExtras.h"
#include "zero/Target/GPU/Passes.h"
#include "llvm/ADT/StringSet.h"

namespace zero {
#define GEN_PASS_DEF_ZEROGPUKERNELNAMES
#include "zero/Target/GPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// `name` as a PTX identifier: letters, digits, `_` and `$`, not starting
/// with a digit; every other character becomes `_`.
std::string toIdentifier(StringRef name) {
  std::string result;
  for (char c : name)
    result += llvm::isAlnum(c) || c == '_' || c == '$' ? c : '_';
  if (result.empty() || llvm::isDigit(result.front()))
    result.insert(result.begin(), '_');
  return result;
}

/// A PTX identifier for `symbol` that no name in `taken` has; records it.
StringAttr getFreeName(Operation *symbol, llvm::StringSet<> &taken) {
  std::string base = toIdentifier(SymbolTable::getSymbolName(symbol));
  std::string name = base;
  for (int suffix = 1; taken.contains(name); ++suffix)
    name = base + "_" + std::to_string(suffix);
  taken.insert(name);
  return StringAttr::get(symbol->getContext(), name);
}

/// Renames `symbol`, and every use of it under `root`, to `name`.
void rename(Operation *symbol, StringAttr name, Operation *root) {
  if (name == SymbolTable::getSymbolName(symbol))
    return;
  if (failed(SymbolTable::replaceAllSymbolUses(symbol, name, root)))
    return;
  SymbolTable::setSymbolName(symbol, name);
}

struct ZeroGpuKernelNamesPass
    : public zero::impl::ZeroGpuKernelNamesBase<ZeroGpuKernelNamesPass> {
  void runOnOperation() override {
    ModuleOp root = getOperation();
    // The names that stay: every other symbol beside the modules, and
    // beside the kernels in each module.
    auto otherNames = [](Block &block, auto isRenamed) {
      llvm::StringSet<> names;
      for (Operation &op : block)
        if (auto symbol = dyn_cast<SymbolOpInterface>(op);
            symbol && !isRenamed(&op))
          names.insert(symbol.getName());
      return names;
    };
    llvm::StringSet<> modules =
        otherNames(*root.getBody(), llvm::IsaPred<gpu::GPUModuleOp>);
    for (auto module :
         llvm::to_vector(root.getBody()->getOps<gpu::GPUModuleOp>())) {
      // The kernels first: their uses name them through the module.
      llvm::StringSet<> kernels =
          otherNames(*module.getBody(), llvm::IsaPred<gpu::GPUFuncOp>);
      for (auto kernel :
           llvm::to_vector(module.getBody()->getOps<gpu::GPUFuncOp>()))
        rename(kernel, getFreeName(kernel, kernels), root);
      rename(module, getFreeName(module, modules), root);
    }
  }
};

} // namespace
