//===- ZeroOpsTest.cpp - the zero dialect's C++ API -----------------------===//

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "zero/InitZero.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace zero;

namespace {

class ZeroOpsTest : public ::testing::Test {
protected:
  ZeroOpsTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `source`; the test fails on any diagnostic.
  OwningOpRef<ModuleOp> parse(StringRef source) {
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    EXPECT_TRUE(module) << source.str();
    return module;
  }

  /// Parses `source`, which must fail to verify, and returns the first error.
  std::string firstError(StringRef source) {
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    EXPECT_FALSE(module) << source.str();
    return message;
  }

  template <typename OpT> OpT first(ModuleOp module) {
    OpT found;
    module.walk([&](OpT op) {
      if (!found)
        found = op;
    });
    return found;
  }

  MLIRContext context;
};

TEST_F(ZeroOpsTest, MeshSizesAndGroups) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    zero.mesh @m(shape = [2, 4])
    func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
      %y = zero.all_reduce %x on @m axes = [1] reduce = sum : tensor<8xf32>
      return %y : tensor<8xf32>
    })mlir");
  auto mesh = first<MeshOp>(*module);
  EXPECT_EQ(mesh.getNumAxes(), 2);
  EXPECT_EQ(mesh.getNumRanks(), 8);
  EXPECT_EQ(getGroupSize(mesh, nullptr), 8);
  EXPECT_EQ(getGroupSize(mesh, DenseI64ArrayAttr::get(&context, {0})), 2);
  EXPECT_EQ(getGroupAxes(mesh, nullptr), (SmallVector<int64_t>{0, 1}));

  auto collective =
      cast<CollectiveOpInterface>(first<AllReduceOp>(*module).getOperation());
  EXPECT_EQ(collective.lookupMesh(), mesh);
  EXPECT_EQ(collective.getGroupSize(mesh), 4);
  EXPECT_EQ(collective.getGroupAxes(mesh), (SmallVector<int64_t>{1}));
  EXPECT_TRUE(collective.communicates());
}

TEST_F(ZeroOpsTest, ShardSliceDoesNotCommunicate) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    zero.mesh @m(shape = [4])
    func.func @f(%x: tensor<8xf32>) -> tensor<2xf32> {
      %y = zero.shard_slice %x on @m : tensor<8xf32> -> tensor<2xf32>
      return %y : tensor<2xf32>
    })mlir");
  auto slice =
      cast<CollectiveOpInterface>(first<ShardSliceOp>(*module).getOperation());
  EXPECT_FALSE(slice.communicates());
}

TEST_F(ZeroOpsTest, ReducibleElementTypes) {
  Builder b(&context);
  for (ReductionKind kind : {ReductionKind::Sum, ReductionKind::Mean,
                             ReductionKind::Max, ReductionKind::Min}) {
    EXPECT_TRUE(isReducible(kind, b.getF32Type()));
    EXPECT_TRUE(isReducible(kind, b.getBF16Type()));
    EXPECT_FALSE(isReducible(kind, b.getI1Type()));
    EXPECT_FALSE(isReducible(kind, b.getIndexType()));
    EXPECT_FALSE(isReducible(kind, b.getIntegerType(128)));
  }
  EXPECT_TRUE(isReducible(ReductionKind::Sum, b.getI32Type()));
  EXPECT_TRUE(isReducible(ReductionKind::Max, b.getI64Type()));
  EXPECT_FALSE(isReducible(ReductionKind::Mean, b.getI32Type()));
  EXPECT_FALSE(
      isReducible(ReductionKind::Sum,
                  IntegerType::get(&context, 32, IntegerType::Unsigned)));
}

TEST_F(ZeroOpsTest, SingleRankGroupFoldsAway) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    zero.mesh @m(shape = [1, 4])
    func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
      return %x : tensor<8xf32>
    })mlir");
  auto func = first<func::FuncOp>(*module);
  Value x = func.getArgument(0);
  OpBuilder b(func.getBody().front().getTerminator());
  FlatSymbolRefAttr m = FlatSymbolRefAttr::get(&context, "m");
  auto axis0 = b.getDenseI64ArrayAttr({0});
  auto axis1 = b.getDenseI64ArrayAttr({1});
  auto sum = ReductionKindAttr::get(&context, ReductionKind::Sum);

  // Over axis 0 (one rank) the collective is the identity...
  Value folded = b.createOrFold<AllReduceOp>(b.getUnknownLoc(), x.getType(), x,
                                             m, axis0, sum);
  EXPECT_EQ(folded, x);
  Value index = b.createOrFold<ReplicaIndexOp>(b.getUnknownLoc(),
                                               b.getIndexType(), m, axis0);
  EXPECT_TRUE(index.getDefiningOp<arith::ConstantIndexOp>());
  // ...over axis 1 (four ranks) it is not.
  Value kept = b.createOrFold<AllReduceOp>(b.getUnknownLoc(), x.getType(), x, m,
                                           axis1, sum);
  EXPECT_NE(kept, x);
  EXPECT_TRUE(succeeded(verify(*module)));
}

TEST_F(ZeroOpsTest, VerifierNamesTheProblem) {
  EXPECT_NE(firstError(R"mlir(
    func.func @f(%x: tensor<8xf32>) -> tensor<8xf32> {
      %y = zero.all_reduce %x on @nowhere reduce = sum : tensor<8xf32>
      return %y : tensor<8xf32>
    })mlir")
                .find("unknown mesh @nowhere"),
            std::string::npos);
  EXPECT_NE(firstError(R"mlir(
    zero.mesh @m(shape = [3])
    func.func @f(%x: tensor<8xf32>) -> tensor<2xf32> {
      %y = zero.reduce_scatter %x on @m reduce = sum : tensor<8xf32> -> tensor<2xf32>
      return %y : tensor<2xf32>
    })mlir")
                .find("group size 3"),
            std::string::npos);
}

} // namespace
