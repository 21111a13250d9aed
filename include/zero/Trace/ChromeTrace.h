//===- ChromeTrace.h - reading the traces zero-run writes --------*- C++
//-*-===//
//
// zero-run --trace writes a Chrome trace: per rank (pid) a compute track
// (tid 0: "compute" spans and the waits between them) and a communication
// track (tid 1: one span per collective). zero-trace-render draws it and
// zero-bench-overlap measures from it; both read it here. LLVM Support only.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_TRACE_CHROMETRACE_H
#define ZERO_TRACE_CHROMETRACE_H

#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace zero::trace {

/// A span of one track of one rank, in seconds on the trace's clock.
struct Span {
  double begin, end;
  std::string name;
};

struct RankTracks {
  /// The process name the trace gives the rank, else "rank <pid>".
  std::string label;
  /// tid 0 and tid 1.
  std::vector<Span> compute, communication;
};

/// Adds the spans of trace file `path` ("-": standard input) to `ranks`, by
/// pid. Returns an error message naming the file, or "".
std::string readChromeTrace(llvm::StringRef path,
                            std::map<int64_t, RankTracks> &ranks);

/// How much communication ran while its rank computed.
struct Overlap {
  /// Communication seconds, summed over the ranks.
  double communication = 0;
  /// The part of it during the same rank's "compute" spans.
  double hidden = 0;
  /// Ranks with any communication (at least 1).
  int ranks = 1;
};
Overlap measureOverlap(const std::map<int64_t, RankTracks> &ranks);

} // namespace zero::trace

#endif // ZERO_TRACE_CHROMETRACE_H
