//===- LocalBackend.cpp - N ranks as threads in one process ---------------===//
//
// Every rank has a communication thread that runs its collectives in issue
// order, so a started collective progresses while the rank computes. Ranks of
// a group meet at a rendezvous: each posts its collective; once all have
// posted, each checks that they agree, computes its share, and waits until
// every member is done reading the others' buffers before returning.
//
// What moves the data once all have posted is the world's LocalExchange: the
// host's below, or the GPU's (cuda-local, CudaLocal.cpp), which enqueues
// kernels instead.
//
// Host shares: for all-reduce, member j reduces the j-th 1/n of the elements
// and writes it to every member's output; for reduce-scatter, member j computes
// its own output; for all-gather, member j copies every input into its own
// output (but its own input where it is already its part of the output: a
// gather in place). Each element is reduced over ranks 0..n-1 in order
// (Reduce.h), so all-reduce and reduce-scatter agree bit for bit.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "core/Reduce.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <sstream>
#include <thread>

using namespace zero::rt;

namespace {

using Clock = std::chrono::steady_clock;

class LocalBackend;

/// Moves and reduces on the host, each member its share.
class HostExchange : public LocalExchange {
public:
  std::string exchange(const std::vector<const Collective *> &posted,
                       const Collective &c) override;
};

std::string
HostExchange::exchange(const std::vector<const Collective *> &posted,
                       const Collective &c) {
  int32_t n = static_cast<int32_t>(posted.size()), j = c.group.index;
  size_t elementSize = dtypeSize(c.dtype);
  std::vector<const void *> ins(n);
  for (int32_t r = 0; r < n; ++r)
    ins[r] = posted[r]->in;
  switch (c.kind) {
  case ZERO_ALL_REDUCE: {
    int64_t begin = c.count * j / n, end = c.count * (j + 1) / n;
    if (end == begin)
      return "";
    // Reduce into this rank's output, then copy to the others: the share is
    // computed once, and `out` may alias `in`.
    reduceRange(c.dtype, c.reduction, ins.data(), n, begin, c.out, begin,
                end - begin);
    for (int32_t r = 0; r < n; ++r)
      if (r != j)
        std::memcpy(static_cast<char *>(posted[r]->out) + begin * elementSize,
                    static_cast<const char *>(c.out) + begin * elementSize,
                    (end - begin) * elementSize);
    return "";
  }
  case ZERO_REDUCE_SCATTER: {
    int64_t part = c.count / n;
    reduceRange(c.dtype, c.reduction, ins.data(), n, part * j, c.out, 0, part);
    return "";
  }
  case ZERO_ALL_GATHER:
    for (int32_t r = 0; r < n; ++r) {
      char *part = static_cast<char *>(c.out) + r * c.count * elementSize;
      // In place: this member's input is already its own part.
      if (part != ins[r])
        std::memcpy(part, ins[r], c.count * elementSize);
    }
    return "";
  case ZERO_ALL_TO_ALL: {
    // Part j of every member's input, in group order.
    size_t part = c.count / n * elementSize;
    for (int32_t r = 0; r < n; ++r)
      std::memcpy(static_cast<char *>(c.out) + r * part,
                  static_cast<const char *>(ins[r]) + j * part, part);
    return "";
  }
  default:
    return "";
  }
}

/// The rendezvous of one group.
struct GroupState {
  std::mutex mutex;
  std::condition_variable changed;
  int32_t size = 0;
  /// Bumped when every member has finished a collective.
  uint64_t generation = 0;
  int32_t arrived = 0;
  int32_t finished = 0;
  std::vector<const Collective *> posted;
  std::vector<uint64_t> postedGeneration;
  /// Why the members of this generation disagree (empty: they agree), found
  /// by the last to arrive while every posted collective is still alive.
  std::string disagreement;
};

/// A collective queued on a rank's communication thread.
struct Job {
  Collective collective;
  std::mutex mutex;
  std::condition_variable done;
  bool finished = false;
  bool ok = false;
  /// Whether the exchange prepared it (finish() is then still owed).
  bool prepared = true;
  /// When the communication thread took it up and when it finished.
  double began = -1;
  double ended = -1;
};

class LocalPending : public Pending {
public:
  LocalPending(LocalBackend &backend, std::shared_ptr<Job> job)
      : backend(backend), job(std::move(job)) {}
  bool wait() override;

private:
  LocalBackend &backend;
  std::shared_ptr<Job> job;
};

/// A rank's communication thread.
class CommThread {
public:
  CommThread(LocalBackend &backend, int32_t rank)
      : backend(backend), rank(rank), thread([this] { run(); }) {}
  ~CommThread() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    wake.notify_one();
    thread.join();
  }
  void enqueue(std::shared_ptr<Job> job) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back(std::move(job));
    }
    wake.notify_one();
  }

private:
  void run();

  LocalBackend &backend;
  int32_t rank;
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::shared_ptr<Job>> queue;
  bool stopping = false;
  std::thread thread;
};

class LocalBackend : public Backend {
public:
  LocalBackend(int32_t ranks, double timeout,
               std::unique_ptr<LocalExchange> exchange, bool check)
      : ranks(ranks), timeout(timeout), check(check),
        exchange(std::move(exchange)) {
    for (int32_t r = 0; r < ranks; ++r)
      threads.push_back(std::make_unique<CommThread>(*this, r));
  }
  ~LocalBackend() override { threads.clear(); }

  int32_t worldSize() const override { return ranks; }
  int32_t numLocalRanks() const override { return ranks; }
  int32_t worldRank(int32_t local) const override { return local; }

  std::unique_ptr<Pending> start(int32_t local, const Collective &c) override {
    auto job = std::make_shared<Job>();
    job->collective = c;
    std::string error = exchange->prepare(job->collective);
    if (!error.empty()) {
      fail("rank " + std::to_string(c.group.members[c.group.index]) + ": " +
           describe(c) + ": " + error);
      job->finished = true; // nothing to wait for, nothing to finish
      job->ok = false;
      job->prepared = false;
      return std::make_unique<LocalPending>(*this, job);
    }
    threads[local]->enqueue(job);
    return std::make_unique<LocalPending>(*this, job);
  }

  LocalExchange &getExchange() { return *exchange; }
  void setTracing(bool on) override {
    exchange->setTracing(on);
    Backend::setTracing(on);
  }

  void fail(const std::string &message) override {
    std::lock_guard<std::mutex> lock(mutex);
    if (failed.load())
      return;
    firstError = message;
    failed.store(true);
    // Wake every rendezvous so that its waiters see the failure.
    for (auto &[key, group] : groups) {
      std::lock_guard<std::mutex> groupLock(group->mutex);
      group->changed.notify_all();
    }
  }

  std::string error() const override {
    std::lock_guard<std::mutex> lock(mutex);
    return firstError;
  }

  bool hasFailed() const { return failed.load(); }

  /// Runs `c` for its rank; false when the world failed.
  bool run(const Collective &c);

private:
  GroupState &groupState(const Group &group);
  std::string findDisagreement(const GroupState &state, const Collective &c);

  int32_t ranks;
  double timeout;
  /// Whether members compare their posted collectives (off: the compiler
  /// proved that they agree).
  bool check;
  mutable std::mutex mutex;
  std::atomic<bool> failed{false};
  std::string firstError;
  std::map<std::string, std::unique_ptr<GroupState>> groups;
  std::unique_ptr<LocalExchange> exchange;
  std::vector<std::unique_ptr<CommThread>> threads;
};

bool LocalPending::wait() {
  {
    std::unique_lock<std::mutex> lock(job->mutex);
    job->done.wait(lock, [&] { return job->finished; });
    began = job->began;
    finished = job->ended;
  }
  if (!job->prepared)
    return false;
  std::string error =
      backend.getExchange().finish(job->collective, job->ok, *this);
  if (!error.empty()) {
    const Collective &c = job->collective;
    backend.fail("rank " + std::to_string(c.group.members[c.group.index]) +
                 ": " + describe(c) + ": " + error);
    return false;
  }
  return job->ok;
}

void CommThread::run() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock<std::mutex> lock(mutex);
      wake.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return;
      job = std::move(queue.front());
      queue.pop_front();
    }
    double began = now();
    bool ok = !backend.hasFailed() && backend.run(job->collective);
    double ended = now();
    std::lock_guard<std::mutex> lock(job->mutex);
    job->began = began;
    job->ended = ended;
    job->ok = ok;
    job->finished = true;
    job->done.notify_all();
  }
}

GroupState &LocalBackend::groupState(const Group &group) {
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<GroupState> &state = groups[group.key];
  if (!state) {
    state = std::make_unique<GroupState>();
    state->size = group.size();
    state->posted.assign(group.size(), nullptr);
    state->postedGeneration.assign(group.size(), ~uint64_t(0));
  }
  return *state;
}

std::string LocalBackend::findDisagreement(const GroupState &state,
                                           const Collective &c) {
  const Collective &first = *state.posted[0];
  for (int32_t i = 1; i < state.size; ++i) {
    const Collective &other = *state.posted[i];
    if (other.kind == first.kind && other.count == first.count &&
        other.dtype == first.dtype &&
        (!kindReduces(first.kind) || other.reduction == first.reduction))
      continue;
    std::ostringstream os;
    os << "ranks disagree on collective #" << c.sequence << " of group "
       << c.group.describe() << ": rank " << c.group.members[0] << " calls "
       << describe(first) << ", rank " << c.group.members[i] << " calls "
       << describe(other);
    return os.str();
  }
  return "";
}

bool LocalBackend::run(const Collective &c) {
  GroupState &state = groupState(c.group);
  int32_t j = c.group.index;
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout);
  std::unique_lock<std::mutex> lock(state.mutex);

  // Arrive. A member posting for the next collective while the others still
  // finish this one is impossible: nobody leaves before everyone finished.
  uint64_t generation = state.generation;
  state.posted[j] = &c;
  state.postedGeneration[j] = generation;
  if (++state.arrived == state.size) {
    // The agreement is checked once, by the last to arrive, under the lock:
    // no member can leave (and free what it posted) before it is released,
    // and one that left on an earlier failure left it visible here.
    if (check && !hasFailed())
      state.disagreement = findDisagreement(state, c);
    state.changed.notify_all();
  }
  bool allArrived = state.changed.wait_until(lock, deadline, [&] {
    return hasFailed() || state.arrived == state.size;
  });
  if (hasFailed())
    return false;
  if (!allArrived) {
    std::ostringstream os;
    os << describe(c) << " on group " << c.group.describe()
       << " timed out after " << timeout << " s: rank";
    int missing = 0;
    for (int32_t i = 0; i < state.size; ++i)
      if (state.postedGeneration[i] != generation)
        os << (missing++ ? "," : "") << " " << c.group.members[i];
    os << " did not arrive";
    lock.unlock();
    fail(os.str());
    return false;
  }
  // Nobody changes `posted` until every member has finished, so the
  // computation reads it unlocked (a failure locks every group to wake its
  // waiters).
  std::string disagreement = state.disagreement;
  lock.unlock();
  if (!disagreement.empty()) {
    fail(disagreement);
    return false;
  }
  std::string error = exchange->exchange(state.posted, c);
  if (!error.empty()) {
    fail("rank " + std::to_string(c.group.members[j]) + ": " + describe(c) +
         " on group " + c.group.describe() + ": " + error);
    return false;
  }
  lock.lock();

  // Leave together: the others may still read this rank's input.
  if (++state.finished == state.size) {
    state.arrived = 0;
    state.finished = 0;
    state.disagreement.clear();
    ++state.generation;
    state.changed.notify_all();
    return true;
  }
  deadline = Clock::now() + std::chrono::duration<double>(timeout);
  bool allFinished = state.changed.wait_until(lock, deadline, [&] {
    return hasFailed() || state.generation != generation;
  });
  if (hasFailed() || !allFinished) {
    lock.unlock();
    fail(describe(c) + " on group " + c.group.describe() +
         " timed out while finishing");
    return false;
  }
  return true;
}

} // namespace

std::unique_ptr<Backend>
zero::rt::createLocalBackend(int32_t ranks, double timeout, std::string &error,
                             std::unique_ptr<LocalExchange> exchange,
                             bool check) {
  if (ranks < 1 || ranks > 4096) {
    error = "a local world needs 1 to 4096 ranks, not " + std::to_string(ranks);
    return nullptr;
  }
  if (!exchange)
    exchange = std::make_unique<HostExchange>();
  return std::make_unique<LocalBackend>(ranks, timeout, std::move(exchange),
                                        check);
}
