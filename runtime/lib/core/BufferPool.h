//===- BufferPool.h - freed buffers kept for their rank's reuse -*- C++ -*-===//
//
// A training step allocates the same buffers every step. The runtime's
// allocators (host memory, HostMemory.cpp; GPU memory, Cuda.cpp) keep a
// freed buffer in the pool of the rank bound to the freeing thread, by its
// kind (GPU: managed or device memory), and hand it to that rank's
// next allocation of that kind that it fits best: the smallest kept buffer
// of at least the size asked for, and at most an eighth more. Buffers of
// nearly one size (a step's buckets, each a few members different) then
// share one allocation where exact sizes would keep one each; the eighth
// bounds what a buffer may waste. Large buffers are allocated in whole 2 MiB
// (sizeClass), so that a bucket a little larger than the one before takes
// its buffer too. The caller locks.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_BUFFERPOOL_H
#define ZERO_RUNTIME_LIB_BUFFERPOOL_H

#include "zero/runtime/zero_runtime.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

namespace zero::rt {

/// The pool of the rank bound to the calling thread (-1: none bound).
inline int32_t boundPoolRank() {
  zero_rank *rank = zero_bound_rank();
  return rank ? zero_rank_id(rank) : -1;
}

template <typename Kind> class BufferPool {
public:
  /// The most bytes a kept buffer may have beyond the `size` asked of it.
  static size_t slack(size_t size) { return size / 8; }

  /// The bytes to ask of the system for a buffer of `size`: from 16 MiB, a
  /// whole number of 2 MiB (the pages a GPU maps such a buffer with), at
  /// most an eighth more; below, `size`. A buffer a few bytes larger than a
  /// kept one (the next bucket) then takes it rather than one of its own.
  static size_t sizeClass(size_t size) {
    constexpr size_t page = size_t(2) << 20, from = size_t(16) << 20;
    return size < from ? size : (size + page - 1) / page * page;
  }

  /// A buffer of at least `size` bytes and `kind` that the calling thread's
  /// rank freed, the smallest within `slack`, taken out of its pool; null
  /// when there is none.
  void *take(Kind kind, size_t size) {
    std::multimap<size_t, void *> &pool = freed[{boundPoolRank(), kind}];
    auto it = pool.lower_bound(size);
    if (it == pool.end() || it->first - size > slack(size))
      return nullptr;
    void *pointer = it->second;
    pool.erase(it);
    return pointer;
  }

  /// Records a new allocation, which the pool keeps once it is freed.
  void add(void *pointer, size_t size, Kind kind) {
    allocations[pointer] = {size, kind};
  }

  /// Keeps `pointer` for the calling thread's rank; false when it is not
  /// one of the pool's allocations (the caller frees it).
  bool put(void *pointer) {
    auto it = allocations.find(pointer);
    if (it == allocations.end())
      return false;
    auto [size, kind] = it->second;
    freed[{boundPoolRank(), kind}].insert({size, pointer});
    return true;
  }

  /// Forgets `pointer`, a live allocation of the pool's that its owner
  /// returns to the system itself; false when it is not one.
  bool forget(void *pointer) { return allocations.erase(pointer) > 0; }

  /// Forgets every kept buffer, calling `release` on each with its kind.
  template <typename Release> void drain(Release release) {
    for (auto &[key, pool] : freed)
      for (auto [size, pointer] : pool) {
        allocations.erase(pointer);
        release(pointer, key.second);
      }
    freed.clear();
  }

private:
  /// Every allocation of the pool, live or kept: its size and kind.
  std::unordered_map<void *, std::pair<size_t, Kind>> allocations;
  /// Kept buffers by (rank, kind), then size.
  std::map<std::pair<int32_t, Kind>, std::multimap<size_t, void *>> freed;
};

} // namespace zero::rt

#endif // ZERO_RUNTIME_LIB_BUFFERPOOL_H
