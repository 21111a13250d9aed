//===- CommunicationTest.cpp - bytes moved by collectives -----------------===//

#include "zero/Analysis/Communication.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "zero/InitZero.h"
#include "llvm/Support/FormatVariadic.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace zero;

namespace {

class CommunicationTest : public ::testing::Test {
protected:
  CommunicationTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// The collectives of a module with a 1-D mesh of `n` ranks and one
  /// collective of each kind on a tensor of `elements` f32 per rank.
  OwningOpRef<ModuleOp> parseAllKinds(int64_t n, int64_t elements) {
    std::string source = llvm::formatv(R"mlir(
      zero.mesh @m(shape = [{0}])
      func.func @f(%x: tensor<{1}xf32>, %s: tensor<{2}xf32>) {{
        %a = zero.all_reduce %x on @m reduce = sum : tensor<{1}xf32>
        %r = zero.reduce_scatter %x on @m reduce = sum : tensor<{1}xf32> -> tensor<{2}xf32>
        %g = zero.all_gather %s on @m : tensor<{2}xf32> -> tensor<{1}xf32>
        %l = zero.shard_slice %x on @m : tensor<{1}xf32> -> tensor<{2}xf32>
        return
      })mlir",
                                       n, elements, elements / n);
    OwningOpRef<ModuleOp> module =
        parseSourceString<ModuleOp>(source, ParserConfig(&context));
    EXPECT_TRUE(module);
    return module;
  }

  std::map<std::string, int64_t> bytesByKind(ModuleOp module) {
    std::map<std::string, int64_t> bytes;
    module.walk([&](CollectiveOpInterface op) {
      bytes[op->getName().stripDialect().str()] =
          *getBytesSentPerRank(op, op.getGroupSize(op.lookupMesh()));
    });
    return bytes;
  }

  MLIRContext context;
};

TEST_F(CommunicationTest, RingFactors) {
  // B = 4 * 24 bytes; the ring sends (N-1)/N of the buffer per phase.
  for (int64_t n : {1, 2, 3, 4, 8}) {
    OwningOpRef<ModuleOp> module = parseAllKinds(n, 24);
    std::map<std::string, int64_t> bytes = bytesByKind(*module);
    int64_t b = 4 * 24;
    EXPECT_EQ(bytes["all_reduce"], 2 * b * (n - 1) / n) << "N=" << n;
    EXPECT_EQ(bytes["reduce_scatter"], b * (n - 1) / n) << "N=" << n;
    EXPECT_EQ(bytes["all_gather"], b * (n - 1) / n) << "N=" << n;
    EXPECT_EQ(bytes["shard_slice"], 0) << "N=" << n;
  }
}

TEST_F(CommunicationTest, TensorBytes) {
  Builder b(&context);
  EXPECT_EQ(getTensorBytes(RankedTensorType::get({3, 5}, b.getBF16Type())), 30);
  EXPECT_EQ(getTensorBytes(RankedTensorType::get({}, b.getF64Type())), 8);
  EXPECT_FALSE(getTensorBytes(
      RankedTensorType::get({ShapedType::kDynamic}, b.getF32Type())));
  EXPECT_FALSE(getTensorBytes(RankedTensorType::get({8}, b.getI1Type())));
}

TEST_F(CommunicationTest, ExecutionCountMultipliesStaticTripCounts) {
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(R"mlir(
    zero.mesh @m(shape = [2])
    func.func @f(%x: tensor<4xf32>, %n: index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c3 = arith.constant 3 : index
      %c10 = arith.constant 10 : index
      scf.for %i = %c0 to %c10 step %c3 {
        scf.for %j = %c0 to %c3 step %c1 {
          %a = zero.all_reduce %x on @m reduce = sum {tag = "static"} : tensor<4xf32>
        }
        scf.for %j = %c0 to %n step %c1 {
          %a = zero.all_reduce %x on @m reduce = sum {tag = "dynamic"} : tensor<4xf32>
        }
      }
      return
    })mlir",
                                  ParserConfig(&context));
  ASSERT_TRUE(module);
  module->walk([&](AllReduceOp op) {
    std::optional<int64_t> count = getExecutionCount(op);
    if (op->getAttrOfType<StringAttr>("tag").getValue() == "static")
      EXPECT_EQ(count, 4 * 3); // ceil(10 / 3) * 3
    else
      EXPECT_FALSE(count);
  });
}

} // namespace
