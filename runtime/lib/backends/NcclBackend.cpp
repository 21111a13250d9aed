//===- NcclBackend.cpp - one process per GPU over NCCL --------------------===//
//
// The backend data-parallel training runs on: one process per GPU, NCCL
// between them, within and across nodes.
//
// Start: under mpirun (rank and size from MPI, the NCCL unique id broadcast
// with MPI) or torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT:
// rank 0 serves the unique id over TCP, Rendezvous.h). The process's GPU is
// its local rank's (zero_gpu_init). One communicator for the world; one per
// group of a mesh axis, split from it with ncclCommSplit the first time the
// group is used (every rank reaches the same collective first: the
// agreement check says so when it is on).
//
// Order: a collective waits on the rank's compute stream (the stream its
// kernels run on) through an event, runs on the process's communication
// stream, and records `done`; waiting for it makes the compute stream wait
// for `done`. The host never waits for the device.
//
// Batches: the collectives of one batch (zero_batch_begin/end: what one step
// of the schedule starts together) are one NCCL group, issued at the
// batch's end, so NCCL launches them together; a wait for one of them
// issues the batch so far. A collective outside a batch is a group of its
// own. A communicator is split outside any group: a batch that needs a new
// one is issued in two parts, before and after the split.
//
// Faults: a watchdog thread polls every communicator's asynchronous error
// and every collective in flight; on an error, or a collective not done
// within the timeout, it prints a message naming the collective, its
// sequence number and its group's ranks, aborts every communicator
// (ncclCommAbort) and ends the process with status 1. The other ranks' NCCL
// calls then fail or time out, and their watchdogs end them too: never a
// hang. ZERO_NCCL_INJECT=error@K reports an error at the K-th collective
// (from 0), to exercise that path on purpose.
//
// NCCL is opened with dlopen (ZERO_NCCL_LIBRARY, else the library found
// when the runtime was configured, else libnccl.so.2), like the CUDA driver:
// the runtime links no CUDA library, and machines without NCCL run the
// other backends.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "backends/CudaDriver.h"
#include "net/Agreement.h"

#include "zero/runtime/Rendezvous.h"

#ifdef ZERO_RUNTIME_HAS_NCCL

#include <nccl.h>

#ifdef ZERO_RUNTIME_HAS_MPI
#include <mpi.h>
#endif

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <list>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

using namespace zero::rt;
using namespace zero::rt::cuda;

namespace {

/// NCCL's entry points, by the names libnccl exports.
struct Nccl {
  std::string error;
  decltype(&::ncclGetUniqueId) getUniqueId;
  decltype(&::ncclCommInitRank) commInitRank;
  decltype(&::ncclCommSplit) commSplit;
  decltype(&::ncclCommAbort) commAbort;
  decltype(&::ncclCommDestroy) commDestroy;
  decltype(&::ncclCommGetAsyncError) commGetAsyncError;
  decltype(&::ncclGetErrorString) getErrorString;
  decltype(&::ncclAllReduce) allReduce;
  decltype(&::ncclReduceScatter) reduceScatter;
  decltype(&::ncclAllGather) allGather;
  decltype(&::ncclSend) send;
  decltype(&::ncclRecv) recv;
  decltype(&::ncclGroupStart) groupStart;
  decltype(&::ncclGroupEnd) groupEnd;
};

const Nccl &nccl() {
  static Nccl instance;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> names;
    if (const char *path = std::getenv("ZERO_NCCL_LIBRARY"))
      names.push_back(path);
#ifdef ZERO_RUNTIME_NCCL_LIBRARY
    names.push_back(ZERO_RUNTIME_NCCL_LIBRARY);
#endif
    names.push_back("libnccl.so.2");
    void *library = openFirstLibrary(names);
    if (!library) {
      instance.error = "NCCL (libnccl.so.2) cannot be loaded; set "
                       "ZERO_NCCL_LIBRARY to its path";
      return;
    }
    bool ok = true;
    auto bind = [&](auto &fn, const char *name) {
      ok &= bindSymbol(library, name, fn);
    };
    bind(instance.getUniqueId, "ncclGetUniqueId");
    bind(instance.commInitRank, "ncclCommInitRank");
    bind(instance.commSplit, "ncclCommSplit");
    bind(instance.commAbort, "ncclCommAbort");
    bind(instance.commDestroy, "ncclCommDestroy");
    bind(instance.commGetAsyncError, "ncclCommGetAsyncError");
    bind(instance.getErrorString, "ncclGetErrorString");
    bind(instance.allReduce, "ncclAllReduce");
    bind(instance.reduceScatter, "ncclReduceScatter");
    bind(instance.allGather, "ncclAllGather");
    bind(instance.send, "ncclSend");
    bind(instance.recv, "ncclRecv");
    bind(instance.groupStart, "ncclGroupStart");
    bind(instance.groupEnd, "ncclGroupEnd");
    if (!ok)
      instance.error = "NCCL lacks a function zero needs (ncclCommSplit "
                       "came in NCCL 2.18)";
  });
  return instance;
}

ncclDataType_t ncclType(zero_dtype dtype) {
  switch (dtype) {
  case ZERO_F32:
    return ncclFloat32;
  case ZERO_F64:
    return ncclFloat64;
  case ZERO_F16:
    return ncclFloat16;
  case ZERO_BF16:
    return ncclBfloat16;
  case ZERO_I32:
    return ncclInt32;
  case ZERO_I64:
    return ncclInt64;
  case ZERO_I8:
    return ncclInt8;
  }
  return ncclFloat32;
}

ncclRedOp_t ncclOp(zero_reduction reduction) {
  switch (reduction) {
  case ZERO_SUM:
    return ncclSum;
  case ZERO_MEAN:
    return ncclAvg;
  case ZERO_MAX:
    return ncclMax;
  case ZERO_MIN:
    return ncclMin;
  }
  return ncclSum;
}

/// How the ranks found each other: what they exchange on the host.
class BootstrapExchange {
public:
  virtual ~BootstrapExchange() = default;
  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  virtual std::string broadcast(std::string &blob) = 0;
  virtual std::string allGather(const std::string &mine,
                                std::vector<std::string> &all) = 0;
};

class TcpExchange : public BootstrapExchange {
public:
  explicit TcpExchange(std::unique_ptr<Rendezvous> rendezvous)
      : rendezvous(std::move(rendezvous)) {}
  int32_t rank() const override { return rendezvous->getOptions().rank; }
  int32_t size() const override { return rendezvous->getOptions().worldSize; }
  std::string broadcast(std::string &blob) override {
    return rendezvous->broadcast(blob);
  }
  std::string allGather(const std::string &mine,
                        std::vector<std::string> &all) override {
    return rendezvous->allGather(mine, all);
  }

private:
  std::unique_ptr<Rendezvous> rendezvous;
};

#ifdef ZERO_RUNTIME_HAS_MPI
class MpiExchange : public BootstrapExchange {
public:
  MpiExchange() {
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
  }
  int32_t rank() const override { return me; }
  int32_t size() const override { return n; }
  std::string broadcast(std::string &blob) override {
    int length = static_cast<int>(blob.size());
    MPI_Bcast(&length, 1, MPI_INT, 0, MPI_COMM_WORLD);
    blob.resize(length);
    MPI_Bcast(blob.data(), length, MPI_BYTE, 0, MPI_COMM_WORLD);
    return "";
  }
  std::string allGather(const std::string &mine,
                        std::vector<std::string> &all) override {
    // Fingerprints have one size on every rank.
    int length = static_cast<int>(mine.size());
    std::string joined(length * n, '\0');
    MPI_Allgather(mine.data(), length, MPI_BYTE, joined.data(), length,
                  MPI_BYTE, MPI_COMM_WORLD);
    all.assign(n, "");
    for (int r = 0; r < n; ++r)
      all[r] = joined.substr(r * length, length);
    return "";
  }

private:
  int me = 0, n = 1;
};
#endif

class NcclBackend;

/// A started collective, as the watchdog sees it.
struct InFlight {
  std::string what; // "all_reduce #3 of 1000 f32 (sum) on group ranks ..."
  uint64_t sequence;
  /// Recorded on the communication stream once the collective is issued.
  CUevent done;
  /// While tracing: recorded with `done`.
  CUevent ended;
  /// When it was issued.
  std::chrono::steady_clock::time_point started;
  /// Its group ended (ncclGroupEnd): NCCL enqueued it. Until then it waits
  /// in its batch, and `done` is not recorded.
  bool issued = false;
  /// ZERO_NCCL_INJECT chose it: its rank hangs in the wait, and the
  /// watchdog ends the process.
  bool injected = false;
};

class NcclPending : public Pending {
public:
  NcclPending(NcclBackend &backend, std::list<InFlight>::iterator entry,
              CUevent began)
      : backend(backend), entry(entry), beganEvent(began) {}
  bool wait() override;

private:
  NcclBackend &backend;
  std::list<InFlight>::iterator entry;
  /// While tracing: recorded before the NCCL call.
  CUevent beganEvent;
};

class NcclBackend : public Backend {
public:
  NcclBackend(const Driver &d, const Nccl &n,
              std::unique_ptr<BootstrapExchange> host, double timeout, bool check)
      : d(d), n(n), host(std::move(host)), timeout(timeout), check(check) {}
  ~NcclBackend() override {
    stopping = true;
    if (watchdog.joinable())
      watchdog.join();
    if (groupOpen)
      n.groupEnd();
    for (auto &[key, comm] : groupComms)
      n.commDestroy(comm);
    if (world)
      n.commDestroy(world);
    if (stream) {
      d.cuStreamSynchronize(stream);
      d.cuStreamDestroy(stream);
    }
  }

  /// Makes the world's communicator and the communication stream; an
  /// error message or "".
  std::string start();

  int32_t worldSize() const override { return host->size(); }
  int32_t numLocalRanks() const override { return 1; }
  int32_t worldRank(int32_t) const override { return host->rank(); }
  std::unique_ptr<Pending> start(int32_t, const Collective &c) override;
  void beginBatch(int32_t) override { batching = true; }
  void endBatch(int32_t) override {
    batching = false;
    issueGroup();
  }
  /// Ends the open NCCL group, if any: NCCL enqueues its collectives, and
  /// their `done` events are recorded after them.
  void issueGroup();
  bool isIssued(std::list<InFlight>::iterator entry) {
    std::lock_guard<std::mutex> lock(mutex);
    return entry->issued;
  }
  void fail(const std::string &message) override { abortJob(message); }
  std::string error() const override { return {}; }
  void setTracing(bool on) override {
    tracing = on;
    Backend::setTracing(on);
  }
  /// The device time of `event` on the host's clock (waits for it), and
  /// frees the event.
  double hostTime(CUevent event) {
    const DeviceClock *clock = event ? deviceClock() : nullptr;
    double time = clock ? clock->hostTime(event) : -1;
    if (event)
      d.cuEventDestroy(event);
    return time;
  }

  /// Prints this rank's `message` (which does not name it), aborts every
  /// communicator and ends the process.
  [[noreturn]] void abortWith(const std::string &message) {
    abortJob("rank " + std::to_string(host->rank()) + ": " + message);
  }
  /// The same with a message that names its rank.
  [[noreturn]] void abortJob(const std::string &message) {
    std::fprintf(stderr, "zero: error: %s\n", message.c_str());
    std::fflush(stderr);
    {
      std::lock_guard<std::mutex> lock(mutex);
      for (auto &[key, comm] : groupComms)
        n.commAbort(comm);
      if (world)
        n.commAbort(world);
    }
    std::_Exit(1);
  }

  void finished(std::list<InFlight>::iterator entry) {
    std::lock_guard<std::mutex> lock(mutex);
    d.cuEventDestroy(entry->done);
    inFlight.erase(entry);
  }
  const Driver &driverTable() const { return d; }

private:
  std::string ncclError(ncclResult_t result, const std::string &what) {
    return what + ": " + n.getErrorString(result);
  }
  ncclComm_t groupComm(const Collective &c);
  void checkAgreement(const Collective &c);
  void watch();
  /// What the watchdog must act on, or "".
  std::string findProblem();

  const Driver &d;
  const Nccl &n;
  std::unique_ptr<BootstrapExchange> host;
  double timeout;
  bool check;
  ncclComm_t world = nullptr;
  std::map<std::string, ncclComm_t> groupComms;
  CUstream stream = nullptr;
  uint64_t worldSequence = 0;
  int64_t injectErrorAt = -1;
  bool tracing = false;
  /// Between beginBatch and endBatch.
  bool batching = false;
  /// Between ncclGroupStart and ncclGroupEnd, with `unissued` in it.
  bool groupOpen = false;
  std::vector<std::list<InFlight>::iterator> unissued;

  std::mutex mutex;
  std::list<InFlight> inFlight;
  std::atomic<bool> stopping{false};
  std::thread watchdog;
};

std::string NcclBackend::start() {
  if (const char *inject = std::getenv("ZERO_NCCL_INJECT")) {
    if (std::strncmp(inject, "error@", 6) != 0)
      return "ZERO_NCCL_INJECT expects error@K, got '" + std::string(inject) +
             "'";
    injectErrorAt = std::atoll(inject + 6);
  }
  std::string id(sizeof(ncclUniqueId), '\0');
  if (host->rank() == 0)
    if (ncclResult_t r =
            n.getUniqueId(reinterpret_cast<ncclUniqueId *>(id.data())))
      return ncclError(r, "ncclGetUniqueId");
  if (std::string e = host->broadcast(id); !e.empty())
    return "sharing NCCL's unique id: " + e;
  if (id.size() != sizeof(ncclUniqueId))
    return "sharing NCCL's unique id: it arrived with " +
           std::to_string(id.size()) + " bytes";
  ncclUniqueId unique;
  std::memcpy(&unique, id.data(), sizeof unique);
  if (ncclResult_t r =
          n.commInitRank(&world, host->size(), unique, host->rank()))
    return ncclError(r, "ncclCommInitRank (rank " +
                            std::to_string(host->rank()) + " of " +
                            std::to_string(host->size()) + ")");
  if (CUresult r = d.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING))
    return errorMessage(r, "cuStreamCreate (communication stream)");
  watchdog = std::thread([this] { watch(); });
  return "";
}

void NcclBackend::checkAgreement(const Collective &c) {
  Fingerprint mine = fingerprintOf(c, worldSequence);
  std::string bytes(reinterpret_cast<const char *>(mine.data()), sizeof mine);
  std::vector<std::string> gathered;
  if (std::string e = host->allGather(bytes, gathered); !e.empty())
    abortWith(describe(c) + " (agreement check): " + e);
  std::vector<Fingerprint> all(gathered.size());
  for (size_t r = 0; r < gathered.size(); ++r)
    std::memcpy(all[r].data(), gathered[r].data(), sizeof(Fingerprint));
  if (std::string disagreement = findDisagreement(c, host->rank(), all);
      !disagreement.empty())
    abortWith(disagreement);
}

ncclComm_t NcclBackend::groupComm(const Collective &c) {
  // The whole world in rank order is the world's communicator; any other
  // group (or order) gets its own.
  bool wholeWorld = c.group.size() == host->size();
  for (int32_t i = 0; wholeWorld && i < c.group.size(); ++i)
    wholeWorld = c.group.members[i] == i;
  if (wholeWorld)
    return world;
  auto it = groupComms.find(c.group.key);
  if (it != groupComms.end())
    return it->second;
  // ncclCommSplit is a collective call of its own: not inside a group.
  issueGroup();
  ncclComm_t comm = nullptr;
  if (ncclResult_t r = n.commSplit(world, c.group.splitColor(),
                                   c.group.splitKey(), &comm, nullptr))
    abortWith(ncclError(r, "ncclCommSplit for group " + c.group.describe()));
  std::lock_guard<std::mutex> lock(mutex);
  groupComms[c.group.key] = comm;
  return comm;
}

std::unique_ptr<Pending> NcclBackend::start(int32_t, const Collective &c) {
  if (check)
    checkAgreement(c);
  uint64_t sequence = worldSequence++;
  ncclComm_t comm = groupComm(c);
  CUstream compute = threadStream();
  if (!compute)
    abortWith(describe(c) + ": the rank has no CUDA stream");
  CUevent ready = nullptr, done = nullptr;
  auto cuda = [&](CUresult r, const char *what) {
    if (r != CUDA_SUCCESS)
      abortWith(describe(c) + ": " + errorMessage(r, what));
  };
  cuda(d.cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  cuda(d.cuEventCreate(&done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
  cuda(d.cuEventRecord(ready, compute), "cuEventRecord (input ready)");
  cuda(d.cuStreamWaitEvent(stream, ready, 0), "cuStreamWaitEvent");
  d.cuEventDestroy(ready); // the wait holds what it needs
  size_t groupSize = static_cast<size_t>(c.group.size());
  cudaStream_t s = reinterpret_cast<cudaStream_t>(stream);
  const DeviceClock *clock = tracing ? deviceClock() : nullptr;
  CUevent began = clock ? clock->timingEvent() : nullptr;
  CUevent ended = clock ? clock->timingEvent() : nullptr;
  if (began)
    d.cuEventRecord(began, stream);
  std::string what = describe(c) + " (world sequence " +
                     std::to_string(sequence) + ") on group " +
                     c.group.describe();
  if (!groupOpen) {
    if (ncclResult_t r = n.groupStart())
      abortWith(ncclError(r, "ncclGroupStart for " + what));
    groupOpen = true;
  }
  ncclResult_t r = ncclSuccess;
  switch (c.kind) {
  case ZERO_ALL_REDUCE:
    r = n.allReduce(c.in, c.out, c.count, ncclType(c.dtype),
                    ncclOp(c.reduction), comm, s);
    break;
  case ZERO_REDUCE_SCATTER:
    r = n.reduceScatter(c.in, c.out, c.count / groupSize, ncclType(c.dtype),
                        ncclOp(c.reduction), comm, s);
    break;
  case ZERO_ALL_GATHER:
    r = n.allGather(c.in, c.out, c.count, ncclType(c.dtype), comm, s);
    break;
  case ZERO_ALL_TO_ALL: {
    // A send and a receive per member, in the group start() keeps open:
    // NCCL matches them as one exchange. The communicator's ranks are the
    // group indices.
    size_t part = c.count / groupSize * dtypeSize(c.dtype);
    for (size_t peer = 0; peer < groupSize && r == ncclSuccess; ++peer) {
      r = n.send(static_cast<const char *>(c.in) + peer * part,
                 c.count / groupSize, ncclType(c.dtype), peer, comm, s);
      if (r == ncclSuccess)
        r = n.recv(static_cast<char *>(c.out) + peer * part,
                   c.count / groupSize, ncclType(c.dtype), peer, comm, s);
    }
    break;
  }
  default:
    break;
  }
  if (r != ncclSuccess)
    abortWith(ncclError(r, what));
  std::list<InFlight>::iterator entry;
  {
    std::lock_guard<std::mutex> lock(mutex);
    entry = inFlight.insert(inFlight.end(),
                            {what, sequence, done, ended,
                             std::chrono::steady_clock::now(), /*issued=*/false,
                             static_cast<int64_t>(sequence) == injectErrorAt});
  }
  unissued.push_back(entry);
  if (!batching)
    issueGroup();
  return std::make_unique<NcclPending>(*this, entry, began);
}

void NcclBackend::issueGroup() {
  if (!groupOpen)
    return;
  groupOpen = false;
  if (ncclResult_t r = n.groupEnd()) {
    std::string what = "ncclGroupEnd (a batch of " +
                       std::to_string(unissued.size()) + " collectives, from " +
                       unissued.front()->what + ")";
    abortWith(ncclError(r, what));
  }
  for (std::list<InFlight>::iterator entry : unissued) {
    if (entry->ended)
      d.cuEventRecord(entry->ended, stream);
    if (CUresult r = d.cuEventRecord(entry->done, stream))
      abortWith(entry->what + ": " +
                errorMessage(r, "cuEventRecord (collective done)"));
    std::lock_guard<std::mutex> lock(mutex);
    entry->issued = true;
    entry->started = std::chrono::steady_clock::now();
  }
  unissued.clear();
}

bool NcclPending::wait() {
  if (entry->injected)
    for (;;) // a hung rank: the watchdog ends the process
      std::this_thread::sleep_for(std::chrono::seconds(1));
  // A wait inside a batch issues the batch so far.
  if (!backend.isIssued(entry))
    backend.issueGroup();
  CUstream compute = threadStream();
  const Driver &d = backend.driverTable();
  if (!compute || d.cuStreamWaitEvent(compute, entry->done, 0) != CUDA_SUCCESS)
    backend.abortWith("waiting for a collective: the rank's stream cannot "
                      "wait for it");
  // Traced: the device's times (the host waits for the collective here).
  if (beganEvent || entry->ended) {
    began = backend.hostTime(beganEvent);
    finished = backend.hostTime(entry->ended);
  }
  backend.finished(entry);
  return true;
}

void NcclBackend::watch() {
  driver("the nccl watchdog"); // the context, current on this thread
  while (!stopping) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (std::string problem = findProblem(); !problem.empty())
      abortWith(problem);
  }
}

std::string NcclBackend::findProblem() {
  std::lock_guard<std::mutex> lock(mutex);
  std::string oldest =
      inFlight.empty() ? "a collective" : inFlight.front().what;
  std::vector<ncclComm_t> comms = {world};
  for (auto &[key, comm] : groupComms)
    comms.push_back(comm);
  for (ncclComm_t comm : comms) {
    ncclResult_t state = ncclSuccess;
    n.commGetAsyncError(comm, &state);
    if (state != ncclSuccess && state != ncclInProgress)
      return oldest + ": NCCL reported an error: " + n.getErrorString(state);
  }
  auto now = std::chrono::steady_clock::now();
  for (const InFlight &entry : inFlight) {
    if (entry.injected)
      return entry.what + ": injected fault (ZERO_NCCL_INJECT)";
    if (!entry.issued || d.cuEventQuery(entry.done) == CUDA_SUCCESS)
      continue;
    if (std::chrono::duration<double>(now - entry.started).count() > timeout) {
      std::ostringstream os;
      os << entry.what << ": timed out after " << timeout
         << " s (a rank of the group did not call it, or failed)";
      return os.str();
    }
  }
  return "";
}

} // namespace

std::unique_ptr<Backend> zero::rt::createNcclBackend(double timeout, bool check,
                                                     std::string &error) {
  const Nccl &n = nccl();
  if (!n.error.empty()) {
    error = n.error;
    return nullptr;
  }
  std::unique_ptr<BootstrapExchange> host;
  bool underMpi = std::getenv("OMPI_COMM_WORLD_SIZE") ||
                  std::getenv("PMI_SIZE") || std::getenv("PMIX_RANK");
  if (underMpi && !std::getenv("MASTER_ADDR")) {
    if (std::string e = initializeMpi(); !e.empty()) {
      error = "started by mpirun, but " + e +
              "; or start it torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR, "
              "MASTER_PORT)";
      return nullptr;
    }
#ifdef ZERO_RUNTIME_HAS_MPI
    host = std::make_unique<MpiExchange>();
#endif
  } else {
    RendezvousOptions options;
    options.timeoutSeconds = timeout;
    if (std::string e = RendezvousOptions::fromEnvironment(options);
        !e.empty()) {
      error = "the nccl backend starts under mpirun or torchrun-style: " + e;
      return nullptr;
    }
    std::unique_ptr<Rendezvous> rendezvous =
        Rendezvous::connect(options, error);
    if (!rendezvous)
      return nullptr;
    host = std::make_unique<TcpExchange>(std::move(rendezvous));
  }
  // The GPU: the process's local rank's (zero_gpu_init).
  const Driver *d = driver("the nccl backend");
  if (!d) {
    error = "the nccl backend needs a GPU: " + unavailableReason();
    return nullptr;
  }
  auto backend =
      std::make_unique<NcclBackend>(*d, n, std::move(host), timeout, check);
  if (std::string e = backend->start(); !e.empty()) {
    error = "rank " + std::to_string(backend->worldRank(0)) + ": " + e;
    return nullptr;
  }
  return backend;
}

#else // !ZERO_RUNTIME_HAS_NCCL

std::unique_ptr<zero::rt::Backend>
zero::rt::createNcclBackend(double, bool, std::string &error) {
  error = "this zero runtime was built without NCCL's header (nccl.h was "
          "not found when it was configured; set ZERO_NCCL_ROOT)";
  return nullptr;
}

#endif
