//===- Runner.cpp - run a zero program on N ranks -------------------------===//

#include "zero/Execution/Runner.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "zero/Analysis/StateResults.h"
#include "zero/Analysis/Uniformity.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Execution/Optimize.h"
#include "zero/Execution/PackedEntry.h"
#include "zero/Pipelines/Passes.h"
#include "zero/runtime/Artifact.h"
#include "zero/runtime/PackedCall.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ExecutionEngine/Orc/Mangling.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

using namespace mlir;
using namespace zero;
using namespace zero::exec;

//===----------------------------------------------------------------------===//
// Types the runner can pass
//===----------------------------------------------------------------------===//

static bool isSupportedElement(Type type) {
  return type.isF32() || type.isF64() || type.isF16() || type.isBF16() ||
         type.isSignlessInteger(1) || type.isSignlessInteger(8) ||
         type.isSignlessInteger(16) || type.isSignlessInteger(32) ||
         type.isSignlessInteger(64);
}

/// A static tensor of a supported element type, or a supported scalar.
static bool isSupported(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.hasStaticShape() &&
           isSupportedElement(tensor.getElementType());
  return type.isIndex() || isSupportedElement(type);
}

static Type elementTypeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return tensor.getElementType();
  return type;
}

static SmallVector<int64_t> shapeOf(Type type) {
  if (auto tensor = dyn_cast<RankedTensorType>(type))
    return llvm::to_vector(tensor.getShape());
  return {};
}

std::string zero::exec::getDtypeName(Type type) {
  if (type.isIndex())
    return "index";
  if (type.isBF16())
    return "bf16";
  if (auto f = dyn_cast<FloatType>(type))
    return "f" + std::to_string(f.getWidth());
  if (type.isSignlessInteger())
    return "i" + std::to_string(type.getIntOrFloatBitWidth());
  return "";
}

/// The runtime's view of a type (a launcher's, without MLIR).
static rt::ValueType toRuntimeType(Type type) {
  SmallVector<int64_t> shape = shapeOf(type);
  return {getDtypeName(elementTypeOf(type)),
          std::vector<int64_t>(shape.begin(), shape.end()),
          isa<RankedTensorType>(type)};
}

static std::string str(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << type;
  return s;
}

//===----------------------------------------------------------------------===//
// Executable
//===----------------------------------------------------------------------===//

/// The runtime functions compiled code calls, by name: the rows of the
/// runtime's call table.
static llvm::orc::SymbolMap
runtimeSymbols(llvm::orc::MangleAndInterner mangle) {
  llvm::orc::SymbolMap map;
  auto add = [&](const char *name, auto *fn) {
    map[mangle(name)] = {llvm::orc::ExecutorAddr::fromPtr(fn),
                         llvm::JITSymbolFlags::Exported};
  };
#define ZERO_RT_FUNCTION(SYMBOL, FUNCTION, RESULT, PARAMETERS)                 \
  add(#SYMBOL, &FUNCTION);
#include "zero/runtime/zero_rt_calls.def"
  return map;
}

/// A shard's layout, read from `attr` on a value of type `type` in `fn`
/// and checked against the mesh and the shard's size; its whole type in
/// `whole`.
static llvm::Expected<rt::ShardLayout>
readShardLayout(func::FuncOp fn, ShardAttr attr, Type type,
                RankedTensorType &whole) {
  MeshOp mesh = lookupMesh(fn, attr.getMesh());
  if (!mesh)
    return llvm::createStringError("@%s: zero.shard names unknown mesh %s",
                                   fn.getName().str().c_str(),
                                   attr.getMesh().getValue().str().c_str());
  auto axes = DenseI64ArrayAttr::get(fn.getContext(), attr.getAxes());
  int64_t groupSize = getGroupSize(mesh, axes);
  whole = attr.getWhole();
  rt::ShardLayout shard;
  shard.whole.assign(whole.getShape().begin(), whole.getShape().end());
  shard.shardElements = ShardAttr::getShardElements(whole.getNumElements(),
                                                    groupSize, attr.getAlign());
  auto expected =
      RankedTensorType::get({shard.shardElements}, whole.getElementType());
  if (type != expected)
    return llvm::createStringError(
        "@%s: a shard of %s on a group of %lld is %s, not %s",
        fn.getName().str().c_str(), str(whole).c_str(),
        static_cast<long long>(groupSize), str(expected).c_str(),
        str(type).c_str());
  for (int64_t rank = 0, n = mesh.getNumRanks(); rank < n; ++rank)
    shard.groupIndex.push_back(getGroupIndex(mesh, axes, rank));
  return shard;
}

/// Appends the value of type `type` named `name`, a shard when `attr` says
/// so, to `values` and its whole type to `wholeTypes`.
static llvm::Error appendValue(func::FuncOp fn, const std::string &name,
                               Type type, ShardAttr attr,
                               std::vector<rt::ArtifactValue> &values,
                               SmallVector<Type> &wholeTypes) {
  rt::ArtifactValue value{name, toRuntimeType(type), std::nullopt};
  Type wholeType = type;
  if (attr) {
    RankedTensorType whole;
    auto shard = readShardLayout(fn, attr, type, whole);
    if (!shard)
      return shard.takeError();
    value.shard = std::move(*shard);
    wholeType = whole;
  }
  values.push_back(std::move(value));
  wholeTypes.push_back(wholeType);
  return llvm::Error::success();
}

llvm::Expected<std::string> zero::exec::findEntryFunction(ModuleOp module,
                                                          StringRef requested) {
  if (!requested.empty()) {
    auto fn = module.lookupSymbol<func::FuncOp>(requested);
    if (!fn || fn.isExternal())
      return llvm::createStringError(
          "no function @%s with a body in the module", requested.str().c_str());
    return requested.str();
  }
  std::string found;
  int count = 0;
  for (auto fn : module.getOps<func::FuncOp>())
    if (fn.isPublic() && !fn.isExternal()) {
      found = fn.getSymName().str();
      ++count;
    }
  if (count != 1)
    return llvm::createStringError("the module has several public functions "
                                   "(or none); name one with --entry");
  return found;
}

llvm::Error zero::exec::runPassPipeline(ModuleOp module, StringRef pipeline) {
  if (pipeline.empty())
    return llvm::Error::success();
  PassManager pm(module.getContext());
  if (failed(parsePassPipeline(pipeline, pm, llvm::errs())))
    return llvm::createStringError("cannot parse pass pipeline '%s'",
                                   pipeline.str().c_str());
  if (failed(pm.run(module)))
    return llvm::createStringError("pass pipeline '%s' failed",
                                   pipeline.str().c_str());
  return llvm::Error::success();
}

llvm::Error
zero::exec::lowerModule(ModuleOp module,
                        llvm::function_ref<void(OpPassManager &)> build,
                        TimingScope *timing) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  // Errors go into the error; warnings (a collective that
  // zero-verify-collectives could not prove) pass to the caller's handler
  // whether or not the lowering succeeds.
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    if (d.getSeverity() == DiagnosticSeverity::Warning)
      return failure();
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  // The lowered module is verified once, not after each of the pipeline's
  // passes: re-verifying a growing module some forty times was more than
  // half of the MLIR lowering of a sharded step. zero-opt verifies after
  // each pass, and names the pass that broke the IR.
  PassManager pm(module.getContext());
  pm.enableVerifier(false);
  build(pm);
  if (timing)
    pm.enableTiming(*timing);
  if (failed(pm.run(module)))
    return llvm::createStringError("lowering failed:\n%s", diagnostics.c_str());
  if (failed(mlir::verify(module)))
    return llvm::createStringError(
        "lowering produced invalid IR (zero-opt with the same pipeline "
        "verifies after each pass and names the one that broke it):\n%s",
        diagnostics.c_str());
  return llvm::Error::success();
}

int64_t zero::exec::getMeshRanks(ModuleOp module) {
  int64_t size = 0;
  auto meet = [&](int64_t ranks) {
    if (size && size != ranks)
      return false;
    size = ranks;
    return true;
  };
  for (auto mesh : module.getOps<MeshOp>())
    if (!meet(mesh.getNumRanks()))
      return 0;
  // The upstream shard dialect's grids, which the lowering converts.
  for (auto grid : module.getOps<shard::GridOp>()) {
    if (llvm::any_of(grid.getShape(), ShapedType::isDynamic))
      return 0;
    int64_t ranks = 1;
    for (int64_t extent : grid.getShape())
      ranks *= extent;
    if (!meet(ranks))
      return 0;
  }
  return size;
}

llvm::Expected<EntrySignature> EntrySignature::read(ModuleOp module,
                                                    StringRef entry) {
  auto fn = module.lookupSymbol<func::FuncOp>(entry);
  if (!fn || fn.isExternal())
    return llvm::createStringError("no function @%s with a body in the module",
                                   entry.str().c_str());
  EntrySignature signature;
  signature.name = entry.str();
  llvm::append_range(signature.argTypes, fn.getArgumentTypes());
  llvm::append_range(signature.resultTypes, fn.getResultTypes());
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (llvm::Error error =
            appendValue(fn, "arg" + std::to_string(i), fn.getArgumentTypes()[i],
                        fn.getArgAttrOfType<ShardAttr>(i, "zero.shard"),
                        signature.arguments, signature.wholeArgTypes))
      return std::move(error);
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (llvm::Error error = appendValue(
            fn, "result" + std::to_string(i), fn.getResultTypes()[i],
            fn.getResultAttrOfType<ShardAttr>(i, "zero.shard"),
            signature.results, signature.wholeResultTypes))
      return std::move(error);
  for (auto [result, stateOf] :
       llvm::zip(signature.results, findStateResults(fn)))
    result.stateOf = stateOf;
  for (auto [i, argument] : llvm::enumerate(signature.arguments))
    argument.startsAtZero = static_cast<bool>(
        fn.getArgAttr(static_cast<unsigned>(i), kStartsAtZeroAttrName));
  for (auto [what, types] :
       {std::pair{"argument", ArrayRef<Type>(signature.argTypes)},
        std::pair{"result", ArrayRef<Type>(signature.resultTypes)}})
    for (auto [i, type] : llvm::enumerate(types))
      if (!isSupported(type))
        return llvm::createStringError(
            "@%s %s %zu has type %s; a launcher passes static tensors and "
            "scalars of f32, f64, f16, bf16, i1, i8, i16, i32, i64 (and index)",
            entry.str().c_str(), what, i, str(type).c_str());
  return signature;
}

Executable::~Executable() = default;

llvm::Expected<std::unique_ptr<Executable>>
Executable::compile(ModuleOp module, StringRef entry,
                    const ZeroToLLVMOptions &lowering) {
  static std::once_flag targetsReady;
  std::call_once(targetsReady, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });

  auto signature = EntrySignature::read(module, entry);
  if (!signature)
    return signature.takeError();
  std::unique_ptr<Executable> exe(new Executable);
  exe->signature = std::move(*signature);

  MLIRContext *context = module.getContext();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  context->appendDialectRegistry(registry);

  if (llvm::Error error = lowerModule(module, [&](OpPassManager &pm) {
        buildZeroToLLVMPipeline(pm, lowering);
      }))
    return error;
  exe->collectivesUniform = module->hasAttr(kCollectivesUniformAttrName);

  // The entry as an artifact's packed export (PackedEntry.h), called
  // directly rather than through the wrapper the engine makes of it.
  ExecutionEngineOptions options;
  auto translate = [&](Operation *op, llvm::LLVMContext &llvmContext) {
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(op, llvmContext);
    if (llvmModule)
      if (llvm::Function *function = llvmModule->getFunction(entry))
        selectEntryQuickly(makePackedEntry(*function));
    return llvmModule;
  };
  options.llvmModuleBuilder = translate;
  // Both callbacks are function_refs: they must outlive create().
  auto optimize = [](llvm::Module *llvmModule) {
    return optimizeModule(*llvmModule, 2, nullptr);
  };
  options.transformer = optimize;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  (*engine)->registerSymbols(runtimeSymbols);
  auto address = (*engine)->lookup(rt::kArtifactEntrySymbol);
  if (!address)
    return address.takeError();
  exe->entry = reinterpret_cast<void (*)(void **)>(*address);
  exe->engine = std::move(*engine);
  return exe;
}

std::string Executable::call(std::vector<rt::Array> &inputs,
                             std::vector<rt::Array> *outputs,
                             double &seconds) const {
  if (inputs.size() != signature.argTypes.size())
    return "@" + signature.name + " takes " +
           std::to_string(signature.argTypes.size()) + " arguments, got " +
           std::to_string(inputs.size());
  std::vector<rt::ValueType> argTypes, resultTypes;
  for (const rt::ArtifactValue &value : signature.arguments)
    argTypes.push_back(value.type);
  for (const rt::ArtifactValue &value : signature.results)
    resultTypes.push_back(value.type);
  rt::PackedCall call(std::move(argTypes), std::move(resultTypes));
  std::vector<void *> buffers;
  for (rt::Array &input : inputs)
    buffers.push_back(input.bytes.data());
  std::vector<void *> &packed = call.pack(buffers);

  auto start = std::chrono::steady_clock::now();
  entry(packed.data());
  seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();

  // Copy the results out as dense arrays; free what the program allocated
  // (two results may share a buffer: free only after all are copied).
  std::set<void *> ours(buffers.begin(), buffers.end()), toFree;
  if (outputs)
    outputs->assign(signature.results.size(), rt::Array());
  for (size_t i = 0; i < signature.results.size(); ++i) {
    void *allocated = call.unpackResult(i, outputs ? &(*outputs)[i] : nullptr);
    if (allocated && !ours.count(allocated))
      toFree.insert(allocated);
  }
  for (void *allocation : toFree)
    zero_rt_free(allocation);
  return "";
}
