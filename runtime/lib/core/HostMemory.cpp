//===- HostMemory.cpp - compiled code's host buffers, cached --------------===//
//
// A training step allocates the same buffers every step: its temporaries
// (a bucket, a reduced gradient) and, for a launcher, its inputs. From the
// system allocator, each buffer of more than a few pages is a fresh mapping
// whose pages fault in as they are first written, and is unmapped when
// freed. Here a freed buffer is kept in the pool of the rank that freed it
// (BufferPool.h, as for GPU memory), and the next allocation by that rank
// that it fits takes it: a step after the first reaches the system
// allocator only for a size no kept buffer fits.
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

/// The bytes a buffer of `bytes` takes: a whole number of `alignment`s, at
/// least one.
size_t alignedSize(int64_t bytes) {
  return bytes > 0 ? (size_t(bytes) + alignment - 1) / alignment * alignment
                   : alignment;
}

/// Ends the process with `message`, for the bound rank's world too:
/// compiled code cannot go on.
[[noreturn]] void failCompiledCode(const std::string &message) {
  zero_rank *rank = zero_bound_rank();
  if (rank)
    zero_rank_fail(rank, message.c_str());
  std::fprintf(stderr, "zero: error: %s%s%s\n", rank ? "rank " : "",
               rank ? (std::to_string(zero_rank_id(rank)) + ": ").c_str() : "",
               message.c_str());
  std::_Exit(1);
}

} // namespace

void *zero_rt_alloc(int64_t bytes) {
  size_t size = zero::rt::BufferPool<bool>::sizeClass(alignedSize(bytes));
  HostPools &p = pools();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (void *pointer = p.buffers.take(false, size))
      return pointer;
  }
  void *pointer = zero::rt::allocateHostBuffer(static_cast<int64_t>(size));
  std::lock_guard<std::mutex> lock(p.mutex);
  p.buffers.add(pointer, size, false);
  return pointer;
}

void *zero::rt::allocateHostBuffer(int64_t bytes) {
  size_t size = alignedSize(bytes);
  void *pointer = std::aligned_alloc(alignment, size);
  if (!pointer) {
    // Give the cached buffers back, then try once more.
    zero_host_memory_release();
    pointer = std::aligned_alloc(alignment, size);
  }
  if (!pointer)
    failCompiledCode("out of host memory allocating " + std::to_string(bytes) +
                     " bytes");
  zero::rt::noteSystemAllocation();
  return pointer;
}

void zero_rt_free(void *pointer) {
  if (!pointer)
    return;
  HostPools &p = pools();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.buffers.put(pointer))
      return;
  }
  // A staging buffer: only the host queue gives one back.
  if (zero::rt::isStaging(pointer))
    failCompiledCode("zero_rt_free of a staging buffer, which only the host "
                     "queue frees (zero_rt_host_queue_free_staging)");
  std::free(pointer); // not ours: the system allocator's
}

void *zero_rt_host_alloc(int64_t bytes) { return zero_rt_alloc(bytes); }

void zero::rt::releaseHostBuffer(void *pointer) { std::free(pointer); }

void zero_host_memory_release(void) {
  // The ranks' staging arenas with nothing in use first.
  zero::rt::releaseIdleStaging(zero::rt::releaseHostBuffer);
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
