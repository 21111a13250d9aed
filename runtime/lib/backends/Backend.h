//===- Backend.h - the interface every communicator implements --*- C++ -*-===//
//
// A backend runs collectives for the ranks of one world. The runtime's C ABI
// (Runtime.cpp) owns counters, the thread binding and argument checks; a
// backend only moves and reduces data, and detects ranks that disagree or do
// not arrive. The shape of the interface (start returns a handle, wait on it)
// is the one an NCCL backend needs: a start enqueues on a communication
// stream, a wait syncs an event.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_BACKEND_H
#define ZERO_RUNTIME_BACKEND_H

#include "core/Group.h"
#include "zero/runtime/Elements.h"
#include "zero/runtime/zero_runtime.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace zero::rt {

/// One collective as a rank issues it.
struct Collective {
  zero_collective_kind kind;
  const void *in;
  void *out;
  /// Elements of `in`.
  int64_t count;
  zero_dtype dtype;
  zero_reduction reduction;
  Group group;
  /// This rank's sequence number of collectives on `group` (from 0).
  uint64_t sequence;
  /// What the backend attaches to this call (cuda-local: the events that
  /// order it against the rank's stream).
  void *backendData = nullptr;
};

/// Describes a collective for messages: "all_reduce #3 of 1000 f32 (sum)".
std::string describe(const Collective &c);

/// Seconds on the steady clock, the time base of traces.
double now();

/// A started collective.
class Pending {
public:
  virtual ~Pending() = default;
  /// Blocks until done; false when the world failed.
  virtual bool wait() = 0;
  /// When the collective began and finished moving data (now()), as far as
  /// the backend knows; valid after wait(), negative when unknown.
  double began = -1;
  double finished = -1;
};

/// A span of a rank's computation as it ran on a device, on the host's
/// clock.
struct ComputeSpan {
  std::string name;
  double begin, end;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual int32_t worldSize() const = 0;
  virtual int32_t numLocalRanks() const = 0;
  /// World rank of the local rank `local`.
  virtual int32_t worldRank(int32_t local) const = 0;
  /// Starts `c` for local rank `local`. Never null: a collective that cannot
  /// start fails the world and returns a pending that reports it.
  virtual std::unique_ptr<Pending> start(int32_t local,
                                         const Collective &c) = 0;
  /// The collectives local rank `local` starts between these calls form one
  /// batch (zero_batch_begin), which the backend may issue together; a
  /// wait for one of them issues the batch so far. By default each
  /// collective is issued when it starts.
  virtual void beginBatch(int32_t local) {}
  virtual void endBatch(int32_t local) {}
  /// Fails the world with `message` unless it failed already. The message
  /// names the rank it concerns (one process may hold many).
  virtual void fail(const std::string &message) = 0;
  /// Whether the world traces. Compiled GPU code may run under any backend
  /// (a CUDA artifact with collectives on the host), so by default its
  /// kernels are timed on the device; a GPU backend also times its
  /// collectives there (Pending::began and finished), at the price of the
  /// host waiting for each one's end when it is waited for. An override
  /// calls this one.
  virtual void setTracing(bool on);
  /// The computation the calling rank's thread ran on a device since the
  /// last call, while tracing (its kernels, waited for); empty when it ran
  /// on the host.
  virtual std::vector<ComputeSpan> takeComputeSpans();
  /// The first failure, or empty.
  virtual std::string error() const = 0;
};

/// How the ranks of a local world move and reduce data once every member
/// of a group has posted its collective: on the host (the default), or on
/// the GPU (cuda-local). The local backend does the rest: the threads, the
/// rendezvous, the agreement check, the timeouts.
class LocalExchange {
public:
  virtual ~LocalExchange() = default;
  /// On the thread that starts `c`, before the backend queues it.
  virtual std::string prepare(Collective &c) { return ""; }
  /// On each member's communication thread once every member has posted,
  /// `posted` in group order (`c` among them); the others' buffers stay
  /// valid until every member has returned. Returns an error message, or
  /// empty.
  virtual std::string exchange(const std::vector<const Collective *> &posted,
                               const Collective &c) = 0;
  /// On the thread that waits for `c`, once it has finished (`ok` false when
  /// the world failed); called exactly once per prepared call. `pending`'s
  /// times are the host's; an exchange that knows the device's sets them.
  virtual std::string finish(Collective &c, bool ok, Pending &pending) {
    return "";
  }
  virtual void setTracing(bool on) {}
};

/// A world of `ranks` threads; `exchange` null: on the host. With `check`,
/// the members of a group compare what each posted before any data moves.
std::unique_ptr<Backend>
createLocalBackend(int32_t ranks, double timeout, std::string &error,
                   std::unique_ptr<LocalExchange> exchange = nullptr,
                   bool check = true);
/// The cuda-local exchange: collectives as kernels on one GPU, ordered
/// against each rank's stream by CUDA events. Null with `error` set when
/// there is no GPU or the runtime was built without nvcc.
std::unique_ptr<LocalExchange> createCudaExchange(int32_t ranks,
                                                  std::string &error);
/// Initializes MPI for the process once (MPI_THREAD_MULTIPLE; finalized at
/// exit). Returns an error message, or "".
std::string initializeMpi();
/// Null with `error` set when the runtime was built without MPI.
std::unique_ptr<Backend> createMpiBackend(double timeout, bool check,
                                          std::string &error);
/// One process per GPU over NCCL, started under mpirun or torchrun-style
/// (NcclBackend.cpp). Null with `error` set when NCCL, the GPU or the other
/// ranks cannot be had.
std::unique_ptr<Backend> createNcclBackend(double timeout, bool check,
                                           std::string &error);

/// Counts a buffer that the rank bound to the calling thread (if any) took
/// from the system allocator or the CUDA driver (zero_counters'
/// system_allocations).
void noteSystemAllocation();
/// The ranks this process runs (the bound rank's world's; 1 with none
/// bound): threads of the local backends, one under mpi and nccl.
int64_t ranksInProcess();

/// zero_rt_parallel_for over iterations [begin, end) of `grain` elements
/// each (HostParallel.cpp).
void parallelFor(void (*task)(void *, int64_t, int64_t), void *context,
                 int64_t begin, int64_t end, int64_t grain = 1);

/// How an offloaded update's copies cross: `issue` starts a copy of
/// `bytes`, `mark` returns a mark of the copies started so far, and `wait`
/// returns once those before a mark are done (the host queue's update,
/// HostQueue.cpp; backends/Cuda.cpp gives the link's).
struct CopyEngine {
  std::function<bool(void *to, const void *from, int64_t bytes)> issue;
  std::function<int64_t()> mark;
  std::function<bool(int64_t mark)> wait;
};

/// Where the staging buffers an update's queue takes come from: host
/// memory, or a GPU's pinned memory (each an arena of the rank's,
/// Staging.cpp).
struct StagingMemory {
  void *(*allocate)(int64_t);
  void (*release)(void *);
};

/// The host queue's update (zero_rt_host_queue_update): the copies in of
/// each chunk of iterations (about `chunkBytes` of copies; 0: one chunk),
/// the task over it, and its copies out, pipelined on `engine`, which the
/// queue's thread makes (HostQueue.cpp). With `ahead`, the calling thread
/// starts every chunk's copies in on it at once, with a mark after each,
/// and the queue waits for a chunk's mark before its task: what the update
/// reads is then read in the order the caller issued it (the GPU's copies
/// down on the rank's copy stream, so that the rank may free those buffers
/// at once, zero_rt_gpu_free_after_copies). `staged` holds `stagedCount`
/// triples (bytes, context slot, copy): a staging buffer that only the
/// update uses and copies out, which the queue takes from `memory` when it
/// runs the update, writes into the context's 64-bit slot and as that
/// copy's source, and gives back after the update's copies out.
void enqueueUpdate(void (*task)(void *, int64_t, int64_t), void *context,
                   int64_t contextBytes, int64_t iterations,
                   const int64_t *copies, int64_t copiesIn, int64_t copiesOut,
                   int64_t chunkBytes, const int64_t *staged,
                   int64_t stagedCount, StagingMemory memory,
                   std::function<CopyEngine()> engine,
                   std::optional<CopyEngine> ahead = std::nullopt);

/// Fails the bound rank's world with `message` (or, with no rank bound,
/// ends the process with it): the compiled code that called the runtime
/// cannot go on (Runtime.cpp).
void failCaller(const std::string &message);

/// Appends `work` to the calling rank thread's host queue (HostQueue.cpp):
/// run after the work queued before it, on the queue's thread, with the
/// caller's rank bound; zero_rt_host_queue_join waits for all of it.
void enqueueHostWork(std::function<void()> work);

/// A staging buffer of `bytes` for the bound rank once the rank's staging
/// budget allows it (Staging.cpp): carved out of the rank's arena of
/// `allocate`'s memory, or new from `allocate` while the arena grows;
/// `release` returns what goes back to the system.
void *takeStaging(int64_t bytes, void *(*allocate)(int64_t),
                  void (*release)(void *));
/// The same, taken by the bound rank's queue for the update it runs: never
/// waits for the queue's frees (they are its own, after that update), and
/// goes back with giveStagingOnQueue.
void *takeStagingOnQueue(int64_t bytes, void *(*allocate)(int64_t),
                         void (*release)(void *));
void giveStagingOnQueue(void *pointer);
/// Returns every rank's staging arena that `release` returns, where nothing
/// in it is in use, to where it came from: an allocation that failed tries
/// again with its room.
void releaseIdleStaging(void (*release)(void *));
/// Whether `pointer` is a staging buffer in use (Staging.cpp).
bool isStaging(const void *pointer);
/// `bytes` of host memory from the system allocator, aligned as
/// zero_rt_alloc's, that no pool knows (HostMemory.cpp): an allocation that
/// fails gives the pools back and tries again, then ends the process.
void *allocateHostBuffer(int64_t bytes);
/// Returns a buffer of allocateHostBuffer's to the system allocator.
void releaseHostBuffer(void *pointer);

} // namespace zero::rt

#endif // ZERO_RUNTIME_BACKEND_H
