//===- FakeCudaDriver.cpp - a libcuda.so.1 for tests without a GPU --------===//
//
// A stand-in for the CUDA driver with the entry points zero's runtime opens
// (runtime/lib/backends/CudaDriver.h), so that the runtime's GPU paths that
// come before or around a kernel run in CI, where there is no GPU: the chip
// check, device memory running out, a kernel launch failing on one rank of
// several, and the messages each gives. Tests put its directory first on
// LD_LIBRARY_PATH (lit's %fake_cuda).
//
// It has one device, "zero fake GPU", of compute capability
// ZERO_FAKE_CUDA_CC (default 90). Memory is host memory, at most
// ZERO_FAKE_CUDA_MEMORY bytes (default 1 GiB) in all. As on a GPU, the host
// cannot touch device memory: a device block's address is a view of its
// pages that the host may not read or write (a host access is a SIGSEGV,
// as it is on a GPU), and copies go through a second, readable view of the
// same pages. Managed memory (cuMemAllocManaged) stays readable. Pinned host
// memory at most ZERO_FAKE_CUDA_HOST_MEMORY bytes (default 1 GiB); more
// fails with CUDA_ERROR_OUT_OF_MEMORY. Copies are memcpy, done when they are
// asked for whatever time they are modeled to take (below). It runs no kernel:
// a launch succeeds without doing anything, except the launch numbered
// ZERO_FAKE_CUDA_FAIL_LAUNCH (counted from 1 over the process), which fails
// with CUDA_ERROR_LAUNCH_FAILED. With ZERO_FAKE_CUDA_FAIL_SYNC set, every
// stream synchronization fails with CUDA_ERROR_ILLEGAL_ADDRESS, as the
// context does after a kernel faults. So results are meaningless; tests
// check errors and endings only.
//
// Time is modeled, not simulated: each stream is its own engine, whose work
// ends at a time on the host's steady clock. A kernel takes
// ZERO_FAKE_CUDA_KERNEL_US microseconds (default 0) on its stream, and the
// launching thread waits for it, as a busy GPU's full launch queue makes
// the rank go at the device's pace (what a rank's host queue does
// meanwhile, and when it frees what it has copied, then shows). A copy
// between host and device memory takes its bytes over
// ZERO_FAKE_CUDA_LINK_GBPS gigabytes a second (default: no time): on its
// stream when it is asynchronous, which the caller does not wait for, and
// on the calling thread when it is not. An event is done when the work on
// its stream before its record is; a stream that waits for an event starts
// its next work no earlier; a synchronization (of a stream, an event or the
// context) sleeps until the work it waits for is done, and
// cuEventElapsedTime gives the modeled time between two events. So with
// both set, how far an offloaded step hides its copies and its host update
// behind its kernels shows in its step time, as if each rank had a GPU and
// a link of its own; without them, all work is done when it is asked for.
// With ZERO_FAKE_CUDA_SPIN set, a thread that waits spins (holding a
// core) where a driver's would: unless cuDevicePrimaryCtxSetFlags asked for
// blocking waits (the runtime's ZERO_CUDA_SYNC).
// A copy's bytes move on the calling thread, which a GPU's copy engine
// spares the host: with ZERO_FAKE_CUDA_TIME_ONLY set, copies across the
// link move none (for step times only).
//
//===----------------------------------------------------------------------===//

#include "backends/CudaDriver.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <sys/mman.h>
#include <unistd.h>

// The types and constants the runtime uses, from its own header, so that
// the two agree; the errors only the stand-in returns, as cuda.h has them.
using namespace zero::rt::cuda;

namespace {
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_INVALID_HANDLE = 400;
constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

/// A block handed out: its bytes, the allocation it is aligned in, and the
/// view the driver reads and writes it through (the block itself where the
/// host may touch it).
struct Block {
  size_t bytes;
  void *allocation;
  char *readable;
  /// The size of the two mappings of a block the host may not touch; 0
  /// for a block from calloc.
  size_t mapped = 0;
};

struct Memory {
  std::mutex mutex;
  std::map<void *, Block> blocks;
  size_t used = 0, peak = 0;
  /// The variable that sets the capacity.
  const char *capacityVariable;
  /// With ZERO_FAKE_CUDA_PEAK_BLOCKS: the sizes of the blocks held at the
  /// peak, for the report.
  std::map<size_t, size_t> blocksAtPeak;
};

/// The device's memory.
Memory &memory() {
  static Memory *instance = new Memory{{}, {}, 0, 0, "ZERO_FAKE_CUDA_MEMORY", {}};
  return *instance;
}

/// Pinned host memory (cuMemHostAlloc).
Memory &pinnedMemory() {
  static Memory *instance =
      new Memory{{}, {}, 0, 0, "ZERO_FAKE_CUDA_HOST_MEMORY", {}};
  return *instance;
}

size_t capacity(const Memory &m) {
  const char *value = std::getenv(m.capacityVariable);
  return value ? std::strtoull(value, nullptr, 10) : size_t(1) << 30;
}

/// The host's waits for a stream's work (cuStreamSynchronize and
/// cuCtxSynchronize), which ZERO_FAKE_CUDA_REPORT's line counts: each
/// drains the launch queue of a real GPU.
std::atomic<size_t> streamSynchronizations{0};

/// The bytes copied between host and device memory, for the same line.
std::atomic<size_t> linkBytes{0};

/// The kernels launched (ZERO_FAKE_CUDA_FAIL_LAUNCH counts from 1), for the
/// same line.
std::atomic<long> launches{0};

/// ZERO_FAKE_CUDA_REPORT's line, at the process's end.
struct PeakReport {
  ~PeakReport() {
    if (!std::getenv("ZERO_FAKE_CUDA_REPORT"))
      return;
    std::lock_guard<std::mutex> device(memory().mutex);
    std::lock_guard<std::mutex> pinned(pinnedMemory().mutex);
    std::fprintf(stderr,
                 "zero fake GPU: peak memory %zu bytes, pinned host memory "
                 "%zu bytes, %zu stream synchronizations, %zu bytes over "
                 "the link, %ld kernel launches\n",
                 memory().peak, pinnedMemory().peak,
                 streamSynchronizations.load(), linkBytes.load(),
                 launches.load());
    if (!std::getenv("ZERO_FAKE_CUDA_PEAK_BLOCKS"))
      return;
    print(memory(), "at the peak");
    print(pinnedMemory(), "at the pinned memory's peak");
  }

  /// The sizes that hold the most of `m`'s peak, largest first.
  static void print(const Memory &m, const char *when) {
    std::vector<std::pair<size_t, size_t>> sizes(m.blocksAtPeak.begin(),
                                                 m.blocksAtPeak.end());
    std::sort(sizes.begin(), sizes.end(), [](auto &a, auto &b) {
      return a.first * a.second > b.first * b.second;
    });
    for (size_t i = 0; i < sizes.size() && i < 12; ++i)
      std::fprintf(stderr, "zero fake GPU: %s, %zu block(s) of %zu bytes\n",
                   when, sizes[i].second, sizes[i].first);
  }
} peakReport;

int computeCapability() {
  const char *value = std::getenv("ZERO_FAKE_CUDA_CC");
  return value ? std::atoi(value) : 90;
}

/// Maps `bytes` of fresh pages twice: once without access (the block's
/// address, as the host sees a GPU's memory; page-aligned, so aligned as
/// cuMemAlloc's) and once readable and writable (the driver's view, for
/// copies). Returns the address, or null when the system refuses.
void *mapUntouchable(size_t bytes, Block &block) {
  size_t page = size_t(sysconf(_SC_PAGESIZE));
  size_t mapped = std::max<size_t>((bytes + page - 1) / page * page, page);
  int file = memfd_create("zero-fake-gpu", MFD_CLOEXEC);
  if (file < 0)
    return nullptr;
  void *hidden = MAP_FAILED, *readable = MAP_FAILED;
  if (ftruncate(file, off_t(mapped)) == 0) {
    hidden = mmap(nullptr, mapped, PROT_NONE, MAP_SHARED, file, 0);
    readable =
        mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_SHARED, file, 0);
  }
  close(file);
  if (hidden == MAP_FAILED || readable == MAP_FAILED) {
    if (hidden != MAP_FAILED)
      munmap(hidden, mapped);
    if (readable != MAP_FAILED)
      munmap(readable, mapped);
    return nullptr;
  }
  block = {bytes, hidden, static_cast<char *>(readable), mapped};
  return hidden;
}

/// Host memory for `bytes`, aligned as cuMemAlloc's are (256 bytes), which
/// compiled code relies on: a buffer's aligned pointer is the one
/// allocated. calloc's pages of a large block are mapped as they are
/// touched, as a GPU's are not, but a test's memory stays what it copies.
/// Returns the address, or null.
void *allocateReadable(size_t bytes, Block &block) {
  constexpr size_t alignment = 256;
  void *allocation = std::calloc(1, bytes + alignment);
  if (!allocation)
    return nullptr;
  auto address = reinterpret_cast<uintptr_t>(allocation);
  auto *aligned = reinterpret_cast<char *>((address + alignment - 1) /
                                           alignment * alignment);
  block = {bytes, allocation, aligned};
  return aligned;
}

CUresult allocate(void **pointer, size_t bytes, Memory &m = memory(),
                  bool untouchable = false) {
  std::lock_guard<std::mutex> lock(m.mutex);
  if (bytes > capacity(m) - m.used)
    return CUDA_ERROR_OUT_OF_MEMORY;
  Block block{};
  void *address = untouchable ? mapUntouchable(bytes, block)
                              : allocateReadable(bytes, block);
  if (!address)
    return CUDA_ERROR_OUT_OF_MEMORY;
  m.blocks[address] = block;
  m.used += bytes;
  if (m.used > m.peak && std::getenv("ZERO_FAKE_CUDA_PEAK_BLOCKS")) {
    m.blocksAtPeak.clear();
    for (auto &[start, held] : m.blocks)
      ++m.blocksAtPeak[held.bytes];
  }
  m.peak = std::max(m.peak, m.used);
  *pointer = address;
  return CUDA_SUCCESS;
}

/// A distinct non-null token for handles (contexts, modules, functions,
/// streams, events) that the runtime only passes back.
template <typename T> T *token() {
  static std::atomic<uintptr_t> next{0x1000};
  return reinterpret_cast<T *>(next.fetch_add(0x10));
}

using Clock = std::chrono::steady_clock;

/// When the work put on each stream so far ends, and when the work before
/// each event's last record does; a stream or event not here has none
/// pending.
struct Timeline {
  std::mutex mutex;
  std::map<const void *, Clock::time_point> streams, events;
};

Timeline &timeline() {
  static Timeline *instance = new Timeline;
  return *instance;
}

/// How long a kernel takes.
Clock::duration kernelTime() {
  static const long microseconds = [] {
    const char *value = std::getenv("ZERO_FAKE_CUDA_KERNEL_US");
    return value ? std::max(0L, std::atol(value)) : 0L;
  }();
  return std::chrono::microseconds(microseconds);
}

/// How long `bytes` take over the link between host and device memory.
Clock::duration linkTime(size_t bytes) {
  static const double gigabytesPerSecond = [] {
    const char *value = std::getenv("ZERO_FAKE_CUDA_LINK_GBPS");
    return value ? std::max(0.0, std::atof(value)) : 0.0;
  }();
  if (gigabytesPerSecond <= 0)
    return Clock::duration::zero();
  return std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::nano>(double(bytes) /
                                               gigabytesPerSecond));
}

/// When `key`'s work in `times` ends: the clock's epoch when it has none.
Clock::time_point lastEnd(std::map<const void *, Clock::time_point> &times,
                          const void *key) {
  auto it = times.find(key);
  return it == times.end() ? Clock::time_point() : it->second;
}

/// When `key`'s pending work ends in `times`: now when none is.
Clock::time_point endOf(std::map<const void *, Clock::time_point> &times,
                        const void *key) {
  return std::max(lastEnd(times, key), Clock::now());
}

/// Puts work taking `duration` on `stream` after the work it has; returns
/// when it ends.
Clock::time_point enqueue(const void *stream, Clock::duration duration) {
  Timeline &t = timeline();
  std::lock_guard<std::mutex> lock(t.mutex);
  Clock::time_point end = endOf(t.streams, stream) + duration;
  t.streams[stream] = end;
  return end;
}

/// When the work `times` has for `key` ends (the epoch when it has none).
Clock::time_point pendingEnd(std::map<const void *, Clock::time_point> &times,
                             const void *key) {
  std::lock_guard<std::mutex> lock(timeline().mutex);
  return lastEnd(times, key);
}

/// How the context's threads wait (cuDevicePrimaryCtxSetFlags).
std::atomic<unsigned> contextFlags{CU_CTX_SCHED_AUTO};

/// Waits for `time`, as the driver would with ZERO_FAKE_CUDA_SPIN set: a
/// CUDA context spins (auto, with no more contexts than cores, and spin),
/// or spins and yields (yield), holding a core either way; blocking sleeps,
/// as every wait does without ZERO_FAKE_CUDA_SPIN.
void sleepUntil(Clock::time_point time) {
  if (time <= Clock::now())
    return;
  static const bool modelSpin = std::getenv("ZERO_FAKE_CUDA_SPIN");
  unsigned flags = contextFlags.load();
  if (!modelSpin || flags == CU_CTX_SCHED_BLOCKING_SYNC) {
    std::this_thread::sleep_until(time);
    return;
  }
  while (Clock::now() < time)
    if (flags == CU_CTX_SCHED_YIELD)
      std::this_thread::yield();
}
} // namespace

extern "C" {

CUresult cuInit(unsigned) { return CUDA_SUCCESS; }
CUresult cuDeviceGetCount(int *count) {
  *count = 1;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return ordinal == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)
    *value = computeCapability() / 10;
  else if (attribute == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)
    *value = computeCapability() % 10;
  else
    *value = 0;
  return CUDA_SUCCESS;
}
CUresult cuDeviceGetName(char *name, int size, int) {
  std::strncpy(name, "zero fake GPU", size_t(size));
  name[size - 1] = 0;
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxSetFlags_v2(int, unsigned flags) {
  if (flags != CU_CTX_SCHED_AUTO && flags != CU_CTX_SCHED_SPIN &&
      flags != CU_CTX_SCHED_YIELD && flags != CU_CTX_SCHED_BLOCKING_SYNC)
    return CUDA_ERROR_INVALID_VALUE;
  contextFlags = flags;
  if (std::getenv("ZERO_FAKE_CUDA_REPORT"))
    std::fprintf(stderr, "zero fake GPU: threads wait by flags %u\n", flags);
  return CUDA_SUCCESS;
}
CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  *context = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(void *) { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize() {
  ++streamSynchronizations;
  Clock::time_point last = Clock::now();
  {
    Timeline &t = timeline();
    std::lock_guard<std::mutex> lock(t.mutex);
    for (auto &[stream, end] : t.streams)
      last = std::max(last, end);
  }
  sleepUntil(last);
  return CUDA_SUCCESS;
}

CUresult cuGetErrorString(CUresult result, const char **text) {
  switch (result) {
  case CUDA_SUCCESS:
    *text = "no error";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_VALUE:
    *text = "invalid argument";
    return CUDA_SUCCESS;
  case CUDA_ERROR_OUT_OF_MEMORY:
    *text = "out of memory";
    return CUDA_SUCCESS;
  case CUDA_ERROR_INVALID_HANDLE:
    *text = "invalid resource handle";
    return CUDA_SUCCESS;
  case CUDA_ERROR_ILLEGAL_ADDRESS:
    *text = "an illegal memory access was encountered";
    return CUDA_SUCCESS;
  case CUDA_ERROR_LAUNCH_FAILED:
    *text = "unspecified launch failure";
    return CUDA_SUCCESS;
  default:
    *text = nullptr;
    return CUDA_ERROR_INVALID_VALUE;
  }
}

CUresult cuMemAlloc_v2(void **pointer, size_t bytes) {
  return allocate(pointer, bytes, memory(), /*untouchable=*/true);
}
CUresult cuMemAllocManaged(void **pointer, size_t bytes, unsigned) {
  return allocate(pointer, bytes);
}
CUresult release(void *pointer, Memory &m) {
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.blocks.find(pointer);
  if (it == m.blocks.end())
    return CUDA_ERROR_INVALID_VALUE;
  Block &block = it->second;
  m.used -= block.bytes;
  if (block.mapped) {
    munmap(block.allocation, block.mapped);
    munmap(block.readable, block.mapped);
  } else {
    std::free(block.allocation);
  }
  m.blocks.erase(it);
  return CUDA_SUCCESS;
}
CUresult cuMemFree_v2(void *pointer) { return release(pointer, memory()); }
CUresult cuMemHostAlloc(void **pointer, size_t bytes, unsigned) {
  return allocate(pointer, bytes, pinnedMemory());
}
CUresult cuMemFreeHost(void *pointer) {
  return release(pointer, pinnedMemory());
}
/// The view through which the driver reads and writes `pointer` if it is
/// inside a block of `m`, else null.
static char *readableView(Memory &m, const void *pointer) {
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.blocks.upper_bound(const_cast<void *>(pointer));
  if (it == m.blocks.begin())
    return nullptr;
  --it;
  auto offset = size_t(static_cast<const char *>(pointer) -
                       static_cast<const char *>(it->first));
  return offset < it->second.bytes ? it->second.readable + offset : nullptr;
}
/// Whether `pointer` is inside a block of `m`.
static bool holds(Memory &m, void *pointer) {
  return readableView(m, pointer) != nullptr;
}
/// Whether copies across the link take their time but move no bytes
/// (ZERO_FAKE_CUDA_TIME_ONLY): a GPU's copy engines cost the host's cores
/// and memory nothing, where the stand-in's memmove costs both, so step
/// times are the model's only so; what the host then reads from device
/// memory is stale.
static bool timeOnly() {
  static const bool only = std::getenv("ZERO_FAKE_CUDA_TIME_ONLY") != nullptr;
  return only;
}

/// Copies `bytes` at once; returns how long the copy is modeled to take:
/// its bytes over the link where it crosses between host and device memory,
/// none where it does not.
static Clock::duration copy(void *to, const void *from, size_t bytes) {
  char *deviceTo = readableView(memory(), to);
  char *deviceFrom = readableView(memory(), from);
  bool acrossTheLink = !deviceTo != !deviceFrom;
  if (!acrossTheLink || !timeOnly())
    std::memmove(deviceTo ? deviceTo : to, deviceFrom ? deviceFrom : from,
                 bytes);
  if (!acrossTheLink)
    return Clock::duration::zero();
  linkBytes += bytes;
  return linkTime(bytes);
}
/// A synchronous copy: the calling thread waits for it.
static CUresult copyAndWait(void *to, const void *from, size_t bytes) {
  sleepUntil(Clock::now() + copy(to, from, bytes));
  return CUDA_SUCCESS;
}
CUresult cuPointerGetAttribute(void *data, int, void *pointer) {
  if (holds(memory(), pointer))
    *static_cast<int *>(data) = 2; // CU_MEMORYTYPE_DEVICE
  else if (holds(pinnedMemory(), pointer))
    *static_cast<int *>(data) = 1; // CU_MEMORYTYPE_HOST
  else
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

CUresult cuMemcpyHtoD_v2(void *to, const void *from, size_t bytes) {
  return copyAndWait(to, from, bytes);
}
CUresult cuMemcpyDtoH_v2(void *to, const void *from, size_t bytes) {
  return copyAndWait(to, from, bytes);
}
CUresult cuMemcpyDtoD_v2(void *to, const void *from, size_t bytes) {
  return copyAndWait(to, from, bytes);
}
CUresult cuMemcpyAsync(void *to, const void *from, size_t bytes, void *stream) {
  enqueue(stream, copy(to, from, bytes));
  return CUDA_SUCCESS;
}

CUresult cuModuleLoadData(void **module, const void *) {
  *module = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuModuleLoadDataEx(void **module, const void *, unsigned, int *,
                            void **) {
  *module = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuModuleUnload(void *) { return CUDA_SUCCESS; }
CUresult cuModuleGetFunction(void **function, void *, const char *) {
  *function = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuLaunchKernel(void *, unsigned, unsigned, unsigned, unsigned,
                        unsigned, unsigned, unsigned, void *stream, void **,
                        void **) {
  const char *failing = std::getenv("ZERO_FAKE_CUDA_FAIL_LAUNCH");
  long number = ++launches;
  sleepUntil(enqueue(stream, kernelTime()));
  return failing && std::atol(failing) == number ? CUDA_ERROR_LAUNCH_FAILED
                                                 : CUDA_SUCCESS;
}

CUresult cuStreamCreate(void **stream, unsigned) {
  *stream = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(void *stream) {
  ++streamSynchronizations;
  sleepUntil(pendingEnd(timeline().streams, stream));
  return std::getenv("ZERO_FAKE_CUDA_FAIL_SYNC") ? CUDA_ERROR_ILLEGAL_ADDRESS
                                                 : CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(void *stream) {
  Timeline &t = timeline();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.streams.erase(stream);
  return CUDA_SUCCESS;
}
CUresult cuStreamWaitEvent(void *stream, void *event, unsigned) {
  Timeline &t = timeline();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.streams[stream] =
      std::max(endOf(t.streams, stream), endOf(t.events, event));
  return CUDA_SUCCESS;
}
CUresult cuEventCreate(void **event, unsigned) {
  *event = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(void *event, void *stream) {
  Timeline &t = timeline();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.events[event] = endOf(t.streams, stream);
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy_v2(void *event) {
  Timeline &t = timeline();
  std::lock_guard<std::mutex> lock(t.mutex);
  t.events.erase(event);
  return CUDA_SUCCESS;
}
CUresult cuEventQuery(void *event) {
  return pendingEnd(timeline().events, event) > Clock::now()
             ? CUDA_ERROR_NOT_READY
             : CUDA_SUCCESS;
}
CUresult cuEventSynchronize(void *event) {
  sleepUntil(pendingEnd(timeline().events, event));
  return CUDA_SUCCESS;
}
CUresult cuEventElapsedTime_v2(float *ms, void *begin, void *end) {
  Timeline &t = timeline();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto recorded = [&](void *event) {
    auto it = t.events.find(event);
    return it == t.events.end() ? nullptr : &it->second;
  };
  const Clock::time_point *from = recorded(begin), *to = recorded(end);
  if (!from || !to)
    return CUDA_ERROR_INVALID_HANDLE;
  *ms = std::chrono::duration<float, std::milli>(*to - *from).count();
  return CUDA_SUCCESS;
}

} // extern "C"
