//===- BufferizableOpInterfaceImpl.cpp - bufferizing zero ops -------------===//
//
// A communicating collective reads its operand and writes a new buffer: its
// result does not alias the operand, so bufferization allocates the output
// and emits the `*_buffer` op; an all-reduce outside `zero.async` reduces
// in place where its input is not read afterwards. `zero.shard_slice` is a
// view: its result aliases its operand, like `tensor.extract_slice`, and
// becomes a `memref.subview` at offset group-index * part-size along its
// dimension.
//
// A collective in a `zero.async` only starts where the async op stands: its
// buffer op returns a `!zero.request`, and the `zero.await` becomes a
// `zero.wait` on it. The await names the collective's input, so the analysis
// sees that input read until the wait and never lets a write reuse its
// buffer while the collective may still read it.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/Transforms/BufferizableOpInterfaceImpl.h"
#include "Buffers.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/BufferizableOpInterface.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/DialectRegistry.h"
#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"

using namespace mlir;
using namespace mlir::bufferization;
using namespace zero;

namespace {

/// Allocates the output buffer of `op`'s result.
FailureOr<Value> allocateOutput(RewriterBase &rewriter, Operation *op,
                                const BufferizationOptions &options) {
  // The runtime's collectives move a count of elements known when the
  // program is compiled.
  if (!cast<ShapedType>(op->getResult(0).getType()).hasStaticShape())
    return op->emitError("zero lowers collectives of static shape only, not ")
           << op->getResult(0).getType();
  return options.createAlloc(rewriter, op->getLoc(),
                             getDenseBufferType(op->getResult(0).getType()),
                             ValueRange{});
}

/// The analysis of an op that reads its tensor operands and returns a fresh
/// buffer (a communicating collective, and the await that hands out its
/// result).
template <typename Model, typename OpTy>
struct ReadsOperandsAllocatesResult
    : public BufferizableOpInterface::ExternalModel<Model, OpTy> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  bool bufferizesToAllocation(Operation *, Value) const { return true; }

  FailureOr<BufferLikeType> getBufferType(Operation *, Value value,
                                          const BufferizationOptions &,
                                          const BufferizationState &,
                                          SmallVector<Value> &) const {
    return cast<BufferLikeType>(getDenseBufferType(value.getType()));
  }
};

/// Bufferizes a communicating collective into a new output buffer. In a
/// `zero.async`, the output is allocated and the collective started (a
/// buffer op returning a request) just before the async op; the await then
/// waits for it (AwaitOpInterface). Elsewhere the collective runs where it
/// stands.
template <typename OpTy>
LogicalResult bufferizeIntoNewBuffer(Operation *op, RewriterBase &rewriter,
                                     const BufferizationOptions &options,
                                     BufferizationState &state) {
  auto collective = cast<OpTy>(op);
  auto async = dyn_cast<AsyncOp>(op->getParentOp());
  FailureOr<Value> input =
      getBuffer(rewriter, collective.getInput(), options, state);
  if (failed(input))
    return failure();
  OpBuilder::InsertionGuard guard(rewriter);
  if (async)
    rewriter.setInsertionPoint(async);
  FailureOr<Value> output = allocateOutput(rewriter, op, options);
  if (failed(output))
    return failure();
  Type request = async ? RequestType::get(op->getContext()) : Type();
  createBufferCollective(rewriter, collective, request, *input, *output);
  rewriter.setInsertionPoint(op);
  replaceOpWithBufferizedValues(rewriter, op, *output);
  return success();
}

/// The model shared by reduce_scatter, all_gather and all_to_all (whose
/// output is never its input): the `*_buffer` op writes a new buffer.
template <typename OpTy>
struct CommunicatingOpInterface
    : public ReadsOperandsAllocatesResult<CommunicatingOpInterface<OpTy>,
                                          OpTy> {

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    return bufferizeIntoNewBuffer<OpTy>(op, rewriter, options, state);
  }
};

/// An all-reduce outside a `zero.async` reduces in place: its result is its
/// input's buffer, so a gradient that nothing reads after its reduction is
/// reduced where it lies (the runtime's all-reduce takes the same buffer as
/// input and output), with no buffer of its own. Where the analysis finds
/// the input's old value read later (or its buffer not writable), the
/// all-reduce writes a fresh buffer as before, rather than copying its input
/// first. In a `zero.async` it always does: the collective runs until the
/// await, which names the input as read until then.
struct AllReduceOpInterface
    : public BufferizableOpInterface::ExternalModel<AllReduceOpInterface,
                                                    AllReduceOp> {
  /// Set by resolveConflicts on an all-reduce that the analysis kept out of
  /// place; read by bufferize.
  static constexpr llvm::StringLiteral outOfPlace = "zero.out_of_place";

  static bool inAsync(Operation *op) {
    return isa<AsyncOp>(op->getParentOp());
  }
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return true;
  }
  bool bufferizesToMemoryWrite(Operation *op, OpOperand &,
                               const AnalysisState &) const {
    return !inAsync(op);
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    if (inAsync(op))
      return {};
    return {{op->getResult(0), BufferRelation::Equivalent}};
  }
  bool bufferizesToAllocation(Operation *op, Value) const {
    return inAsync(op);
  }
  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value value, const BufferizationOptions &options,
                const BufferizationState &state,
                SmallVector<Value> &invocationStack) const {
    if (inAsync(op) || op->hasAttr(outOfPlace))
      return cast<BufferLikeType>(getDenseBufferType(value.getType()));
    return bufferization::getBufferType(cast<AllReduceOp>(op).getInput(),
                                        options, state, invocationStack);
  }
  LogicalResult resolveConflicts(Operation *op, RewriterBase &rewriter,
                                 const AnalysisState &analysisState,
                                 const BufferizationState &) const {
    if (!inAsync(op) && !analysisState.isInPlace(op->getOpOperand(0)))
      rewriter.modifyOpInPlace(
          op, [&] { op->setAttr(outOfPlace, rewriter.getUnitAttr()); });
    return success();
  }
  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    if (inAsync(op) || op->hasAttr(outOfPlace)) {
      rewriter.modifyOpInPlace(op, [&] { op->removeAttr(outOfPlace); });
      return bufferizeIntoNewBuffer<AllReduceOp>(op, rewriter, options, state);
    }
    auto allReduce = cast<AllReduceOp>(op);
    if (!allReduce.getType().hasStaticShape())
      return op->emitError("zero lowers collectives of static shape only, not ")
             << allReduce.getType();
    FailureOr<Value> buffer =
        getBuffer(rewriter, allReduce.getInput(), options, state);
    if (failed(buffer))
      return failure();
    createBufferCollective(rewriter, allReduce, Type(), *buffer, *buffer);
    replaceOpWithBufferizedValues(rewriter, op, *buffer);
    return success();
  }
};

/// `zero.yield` only hands the collective's result to the future; the
/// await of that future replaces the whole `zero.async`, yield included.
struct YieldOpInterface
    : public BufferizableOpInterface::ExternalModel<YieldOpInterface,
                                                    zero::YieldOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *, OpOperand &,
                                      const AnalysisState &) const {
    return {};
  }
  LogicalResult bufferize(Operation *, RewriterBase &,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    return success();
  }
};

/// The await reads the collective's input (its `input` operand: the buffer
/// must stay unchanged until the collective completes) and returns the
/// buffer the collective allocated. Bufferizing it waits for the request
/// that the collective's bufferization started and erases the `zero.async`.
struct AwaitOpInterface
    : public ReadsOperandsAllocatesResult<AwaitOpInterface, AwaitOp> {

  /// The started buffer collective that writes `output`, or null.
  static Operation *findStart(Value output) {
    for (Operation *user : output.getUsers())
      if (isBufferCollective(user) && user->getNumResults() == 1 &&
          user->getOperand(1) == output)
        return user;
    return nullptr;
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &,
                          BufferizationState &) const {
    auto await = cast<AwaitOp>(op);
    auto async = await.getFuture().getDefiningOp<AsyncOp>();
    auto yield = async ? dyn_cast<zero::YieldOp>(async.getBody().front().back())
                       : nullptr;
    auto toTensor =
        yield ? yield.getValue().getDefiningOp<ToTensorOp>() : nullptr;
    Operation *start = toTensor ? findStart(toTensor.getBuffer()) : nullptr;
    if (!start)
      return op->emitOpError("cannot be bufferized: its future does not come "
                             "from a bufferized zero.async in this function");
    Value input = start->getOperand(0), output = start->getOperand(1);
    rewriter.setInsertionPoint(op);
    WaitOp::create(rewriter, op->getLoc(), start->getResult(0), input, output);
    replaceOpWithBufferizedValues(rewriter, op, output);
    rewriter.eraseOp(async);
    return success();
  }
};

struct ShardSliceOpInterface
    : public BufferizableOpInterface::ExternalModel<ShardSliceOpInterface,
                                                    ShardSliceOp> {
  bool bufferizesToMemoryRead(Operation *, OpOperand &,
                              const AnalysisState &) const {
    return false;
  }
  bool bufferizesToMemoryWrite(Operation *, OpOperand &,
                               const AnalysisState &) const {
    return false;
  }
  AliasingValueList getAliasingValues(Operation *op, OpOperand &,
                                      const AnalysisState &) const {
    return {{op->getResult(0), BufferRelation::Unknown}};
  }

  /// Offsets (the sliced dimension dynamic), sizes and unit strides.
  static void sliceGeometry(ShardSliceOp op, SmallVector<int64_t> &offsets,
                            SmallVector<int64_t> &sizes,
                            SmallVector<int64_t> &strides) {
    RankedTensorType type = op.getResult().getType();
    offsets.assign(type.getRank(), 0);
    offsets[op.getDim()] = ShapedType::kDynamic;
    sizes = llvm::to_vector(type.getShape());
    strides.assign(type.getRank(), 1);
  }

  FailureOr<BufferLikeType>
  getBufferType(Operation *op, Value, const BufferizationOptions &options,
                const BufferizationState &state,
                SmallVector<Value> &invocationStack) const {
    auto slice = cast<ShardSliceOp>(op);
    FailureOr<BufferLikeType> source = bufferization::getBufferType(
        slice.getInput(), options, state, invocationStack);
    if (failed(source))
      return failure();
    SmallVector<int64_t> offsets, sizes, strides;
    sliceGeometry(slice, offsets, sizes, strides);
    return cast<BufferLikeType>(memref::SubViewOp::inferResultType(
        cast<MemRefType>(*source), offsets, sizes, strides));
  }

  LogicalResult bufferize(Operation *op, RewriterBase &rewriter,
                          const BufferizationOptions &options,
                          BufferizationState &state) const {
    auto slice = cast<ShardSliceOp>(op);
    Location loc = op->getLoc();
    FailureOr<Value> source =
        getBuffer(rewriter, slice.getInput(), options, state);
    if (failed(source))
      return failure();
    Value index =
        ReplicaIndexOp::create(rewriter, loc, rewriter.getIndexType(),
                               slice.getMeshAttr(), slice.getAxesAttr());
    int64_t part = slice.getResult().getType().getDimSize(slice.getDim());
    Value offset = arith::MulIOp::create(
        rewriter, loc, index,
        arith::ConstantIndexOp::create(rewriter, loc, part));
    SmallVector<int64_t> offsets, sizes, strides;
    sliceGeometry(slice, offsets, sizes, strides);
    SmallVector<OpFoldResult> mixedOffsets =
        getAsIndexOpFoldResult(rewriter.getContext(), offsets);
    mixedOffsets[slice.getDim()] = offset;
    Value view = memref::SubViewOp::create(
        rewriter, loc, *source, mixedOffsets,
        getAsIndexOpFoldResult(rewriter.getContext(), sizes),
        getAsIndexOpFoldResult(rewriter.getContext(), strides));
    replaceOpWithBufferizedValues(rewriter, op, view);
    return success();
  }
};

} // namespace

void zero::registerBufferizableOpInterfaceExternalModels(
    DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *context, ZeroDialect *) {
    AllReduceOp::attachInterface<AllReduceOpInterface>(*context);
    ReduceScatterOp::attachInterface<CommunicatingOpInterface<ReduceScatterOp>>(
        *context);
    AllGatherOp::attachInterface<CommunicatingOpInterface<AllGatherOp>>(
        *context);
    AllToAllOp::attachInterface<CommunicatingOpInterface<AllToAllOp>>(*context);
    ShardSliceOp::attachInterface<ShardSliceOpInterface>(*context);
    zero::YieldOp::attachInterface<YieldOpInterface>(*context);
    AwaitOp::attachInterface<AwaitOpInterface>(*context);
    context->loadDialect<arith::ArithDialect, memref::MemRefDialect>();
  });
}
