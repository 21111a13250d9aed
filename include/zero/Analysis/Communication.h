//===- Communication.h - bytes moved by collectives -------------*- C++ -*-===//
//
// How many bytes a collective makes each rank send, with the ring algorithm's
// factors. The report, the scheduler's cost model and the benchmarks all count
// traffic through these functions, so their figures agree.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_ANALYSIS_COMMUNICATION_H
#define ZERO_ANALYSIS_COMMUNICATION_H

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include <optional>

namespace zero {

/// Bytes of a statically shaped tensor, or none for a dynamic shape or an
/// element type of no fixed byte size.
std::optional<int64_t> getTensorBytes(mlir::RankedTensorType type);

/// Bytes one rank sends for `op` over groups of `groupSize` ranks:
/// all-reduce 2(N-1)/N B, reduce-scatter (N-1)/N B_in, all-gather
/// (N-1)/N B_out, shard-slice 0. None when a tensor's size is unknown.
std::optional<int64_t> getBytesSentPerRank(CollectiveOpInterface op,
                                           int64_t groupSize);

/// How many times `op` runs per call of its function: the product of the
/// static trip counts of the loops around it, or none when one is unknown.
std::optional<int64_t> getExecutionCount(mlir::Operation *op);

} // namespace zero

#endif // ZERO_ANALYSIS_COMMUNICATION_H
