//===- CheckpointTest.cpp - sharded checkpoints and resharding
//-------------===//

#include "zero/runtime/Checkpoint.h"
#include "zero/runtime/Launcher.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace zero::rt;

namespace {

/// A fresh directory under the test's temporary directory.
std::string freshDir(const std::string &name) {
  std::string dir = testing::TempDir() + "zero-checkpoint-" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

/// Value `argument` of shape `shape`, cut in `shardElements` parts held by
/// the ranks as `groupIndex` says (nullopt: whole).
CheckpointValue makeValue(size_t argument, const std::string &dtype,
                          std::vector<int64_t> shape,
                          std::optional<int64_t> shardElements,
                          std::vector<int64_t> groupIndex = {}) {
  CheckpointValue value{argument, "arg" + std::to_string(argument), dtype,
                        shape, std::nullopt};
  if (shardElements)
    value.shard = ShardLayout{shape, *shardElements, std::move(groupIndex)};
  return value;
}

/// Whole values with distinct elements.
Array makeWhole(const CheckpointValue &value, uint64_t seed) {
  Array whole{value.dtype, value.shape, {}};
  whole.bytes.resize(whole.getNumElements() * getElementBytes(value.dtype));
  fillUniform(whole, seed, unsigned(value.argument), -1, -1, 1);
  return whole;
}

/// Saves `wholes` cut as `manifest` says, as a launch would.
void save(const std::string &dir, const CheckpointManifest &manifest,
          const std::vector<Array> &wholes) {
  std::string stepDir = dir + "/" + checkpointStepName(manifest.steps);
  for (int32_t rank = 0; rank < manifest.worldSize; ++rank) {
    std::vector<Array> parts;
    for (size_t i = 0; i < manifest.values.size(); ++i) {
      const auto &shard = manifest.values[i].shard;
      parts.push_back(shard ? takeShard(wholes[i], shard->shardElements,
                                        shard->groupIndex[rank])
                            : wholes[i]);
    }
    ASSERT_EQ(writeRankCheckpoint(stepDir, rank, manifest.values, parts), "");
  }
  ASSERT_EQ(writeCheckpointManifest(dir, manifest), "");
}

/// A 2x3 mesh sharded over its second axis: ranks 0-2 and 3-5 hold the
/// same three parts. An uneven bf16 value (10 elements in parts of 4), an
/// f64 matrix, and an i32 value held whole.
CheckpointManifest meshManifest() {
  std::vector<int64_t> axis1 = {0, 1, 2, 0, 1, 2};
  return {"step",
          6,
          7,
          {makeValue(0, "bf16", {10}, 4, axis1),
           makeValue(1, "f64", {3, 5}, 5, axis1),
           makeValue(3, "i32", {4}, std::nullopt)}};
}

TEST(CheckpointTest, ResumesFromWhatWasSaved) {
  std::string dir = freshDir("resume");
  CheckpointManifest manifest = meshManifest();
  std::vector<Array> wholes;
  for (const CheckpointValue &value : manifest.values)
    wholes.push_back(makeWhole(value, 5));
  save(dir, manifest, wholes);

  CheckpointManifest loaded;
  std::string stepDir;
  ASSERT_EQ(readCheckpointManifest(dir, loaded, stepDir), "");
  EXPECT_EQ(stepDir, dir + "/step-7");
  EXPECT_EQ(loaded.steps, 7);
  EXPECT_EQ(checkCheckpoint(loaded, manifest.values, 6), "");
  std::vector<Array> rank4;
  ASSERT_EQ(readRankCheckpoint(stepDir, 4, loaded, rank4), "");
  ASSERT_EQ(rank4.size(), 3u);
  // Rank 4 holds part 1: elements 4..7 of the bf16 value.
  EXPECT_EQ(rank4[0].bytes, takeShard(wholes[0], 4, 1).bytes);
  EXPECT_EQ(rank4[2].bytes, wholes[2].bytes);
}

TEST(CheckpointTest, ReshardRoundTripIsExact) {
  std::string dir = freshDir("roundtrip");
  CheckpointManifest manifest = meshManifest();
  std::vector<Array> wholes;
  for (const CheckpointValue &value : manifest.values)
    wholes.push_back(makeWhole(value, 9));
  save(dir + "/six", manifest, wholes);

  // 6 (2x3) -> 4 -> 6 (2x3), and the whole values from each.
  CheckpointManifest six,
      four{manifest.entry, 4, manifest.steps, cutForWorld(manifest.values, 4)};
  std::string sixDir, fourDir;
  ASSERT_EQ(readCheckpointManifest(dir + "/six", six, sixDir), "");
  int64_t largest = 0;
  ASSERT_EQ(reshardCheckpoint(sixDir, six, dir + "/four", four, largest), "");
  EXPECT_EQ(largest, 15 * 8);
  ASSERT_EQ(readCheckpointManifest(dir + "/four", four, fourDir), "");
  EXPECT_EQ(four.values[0].shard->shardElements, 3);
  EXPECT_FALSE(four.values[2].shard);
  ASSERT_EQ(reshardCheckpoint(fourDir, four, dir + "/back", manifest, largest),
            "");
  for (int32_t rank = 0; rank < 6; ++rank) {
    std::vector<Array> saved, back;
    ASSERT_EQ(readRankCheckpoint(sixDir, rank, six, saved), "");
    ASSERT_EQ(readRankCheckpoint(dir + "/back/step-7", rank, six, back), "");
    for (size_t i = 0; i < saved.size(); ++i)
      EXPECT_EQ(saved[i].bytes, back[i].bytes)
          << "rank " << rank << " value " << i;
  }
  ASSERT_EQ(consolidateCheckpoint(fourDir, four, dir + "/whole", largest), "");
  for (size_t i = 0; i < wholes.size(); ++i) {
    Array read{wholes[i].dtype, wholes[i].shape, {}};
    ASSERT_EQ(readNpy(dir + "/whole/" + manifest.values[i].name + ".npy", read),
              "");
    EXPECT_EQ(read.bytes, wholes[i].bytes) << "value " << i;
  }
}

TEST(CheckpointTest, LayoutsThatCannotBeReadAreNamed) {
  EXPECT_EQ(checkCheckpointValue(makeValue(0, "f32", {10}, 4, {0, 1, 2}), 3),
            "");
  EXPECT_EQ(checkCheckpointValue(makeValue(0, "f32", {10}, 4, {0, 2, 2}), 3),
            "no rank holds part 1");
  EXPECT_EQ(checkCheckpointValue(makeValue(0, "f32", {10}, 3, {0, 1, 2}), 3),
            "3 parts of 3 elements do not hold 10");
  EXPECT_EQ(checkCheckpointValue(makeValue(0, "f32", {10}, 4, {0, 1}), 3),
            "its group_index has 2 entries, the world 3 ranks");
  CheckpointValue escaping = makeValue(0, "f32", {2}, std::nullopt);
  escaping.name = "../x";
  EXPECT_EQ(checkCheckpointValue(escaping, 1), "its name is not a file name");
  CheckpointValue wide = makeValue(0, "f32", {2}, std::nullopt);
  wide.dtype = "f128";
  EXPECT_EQ(checkCheckpointValue(wide, 1), "unknown dtype 'f128'");
}

TEST(CheckpointTest, MismatchesNameTheDifference) {
  CheckpointManifest manifest = meshManifest();
  std::vector<CheckpointValue> other = manifest.values;
  other[1].shape = {5, 3};
  EXPECT_EQ(checkCheckpoint(manifest, other, 6),
            "state value arg1 (argument 1): the checkpoint's shape is (3, 5), "
            "the program's (5, 3)");
  other = manifest.values;
  other[0].dtype = "f32";
  EXPECT_EQ(checkCheckpoint(manifest, other, 6),
            "state value arg0 (argument 0): the checkpoint's is bf16, the "
            "program's f32");
  EXPECT_NE(checkCheckpoint(manifest, manifest.values, 4)
                .find("the checkpoint was saved on 6 ranks, this world has 4"),
            std::string::npos);
  EXPECT_NE(checkCheckpoint(manifest, cutForWorld(manifest.values, 6), 6)
                .find("state value arg0 (argument 0): shards of 4 elements in "
                      "the checkpoint, of 2 in the program"),
            std::string::npos);
}

} // namespace
