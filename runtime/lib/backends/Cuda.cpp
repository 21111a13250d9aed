//===- Cuda.cpp - GPU support on the CUDA driver, loaded at run time ------===//
//
// The functions GPU-compiled code calls: managed memory, and the mgpu*
// launch ABI that MLIR's gpu-to-llvm lowering emits (module load, kernel
// lookup, streams, launch). The driver (libcuda.so.1) is opened with dlopen
// on first use, so the runtime builds and runs without CUDA; asking for the
// GPU where there is none is an error with a message, never a crash.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "backends/CudaDriver.h"
#include "core/BufferPool.h"
#include "zero/runtime/zero_runtime.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

using namespace zero::rt::cuda;

namespace {
/// Where a buffer that zero_rt_gpu_alloc* gave lives.
enum class GpuMemory { Managed, Device, PinnedHost };

struct Gpu {
  std::once_flag once;
  std::string initError; // why there is no GPU; empty when there is one
  Driver driver = {};
  CUcontext context = nullptr;
  std::string chip, name;
  int ordinal = 0;
  std::mutex mutex;
  std::string firstError;
  std::map<CUfunction, std::string> kernelNames;
  /// GPU allocations by size, and those freed, kept for reuse: a
  /// program allocates the same buffers every step, and cuMemAlloc costs
  /// far more than a kernel on them. Freed buffers are kept per rank (-1:
  /// no rank bound) and reused by the same rank only: its stream's later
  /// work is ordered after everything that used the buffer, collectives of
  /// cuda-local included (another rank's stream may not yet have waited for
  /// a collective that still reads the buffer). A buffer's kind in the
  /// pool is where it lives.
  zero::rt::BufferPool<GpuMemory> buffers;
  /// Kept buffers that copies on their rank's copy stream may still read
  /// (zero_rt_gpu_free_after_copies): the event after those copies, which
  /// the rank's stream waits for when the buffer is taken again.
  std::unordered_map<void *, CUevent> afterCopies;
};

Gpu &gpu() {
  static Gpu *instance = new Gpu; // lives until exit: artifacts unload late
  return *instance;
}

/// How a host thread waits for the GPU (ZERO_CUDA_SYNC): CUDA's choice
/// (auto: it spins while the process has no more contexts than cores), or
/// spin, yield or blocking. A thread that spins holds a core the host
/// queue's update may want (offload). Sets `error` for another value.
unsigned syncFlags(std::string &error) {
  const char *value = std::getenv("ZERO_CUDA_SYNC");
  if (!value)
    return CU_CTX_SCHED_AUTO;
  for (auto [name, flags] :
       {std::pair<const char *, unsigned>{"auto", CU_CTX_SCHED_AUTO},
        {"spin", CU_CTX_SCHED_SPIN},
        {"yield", CU_CTX_SCHED_YIELD},
        {"blocking", CU_CTX_SCHED_BLOCKING_SYNC}})
    if (!std::strcmp(value, name))
      return flags;
  error = std::string("ZERO_CUDA_SYNC=") + value +
          ": expected auto, spin, yield or blocking";
  return CU_CTX_SCHED_AUTO;
}

/// Loads the driver and sets up the process's GPU; records why when it
/// cannot.
void initialize(Gpu &g) {
  void *library = openFirstLibrary({"libcuda.so.1"});
  if (!library) {
    g.initError = "no CUDA driver (libcuda.so.1 cannot be loaded: the "
                  "machine has no NVIDIA GPU or driver)";
    return;
  }
  Driver &d = g.driver;
  bool ok =
      bindSymbol(library, "cuInit", d.cuInit) &&
      bindSymbol(library, "cuDeviceGetCount", d.cuDeviceGetCount) &&
      bindSymbol(library, "cuDeviceGet", d.cuDeviceGet) &&
      bindSymbol(library, "cuDeviceGetAttribute", d.cuDeviceGetAttribute) &&
      bindSymbol(library, "cuDeviceGetName", d.cuDeviceGetName) &&
      bindSymbol(library, "cuDevicePrimaryCtxRetain",
                 d.cuDevicePrimaryCtxRetain) &&
      bindSymbol(library, "cuDevicePrimaryCtxSetFlags_v2",
                 d.cuDevicePrimaryCtxSetFlags) &&
      bindSymbol(library, "cuCtxSetCurrent", d.cuCtxSetCurrent) &&
      bindSymbol(library, "cuCtxSynchronize", d.cuCtxSynchronize) &&
      bindSymbol(library, "cuGetErrorString", d.cuGetErrorString) &&
      bindSymbol(library, "cuMemAllocManaged", d.cuMemAllocManaged) &&
      bindSymbol(library, "cuMemAlloc_v2", d.cuMemAlloc) &&
      bindSymbol(library, "cuMemcpyHtoD_v2", d.cuMemcpyHtoD) &&
      bindSymbol(library, "cuMemcpyDtoH_v2", d.cuMemcpyDtoH) &&
      bindSymbol(library, "cuMemcpyDtoD_v2", d.cuMemcpyDtoD) &&
      bindSymbol(library, "cuMemcpyAsync", d.cuMemcpyAsync) &&
      bindSymbol(library, "cuMemFree_v2", d.cuMemFree) &&
      bindSymbol(library, "cuMemHostAlloc", d.cuMemHostAlloc) &&
      bindSymbol(library, "cuMemFreeHost", d.cuMemFreeHost) &&
      bindSymbol(library, "cuModuleLoadData", d.cuModuleLoadData) &&
      bindSymbol(library, "cuModuleLoadDataEx", d.cuModuleLoadDataEx) &&
      bindSymbol(library, "cuModuleUnload", d.cuModuleUnload) &&
      bindSymbol(library, "cuModuleGetFunction", d.cuModuleGetFunction) &&
      bindSymbol(library, "cuLaunchKernel", d.cuLaunchKernel) &&
      bindSymbol(library, "cuStreamCreate", d.cuStreamCreate) &&
      bindSymbol(library, "cuStreamSynchronize", d.cuStreamSynchronize) &&
      bindSymbol(library, "cuStreamDestroy_v2", d.cuStreamDestroy) &&
      bindSymbol(library, "cuStreamWaitEvent", d.cuStreamWaitEvent) &&
      bindSymbol(library, "cuEventCreate", d.cuEventCreate) &&
      bindSymbol(library, "cuEventRecord", d.cuEventRecord) &&
      bindSymbol(library, "cuEventDestroy_v2", d.cuEventDestroy) &&
      bindSymbol(library, "cuPointerGetAttribute", d.cuPointerGetAttribute) &&
      bindSymbol(library, "cuEventQuery", d.cuEventQuery) &&
      bindSymbol(library, "cuEventSynchronize", d.cuEventSynchronize) &&
      (bindSymbol(library, "cuEventElapsedTime_v2", d.cuEventElapsedTime) ||
       bindSymbol(library, "cuEventElapsedTime", d.cuEventElapsedTime));
  if (!ok) {
    g.initError = "the CUDA driver lacks a function zero needs (too old?)";
    return;
  }
  auto text = [&](CUresult r) {
    const char *s = nullptr;
    d.cuGetErrorString(r, &s);
    return std::string(s ? s : "unknown CUDA error");
  };
  int count = 0;
  CUdevice device;
  if (CUresult r = d.cuInit(0)) {
    g.initError = "the CUDA driver does not start (cuInit: " + text(r) + ")";
    return;
  }
  if (d.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    g.initError = "no CUDA device is visible";
    return;
  }
  int major = 0, minor = 0;
  char name[256] = {};
  // One process per GPU (nccl): the GPU of the process's local rank.
  int ordinal = 0;
  for (const char *variable :
       {"ZERO_GPU_DEVICE", "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
        "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *value = std::getenv(variable)) {
      ordinal = std::atoi(value) % count;
      break;
    }
  g.ordinal = ordinal;
  d.cuDeviceGet(&device, ordinal);
  d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                         device);
  d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                         device);
  d.cuDeviceGetName(name, sizeof name, device);
  g.chip = "sm_" + std::to_string(major * 10 + minor);
  g.name = name;
  std::string badFlags;
  unsigned flags = syncFlags(badFlags);
  if (!badFlags.empty()) {
    g.initError = badFlags;
    return;
  }
  if (flags != CU_CTX_SCHED_AUTO)
    if (CUresult r = d.cuDevicePrimaryCtxSetFlags(device, flags)) {
      g.initError = "cannot set how threads wait for the GPU "
                    "(cuDevicePrimaryCtxSetFlags: " +
                    text(r) + ")";
      return;
    }
  if (CUresult r = d.cuDevicePrimaryCtxRetain(&g.context, device))
    g.initError = "cannot make a CUDA context (" + text(r) + ")";
}

/// The GPU, set current on the calling thread; null (with the error
/// recorded) when there is none.
Gpu *ready(const char *call) {
  Gpu &g = gpu();
  std::call_once(g.once, initialize, g);
  static thread_local bool current = false;
  if (!g.initError.empty()) {
    std::lock_guard<std::mutex> lock(g.mutex);
    if (g.firstError.empty())
      g.firstError = std::string(call) + ": " + g.initError;
    return nullptr;
  }
  if (!current) {
    g.driver.cuCtxSetCurrent(g.context);
    current = true;
  }
  return &g;
}

/// Records a failed driver call and fails the bound rank's world (with no
/// rank bound, prints it). Returns the message.
std::string report(Gpu &g, CUresult result, const std::string &what) {
  std::string message = errorMessage(result, what);
  recordError(message);
  return message;
}

bool check(Gpu &g, CUresult result, const std::string &what) {
  if (result == CUDA_SUCCESS)
    return true;
  report(g, result, what);
  return false;
}

std::string kernelName(Gpu &g, CUfunction function) {
  std::lock_guard<std::mutex> lock(g.mutex);
  auto it = g.kernelNames.find(function);
  return it == g.kernelNames.end() ? "an unknown kernel" : it->second;
}

/// What the calling thread last put on its stream ("kernel adam_kernel",
/// "cublasGemmEx (8x16x4)"): a kernel's failure surfaces later, at a
/// synchronization, and the message names it from here.
thread_local std::string lastLaunch;

/// "CALL (WHY; the last work this rank launched was ...)": what a
/// synchronization that failed waited for.
std::string synchronization(const char *call, const char *why) {
  std::string what = std::string(call) + " (" + why;
  if (!lastLaunch.empty())
    what += "; the last work this rank launched was " + lastLaunch;
  return what + ")";
}

/// Whether the calling rank's world already failed on the GPU. Such a rank
/// skips its launches and synchronizations: a later kernel would run on bad
/// data, and a synchronization would report the first failure's consequence
/// (with no launch of its own to name) in place of the failure.
bool worldFailedOnGpu() { return zero_bound_rank() && zero_gpu_error(); }
} // namespace

void zero::rt::cuda::noteLaunch(std::string what) {
  lastLaunch = std::move(what);
}

//===----------------------------------------------------------------------===//
// The driver for the rest of the runtime (CudaDriver.h)
//===----------------------------------------------------------------------===//

void *zero::rt::cuda::openFirstLibrary(const std::vector<std::string> &names) {
  for (const std::string &name : names)
    if (void *library = dlopen(name.c_str(), RTLD_NOW | RTLD_GLOBAL))
      return library;
  return nullptr;
}

const Driver *zero::rt::cuda::driver(const char *call) {
  Gpu *g = ready(call);
  return g ? &g->driver : nullptr;
}

std::string zero::rt::cuda::unavailableReason() { return gpu().initError; }

void zero::rt::cuda::recordError(const std::string &message) {
  Gpu &g = gpu();
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    if (g.firstError.empty())
      g.firstError = message;
  }
  if (zero_rank *rank = zero_bound_rank())
    zero_rank_fail(rank, message.c_str());
  else
    std::fprintf(stderr, "zero: error: %s\n", message.c_str());
}

std::string zero::rt::cuda::errorMessage(CUresult result,
                                         const std::string &what) {
  const char *text = nullptr;
  if (const Driver *d = &gpu().driver; d->cuGetErrorString)
    d->cuGetErrorString(result, &text);
  return "CUDA error in " + what + ": " + (text ? text : "unknown error");
}

zero::rt::cuda::DeviceClock::DeviceClock(const Driver &d, std::string &error)
    : d(d) {
  if (CUresult r = d.cuEventCreate(&reference, 0)) {
    error = errorMessage(r, "cuEventCreate (the trace's clock)");
    return;
  }
  // On the legacy default stream, once everything before it is done.
  d.cuCtxSynchronize();
  if (CUresult r = d.cuEventRecord(reference, nullptr))
    error = errorMessage(r, "cuEventRecord (the trace's clock)");
  else if (CUresult r = d.cuEventSynchronize(reference))
    error = errorMessage(r, "cuEventSynchronize (the trace's clock)");
  referenceHost = zero::rt::now();
}

zero::rt::cuda::DeviceClock::~DeviceClock() {
  if (reference)
    d.cuEventDestroy(reference);
}

CUevent zero::rt::cuda::DeviceClock::timingEvent() const {
  CUevent event = nullptr;
  return d.cuEventCreate(&event, 0) == CUDA_SUCCESS ? event : nullptr;
}

double zero::rt::cuda::DeviceClock::hostTime(CUevent event) const {
  float ms = 0;
  if (!event || d.cuEventSynchronize(event) != CUDA_SUCCESS ||
      d.cuEventElapsedTime(&ms, reference, event) != CUDA_SUCCESS)
    return -1;
  return referenceHost + ms / 1e3;
}

const DeviceClock *zero::rt::cuda::deviceClock() {
  static std::mutex mutex;
  static std::unique_ptr<DeviceClock> clock;
  static bool failed = false;
  std::lock_guard<std::mutex> lock(mutex);
  if (!clock && !failed) {
    const Driver *d = driver("the trace's device clock");
    std::string error = d ? "" : unavailableReason();
    if (d)
      clock = std::make_unique<DeviceClock>(*d, error);
    if (!error.empty()) {
      recordError(error);
      clock.reset();
      failed = true;
    }
  }
  return clock.get();
}

static std::atomic<bool> tracingKernels{false};

void zero::rt::cuda::setKernelTracing(bool on) { tracingKernels = on; }

namespace {
/// A traced region: its name and the timing events around it.
struct TimedLaunch {
  std::string name;
  CUevent begin, end;
};
thread_local std::vector<TimedLaunch> timedLaunches;
} // namespace

zero::rt::cuda::TracedRegion::TracedRegion(CUstream stream, std::string name)
    : stream(stream), name(std::move(name)) {
  if (!tracingKernels)
    return;
  const DeviceClock *clock = deviceClock();
  if (!clock)
    return;
  begin = clock->timingEvent();
  end = clock->timingEvent();
  if (begin)
    gpu().driver.cuEventRecord(begin, stream);
}

zero::rt::cuda::TracedRegion::~TracedRegion() {
  if (!begin || !end) {
    for (CUevent event : {begin, end})
      if (event)
        gpu().driver.cuEventDestroy(event);
    return;
  }
  gpu().driver.cuEventRecord(end, stream);
  timedLaunches.push_back({std::move(name), begin, end});
}

std::vector<KernelSpan> zero::rt::cuda::takeKernelSpans() {
  std::vector<KernelSpan> spans;
  const DeviceClock *clock = timedLaunches.empty() ? nullptr : deviceClock();
  for (TimedLaunch &launch : timedLaunches) {
    if (clock)
      spans.push_back({launch.name, clock->hostTime(launch.begin),
                       clock->hostTime(launch.end)});
    gpu().driver.cuEventDestroy(launch.begin);
    gpu().driver.cuEventDestroy(launch.end);
  }
  timedLaunches.clear();
  return spans;
}

// Compiled code creates, synchronizes and destroys a stream around its
// launches; one stream per thread serves them all (the rank's compute
// stream, in order) and saves a stream's creation per launch.
static thread_local CUstream launchStream = nullptr;

CUstream zero::rt::cuda::threadStream() {
  Gpu *g = ready("creating a stream");
  if (g && !launchStream)
    check(*g, g->driver.cuStreamCreate(&launchStream, CU_STREAM_NON_BLOCKING),
          "cuStreamCreate");
  return launchStream;
}

/// A new event recorded on `stream` (its creation and record named `what`
/// in errors); null, with the error recorded, when either fails.
static CUevent recordEvent(Gpu &g, CUstream stream, const std::string &what) {
  CUevent event = nullptr;
  if (!check(g, g.driver.cuEventCreate(&event, CU_EVENT_DISABLE_TIMING),
             "cuEventCreate (" + what + ")"))
    return nullptr;
  if (!check(g, g.driver.cuEventRecord(event, stream),
             "cuEventRecord (" + what + ")")) {
    g.driver.cuEventDestroy(event);
    return nullptr;
  }
  return event;
}

/// Queues, on the calling rank's host queue, a wait for `event` (then its
/// destruction): the queue's later work comes after it. A failure is named
/// `why` and by the rank's last launch, which it surfaces at.
static void queueWaitFor(CUevent event, const char *why) {
  if (!event)
    return;
  std::string what = synchronization("cuEventSynchronize", why);
  zero::rt::enqueueHostWork([event, what] {
    // The queue's thread, with the context made current on it.
    Gpu *g = ready("the host queue's wait for an event");
    if (!g)
      return;
    if (!worldFailedOnGpu())
      check(*g, g->driver.cuEventSynchronize(event), what);
    g->driver.cuEventDestroy(event);
  });
}

// The host queue's GPU half (core/HostQueue.cpp has the queue): a fence is
// an event on the rank's stream that the queue's thread waits for; a copy
// runs on that thread's own stream, so the rank's stream never waits for
// the link.
void zero_rt_host_queue_fence(void) {
  if (!launchStream)
    return; // the rank has put no work on the GPU
  Gpu *g = ready("zero_rt_host_queue_fence");
  if (!g || worldFailedOnGpu())
    return;
  queueWaitFor(recordEvent(*g, launchStream, "the host queue's fence"),
               "the host queue's wait for the rank's stream");
}

//===----------------------------------------------------------------------===//
// Launcher API
//===----------------------------------------------------------------------===//

int zero_gpu_init(char *error, size_t errorSize) {
  if (ready("zero_gpu_init"))
    return 0;
  if (error && errorSize)
    std::snprintf(error, errorSize, "%s", gpu().initError.c_str());
  return 1;
}

void zero_gpu_device(char *chip, size_t chipSize, char *name, size_t nameSize) {
  Gpu &g = gpu();
  if (chip && chipSize)
    std::snprintf(chip, chipSize, "%s", g.chip.c_str());
  if (name && nameSize)
    std::snprintf(name, nameSize, "%s", g.name.c_str());
}

const char *zero_gpu_error(void) {
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  return g.firstError.empty() ? nullptr : g.firstError.c_str();
}

/// The driver's allocation of `size` bytes of `kind`.
static CUresult allocateNew(const Driver &d, GpuMemory kind, size_t size,
                            void *&pointer) {
  switch (kind) {
  case GpuMemory::Managed:
    return d.cuMemAllocManaged(&pointer, size, CU_MEM_ATTACH_GLOBAL);
  case GpuMemory::Device:
    return d.cuMemAlloc(&pointer, size);
  case GpuMemory::PinnedHost:
    // Portable: every rank's context may copy from it; mapped: a kernel or
    // a collective of cuda-local may read it where the host update's
    // result is not copied first.
    return d.cuMemHostAlloc(
        &pointer, size, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  }
  return CUDA_SUCCESS;
}

/// Returns a buffer of `kind` to the driver.
static CUresult releaseToDriver(const Driver &d, GpuMemory kind,
                                void *pointer) {
  return kind == GpuMemory::PinnedHost ? d.cuMemFreeHost(pointer)
                                       : d.cuMemFree(pointer);
}

/// What the memory of `kind` is called in messages.
static const char *memoryName(GpuMemory kind) {
  return kind == GpuMemory::PinnedHost ? "pinned host memory" : "GPU memory";
}

static void releasePinnedHost(void *pointer);

/// Memory of `kind` of `size` bytes from the rank's pool, or new (after
/// returning every pool, and for pinned memory the staging arenas with
/// nothing in use, to the driver, once the device is idle, when the memory
/// is full).
static CUresult allocate(Gpu &g, size_t size, GpuMemory kind, void *&pointer) {
  size = zero::rt::BufferPool<GpuMemory>::sizeClass(size);
  CUevent pending = nullptr;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    if ((pointer = g.buffers.take(kind, size))) {
      auto it = g.afterCopies.find(pointer);
      if (it == g.afterCopies.end())
        return CUDA_SUCCESS;
      pending = it->second;
      g.afterCopies.erase(it);
    }
  }
  if (pending) {
    // The rank's work on the buffer follows the copies that read it.
    CUstream stream = threadStream();
    CUresult result = stream ? g.driver.cuStreamWaitEvent(stream, pending, 0)
                             : g.driver.cuEventSynchronize(pending);
    g.driver.cuEventDestroy(pending);
    return result;
  }
  CUresult result;
  {
    std::lock_guard<std::mutex> lock(g.mutex);
    result = allocateNew(g.driver, kind, size, pointer);
  }
  // The ranks' staging arenas with nothing in use go back too, once no
  // copy reads them (pinned; outside the lock, which their release takes).
  if (result != CUDA_SUCCESS && kind == GpuMemory::PinnedHost) {
    g.driver.cuCtxSynchronize();
    zero::rt::releaseIdleStaging(releasePinnedHost);
  }
  std::lock_guard<std::mutex> lock(g.mutex);
  if (result != CUDA_SUCCESS) {
    g.driver.cuCtxSynchronize(); // nothing in flight uses a cached buffer
    g.buffers.drain([&](void *buffer, GpuMemory kept) {
      releaseToDriver(g.driver, kept, buffer);
    });
    for (auto [buffer, event] : g.afterCopies)
      g.driver.cuEventDestroy(event);
    g.afterCopies.clear();
    result = allocateNew(g.driver, kind, size, pointer);
  }
  if (result == CUDA_SUCCESS) {
    g.buffers.add(pointer, size, kind);
    zero::rt::noteSystemAllocation();
  }
  return result;
}

/// `bytes` of memory of `kind`; on failure the process ends with a message
/// (the compiled code that asked cannot go on).
static void *allocateOrExit(const char *caller, int64_t bytes, GpuMemory kind) {
  Gpu *g = ready(caller);
  void *pointer = nullptr;
  std::string message;
  size_t size = bytes > 0 ? size_t(bytes) : 1;
  if (!g) {
    message = std::string(caller) + ": " + gpu().initError;
    std::fprintf(stderr, "zero: error: %s\n", message.c_str());
  } else if (CUresult result = allocate(*g, size, kind, pointer)) {
    message = report(*g, result,
                     "allocating " + std::to_string(bytes) + " bytes of " +
                         memoryName(kind));
  } else {
    return pointer;
  }
  // report() printed the message only where no rank is bound; a bound
  // rank's world holds it, but this process ends before a launcher reads it.
  if (zero_rank *rank = zero_bound_rank())
    std::fprintf(stderr, "zero: error: rank %d: %s\n", zero_rank_id(rank),
                 message.c_str());
  std::_Exit(1);
}

void *zero_rt_gpu_alloc(int64_t bytes) {
  return allocateOrExit("zero_rt_gpu_alloc", bytes, GpuMemory::Managed);
}

void *zero_rt_gpu_alloc_device(int64_t bytes) {
  return allocateOrExit("zero_rt_gpu_alloc_device", bytes, GpuMemory::Device);
}

void *zero_rt_gpu_alloc_host(int64_t bytes) {
  return allocateOrExit("zero_rt_gpu_alloc_host", bytes, GpuMemory::PinnedHost);
}

/// Returns pinned host memory of zero_rt_gpu_alloc_host's, in use, to the
/// driver rather than to the rank's pool: a rank's staging arena
/// (Staging.cpp) is what it reuses, within its budget.
static void releasePinnedHost(void *pointer) {
  Gpu *g = ready("releasing a staging buffer");
  if (!g || !pointer)
    return;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    g->buffers.forget(pointer);
  }
  check(*g, g->driver.cuMemFreeHost(pointer), "cuMemFreeHost");
}

/// Pinned host memory for a staging arena, which the rank's pool forgets: a
/// buffer carved out of it is none of the pool's.
static void *allocatePinnedStaging(int64_t bytes) {
  void *pointer = zero_rt_gpu_alloc_host(bytes);
  Gpu &g = gpu();
  std::lock_guard<std::mutex> lock(g.mutex);
  g.buffers.forget(pointer);
  return pointer;
}

void *zero_rt_gpu_alloc_staging(int64_t bytes) {
  return zero::rt::takeStaging(bytes, allocatePinnedStaging, releasePinnedHost);
}

int zero_gpu_copy_to_device(void *device, const void *host, size_t bytes) {
  Gpu *g = ready("zero_gpu_copy_to_device");
  return !g || !check(*g, g->driver.cuMemcpyHtoD(device, host, bytes),
                      "cuMemcpyHtoD");
}

int zero_gpu_copy_to_host(void *host, const void *device, size_t bytes) {
  Gpu *g = ready("zero_gpu_copy_to_host");
  return !g || !check(*g, g->driver.cuMemcpyDtoH(host, device, bytes),
                      "cuMemcpyDtoH");
}

/// Copies `bytes` in order on the calling rank's stream, named `what` in
/// errors, and waits until the stream has done it.
static void copyOnStreamAndWait(const char *caller, void *to, const void *from,
                                int64_t bytes, const std::string &what) {
  Gpu *g = ready(caller);
  CUstream stream = g ? threadStream() : nullptr;
  if (stream && !worldFailedOnGpu() &&
      check(*g, g->driver.cuMemcpyAsync(to, from, size_t(bytes), stream),
            "cuMemcpyAsync (" + what + ")"))
    check(*g, g->driver.cuStreamSynchronize(stream),
          synchronization("cuStreamSynchronize", what.c_str()));
}

// On the calling rank's stream, so that a read comes after the kernels
// (and collectives) that wrote the element, and a write before the kernels
// that read it; a copy from pageable memory is staged before it returns.
void zero_rt_gpu_read(void *host, const void *gpu, int64_t bytes) {
  copyOnStreamAndWait("zero_rt_gpu_read", host, gpu, bytes,
                      "the host's read of a GPU buffer");
}

void zero_rt_gpu_write(void *gpu, const void *host, int64_t bytes) {
  Gpu *g = ready("zero_rt_gpu_write");
  if (CUstream stream = g ? threadStream() : nullptr)
    check(*g, g->driver.cuMemcpyAsync(gpu, host, size_t(bytes), stream),
          "cuMemcpyAsync (a scalar write of a GPU buffer)");
}

void zero_rt_gpu_upload(void *gpu, const void *host, int64_t bytes) {
  copyOnStreamAndWait("zero_rt_gpu_upload", gpu, host, bytes,
                      "an offloaded update's result to the GPU");
}

void zero_rt_gpu_queue_copy(void *to, const void *from, int64_t bytes) {
  zero::rt::enqueueHostWork([to, from, bytes] {
    copyOnStreamAndWait("zero_rt_gpu_queue_copy", to, from, bytes,
                        "an offloaded update's copy across the link");
  });
}

/// Copies on `stream` for an offloaded update (named `what` in errors),
/// each mark an event after the copies started before it.
static zero::rt::CopyEngine streamCopies(Gpu *g, CUstream stream,
                                         const char *what) {
  struct Marks {
    std::vector<CUevent> events;
    ~Marks() {
      for (CUevent event : events)
        if (event)
          gpu().driver.cuEventDestroy(event);
    }
  };
  auto marks = std::make_shared<Marks>();
  auto usable = [g, stream] { return stream && !worldFailedOnGpu(); };
  return zero::rt::CopyEngine{
      [g, stream, usable, what](void *to, const void *from, int64_t bytes) {
        return usable() &&
               check(*g,
                     g->driver.cuMemcpyAsync(to, from, size_t(bytes), stream),
                     std::string("cuMemcpyAsync (") + what + ")");
      },
      [g, stream, usable, marks, what] {
        marks->events.push_back(usable() ? recordEvent(*g, stream, what)
                                         : nullptr);
        return int64_t(marks->events.size() - 1);
      },
      [g, usable, marks, what](int64_t mark) {
        CUevent event = marks->events[size_t(mark)];
        return event && usable() &&
               check(*g, g->driver.cuEventSynchronize(event),
                     std::string("cuEventSynchronize (") + what + ")");
      }};
}

/// The calling rank thread's stream for copies down to the host, beside its
/// launch stream: an offloaded update's copies in start there when the rank
/// queues the update, after the work it put on its launch stream so far.
static thread_local CUstream copyStream = nullptr;

static CUstream copyStreamAfterLaunches(Gpu &g) {
  if (!copyStream &&
      !check(g, g.driver.cuStreamCreate(&copyStream, CU_STREAM_NON_BLOCKING),
             "cuStreamCreate (the rank's copy stream)"))
    return nullptr;
  if (launchStream) {
    CUevent event = recordEvent(g, launchStream, "the rank's copies down");
    if (!event)
      return nullptr;
    bool ordered = check(g, g.driver.cuStreamWaitEvent(copyStream, event, 0),
                         "cuStreamWaitEvent (the rank's copies down)");
    g.driver.cuEventDestroy(event);
    if (!ordered)
      return nullptr;
  }
  return copyStream;
}

// An offloaded update's copies in start on the rank's copy stream now, in
// the rank's order; its loop and its copies out run from the queue, the
// copies on the queue thread's own stream.
void zero_rt_gpu_queue_update(void (*task)(void *, int64_t, int64_t),
                              void *context, int64_t contextBytes,
                              int64_t iterations, const int64_t *copies,
                              int64_t copiesIn, int64_t copiesOut,
                              int64_t chunkBytes, const int64_t *staged,
                              int64_t stagedCount) {
  Gpu *g = ready("zero_rt_gpu_queue_update");
  std::optional<zero::rt::CopyEngine> ahead;
  if (CUstream stream =
          g && !worldFailedOnGpu() ? copyStreamAfterLaunches(*g) : nullptr)
    ahead = streamCopies(g, stream, "an offloaded update's copies down");
  zero::rt::enqueueUpdate(
      task, context, contextBytes, iterations, copies, copiesIn, copiesOut,
      chunkBytes, staged, stagedCount,
      {allocatePinnedStaging, releasePinnedHost},
      [] {
        Gpu *g = ready("zero_rt_gpu_queue_update");
        return streamCopies(g, g ? threadStream() : nullptr,
                            "an offloaded update's copies across the link");
      },
      std::move(ahead));
}

// On the rank's copy stream, as an update's copies in: the rank goes on at
// once, and the queue's next work is a wait for the copy, which so comes
// before anything queued after it and before the rank's join returns.
void zero_rt_gpu_copy_down(void *to, const void *from, int64_t bytes) {
  Gpu *g = ready("zero_rt_gpu_copy_down");
  CUstream stream =
      g && !worldFailedOnGpu() ? copyStreamAfterLaunches(*g) : nullptr;
  if (!stream ||
      !check(*g, g->driver.cuMemcpyAsync(to, from, size_t(bytes), stream),
             "cuMemcpyAsync (a copy down into host memory)"))
    return;
  queueWaitFor(recordEvent(*g, stream, "a copy down into host memory"),
               "the host queue's wait for a copy down");
}

// Kept at once for the rank, with an event after the rank's copies down so
// far, which its stream waits for when it takes the buffer again.
void zero_rt_gpu_free_after_copies(void *pointer) {
  Gpu *g = ready("zero_rt_gpu_free_after_copies");
  if (!g || !pointer || worldFailedOnGpu())
    return;
  if (!copyStream) {
    zero_rt_gpu_free(pointer); // no copy down was started
    return;
  }
  CUevent event =
      recordEvent(*g, copyStream, "a buffer freed after its copies down");
  if (!event)
    return;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    if (g->buffers.put(pointer)) {
      g->afterCopies[pointer] = event;
      return;
    }
  }
  check(*g, g->driver.cuEventSynchronize(event),
        "cuEventSynchronize (a buffer freed after its copies down)");
  g->driver.cuEventDestroy(event);
  check(*g, g->driver.cuMemFree(pointer), "cuMemFree");
}

void zero_rt_gpu_free(void *pointer) {
  Gpu *g = ready("zero_rt_gpu_free");
  if (!g || !pointer)
    return;
  {
    std::lock_guard<std::mutex> lock(g->mutex);
    if (g->buffers.put(pointer))
      return;
  }
  check(*g, g->driver.cuMemFree(pointer), "cuMemFree");
}

// The queue's copies before the free were synchronous on its thread, and
// the queue runs with the rank bound: the buffer goes to the rank's pool,
// whose later work on it is on the rank's stream after what it launched
// before it queued the free.
void zero_rt_gpu_queue_free(void *pointer) {
  zero::rt::enqueueHostWork([pointer] { zero_rt_gpu_free(pointer); });
}

int zero_gpu_copy_on_device(void *to, const void *from, size_t bytes) {
  Gpu *g = ready("zero_gpu_copy_on_device");
  return !g ||
         !check(*g, g->driver.cuMemcpyDtoD(to, from, bytes), "cuMemcpyDtoD");
}

void zero_rt_gpu_synchronize(void) {
  if (Gpu *g = ready("zero_rt_gpu_synchronize"))
    check(*g, g->driver.cuCtxSynchronize(), "cuCtxSynchronize");
}

//===----------------------------------------------------------------------===//
// The launch ABI of MLIR's gpu-to-llvm lowering
//===----------------------------------------------------------------------===//

extern "C" {

CUmodule mgpuModuleLoad(void *data, size_t size) {
  Gpu *g = ready("loading a kernel module");
  CUmodule module = nullptr;
  if (g)
    check(*g, g->driver.cuModuleLoadData(&module, data),
          "cuModuleLoadData (a cubin of " + std::to_string(size) +
              " bytes; built for another GPU?)");
  return module;
}

CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  Gpu *g = ready("loading a kernel module");
  CUmodule module = nullptr;
  if (!g)
    return nullptr;
  char log[4096] = {};
  int options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                   CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof log)};
  check(*g, g->driver.cuModuleLoadDataEx(&module, data, 3, options, values),
        std::string("cuModuleLoadDataEx (compiling PTX) ") + log);
  return module;
}

void mgpuModuleUnload(CUmodule module) {
  if (Gpu *g = ready("unloading a kernel module"); g && module)
    g->driver.cuModuleUnload(module); // at exit: errors no longer matter
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  Gpu *g = ready("looking up a kernel");
  CUfunction function = nullptr;
  if (!g || !module)
    return nullptr;
  if (check(*g, g->driver.cuModuleGetFunction(&function, module, name),
            std::string("cuModuleGetFunction(") + name + ")")) {
    std::lock_guard<std::mutex> lock(g->mutex);
    g->kernelNames[function] = name;
  }
  return function;
}

CUstream mgpuStreamCreate() { return threadStream(); }

void mgpuStreamSynchronize(CUstream stream) {
  if (Gpu *g = ready("synchronizing a stream");
      g && stream && !worldFailedOnGpu())
    check(*g, g->driver.cuStreamSynchronize(stream),
          synchronization("cuStreamSynchronize", "a kernel failed"));
}

void mgpuStreamDestroy(CUstream stream) {
  // The thread's launch stream stays for the next launch.
  if (Gpu *g = ready("destroying a stream");
      g && stream && stream != launchStream)
    check(*g, g->driver.cuStreamDestroy(stream), "cuStreamDestroy");
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedBytes, CUstream stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  Gpu *g = ready("launching a kernel");
  if (!g || !function)
    return; // the failure to load or find it is already reported
  if (worldFailedOnGpu())
    return;
  std::string name = kernelName(*g, function);
  noteLaunch("kernel " + name);
  // Traced: timing events around the kernel, resolved when the trace ends.
  TracedRegion traced(stream, tracingKernels ? name : "");
  check(*g,
        g->driver.cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                                 blockZ, sharedBytes, stream, params, extra),
        "launching kernel " + name + " (grid " + std::to_string(gridX) + "x" +
            std::to_string(gridY) + "x" + std::to_string(gridZ) + ", block " +
            std::to_string(blockX) + "x" + std::to_string(blockY) + "x" +
            std::to_string(blockZ) + ")");
}

} // extern "C"
