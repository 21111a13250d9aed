//===- Runner.cpp - run a zero program on N ranks -------------------------===//

#include "zero/Execution/Runner.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "zero/Target/Pipelines.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
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

/// `types` with each shard's type replaced by its whole type.
static SmallVector<Type>
wholeTypes(ArrayRef<Type> types,
           ArrayRef<std::optional<BoundaryShard>> shards) {
  SmallVector<Type> whole(types);
  for (auto [type, shard] : llvm::zip(whole, shards))
    if (shard)
      type = shard->whole;
  return whole;
}

SmallVector<Type> EntrySignature::getWholeArgumentTypes() const {
  return wholeTypes(argTypes, argShards);
}

SmallVector<Type> EntrySignature::getWholeResultTypes() const {
  return wholeTypes(resultTypes, resultShards);
}

/// The layout that `attr` (null when the value is not a shard) gives a value
/// of type `type` in `fn`, checked against the mesh and the shard's size.
static llvm::Expected<std::optional<BoundaryShard>>
readBoundaryShard(func::FuncOp fn, ShardAttr attr, Type type) {
  if (!attr)
    return std::nullopt;
  MeshOp mesh = lookupMesh(fn, attr.getMesh());
  if (!mesh)
    return llvm::createStringError("@%s: zero.shard names unknown mesh %s",
                                   fn.getName().str().c_str(),
                                   attr.getMesh().getValue().str().c_str());
  auto axes = DenseI64ArrayAttr::get(fn.getContext(), attr.getAxes());
  int64_t groupSize = getGroupSize(mesh, axes);
  BoundaryShard shard;
  shard.whole = attr.getWhole();
  shard.shardElements = ShardAttr::getShardElements(
      shard.whole.getNumElements(), groupSize, attr.getAlign());
  auto expected = RankedTensorType::get({shard.shardElements},
                                        shard.whole.getElementType());
  if (type != expected)
    return llvm::createStringError(
        "@%s: a shard of %s on a group of %lld is %s, not %s",
        fn.getName().str().c_str(), str(shard.whole).c_str(),
        static_cast<long long>(groupSize), str(expected).c_str(),
        str(type).c_str());
  for (int64_t rank = 0, n = mesh.getNumRanks(); rank < n; ++rank)
    shard.groupIndex.push_back(getGroupIndex(mesh, axes, rank));
  return shard;
}

HostArray zero::exec::takeShard(const HostArray &whole,
                                const BoundaryShard &shard,
                                int64_t groupIndex) {
  rt::Array part =
      rt::takeShard(toRuntimeArray(whole), shard.shardElements, groupIndex);
  HostArray out;
  out.elementType = whole.elementType;
  out.shape = {shard.shardElements};
  out.bytes = std::move(part.bytes);
  return out;
}

void zero::exec::zeroShardPadding(HostArray &shard, const BoundaryShard &layout,
                                  int64_t groupIndex) {
  rt::Array part = toRuntimeArray(shard);
  rt::zeroShardPadding(part, layout.whole.getNumElements(), groupIndex);
  shard.bytes = std::move(part.bytes);
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
                        llvm::function_ref<void(OpPassManager &)> build) {
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  ScopedDiagnosticHandler handler(module.getContext(), [&](Diagnostic &d) {
    os << d.getLocation() << ": " << d << "\n";
    return success();
  });
  PassManager pm(module.getContext());
  build(pm);
  if (failed(pm.run(module)))
    return llvm::createStringError("lowering failed:\n%s", diagnostics.c_str());
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
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    auto shard =
        readBoundaryShard(fn, fn.getArgAttrOfType<ShardAttr>(i, "zero.shard"),
                          fn.getArgumentTypes()[i]);
    if (!shard)
      return shard.takeError();
    signature.argShards.push_back(*shard);
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i) {
    auto shard = readBoundaryShard(
        fn, fn.getResultAttrOfType<ShardAttr>(i, "zero.shard"),
        fn.getResultTypes()[i]);
    if (!shard)
      return shard.takeError();
    signature.resultShards.push_back(*shard);
  }
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

  ExecutionEngineOptions options;
  auto transformer = makeOptimizingTransformer(2, 0, nullptr);
  options.transformer = transformer;
  auto engine = ExecutionEngine::create(module, options);
  if (!engine)
    return engine.takeError();
  (*engine)->registerSymbols(runtimeSymbols);
  exe->engine = std::move(*engine);
  return exe;
}

llvm::Error Executable::invoke(std::vector<HostArray> &inputs,
                               std::vector<HostArray> &outputs,
                               bool copyOutputs, double *seconds) const {
  if (inputs.size() != signature.argTypes.size())
    return llvm::createStringError("@%s takes %zu arguments, got %zu",
                                   signature.name.c_str(),
                                   signature.argTypes.size(), inputs.size());
  std::vector<rt::ValueType> argTypes, resultTypes;
  llvm::transform(signature.argTypes, std::back_inserter(argTypes),
                  toRuntimeType);
  llvm::transform(signature.resultTypes, std::back_inserter(resultTypes),
                  toRuntimeType);
  rt::PackedCall call(std::move(argTypes), std::move(resultTypes));
  std::vector<void *> buffers;
  for (HostArray &input : inputs)
    buffers.push_back(input.bytes.data());
  std::vector<void *> &packed = call.pack(buffers);

  auto start = std::chrono::steady_clock::now();
  if (llvm::Error error = engine->invokePacked(signature.name, packed))
    return error;
  if (seconds)
    *seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();

  // Copy the results out as dense arrays; free what the program allocated
  // (two results may share a buffer: free only after all are copied).
  std::set<void *> ours(buffers.begin(), buffers.end()), toFree;
  outputs.clear();
  for (auto [i, type] : llvm::enumerate(signature.resultTypes)) {
    rt::Array out;
    void *allocated = call.unpackResult(i, copyOutputs ? &out : nullptr);
    if (allocated && !ours.count(allocated))
      toFree.insert(allocated);
    if (copyOutputs)
      outputs.push_back(
          {elementTypeOf(type), shapeOf(type), std::move(out.bytes)});
  }
  for (void *allocation : toFree)
    std::free(allocation);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Inputs
//===----------------------------------------------------------------------===//

llvm::Error zero::exec::makeInputs(ArrayRef<Type> types,
                                   const RunOptions &options, int32_t rank,
                                   std::vector<HostArray> &inputs) {
  inputs.clear();
  for (const auto &[index, spec] : options.inputs)
    if (index >= types.size())
      return llvm::createStringError(
          "argument %u is named (--arg, --per-rank or --range), but the "
          "entry takes %zu arguments",
          index, types.size());
  for (auto [i, type] : llvm::enumerate(types)) {
    HostArray array;
    array.elementType = elementTypeOf(type);
    array.shape = shapeOf(type);
    InputSpec spec;
    if (auto it = options.inputs.find(i); it != options.inputs.end())
      spec = it->second;
    if (!spec.path.empty()) {
      std::string path = spec.path;
      for (size_t at; (at = path.find("{rank}")) != std::string::npos;)
        path.replace(at, 6, std::to_string(rank));
      if (llvm::Error error = readNpy(path, array))
        return llvm::createStringError(
            "argument %zu: %s", i, llvm::toString(std::move(error)).c_str());
      inputs.push_back(std::move(array));
      continue;
    }
    rt::Array generated = toRuntimeArray(array);
    rt::fillUniform(generated, options.seed, i, spec.perRank ? rank : -1,
                    spec.low, spec.high);
    array.bytes = std::move(generated.bytes);
    inputs.push_back(std::move(array));
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Running on ranks
//===----------------------------------------------------------------------===//

/// This process's trace file: `path`, with "{rank}" replaced by its first
/// rank, or with ".rank<r>" before the extension when other processes
/// write traces of their own.
static std::string tracePath(StringRef path, zero_world *world) {
  int32_t first = zero_rank_id(zero_world_local_rank(world, 0));
  std::string rank = std::to_string(first);
  size_t at = path.find("{rank}");
  if (at != StringRef::npos)
    return (path.take_front(at) + rank + path.drop_front(at + 6)).str();
  if (zero_world_num_local_ranks(world) == zero_world_size(world))
    return path.str();
  StringRef extension = llvm::sys::path::extension(path);
  return (path.drop_back(extension.size()) + ".rank" + rank + extension).str();
}

/// Writes `inputs` as DIR/rank<rank>/arg<i>.npy.
static llvm::Error writeInputs(StringRef dir, int32_t rank,
                               const std::vector<HostArray> &inputs) {
  llvm::SmallString<128> rankDir(dir);
  llvm::sys::path::append(rankDir, "rank" + std::to_string(rank));
  if (std::error_code ec = llvm::sys::fs::create_directories(rankDir))
    return llvm::createStringError(ec, "cannot create %s: %s", rankDir.c_str(),
                                   ec.message().c_str());
  for (auto [i, input] : llvm::enumerate(inputs)) {
    llvm::SmallString<128> path(rankDir);
    llvm::sys::path::append(path, "arg" + std::to_string(i) + ".npy");
    if (llvm::Error error = writeNpy(path, input))
      return error;
  }
  return llvm::Error::success();
}

llvm::Expected<std::vector<std::vector<RankRun>>>
zero::exec::runOnRanks(ArrayRef<const Executable *> programs,
                       const RunOptions &options) {
  zero_options worldOptions;
  zero_options_init(&worldOptions);
  worldOptions.backend = options.backend.c_str();
  worldOptions.ranks = options.ranks;
  worldOptions.timeout_seconds = options.timeoutSeconds;
  zero_world *world = nullptr;
  char message[512];
  if (zero_world_create(&worldOptions, &world, message, sizeof message))
    return llvm::createStringError("%s", message);

  int32_t local = zero_world_num_local_ranks(world);
  zero_world_set_tracing(world, !options.tracePath.empty());
  std::vector<std::vector<RankRun>> runs(programs.size(),
                                         std::vector<RankRun>(local));
  auto runRank = [&](int32_t i) {
    zero_rank *rank = zero_world_local_rank(world, i);
    zero_rank_bind(rank);
    int32_t id = zero_rank_id(rank);
    std::vector<HostArray> inputs;
    if (llvm::Error error = makeInputs(
            programs.front()->getWholeArgumentTypes(), options, id, inputs)) {
      zero_rank_fail(rank, llvm::toString(std::move(error)).c_str());
      return;
    }
    if (!options.inputDir.empty())
      if (llvm::Error error = writeInputs(options.inputDir, id, inputs)) {
        zero_rank_fail(rank, llvm::toString(std::move(error)).c_str());
        return;
      }
    for (auto [p, program] : llvm::enumerate(programs)) {
      // A program may update its arguments in place: each but the last gets
      // a copy.
      std::vector<HostArray> copy;
      if (p + 1 < programs.size())
        copy = inputs;
      else
        copy = std::move(inputs);
      for (auto [value, shard] : llvm::zip(copy, program->getArgumentShards()))
        if (shard)
          value = takeShard(value, *shard, shard->groupIndex[id]);
      zero_counters before, after;
      zero_rank_counters(rank, &before);
      RankRun &run = runs[p][i];
      run.rank = id;
      zero_rank_trace_begin(rank);
      llvm::Error error =
          program->invoke(copy, run.outputs, options.keepOutputs, &run.seconds);
      zero_rank_trace_end(rank);
      if (error) {
        zero_rank_fail(rank, llvm::toString(std::move(error)).c_str());
        return;
      }
      if (zero_world_error(world))
        return;
      zero_rank_counters(rank, &after);
      for (int k = 0; k < ZERO_NUM_COLLECTIVE_KINDS; ++k) {
        run.counters.bytes_sent[k] = after.bytes_sent[k] - before.bytes_sent[k];
        run.counters.issued[k] = after.issued[k] - before.issued[k];
      }
    }
    zero_rank_bind(nullptr);
  };

  if (local == 1) {
    runRank(0);
  } else {
    std::vector<std::thread> threads;
    for (int32_t i = 0; i < local; ++i)
      threads.emplace_back(runRank, i);
    for (std::thread &t : threads)
      t.join();
  }
  const char *error = zero_world_error(world);
  std::string failure = error ? error : "";
  if (failure.empty() && !options.tracePath.empty()) {
    std::string path = tracePath(options.tracePath, world);
    if (zero_world_write_trace(world, path.c_str(), message, sizeof message))
      failure = message;
  }
  zero_world_destroy(world);
  if (!failure.empty())
    return llvm::createStringError("%s", failure.c_str());
  return runs;
}
