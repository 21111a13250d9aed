//===- Calibrate.h - measure the cost model on a runtime --------*- C++ -*-===//
//
// The cost model's parameters (zero/Analysis/CostModel.h) as the runtime at
// hand delivers them: small probe programs run on N ranks of a world, and
// each parameter is solved from the probe that isolates it. `zero-run
// --calibrate` prints them as the options of zero-schedule-overlap and
// zero-report; zero-bench-overlap predicts with them.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_EXECUTION_CALIBRATE_H
#define ZERO_EXECUTION_CALIBRATE_H

#include "mlir/IR/MLIRContext.h"
#include "zero/Analysis/CostModel.h"
#include "zero/Execution/Runner.h"

#include <string>
#include <vector>

namespace zero::exec {

/// One probe: what it runs, and the slowest rank's seconds per call of it
/// (best of the repeats).
struct Probe {
  std::string what;
  double seconds = 0;
  /// Bytes each rank sends per call, FLOPs or elements, by probe.
  double amount = 0;
};

struct Calibration {
  CostModelParameters parameters;
  /// latency, bandwidth, matmul, elementwise, reduce, host stream.
  std::vector<Probe> probes;
  /// Runs per probe; each probe's time is the best of them.
  int repeats = 1;
  /// Whether this process ran rank 0 (under mpi, the one to print).
  bool holdsRankZero = false;
  /// The parameters as pass options: "latency-us=... gelements-per-s=...".
  std::string asOptions() const;
  /// The host's figure as offload's option (zero-offload-state):
  /// "host-gbps=...".
  std::string asOffloadOptions() const;
};

/// Runs the probes on a world of `options.backend` with `meshSize` ranks
/// (under mpi, the job's size): an all-reduce of one element (the latency),
/// an all-gather of `gatherBytes` per rank (the bandwidth, after latency),
/// a 256x512x512 linalg.matmul (FLOP rate), an arith.addf of 2^20
/// elements (element rate) and one of 2^25 elements into one of its
/// operands (the host's streaming bandwidth, which a host update moves its
/// bytes at: offload's host-gbps), each `repeats` times. Computation is
/// measured on all ranks at once, as it runs in a training step. Needs 2
/// ranks or more.
llvm::Expected<Calibration> calibrate(mlir::MLIRContext &context,
                                      int64_t meshSize,
                                      rt::LaunchOptions options,
                                      int repeats = 3,
                                      int64_t gatherBytes = 4 << 20);

} // namespace zero::exec

#endif // ZERO_EXECUTION_CALIBRATE_H
