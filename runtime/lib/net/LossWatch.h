//===- LossWatch.h - survivors name a rank whose process vanished -*- C++
//-*-===//
//
// A process killed (by the OOM killer, a node failure, kill -9) or crashed
// outside zero's runtime says nothing, and under mpirun the launcher then
// ends the others with SIGTERM: no survivor would say which rank was lost.
// The watch connects each rank to its neighbours on a ring of TCP
// connections. The kernel closes a dead process's connections before its
// launcher learns of the death, so a neighbour sees the close first; it
// passes "lost K" on around the ring, and each rank names rank K and ends.
//
// A rank that ends in order says so first ("bye" at the end of a run,
// "failed K" when it fails with its own message, "ended" on SIGTERM), so that
// its closing connections are not taken for a loss.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_LIB_LOSSWATCH_H
#define ZERO_RUNTIME_LIB_LOSSWATCH_H

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace zero::rt {

class LossWatch {
public:
  /// Every rank's `mine`, in rank order (a collective of the whole job).
  using AllGather =
      std::function<std::vector<std::string>(const std::string &mine)>;

  /// Starts the watch of rank `rank` of `size` (a collective: every rank
  /// calls it). Null for a world of one rank, or on failure with `error`
  /// set; connecting waits at most `timeoutSeconds`.
  static std::unique_ptr<LossWatch> start(int32_t rank, int32_t size,
                                          const AllGather &allGather,
                                          double timeoutSeconds,
                                          std::string &error);
  /// Says "bye" to the neighbours and stops watching.
  ~LossWatch();

  /// This rank fails with a message of its own: the others stay quiet.
  void sayFailed();

private:
  struct Side {
    int fd = -1;
    int32_t rank = -1;
    /// The peer said it ends: its connection's close is no loss.
    bool closing = false;
  };

  LossWatch(int32_t rank) : rank(rank) {}
  void run();
  /// Handles what arrived on `side`; ends the process on a loss.
  void receive(Side &side);
  [[noreturn]] void lost(int32_t lostRank, const Side *from);
  [[noreturn]] void terminated();
  /// `frame` to each open side but `except`.
  void tell(const std::string &frame, const Side *except = nullptr);

  int32_t rank;
  /// [0] the previous rank's connection, [1] the next's.
  Side sides[2];
  /// The watching thread wakes on a byte here: 's' stop, 't' SIGTERM.
  int wakeRead = -1, wakeWrite = -1;
  std::mutex sendMutex;
  std::thread thread;
};

} // namespace zero::rt

#endif // ZERO_RUNTIME_LIB_LOSSWATCH_H
