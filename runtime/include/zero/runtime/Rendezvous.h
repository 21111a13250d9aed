//===- Rendezvous.h - ranks of a world find each other over TCP --*- C++
//-*-===//
//
// torchrun-style start: every process knows its RANK and the WORLD_SIZE, and
// reaches rank 0 at MASTER_ADDR:MASTER_PORT. Rank 0 listens there; the
// others connect (retrying until rank 0 is up), say who they are, and stay
// connected. Over the star, rank 0 broadcasts a blob (the NCCL unique id)
// and ranks exchange small messages (the fingerprints of the collective
// check). Every wait has a deadline; every failure is a message that names
// the ranks and the address, never a hang.
//
// Plain POSIX sockets: the runtime builds on machines with no package
// registry, and this needs a few hundred bytes per rank.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_RENDEZVOUS_H
#define ZERO_RUNTIME_RENDEZVOUS_H

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace zero::rt {

struct RendezvousOptions {
  int32_t rank = 0;
  int32_t worldSize = 1;
  /// The process's GPU among its node's (torchrun's LOCAL_RANK).
  int32_t localRank = 0;
  std::string address = "127.0.0.1";
  int port = 29500;
  /// How long a rank waits for the others, at every step.
  double timeoutSeconds = 60;

  /// From torchrun's environment: RANK, WORLD_SIZE, LOCAL_RANK (default
  /// RANK), MASTER_ADDR, MASTER_PORT. Returns an error message naming the
  /// variable, or "".
  static std::string fromEnvironment(RendezvousOptions &options);
};

class Rendezvous {
public:
  /// Meets the other ranks. On failure returns null and sets `error`.
  static std::unique_ptr<Rendezvous> connect(const RendezvousOptions &options,
                                             std::string &error);
  ~Rendezvous();

  /// Rank 0's `blob` to every rank (in place). Returns an error message or
  /// "".
  std::string broadcast(std::string &blob);
  /// Every rank's `mine`, in rank order, to every rank. Returns an error
  /// message or "".
  std::string allGather(const std::string &mine, std::vector<std::string> &all);

  const RendezvousOptions &getOptions() const { return options; }

private:
  using Clock = std::chrono::steady_clock;

  explicit Rendezvous(RendezvousOptions options) : options(options) {}
  std::string serve();
  std::string join();
  /// Rank 0: ends the joins so far with `reason` (they fail with it).
  void tellJoined(const std::string &reason);
  /// When a step that starts now must end.
  Clock::time_point startDeadline() const;
  /// "MASTER_ADDR:MASTER_PORT" and "T s", for messages.
  std::string where() const;
  std::string waited() const;

  RendezvousOptions options;
  /// Rank 0: the socket of rank r at [r] (-1 at 0). Others: rank 0's at [0].
  std::vector<int> peers;
  int listener = -1;
};

} // namespace zero::rt

#endif // ZERO_RUNTIME_RENDEZVOUS_H
