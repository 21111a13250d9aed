//===- ArrayTest.cpp - comparing arrays, .npy round trips -----------------===//

#include "zero/runtime/Array.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

using namespace zero::rt;

namespace {

Array floats(std::vector<float> values) {
  Array a;
  a.dtype = "f32";
  a.shape = {static_cast<int64_t>(values.size())};
  a.bytes.resize(values.size() * 4);
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

TEST(Array, CompareCountsUlpsAcrossZeroAndTreatsNaNsAlike) {
  float next = std::nextafter(1.0f, 2.0f);
  float nan = std::nanf("");
  Array a = floats({1.0f, 0.0f, nan, 3.0f});
  Array b = floats({next, -0.0f, nan, 3.0f});
  Difference d = compare(a, b);
  EXPECT_EQ(d.differing, 2);
  EXPECT_EQ(d.maxUlp, 1u); // 1 vs its successor; +0 vs -0 is 0 ulp apart
  EXPECT_EQ(d.firstIndex, 0);
  Array c = floats({1.0f, 0.0f, 1.0f, 3.0f});
  EXPECT_EQ(compare(a, c).maxUlp, UINT64_MAX); // NaN against a number
  EXPECT_EQ(compare(a, a).differing, 0);
}

TEST(Array, NpyRoundTrip) {
  Array a = floats({1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f});
  a.shape = {2, 3};
  std::string path = ::testing::TempDir() + "zero-array-test.npy";
  ASSERT_EQ(writeNpy(path, a), "");
  Array b{"f32", {2, 3}, {}};
  ASSERT_EQ(readNpy(path, b), "");
  EXPECT_EQ(a.bytes, b.bytes);
  Array wrong{"f32", {3, 2}, {}};
  EXPECT_NE(readNpy(path, wrong).find("has shape (2, 3), expected (3, 2)"),
            std::string::npos);
  std::remove(path.c_str());
}

TEST(Array, ShardsArePaddedPartsOfTheFlattenedWhole) {
  Array whole = floats({1, 2, 3, 4, 5});
  Array last = takeShard(whole, 2, 2);
  EXPECT_EQ(last.shape, std::vector<int64_t>{2});
  float values[2];
  std::memcpy(values, last.bytes.data(), sizeof values);
  EXPECT_EQ(values[0], 5.0f);
  EXPECT_EQ(values[1], 0.0f); // padding
  values[1] = 42;
  std::memcpy(last.bytes.data(), values, sizeof values);
  zeroShardPadding(last, 5, 2);
  std::memcpy(values, last.bytes.data(), sizeof values);
  EXPECT_EQ(values[1], 0.0f);
}

} // namespace
