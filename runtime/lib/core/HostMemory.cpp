//===- HostMemory.cpp - compiled code's host buffers, cached --------------===//
//
// A training step allocates the same buffers every step: its temporaries
// (a bucket, a reduced gradient) and, for a launcher, its inputs. From the
// system allocator, each buffer of more than a few pages is a fresh mapping
// whose pages fault in as they are first written, and is unmapped when
// freed. Here a freed buffer is kept, by size, in the pool of the rank that
// freed it (BufferPool.h, as for GPU memory), and the next allocation of that
// size by that rank takes it: a step after the first reaches the system
// allocator only for a size it has not freed before.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "core/BufferPool.h"
#include "zero/runtime/zero_runtime.h"

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

/// Host buffers: one kind (the pool's Kind is unused).
struct HostPools {
  std::mutex mutex;
  zero::rt::BufferPool<bool> buffers;
};

HostPools &pools() {
  static HostPools *instance = new HostPools; // outlives static destructors
  return *instance;
}

constexpr size_t alignment = 64;

} // namespace

void *zero_rt_alloc(int64_t bytes) {
  size_t size = bytes > 0
                    ? (size_t(bytes) + alignment - 1) / alignment * alignment
                    : alignment;
  HostPools &p = pools();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (void *pointer = p.buffers.take(false, size))
      return pointer;
  }
  void *pointer = std::aligned_alloc(alignment, size);
  if (!pointer) {
    // Give the cached buffers back, then try once more.
    zero_host_memory_release();
    pointer = std::aligned_alloc(alignment, size);
  }
  if (!pointer) {
    // Compiled code cannot go on without its buffer.
    zero_rank *rank = zero_bound_rank();
    std::string message =
        "out of host memory allocating " + std::to_string(bytes) + " bytes";
    if (rank)
      zero_rank_fail(rank, message.c_str());
    std::fprintf(stderr, "zero: error: %s%s%s\n", rank ? "rank " : "",
                 rank ? (std::to_string(zero_rank_id(rank)) + ": ").c_str()
                      : "",
                 message.c_str());
    std::_Exit(1);
  }
  zero::rt::noteSystemAllocation();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.buffers.add(pointer, size, false);
  return pointer;
}

void zero_rt_free(void *pointer) {
  if (!pointer)
    return;
  HostPools &p = pools();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (!p.buffers.put(pointer))
    std::free(pointer); // not ours: the system allocator's
}

void *zero_rt_host_alloc(int64_t bytes) { return zero_rt_alloc(bytes); }

void zero::rt::releaseHostBuffer(void *pointer) {
  HostPools &p = pools();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    p.buffers.forget(pointer);
  }
  std::free(pointer);
}

void zero_host_memory_release(void) {
  // The staging buffers kept for the ranks' next updates first: their
  // release takes the pools' lock.
  zero::rt::releaseKeptStaging(zero::rt::releaseHostBuffer);
  HostPools &p = pools();
  std::lock_guard<std::mutex> lock(p.mutex);
  p.buffers.drain([](void *buffer, bool) { std::free(buffer); });
}

// MLIR's hooks for the allocations of code lowered by finalize-memref-to-llvm
// with use-generic-functions (zero's pipelines): an artifact calls them by
// these names, and a launcher that links the runtime whole exports them.
extern "C" __attribute__((visibility("default"))) void *
_mlir_memref_to_llvm_alloc(size_t bytes) {
  return zero_rt_alloc(static_cast<int64_t>(bytes));
}

extern "C" __attribute__((visibility("default"))) void
_mlir_memref_to_llvm_free(void *pointer) {
  zero_rt_free(pointer);
}
