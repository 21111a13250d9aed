//===- Runtime.cpp - the C ABI over a backend -----------------------------===//
//
// Argument checks, counters and the thread binding live here, once, for every
// backend.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "launch/Timeline.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>

using namespace zero::rt;

struct zero_rank {
  zero_world *world;
  int32_t local;
  int32_t id;
  /// What the rank did when, while the world traces.
  Timeline timeline;
  /// The label of the next collective (zero_rt_label).
  const char *nextLabel = nullptr;
  /// Between zero_batch_begin and zero_batch_end.
  bool inBatch = false;
  std::atomic<uint64_t> bytesSent[ZERO_NUM_COLLECTIVE_KINDS] = {};
  std::atomic<uint64_t> issued[ZERO_NUM_COLLECTIVE_KINDS] = {};
  std::atomic<uint64_t> systemAllocations{0};
  /// Collectives issued per group, for sequence numbers in messages.
  std::map<std::string, uint64_t> sequence;
  /// Decoded groups by descriptor contents.
  std::map<std::vector<int64_t>, Group> groups;
};

struct zero_world {
  std::unique_ptr<Backend> backend;
  std::atomic<bool> tracing{false};
  /// now() at creation: trace times count from here.
  double epoch = 0;
  std::vector<std::unique_ptr<zero_rank>> ranks;
  mutable std::mutex errorMutex;
  mutable std::string errorCopy;
};

struct zero_handle {
  std::unique_ptr<Pending> pending;
  /// For the trace: the rank that started it, what it is, when it started.
  zero_rank *rank = nullptr;
  std::string name;
  uint64_t bytes = 0;
  std::string label;
  double started = 0;
};

double zero::rt::now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

namespace {
thread_local zero_rank *boundRank = nullptr;

zero_rank *currentRank(const char *function) {
  if (!boundRank) {
    std::fprintf(stderr,
                 "zero: error: %s called on a thread with no rank bound "
                 "(zero_rank_bind)\n",
                 function);
    std::abort();
  }
  return boundRank;
}

/// A handle whose collective never started; waiting reports failure.
class NotStarted : public Pending {
public:
  bool wait() override { return false; }
};

uint64_t ringBytes(zero_collective_kind kind, int64_t count, size_t elementSize,
                   int32_t n) {
  uint64_t bytes = static_cast<uint64_t>(count) * elementSize;
  switch (kind) {
  case ZERO_ALL_REDUCE:
    return 2 * (n - 1) * bytes / n;
  case ZERO_REDUCE_SCATTER:
    return (n - 1) * bytes / n;
  case ZERO_ALL_GATHER:
    return (n - 1) * bytes;
  case ZERO_ALL_TO_ALL:
    return (n - 1) * bytes / n;
  default:
    return 0;
  }
}

/// The group `descriptor` names for `rank`, decoded once per distinct
/// descriptor; null, with the world failed, when it is malformed. `what`
/// names the caller in the message.
const Group *lookupGroup(zero_rank *rank, const int64_t *descriptor,
                         const char *what) {
  // Only the header is read before it is known to be sane.
  std::vector<int64_t> contents;
  if (descriptor && descriptor[0] >= 1 && descriptor[0] <= 16) {
    int64_t numAxes = descriptor[1 + descriptor[0]];
    if (numAxes >= 0 && numAxes <= descriptor[0])
      contents.assign(descriptor, descriptor + 2 + descriptor[0] + numAxes);
  }
  auto cached = rank->groups.find(contents);
  if (cached != rank->groups.end())
    return &cached->second;
  Backend &backend = *rank->world->backend;
  Group group;
  std::string error = "malformed group descriptor";
  if (contents.empty() ||
      !decodeGroup(descriptor, rank->id, backend.worldSize(), group, error)) {
    backend.fail("rank " + std::to_string(rank->id) + ": " + what + ": " +
                 error);
    return nullptr;
  }
  return &rank->groups.emplace(contents, std::move(group)).first->second;
}

/// Starts a collective of the program, or (`launcherOwn`) one of the
/// launcher's between the program's calls, which is numbered apart and not
/// counted or traced.
zero_handle *startCollective(zero_rank *rank, zero_collective_kind kind,
                             const void *in, void *out, int64_t count,
                             int32_t dtype, int32_t reduction,
                             const int64_t *descriptor,
                             bool launcherOwn = false) {
  auto *handle = new zero_handle;
  Backend &backend = *rank->world->backend;
  if (!backend.error().empty()) {
    handle->pending = std::make_unique<NotStarted>();
    return handle;
  }
  Collective c;
  c.kind = kind;
  c.in = in;
  c.out = out;
  c.count = count;
  c.dtype = static_cast<zero_dtype>(dtype);
  c.reduction = static_cast<zero_reduction>(reduction);

  const Group *group = lookupGroup(rank, descriptor, kindName(kind));
  if (!group) {
    handle->pending = std::make_unique<NotStarted>();
    return handle;
  }
  c.group = *group;
  c.sequence =
      rank->sequence[launcherOwn ? "launcher " + c.group.key : c.group.key]++;

  int32_t n = c.group.size();
  std::string error;
  if (dtype < 0 || dtype >= kNumDtypes)
    error = "unknown dtype " + std::to_string(dtype);
  else if (kindReduces(kind) && (reduction < ZERO_SUM || reduction > ZERO_MIN))
    error = "unknown reduction " + std::to_string(reduction);
  else if (kindReduces(kind) && reduction == ZERO_MEAN &&
           isIntegerDtype(static_cast<zero_dtype>(dtype)))
    error = "an integer mean is not exact";
  else if (count < 0)
    error = "negative element count";
  else if ((kind == ZERO_REDUCE_SCATTER || kind == ZERO_ALL_TO_ALL) &&
           count % n != 0)
    error = std::to_string(count) + " elements do not split into " +
            std::to_string(n) + " equal parts";
  else if (kind == ZERO_ALL_TO_ALL && in == out && count > 0)
    error = "an all-to-all cannot run in place (its input is its output)";
  if (!error.empty()) {
    backend.fail("rank " + std::to_string(rank->id) + ": " + describe(c) +
                 ": " + error);
    handle->pending = std::make_unique<NotStarted>();
    return handle;
  }

  // ZERO_TRACE=1 prints every collective as it starts.
  static const bool trace = std::getenv("ZERO_TRACE") != nullptr;
  if (trace)
    std::fprintf(stderr, "zero: rank %d starts %s on group %s\n", rank->id,
                 describe(c).c_str(), c.group.describe().c_str());
  uint64_t bytes = ringBytes(kind, count, dtypeSize(c.dtype), n);
  if (!launcherOwn) {
    rank->issued[kind] += 1;
    rank->bytesSent[kind] += bytes;
  }
  bool traced = rank->timeline.active() && !launcherOwn;
  if (traced) {
    handle->rank = rank;
    handle->name = describe(c);
    handle->bytes = bytes;
    if (rank->nextLabel)
      handle->label = rank->nextLabel;
    handle->started = now();
  }
  rank->nextLabel = nullptr;
  handle->pending = backend.start(rank->local, c);
  if (traced)
    rank->timeline.started(handle->name, handle->started, now());
  return handle;
}
} // namespace

void zero::rt::failCaller(const std::string &message) {
  if (zero_rank *rank = zero_bound_rank())
    return zero_rank_fail(rank, message.c_str());
  std::fprintf(stderr, "zero: error: %s\n", message.c_str());
  std::exit(1);
}

const char *zero::rt::kindName(zero_collective_kind kind) {
  switch (kind) {
  case ZERO_ALL_REDUCE:
    return "all_reduce";
  case ZERO_REDUCE_SCATTER:
    return "reduce_scatter";
  case ZERO_ALL_GATHER:
    return "all_gather";
  case ZERO_ALL_TO_ALL:
    return "all_to_all";
  default:
    return "collective";
  }
}

bool zero::rt::kindReduces(zero_collective_kind kind) {
  return kind == ZERO_ALL_REDUCE || kind == ZERO_REDUCE_SCATTER;
}

const char *zero::rt::dtypeName(zero_dtype dtype) {
  switch (dtype) {
  case ZERO_F32:
    return "f32";
  case ZERO_BF16:
    return "bf16";
  case ZERO_F16:
    return "f16";
  case ZERO_F64:
    return "f64";
  case ZERO_I32:
    return "i32";
  case ZERO_I64:
    return "i64";
  case ZERO_I8:
    return "i8";
  }
  return "?";
}

size_t zero::rt::dtypeSize(zero_dtype dtype) {
  switch (dtype) {
  case ZERO_BF16:
  case ZERO_F16:
    return 2;
  case ZERO_F32:
  case ZERO_I32:
    return 4;
  case ZERO_F64:
  case ZERO_I64:
    return 8;
  case ZERO_I8:
    return 1;
  }
  return 1;
}

bool zero::rt::isIntegerDtype(zero_dtype dtype) {
  return dtype == ZERO_I32 || dtype == ZERO_I64 || dtype == ZERO_I8;
}

std::string zero::rt::describe(const Collective &c) {
  static const char *reductions[] = {"sum", "mean", "max", "min"};
  std::ostringstream os;
  os << kindName(c.kind) << " #" << c.sequence << " of " << c.count << " "
     << dtypeName(c.dtype);
  if (kindReduces(c.kind) && c.reduction >= 0 && c.reduction < 4)
    os << " (" << reductions[c.reduction] << ")";
  return os.str();
}

//===----------------------------------------------------------------------===//
// Launcher API
//===----------------------------------------------------------------------===//

void zero::rt::noteSystemAllocation() {
  if (boundRank)
    ++boundRank->systemAllocations;
}

int64_t zero::rt::ranksInProcess() {
  return boundRank ? static_cast<int64_t>(boundRank->world->ranks.size()) : 1;
}

extern "C" {

void zero_options_init(zero_options *options) {
  options->backend = "local";
  options->ranks = 1;
  options->timeout_seconds = 60;
  options->check = 1;
}

int zero_world_create(const zero_options *options, zero_world **world,
                      char *error, size_t error_size) {
  std::string message;
  std::string name = options->backend ? options->backend : "local";
  double timeout = options->timeout_seconds > 0 ? options->timeout_seconds : 60;
  std::unique_ptr<Backend> backend;
  if (name == "local") {
    backend = createLocalBackend(options->ranks, timeout, message, nullptr,
                                 options->check != 0);
  } else if (name == "cuda-local") {
    if (auto exchange = createCudaExchange(options->ranks, message))
      backend = createLocalBackend(options->ranks, timeout, message,
                                   std::move(exchange), options->check != 0);
  } else if (name == "mpi") {
    backend = createMpiBackend(timeout, options->check != 0, message);
  } else if (name == "nccl") {
    backend = createNcclBackend(timeout, options->check != 0, message);
  } else {
    message = "unknown backend '" + name +
              "' (expected local, cuda-local, mpi or nccl)";
  }
  if (!backend) {
    if (error && error_size)
      std::snprintf(error, error_size, "%s", message.c_str());
    *world = nullptr;
    return 1;
  }
  auto *w = new zero_world;
  w->backend = std::move(backend);
  w->epoch = now();
  for (int32_t i = 0; i < w->backend->numLocalRanks(); ++i) {
    auto rank = std::make_unique<zero_rank>();
    rank->world = w;
    rank->local = i;
    rank->id = w->backend->worldRank(i);
    w->ranks.push_back(std::move(rank));
  }
  *world = w;
  return 0;
}

void zero_world_destroy(zero_world *world) {
  delete world;
  // The pools serve the world's ranks; a later world allocates anew.
  zero_host_memory_release();
}

int32_t zero_world_size(const zero_world *world) {
  return world->backend->worldSize();
}

int32_t zero_world_num_local_ranks(const zero_world *world) {
  return static_cast<int32_t>(world->ranks.size());
}

zero_rank *zero_world_local_rank(zero_world *world, int32_t i) {
  if (i < 0 || i >= static_cast<int32_t>(world->ranks.size()))
    return nullptr;
  return world->ranks[i].get();
}

const char *zero_world_error(const zero_world *world) {
  std::lock_guard<std::mutex> lock(world->errorMutex);
  world->errorCopy = world->backend->error();
  return world->errorCopy.empty() ? nullptr : world->errorCopy.c_str();
}

int32_t zero_rank_id(const zero_rank *rank) { return rank->id; }

void zero_rank_bind(zero_rank *rank) { boundRank = rank; }

zero_rank *zero_bound_rank(void) { return boundRank; }

void zero_rank_fail(zero_rank *rank, const char *message) {
  rank->world->backend->fail("rank " + std::to_string(rank->id) + " failed: " +
                             (message ? message : "(no message)"));
}

void zero_rank_counters(const zero_rank *rank, zero_counters *counters) {
  for (int k = 0; k < ZERO_NUM_COLLECTIVE_KINDS; ++k) {
    counters->bytes_sent[k] = rank->bytesSent[k].load();
    counters->issued[k] = rank->issued[k].load();
  }
  counters->system_allocations = rank->systemAllocations.load();
}

zero_handle *zero_all_reduce(zero_rank *rank, const void *in, void *out,
                             int64_t count, zero_dtype dtype,
                             zero_reduction reduction, const int64_t *group) {
  return startCollective(rank, ZERO_ALL_REDUCE, in, out, count, dtype,
                         reduction, group);
}

zero_handle *zero_reduce_scatter(zero_rank *rank, const void *in, void *out,
                                 int64_t count, zero_dtype dtype,
                                 zero_reduction reduction,
                                 const int64_t *group) {
  return startCollective(rank, ZERO_REDUCE_SCATTER, in, out, count, dtype,
                         reduction, group);
}

zero_handle *zero_all_gather(zero_rank *rank, const void *in, void *out,
                             int64_t count, zero_dtype dtype,
                             const int64_t *group) {
  return startCollective(rank, ZERO_ALL_GATHER, in, out, count, dtype, ZERO_SUM,
                         group);
}

zero_handle *zero_all_to_all(zero_rank *rank, const void *in, void *out,
                             int64_t count, zero_dtype dtype,
                             const int64_t *group) {
  return startCollective(rank, ZERO_ALL_TO_ALL, in, out, count, dtype, ZERO_SUM,
                         group);
}

int zero_rank_barrier(zero_rank *rank, void *scratch) {
  const int64_t world[] = {1, rank->world->backend->worldSize(), 1, 0};
  *static_cast<int64_t *>(scratch) = 1;
  return zero_wait(startCollective(rank, ZERO_ALL_REDUCE, scratch, scratch, 1,
                                   ZERO_I64, ZERO_SUM, world,
                                   /*launcherOwn=*/true));
}

/// Records the wait for `handle` on its rank's timeline: the computation
/// up to the wait, the time blocked, and the collective itself.
static void traceWait(zero_handle *handle, double called, double returned) {
  Timeline &timeline = handle->rank->timeline;
  if (!timeline.active())
    return;
  const Pending &pending = *handle->pending;
  double began = pending.began >= 0 ? pending.began : handle->started;
  double finished = pending.finished >= 0 ? pending.finished : returned;
  timeline.waited(handle->name, called, returned, began, finished,
                  handle->bytes, handle->label);
}

int zero_wait(zero_handle *handle) {
  double waitBegan = handle->rank ? now() : 0;
  bool ok = handle->pending->wait();
  if (handle->rank)
    traceWait(handle, waitBegan, now());
  delete handle;
  return ok ? 0 : 1;
}

void zero_world_set_tracing(zero_world *world, int32_t enable) {
  world->tracing = enable != 0;
  world->backend->setTracing(enable != 0);
}

void zero_rank_trace_begin(zero_rank *rank) {
  if (rank->world->tracing)
    rank->timeline.begin(now());
  else
    rank->timeline = Timeline();
}

void zero_rank_trace_end(zero_rank *rank) {
  if (rank->timeline.active())
    rank->timeline.end(now(), rank->world->backend->takeComputeSpans());
}

int zero_world_write_trace(const zero_world *world, const char *path,
                           char *error, size_t error_size) {
  std::vector<RankTimeline> ranks;
  for (const auto &rank : world->ranks)
    ranks.push_back({rank->id, &rank->timeline});
  if (writeChromeTrace(path, ranks, world->epoch))
    return 0;
  if (error && error_size)
    std::snprintf(error, error_size, "cannot write the trace to '%s'", path);
  return 1;
}

void zero_batch_begin(zero_rank *rank) {
  Backend &backend = *rank->world->backend;
  if (rank->inBatch) {
    backend.fail("rank " + std::to_string(rank->id) +
                 ": zero_batch_begin in a batch (batches do not nest)");
    return;
  }
  rank->inBatch = true;
  backend.beginBatch(rank->local);
}

void zero_batch_end(zero_rank *rank) {
  Backend &backend = *rank->world->backend;
  if (!rank->inBatch) {
    backend.fail("rank " + std::to_string(rank->id) +
                 ": zero_batch_end without zero_batch_begin");
    return;
  }
  rank->inBatch = false;
  backend.endBatch(rank->local);
}

//===----------------------------------------------------------------------===//
// Compiled-code API
//===----------------------------------------------------------------------===//

int64_t zero_rt_rank(void) { return currentRank(__func__)->id; }

int64_t zero_rt_size(void) {
  return currentRank(__func__)->world->backend->worldSize();
}

int64_t zero_rt_group_index(const int64_t *descriptor) {
  const Group *group =
      lookupGroup(currentRank(__func__), descriptor, "replica_index");
  return group ? group->index : 0;
}

zero_handle *zero_rt_all_reduce_start(const void *in, void *out, int64_t count,
                                      int32_t dtype, int32_t reduction,
                                      const int64_t *group) {
  return startCollective(currentRank(__func__), ZERO_ALL_REDUCE, in, out, count,
                         dtype, reduction, group);
}

zero_handle *zero_rt_reduce_scatter_start(const void *in, void *out,
                                          int64_t count, int32_t dtype,
                                          int32_t reduction,
                                          const int64_t *group) {
  return startCollective(currentRank(__func__), ZERO_REDUCE_SCATTER, in, out,
                         count, dtype, reduction, group);
}

zero_handle *zero_rt_all_gather_start(const void *in, void *out, int64_t count,
                                      int32_t dtype, const int64_t *group) {
  return startCollective(currentRank(__func__), ZERO_ALL_GATHER, in, out, count,
                         dtype, ZERO_SUM, group);
}

zero_handle *zero_rt_all_to_all_start(const void *in, void *out, int64_t count,
                                      int32_t dtype, const int64_t *group) {
  return startCollective(currentRank(__func__), ZERO_ALL_TO_ALL, in, out, count,
                         dtype, ZERO_SUM, group);
}

void zero_rt_wait(zero_handle *handle) {
  if (handle)
    (void)zero_wait(handle);
}

void zero_rt_batch_begin(void) { zero_batch_begin(currentRank(__func__)); }

void zero_rt_batch_end(void) { zero_batch_end(currentRank(__func__)); }

void zero_rt_label(const char *label) {
  currentRank(__func__)->nextLabel = label;
}

void zero_rt_check(int32_t holds, const char *message) {
  if (holds)
    return;
  zero_rank *rank = currentRank(__func__);
  std::string what = "rank " + std::to_string(rank->id) +
                     ": the program's own check failed (its code, not "
                     "zero's): " +
                     (message ? message : "(no message)");
  // A backend whose failure ends the job (mpi, nccl) does not return.
  rank->world->backend->fail(what);
  // Compiled code cannot unwind, and going on would make the access that
  // was checked: every rank of the process ends, with the message.
  std::fprintf(stderr, "zero: error: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(1);
}

void zero_rt_all_reduce(const void *in, void *out, int64_t count, int32_t dtype,
                        int32_t reduction, const int64_t *group) {
  zero_rt_wait(
      zero_rt_all_reduce_start(in, out, count, dtype, reduction, group));
}

void zero_rt_reduce_scatter(const void *in, void *out, int64_t count,
                            int32_t dtype, int32_t reduction,
                            const int64_t *group) {
  zero_rt_wait(
      zero_rt_reduce_scatter_start(in, out, count, dtype, reduction, group));
}

void zero_rt_all_gather(const void *in, void *out, int64_t count, int32_t dtype,
                        const int64_t *group) {
  zero_rt_wait(zero_rt_all_gather_start(in, out, count, dtype, group));
}

void zero_rt_all_to_all(const void *in, void *out, int64_t count, int32_t dtype,
                        const int64_t *group) {
  zero_rt_wait(zero_rt_all_to_all_start(in, out, count, dtype, group));
}

} // extern "C"
