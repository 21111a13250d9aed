//===- CudaDriver.h - the CUDA driver, loaded at run time -------*- C++ -*-===//
//
// The driver entry points the runtime uses, as libcuda.so.1 exports them
// (the runtime opens it with dlopen, so it builds and runs without CUDA),
// shared by the launch ABI (Cuda.cpp) and the cuda-local backend.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_CUDADRIVER_H
#define ZERO_RUNTIME_CUDADRIVER_H

#include <cstddef>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace zero::rt::cuda {

// The few driver types and constants used, as cuda.h defines them.
using CUresult = int;
using CUdevice = int;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
constexpr CUresult CUDA_ERROR_NOT_READY = 600;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr unsigned CU_MEM_ATTACH_GLOBAL = 1;
constexpr unsigned CU_MEMHOSTALLOC_PORTABLE = 1;
constexpr unsigned CU_MEMHOSTALLOC_DEVICEMAP = 2;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_CTX_SCHED_AUTO = 0;
constexpr unsigned CU_CTX_SCHED_SPIN = 1;
constexpr unsigned CU_CTX_SCHED_YIELD = 2;
constexpr unsigned CU_CTX_SCHED_BLOCKING_SYNC = 4;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr int CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr int CU_JIT_OPTIMIZATION_LEVEL = 7;

/// The driver's entry points, by the names libcuda exports.
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxSetFlags)(CUdevice, unsigned);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuMemAllocManaged)(void **, size_t, unsigned);
  CUresult (*cuMemAlloc)(void **, size_t);
  CUresult (*cuMemcpyHtoD)(void *, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, const void *, size_t);
  CUresult (*cuMemcpyDtoD)(void *, const void *, size_t);
  CUresult (*cuMemcpyAsync)(void *, const void *, size_t, CUstream);
  CUresult (*cuMemFree)(void *);
  CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
  CUresult (*cuMemFreeHost)(void *);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuPointerGetAttribute)(void *, int, void *);
  CUresult (*cuEventQuery)(CUevent);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
};

/// The first of `names` that dlopen loads (RTLD_NOW | RTLD_GLOBAL), or null:
/// the runtime opens CUDA's libraries at run time, so it builds and runs
/// without them.
void *openFirstLibrary(const std::vector<std::string> &names);
/// Points `fn` at `library`'s symbol `name`; false when it has none.
template <typename Fn>
bool bindSymbol(void *library, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  return fn != nullptr;
}

/// The driver, with the process GPU's context current on the calling thread;
/// null when there is no GPU, the reason (naming `call`) then being the
/// process's first GPU error.
const Driver *driver(const char *call);
/// Why there is no GPU, after driver() returned null.
std::string unavailableReason();
/// "CUDA error in WHAT: TEXT" for a failed call.
std::string errorMessage(CUresult result, const std::string &what);
/// Notes `what` the calling thread just put on its stream (a kernel, a
/// cuBLAS call), for the message of a failure that surfaces at a later
/// synchronization.
void noteLaunch(std::string what);
/// Records `message` as the process's first GPU error (zero_gpu_error) and
/// fails the bound rank's world with it; with no rank bound, prints it.
void recordError(const std::string &message);
/// Device times on the host's clock (zero::rt::now()): a reference event,
/// recorded and waited for when the clock is made, and the host's time
/// then. Times of events recorded later are the reference plus the elapsed
/// time between the events (the GPU's timer).
class DeviceClock {
public:
  /// Sets `error` when the reference cannot be made.
  DeviceClock(const Driver &d, std::string &error);
  ~DeviceClock();
  /// A new event that records time; null when it cannot be made.
  CUevent timingEvent() const;
  /// When `event` (a recorded timing event) happened; waits for it.
  /// Negative when unknown.
  double hostTime(CUevent event) const;

private:
  const Driver &d;
  CUevent reference = nullptr;
  double referenceHost = 0;
};

/// The process's device clock, made on first use (the context must be
/// current: after driver()); null, with the error recorded, when it cannot
/// be made.
const DeviceClock *deviceClock();

/// While a world traces, every kernel launch is timed on the device.
void setKernelTracing(bool on);
/// A kernel as it ran on the device, on the host's clock.
struct KernelSpan {
  std::string name;
  double begin, end;
};
/// The kernels the calling thread launched since the last call, while
/// tracing; waits for them.
std::vector<KernelSpan> takeKernelSpans();
/// While tracing, times the device work enqueued on `stream` during its
/// lifetime (a kernel, a cuBLAS call) as one span named `name` of the
/// calling thread; otherwise does nothing.
class TracedRegion {
public:
  TracedRegion(CUstream stream, std::string name);
  ~TracedRegion();

private:
  CUstream stream;
  std::string name;
  CUevent begin = nullptr, end = nullptr;
};

/// The calling thread's stream for kernels and copies: compiled code
/// launches on it (mgpuStreamCreate returns it), so it is the rank's compute
/// stream. Null, with the error recorded, when it cannot be made.
CUstream threadStream();

} // namespace zero::rt::cuda

#endif // ZERO_RUNTIME_CUDADRIVER_H
