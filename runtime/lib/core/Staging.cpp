//===- Staging.cpp - an offloaded update's staging buffers, bounded -------===//
//
// An offloaded update copies its gradient shard down into a host buffer of
// its own, updates from it, and copies the new weight up from it. The rank
// queues every update of a step as it reaches it, well ahead of the device
// and of its host queue, so without a bound it would hold one such buffer
// per update at once: as much pinned memory as a gradient shard of the whole
// model, beside the state. zero-offload-to-host has the queue free each
// buffer that only the queue uses once its update is done
// (zero_rt_host_queue_free_staging), and the rank takes such buffers here
// (zero_rt_host_alloc_staging, zero_rt_gpu_alloc_staging), within a budget
// of bytes a rank, as DeepSpeed's offload reuses a fixed set of pinned
// buffers:
//
// - while the staging the rank holds and the new buffer would pass the
//   budget, and its queue has frees of staging still to run, the rank waits
//   for them;
// - a freed buffer is kept for the rank's next buffer of its size, or of
//   at least half of it; the kept ones that do not fit go back to the
//   system when the budget needs their room, so that what the rank holds and
//   keeps stays within it (a single buffer larger than the budget, or one the
//   rank takes when its queue has no frees to run, passes it).
//
// The wait cannot deadlock: a queued free follows only work the rank has
// already queued, whose inputs the rank's stream already holds.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace {

/// The staging buffers of every rank.
class StagingCache {
public:
  /// Bytes of staging a rank may hold and keep: ZERO_STAGING_BYTES (0: no
  /// bound), else 256 MiB.
  static int64_t budget() {
    const char *given = std::getenv("ZERO_STAGING_BYTES");
    return given ? std::max<int64_t>(0, std::atoll(given)) : int64_t(256) << 20;
  }

  void *take(int64_t bytes, void *(*allocate)(int64_t),
             void (*release)(void *)) {
    zero_rank *rank = zero_bound_rank();
    std::vector<Buffer> dropped;
    void *pointer = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex);
      Holding &h = held[rank];
      int64_t limit = budget();
      while (limit > 0 && h.pendingFrees > 0 && h.inUse + bytes > limit)
        freed.wait_for(lock, std::chrono::milliseconds(100));
      // The smallest kept buffer that holds `bytes`, up to twice them: a
      // step's sizes mix, and one a little larger serves instead of a
      // new allocation.
      if (auto it = h.kept.lower_bound(bytes);
          it != h.kept.end() && it->first <= 2 * bytes) {
        pointer = it->second.pointer;
        bytes = it->first;
        h.kept.erase(it);
        h.keptBytes -= bytes;
      } else {
        // Room for the new buffer: the kept ones go, largest first.
        while (limit > 0 && !h.kept.empty() &&
               h.inUse + h.keptBytes + bytes > limit) {
          auto largest = std::prev(h.kept.end());
          dropped.push_back(largest->second);
          h.keptBytes -= largest->first;
          h.kept.erase(largest);
        }
      }
      h.inUse += bytes;
    }
    for (const Buffer &buffer : dropped)
      buffer.release(buffer.pointer);
    if (!pointer)
      pointer = allocate(bytes);
    std::lock_guard<std::mutex> lock(mutex);
    live[pointer] = {pointer, rank, bytes, release};
    return pointer;
  }

  /// Notes that the bound rank queued the free of `pointer`.
  void queued(void *pointer) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = live.find(pointer); it != live.end())
      ++held[it->second.rank].pendingFrees;
  }

  /// Keeps `pointer` (freed by the rank's queue) for its rank's next buffer
  /// of its size (or of at least half of it), and wakes a rank waiting to take
  /// one.
  void give(void *pointer) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = live.find(pointer);
      if (it == live.end())
        return;
      Buffer buffer = it->second;
      live.erase(it);
      Holding &h = held[buffer.rank];
      h.inUse -= buffer.bytes;
      --h.pendingFrees;
      h.kept.insert({buffer.bytes, buffer});
      h.keptBytes += buffer.bytes;
    }
    freed.notify_all();
  }

  /// Returns every rank's kept buffers that `release` returns to where
  /// they came from: an allocation that failed tries again with their room.
  void releaseKept(void (*release)(void *)) {
    std::vector<Buffer> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto &[rank, h] : held)
        for (auto it = h.kept.begin(); it != h.kept.end();) {
          if (it->second.release != release) {
            ++it;
            continue;
          }
          dropped.push_back(it->second);
          h.keptBytes -= it->first;
          it = h.kept.erase(it);
        }
    }
    for (const Buffer &buffer : dropped)
      buffer.release(buffer.pointer);
  }

  static StagingCache &get() {
    static StagingCache *cache = new StagingCache; // lives until exit
    return *cache;
  }

private:
  struct Buffer {
    void *pointer;
    zero_rank *rank;
    int64_t bytes;
    void (*release)(void *);
  };
  struct Holding {
    /// Bytes of the rank's buffers in use, and of those kept.
    int64_t inUse = 0, keptBytes = 0;
    /// Frees the rank has queued that its queue has not run yet.
    int64_t pendingFrees = 0;
    std::multimap<int64_t, Buffer> kept;
  };

  std::mutex mutex;
  std::condition_variable freed;
  std::unordered_map<void *, Buffer> live;
  std::map<zero_rank *, Holding> held;
};

} // namespace

void *zero::rt::takeStaging(int64_t bytes, void *(*allocate)(int64_t),
                            void (*release)(void *)) {
  return StagingCache::get().take(std::max<int64_t>(1, bytes), allocate,
                                  release);
}

void zero::rt::releaseKeptStaging(void (*release)(void *)) {
  StagingCache::get().releaseKept(release);
}

extern "C" void *zero_rt_host_alloc_staging(int64_t bytes) {
  return zero::rt::takeStaging(bytes, zero_rt_host_alloc,
                               zero::rt::releaseHostBuffer);
}

extern "C" void zero_rt_host_queue_free_staging(void *pointer) {
  StagingCache::get().queued(pointer);
  zero::rt::enqueueHostWork([pointer] { StagingCache::get().give(pointer); });
}
