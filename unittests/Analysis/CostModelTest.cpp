//===- CostModelTest.cpp - the cost model and its simulation --------------===//

#include "zero/Analysis/CostModel.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "zero/InitZero.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace zero;

namespace {

class CostModelTest : public ::testing::Test {
protected:
  CostModelTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    // Round numbers: 1 ms latency, 1 MB/s, 1 MFLOP/s, 1 M elements/s.
    parameters.latency = 1e-3;
    parameters.bandwidth = 1e6;
    parameters.flopRate = 1e6;
    parameters.elementRate = 1e6;
  }

  func::FuncOp parse(StringRef source) {
    module = parseSourceString<ModuleOp>(source, ParserConfig(&context));
    EXPECT_TRUE(module);
    return module ? *module->getOps<func::FuncOp>().begin() : nullptr;
  }

  MLIRContext context;
  CostModelParameters parameters;
  OwningOpRef<ModuleOp> module;
};

// 1000 elements of addf, 10 times in a loop: 10 ms, with the loop's body
// counted per iteration.
TEST_F(CostModelTest, ComputeWithinLoop) {
  func::FuncOp f = parse(R"mlir(
    func.func @f(%x: tensor<1000xf32>) -> tensor<1000xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c10 = arith.constant 10 : index
      %r = scf.for %i = %c0 to %c10 step %c1 iter_args(%v = %x) -> (tensor<1000xf32>) {
        %s = arith.addf %v, %x : tensor<1000xf32>
        scf.yield %s : tensor<1000xf32>
      }
      return %r : tensor<1000xf32>
    })mlir");
  CostModel model(parameters);
  scf::ForOp loop = *f.getBody().getOps<scf::ForOp>().begin();
  EXPECT_NEAR(model.computeSecondsWithin(loop), 10e-3, 1e-12);
  TimeEstimate estimate = simulate(f, model);
  EXPECT_NEAR(estimate.stepSeconds, 10e-3, 1e-12);
  EXPECT_EQ(estimate.communicationSeconds, 0);
  EXPECT_FALSE(estimate.hiddenShare().has_value());
}

// A reduce-scatter of 4000 bytes on 2 ranks sends 2000: 1 ms + 2 ms. A
// 1000-element addf (1 ms) after it hides 1 ms of it when it is async, none
// when it is synchronous.
TEST_F(CostModelTest, AsyncHidesBehindCompute) {
  const char *sync = R"mlir(
    zero.mesh @dp(shape = [2])
    func.func @f(%g: tensor<1000xf32>, %x: tensor<1000xf32>) -> (tensor<500xf32>, tensor<1000xf32>) {
      %s = zero.reduce_scatter %g on @dp reduce = sum : tensor<1000xf32> -> tensor<500xf32>
      %y = arith.addf %x, %x : tensor<1000xf32>
      return %s, %y : tensor<500xf32>, tensor<1000xf32>
    })mlir";
  const char *async = R"mlir(
    zero.mesh @dp(shape = [2])
    func.func @f(%g: tensor<1000xf32>, %x: tensor<1000xf32>) -> (tensor<500xf32>, tensor<1000xf32>) {
      %f = zero.async : !zero.future<tensor<500xf32>> {
        %s = zero.reduce_scatter %g on @dp reduce = sum : tensor<1000xf32> -> tensor<500xf32>
        zero.yield %s : tensor<500xf32>
      }
      %y = arith.addf %x, %x : tensor<1000xf32>
      %s = zero.await %f reads %g : !zero.future<tensor<500xf32>>, tensor<1000xf32>
      return %s, %y : tensor<500xf32>, tensor<1000xf32>
    })mlir";
  CostModel model(parameters);
  TimeEstimate blocking = simulate(parse(sync), model);
  EXPECT_NEAR(blocking.communicationSeconds, 3e-3, 1e-12);
  EXPECT_NEAR(blocking.exposedSeconds, 3e-3, 1e-12);
  EXPECT_NEAR(blocking.stepSeconds, 4e-3, 1e-12);
  EXPECT_EQ(blocking.hiddenShare(), 0.0);
  TimeEstimate overlapped = simulate(parse(async), model);
  EXPECT_NEAR(overlapped.exposedSeconds, 2e-3, 1e-12);
  EXPECT_NEAR(overlapped.stepSeconds, 3e-3, 1e-12);
  EXPECT_NEAR(overlapped.hiddenShare().value_or(-1), 1.0 / 3, 1e-9);
}

// A gather carried across a loop's back edge (zero-schedule-overlap): each
// iteration computes 3 ms before it awaits the gather the iteration before
// started (2 ms: 1 ms latency, 1000 bytes sent), so only the last one, awaited
// after the loop, is exposed: 10 iterations of 3 ms, then 2 ms.
TEST_F(CostModelTest, FutureCarriedAcrossIterations) {
  func::FuncOp f = parse(R"mlir(
    zero.mesh @dp(shape = [2])
    func.func @f(%w0: tensor<500xf32>, %x: tensor<3000xf32>) -> (tensor<500xf32>, tensor<3000xf32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c10 = arith.constant 10 : index
      %f0 = zero.ready %w0 : tensor<500xf32>
      %r:2 = scf.for %i = %c0 to %c10 step %c1 iter_args(%y = %x, %f = %f0)
          -> (tensor<3000xf32>, !zero.future<tensor<500xf32>>) {
        %z = arith.addf %y, %y : tensor<3000xf32>
        %w = zero.await %f : !zero.future<tensor<500xf32>>
        %s = tensor.extract_slice %w[0] [250] [1] : tensor<500xf32> to tensor<250xf32>
        %f2 = zero.async : !zero.future<tensor<500xf32>> {
          %g = zero.all_gather %s on @dp : tensor<250xf32> -> tensor<500xf32>
          zero.yield %g : tensor<500xf32>
        }
        scf.yield %z, %f2 : tensor<3000xf32>, !zero.future<tensor<500xf32>>
      }
      %last = zero.await %r#1 : !zero.future<tensor<500xf32>>
      return %last, %r#0 : tensor<500xf32>, tensor<3000xf32>
    })mlir");
  CostModel model(parameters);
  TimeEstimate estimate = simulate(f, model);
  EXPECT_NEAR(estimate.computeSeconds, 30e-3, 1e-9);
  EXPECT_NEAR(estimate.communicationSeconds, 20e-3, 1e-9);
  EXPECT_NEAR(estimate.exposedSeconds, 2e-3, 1e-9);
  EXPECT_NEAR(estimate.stepSeconds, 32e-3, 1e-9);
}

TEST_F(CostModelTest, ParametersFromOptions) {
  func::FuncOp f = parse("func.func @f() { return }");
  FailureOr<CostModelParameters> good =
      getCostModelParameters(f, "test", 20, 10, 50, 2);
  ASSERT_TRUE(succeeded(good));
  EXPECT_DOUBLE_EQ(good->latency, 20e-6);
  EXPECT_DOUBLE_EQ(good->bandwidth, 10e9);
  EXPECT_DOUBLE_EQ(good->flopRate, 50e9);
  EXPECT_DOUBLE_EQ(good->elementRate, 2e9);
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    message = d.str();
    return success();
  });
  EXPECT_TRUE(failed(getCostModelParameters(f, "test", 20, 0, 50, 2)));
  EXPECT_EQ(message, "test: the cost model's rates must be positive and its "
                     "latency not negative");
  EXPECT_TRUE(failed(getCostModelParameters(f, "test", -1, 10, 50, 2)));
}

// The host queue's model, at round rates: the link 1 MB/s, the host 1 MB/s,
// a chunk's overhead 0 unless set.
class HostQueueModelTest : public ::testing::Test {
protected:
  HostQueueModelTest() {
    parameters.linkBandwidth = 1e6;
    parameters.hostBandwidth = 1e6;
    parameters.hostChunkOverhead = 0;
  }
  CostModelParameters parameters;
};

// One chunk: its copies down, loop and copies up one after another.
TEST_F(HostQueueModelTest, OneChunkIsSerial) {
  HostQueueModel queue(parameters);
  EXPECT_NEAR(queue.queue(1.0, {1000, 2000, 3000}, 1), 1.006, 1e-12);
}

// Four chunks of 1, 2 and 3 ms: the first's 6 ms, then the copies up,
// the slowest stage, 3 ms for each other chunk.
TEST_F(HostQueueModelTest, ChunksPipeline) {
  HostQueueModel queue(parameters);
  EXPECT_NEAR(queue.queue(0, {4000, 8000, 12000}, 4), 0.015, 1e-12);
}

// Each chunk's overhead is the queue thread's, so that it counts where the
// loop is the slowest stage.
TEST_F(HostQueueModelTest, OverheadOnTheLoop) {
  parameters.hostChunkOverhead = 1e-3;
  HostQueueModel queue(parameters);
  // Chunks of 1, 2 + 1 and 1 ms: 5 ms, then 3 ms each for the other three.
  EXPECT_NEAR(queue.queue(0, {4000, 8000, 4000}, 4), 0.014, 1e-12);
}

// The rank starts an update's copies down when it queues it, while the
// queue is still busy with the one before: the second update's loop starts
// as soon as the first's is done.
TEST_F(HostQueueModelTest, CopiesDownGoAheadOfTheQueue) {
  HostQueueModel queue(parameters);
  EXPECT_NEAR(queue.queue(0, {1000, 10000, 0}, 1), 0.011, 1e-12);
  // Its copies down (1 ms from 1 ms) are done long before the queue is.
  EXPECT_NEAR(queue.queue(0.001, {1000, 1000, 0}, 1), 0.012, 1e-12);
  // The copy stream is the rank's, one copy after another: the third's
  // copies down start at 2 ms, after the first two's.
  EXPECT_NEAR(queue.queue(0, {15000, 0, 0}, 1), 0.017, 1e-12);
}

// The chunks that make an update shortest: as many as its iterations allow
// when they cost nothing, fewer when each costs its overhead, and one
// where there is nothing to pipeline (the fewest among equals).
TEST_F(HostQueueModelTest, ChoosesChunks) {
  EXPECT_EQ(chooseHostChunks(parameters, {4000, 4000, 4000}, 10), 10);
  EXPECT_EQ(chooseHostChunks(parameters, {4000, 4000, 4000}, 1000), 256);
  EXPECT_EQ(chooseHostChunks(parameters, {0, 4000, 0}, 1000), 1);
  // With 1 ms a chunk on the loop, the slowest stage: n chunks take
  // 4 / n + (4 / n + 1) n + 4 / n = 8 / n + 4 + n ms, least at n = 3.
  parameters.hostChunkOverhead = 1e-3;
  EXPECT_EQ(chooseHostChunks(parameters, {4000, 4000, 4000}, 1000), 3);
}

} // namespace
