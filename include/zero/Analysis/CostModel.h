//===- CostModel.h - time of computation and communication ------*- C++ -*-===//
//
// The scheduler's estimate of a program's time: a collective costs a latency
// plus the bytes a rank sends (ring algorithm, Communication.h) over a
// bandwidth; computation costs its floating-point operations over a rate
// (contractions: matmuls, reductions) or its elements over a rate (elementwise
// ops and copies). The parameters are the options of zero-schedule-overlap
// and zero-report, and `zero-run --calibrate` measures them on a runtime.
//
// simulate() plays a function on one rank: computation runs in program order
// on one stream; collectives run one at a time, in issue order, on a
// communication stream; a synchronous collective, or the await of an async
// one, stalls computation until the collective is done. The stall is the
// exposed communication.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_COSTMODEL_H
#define ZERO_ANALYSIS_COSTMODEL_H

#include "mlir/Interfaces/FunctionInterfaces.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include <algorithm>
#include <optional>

namespace zero {

struct CostModelParameters {
  /// Seconds every collective pays before its first byte moves.
  double latency = 20e-6;
  /// Bytes per second one rank sends.
  double bandwidth = 10e9;
  /// Bytes per second one rank sends in a collective that reduces
  /// (all-reduce, reduce-scatter), where it differs: an MPI's reduce-scatter
  /// may run far below its all-gather. 0: `bandwidth`.
  double reduceBandwidth = 0;
  /// Floating-point operations per second of contractions (matmul).
  double flopRate = 50e9;
  /// Elements per second of elementwise ops and copies.
  double elementRate = 2e9;
  /// Offload: bytes per second of host memory one rank's host update moves.
  double hostBandwidth = 20e9;
  /// Offload: bytes per second of one copy between pinned host memory and
  /// the device (PCIe Gen5 x16 carries about 50 of its 63 GB/s).
  double linkBandwidth = 50e9;
  /// Offload: seconds each chunk of a pipelined host update costs beside
  /// its copies and its loop (a wake of the host's threads, an event's
  /// wait).
  double hostChunkOverhead = 180e-6;
};

/// The parameters that the passes' cost-model options give (latency-us,
/// bandwidth-gbps, gflops, gelements-per-s, reduce-bandwidth-gbps: 0 for
/// bandwidth-gbps), or an error on `op` that names `pass` when a rate is
/// not positive or the latency is negative.
mlir::FailureOr<CostModelParameters>
getCostModelParameters(mlir::Operation *op, llvm::StringRef pass,
                       double latencyMicroseconds, double bandwidthGBps,
                       double gflops, double gelementsPerSecond,
                       double reduceBandwidthGBps = 0);

/// Sets offload's figures (host-gbps, link-gbps, chunk-overhead-us:
/// offloadCostOptions in PassOptions.td) in `parameters`, or fails with an
/// error on `op` that names `pass` when a bandwidth is not positive or the
/// overhead is negative.
mlir::LogicalResult setOffloadParameters(CostModelParameters &parameters,
                                         mlir::Operation *op,
                                         llvm::StringRef pass, double hostGBps,
                                         double linkGBps,
                                         double chunkOverheadMicroseconds);

/// The bytes of an update that the host queue runs: copied down to the
/// host before its loop, loaded and stored by its loop, copied up after.
struct HostUpdateBytes {
  int64_t in = 0, host = 0, out = 0;
};

/// One rank's host queue as the runtime runs it on a GPU
/// (zero_rt_host_queue_update): when the rank queues an update, it starts
/// every chunk's copies down on its copy stream, one after another; the
/// queue's thread runs the updates in order, each chunk's loop (and the
/// chunk's overhead) once that chunk is down, then starts its copies up
/// (the link's other direction), and waits for the last before the next
/// update.
class HostQueueModel {
public:
  explicit HostQueueModel(const CostModelParameters &parameters)
      : parameters(parameters) {}

  /// Queues `update` in `chunks` chunks at `ready` seconds into the step;
  /// returns when the queue is done with it.
  double queue(double ready, const HostUpdateBytes &update, int64_t chunks);

private:
  const CostModelParameters &parameters;
  /// When the rank's copy stream and the queue's thread are free.
  double copyStream = 0, thread = 0;
};

/// The chunks that make `update` of `iterations` shortest on an idle
/// queue (HostQueueModel): n chunks take the first chunk's copies down,
/// loop and copies up, then about the slowest of the three for each
/// other chunk, and the chunk's overhead each; the fewest among equals.
/// At most 256 and `iterations`.
int64_t chooseHostChunks(const CostModelParameters &parameters,
                         const HostUpdateBytes &update, int64_t iterations);

class CostModel {
public:
  explicit CostModel(CostModelParameters parameters) : parameters(parameters) {}

  const CostModelParameters &getParameters() const { return parameters; }

  /// Seconds `op` keeps the communication stream busy; 0 for collectives
  /// that do not communicate or whose group is one rank.
  double communicationSeconds(CollectiveOpInterface op) const;

  /// Seconds of computation `op` itself costs (not its regions' ops).
  double computeSeconds(mlir::Operation *op) const;

  /// Seconds of computation `op` costs with the ops of its regions: a
  /// loop's body once per iteration (once when the trip count is unknown),
  /// every region of other ops once. Collectives cost nothing here.
  double computeSecondsWithin(mlir::Operation *op) const;

private:
  CostModelParameters parameters;
};

/// One rank's time for one call of a function, as simulate() plays it.
struct TimeEstimate {
  /// From the first op to the return.
  double stepSeconds = 0;
  /// Computation alone.
  double computeSeconds = 0;
  /// Collectives alone, end to end on the communication stream.
  double communicationSeconds = 0;
  /// Time computation waits for communication.
  double exposedSeconds = 0;

  /// The share of communication time hidden behind computation.
  /// The share of communication that computation hides; none when there is
  /// no communication (nothing hidden, nothing exposed).
  std::optional<double> hiddenShare() const {
    if (communicationSeconds <= 0)
      return std::nullopt;
    // Clamped: rounding may leave the exposed time a hair above the total.
    return std::clamp(1 - exposedSeconds / communicationSeconds, 0.0, 1.0);
  }
};

/// Plays `function`'s body. Loops with a static trip count run their body
/// twice in the simulation (the second time shows the steady state, with
/// any communication still in flight from the first) and count the second
/// for the remaining iterations; other loops count once. Of an scf.if, the
/// costlier branch counts. With `finishedAt`, it also records for each op of
/// the function's body when computation has passed it (a collective: when
/// it completed, if computation waited for it).
TimeEstimate
simulate(mlir::FunctionOpInterface function, const CostModel &model,
         llvm::DenseMap<mlir::Operation *, double> *finishedAt = nullptr);

} // namespace zero

#endif // ZERO_ANALYSIS_COSTMODEL_H
