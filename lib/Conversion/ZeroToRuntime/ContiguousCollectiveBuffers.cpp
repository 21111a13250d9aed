//===- ContiguousCollectiveBuffers.cpp - collectives on dense buffers -----===//
//
// The runtime's collectives take a pointer and an element count, so a
// collective's buffers must be contiguous. A view that is not (or whose
// layout is only known at run time, as a loop-carried shard is) is staged
// through a dense buffer with memref.copy. Staging before the loop passes
// matters on the GPU: there zero-gpu-copies makes the copies kernels, where a
// copy added later, beside the runtime call, would run on the host over
// device memory.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "zero/Conversion/Passes.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

namespace zero {
#define GEN_PASS_DEF_ZEROCONTIGUOUSCOLLECTIVEBUFFERS
#include "zero/Conversion/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

bool isContiguous(Value buffer) {
  return isContiguousBuffer(cast<MemRefType>(buffer.getType()));
}

/// Stages `op`'s input and output through dense buffers where they are not
/// contiguous: the input is copied in before `op`; after the collective is
/// done (after `op`, or after the zero.wait of its request) the output is
/// copied back and the dense buffers are freed.
LogicalResult stage(Operation *op) {
  Value input = op->getOperand(0), output = op->getOperand(1);
  bool stageInput = !isContiguous(input), stageOutput = !isContiguous(output);
  if (!stageInput && !stageOutput)
    return success();

  // The collective is done where its request is waited for; a request that
  // a loop carries out of the block has no such place here.
  Operation *done = op;
  if (op->getNumResults()) {
    WaitOp wait = findWaitInBlock(op->getResult(0));
    if (!wait)
      return op->emitOpError(
          "cannot be staged through contiguous buffers: its request is not "
          "waited for in its block (a loop carries it), so there is no place "
          "to copy its output back; give it contiguous buffers");
    done = wait;
  }

  OpBuilder b(op);
  Location loc = op->getLoc();
  auto dense = [&](Value buffer) -> Value {
    auto type = cast<MemRefType>(buffer.getType());
    return memref::AllocOp::create(
        b, loc, MemRefType::get(type.getShape(), type.getElementType()));
  };
  // An in-place collective (input == output) keeps one staged buffer.
  Value stagedInput = stageInput ? dense(input) : input;
  if (stageInput)
    memref::CopyOp::create(b, loc, input, stagedInput);
  Value stagedOutput = output == input ? stagedInput
                       : stageOutput   ? dense(output)
                                       : output;
  op->setOperand(0, stagedInput);
  op->setOperand(1, stagedOutput);
  if (auto wait = dyn_cast<WaitOp>(done)) {
    wait.getInputMutable().assign(stagedInput);
    wait.getOutputMutable().assign(stagedOutput);
  }

  b.setInsertionPointAfter(done);
  if (stageOutput)
    memref::CopyOp::create(b, loc, stagedOutput, output);
  if (stageInput)
    memref::DeallocOp::create(b, loc, stagedInput);
  if (stageOutput && stagedOutput != stagedInput)
    memref::DeallocOp::create(b, loc, stagedOutput);
  return success();
}

struct ZeroContiguousCollectiveBuffersPass
    : public zero::impl::ZeroContiguousCollectiveBuffersBase<
          ZeroContiguousCollectiveBuffersPass> {
  void runOnOperation() override {
    SmallVector<Operation *> collectives;
    getOperation()->walk([&](Operation *op) {
      if (isBufferCollective(op))
        collectives.push_back(op);
    });
    bool failedAny = false;
    for (Operation *op : collectives)
      failedAny |= failed(stage(op));
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
