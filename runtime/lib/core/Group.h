//===- Group.h - groups of ranks on a mesh ----------------------*- C++ -*-===//
//
// Decodes the group descriptor of the C ABI ({mesh_rank, shape..., num_axes,
// axes...}) into the ranks of one group.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_GROUP_H
#define ZERO_RUNTIME_GROUP_H

#include <cstdint>
#include <string>
#include <vector>

namespace zero::rt {

struct Group {
  std::vector<int64_t> meshShape;
  std::vector<int64_t> axes;
  /// World ranks of the group, in group-index order.
  std::vector<int32_t> members;
  /// The calling rank's index in `members`.
  int32_t index = 0;
  /// Identifies the group among all groups of the world: the descriptor and
  /// the coordinates off the group's axes.
  std::string key;

  int32_t size() const { return static_cast<int32_t>(members.size()); }
  /// How a communicator of the whole world splits into this group's
  /// (MPI_Comm_split, ncclCommSplit): the same color on every member (the
  /// world rank at group index 0), and the group index as the key.
  int32_t splitColor() const { return members.front(); }
  int32_t splitKey() const { return index; }
  /// "ranks 0,1,2,3 (mesh [2x4] axes [1])".
  std::string describe() const;
};

/// Decodes `descriptor` for world rank `rank` of a world of `worldSize`.
/// Returns false with `error` set when it is malformed or the mesh does not
/// have `worldSize` ranks.
bool decodeGroup(const int64_t *descriptor, int32_t rank, int32_t worldSize,
                 Group &group, std::string &error);

} // namespace zero::rt

#endif // ZERO_RUNTIME_GROUP_H
