//===- Agreement.cpp - do all ranks call the same collective? -------------===//

#include "net/Agreement.h"

#include <functional>
#include <sstream>

using namespace zero::rt;

Fingerprint zero::rt::fingerprintOf(const Collective &c,
                                    uint64_t worldSequence) {
  // The group's mesh and axes, without the coordinates that make each
  // group of a split distinct: every rank of the world names the same.
  std::string shape = c.group.key.substr(0, c.group.key.rfind('/'));
  return {c.kind,
          c.count,
          c.dtype,
          kindReduces(c.kind) ? c.reduction : -1,
          static_cast<int64_t>(std::hash<std::string>()(shape) >> 1),
          static_cast<int64_t>(worldSequence)};
}

std::string zero::rt::findDisagreement(const Collective &c, int32_t me,
                                       const std::vector<Fingerprint> &all) {
  const Fingerprint &mine = all[me];
  for (size_t r = 0; r < all.size(); ++r) {
    const Fingerprint &other = all[r];
    if (other == mine)
      continue;
    Collective theirs = c;
    theirs.kind = static_cast<zero_collective_kind>(other[0]);
    theirs.count = other[1];
    theirs.dtype = static_cast<zero_dtype>(other[2]);
    theirs.reduction = static_cast<zero_reduction>(other[3] < 0 ? 0 : other[3]);
    std::ostringstream os;
    os << "ranks disagree on collective #" << other[5] << ": rank " << me
       << " calls " << describe(c) << " on group " << c.group.describe()
       << ", rank " << r << " calls " << describe(theirs)
       << (other[4] != mine[4] ? " on a different group" : "");
    return os.str();
  }
  return "";
}
