//===- Timeline.h - a rank's trace, and the trace file ----------*- C++ -*-===//
//
// While a world traces, each rank records what it did when: computation,
// starting and waiting for collectives, and the collectives themselves.
// `zero_world_write_trace` writes the ranks' timelines as one Chrome trace.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_TIMELINE_H
#define ZERO_RUNTIME_TIMELINE_H

#include "backends/Backend.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::rt {

/// One interval of a rank's timeline.
struct TraceEvent {
  /// ZERO_TRACK_COMPUTE or ZERO_TRACK_COMMUNICATION.
  int track;
  std::string name;
  double begin;
  double end;
  /// Bytes the rank sends (communication), and the label, if any.
  uint64_t bytes = 0;
  std::string label;
};

/// A rank's timeline (times from now()); touched only by the thread that
/// runs the rank.
class Timeline {
public:
  /// Whether the rank is being traced now (between begin and end).
  bool active() const { return resumed >= 0; }
  /// Starts a traced run at `time`, forgetting the last one.
  void begin(double time);
  /// The rank started a collective at `called`; the call returned at
  /// `returned`. Starting is not computation: it may wait for the other
  /// ranks (the agreement check under mpi) or for a communication thread.
  void started(const std::string &name, double called, double returned);
  /// The rank waited for `name` from `called` to `returned`; the
  /// collective itself moved data from `began` to `finished`.
  void waited(const std::string &name, double called, double returned,
              double began, double finished, uint64_t bytes,
              const std::string &label);
  /// Ends the traced run at `time`. Computation that ran on a device
  /// (`deviceSpans`, its kernels) replaces the host's computation spans.
  void end(double time, std::vector<ComputeSpan> deviceSpans);
  const std::vector<TraceEvent> &events() const { return recorded; }

private:
  /// Ends the current computation span at `until`.
  void computeUntil(double until);

  std::vector<TraceEvent> recorded;
  /// When computation last resumed; negative: not tracing now.
  double resumed = -1;
};

/// A rank's timeline as the trace file names it.
struct RankTimeline {
  int32_t rank;
  const Timeline *timeline;
};

/// Writes `ranks` as a Chrome trace (chrome://tracing, Perfetto) to `path`,
/// times counted from `epoch`: one process per rank, a computation and a
/// communication track each. Returns false when the file cannot be written.
bool writeChromeTrace(const std::string &path,
                      const std::vector<RankTimeline> &ranks, double epoch);

} // namespace zero::rt

#endif // ZERO_RUNTIME_TIMELINE_H
