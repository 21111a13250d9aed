//===- HostQueue.cpp - a rank's host work beside its stream ---------------===//
//
// An offloaded update's host work (its loops and its copies across the
// link) runs on a thread of its own, in the order the rank queued it, while
// the rank's thread goes on launching the rest of the step: the host's
// update of one bucket overlaps the device's backward pass over the next.
// zero-offload-to-host decides what is queued and where the rank waits for
// it (zero_rt_host_queue_join); the GPU's part (a fence on the rank's
// stream, copies on the queue's own stream) is in backends/Cuda.cpp.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "core/FatalSignals.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

/// The calling rank thread's queue and the thread that runs it, started on
/// the first work and stopped when the rank thread ends.
class HostQueue {
public:
  ~HostQueue() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    if (worker.joinable())
      worker.join();
  }

  void push(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!worker.joinable())
      worker = std::thread([this] { run(); });
    items.push_back({std::move(work), zero_bound_rank()});
    ++queued;
    changed.notify_all();
  }

  /// How many items have been queued so far: a ticket that wait() takes.
  int64_t mark() {
    std::lock_guard<std::mutex> lock(mutex);
    return queued;
  }

  /// Returns once the first `ticket` items queued have run.
  void wait(int64_t ticket) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return done >= ticket; });
  }

  /// Returns once every item queued so far has run.
  void join() { wait(mark()); }

private:
  struct Item {
    std::function<void()> work;
    /// The queuing rank, bound while its work runs: a failure there fails
    /// that rank's world, as it would on the rank's own thread.
    zero_rank *rank;
  };

  void run() {
    // A fault in the rank's host work is reported from here too.
    zero::rt::FaultStack faultStack;
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !items.empty(); });
      if (items.empty())
        return;
      Item item = std::move(items.front());
      items.pop_front();
      lock.unlock();
      zero_rank_bind(item.rank);
      item.work();
      zero_rank_bind(nullptr);
      lock.lock();
      ++done;
      changed.notify_all();
    }
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Item> items;
  /// Items queued and items run, since the queue began: tickets count them.
  int64_t queued = 0, done = 0;
  bool stopping = false;
  std::thread worker;
};

HostQueue &queueOfThread() {
  static thread_local HostQueue queue;
  return queue;
}

/// A copy of a task's context: the caller's stack slot, reused once the
/// call that queues the task returns.
std::vector<char> copyContext(const void *context, int64_t bytes) {
  std::vector<char> copy(static_cast<size_t>(std::max<int64_t>(0, bytes)));
  if (!copy.empty())
    std::memcpy(copy.data(), context, copy.size());
  return copy;
}

/// Copies `bytes` of host memory (none when not positive).
bool copyBytes(void *to, const void *from, int64_t bytes) {
  if (bytes > 0)
    std::memcpy(to, from, static_cast<size_t>(bytes));
  return true;
}
} // namespace

void zero::rt::enqueueHostWork(std::function<void()> work) {
  queueOfThread().push(std::move(work));
}

extern "C" void zero_rt_host_queue_for(void (*task)(void *, int64_t, int64_t),
                                       void *context, int64_t contextBytes,
                                       int64_t iterations) {
  zero::rt::enqueueHostWork(
      [task, copy = copyContext(context, contextBytes), iterations]() mutable {
        zero::rt::parallelFor(task, copy.data(), 0, iterations);
      });
}

extern "C" void zero_rt_host_queue_copy(void *to, const void *from,
                                        int64_t bytes) {
  zero::rt::enqueueHostWork([to, from, bytes] { copyBytes(to, from, bytes); });
}

extern "C" void zero_rt_host_queue_free(void *pointer) {
  zero::rt::enqueueHostWork([pointer] { zero_rt_free(pointer); });
}

namespace {
/// Bytes of copies a chunk of an update's iterations moves:
/// ZERO_HOST_QUEUE_CHUNK where set, else what the compiler chose
/// (`compiled`, zero-offload-to-host's cost model), else the whole update
/// in one chunk.
int64_t chunkBytes(int64_t compiled) {
  if (const char *given = std::getenv("ZERO_HOST_QUEUE_CHUNK"))
    return std::max<int64_t>(1, std::atoll(given));
  return compiled > 0 ? compiled : std::numeric_limits<int64_t>::max();
}

/// One copy of an update: `bytes` an iteration, from `from` to `to` at the
/// iteration's offset; or, copied whole, `bytes` in all.
struct RangeCopy {
  char *to;
  const char *from;
  int64_t bytes;
};

/// An update's copies: in and out by chunks of its iterations, and those
/// of buffers that do not split by them (a scalar, a fused bucket's),
/// copied whole before its first chunk (in) or after its last (out).
struct UpdateCopies {
  std::vector<RangeCopy> in, out, wholeIn, wholeOut;

  /// From zero_rt_host_queue_update's table: triples (to, from, bytes an
  /// iteration, or the whole copy's bytes negated).
  UpdateCopies(const int64_t *table, int64_t copiesIn, int64_t copiesOut) {
    for (int64_t i = 0; i < copiesIn + copiesOut; ++i) {
      int64_t bytes = table[3 * i + 2];
      RangeCopy copy{reinterpret_cast<char *>(table[3 * i]),
                     reinterpret_cast<const char *>(table[3 * i + 1]),
                     bytes < 0 ? -bytes : bytes};
      bool isIn = i < copiesIn;
      (bytes < 0 ? (isIn ? wholeIn : wholeOut) : (isIn ? in : out))
          .push_back(copy);
    }
  }
};

/// Starts the copies in `copies` of iterations [first, last).
bool startCopies(const zero::rt::CopyEngine &engine,
                 const std::vector<RangeCopy> &copies, int64_t first,
                 int64_t last) {
  for (const RangeCopy &copy : copies)
    if (!engine.issue(copy.to + first * copy.bytes,
                      copy.from + first * copy.bytes,
                      (last - first) * copy.bytes))
      return false;
  return true;
}

/// Starts the whole copies `copies`.
bool startWhole(const zero::rt::CopyEngine &engine,
                const std::vector<RangeCopy> &copies) {
  for (const RangeCopy &copy : copies)
    if (!engine.issue(copy.to, copy.from, copy.bytes))
      return false;
  return true;
}

/// An update's chunks of iterations: `size` iterations each, `count` of
/// them, the last perhaps shorter.
struct Chunks {
  int64_t size, count, iterations;
  int64_t begin(int64_t k) const { return k * size; }
  int64_t end(int64_t k) const { return std::min(iterations, (k + 1) * size); }
};

Chunks chunksOf(int64_t iterations, const UpdateCopies &copies,
                int64_t compiledChunk) {
  int64_t perIteration = 0;
  for (const std::vector<RangeCopy> *chunked : {&copies.in, &copies.out})
    for (const RangeCopy &copy : *chunked)
      perIteration += copy.bytes;
  int64_t size = std::max<int64_t>(1, chunkBytes(compiledChunk) /
                                          std::max<int64_t>(1, perIteration));
  return {size, iterations / size + (iterations % size != 0), iterations};
}

/// Starts chunk k's copies in (the first's with the whole ones before) and
/// returns a mark after them; -1 when one fails.
int64_t comeIn(const zero::rt::CopyEngine &engine, const UpdateCopies &copies,
               const Chunks &chunks, int64_t k) {
  if ((k == 0 && !startWhole(engine, copies.wholeIn)) ||
      !startCopies(engine, copies.in, chunks.begin(k), chunks.end(k)))
    return -1;
  return engine.mark();
}

/// Copies in started ahead by the queuing thread: a mark after each chunk's.
struct AheadCopies {
  zero::rt::CopyEngine engine;
  std::vector<int64_t> marks;
};

/// The update's pipeline: chunk k + 1 comes in while chunk k is computed
/// and chunk k - 1 goes out (with `ahead`, every chunk's copies in are
/// started already, and chunk k waits for its mark); the whole copies out
/// go after the last chunk's. Returns whether every copy is done.
bool runUpdate(void (*task)(void *, int64_t, int64_t), void *context,
               const Chunks &chunks, const UpdateCopies &copies,
               const zero::rt::CopyEngine &engine, const AheadCopies *ahead) {
  std::vector<int64_t> arrived;
  auto comeInAt = [&](int64_t k) {
    int64_t mark = comeIn(engine, copies, chunks, k);
    arrived.push_back(mark);
    return mark >= 0;
  };
  if (ahead && int64_t(ahead->marks.size()) < chunks.count)
    return false; // starting them failed, and failed the world
  if (!ahead && chunks.count > 0 && !comeInAt(0))
    return false;
  for (int64_t k = 0; k < chunks.count; ++k) {
    if (ahead) {
      if (!ahead->engine.wait(ahead->marks[k]))
        return false;
    } else {
      if (k + 1 < chunks.count && !comeInAt(k + 1))
        return false;
      if (!engine.wait(arrived[k]))
        return false;
    }
    zero::rt::parallelFor(task, context, chunks.begin(k), chunks.end(k));
    if (!startCopies(engine, copies.out, chunks.begin(k), chunks.end(k)))
      return false;
  }
  if (chunks.count > 0 && !startWhole(engine, copies.wholeOut))
    return false;
  return engine.wait(engine.mark());
}

/// A staging buffer the queue takes for an update (enqueueUpdate's
/// `staged`): its bytes, the context slot and the copy out it fills.
struct StagedBuffer {
  int64_t bytes, slot, copy;
};

/// `staged`'s triples, each checked against the update's context and
/// copies: a slot of `contextBytes` and a copy out. Fails the caller
/// (failCaller), and returns none, at the first that is not.
std::optional<std::vector<StagedBuffer>>
readStaged(const int64_t *staged, int64_t count, int64_t contextBytes,
           int64_t copiesIn, int64_t copiesOut) {
  std::vector<StagedBuffer> buffers;
  for (int64_t i = 0; i < count; ++i) {
    StagedBuffer buffer{staged[3 * i], staged[3 * i + 1], staged[3 * i + 2]};
    if (buffer.bytes < 0 || buffer.slot < 0 ||
        8 * buffer.slot + 8 > contextBytes || buffer.copy < copiesIn ||
        buffer.copy >= copiesIn + copiesOut) {
      std::string message =
          "zero_rt_host_queue_update: staged buffer " + std::to_string(i) +
          " (" + std::to_string(buffer.bytes) + " bytes, context slot " +
          std::to_string(buffer.slot) + ", copy " +
          std::to_string(buffer.copy) + ") is not a slot of the " +
          std::to_string(contextBytes) + "-byte context and a copy out of " +
          std::to_string(copiesIn) + " + " + std::to_string(copiesOut);
      zero::rt::failCaller(message);
      return std::nullopt;
    }
    buffers.push_back(buffer);
  }
  return buffers;
}
} // namespace

void zero::rt::enqueueUpdate(void (*task)(void *, int64_t, int64_t),
                             void *context, int64_t contextBytes,
                             int64_t iterations, const int64_t *table,
                             int64_t copiesIn, int64_t copiesOut,
                             int64_t chunkBytes, const int64_t *staged,
                             int64_t stagedCount, StagingMemory memory,
                             std::function<CopyEngine()> engine,
                             std::optional<CopyEngine> ahead) {
  std::optional<std::vector<StagedBuffer>> stagedBuffers =
      readStaged(staged, stagedCount, contextBytes, copiesIn, copiesOut);
  if (!stagedBuffers)
    return;
  UpdateCopies copies(table, copiesIn, copiesOut);
  Chunks chunks = chunksOf(iterations, copies, chunkBytes);
  std::shared_ptr<AheadCopies> started;
  if (ahead) {
    started = std::make_shared<AheadCopies>(AheadCopies{*ahead, {}});
    for (int64_t k = 0; k < chunks.count; ++k) {
      int64_t mark = comeIn(started->engine, copies, chunks, k);
      if (mark < 0)
        break;
      started->marks.push_back(mark);
    }
  }
  // The table as the queue fills it: a staged buffer's address goes in
  // when the queue has taken it.
  std::vector<int64_t> filled(table, table + 3 * (copiesIn + copiesOut));
  enqueueHostWork([task, state = copyContext(context, contextBytes), chunks,
                   filled = std::move(filled), copiesIn, copiesOut,
                   stagedBuffers = std::move(*stagedBuffers), memory,
                   engine = std::move(engine), started]() mutable {
    // The update's staging, held only while it runs: the rank queues every
    // update of a step well ahead of its queue.
    std::vector<void *> taken;
    for (const StagedBuffer &buffer : stagedBuffers) {
      void *pointer =
          takeStagingOnQueue(buffer.bytes, memory.allocate, memory.release);
      taken.push_back(pointer);
      int64_t address = reinterpret_cast<int64_t>(pointer);
      std::memcpy(state.data() + 8 * buffer.slot, &address, sizeof address);
      filled[3 * buffer.copy + 1] = address;
    }
    UpdateCopies copies(filled.data(), copiesIn, copiesOut);
    // A copy that failed may still read its staging: the world has failed,
    // and the buffer stays taken.
    if (runUpdate(task, state.data(), chunks, copies, engine(), started.get()))
      for (void *pointer : taken)
        giveStagingOnQueue(pointer);
  });
}

extern "C" void
zero_rt_host_queue_update(void (*task)(void *, int64_t, int64_t), void *context,
                          int64_t contextBytes, int64_t iterations,
                          const int64_t *copies, int64_t copiesIn,
                          int64_t copiesOut, int64_t chunkBytes,
                          const int64_t *staged, int64_t stagedCount) {
  zero::rt::enqueueUpdate(
      task, context, contextBytes, iterations, copies, copiesIn, copiesOut,
      chunkBytes, staged, stagedCount,
      {zero::rt::allocateHostBuffer, zero::rt::releaseHostBuffer}, [] {
        return zero::rt::CopyEngine{copyBytes, [] { return int64_t(0); },
                                    [](int64_t) { return true; }};
      });
}

extern "C" int64_t zero_rt_host_queue_mark(void) {
  return queueOfThread().mark();
}

extern "C" void zero_rt_host_queue_wait(int64_t ticket) {
  queueOfThread().wait(ticket);
}

extern "C" void zero_rt_host_queue_join(void) { queueOfThread().join(); }
