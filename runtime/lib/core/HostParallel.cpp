//===- HostParallel.cpp - a loop of compiled code across the host's cores -===//
//
// zero_rt_parallel_for: an offloaded update's host loops (zero-offload-to-host)
// split across the host's cores. One pool of worker threads serves the
// process; each call is cut into as many chunks as the calling rank's share
// of the cores, and the caller runs chunks too.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "core/FatalSignals.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace {

/// One call's iterations, in chunks taken by whoever is free.
struct Job {
  void (*task)(void *, int64_t, int64_t);
  void *context;
  /// The chunks cover iterations [first, first + iterations).
  int64_t first;
  int64_t iterations;
  int64_t chunks;
  /// The caller's rank, bound while a worker runs a chunk: a check that
  /// fails in the loop fails that rank's world.
  zero_rank *rank;
  int64_t next = 0; // the next chunk to take (under the pool's lock)
  int64_t done = 0; // chunks finished (under the pool's lock)
};

class Pool {
public:
  /// Runs `job` on the calling thread and the free workers; returns once
  /// every chunk is done.
  void run(Job &job) {
    std::unique_lock<std::mutex> lock(mutex);
    startWorkers();
    jobs.push_back(&job);
    work.notify_all();
    while (job.next < job.chunks)
      runChunk(job, lock);
    finished.wait(lock, [&] { return job.done == job.chunks; });
  }

  /// The process's pool.
  static Pool &get() {
    static Pool *pool = new Pool; // lives until exit: workers never join
    return *pool;
  }

private:
  /// Runs the next chunk of `job`, unlocked while it runs.
  void runChunk(Job &job, std::unique_lock<std::mutex> &lock) {
    int64_t chunk = job.next++;
    if (job.next == job.chunks)
      jobs.erase(std::find(jobs.begin(), jobs.end(), &job));
    int64_t begin = job.first + job.iterations * chunk / job.chunks;
    int64_t end = job.first + job.iterations * (chunk + 1) / job.chunks;
    lock.unlock();
    zero_rank *own = zero_bound_rank();
    zero_rank_bind(job.rank);
    if (begin < end)
      job.task(job.context, begin, end);
    zero_rank_bind(own);
    lock.lock();
    if (++job.done == job.chunks)
      finished.notify_all();
  }

  void startWorkers() {
    if (started)
      return;
    started = true;
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    for (unsigned i = 1; i < cores; ++i)
      std::thread([this] { workerLoop(); }).detach();
  }

  void workerLoop() {
    zero::rt::FaultStack faultStack; // a fault in a task is reported too
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      work.wait(lock, [&] { return !jobs.empty(); });
      runChunk(*jobs.front(), lock);
    }
  }

  std::mutex mutex;
  std::condition_variable work, finished;
  std::deque<Job *> jobs;
  bool started = false;
};

/// How many chunks a call of the bound rank is cut into: ZERO_HOST_THREADS
/// when set, else the rank's share of the host's cores (the cores over the
/// ranks of this process, or over LOCAL_WORLD_SIZE or
/// OMPI_COMM_WORLD_LOCAL_SIZE when a launcher runs one rank a process).
int64_t threadsOfRank() {
  if (const char *given = std::getenv("ZERO_HOST_THREADS"))
    return std::max<int64_t>(1, std::atoll(given));
  int64_t cores = std::max(1u, std::thread::hardware_concurrency());
  int64_t ranks = zero::rt::ranksInProcess();
  for (const char *name : {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE"})
    if (const char *local = std::getenv(name); local && ranks == 1)
      ranks = std::max<int64_t>(1, std::atoll(local));
  return std::max<int64_t>(1, cores / ranks);
}

} // namespace

void zero::rt::parallelFor(void (*task)(void *, int64_t, int64_t),
                           void *context, int64_t begin, int64_t end,
                           int64_t grain) {
  int64_t iterations = end - begin;
  if (iterations <= 0)
    return;
  // Chunks of at least 4096 elements (ZERO_HOST_CHUNK): a smaller loop is
  // not worth waking a thread for.
  int64_t least = 4096;
  if (const char *given = std::getenv("ZERO_HOST_CHUNK"))
    least = std::max<int64_t>(1, std::atoll(given));
  least = std::max<int64_t>(1, least / std::max<int64_t>(1, grain));
  int64_t chunks =
      std::min(threadsOfRank(), std::max<int64_t>(1, iterations / least));
  if (chunks == 1) {
    task(context, begin, end);
    return;
  }
  Job job{task, context, begin, iterations, chunks, zero_bound_rank()};
  Pool::get().run(job);
}

extern "C" void zero_rt_parallel_for(void (*task)(void *, int64_t, int64_t),
                                     void *context, int64_t iterations,
                                     int64_t grain) {
  zero::rt::parallelFor(task, context, 0, iterations, grain);
}
