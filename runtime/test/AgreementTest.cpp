//===- AgreementTest.cpp - groups, communicator splits, agreement ---------===//
//
// What a backend that talks to other processes (mpi, nccl) needs besides
// moving data, tested without them: which ranks form each group of a mesh
// and how a world communicator splits into them, and the check that every
// rank calls the same collective.
//
//===----------------------------------------------------------------------===//

#include "net/Agreement.h"
#include "core/Group.h"

#include "gtest/gtest.h"

#include <map>
#include <set>

using namespace zero::rt;

namespace {

/// The group of world rank `rank` on a mesh of `shape` over `axes`.
Group groupOf(std::vector<int64_t> shape, std::vector<int64_t> axes,
              int32_t rank) {
  std::vector<int64_t> descriptor = {0};
  for (int64_t d : shape)
    descriptor.push_back(d);
  descriptor[0] = static_cast<int64_t>(shape.size());
  descriptor.push_back(static_cast<int64_t>(axes.size()));
  for (int64_t a : axes)
    descriptor.push_back(a);
  int32_t world = 1;
  for (int64_t d : shape)
    world *= static_cast<int32_t>(d);
  Group group;
  std::string error;
  EXPECT_TRUE(decodeGroup(descriptor.data(), rank, world, group, error))
      << error;
  return group;
}

// A 2x4 mesh (2 nodes of 4 GPUs): sharding over the 4 inside a node, the
// all-reduce over the 2 across nodes (hybrid sharding). Each split has one
// color per group, the same on all its members, and keys 0..n-1.
TEST(Groups, HybridMeshSplitsIntoNodesAndAcrossThem) {
  std::map<int32_t, std::vector<int32_t>> inNode, acrossNodes;
  for (int32_t rank = 0; rank < 8; ++rank) {
    Group node = groupOf({2, 4}, {1}, rank);
    Group across = groupOf({2, 4}, {0}, rank);
    EXPECT_EQ(node.splitKey(), rank % 4);
    EXPECT_EQ(across.splitKey(), rank / 4);
    inNode[node.splitColor()].push_back(rank);
    acrossNodes[across.splitColor()].push_back(rank);
    EXPECT_EQ(node.members[node.splitKey()], rank);
  }
  EXPECT_EQ(inNode, (std::map<int32_t, std::vector<int32_t>>{
                        {0, {0, 1, 2, 3}}, {4, {4, 5, 6, 7}}}));
  EXPECT_EQ(acrossNodes,
            (std::map<int32_t, std::vector<int32_t>>{
                {0, {0, 4}}, {1, {1, 5}}, {2, {2, 6}}, {3, {3, 7}}}));
  EXPECT_EQ(groupOf({2, 4}, {0, 1}, 6).members,
            (std::vector<int32_t>{0, 1, 2, 3, 4, 5, 6, 7}));
}

Collective allReduce(int32_t rank, int64_t count) {
  Collective c{};
  c.kind = ZERO_ALL_REDUCE;
  c.count = count;
  c.dtype = ZERO_F32;
  c.reduction = ZERO_SUM;
  c.group = groupOf({4}, {0}, rank);
  c.sequence = 3;
  return c;
}

TEST(Agreement, EqualFingerprintsAgree) {
  std::vector<Fingerprint> all;
  for (int32_t r = 0; r < 4; ++r)
    all.push_back(fingerprintOf(allReduce(r, 1000), 7));
  EXPECT_EQ(findDisagreement(allReduce(2, 1000), 2, all), "");
}

TEST(Agreement, TheFirstRankThatDiffersIsNamed) {
  std::vector<Fingerprint> all;
  for (int32_t r = 0; r < 4; ++r)
    all.push_back(fingerprintOf(allReduce(r, r == 3 ? 500 : 1000), 7));
  EXPECT_EQ(findDisagreement(allReduce(0, 1000), 0, all),
            "ranks disagree on collective #7: rank 0 calls all_reduce #3 of "
            "1000 f32 (sum) on group ranks 0,1,2,3 (mesh [4] axes [0]), "
            "rank 3 calls all_reduce #3 of 500 f32 (sum)");
}

TEST(Agreement, AnotherKindOrGroupIsNamed) {
  Collective gather = allReduce(1, 1000);
  gather.kind = ZERO_ALL_GATHER;
  gather.group = groupOf({2, 2}, {1}, 1);
  std::vector<Fingerprint> all = {fingerprintOf(allReduce(0, 1000), 2),
                                  fingerprintOf(gather, 2)};
  std::string message = findDisagreement(allReduce(0, 1000), 0, all);
  EXPECT_NE(message.find("rank 1 calls all_gather #3 of 1000 f32 on a "
                         "different group"),
            std::string::npos)
      << message;
}

} // namespace
