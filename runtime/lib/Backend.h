//===- Backend.h - the interface every communicator implements --*- C++ -*-===//
//
// A backend runs collectives for the ranks of one world. The runtime's C ABI
// (Runtime.cpp) owns counters, the thread binding and argument checks; a
// backend only moves and reduces data, and detects ranks that disagree or do
// not arrive. The shape of the interface (start returns a handle, wait on it)
// is the one an NCCL backend needs: a start enqueues on a communication
// stream, a wait syncs an event.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_BACKEND_H
#define ZERO_RUNTIME_BACKEND_H

#include "Group.h"
#include "zero/runtime/zero_runtime.h"

#include <cstdint>
#include <memory>
#include <string>

namespace zero::rt {

/// One collective as a rank issues it.
struct Collective {
  zero_collective_kind kind;
  const void *in;
  void *out;
  /// Elements of `in`.
  int64_t count;
  zero_dtype dtype;
  zero_reduction reduction;
  Group group;
  /// This rank's sequence number of collectives on `group` (from 0).
  uint64_t sequence;
};

/// Describes a collective for messages: "all_reduce #3 of 1000 f32 (sum)".
std::string describe(const Collective &c);
const char *kindName(zero_collective_kind kind);
const char *dtypeName(zero_dtype dtype);
size_t dtypeSize(zero_dtype dtype);

/// Seconds on the steady clock, the time base of traces.
double now();

/// A started collective.
class Pending {
public:
  virtual ~Pending() = default;
  /// Blocks until done; false when the world failed.
  virtual bool wait() = 0;
  /// When the collective began and finished moving data (now()), as far as
  /// the backend knows; valid after wait(), negative when unknown.
  double began = -1;
  double finished = -1;
};

class Backend {
public:
  virtual ~Backend() = default;
  virtual int32_t worldSize() const = 0;
  virtual int32_t numLocalRanks() const = 0;
  /// World rank of the local rank `local`.
  virtual int32_t worldRank(int32_t local) const = 0;
  /// Starts `c` for local rank `local`. Never null: a collective that cannot
  /// start fails the world and returns a pending that reports it.
  virtual std::unique_ptr<Pending> start(int32_t local,
                                         const Collective &c) = 0;
  /// Fails the world with `message` unless it failed already.
  virtual void fail(const std::string &message) = 0;
  /// The first failure, or empty.
  virtual std::string error() const = 0;
};

std::unique_ptr<Backend> createLocalBackend(int32_t ranks, double timeout,
                                            std::string &error);
/// Null with `error` set when the runtime was built without MPI.
std::unique_ptr<Backend> createMpiBackend(double timeout, bool check,
                                          std::string &error);

} // namespace zero::rt

#endif // ZERO_RUNTIME_BACKEND_H
