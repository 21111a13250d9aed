//===- Group.cpp - groups of ranks on a mesh ------------------------------===//

#include "core/Group.h"

#include <sstream>

using namespace zero::rt;

static std::string join(const std::vector<int64_t> &values, const char *sep) {
  std::ostringstream os;
  for (size_t i = 0; i < values.size(); ++i)
    os << (i ? sep : "") << values[i];
  return os.str();
}

std::string Group::describe() const {
  std::ostringstream os;
  os << "ranks ";
  for (size_t i = 0; i < members.size(); ++i)
    os << (i ? "," : "") << members[i];
  os << " (mesh [" << join(meshShape, "x") << "] axes [" << join(axes, ",")
     << "])";
  return os.str();
}

bool zero::rt::decodeGroup(const int64_t *descriptor, int32_t rank,
                           int32_t worldSize, Group &group,
                           std::string &error) {
  if (!descriptor) {
    error = "null group descriptor";
    return false;
  }
  int64_t meshRank = descriptor[0];
  if (meshRank < 1 || meshRank > 16) {
    error = "group descriptor has mesh rank " + std::to_string(meshRank);
    return false;
  }
  group.meshShape.assign(descriptor + 1, descriptor + 1 + meshRank);
  int64_t numAxes = descriptor[1 + meshRank];
  if (numAxes < 1 || numAxes > meshRank) {
    error = "group descriptor names " + std::to_string(numAxes) + " axes";
    return false;
  }
  group.axes.assign(descriptor + 2 + meshRank,
                    descriptor + 2 + meshRank + numAxes);
  int64_t meshSize = 1;
  for (int64_t extent : group.meshShape)
    meshSize *= extent;
  if (meshSize != worldSize) {
    error = "mesh [" + join(group.meshShape, "x") + "] has " +
            std::to_string(meshSize) + " ranks but the world has " +
            std::to_string(worldSize);
    return false;
  }
  std::vector<bool> inGroup(meshRank, false);
  for (int64_t axis : group.axes) {
    if (axis < 0 || axis >= meshRank || inGroup[axis]) {
      error = "group descriptor has bad axes [" + join(group.axes, ",") + "]";
      return false;
    }
    inGroup[axis] = true;
  }

  // Row-major coordinates of `rank`.
  std::vector<int64_t> coords(meshRank);
  for (int64_t d = meshRank - 1, r = rank; d >= 0; --d) {
    coords[d] = r % group.meshShape[d];
    r /= group.meshShape[d];
  }
  auto linear = [&](const std::vector<int64_t> &c) {
    int64_t l = 0;
    for (int64_t d = 0; d < meshRank; ++d)
      l = l * group.meshShape[d] + c[d];
    return static_cast<int32_t>(l);
  };

  int64_t groupSize = 1;
  for (int64_t axis : group.axes)
    groupSize *= group.meshShape[axis];
  group.members.clear();
  group.index = 0;
  for (int64_t i = 0; i < groupSize; ++i) {
    std::vector<int64_t> c = coords;
    for (int64_t k = numAxes - 1, rest = i; k >= 0; --k) {
      c[group.axes[k]] = rest % group.meshShape[group.axes[k]];
      rest /= group.meshShape[group.axes[k]];
    }
    group.members.push_back(linear(c));
  }
  int64_t index = 0;
  for (int64_t axis : group.axes)
    index = index * group.meshShape[axis] + coords[axis];
  group.index = static_cast<int32_t>(index);

  std::ostringstream key;
  key << join(group.meshShape, "x") << "/" << join(group.axes, ",") << "/";
  for (int64_t d = 0; d < meshRank; ++d)
    key << (inGroup[d] ? -1 : coords[d]) << ",";
  group.key = key.str();
  return true;
}
