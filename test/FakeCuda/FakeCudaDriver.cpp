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
// fails with CUDA_ERROR_OUT_OF_MEMORY. Copies are memcpy; streams and events
// are tokens, everything being done when it is asked for. It runs no kernel: a
// launch succeeds without doing anything, except the launch numbered
// ZERO_FAKE_CUDA_FAIL_LAUNCH (counted from 1 over the process), which fails
// with CUDA_ERROR_LAUNCH_FAILED. With ZERO_FAKE_CUDA_FAIL_SYNC set, every
// stream synchronization fails with CUDA_ERROR_ILLEGAL_ADDRESS, as the
// context does after a kernel faults. So results are meaningless; tests
// check errors and endings only. With ZERO_FAKE_CUDA_KERNEL_US, each launch
// takes that many microseconds on the launching thread: a GPU busy enough
// that its launch queue stays full, so that the rank's thread goes at the
// device's pace, not as far ahead as it can (what a rank's host queue does
// meanwhile, and when it frees what it has copied, then shows).
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
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
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

/// ZERO_FAKE_CUDA_REPORT's line, at the process's end.
struct PeakReport {
  ~PeakReport() {
    if (!std::getenv("ZERO_FAKE_CUDA_REPORT"))
      return;
    std::lock_guard<std::mutex> device(memory().mutex);
    std::lock_guard<std::mutex> pinned(pinnedMemory().mutex);
    std::fprintf(stderr,
                 "zero fake GPU: peak memory %zu bytes, pinned host memory "
                 "%zu bytes, %zu stream synchronizations\n",
                 memory().peak, pinnedMemory().peak,
                 streamSynchronizations.load());
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

std::atomic<long> launches{0};
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
CUresult cuDevicePrimaryCtxRetain(void **context, int) {
  *context = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuCtxSetCurrent(void *) { return CUDA_SUCCESS; }
CUresult cuCtxSynchronize() {
  ++streamSynchronizations;
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
/// What a copy reads or writes for `pointer`: device memory through the
/// driver's view, host memory as it is.
static void *copied(const void *pointer) {
  char *view = readableView(memory(), pointer);
  return view ? view : const_cast<void *>(pointer);
}
static CUresult copy(void *to, const void *from, size_t bytes) {
  std::memmove(copied(to), copied(from), bytes);
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
  return copy(to, from, bytes);
}
CUresult cuMemcpyDtoH_v2(void *to, const void *from, size_t bytes) {
  return copy(to, from, bytes);
}
CUresult cuMemcpyDtoD_v2(void *to, const void *from, size_t bytes) {
  return copy(to, from, bytes);
}
CUresult cuMemcpyAsync(void *to, const void *from, size_t bytes, void *) {
  return copy(to, from, bytes);
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
                        unsigned, unsigned, unsigned, void *, void **,
                        void **) {
  const char *failing = std::getenv("ZERO_FAKE_CUDA_FAIL_LAUNCH");
  long number = ++launches;
  static const long kernelMicroseconds = [] {
    const char *value = std::getenv("ZERO_FAKE_CUDA_KERNEL_US");
    return value ? std::max(0L, std::atol(value)) : 0L;
  }();
  if (kernelMicroseconds)
    std::this_thread::sleep_for(std::chrono::microseconds(kernelMicroseconds));
  return failing && std::atol(failing) == number ? CUDA_ERROR_LAUNCH_FAILED
                                                 : CUDA_SUCCESS;
}

CUresult cuStreamCreate(void **stream, unsigned) {
  *stream = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(void *) {
  ++streamSynchronizations;
  return std::getenv("ZERO_FAKE_CUDA_FAIL_SYNC") ? CUDA_ERROR_ILLEGAL_ADDRESS
                                                 : CUDA_SUCCESS;
}
CUresult cuStreamDestroy_v2(void *) { return CUDA_SUCCESS; }
CUresult cuStreamWaitEvent(void *, void *, unsigned) { return CUDA_SUCCESS; }
CUresult cuEventCreate(void **event, unsigned) {
  *event = token<void>();
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(void *, void *) { return CUDA_SUCCESS; }
CUresult cuEventDestroy_v2(void *) { return CUDA_SUCCESS; }
CUresult cuEventQuery(void *) { return CUDA_SUCCESS; }
CUresult cuEventSynchronize(void *) { return CUDA_SUCCESS; }
CUresult cuEventElapsedTime_v2(float *ms, void *, void *) {
  *ms = 0;
  return CUDA_SUCCESS;
}

} // extern "C"
