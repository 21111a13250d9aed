//===- ExpandLoopFutures.cpp - buffers for futures carried by loops -------===//
//
// A future that an scf.for carries is started in one iteration and awaited
// in the next, so One-Shot Bufferize, which bufferizes a zero.async and its
// zero.await as a pair in one block, cannot place it. This pass does, before
// bufferization: the collective's buffers belong to the loop's parent block,
// the loop carries the request, and the awaits read the result buffer
// through read-only views. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROEXPANDLOOPFUTURES
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// The only zero.await of `future` in `block`, null if none; fails on
/// another use.
FailureOr<AwaitOp> getOnlyAwait(Value future, Block &block,
                                Operation *diagnosticOp) {
  AwaitOp await;
  for (Operation *user : future.getUsers()) {
    auto candidate = dyn_cast<AwaitOp>(user);
    if (!candidate || user->getBlock() != &block || await)
      return diagnosticOp->emitOpError(
          "carries a future that is not awaited exactly once in the block "
          "that receives it");
    await = candidate;
  }
  return await;
}

/// One future-carrying iter_arg of a loop, expanded.
class LoopFuture {
public:
  LoopFuture(scf::ForOp loop, unsigned index) : loop(loop), index(index) {}

  LogicalResult expand() {
    if (failed(check()))
      return failure();
    Location loc = async.getLoc();
    CollectiveOpInterface collective = async.getCollective();
    Type requestType = RequestType::get(loop.getContext());

    // The buffers, and the first iteration's request.
    auto initAsync = init.getDefiningOp<AsyncOp>();
    OpBuilder b(initAsync ? initAsync.getOperation() : loop.getOperation());
    input = memref::AllocOp::create(
        b, loc, getDenseBufferType(collective.getInput().getType()));
    output = memref::AllocOp::create(
        b, loc, getDenseBufferType(collective.getResult().getType()));
    Value first;
    if (initAsync) {
      first = start(b, initAsync);
    } else {
      copyInto(b, init.getDefiningOp<ReadyOp>().getValue(), output);
      first = CompletedRequestOp::create(b, loc);
    }

    // The loop carries the request.
    BlockArgument argument = loop.getRegionIterArgs()[index];
    argument.setType(requestType);
    loop.getResult(index).setType(requestType);
    loop.getInitArgsMutable()[index].set(first);
    if (initAsync)
      initAsync->erase();

    // In the body: wait, then read; copy the input and start (the input
    // buffer is free once the wait has passed).
    if (bodyAwait)
      completeAt(bodyAwait, argument);
    else
      waitBefore(async, argument);
    b.setInsertionPoint(async);
    Value next = start(b, async);
    loop.getBody()->getTerminator()->setOperand(index, next);
    async->erase();

    // After the loop, the last collective is always waited for.
    if (afterAwait) {
      completeAt(afterAwait, loop.getResult(index));
    } else {
      b.setInsertionPointAfter(loop);
      WaitOp::create(b, loc, loop.getResult(index), input, output);
    }
    return success();
  }

private:
  /// What expand() needs: a zero.ready or zero.async before the loop, one
  /// await in the body before the zero.async that the body yields, and no
  /// reader of the awaited value after that start.
  LogicalResult check() {
    init = loop.getInitArgs()[index];
    Block &body = *loop.getBody();
    auto initAsync = init.getDefiningOp<AsyncOp>();
    if (!init.getDefiningOp<ReadyOp>() &&
        !(initAsync && initAsync->getBlock() == loop->getBlock() &&
          init.hasOneUse()))
      return loop.emitOpError("carries a future whose first value is neither "
                              "a zero.ready nor a zero.async of its own");
    Value yielded = body.getTerminator()->getOperand(index);
    async = yielded.getDefiningOp<AsyncOp>();
    if (!async || async->getBlock() != &body || !yielded.hasOneUse())
      return loop.emitOpError("carries a future that its body does not start "
                              "with a zero.async of its own");
    if (!async.getCollective().communicates())
      return async.emitOpError("starts a collective that does not "
                               "communicate; it cannot be carried");
    FailureOr<AwaitOp> await =
        getOnlyAwait(loop.getRegionIterArgs()[index], body, loop);
    FailureOr<AwaitOp> after =
        getOnlyAwait(loop.getResult(index), *loop->getBlock(), loop);
    if (failed(await) || failed(after))
      return failure();
    bodyAwait = *await;
    afterAwait = *after;
    if (!bodyAwait)
      return success();
    if (async->isBeforeInBlock(bodyAwait))
      return bodyAwait.emitOpError("must come before the zero.async that "
                                   "starts the next iteration's collective");
    SetVector<Operation *> readers =
        findBufferReaders(bodyAwait.getResult(), body);
    for (Operation *reader : readers)
      if (reader == body.getTerminator() || async->isBeforeInBlock(reader))
        return reader
                   ->emitOpError("reads the value of a loop-carried future "
                                 "after the next iteration's collective "
                                 "starts writing its buffer")
                   .attachNote(async.getLoc())
               << "the collective starts here";
    return success();
  }

  /// Copies the tensor `value` into `buffer` where `b` stands.
  void copyInto(OpBuilder &b, Value value, Value buffer) {
    Location loc = value.getLoc();
    Value source = bufferization::ToBufferOp::create(b, loc, buffer.getType(),
                                                     value, /*read_only=*/true);
    memref::CopyOp::create(b, loc, source, buffer);
  }

  /// Copies the input of `async`'s collective into the input buffer and
  /// starts the collective on the two buffers; returns the request.
  Value start(OpBuilder &b, AsyncOp async) {
    CollectiveOpInterface collective = async.getCollective();
    copyInto(b, collective.getInput(), input);
    return createBufferCollective(b, collective,
                                  RequestType::get(loop.getContext()), input,
                                  output)
        ->getResult(0);
  }

  void waitBefore(Operation *op, Value request) {
    OpBuilder b(op);
    WaitOp::create(b, op->getLoc(), request, input, output);
  }

  /// Replaces `await` with a wait on `request` and a read-only view of the
  /// result buffer.
  void completeAt(AwaitOp await, Value request) {
    waitBefore(await, request);
    OpBuilder b(await);
    Value view = bufferization::ToTensorOp::create(
        b, await.getLoc(), await.getType(), output, b.getUnitAttr(),
        /*writable=*/nullptr);
    await.replaceAllUsesWith(view);
    await.erase();
  }

  scf::ForOp loop;
  unsigned index;
  Value init;
  AsyncOp async;
  AwaitOp bodyAwait, afterAwait;
  Value input, output;
};

struct ZeroExpandLoopFuturesPass
    : public zero::impl::ZeroExpandLoopFuturesBase<ZeroExpandLoopFuturesPass> {
  void runOnOperation() override {
    // Awaits of ready futures outside loops need no buffers.
    getOperation().walk([](AwaitOp await) {
      if (auto ready = await.getFuture().getDefiningOp<ReadyOp>()) {
        await.replaceAllUsesWith(ready.getValue());
        await.erase();
      }
    });
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    bool failedAny = false;
    for (scf::ForOp loop : loops)
      for (BlockArgument argument : loop.getRegionIterArgs())
        if (isa<FutureType>(argument.getType()))
          failedAny |=
              failed(LoopFuture(loop, argument.getArgNumber() - 1).expand());
    getOperation().walk([](ReadyOp ready) {
      if (ready.use_empty())
        ready.erase();
    });
    if (failedAny)
      signalPassFailure();
  }
};

} // namespace
