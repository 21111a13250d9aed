//===- MpiBackend.cpp - one process per rank over MPI ---------------------===//
//
// Non-blocking MPI collectives (MPI_Iallreduce, MPI_Ireduce_scatter_block,
// MPI_Iallgather) on one communicator per group, split from MPI_COMM_WORLD the
// first time the group is used. Before each collective the ranks exchange a
// description of it over MPI_COMM_WORLD (unless checking is off), so ranks that
// disagree on a collective's kind, size, dtype, reduction or group are named
// instead of corrupting data or hanging. Every wait has a deadline; on a
// failure the rank prints the message and calls MPI_Abort, which ends every
// rank of the job.
//
// MPI moves a non-blocking collective's data only inside MPI calls, so a
// collective started before a matmul would make no progress during it. Each
// process therefore runs a progress thread (MPI_THREAD_MULTIPLE) that polls
// the requests in flight while the rank computes. A wait takes its request
// back from that thread and polls it itself: the rank has nothing else to
// do, and a handoff between threads (the progress thread's poll interval,
// two wake-ups) would be most of a small collective's latency. The trace
// says a collective finished when whichever thread polls it sees it
// complete.
//
// bf16 and f16 travel as 16-bit words reduced by user-defined MPI operations;
// a mean is a sum divided by the group size when the collective completes.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "net/Agreement.h"

#ifdef ZERO_RUNTIME_HAS_MPI

#include "core/Reduce.h"
#include "net/LossWatch.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

using namespace zero::rt;

namespace {

using Clock = std::chrono::steady_clock;

// User-defined reductions for the 16-bit float types, one per (dtype, kind).
template <zero_dtype D, zero_reduction R>
void userReduce(void *in, void *inout, int *len, MPI_Datatype *) {
  reducePair(D, R, in, inout, *len);
}

class MpiBackend;

class MpiPending : public Pending {
public:
  MpiPending(MpiBackend &backend, Collective c, int32_t groupSize)
      : backend(backend), c(c), groupSize(groupSize) {}
  ~MpiPending() override;
  bool wait() override;

  /// Set once; then only the progress thread touches it, until `completed`
  /// or until a wait takes it back.
  MPI_Request request = MPI_REQUEST_NULL;
  /// Set by the thread that saw the request complete, under the backend's
  /// lock.
  bool completed = false;

private:
  MpiBackend &backend;
  Collective c;
  int32_t groupSize;
};

class MpiBackend : public Backend {
public:
  MpiBackend(double timeout, bool check) : timeout(timeout), check(check) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    // A communicator of its own for the barrier at the end, so that it never
    // matches a collective that another rank is still waiting in.
    MPI_Comm_dup(MPI_COMM_WORLD, &finishComm);
    MPI_Type_contiguous(2, MPI_BYTE, &halfType);
    MPI_Type_commit(&halfType);
    createOps<ZERO_BF16>(bf16Ops);
    createOps<ZERO_F16>(f16Ops);
    startLossWatch();
    progressThread = std::thread([this] { progress(); });
  }
  ~MpiBackend() override {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    inFlightChanged.notify_all();
    progressThread.join();
    // A rank that ends while others still wait in a collective (it skipped
    // one) must not sit in MPI_Finalize while they abort: it waits for the
    // others here and aborts too. Its deadline is twice theirs, so that the
    // ranks that waited first report the collective.
    MPI_Request request;
    MPI_Ibarrier(finishComm, &request);
    waitFor(request,
            "the end of the program (another rank is still in a "
            "collective this rank did not call)",
            2 * timeout);
    // Every rank is here: from now on a closing connection is no loss.
    lossWatch.reset();
    MPI_Comm_free(&finishComm);
    for (auto &[key, comm] : comms)
      MPI_Comm_free(&comm);
    for (MPI_Op *ops : {bf16Ops, f16Ops})
      for (int k = 0; k < 4; ++k)
        MPI_Op_free(&ops[k]);
    MPI_Type_free(&halfType);
  }

  int32_t worldSize() const override { return size; }
  int32_t numLocalRanks() const override { return 1; }
  int32_t worldRank(int32_t) const override { return rank; }

  std::unique_ptr<Pending> start(int32_t, const Collective &c) override;

  /// Ends the job with this rank's `message`, which does not name it.
  [[noreturn]] void abortWith(const std::string &message) {
    abortJob("rank " + std::to_string(rank) + ": " + message);
  }
  [[noreturn]] void abortJob(const std::string &message) {
    if (lossWatch)
      lossWatch->sayFailed();
    std::fprintf(stderr, "zero: error: %s\n", message.c_str());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::abort();
  }
  void fail(const std::string &message) override { abortJob(message); }
  std::string error() const override { return {}; }

  /// Hands `pending`'s request to the progress thread.
  void track(MpiPending *pending) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      inFlight.push_back(pending);
    }
    inFlightChanged.notify_all();
  }

  /// Forgets `pending` (destroyed, completed or not).
  void untrack(MpiPending *pending) {
    std::lock_guard<std::mutex> lock(mutex);
    inFlight.remove(pending);
  }

  /// Waits until `pending` completes, or the timeout passes: takes its
  /// request back from the progress thread (under the lock, so that the
  /// thread is not testing it) and polls it on this thread.
  void waitFor(MpiPending &pending, const std::string &what) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (pending.completed)
        return;
      inFlight.remove(&pending);
    }
    waitFor(pending.request, what);
    std::lock_guard<std::mutex> lock(mutex);
    pending.finished = now();
    pending.completed = true;
  }

  /// Polls `request` until it completes or `seconds` (default: the
  /// timeout) pass.
  void waitFor(MPI_Request &request, const std::string &what,
               double seconds = 0) {
    if (seconds <= 0)
      seconds = timeout;
    auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
    for (int done = 0;;) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
      if (done)
        return;
      if (Clock::now() > deadline) {
        std::ostringstream os;
        os << what << " timed out after " << seconds
           << " s: a rank of its group did not arrive";
        abortWith(os.str());
      }
      std::this_thread::yield();
    }
  }

private:
  /// The progress thread: while collectives are in flight, tests each
  /// every few tens of microseconds (MPI_Test drives the transfers), and
  /// marks the completed ones; sleeps while none is.
  void progress() {
    // The lock is held while testing, so a pending cannot be destroyed
    // (untrack) under the test; it is released while waiting for the next
    // poll or for work.
    std::unique_lock<std::mutex> lock(mutex);
    while (true) {
      inFlightChanged.wait(lock, [&] { return stopping || !inFlight.empty(); });
      if (stopping)
        return;
      bool any = false;
      for (auto it = inFlight.begin(); it != inFlight.end();) {
        MpiPending *pending = *it;
        int flag = 0;
        MPI_Test(&pending->request, &flag, MPI_STATUS_IGNORE);
        if (!flag) {
          ++it;
          continue;
        }
        pending->finished = now();
        pending->completed = true;
        it = inFlight.erase(it);
        any = true;
      }
      if (!any)
        inFlightChanged.wait_for(lock, std::chrono::microseconds(20));
    }
  }

  template <zero_dtype D> void createOps(MPI_Op *ops) {
    MPI_Op_create(&userReduce<D, ZERO_SUM>, 1, &ops[ZERO_SUM]);
    MPI_Op_create(&userReduce<D, ZERO_SUM>, 1, &ops[ZERO_MEAN]);
    MPI_Op_create(&userReduce<D, ZERO_MAX>, 1, &ops[ZERO_MAX]);
    MPI_Op_create(&userReduce<D, ZERO_MIN>, 1, &ops[ZERO_MIN]);
  }
  MPI_Datatype mpiType(zero_dtype dtype) const {
    switch (dtype) {
    case ZERO_F32:
      return MPI_FLOAT;
    case ZERO_F64:
      return MPI_DOUBLE;
    case ZERO_I32:
      return MPI_INT32_T;
    case ZERO_I64:
      return MPI_INT64_T;
    case ZERO_I8:
      return MPI_INT8_T;
    case ZERO_BF16:
    case ZERO_F16:
      return halfType;
    }
    return MPI_BYTE;
  }
  MPI_Op mpiOp(zero_dtype dtype, zero_reduction reduction) const {
    if (dtype == ZERO_BF16)
      return bf16Ops[reduction];
    if (dtype == ZERO_F16)
      return f16Ops[reduction];
    switch (reduction) {
    case ZERO_SUM:
    case ZERO_MEAN:
      return MPI_SUM;
    case ZERO_MAX:
      return MPI_MAX;
    case ZERO_MIN:
      return MPI_MIN;
    }
    return MPI_SUM;
  }
  void checkAgreement(const Collective &c);
  MPI_Comm groupComm(const Collective &c);
  /// Survivors of a rank whose process vanishes name it (LossWatch.h); a
  /// job that cannot set the watch up runs without it, with a warning.
  void startLossWatch() {
    auto allGather = [](const std::string &mine) {
      constexpr int width = 320;
      int size = 1;
      MPI_Comm_size(MPI_COMM_WORLD, &size);
      std::vector<char> sent(width, '\0'), all(size_t(size) * width);
      std::copy_n(mine.begin(), std::min<size_t>(mine.size(), width - 1),
                  sent.begin());
      MPI_Allgather(sent.data(), width, MPI_CHAR, all.data(), width, MPI_CHAR,
                    MPI_COMM_WORLD);
      std::vector<std::string> each;
      for (int r = 0; r < size; ++r)
        each.emplace_back(all.data() + size_t(r) * width);
      return each;
    };
    std::string error;
    lossWatch = LossWatch::start(rank, size, allGather, timeout, error);
    if (!error.empty())
      std::fprintf(stderr,
                   "zero: warning: rank %d: a rank lost without a word will "
                   "not be named: %s\n",
                   rank, error.c_str());
  }

  int rank = 0, size = 1;
  double timeout;
  bool check;
  uint64_t worldSequence = 0;
  MPI_Comm finishComm;
  MPI_Datatype halfType;
  MPI_Op bf16Ops[4], f16Ops[4];
  std::map<std::string, MPI_Comm> comms;

  /// What the progress thread polls, under `mutex`. A pending is in it from
  /// its start until the thread sees it complete, a wait takes it back, or
  /// it is destroyed.
  std::mutex mutex;
  std::list<MpiPending *> inFlight;
  std::condition_variable inFlightChanged;
  bool stopping = false;
  std::thread progressThread;
  std::unique_ptr<LossWatch> lossWatch;
};

MpiPending::~MpiPending() { backend.untrack(this); }

bool MpiPending::wait() {
  backend.waitFor(*this, describe(c) + " on group " + c.group.describe());
  if (c.reduction == ZERO_MEAN && kindReduces(c.kind))
    divideInPlace(c.dtype, c.out,
                  c.kind == ZERO_ALL_REDUCE ? c.count : c.count / groupSize,
                  groupSize);
  return true;
}

void MpiBackend::checkAgreement(const Collective &c) {
  Fingerprint mine = fingerprintOf(c, worldSequence++);
  std::vector<Fingerprint> all(size);
  MPI_Request request;
  MPI_Iallgather(mine.data(), mine.size(), MPI_INT64_T, all.data(), mine.size(),
                 MPI_INT64_T, MPI_COMM_WORLD, &request);
  waitFor(request, describe(c) + " (agreement check)");
  if (std::string disagreement = findDisagreement(c, rank, all);
      !disagreement.empty())
    abortWith(disagreement);
}

MPI_Comm MpiBackend::groupComm(const Collective &c) {
  auto it = comms.find(c.group.key);
  if (it != comms.end())
    return it->second;
  // Every rank reaches the same collective here (checked above), and splits
  // by the same mesh and axes, so the split is collective over the world.
  MPI_Comm comm;
  MPI_Comm_split(MPI_COMM_WORLD, c.group.splitColor(), c.group.splitKey(),
                 &comm);
  comms[c.group.key] = comm;
  return comm;
}

std::unique_ptr<Pending> MpiBackend::start(int32_t, const Collective &c) {
  if (check)
    checkAgreement(c);
  MPI_Comm comm = groupComm(c);
  MPI_Datatype type = mpiType(c.dtype);
  int32_t n = c.group.size();
  auto pending = std::make_unique<MpiPending>(*this, c, n);
  MPI_Request &request = pending->request;
  int err = MPI_SUCCESS;
  pending->began = now();
  switch (c.kind) {
  case ZERO_ALL_REDUCE:
    err = MPI_Iallreduce(c.in == c.out ? MPI_IN_PLACE : c.in, c.out,
                         static_cast<int>(c.count), type,
                         mpiOp(c.dtype, c.reduction), comm, &request);
    break;
  case ZERO_REDUCE_SCATTER:
    err = MPI_Ireduce_scatter_block(c.in, c.out, static_cast<int>(c.count / n),
                                    type, mpiOp(c.dtype, c.reduction), comm,
                                    &request);
    break;
  case ZERO_ALL_GATHER:
    // In place where the input is this rank's part of the output (MPI
    // forbids the two to overlap otherwise).
    err =
        MPI_Iallgather(c.in == static_cast<char *>(c.out) +
                                   c.group.index * c.count * dtypeSize(c.dtype)
                           ? MPI_IN_PLACE
                           : c.in,
                       static_cast<int>(c.count), type, c.out,
                       static_cast<int>(c.count), type, comm, &request);
    break;
  case ZERO_ALL_TO_ALL:
    err = MPI_Ialltoall(c.in, static_cast<int>(c.count / n), type, c.out,
                        static_cast<int>(c.count / n), type, comm, &request);
    break;
  default:
    abortWith("unknown collective kind");
  }
  if (err != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(err, text, &length);
    abortWith(describe(c) + ": " + std::string(text, length));
  }
  track(pending.get());
  return pending;
}

} // namespace

std::string zero::rt::initializeMpi() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // The rank's thread starts collectives while the progress thread tests
    // them.
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided) !=
        MPI_SUCCESS)
      return "MPI_Init_thread failed";
    if (provided < MPI_THREAD_MULTIPLE)
      return "this MPI library does not provide MPI_THREAD_MULTIPLE, which "
             "the progress thread of zero's mpi backend needs";
    // MPI can be initialized once per process, and a process may run
    // several worlds in turn (a benchmark's variants): it ends with the
    // process, not with a world.
    std::atexit([] {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (!finalized)
        MPI_Finalize();
    });
    return "";
  }
  int provided = 0;
  MPI_Query_thread(&provided);
  if (provided < MPI_THREAD_MULTIPLE)
    return "MPI was initialized without MPI_THREAD_MULTIPLE, which the "
           "progress thread of zero's mpi backend needs";
  return "";
}

std::unique_ptr<Backend> zero::rt::createMpiBackend(double timeout, bool check,
                                                    std::string &error) {
  error = initializeMpi();
  if (!error.empty())
    return nullptr;
  return std::make_unique<MpiBackend>(timeout, check);
}

#else // !ZERO_RUNTIME_HAS_MPI

std::string zero::rt::initializeMpi() {
  return "this zero runtime was built without MPI (install libopenmpi-dev "
         "and rebuild)";
}

std::unique_ptr<zero::rt::Backend>
zero::rt::createMpiBackend(double, bool, std::string &error) {
  error = initializeMpi();
  return nullptr;
}

#endif
