//===- HostArrayTest.cpp - comparing arrays, .npy round trips -------------===//

#include "zero/Execution/HostArray.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace zero::exec;

namespace {

HostArray floats(MLIRContext &context, std::vector<float> values) {
  HostArray a;
  a.elementType = Float32Type::get(&context);
  a.shape = {static_cast<int64_t>(values.size())};
  a.bytes.resize(values.size() * 4);
  std::memcpy(a.bytes.data(), values.data(), a.bytes.size());
  return a;
}

TEST(HostArray, CompareCountsUlpsAcrossZeroAndTreatsNaNsAlike) {
  MLIRContext context;
  float next = std::nextafter(1.0f, 2.0f);
  float nan = std::nanf("");
  HostArray a = floats(context, {1.0f, 0.0f, nan, 3.0f});
  HostArray b = floats(context, {next, -0.0f, nan, 3.0f});
  Difference d = compare(a, b);
  EXPECT_EQ(d.differing, 2);
  EXPECT_EQ(d.maxUlp, 1u); // 1 vs its successor; +0 vs -0 is 0 ulp apart
  EXPECT_EQ(d.firstIndex, 0);
  HostArray c = floats(context, {1.0f, 0.0f, 1.0f, 3.0f});
  EXPECT_EQ(compare(a, c).maxUlp, UINT64_MAX); // NaN against a number
  EXPECT_EQ(compare(a, a).differing, 0);
}

TEST(HostArray, NpyRoundTrip) {
  MLIRContext context;
  HostArray a = floats(context, {1.5f, -2.0f, 3.25f, 0.0f, 7.0f, 8.0f});
  a.shape = {2, 3};
  llvm::SmallString<64> path;
  ASSERT_FALSE(llvm::sys::fs::createTemporaryFile("zero", "npy", path));
  ASSERT_FALSE(static_cast<bool>(writeNpy(path, a)));
  HostArray b;
  b.elementType = a.elementType;
  b.shape = {2, 3};
  ASSERT_FALSE(static_cast<bool>(readNpy(path, b)));
  EXPECT_EQ(a.bytes, b.bytes);
  HostArray wrong;
  wrong.elementType = a.elementType;
  wrong.shape = {3, 2};
  llvm::Error error = readNpy(path, wrong);
  EXPECT_NE(llvm::toString(std::move(error))
                .find("has shape (2, 3), expected (3, 2)"),
            std::string::npos);
  llvm::sys::fs::remove(path);
}

} // namespace
