//===- WeightUpdateTest.cpp - finding the update code of a gradient -------===//

#include "zero/Analysis/WeightUpdate.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "zero/InitZero.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace zero;

namespace {

class WeightUpdateTest : public ::testing::Test {
protected:
  WeightUpdateTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  AllReduceOp parseGradient(StringRef source) {
    module = parseSourceString<ModuleOp>(source, ParserConfig(&context));
    EXPECT_TRUE(module);
    AllReduceOp found;
    module->walk([&](AllReduceOp op) { found = op; });
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(WeightUpdateTest, MomentumUpdate) {
  AllReduceOp gradient = parseGradient(R"mlir(
    zero.mesh @dp(shape = [2])
    func.func @f(%w: tensor<8xf32>, %m: tensor<8xf32>, %gl: tensor<8xf32>,
                 %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
      %beta = arith.constant dense<0.9> : tensor<8xf32>
      %unrelated = arith.addf %x, %x : tensor<8xf32>
      %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8xf32>
      %m1 = arith.mulf %m, %beta : tensor<8xf32>
      %m2 = arith.addf %m1, %g : tensor<8xf32>
      %w2 = arith.subf %w, %m2 : tensor<8xf32>
      return %w2, %m2, %unrelated : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
    })mlir");
  std::string why;
  FailureOr<WeightUpdate> update = findWeightUpdate(gradient, why);
  ASSERT_TRUE(succeeded(update)) << why;
  // m * beta is absorbed; the unrelated add is not.
  ASSERT_EQ(update->ops.size(), 3u);
  EXPECT_EQ(update->ops[0]->getName().getStringRef(), "arith.mulf");
  EXPECT_EQ(update->ops[2]->getName().getStringRef(), "arith.subf");
  auto func = cast<func::FuncOp>(gradient->getParentOp());
  EXPECT_EQ(update->inputs.size(), 2u);
  EXPECT_TRUE(update->inputs.contains(func.getArgument(0)));
  EXPECT_TRUE(update->inputs.contains(func.getArgument(1)));
  ASSERT_EQ(update->outputs.size(), 2u);
  for (OpOperand *output : update->outputs)
    EXPECT_TRUE(isa<func::ReturnOp>(output->getOwner()));
}

TEST_F(WeightUpdateTest, SharedProducerStaysOutside) {
  // %m1 also leaves the step on its own, so it is an output of the update's
  // producer, not part of an update that would hide it.
  AllReduceOp gradient = parseGradient(R"mlir(
    zero.mesh @dp(shape = [2])
    func.func @f(%m: tensor<8xf32>, %gl: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
      %m1 = arith.mulf %m, %m : tensor<8xf32>
      %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8xf32>
      %m2 = arith.addf %m1, %g : tensor<8xf32>
      return %m2, %m1 : tensor<8xf32>, tensor<8xf32>
    })mlir");
  std::string why;
  FailureOr<WeightUpdate> update = findWeightUpdate(gradient, why);
  ASSERT_TRUE(succeeded(update)) << why;
  EXPECT_EQ(update->ops.size(), 1u);
  EXPECT_EQ(update->inputs.size(), 1u);
}

TEST_F(WeightUpdateTest, ReasonWhenNotAnUpdate) {
  AllReduceOp gradient = parseGradient(R"mlir(
    zero.mesh @dp(shape = [2])
    func.func @f(%gl: tensor<8xf32>) -> tensor<8xf32> {
      %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8xf32>
      return %g : tensor<8xf32>
    })mlir");
  std::string why;
  EXPECT_TRUE(failed(findWeightUpdate(gradient, why)));
  EXPECT_EQ(why, "no update code uses the gradient");
}

} // namespace
