//===- Artifact.cpp - load a program compiled ahead of time ---------------===//

#include "zero/runtime/Artifact.h"
#include "io/Json.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

using namespace zero::rt;

int64_t ShardLayout::getWholeElements() const { return getNumElements(whole); }

namespace {
/// Reads the description's fields, remembering the first problem.
struct DescriptionReader {
  std::string error;

  const Json *field(const Json &object, const std::string &key, Json::Kind kind,
                    const std::string &where) {
    const Json *value = object.get(key);
    if (!value || value->kind != kind) {
      if (error.empty())
        error = where + " has no " + key;
      return nullptr;
    }
    return value;
  }
  int64_t integer(const Json &object, const std::string &key,
                  const std::string &where) {
    const Json *value = field(object, key, Json::Number, where);
    return value ? static_cast<int64_t>(value->number) : 0;
  }
  std::string string(const Json &object, const std::string &key,
                     const std::string &where) {
    const Json *value = field(object, key, Json::String, where);
    return value ? value->string : "";
  }
  std::vector<int64_t> integers(const Json &object, const std::string &key,
                                const std::string &where) {
    std::vector<int64_t> out;
    if (const Json *value = field(object, key, Json::List, where))
      for (const Json &item : value->list)
        out.push_back(static_cast<int64_t>(item.number));
    return out;
  }
  void values(const Json &root, const std::string &key,
              std::vector<ArtifactValue> &out) {
    const Json *list = field(root, key, Json::List, "the description");
    if (!list)
      return;
    for (size_t i = 0; i < list->list.size(); ++i) {
      const Json &item = list->list[i];
      std::string where = key + "[" + std::to_string(i) + "]";
      ArtifactValue value;
      value.name = string(item, "name", where);
      value.type.dtype = string(item, "dtype", where);
      value.type.shape = integers(item, "shape", where);
      if (const Json *tensor = field(item, "tensor", Json::Bool, where))
        value.type.isTensor = tensor->boolean;
      if (error.empty() && getElementBytes(value.type.dtype) == 0)
        error = where + " has an unknown dtype '" + value.type.dtype + "'";
      if (const Json *shard = item.get("shard");
          shard && shard->kind == Json::Object) {
        ShardLayout layout;
        layout.whole = integers(*shard, "whole", where + ".shard");
        layout.shardElements =
            integer(*shard, "shard_elements", where + ".shard");
        layout.groupIndex = integers(*shard, "group_index", where + ".shard");
        value.shard = layout;
      }
      if (const Json *state = item.get("state_of");
          state && state->kind == Json::Number)
        value.stateOf = static_cast<size_t>(state->number);
      if (const Json *zeros = item.get("starts_at_zero")) {
        if (zeros->kind == Json::Bool)
          value.startsAtZero = zeros->boolean;
        else if (error.empty())
          error = where + ".starts_at_zero is neither true nor false";
      }
      if (const Json *memory = item.get("memory");
          memory && memory->kind == Json::String) {
        value.memory = memory->string;
        if (error.empty() && value.memory != "host")
          error = where + ".memory is '" + value.memory +
                  "'; a value's own memory can only be \"host\"";
      }
      out.push_back(std::move(value));
    }
  }
};
} // namespace

/// Checks that each result with "state_of" names an argument of its type,
/// layout and memory, and no argument twice.
static std::string checkStatePairs(const ArtifactDescription &d) {
  std::vector<bool> fed(d.arguments.size());
  for (size_t i = 0; i < d.results.size(); ++i) {
    const ArtifactValue &result = d.results[i];
    if (!result.stateOf)
      continue;
    std::string where = "results[" + std::to_string(i) + "].state_of";
    size_t j = *result.stateOf;
    if (j >= d.arguments.size())
      return where + " names argument " + std::to_string(j) +
             ", but there are " + std::to_string(d.arguments.size());
    const ArtifactValue &arg = d.arguments[j];
    bool sameLayout = arg.shard.has_value() == result.shard.has_value() &&
                      (!arg.shard || (arg.shard->whole == result.shard->whole &&
                                      arg.shard->shardElements ==
                                          result.shard->shardElements));
    if (arg.type.str() != result.type.str() || !sameLayout)
      return where + ": " + result.type.str() + " cannot feed argument " +
             std::to_string(j) + " (" + arg.type.str() + ")";
    // The launcher hands the result's buffer back as the argument: a device
    // buffer where the program reads host memory is a fault on the host.
    auto memoryName = [](const std::string &memory) {
      return memory.empty() ? std::string("the program's") : memory;
    };
    if (arg.memory != result.memory)
      return where + ": a result in " + memoryName(result.memory) +
             " memory cannot feed argument " + std::to_string(j) + ", in " +
             memoryName(arg.memory) + " memory";
    if (fed[j])
      return where + ": argument " + std::to_string(j) +
             " is fed by two results";
    fed[j] = true;
  }
  return "";
}

std::string
zero::rt::parseArtifactDescription(const std::string &json,
                                   ArtifactDescription &description) {
  Json root;
  if (std::string error = JsonReader(json).read(root); !error.empty())
    return "the description is not JSON (" + error + ")";
  if (root.kind != Json::Object)
    return "the description is not a JSON object";
  DescriptionReader reader;
  if (reader.string(root, "format", "the description") != "zero-artifact")
    return "not a zero artifact (format is not \"zero-artifact\")";
  description.version = reader.integer(root, "version", "the description");
  description.runtimeAbi =
      reader.integer(root, "runtime_abi", "the description");
  description.target = reader.string(root, "target", "the description");
  if (const Json *chip = root.get("chip"); chip && chip->kind == Json::String)
    description.chip = chip->string;
  description.memory = description.target == "cuda" ? "managed" : "host";
  if (const Json *memory = root.get("memory");
      memory && memory->kind == Json::String)
    description.memory = memory->string;
  if (const Json *why = root.get("memory_reason");
      why && why->kind == Json::String)
    description.memoryReason = why->string;
  description.collectives = "host";
  if (const Json *where = root.get("collectives");
      where && where->kind == Json::String)
    description.collectives = where->string;
  if (const Json *uniform = root.get("collectives_uniform");
      uniform && uniform->kind == Json::Bool)
    description.collectivesUniform = uniform->boolean;
  if (description.collectives != "host" && description.collectives != "device")
    return "unknown collectives \"" + description.collectives +
           "\" (expected host or device)";
  if (description.memory != "host" && description.memory != "device" &&
      description.memory != "managed")
    return "unknown memory \"" + description.memory +
           "\" (expected host, device or managed)";
  description.entry = reader.string(root, "entry", "the description");
  description.ranks = reader.integer(root, "ranks", "the description");
  reader.values(root, "arguments", description.arguments);
  reader.values(root, "results", description.results);
  if (!reader.error.empty())
    return reader.error;
  return checkStatePairs(description);
}

//===----------------------------------------------------------------------===//
// Artifact
//===----------------------------------------------------------------------===//

/// Why `path` is not a shared library this process can load, or "": checked
/// before dlopen, which maps the file and would fault (SIGBUS) on a segment
/// cut short by a truncated file.
static std::string checkSharedLibrary(const std::string &path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    return ec ? "cannot read " + path + ": " + ec.message()
              : path + " is not a regular file";
  uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec)
    return "cannot read " + path + ": " + ec.message();
  std::ifstream is(path, std::ios::binary);
  Elf64_Ehdr header;
  if (size < sizeof(header) ||
      !is.read(reinterpret_cast<char *>(&header), sizeof(header)) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return path + " is not an ELF shared library";
#if defined(__x86_64__)
  constexpr uint16_t machine = EM_X86_64;
#elif defined(__aarch64__)
  constexpr uint16_t machine = EM_AARCH64;
#else
  constexpr uint16_t machine = EM_NONE;
#endif
  if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_type != ET_DYN)
    return path + " is not a 64-bit little-endian ELF shared library";
  if (machine != EM_NONE && header.e_machine != machine)
    return path + " is built for another machine (ELF machine " +
           std::to_string(header.e_machine) + ", this one is " +
           std::to_string(machine) + ")";
  auto within = [&](uint64_t offset, uint64_t count, uint64_t each) {
    return offset <= size &&
           count <= (size - offset) / std::max<uint64_t>(each, 1);
  };
  if (header.e_phentsize != sizeof(Elf64_Phdr) ||
      !within(header.e_phoff, header.e_phnum, sizeof(Elf64_Phdr)) ||
      (header.e_shnum &&
       !within(header.e_shoff, header.e_shnum, header.e_shentsize)))
    return path + " is truncated (its headers end past its " +
           std::to_string(size) + " bytes)";
  is.seekg(static_cast<std::streamoff>(header.e_phoff));
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (!is.read(reinterpret_cast<char *>(&segment), sizeof(segment)))
      return "cannot read " + path;
    if (segment.p_type == PT_LOAD &&
        !within(segment.p_offset, segment.p_filesz, 1))
      return path + " is truncated (a segment ends past its " +
             std::to_string(size) + " bytes)";
  }
  return "";
}

std::unique_ptr<Artifact> Artifact::open(const std::string &path,
                                         std::string &error) {
  error = checkSharedLibrary(path);
  if (!error.empty())
    return nullptr;
  std::unique_ptr<Artifact> artifact(new Artifact);
  // RTLD_NOW: a symbol the runtime lacks is an error here, not a crash later.
  // A name without a slash would be looked up on the library path, not here.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  artifact->handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!artifact->handle) {
    const char *why = dlerror();
    error = "cannot load " + path + ": " + (why ? why : "unknown error");
    return nullptr;
  }
  auto *text = static_cast<const char *>(
      dlsym(artifact->handle, kArtifactDescriptionSymbol));
  artifact->entry =
      reinterpret_cast<EntryFn>(dlsym(artifact->handle, kArtifactEntrySymbol));
  if (!text || !artifact->entry) {
    error = path + " is not a zero artifact (no zero_artifact_description or "
                   "zero_artifact_entry)";
    return nullptr;
  }
  artifact->descriptionText = text;
  std::string problem = parseArtifactDescription(artifact->descriptionText,
                                                 artifact->description);
  if (!problem.empty()) {
    error = path + ": " + problem;
    return nullptr;
  }
  const ArtifactDescription &d = artifact->description;
  if (d.version != 1 || d.runtimeAbi != ZERO_RUNTIME_ABI_VERSION) {
    error = path + ": built for runtime ABI " + std::to_string(d.runtimeAbi) +
            " (description version " + std::to_string(d.version) +
            "); this runtime has ABI " +
            std::to_string(ZERO_RUNTIME_ABI_VERSION) +
            " (version 1): rebuild it with this release's zero-compile";
    return nullptr;
  }
  if (d.target != "cpu" && d.target != "cuda") {
    error = path + ": unknown target '" + d.target + "'";
    return nullptr;
  }
  return artifact;
}

Artifact::~Artifact() {
  if (handle)
    dlclose(handle);
}

//===----------------------------------------------------------------------===//
// Running the entry
//===----------------------------------------------------------------------===//

namespace {

/// Where a program's buffers live (the description's "memory"): host memory
/// for a CPU artifact; for a GPU one, device memory, which only copies
/// reach, or managed memory.
struct Memory {
  void *(*allocate)(size_t bytes);
  void (*release)(void *);
  void (*write)(void *buffer, const void *host, size_t bytes);
  PackedCall::ReadFn read;
};

void *allocateHost(size_t bytes) {
  return zero_rt_alloc(static_cast<int64_t>(bytes));
}

void *allocateManaged(size_t bytes) {
  return zero_rt_gpu_alloc(static_cast<int64_t>(bytes));
}

void *allocateDevice(size_t bytes) {
  return zero_rt_gpu_alloc_device(static_cast<int64_t>(bytes));
}

void *allocatePinnedHost(size_t bytes) {
  return zero_rt_gpu_alloc_host(static_cast<int64_t>(bytes));
}

void copyBytes(void *to, const void *from, size_t bytes) {
  std::memcpy(to, from, bytes);
}

// A failed copy is recorded (zero_gpu_error) and fails the bound rank.
void writeDevice(void *buffer, const void *host, size_t bytes) {
  (void)zero_gpu_copy_to_device(buffer, host, bytes);
}

void readDevice(void *host, const void *buffer, size_t bytes) {
  (void)zero_gpu_copy_to_host(host, buffer, bytes);
}

Memory memoryOf(const ArtifactDescription &d) {
  if (d.target != "cuda")
    return {allocateHost, zero_rt_free, copyBytes, copyBytes};
  if (d.memory == "device")
    return {allocateDevice, zero_rt_gpu_free, writeDevice, readDevice};
  return {allocateManaged, zero_rt_gpu_free, copyBytes, copyBytes};
}

/// Where `value` lives: its own memory (an offloaded state's pinned host
/// memory, which the host reads and writes), else the program's.
Memory memoryOf(const ArtifactDescription &d, const ArtifactValue &value) {
  if (d.target == "cuda" && value.memory == "host")
    return {allocatePinnedHost, zero_rt_gpu_free, copyBytes, copyBytes};
  return memoryOf(d);
}

/// The types of `values`, as PackedCall takes them.
std::vector<ValueType> typesOf(const std::vector<ArtifactValue> &values) {
  std::vector<ValueType> types;
  for (const ArtifactValue &value : values)
    types.push_back(value.type);
  return types;
}

/// A buffer of `memory` holding a copy of argument `index`'s `value`, or an
/// error when none can be had.
std::string copyIn(const Memory &memory, size_t index, const Array &value,
                   void *&buffer) {
  buffer = memory.allocate(value.bytes.size());
  if (!buffer)
    return "out of memory for argument " + std::to_string(index) + " (" +
           std::to_string(value.bytes.size()) + " bytes)";
  memory.write(buffer, value.bytes.data(), value.bytes.size());
  return "";
}

/// Calls `entry` on `packed`, and waits for a GPU artifact's kernels; the
/// seconds it took.
double timeEntry(const ArtifactDescription &d, Artifact::EntryFn entry,
                 void **packed) {
  auto start = std::chrono::steady_clock::now();
  entry(packed);
  if (d.target == "cuda")
    zero_rt_gpu_synchronize();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Which arguments of step `step` come from the host: every one at first,
/// then those no result feeds.
std::vector<bool> fromHostAt(const std::vector<bool> &fed, int64_t step) {
  std::vector<bool> wanted(fed.size(), true);
  if (step > 0)
    for (size_t j = 0; j < fed.size(); ++j)
      wanted[j] = !fed[j];
  return wanted;
}

} // namespace

std::string Artifact::checkRunnable(const std::string &backend) const {
  const ArtifactDescription &d = description;
  bool onGpu = backend == "cuda-local" || backend == "nccl";
  if (onGpu && d.target != "cuda")
    return "the " + backend +
           " backend moves GPU buffers, but the artifact runs on the CPU: use "
           "--backend local or mpi";
  bool onHost = backend == "local" || backend == "mpi";
  if (onHost && d.target == "cuda" && d.collectives == "device")
    return "the artifact's collectives run on the GPU (zero-compile "
           "--gpu-collectives=device, the default), which the " +
           backend +
           " backend cannot do: use --backend cuda-local or nccl, or compile "
           "with --gpu-collectives=host for the local and mpi backends";
  if (d.target != "cuda")
    return "";
  char why[512];
  if (zero_gpu_init(why, sizeof why))
    return "the artifact runs on a GPU (" + d.chip + "), but " + why;
  char chip[32], name[256];
  zero_gpu_device(chip, sizeof chip, name, sizeof name);
  if (d.chip != chip)
    return "the artifact was built for " + d.chip + ", but the GPU is " + name +
           " (" + chip + "): rebuild it with zero-compile --chip=" + chip;
  if (const char *error = zero_gpu_error())
    return std::string("loading the artifact's kernels failed: ") + error;
  return "";
}

std::string Artifact::call(std::vector<Array> &inputs,
                           std::vector<Array> *outputs, double &seconds) const {
  const ArtifactDescription &d = description;
  Memory memory = memoryOf(d);
  std::vector<ValueType> argTypes = typesOf(d.arguments),
                         resultTypes = typesOf(d.results);
  if (inputs.size() != argTypes.size())
    return "@" + d.entry + " takes " + std::to_string(argTypes.size()) +
           " arguments, got " + std::to_string(inputs.size());
  PackedCall call(argTypes, resultTypes);
  std::vector<void *> buffers;
  std::set<void *> ours;
  auto releaseOurs = [&] {
    for (void *buffer : ours)
      memory.release(buffer);
  };
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!argTypes[i].isTensor) {
      buffers.push_back(inputs[i].bytes.data());
      continue;
    }
    void *buffer;
    if (std::string error =
            copyIn(memoryOf(d, d.arguments[i]), i, inputs[i], buffer);
        !error.empty()) {
      releaseOurs();
      return error;
    }
    buffers.push_back(buffer);
    ours.insert(buffer);
  }
  seconds = timeEntry(d, entry, call.pack(buffers).data());
  // Two results may share a buffer: free only after all are copied.
  std::set<void *> toFree;
  if (outputs)
    outputs->assign(resultTypes.size(), Array());
  for (size_t i = 0; i < resultTypes.size(); ++i)
    if (void *allocated =
            call.unpackResult(i, outputs ? &(*outputs)[i] : nullptr,
                              memoryOf(d, d.results[i]).read);
        allocated && !ours.count(allocated))
      toFree.insert(allocated);
  for (void *buffer : toFree)
    memory.release(buffer);
  releaseOurs();
  return "";
}

//===----------------------------------------------------------------------===//
// Many steps
//===----------------------------------------------------------------------===//

std::vector<bool> Program::getFedArguments() const {
  std::vector<bool> fed(getArguments().size());
  for (const ArtifactValue &result : getResults())
    if (result.stateOf && *result.stateOf < fed.size())
      fed[*result.stateOf] = true;
  return fed;
}

std::string Program::callSteps(int64_t steps, const StepInputs &inputsOf,
                               std::vector<Array> *outputs,
                               std::vector<double> &stepSeconds,
                               const StepHooks &hooks) const {
  std::vector<bool> fed = getFedArguments();
  std::vector<Array> previous;
  stepSeconds.clear();
  for (int64_t step = 0; step < steps; ++step) {
    hooks.begin(step);
    std::vector<bool> wanted = fromHostAt(fed, step);
    std::vector<Array> inputs(wanted.size());
    for (size_t j = 0; j < wanted.size(); ++j)
      if (wanted[j])
        if (std::string error = inputsOf(step, j, inputs[j], nullptr);
            !error.empty())
          return error;
    if (step > 0)
      for (size_t i = 0; i < getResults().size(); ++i)
        if (std::optional<size_t> j = getResults()[i].stateOf)
          inputs[*j] = std::move(previous[i]);
    bool last = step + 1 == steps;
    bool sinks = hooks.wants(step);
    if (std::string error = hooks.before(step); !error.empty())
      return error;
    std::vector<Array> results;
    double callSeconds = 0;
    if (std::string error =
            call(inputs, last && !outputs && !sinks ? nullptr : &results,
                 callSeconds);
        !error.empty())
      return error;
    stepSeconds.push_back(callSeconds);
    if (sinks) {
      std::vector<Array> state(fed.size());
      for (size_t i = 0; i < getResults().size(); ++i)
        if (std::optional<size_t> j = getResults()[i].stateOf)
          state[*j] = results[i];
      if (std::string error = hooks.takeState(step, state); !error.empty())
        return error;
    }
    previous = std::move(results);
  }
  if (outputs)
    *outputs = std::move(previous);
  return "";
}

namespace {

/// A buffer an artifact's call reads or wrote: where its data starts, and
/// the allocation to release (null: host memory the launcher owns).
struct Held {
  void *data = nullptr;
  void *allocation = nullptr;
};

} // namespace

std::string Artifact::callSteps(int64_t steps, const StepInputs &inputsOf,
                                std::vector<Array> *outputs,
                                std::vector<double> &stepSeconds,
                                const StepHooks &hooks) const {
  const ArtifactDescription &d = description;
  Memory memory = memoryOf(d);
  std::vector<ValueType> argTypes = typesOf(d.arguments),
                         resultTypes = typesOf(d.results);
  std::vector<bool> fed = getFedArguments();
  PackedCall call(argTypes, resultTypes);
  // What each fed argument holds for the next call: a result's buffer, or
  // (a scalar, or a result that is a strided view) its value on the host.
  std::vector<Held> carried(argTypes.size());
  std::vector<Array> carriedValues(argTypes.size());
  std::set<void *> live; // allocations held between calls
  // Per argument, the buffer its values from the host are written into,
  // the same every step (null until needed, or once a result returned in
  // it is carried on as state).
  std::vector<void *> staged(argTypes.size(), nullptr);
  auto releaseAll = [&](const std::set<void *> &allocations) {
    for (void *allocation : allocations)
      memory.release(allocation);
  };
  auto releaseStaged = [&] {
    for (void *&buffer : staged)
      if (buffer && !live.count(buffer))
        memory.release(std::exchange(buffer, nullptr));
  };
  stepSeconds.clear();
  for (int64_t step = 0; step < steps; ++step) {
    hooks.begin(step);
    std::vector<bool> wanted = fromHostAt(fed, step);
    // This call's buffers: the staged ones for values from the host, the
    // carried ones for the state.
    std::set<void *> used = live;
    live.clear();
    std::vector<void *> buffers(argTypes.size());
    // Scalars are passed from here.
    std::vector<Array> inputs(argTypes.size());
    for (size_t j = 0; j < argTypes.size(); ++j) {
      if (!wanted[j] && carried[j].data) {
        buffers[j] = carried[j].data;
        continue;
      }
      // A tensor from the host goes into its staged buffer, in pieces where
      // its maker writes them.
      bool tensor = argTypes[j].isTensor;
      size_t typeBytes =
          tensor ? static_cast<size_t>(argTypes[j].getNumElements() *
                                       getElementBytes(argTypes[j].dtype))
                 : 0;
      Memory own = memoryOf(d, d.arguments[j]);
      if (wanted[j] && tensor && !staged[j] && typeBytes > 0) {
        staged[j] = own.allocate(typeBytes);
        if (!staged[j]) {
          releaseStaged();
          releaseAll(used);
          return "out of memory for argument " + std::to_string(j) + " (" +
                 std::to_string(typeBytes) + " bytes)";
        }
      }
      bool inPieces = false;
      PieceSink sink = [&](size_t offset, const void *data, size_t bytes) {
        inPieces = true;
        own.write(static_cast<char *>(staged[j]) + offset, data, bytes);
      };
      if (wanted[j])
        if (std::string error = inputsOf(step, j, inputs[j],
                                         tensor && staged[j] ? &sink : nullptr);
            !error.empty()) {
          releaseStaged();
          releaseAll(used);
          return error;
        }
      if (inPieces) {
        buffers[j] = staged[j];
        continue;
      }
      Array &value = wanted[j] ? inputs[j] : carriedValues[j];
      if (wanted[j] && tensor && typeBytes > 0 &&
          value.bytes.size() != typeBytes) {
        releaseStaged();
        releaseAll(used);
        return "argument " + std::to_string(j) + " has " +
               std::to_string(value.bytes.size()) + " bytes; the entry takes " +
               std::to_string(typeBytes) + " (" + argTypes[j].str() + ")";
      }
      if (!argTypes[j].isTensor) {
        buffers[j] = value.bytes.data();
        continue;
      }
      if (!staged[j]) {
        if (std::string error = copyIn(own, j, value, staged[j]);
            !error.empty()) {
          releaseStaged();
          releaseAll(used);
          return error;
        }
      } else {
        own.write(staged[j], value.bytes.data(), value.bytes.size());
      }
      buffers[j] = staged[j];
      // The host copy goes now, not with the step: a rank holds each value
      // once, beside at most one host copy.
      std::vector<char>().swap(value.bytes);
    }
    if (std::string error = hooks.before(step); !error.empty()) {
      for (void *buffer : staged)
        used.erase(buffer);
      releaseStaged();
      releaseAll(used);
      return error;
    }
    stepSeconds.push_back(timeEntry(d, entry, call.pack(buffers).data()));
    bool last = step + 1 == steps;
    if (hooks.wants(step)) {
      std::vector<Array> state(argTypes.size());
      for (size_t i = 0; i < resultTypes.size(); ++i)
        if (std::optional<size_t> j = d.results[i].stateOf)
          call.unpackResult(i, &state[*j], memoryOf(d, d.results[i]).read);
      if (std::string error = hooks.takeState(step, state); !error.empty()) {
        // This call's buffers and its results go; nothing is carried on.
        for (size_t i = 0; i < resultTypes.size(); ++i)
          if (void *allocation =
                  call.unpackResult(i, nullptr, memoryOf(d, d.results[i]).read))
            used.insert(allocation);
        for (void *buffer : staged)
          used.erase(buffer);
        releaseStaged();
        releaseAll(used);
        return error;
      }
    }
    if (last && outputs)
      outputs->assign(resultTypes.size(), Array());
    carried.assign(argTypes.size(), Held());
    for (size_t i = 0; i < resultTypes.size(); ++i) {
      std::optional<size_t> j = d.results[i].stateOf;
      bool feeds = !last && j;
      void *data = feeds ? call.denseResultData(i) : nullptr;
      Array *copy = last && outputs  ? &(*outputs)[i]
                    : feeds && !data ? &carriedValues[*j]
                                     : nullptr;
      void *allocation =
          call.unpackResult(i, copy, memoryOf(d, d.results[i]).read);
      if (allocation)
        used.insert(allocation);
      if (data) {
        carried[*j] = {data, allocation};
        live.insert(allocation);
      }
    }
    // What no later call reads goes (an allocation two results share, or
    // that a result returns in place of an argument, once); a staged buffer
    // stays for the next step's values unless it is carried on as state
    // (a result updated in place).
    for (void *allocation : live)
      used.erase(allocation);
    for (void *&buffer : staged)
      if (buffer) {
        used.erase(buffer);
        if (live.count(buffer))
          buffer = nullptr;
      }
    releaseAll(used);
  }
  releaseStaged();
  releaseAll(live);
  return "";
}
