//===- HostQueue.cpp - a rank's host work beside its stream ---------------===//
//
// An offloaded update's host work (its loops and its copies across the
// link) runs on a thread of its own, in the order the rank queued it, while
// the rank's thread goes on launching the rest of the step: the host's
// update of one bucket overlaps the device's backward pass over the next.
// zero-offload-to-host decides what is queued and where the rank waits for
// it (zero_rt_host_queue_join); the GPU's part (a fence on the rank's
// stream, copies on the queue's own stream) is in backends/Cuda.cpp.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "zero/runtime/zero_runtime.h"

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace {

/// The calling rank thread's queue and the thread that runs it, started on
/// the first work and stopped when the rank thread ends.
class HostQueue {
public:
  ~HostQueue() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    if (worker.joinable())
      worker.join();
  }

  void push(std::function<void()> work) {
    std::lock_guard<std::mutex> lock(mutex);
    if (!worker.joinable())
      worker = std::thread([this] { run(); });
    items.push_back({std::move(work), zero_bound_rank()});
    changed.notify_all();
  }

  /// Returns once every item queued so far has run.
  void join() {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] { return items.empty() && !running; });
  }

private:
  struct Item {
    std::function<void()> work;
    /// The queuing rank, bound while its work runs: a failure there fails
    /// that rank's world, as it would on the rank's own thread.
    zero_rank *rank;
  };

  void run() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !items.empty(); });
      if (items.empty())
        return;
      Item item = std::move(items.front());
      items.pop_front();
      running = true;
      lock.unlock();
      zero_rank_bind(item.rank);
      item.work();
      zero_rank_bind(nullptr);
      lock.lock();
      running = false;
      changed.notify_all();
    }
  }

  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Item> items;
  bool running = false, stopping = false;
  std::thread worker;
};

HostQueue &queueOfThread() {
  static thread_local HostQueue queue;
  return queue;
}

} // namespace

void zero::rt::enqueueHostWork(std::function<void()> work) {
  queueOfThread().push(std::move(work));
}

extern "C" void zero_rt_host_queue_for(void (*task)(void *, int64_t, int64_t),
                                       void *context, int64_t contextBytes,
                                       int64_t iterations) {
  // The context is the caller's stack slot, reused once this returns.
  std::vector<char> copy(
      static_cast<size_t>(std::max<int64_t>(0, contextBytes)));
  if (!copy.empty())
    std::memcpy(copy.data(), context, copy.size());
  zero::rt::enqueueHostWork(
      [task, copy = std::move(copy), iterations]() mutable {
        zero_rt_parallel_for(task, copy.data(), iterations);
      });
}

extern "C" void zero_rt_host_queue_copy(void *to, const void *from,
                                        int64_t bytes) {
  zero::rt::enqueueHostWork([to, from, bytes] {
    if (bytes > 0)
      std::memcpy(to, from, static_cast<size_t>(bytes));
  });
}

extern "C" void zero_rt_host_queue_join(void) { queueOfThread().join(); }
