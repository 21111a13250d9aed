//===- CudaLocal.cpp - collectives among ranks that share one GPU ---------===//
//
// The exchange of the cuda-local backend: a local world (each rank a host
// thread, LocalBackend.cpp) whose collectives move data on the GPU. NCCL
// refuses two ranks on one device, so this is how N ranks run on one GPU.
//
// Order, without the host waiting for the device:
//  - when a rank starts a collective, an event (`ready`) is recorded on the
//    rank's stream (the stream its kernels run on), after the kernels that
//    wrote the input;
//  - once every member has posted, the group's leader (index 0) makes its
//    communication stream wait for every member's `ready`, launches one
//    kernel that does the whole collective over every member's buffers
//    (cuda/Collectives.cu: ranks combined in order 0..n-1, as on the host,
//    so results agree with the local backend bit for bit), and records
//    `done`;
//  - a rank that waits for the collective makes its own stream wait for
//    `done`: its later kernels run after the collective, while the host goes
//    on launching them.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "backends/CudaDriver.h"

#include <atomic>
#include <memory>
#include <mutex>

#ifdef ZERO_RUNTIME_HAS_CUDA_KERNELS
extern const unsigned char zero_collectives_fatbin[];
extern const unsigned long zero_collectives_fatbin_size;
#endif

using namespace zero::rt;
using namespace zero::rt::cuda;

namespace {

/// Most members of a group: the kernels take every member's buffer as an
/// argument. Matches Collectives.cu.
constexpr int32_t kMaxMembers = 64;

/// A collective's arguments, as the kernels of Collectives.cu take them.
struct Buffers {
  const void *ins[kMaxMembers];
  void *outs[kMaxMembers];
  int64_t count;
  int32_t n;
  int32_t reduction;
};

/// The events that order one rank's call.
struct Order {
  /// The input is ready: recorded on the rank's stream when it starts.
  CUevent ready = nullptr;
  /// The collective is done: recorded by the leader, shared by the members.
  std::shared_ptr<CUevent_st> done;
  /// While tracing: when the collective's kernel began and ended on the
  /// device (timing events around it), shared likewise.
  std::shared_ptr<CUevent_st> began, ended;
};

Order &orderOf(const Collective &c) {
  return *static_cast<Order *>(c.backendData);
}

class CudaExchange : public LocalExchange {
public:
  CudaExchange(const Driver &d, int32_t ranks) : d(d), streams(ranks) {}
  /// After the world's threads have ended: the streams' work finishes, then
  /// they and the kernels go.
  ~CudaExchange() override {
    if (!driver("ending a cuda-local world"))
      return;
    for (CUstream stream : streams)
      if (stream) {
        d.cuStreamSynchronize(stream);
        d.cuStreamDestroy(stream);
      }
    if (module)
      d.cuModuleUnload(module);
  }

  /// Loads the kernels; an error message, or empty.
  std::string load();
  std::string prepare(Collective &c) override;
  std::string exchange(const std::vector<const Collective *> &posted,
                       const Collective &c) override;
  std::string finish(Collective &c, bool ok, Pending &pending) override;
  void setTracing(bool on) override;

private:
  CUfunction kernelFor(const Collective &c) const;
  std::string checkBuffers(const std::vector<const Collective *> &posted) const;

  const Driver &d;
  CUmodule module = nullptr;
  /// [kind][dtype] for the reducing collectives; gathers by element size.
  CUfunction reducing[2][kNumDtypes] = {};
  CUfunction gather1 = nullptr, gather2 = nullptr, gather4 = nullptr,
             gather8 = nullptr;
  /// Each rank's communication stream, made by the rank's own thread when
  /// it first leads a collective.
  std::vector<CUstream> streams;
  std::atomic<bool> tracing{false};
};

void CudaExchange::setTracing(bool on) { tracing = on; }

/// An event that owns itself: destroyed with its last user.
std::shared_ptr<CUevent_st> shareEvent(const Driver &d, CUevent event) {
  return std::shared_ptr<CUevent_st>(
      event, [driver = &d](CUevent e) { driver->cuEventDestroy(e); });
}

std::string CudaExchange::load() {
#ifdef ZERO_RUNTIME_HAS_CUDA_KERNELS
  if (CUresult r = d.cuModuleLoadData(&module, zero_collectives_fatbin))
    return errorMessage(r, "loading the cuda-local kernels (" +
                               std::to_string(zero_collectives_fatbin_size) +
                               " bytes of sm_80/sm_90 code)");
  auto get = [&](const std::string &name, CUfunction &fn) -> std::string {
    if (CUresult r = d.cuModuleGetFunction(&fn, module, name.c_str()))
      return errorMessage(r, "cuModuleGetFunction(" + name + ")");
    return "";
  };
  // The kernels are named by dtype (Collectives.cu).
  for (int t = 0; t < kNumDtypes; ++t) {
    std::string dtype = dtypeName(static_cast<zero_dtype>(t));
    for (std::string e : {get("zero_all_reduce_" + dtype, reducing[0][t]),
                          get("zero_reduce_scatter_" + dtype, reducing[1][t])})
      if (!e.empty())
        return e;
  }
  for (std::string e :
       {get("zero_all_gather_1", gather1), get("zero_all_gather_2", gather2),
        get("zero_all_gather_4", gather4), get("zero_all_gather_8", gather8)})
    if (!e.empty())
      return e;
  return "";
#else
  return "this runtime was built without the CUDA toolkit (nvcc was not "
         "found when it was configured), so it has no cuda-local kernels";
#endif
}

CUfunction CudaExchange::kernelFor(const Collective &c) const {
  if (c.kind == ZERO_ALL_GATHER) {
    size_t size = dtypeSize(c.dtype);
    return size == 1   ? gather1
           : size == 2 ? gather2
           : size == 4 ? gather4
                       : gather8;
  }
  return reducing[c.kind == ZERO_REDUCE_SCATTER][c.dtype];
}

std::string CudaExchange::prepare(Collective &c) {
  CUstream stream = threadStream();
  if (!stream)
    return "the rank has no CUDA stream (" + unavailableReason() + ")";
  auto order = std::make_unique<Order>();
  if (CUresult r = d.cuEventCreate(&order->ready, CU_EVENT_DISABLE_TIMING))
    return errorMessage(r, "cuEventCreate");
  if (CUresult r = d.cuEventRecord(order->ready, stream)) {
    d.cuEventDestroy(order->ready);
    return errorMessage(r, "cuEventRecord on the rank's stream");
  }
  c.backendData = order.release();
  return "";
}

/// Host memory that CUDA does not know would fault in a kernel (and spoil
/// the context for every rank): name it instead.
std::string CudaExchange::checkBuffers(
    const std::vector<const Collective *> &posted) const {
  for (const Collective *c : posted) {
    for (auto [pointer, what] :
         {std::pair<const void *, const char *>{c->in, "input"},
          {c->out, "output"}}) {
      int type = 0;
      if (c->count > 0 &&
          d.cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                  const_cast<void *>(pointer)) != CUDA_SUCCESS)
        return "rank " + std::to_string(c->group.members[c->group.index]) +
               "'s " + what +
               " is host memory that CUDA does not know; cuda-local moves "
               "GPU buffers (device or managed memory) only";
    }
  }
  return "";
}

std::string
CudaExchange::exchange(const std::vector<const Collective *> &posted,
                       const Collective &c) {
  // The leader runs the whole collective; the others have nothing to do
  // until they wait for it.
  if (c.group.index != 0)
    return "";
  if (!driver("cuda-local"))
    return unavailableReason();
  int32_t n = static_cast<int32_t>(posted.size());
  if (n > kMaxMembers)
    return "cuda-local runs groups of at most " + std::to_string(kMaxMembers) +
           " ranks";
  if (std::string error = checkBuffers(posted); !error.empty())
    return error;
  CUstream &stream = streams[c.group.members[0]];
  if (!stream)
    if (CUresult r = d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
      return errorMessage(r, "cuStreamCreate (communication stream)");
  for (const Collective *member : posted)
    if (CUresult r = d.cuStreamWaitEvent(stream, orderOf(*member).ready, 0))
      return errorMessage(r, "cuStreamWaitEvent (a member's input)");

  Buffers buffers = {};
  for (int32_t k = 0; k < n; ++k) {
    buffers.ins[k] = posted[k]->in;
    buffers.outs[k] = posted[k]->out;
  }
  buffers.count = c.count;
  buffers.n = n;
  buffers.reduction = c.reduction;
  int64_t elements = c.kind == ZERO_ALL_GATHER ? c.count * n : c.count;
  std::shared_ptr<CUevent_st> began, ended;
  if (const DeviceClock *clock = tracing ? deviceClock() : nullptr) {
    began = shareEvent(d, clock->timingEvent());
    ended = shareEvent(d, clock->timingEvent());
    if (began.get())
      d.cuEventRecord(began.get(), stream);
  }
  if (c.kind == ZERO_ALL_TO_ALL) {
    // Copies, not a kernel: part j of member i's input to part i of member
    // j's output.
    size_t part = c.count / n * dtypeSize(c.dtype);
    for (int32_t i = 0; i < n && part > 0; ++i)
      for (int32_t j = 0; j < n; ++j)
        if (CUresult r = d.cuMemcpyAsync(
                static_cast<char *>(posted[j]->out) + i * part,
                static_cast<const char *>(posted[i]->in) + j * part, part,
                stream))
          return errorMessage(r, "cuMemcpyAsync (all_to_all)");
  } else if (elements > 0) {
    constexpr int64_t threads = 256, maxBlocks = 65536;
    int64_t blocks = (elements + threads - 1) / threads;
    if (blocks > maxBlocks)
      blocks = maxBlocks; // the kernels loop over the rest
    void *params[] = {&buffers};
    if (CUresult r =
            d.cuLaunchKernel(kernelFor(c), static_cast<unsigned>(blocks), 1, 1,
                             threads, 1, 1, 0, stream, params, nullptr))
      return errorMessage(r, std::string("launching the ") + kindName(c.kind) +
                                 " kernel");
  }
  if (ended.get())
    d.cuEventRecord(ended.get(), stream);
  CUevent done = nullptr;
  if (CUresult r = d.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING))
    return errorMessage(r, "cuEventCreate");
  std::shared_ptr<CUevent_st> shared = shareEvent(d, done);
  if (CUresult r = d.cuEventRecord(done, stream))
    return errorMessage(r, "cuEventRecord on the communication stream");
  // Every member still waits at the rendezvous, so nobody reads `done` yet.
  for (const Collective *member : posted) {
    orderOf(*member).done = shared;
    orderOf(*member).began = began;
    orderOf(*member).ended = ended;
  }
  return "";
}

std::string CudaExchange::finish(Collective &c, bool ok, Pending &pending) {
  std::unique_ptr<Order> order(static_cast<Order *>(c.backendData));
  c.backendData = nullptr;
  std::string error;
  if (ok && order->done) {
    CUstream stream = threadStream();
    if (!stream)
      error = "the rank has no CUDA stream";
    else if (CUresult r = d.cuStreamWaitEvent(stream, order->done.get(), 0))
      error = errorMessage(r, "cuStreamWaitEvent (the collective's end)");
  }
  // Traced: the device's times (the host waits for the collective here).
  if (const DeviceClock *clock = order->began ? deviceClock() : nullptr;
      ok && clock && order->ended) {
    pending.began = clock->hostTime(order->began.get());
    pending.finished = clock->hostTime(order->ended.get());
  }
  d.cuEventDestroy(order->ready);
  return error;
}

} // namespace

std::unique_ptr<LocalExchange>
zero::rt::createCudaExchange(int32_t ranks, std::string &error) {
  if (ranks < 1 || ranks > kMaxMembers) {
    error = "a cuda-local world runs 1 to " + std::to_string(kMaxMembers) +
            " ranks, not " + std::to_string(ranks);
    return nullptr;
  }
  const Driver *d = driver("the cuda-local backend");
  if (!d) {
    error = "the cuda-local backend needs a GPU: " + unavailableReason();
    return nullptr;
  }
  auto exchange = std::make_unique<CudaExchange>(*d, ranks);
  if (std::string problem = exchange->load(); !problem.empty()) {
    error = "the cuda-local backend cannot start: " + problem;
    return nullptr;
  }
  return exchange;
}
