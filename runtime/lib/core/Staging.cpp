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
// of bytes a rank.
//
// As DeepSpeed's offload carves its tensors out of a fixed set of pinned
// buffers, a rank's staging is carved out of one arena of its own (one for
// each allocator it takes from), so that a step's updates, of many sizes,
// reach no allocator once the arena has grown to what the rank holds at
// once (pinning memory costs far more than a copy of it); a buffer for
// each size, kept for reuse, would not fit a budget smaller than the step's
// staging without going back to the system every step:
//
// - a buffer takes the first free range of the arena that holds it, and
//   gives it back when the queue frees it, merged with its free neighbours
//   (the queue frees in the order the rank takes, so the arena is used as
//   a ring);
// - while no range holds it, the staging the rank holds (its arena and the
//   buffers outside it) and the new buffer would pass the budget, and its
//   queue has frees of staging still to run, the rank waits for them;
// - otherwise the buffer is allocated outside the arena and goes back to
//   the system when the queue frees it; the arena grows, the next time
//   nothing in it is in use, to the most staging the rank has had in use at
//   once (less what is outside it then), within the budget (a single buffer
//   larger than the budget, or one the rank takes when its queue has no frees
//   to run, passes it);
// - once the arena has grown twice with nothing outside it in use (first
//   for one buffer, then, a step later where steps repeat, for the most the
//   rank had in use at once in between), the rank keeps to it: while no range
//   holds a buffer and its queue has frees to run, it waits for them, so
//   that it holds no more than it did in its first step, and allocates
//   only what passes the arena with nothing to wait for.
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
#include <cstdint>
#include <cstdlib>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

/// The alignment of a buffer carved out of an arena: CUDA's allocations'
/// (Runtime.md: every allocator of the runtime aligns to at least 64 bytes,
/// CUDA's to 256), so a carved buffer is aligned as one of its own.
constexpr int64_t kAlignment = 256;

/// One allocation that a rank's staging is carved out of, and its free
/// ranges (offset -> bytes), neighbours merged.
class Arena {
public:
  char *base() const { return base_; }
  int64_t capacity() const { return capacity_; }
  int64_t inUse() const { return inUse_; }

  /// Makes `base` of `capacity` bytes the arena, all of it free.
  void assign(void *base, int64_t capacity) {
    base_ = static_cast<char *>(base);
    capacity_ = capacity;
    inUse_ = 0;
    free_.clear();
    if (capacity > 0)
      free_[0] = capacity;
  }

  /// Forgets the arena's allocation (nothing in it in use) and returns it.
  void *detach() {
    void *base = base_;
    assign(nullptr, 0);
    return base;
  }

  /// The offset of `bytes` taken from the first free range that holds
  /// them, at its start. A buffer of a quarter of the arena or more goes at
  /// an end of the arena, from a free range that reaches it, so that the
  /// rest of the arena stays one range once the small ones before it are
  /// freed: a step's largest update (GPT-2's token embedding) stages two
  /// buffers of its size at once. Elsewhere only where `anywhere`: when the
  /// rank has no frees to wait for.
  std::optional<int64_t> carve(int64_t bytes, bool anywhere) {
    if (4 * bytes >= capacity_ && !free_.empty()) {
      auto first = free_.begin(), last = std::prev(free_.end());
      if (first->first == 0 && first->second >= bytes)
        return carveAt(first, 0, bytes);
      if (last->first + last->second == capacity_ && last->second >= bytes)
        return carveAt(last, capacity_ - bytes, bytes);
      if (!anywhere)
        return std::nullopt;
    }
    auto it = std::find_if(free_.begin(), free_.end(), [&](const auto &range) {
      return range.second >= bytes;
    });
    if (it == free_.end())
      return std::nullopt;
    return carveAt(it, it->first, bytes);
  }

  /// Gives back the `bytes` carved at `offset`.
  void giveBack(int64_t offset, int64_t bytes) {
    inUse_ -= bytes;
    auto next = free_.lower_bound(offset);
    if (next != free_.begin()) {
      auto previous = std::prev(next);
      if (previous->first + previous->second == offset) {
        offset = previous->first;
        bytes += previous->second;
        free_.erase(previous);
      }
    }
    if (next != free_.end() && offset + bytes == next->first) {
      bytes += next->second;
      free_.erase(next);
    }
    free_[offset] = bytes;
  }

private:
  /// Takes [offset, offset + bytes) out of the free range `range`, which
  /// starts or ends there.
  int64_t carveAt(std::map<int64_t, int64_t>::iterator range, int64_t offset,
                  int64_t bytes) {
    auto [start, size] = *range;
    free_.erase(range);
    if (offset > start)
      free_[start] = offset - start;
    if (offset + bytes < start + size)
      free_[offset + bytes] = start + size - offset - bytes;
    inUse_ += bytes;
    return offset;
  }

  char *base_ = nullptr;
  int64_t capacity_ = 0, inUse_ = 0;
  std::map<int64_t, int64_t> free_;
};

/// The staging buffers of every rank.
class StagingCache {
public:
  /// Bytes of staging a rank may hold and keep: ZERO_STAGING_BYTES (0: no
  /// bound), else 256 MiB.
  static int64_t budget() {
    const char *given = std::getenv("ZERO_STAGING_BYTES");
    return given ? std::max<int64_t>(0, std::atoll(given)) : int64_t(256) << 20;
  }

  /// A staging buffer of `bytes` for the bound rank. `byQueue`: taken by
  /// the rank's queue for the update it runs, which never waits (the frees
  /// it would wait for are its own, after that update).
  void *take(int64_t bytes, void *(*allocate)(int64_t), void (*release)(void *),
             bool byQueue) {
    bytes = (std::max<int64_t>(1, bytes) + kAlignment - 1) / kAlignment *
            kAlignment;
    Key key{zero_bound_rank(), reinterpret_cast<uintptr_t>(allocate)};
    int64_t limit = budget();
    std::unique_lock<std::mutex> lock(mutex);
    Holding &h = held[key];
    h.release = release;
    for (;;) {
      while (h.growing)
        freed.wait(lock);
      if (shouldGrow(h, bytes, limit)) {
        grow(h, wanted(h, bytes, limit), allocate, lock);
        continue;
      }
      if (void *pointer = carve(h, key, bytes, byQueue))
        return pointer;
      if (byQueue || !shouldWait(h, bytes, limit))
        break;
      freed.wait_for(lock, std::chrono::milliseconds(100));
    }
    return takeOutside(h, key, bytes, limit, allocate, lock);
  }

  /// Notes that the bound rank queued the free of `pointer`.
  void queued(void *pointer) {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = live.find(pointer); it != live.end()) {
      it->second.freeQueued = true;
      ++held[it->second.key].pendingFrees;
    }
  }

  /// Gives `pointer` (freed by the rank's queue, whether the rank queued
  /// the free or the queue took the buffer itself) back to its rank's arena,
  /// or to the system where it is outside it, and wakes a rank waiting to
  /// take one.
  void give(void *pointer) {
    void (*releaseOutside)(void *) = nullptr;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = live.find(pointer);
      if (it == live.end())
        return;
      Buffer buffer = it->second;
      live.erase(it);
      Holding &h = held[buffer.key];
      if (buffer.freeQueued)
        --h.pendingFrees;
      if (buffer.offset >= 0) {
        h.arena.giveBack(buffer.offset, buffer.bytes);
      } else {
        h.outside -= buffer.bytes;
        releaseOutside = h.release;
      }
    }
    if (releaseOutside)
      releaseOutside(pointer);
    freed.notify_all();
  }

  /// Returns every rank's arena that `release` returns to where it came
  /// from, where nothing in it is in use: an allocation that failed tries
  /// again with its room.
  void releaseIdle(void (*release)(void *)) {
    std::vector<void *> dropped;
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto &[key, h] : held)
        if (h.release == release && !h.growing && h.arena.base() &&
            h.arena.inUse() == 0)
          dropped.push_back(h.arena.detach());
    }
    for (void *arena : dropped)
      release(arena);
  }

  /// Whether `pointer` is a staging buffer in use.
  bool inUse(const void *pointer) {
    std::lock_guard<std::mutex> lock(mutex);
    return live.count(const_cast<void *>(pointer)) > 0;
  }

  static StagingCache &get() {
    static StagingCache *cache = new StagingCache; // lives until exit
    return *cache;
  }

private:
  /// A rank and the allocator its staging comes from.
  using Key = std::pair<zero_rank *, uintptr_t>;
  struct Buffer {
    Key key;
    /// Where the buffer is in its arena; -1 outside it.
    int64_t offset;
    int64_t bytes;
    /// Whether the rank queued its free (a pending free it may wait for).
    bool freeQueued = false;
  };
  struct Holding {
    Arena arena;
    /// Bytes of the buffers outside the arena in use.
    int64_t outside = 0;
    /// The most staging the rank has had in use at once, in its arena and
    /// outside it.
    int64_t mostInUse = 0;
    /// The most staging in use when the rank passed the budget, having no
    /// frees to wait for: what it holds at once whatever the budget.
    int64_t mostPassing = 0;
    /// Frees the rank has queued that its queue has not run yet.
    int64_t pendingFrees = 0;
    /// Times the arena grew with nothing outside it in use: the first sizes
    /// it for one buffer, the second (a step later, where steps repeat)
    /// for the most the rank had in use at once in between. From the
    /// second on, the rank keeps to its arena, waiting for its queue's
    /// frees rather than allocating beside it.
    int quietGrowths = 0;
    /// While the arena is being replaced, outside the lock.
    bool growing = false;
    void (*release)(void *) = nullptr;
  };

  /// Whether `h`'s arena, nothing in it in use, should grow before the
  /// rank's next `bytes`: it holds less than the arena `h` wants, and the
  /// buffers outside it leave the budget room for them.
  static bool shouldGrow(const Holding &h, int64_t bytes, int64_t limit) {
    return h.arena.inUse() == 0 &&
           (limit == 0 || h.outside == 0 || h.outside + bytes <= limit) &&
           wanted(h, bytes, limit) > h.arena.capacity();
  }

  /// `bytes` carved out of `h`'s arena, or null where no free range holds
  /// them. A large buffer goes anywhere in it where there is no free to
  /// wait for: the rank has none pending, or the queue takes it.
  void *carve(Holding &h, const Key &key, int64_t bytes, bool byQueue) {
    std::optional<int64_t> offset =
        h.arena.carve(bytes, byQueue || h.pendingFrees == 0);
    if (!offset)
      return nullptr;
    void *pointer = h.arena.base() + *offset;
    live[pointer] = {key, *offset, bytes};
    h.mostInUse = std::max(h.mostInUse, h.arena.inUse() + h.outside);
    return pointer;
  }

  /// Whether the rank waits for its queue's frees before it takes `bytes`
  /// outside its arena: its queue has frees to run, and it keeps to its
  /// arena or the budget has no room for them.
  static bool shouldWait(const Holding &h, int64_t bytes, int64_t limit) {
    return limit > 0 && h.pendingFrees > 0 &&
           (h.quietGrowths >= 2 ||
            h.arena.capacity() + h.outside + bytes > limit);
  }

  /// `bytes` from `allocate`, outside `h`'s arena until it grows to hold
  /// what the rank has in use now; allocates outside `lock`.
  void *takeOutside(Holding &h, const Key &key, int64_t bytes, int64_t limit,
                    void *(*allocate)(int64_t),
                    std::unique_lock<std::mutex> &lock) {
    h.outside += bytes;
    h.mostInUse = std::max(h.mostInUse, h.arena.inUse() + h.outside);
    if (limit > 0 && h.arena.capacity() + h.outside > limit)
      h.mostPassing = std::max(h.mostPassing, h.arena.inUse() + h.outside);
    lock.unlock();
    void *pointer = allocate(bytes);
    lock.lock();
    live[pointer] = {key, -1, bytes};
    return pointer;
  }

  /// The arena `h` wants for its next `bytes`: one that holds them and,
  /// with the buffers outside it, the most the rank has had in use at once,
  /// within the budget or what the rank has had in use at once beyond it.
  static int64_t wanted(const Holding &h, int64_t bytes, int64_t limit) {
    int64_t most = h.mostInUse;
    if (limit > 0)
      most = std::min(most, std::max(limit, h.mostPassing));
    return std::max(most - h.outside, bytes);
  }

  /// Replaces `h`'s arena, nothing in it in use, by one of `capacity`
  /// bytes; allocates outside `lock`.
  void grow(Holding &h, int64_t capacity, void *(*allocate)(int64_t),
            std::unique_lock<std::mutex> &lock) {
    if (h.outside == 0)
      ++h.quietGrowths;
    void *old = h.arena.detach();
    h.growing = true;
    lock.unlock();
    if (old)
      h.release(old);
    void *base = allocate(capacity);
    lock.lock();
    h.arena.assign(base, capacity);
    h.growing = false;
    freed.notify_all();
  }

  std::mutex mutex;
  std::condition_variable freed;
  std::unordered_map<void *, Buffer> live;
  std::map<Key, Holding> held;
};

} // namespace

void *zero::rt::takeStaging(int64_t bytes, void *(*allocate)(int64_t),
                            void (*release)(void *)) {
  return StagingCache::get().take(bytes, allocate, release, /*byQueue=*/false);
}

void *zero::rt::takeStagingOnQueue(int64_t bytes, void *(*allocate)(int64_t),
                                   void (*release)(void *)) {
  return StagingCache::get().take(bytes, allocate, release, /*byQueue=*/true);
}

void zero::rt::giveStagingOnQueue(void *pointer) {
  StagingCache::get().give(pointer);
}

void zero::rt::releaseIdleStaging(void (*release)(void *)) {
  StagingCache::get().releaseIdle(release);
}

bool zero::rt::isStaging(const void *pointer) {
  return StagingCache::get().inUse(pointer);
}

// The arenas come from the system allocator, not the rank's pool: a carved
// buffer is none of the pool's, and zero_rt_free refuses it.
extern "C" void *zero_rt_host_alloc_staging(int64_t bytes) {
  return zero::rt::takeStaging(bytes, zero::rt::allocateHostBuffer,
                               zero::rt::releaseHostBuffer);
}

extern "C" void zero_rt_host_queue_free_staging(void *pointer) {
  StagingCache::get().queued(pointer);
  zero::rt::enqueueHostWork([pointer] { StagingCache::get().give(pointer); });
}
