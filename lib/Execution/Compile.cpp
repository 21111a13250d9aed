//===- Compile.cpp - a zero program compiled ahead of time ----------------===//

#include "zero/Execution/Compile.h"
#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "zero/Analysis/Uniformity.h"
#include "zero/Execution/Optimize.h"
#include "zero/Execution/PackedEntry.h"
#include "zero/Execution/Runner.h"
#include "zero/Pipelines/Passes.h"
#include "zero/runtime/Artifact.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <mutex>
#include <optional>

using namespace mlir;
using namespace zero;
using namespace zero::exec;

//===----------------------------------------------------------------------===//
// Description
//===----------------------------------------------------------------------===//

static void writeValue(llvm::json::OStream &json, const std::string &name,
                       Type type, const std::optional<rt::ShardLayout> &shard,
                       bool inHostMemory,
                       std::optional<size_t> stateOf = std::nullopt,
                       bool startsAtZero = false) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  Type element = tensor ? tensor.getElementType() : type;
  json.object([&] {
    json.attribute("name", name);
    json.attribute("dtype", getDtypeName(element));
    json.attributeArray("shape", [&] {
      if (tensor)
        for (int64_t d : tensor.getShape())
          json.value(d);
    });
    json.attribute("tensor", static_cast<bool>(tensor));
    json.attribute("per_rank", shard.has_value());
    if (stateOf)
      json.attribute("state_of", static_cast<int64_t>(*stateOf));
    if (startsAtZero)
      json.attribute("starts_at_zero", true);
    if (inHostMemory)
      json.attribute("memory", "host");
    if (!shard)
      return;
    json.attributeObject("shard", [&] {
      json.attributeArray("whole", [&] {
        for (int64_t d : shard->whole)
          json.value(d);
      });
      json.attribute("shard_elements", shard->shardElements);
      json.attributeArray("group_index", [&] {
        for (int64_t index : shard->groupIndex)
          json.value(index);
      });
    });
  });
}

/// The description of `entry` (with `signature` and the mesh's `ranks`);
/// `memory` ("host", "device", "managed"; empty: not known yet) says where
/// its buffers live, and `memoryReason` why they are not on the device.
static std::string
writeDescription(const EntrySignature &signature, int64_t ranks,
                 StringRef entry, const ArtifactOptions &options,
                 StringRef gpuFormat, StringRef memory, StringRef memoryReason,
                 bool collectivesUniform, DictionaryAttr hostMemory) {
  std::string text;
  llvm::raw_string_ostream os(text);
  llvm::json::OStream json(os, /*IndentSize=*/2);
  json.object([&] {
    json.attribute("format", "zero-artifact");
    json.attribute("version", 1);
    json.attribute("runtime_abi", ZERO_RUNTIME_ABI_VERSION);
    bool cuda = options.target == ArtifactTarget::Cuda;
    json.attribute("target", cuda ? "cuda" : "cpu");
    if (cuda) {
      json.attribute("chip", options.cuda.chip);
      json.attribute("kernels", gpuFormat == "bin" ? "cubin" : "ptx");
    }
    if (!memory.empty())
      json.attribute("memory", memory);
    if (!memoryReason.empty())
      json.attribute("memory_reason", memoryReason);
    if (cuda)
      json.attribute("collectives",
                     stringifyGpuCollectives(options.cuda.gpuCollectives));
    json.attribute("collectives_uniform", collectivesUniform);
    json.attribute("entry", entry);
    json.attribute("ranks", ranks);
    // Which values zero-offload-to-host kept in host memory.
    auto inHost = [&](StringRef which, int64_t i) {
      auto list = hostMemory ? hostMemory.getAs<DenseI64ArrayAttr>(which)
                             : DenseI64ArrayAttr();
      return list && llvm::is_contained(list.asArrayRef(), i);
    };
    json.attributeArray("arguments", [&] {
      for (auto [i, type] : llvm::enumerate(signature.argTypes))
        writeValue(json, "arg" + std::to_string(i), type,
                   signature.arguments[i].shard, inHost("arguments", i),
                   std::nullopt, signature.arguments[i].startsAtZero);
    });
    json.attributeArray("results", [&] {
      for (auto [i, type] : llvm::enumerate(signature.resultTypes))
        writeValue(json, "result" + std::to_string(i), type,
                   signature.results[i].shard, inHost("results", i),
                   signature.results[i].stateOf);
    });
  });
  return text;
}

//===----------------------------------------------------------------------===//
// The artifact's exports
//===----------------------------------------------------------------------===//

/// Adds the description as `const char zero_artifact_description[]`.
static void addDescription(llvm::Module &module, StringRef description) {
  llvm::Constant *text =
      llvm::ConstantDataArray::getString(module.getContext(), description);
  new llvm::GlobalVariable(module, text->getType(), /*isConstant=*/true,
                           llvm::GlobalValue::ExternalLinkage, text,
                           rt::kArtifactDescriptionSymbol);
}

//===----------------------------------------------------------------------===//
// Object code and linking
//===----------------------------------------------------------------------===//

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
makeHostTargetMachine(StringRef cpu, llvm::CodeGenOptLevel level =
                                         llvm::CodeGenOptLevel::Aggressive) {
  static std::once_flag targetsReady;
  std::call_once(targetsReady, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for %s: %s",
                                   triple.str().c_str(), error.c_str());
  std::string cpuName =
      cpu == "native" ? llvm::sys::getHostCPUName().str() : cpu.str();
  std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
      target->createMCSubtargetInfo(triple, cpuName, ""));
  if (!subtarget || !subtarget->isCPUStringValid(cpuName))
    return llvm::createStringError("LLVM does not know the CPU '%s' of %s",
                                   cpuName.c_str(), triple.str().c_str());
  std::unique_ptr<llvm::TargetMachine> machine(
      target->createTargetMachine(triple, cpuName, "", llvm::TargetOptions(),
                                  llvm::Reloc::PIC_, std::nullopt, level));
  if (!machine)
    return llvm::createStringError("cannot make a target machine for %s",
                                   triple.str().c_str());
  return machine;
}

static llvm::Error emitObject(llvm::Module &module,
                              llvm::TargetMachine &machine, StringRef path) {
  std::error_code ec;
  llvm::ToolOutputFile out(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(ec, "cannot write %s: %s",
                                   path.str().c_str(), ec.message().c_str());
  llvm::legacy::PassManager pm;
  if (machine.addPassesToEmitFile(pm, out.os(), nullptr,
                                  llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("LLVM cannot emit object code for %s",
                                   machine.getTargetTriple().str().c_str());
  pm.run(module);
  out.keep();
  return llvm::Error::success();
}

/// Makes each local symbol of `module` external and hidden, as
/// llvm::SplitModule does: a partition may then refer to a symbol that
/// another defines, and the artifact still exports only its two symbols.
static void externalizeLocals(llvm::Module &module) {
  for (llvm::GlobalValue &value : module.global_values()) {
    if (!value.hasLocalLinkage())
      continue;
    value.setLinkage(llvm::GlobalValue::ExternalLinkage);
    value.setVisibility(llvm::GlobalValue::HiddenVisibility);
    if (!value.hasName())
      value.setName("zero_unnamed");
  }
}

namespace {
/// Functions whose object code another thread generates: as bitcode (one
/// LLVMContext is not shared between threads), at an optimization level.
struct CodegenJob {
  llvm::SmallString<0> bitcode;
  llvm::CodeGenOptLevel level;
};
} // namespace

/// A job for the `functions` of `module`, which declares the rest.
static CodegenJob
makeJob(const llvm::Module &module,
        const llvm::SmallPtrSetImpl<const llvm::GlobalValue *> &functions,
        llvm::CodeGenOptLevel level) {
  llvm::ValueToValueMapTy map;
  std::unique_ptr<llvm::Module> part =
      llvm::CloneModule(module, map, [&](const llvm::GlobalValue *value) {
        return functions.contains(value);
      });
  CodegenJob job;
  job.level = level;
  llvm::raw_svector_ostream os(job.bitcode);
  llvm::WriteBitcodeToFile(*part, os);
  return job;
}

/// Generates `job`'s object code into `path`; the error's text, if any.
static std::string runJob(const CodegenJob &job, StringRef cpu,
                          StringRef path) {
  llvm::LLVMContext context;
  auto part = llvm::parseBitcodeFile(
      llvm::MemoryBufferRef(job.bitcode.str(), "partition"), context);
  if (!part)
    return llvm::toString(part.takeError());
  auto machine = makeHostTargetMachine(cpu, job.level);
  if (!machine)
    return llvm::toString(machine.takeError());
  if (llvm::Error error = emitObject(**part, **machine, path))
    return llvm::toString(std::move(error));
  return "";
}

/// The functions of `module` other than `entry`, in `count` groups of about
/// equal size: the largest first, each to the group with the fewest
/// instructions so far.
static std::vector<llvm::SmallPtrSet<const llvm::GlobalValue *, 16>>
balanceFunctions(llvm::Module &module, const llvm::Function *entry,
                 unsigned count) {
  llvm::SmallVector<std::pair<size_t, llvm::Function *>> bySize;
  for (llvm::Function &function : module)
    if (!function.isDeclaration() && &function != entry)
      bySize.push_back({function.getInstructionCount(), &function});
  llvm::stable_sort(bySize, [](auto &a, auto &b) { return a.first > b.first; });
  std::vector<llvm::SmallPtrSet<const llvm::GlobalValue *, 16>> groups(count);
  std::vector<size_t> sizes(count, 0);
  for (auto [size, function] : bySize) {
    size_t lightest = llvm::min_element(sizes) - sizes.begin();
    groups[lightest].insert(function);
    sizes[lightest] += size;
  }
  return groups;
}

/// The object code of the optimized `module`, in `paths` (temporary files
/// the caller removes), generated in parallel on `threads` (0: one per
/// core). Its functions are split in groups of about equal size, one per
/// thread; this thread generates the first group in `module` itself, with
/// `machine`, and the others are copied out. An entry that
/// selectEntryQuickly marked `optnone` is generated alone, at -O0: the
/// register allocator that optimized code gets grows faster than a block
/// of thousands of calls (6.6 s of a 400-tensor sharded step's entry,
/// against 0.2 s at -O0).
static llvm::Error emitObjects(llvm::Module &module, StringRef cpu,
                               llvm::TargetMachine &machine, unsigned threads,
                               llvm::SmallVectorImpl<std::string> &paths) {
  unsigned cores =
      threads ? threads : llvm::hardware_concurrency().compute_thread_count();
  externalizeLocals(module);
  std::vector<CodegenJob> jobs;
  llvm::Function *entry = module.getFunction(rt::kArtifactEntrySymbol);
  if (entry && entry->hasOptNone() && !entry->isDeclaration()) {
    llvm::SmallPtrSet<const llvm::GlobalValue *, 16> alone = {entry};
    jobs.push_back(makeJob(module, alone, llvm::CodeGenOptLevel::None));
  } else {
    entry = nullptr;
  }
  auto groups = balanceFunctions(module, entry, std::max(1u, cores));
  for (size_t i = 1; i < groups.size(); ++i)
    if (!groups[i].empty())
      jobs.push_back(
          makeJob(module, groups[i], llvm::CodeGenOptLevel::Aggressive));
  // What the jobs generate, `module` only declares.
  for (llvm::Function &function : module)
    if (!function.isDeclaration() && !groups[0].contains(&function))
      function.deleteBody();

  for (size_t i = 0; i <= jobs.size(); ++i) {
    llvm::SmallString<128> path;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("zero-compile", "o", path))
      return llvm::createStringError(ec, "cannot create a temporary file");
    paths.push_back(path.str().str());
  }
  // The jobs' errors, and this thread's last: written while the jobs run,
  // the vector is never resized.
  std::vector<std::string> errors(jobs.size() + 1);
  // One thread: the jobs run here, one after another.
  std::optional<llvm::StdThreadPool> pool;
  if (cores > 1)
    pool.emplace(llvm::hardware_concurrency(cores - 1));
  for (size_t i = 0; i < jobs.size(); ++i) {
    auto run = [&, i] { errors[i] = runJob(jobs[i], cpu, paths[i]); };
    if (pool)
      pool->async(run);
    else
      run();
  }
  if (llvm::Error error = emitObject(module, machine, paths.back()))
    errors.back() = llvm::toString(std::move(error));
  if (pool)
    pool->wait();
  for (const std::string &error : errors)
    if (!error.empty())
      return llvm::createStringError("code generation failed: %s",
                                     error.c_str());
  return llvm::Error::success();
}

/// Links `objects` into the shared library `output` with the compiler
/// driver `linker`.
static llvm::Error linkSharedLibrary(StringRef linker,
                                     ArrayRef<std::string> objects,
                                     StringRef output) {
  auto program = llvm::sys::findProgramByName(linker);
  if (!program || !llvm::sys::fs::can_execute(*program))
    return llvm::createStringError(
        "cannot find the linker driver '%s' (set it with --linker)",
        linker.str().c_str());
  llvm::SmallString<128> log;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("zero-compile", "log", log))
    return llvm::createStringError(ec, "cannot create a temporary file");
  llvm::FileRemover removeLog(log);
  // The runtime's symbols stay undefined: the launcher that loads the
  // artifact provides them.
  llvm::SmallVector<StringRef> args = {*program, "-shared", "-o", output};
  args.append(objects.begin(), objects.end());
  args.append({"-lm", "-Wl,-z,now"});
  std::optional<StringRef> redirects[] = {std::nullopt, log.str(), log.str()};
  std::string error;
  int status = llvm::sys::ExecuteAndWait(*program, args, std::nullopt,
                                         redirects, 0, 0, &error);
  if (status != 0) {
    auto text = llvm::MemoryBuffer::getFile(log);
    return llvm::createStringError(
        "linking %s with %s failed%s%s\n%s", output.str().c_str(),
        program->c_str(), error.empty() ? "" : ": ", error.c_str(),
        text ? (*text)->getBuffer().str().c_str() : "");
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// compileArtifact
//===----------------------------------------------------------------------===//

/// An error naming the first function that the kernels' PTX declares but
/// does not define: a libdevice function (__nv_powf, ...) that was not
/// linked because the toolkit's libdevice was not found. The driver would
/// refuse such PTX when the artifact loads.
static llvm::Error checkPtxIsLinked(ModuleOp module, StringRef toolkit) {
  std::string missing;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute attribute : binary.getObjects()) {
      auto object = dyn_cast<gpu::ObjectAttr>(attribute);
      if (!object || object.getFormat() != gpu::CompilationTarget::Assembly)
        continue;
      StringRef ptx = object.getObject().getValue();
      size_t at = ptx.find(".extern .func");
      if (at == StringRef::npos)
        continue;
      // ".extern .func  (.param .b32 func_retval0) __nv_powf", the
      // parameters' "(" here or on the next line: the name ends the line.
      StringRef line = ptx.substr(at)
                           .take_until([](char c) { return c == '\n'; })
                           .rtrim(" \t(");
      StringRef name = line.substr(line.find_last_of(" \t)") + 1);
      missing = name.str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (missing.empty())
    return llvm::Error::success();
  return llvm::createStringError(
      "the kernels call %s, which CUDA's libdevice defines, but no libdevice "
      "was found under %s/nvvm/libdevice to link it: give the CUDA toolkit "
      "with --cuda-path",
      missing.c_str(), toolkit.str().c_str());
}

/// What zero-offload-to-host kept in host memory of `entry`'s arguments
/// and results (`{arguments = [...], results = [...]}`), or null.
static DictionaryAttr hostMemoryOf(ModuleOp module, StringRef entry) {
  auto all = module->getAttrOfType<DictionaryAttr>("zero.host_memory");
  return all ? all.getAs<DictionaryAttr>(entry) : DictionaryAttr();
}

llvm::Error zero::exec::compileArtifact(ModuleOp module, StringRef entry,
                                        const ArtifactOptions &options,
                                        StringRef outputPath,
                                        std::string *descriptionOut,
                                        TimingScope *timing) {
  TimingScope untimed;
  TimingScope &root = timing ? *timing : untimed;
  auto signature = EntrySignature::read(module, entry);
  if (!signature)
    return signature.takeError();
  int64_t ranks = getMeshRanks(module);
  auto machine = makeHostTargetMachine(options.hostCpu);
  if (!machine)
    return machine.takeError();

  MLIRContext *context = module.getContext();
  DialectRegistry registry;
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  gpu::registerOffloadingLLVMTranslationInterfaceExternalModels(registry);
  context->appendDialectRegistry(registry);
  std::string gpuFormat;
  // The lowering's pass, with zero-compile's options, then --lowering-options
  // parsed against the pass's declaration.
  std::unique_ptr<Pass> lower;
  ZeroToNVVMOptions nvvm = options.cuda;
  if (options.target == ArtifactTarget::Cuda) {
    auto format = resolveGpuFormat(nvvm.gpuFormat, nvvm.cudaPath);
    if (!format)
      return format.takeError();
    nvvm.gpuFormat = *format;
    gpuFormat = *format == GpuFormat::Bin ? "bin" : "isa";
    lower = createZeroToNVVM(nvvm);
  } else {
    lower = createZeroToLLVM();
  }
  std::string problem;
  if (failed(lower->initializeOptions(options.loweringOptions,
                                      [&](const llvm::Twine &message) {
                                        problem = message.str();
                                        return failure();
                                      })))
    return llvm::createStringError(
        "'%s' are not options of %s (see zero-opt --help): %s",
        options.loweringOptions.c_str(), lower->getArgument().str().c_str(),
        problem.c_str());
  {
    TimingScope lowering = root.nest("MLIR lowering");
    if (llvm::Error error = lowerModule(
            module, [&](OpPassManager &pm) { pm.addPass(std::move(lower)); },
            &lowering))
      return error;
  }
  if (options.target == ArtifactTarget::Cuda) {
    if (llvm::Error error = checkPtxIsLinked(module, nvvm.cudaPath))
      return error;
    // What the kernels are, should --lowering-options have chosen.
    module.walk([&](gpu::BinaryOp binary) {
      for (Attribute attribute : binary.getObjects())
        if (auto object = dyn_cast<gpu::ObjectAttr>(attribute))
          gpuFormat = object.getFormat() == gpu::CompilationTarget::Binary
                          ? "bin"
                          : "isa";
    });
  }
  // Where the buffers live: zero-gpu-buffer-placement decided for a GPU.
  auto memoryAttr = module->getAttrOfType<StringAttr>("zero.gpu_memory");
  auto reasonAttr = module->getAttrOfType<StringAttr>("zero.gpu_memory_reason");
  std::string description =
      writeDescription(*signature, ranks, entry, options, gpuFormat,
                       options.target == ArtifactTarget::Cpu ? "host"
                       : memoryAttr ? memoryAttr.getValue()
                                    : "managed",
                       reasonAttr ? reasonAttr.getValue() : "",
                       module->hasAttr(kCollectivesUniformAttrName),
                       hostMemoryOf(module, entry));
  if (descriptionOut)
    *descriptionOut = description;

  llvm::LLVMContext llvmContext;
  TimingScope translation = root.nest("translation to LLVM IR");
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, "zero-artifact");
  translation.stop();
  if (!llvmModule)
    return llvm::createStringError("translating to LLVM IR failed");
  llvmModule->setDataLayout((*machine)->createDataLayout());
  llvmModule->setTargetTriple((*machine)->getTargetTriple());
  llvm::Function *function = llvmModule->getFunction(entry);
  if (!function)
    return llvm::createStringError("@%s is gone after lowering",
                                   entry.str().c_str());
  // Only the artifact's two exports stay visible; the optimizer may inline
  // and drop the rest.
  for (llvm::Function &f : *llvmModule)
    if (!f.isDeclaration())
      f.setLinkage(llvm::GlobalValue::InternalLinkage);
  selectEntryQuickly(makePackedEntry(*function));
  makeLaunchSlotsStatic(*llvmModule);
  addDescription(*llvmModule, description);
  TimingScope optimization = root.nest("LLVM optimization");
  if (llvm::Error error = optimizeModule(*llvmModule, 3, machine->get()))
    return error;
  optimization.stop();

  llvm::SmallVector<std::string> objects;
  llvm::scope_exit removeObjects([&] {
    for (const std::string &object : objects)
      llvm::sys::fs::remove(object);
  });
  TimingScope codegen = root.nest("code generation");
  if (llvm::Error error = emitObjects(*llvmModule, options.hostCpu, **machine,
                                      options.codegenThreads, objects))
    return error;
  codegen.stop();
  TimingScope link = root.nest("link");
  return linkSharedLibrary(options.linker.empty() ? ZERO_C_COMPILER
                                                  : options.linker,
                           objects, outputPath);
}
