//===- Agreement.h - do all ranks call the same collective? -----*- C++ -*-===//
//
// Before a collective moves data, every rank of the world can exchange a
// fingerprint of what it is about to call (kind, count, dtype, reduction,
// group, sequence number) and compare: a disagreement is then a message that
// names the collective and the first rank that differs, not a hang or a
// garbled result. The mpi backend exchanges fingerprints with an allgather
// before every collective; an NCCL world can over its rendezvous (the
// optional check, like TORCH_DISTRIBUTED_DEBUG=DETAIL).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_AGREEMENT_H
#define ZERO_RUNTIME_AGREEMENT_H

#include "backends/Backend.h"

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace zero::rt {

/// What a rank says about its next collective: kind, count, dtype,
/// reduction (-1 for a gather), a hash of its group's mesh and axes, and the
/// rank's `sequence` number of collectives in the world.
using Fingerprint = std::array<int64_t, 6>;

Fingerprint fingerprintOf(const Collective &c, uint64_t worldSequence);

/// The message for the first rank whose fingerprint in `all` (by world rank)
/// differs from rank `me`'s, who calls `c`; "" when all agree.
std::string findDisagreement(const Collective &c, int32_t me,
                             const std::vector<Fingerprint> &all);

} // namespace zero::rt

#endif // ZERO_RUNTIME_AGREEMENT_H
