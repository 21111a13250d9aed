//===- zero-launch.cpp - run a compiled zero artifact on N ranks ----------===//
//
// The runtime's launcher: loads an artifact made by zero-compile, runs its
// entry function on every rank of a world (local threads or mpi processes),
// with arguments from .npy files, and writes the results as .npy files. It
// needs no LLVM or MLIR.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/Artifact.h"
#include "zero/runtime/zero_runtime.h"

#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

using namespace zero::rt;

// Compiled code copies between buffers of different layouts with this
// function, as code JIT-compiled by MLIR's ExecutionEngine does.
extern "C" __attribute__((visibility("default"))) void
memrefCopy(int64_t elementBytes, void *source, void *target) {
  zero_rt_memref_copy(elementBytes, source, target);
}

namespace {
const char *usage =
    "usage: zero-launch ARTIFACT [options]\n"
    "\n"
    "Runs a program compiled by zero-compile on N ranks.\n"
    "\n"
    "  --arg I=FILE.npy   argument I; \"{rank}\" in FILE is the rank; a shard\n"
    "                     argument takes the whole tensor and each rank its\n"
    "                     part\n"
    "  --generate         generate the arguments that no --arg gives, as\n"
    "                     zero-run does: uniform in [-1, 1), the same on "
    "every\n"
    "                     rank unless --per-rank (without it, every argument\n"
    "                     needs an --arg)\n"
    "  --seed N           the generator's seed (default 1)\n"
    "  --per-rank I,J,... generated arguments that differ per rank\n"
    "  --range I=LOW:HIGH generate argument I in [LOW, HIGH) (integers:\n"
    "                     [LOW, HIGH])\n"
    "  --backend NAME     local (threads; the default for a CPU artifact),\n"
    "                     cuda-local (threads sharing GPU 0, collectives on\n"
    "                     the GPU; the default for a GPU artifact), mpi, or\n"
    "                     nccl (one process per GPU, under mpirun or\n"
    "                     torchrun-style: RANK, WORLD_SIZE, MASTER_ADDR, ...)\n"
    "  --ranks N          ranks of a local world (default: the artifact's "
    "mesh)\n"
    "  --timeout S        seconds a rank waits for the others (default 60)\n"
    "  --output-dir DIR   write each result as DIR/rank<r>/result<i>.npy\n"
    "  --print            print each result of each rank\n"
    "  --repeat K         run the entry K times (inputs reloaded), report the\n"
    "                     best time\n"
    "  --trace FILE       write a Chrome trace of the last run\n"
    "  --expect DIR       compare each result with DIR/rank<r>/result<i>.npy\n"
    "                     (as --output-dir writes them; shards on their real\n"
    "                     elements) and fail when one differs by more than\n"
    "  --max-ulp K        units in the last place (default 0: bit for bit)\n"
    "  --describe         print the artifact's description and exit\n";

/// How a generated argument is made (as zero-run's InputSpec).
struct Generated {
  bool perRank = false;
  double low = -1, high = 1;
};

struct Options {
  std::string artifact;
  std::map<size_t, std::string> args;
  bool generate = false;
  uint64_t seed = 1;
  std::map<size_t, Generated> generated;
  /// Empty: by the artifact (cuda-local for a GPU's, else local).
  std::string backend;
  int32_t ranks = 0;
  double timeout = 60;
  std::string outputDir;
  bool print = false;
  int repeat = 1;
  std::string trace;
  std::string expect;
  double maxUlp = 0;
  bool describe = false;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "zero-launch: error: %s\n", message.c_str());
  return 1;
}

/// `digits` as an argument index, or nullopt when it overflows (a program has
/// far fewer arguments than any index this rejects).
std::optional<unsigned> parseIndex(const std::string &digits) {
  unsigned index = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), index);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return std::nullopt;
  return index;
}

/// Parses the command line; returns an error message or "".
std::string parseOptions(int argc, char **argv, Options &options) {
  auto number = [](const char *text, double &value) {
    char *end;
    value = std::strtod(text, &end);
    return *text && !*end;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string text;
    double n;
    if (arg == "--help" || arg == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (arg == "--print") {
      options.print = true;
    } else if (arg == "--describe") {
      options.describe = true;
    } else if (arg == "--arg") {
      size_t eq;
      if (!value(text) || (eq = text.find('=')) == std::string::npos ||
          eq == 0 || eq + 1 == text.size() ||
          text.find_first_not_of("0123456789") != eq)
        return "--arg expects I=FILE, got '" + text + "'";
      std::optional<unsigned> index = parseIndex(text.substr(0, eq));
      if (!index)
        return "--arg: argument index '" + text.substr(0, eq) +
               "' is out of range";
      options.args[*index] = text.substr(eq + 1);
    } else if (arg == "--generate") {
      options.generate = true;
    } else if (arg == "--seed") {
      if (!value(text) || !number(text.c_str(), n) || n < 0 ||
          n >= 18446744073709551616.0 || n != double(uint64_t(n)))
        return "--seed expects a non-negative integer, got '" + text + "'";
      options.seed = uint64_t(n);
    } else if (arg == "--per-rank") {
      if (!value(text) || text.empty() ||
          text.find_first_not_of("0123456789,") != std::string::npos)
        return "--per-rank expects argument indices I,J,..., got '" + text +
               "'";
      for (size_t at = 0; at < text.size();) {
        size_t end = std::min(text.find(',', at), text.size());
        if (end == at)
          return "--per-rank expects argument indices I,J,..., got '" + text +
                 "'";
        std::optional<unsigned> index = parseIndex(text.substr(at, end - at));
        if (!index)
          return "--per-rank: argument index '" + text.substr(at, end - at) +
                 "' is out of range";
        options.generated[*index].perRank = true;
        at = end + 1;
      }
    } else if (arg == "--range") {
      size_t eq, colon;
      double low, high;
      if (!value(text) || (eq = text.find('=')) == std::string::npos ||
          eq == 0 || text.find_first_not_of("0123456789") != eq ||
          (colon = text.find(':', eq)) == std::string::npos ||
          !number(text.substr(eq + 1, colon - eq - 1).c_str(), low) ||
          !number(text.substr(colon + 1).c_str(), high) || !(low < high))
        return "--range expects I=LOW:HIGH with LOW < HIGH, got '" + text + "'";
      std::optional<unsigned> index = parseIndex(text.substr(0, eq));
      if (!index)
        return "--range: argument index '" + text.substr(0, eq) +
               "' is out of range";
      Generated &spec = options.generated[*index];
      spec.low = low;
      spec.high = high;
    } else if (arg == "--backend") {
      if (!value(options.backend))
        return "--backend expects a name";
    } else if (arg == "--ranks") {
      if (!value(text) || !number(text.c_str(), n) || n < 1 ||
          n > std::numeric_limits<int32_t>::max() || n != int32_t(n))
        return "--ranks expects a positive integer, got '" + text + "'";
      options.ranks = int32_t(n);
    } else if (arg == "--timeout") {
      if (!value(text) || !number(text.c_str(), n) || n <= 0)
        return "--timeout expects positive seconds, got '" + text + "'";
      options.timeout = n;
    } else if (arg == "--repeat") {
      if (!value(text) || !number(text.c_str(), n) || n < 1 ||
          n > std::numeric_limits<int>::max() || n != int(n))
        return "--repeat expects a positive integer, got '" + text + "'";
      options.repeat = int(n);
    } else if (arg == "--output-dir") {
      if (!value(options.outputDir))
        return "--output-dir expects a directory";
    } else if (arg == "--expect") {
      if (!value(options.expect))
        return "--expect expects a directory";
    } else if (arg == "--max-ulp") {
      if (!value(text) || !number(text.c_str(), n) || n < 0)
        return "--max-ulp expects a non-negative number, got '" + text + "'";
      options.maxUlp = n;
    } else if (arg == "--trace") {
      if (!value(options.trace))
        return "--trace expects a file";
    } else if (!arg.empty() && arg[0] == '-') {
      return "unknown option '" + arg + "' (see --help)";
    } else if (options.artifact.empty()) {
      options.artifact = arg;
    } else {
      return "one artifact only, got '" + options.artifact + "' and '" + arg +
             "'";
    }
  }
  if (options.artifact.empty())
    return "no artifact given (see --help)";
  return "";
}

std::string withRank(std::string path, int32_t rank) {
  for (size_t at; (at = path.find("{rank}")) != std::string::npos;)
    path.replace(at, 6, std::to_string(rank));
  return path;
}

std::string makeDirectories(const std::string &path) {
  for (size_t at = 1; at <= path.size(); ++at)
    if (at == path.size() || path[at] == '/')
      if (mkdir(path.substr(0, at).c_str(), 0777) != 0 && errno != EEXIST)
        return "cannot create " + path.substr(0, at) + ": " +
               std::strerror(errno);
  return "";
}

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
  return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
}

void *allocateManaged(size_t bytes) {
  return zero_rt_gpu_alloc(static_cast<int64_t>(bytes));
}

void *allocateDevice(size_t bytes) {
  return zero_rt_gpu_alloc_device(static_cast<int64_t>(bytes));
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

/// Checks that a GPU artifact can run here: a GPU of the chip it was built
/// for, and its kernels loaded. Returns an error message or "".
std::string checkGpu(const ArtifactDescription &d) {
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

/// The values of one rank's arguments, read from their files or generated.
/// Whether `backend` can run the artifact: cuda-local moves GPU buffers,
/// local and mpi host memory.
std::string checkBackend(const ArtifactDescription &d,
                         const std::string &backend) {
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
           "with "
           "--gpu-collectives=host for the local and mpi backends";
  return "";
}

std::string readInputs(const ArtifactDescription &d, const Options &options,
                       int32_t rank, std::vector<Array> &inputs) {
  inputs.clear();
  for (size_t i = 0; i < d.arguments.size(); ++i) {
    const ArtifactValue &value = d.arguments[i];
    Array array;
    array.dtype = value.type.dtype;
    array.shape = value.shard ? value.shard->whole : value.type.shape;
    if (auto file = options.args.find(i); file != options.args.end()) {
      std::string error = readNpy(withRank(file->second, rank), array);
      if (!error.empty())
        return value.name + " (argument " + std::to_string(i) + "): " + error;
    } else {
      Generated spec;
      if (auto it = options.generated.find(i); it != options.generated.end())
        spec = it->second;
      fillUniform(array, options.seed, unsigned(i), spec.perRank ? rank : -1,
                  spec.low, spec.high);
    }
    if (value.shard)
      array = takeShard(array, value.shard->shardElements,
                        value.shard->groupIndex[rank]);
    inputs.push_back(std::move(array));
  }
  return "";
}

struct RankResult {
  int32_t rank = 0;
  std::vector<Array> outputs;
  double bestSeconds = 0;
};

/// Runs the entry once on the bound rank; returns an error message or "".
std::string runOnce(const Artifact &artifact, const Memory &memory,
                    std::vector<Array> &inputs, RankResult &result, bool keep) {
  const ArtifactDescription &d = artifact.getDescription();
  std::vector<ValueType> argTypes, resultTypes;
  for (const ArtifactValue &v : d.arguments)
    argTypes.push_back(v.type);
  for (const ArtifactValue &v : d.results)
    resultTypes.push_back(v.type);
  PackedCall call(argTypes, resultTypes);
  std::vector<void *> buffers;
  std::set<void *> ours;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!argTypes[i].isTensor) {
      buffers.push_back(inputs[i].bytes.data());
      continue;
    }
    void *buffer = memory.allocate(inputs[i].bytes.size());
    if (!buffer)
      return "out of memory for argument " + std::to_string(i) + " (" +
             std::to_string(inputs[i].bytes.size()) + " bytes)";
    memory.write(buffer, inputs[i].bytes.data(), inputs[i].bytes.size());
    buffers.push_back(buffer);
    ours.insert(buffer);
  }
  void **packed = call.pack(buffers).data();
  auto start = std::chrono::steady_clock::now();
  artifact.getEntry()(packed);
  if (artifact.getDescription().target == "cuda")
    zero_rt_gpu_synchronize();
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (result.bestSeconds == 0 || seconds < result.bestSeconds)
    result.bestSeconds = seconds;
  // Two results may share a buffer: free only after all are copied.
  std::set<void *> toFree;
  if (keep)
    result.outputs.assign(resultTypes.size(), Array());
  for (size_t i = 0; i < resultTypes.size(); ++i)
    if (void *allocated = call.unpackResult(
            i, keep ? &result.outputs[i] : nullptr, memory.read);
        allocated && !ours.count(allocated))
      toFree.insert(allocated);
  for (void *buffer : toFree)
    memory.release(buffer);
  for (void *buffer : ours)
    memory.release(buffer);
  return "";
}

/// Compares each result of `run` with the one in `dir`; prints a line per
/// result and returns whether all are within `maxUlp`.
bool compareResults(const ArtifactDescription &d, const RankResult &run,
                    const std::string &dir, double maxUlp) {
  bool ok = true;
  for (size_t i = 0; i < run.outputs.size(); ++i) {
    Array expected, got = run.outputs[i];
    expected.dtype = got.dtype;
    expected.shape = got.shape;
    std::string path = dir + "/rank" + std::to_string(run.rank) + "/result" +
                       std::to_string(i) + ".npy";
    std::printf("rank %d result %zu: ", run.rank, i);
    if (std::string error = readNpy(path, expected); !error.empty()) {
      std::printf("cannot compare: %s\n", error.c_str());
      ok = false;
      continue;
    }
    if (const auto &shard = d.results[i].shard) {
      int64_t index = shard->groupIndex[run.rank];
      zeroShardPadding(expected, shard->getWholeElements(), index);
      zeroShardPadding(got, shard->getWholeElements(), index);
    }
    Difference diff = compare(got, expected);
    if (diff.differing == 0) {
      std::printf("identical\n");
      continue;
    }
    std::printf("%lld of %lld elements differ, by at most %llu ulp (first at "
                "%lld)\n",
                static_cast<long long>(diff.differing),
                static_cast<long long>(got.getNumElements()),
                static_cast<unsigned long long>(diff.maxUlp),
                static_cast<long long>(diff.firstIndex));
    if (static_cast<double>(diff.maxUlp) > maxUlp)
      ok = false;
  }
  return ok;
}

void printResult(const RankResult &run, size_t index) {
  std::printf("rank %d result %zu:%s\n", run.rank, index,
              formatValues(run.outputs[index]).c_str());
}
} // namespace

int main(int argc, char **argv) {
  Options options;
  if (std::string error = parseOptions(argc, argv, options); !error.empty())
    return fail(error);
  std::string error;
  std::unique_ptr<Artifact> artifact = Artifact::open(options.artifact, error);
  if (!artifact)
    return fail(error);
  const ArtifactDescription &d = artifact->getDescription();
  if (options.describe) {
    std::printf("%s\n", artifact->getDescriptionText().c_str());
    return 0;
  }
  for (const auto &[index, path] : options.args)
    if (index >= d.arguments.size())
      return fail("--arg " + std::to_string(index) + ": @" + d.entry +
                  " takes " + std::to_string(d.arguments.size()) +
                  " arguments");
  for (const auto &[index, spec] : options.generated)
    if (index >= d.arguments.size() || options.args.count(index))
      return fail("--per-rank/--range " + std::to_string(index) + ": " +
                  (options.args.count(index)
                       ? "argument " + std::to_string(index) +
                             " comes from a file (--arg)"
                       : "@" + d.entry + " takes " +
                             std::to_string(d.arguments.size()) +
                             " arguments"));
  for (size_t i = 0; i < d.arguments.size() && !options.generate; ++i)
    if (!options.args.count(i))
      return fail("no file for " + d.arguments[i].name + " (argument " +
                  std::to_string(i) + ", " +
                  (d.arguments[i].shard
                       ? "a shard of " + ValueType{d.arguments[i].type.dtype,
                                                   d.arguments[i].shard->whole}
                                             .str()
                       : d.arguments[i].type.str()) +
                  "): pass --arg " + std::to_string(i) +
                  "=FILE.npy, or --generate");
  std::string backend = options.backend;
  if (backend.empty())
    backend = d.target == "cuda" ? "cuda-local" : "local";
  if (std::string problem = checkBackend(d, backend); !problem.empty())
    return fail(problem);
  Memory memory{allocateHost, std::free, copyBytes, copyBytes};
  if (d.target == "cuda") {
    if (std::string problem = checkGpu(d); !problem.empty())
      return fail(problem);
    memory =
        d.memory == "device"
            ? Memory{allocateDevice, zero_rt_gpu_free, writeDevice, readDevice}
            : Memory{allocateManaged, zero_rt_gpu_free, copyBytes, copyBytes};
  }

  zero_options worldOptions;
  zero_options_init(&worldOptions);
  worldOptions.backend = backend.c_str();
  worldOptions.ranks = options.ranks ? options.ranks
                       : d.ranks > 0 ? int32_t(d.ranks)
                                     : 1;
  worldOptions.timeout_seconds = options.timeout;
  zero_world *world = nullptr;
  char message[512];
  if (zero_world_create(&worldOptions, &world, message, sizeof message))
    return fail(message);
  if (d.ranks > 0 && zero_world_size(world) != d.ranks) {
    std::string why = "the artifact's mesh has " + std::to_string(d.ranks) +
                      " ranks, the world " +
                      std::to_string(zero_world_size(world));
    zero_world_destroy(world);
    return fail(why);
  }
  int32_t local = zero_world_num_local_ranks(world);
  zero_world_set_tracing(world, !options.trace.empty());
  std::vector<RankResult> results(local);
  auto runRank = [&](int32_t i) {
    zero_rank *rank = zero_world_local_rank(world, i);
    zero_rank_bind(rank);
    RankResult &result = results[i];
    result.rank = zero_rank_id(rank);
    for (int k = 0; k < options.repeat && !zero_world_error(world); ++k) {
      std::vector<Array> inputs;
      std::string problem = readInputs(d, options, result.rank, inputs);
      if (problem.empty()) {
        zero_rank_trace_begin(rank);
        problem =
            runOnce(*artifact, memory, inputs, result, k + 1 == options.repeat);
        zero_rank_trace_end(rank);
      }
      if (!problem.empty())
        zero_rank_fail(rank, problem.c_str());
    }
    zero_rank_bind(nullptr);
  };
  std::vector<std::thread> threads;
  for (int32_t i = 1; i < local; ++i)
    threads.emplace_back(runRank, i);
  runRank(0);
  for (std::thread &thread : threads)
    thread.join();

  std::string failure = zero_world_error(world) ? zero_world_error(world) : "";
  if (failure.empty() && !options.trace.empty() &&
      zero_world_write_trace(world, options.trace.c_str(), message,
                             sizeof message))
    failure = message;
  std::vector<zero_counters> counters(local);
  for (int32_t i = 0; i < local; ++i)
    zero_rank_counters(zero_world_local_rank(world, i), &counters[i]);
  zero_world_destroy(world);
  if (!failure.empty())
    return fail(failure);

  static const char *kinds[] = {"all_reduce", "reduce_scatter", "all_gather"};
  bool matches = true;
  for (int32_t i = 0; i < local; ++i) {
    const RankResult &run = results[i];
    std::printf("rank %d: %.3f ms;", run.rank, run.bestSeconds * 1e3);
    for (int k = 0; k < ZERO_NUM_COLLECTIVE_KINDS; ++k)
      std::printf(" %s %llu (%llu B)", kinds[k],
                  static_cast<unsigned long long>(counters[i].issued[k]),
                  static_cast<unsigned long long>(counters[i].bytes_sent[k]));
    std::printf("\n");
    if (options.print)
      for (size_t r = 0; r < run.outputs.size(); ++r)
        printResult(run, r);
    if (!options.expect.empty())
      matches &= compareResults(d, run, options.expect, options.maxUlp);
    if (!options.outputDir.empty()) {
      std::string dir = options.outputDir + "/rank" + std::to_string(run.rank);
      if (std::string problem = makeDirectories(dir); !problem.empty())
        return fail(problem);
      for (size_t r = 0; r < run.outputs.size(); ++r)
        if (std::string problem = writeNpy(
                dir + "/result" + std::to_string(r) + ".npy", run.outputs[r]);
            !problem.empty())
          return fail(problem);
    }
  }
  if (!matches)
    return fail("the results differ from " + options.expect + " by more than " +
                std::to_string(static_cast<long long>(options.maxUlp)) +
                " ulp");
  return 0;
}
