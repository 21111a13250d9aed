//===- ZeroOps.cpp - zero operations --------------------------------------===//
//
// Verifiers and folders. What can be checked from an op alone (dimensions,
// element types, axes that repeat) is checked in verify(); what needs the mesh
// (axes in range, sizes against the group size) in verifySymbolUses(), which
// runs once the symbol table is known.
//
//===----------------------------------------------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace zero;

#include "zero/Dialect/Zero/IR/ZeroInterfaces.cpp.inc"

/// `sum`, `mean`, `max` or `min` as a bare keyword.
static ParseResult parseReductionKind(OpAsmParser &parser,
                                      ReductionKindAttr &attr) {
  SMLoc loc = parser.getCurrentLocation();
  StringRef keyword;
  if (parser.parseKeyword(&keyword))
    return failure();
  std::optional<ReductionKind> kind = symbolizeReductionKind(keyword);
  if (!kind)
    return parser.emitError(loc, "unknown reduction '")
           << keyword << "' (expected sum, mean, max or min)";
  attr = ReductionKindAttr::get(parser.getContext(), *kind);
  return success();
}

static void printReductionKind(OpAsmPrinter &printer, Operation *,
                               ReductionKindAttr attr) {
  printer << stringifyReductionKind(attr.getValue());
}

#define GET_OP_CLASSES
#include "zero/Dialect/Zero/IR/ZeroOps.cpp.inc"

//===----------------------------------------------------------------------===//
// CollectiveOpInterface
//===----------------------------------------------------------------------===//

SmallVector<int64_t> CollectiveOpInterface::getGroupAxes(MeshOp mesh) {
  return zero::getGroupAxes(mesh, getAxesAttr());
}

int64_t CollectiveOpInterface::getGroupSize(MeshOp mesh) {
  return zero::getGroupSize(mesh, getAxesAttr());
}

MeshOp CollectiveOpInterface::lookupMesh() {
  return zero::lookupMesh(*this, getMeshAttr());
}

//===----------------------------------------------------------------------===//
// Helpers shared by the ops
//===----------------------------------------------------------------------===//

MeshOp zero::lookupMesh(Operation *from, FlatSymbolRefAttr name) {
  return SymbolTable::lookupNearestSymbolFrom<MeshOp>(from, name);
}

SmallVector<int64_t> zero::getGroupAxes(MeshOp mesh, DenseI64ArrayAttr axes) {
  if (axes)
    return llvm::to_vector(axes.asArrayRef());
  return llvm::to_vector(llvm::seq<int64_t>(0, mesh.getNumAxes()));
}

int64_t zero::getGroupSize(MeshOp mesh, DenseI64ArrayAttr axes) {
  int64_t size = 1;
  for (int64_t axis : getGroupAxes(mesh, axes))
    size *= mesh.getShape()[axis];
  return size;
}

int64_t zero::getGroupIndex(MeshOp mesh, DenseI64ArrayAttr axes, int64_t rank) {
  // Coordinates: the linear rank, row-major over the mesh shape.
  ArrayRef<int64_t> shape = mesh.getShape();
  SmallVector<int64_t> coordinates(shape.size());
  for (int64_t axis = shape.size() - 1; axis >= 0; --axis) {
    coordinates[axis] = rank % shape[axis];
    rank /= shape[axis];
  }
  int64_t index = 0;
  for (int64_t axis : getGroupAxes(mesh, axes))
    index = index * shape[axis] + coordinates[axis];
  return index;
}

bool zero::isReducible(ReductionKind kind, Type elementType) {
  if (isa<FloatType>(elementType))
    return true;
  auto intType = dyn_cast<IntegerType>(elementType);
  // Integer means are not exact: the division would silently truncate.
  return intType && intType.isSignless() && intType.getWidth() >= 8 &&
         intType.getWidth() <= 64 && kind != ReductionKind::Mean;
}

/// Checks axes that can be judged without the mesh: named at most once, not
/// negative, and not an empty list (a group of no axes is no collective).
static LogicalResult verifyAxesShape(Operation *op, DenseI64ArrayAttr axes) {
  if (!axes)
    return success();
  if (axes.empty())
    return op->emitOpError("axes must name at least one mesh axis; omit "
                           "'axes' for the whole mesh");
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t axis : axes.asArrayRef()) {
    if (axis < 0)
      return op->emitOpError("mesh axis ") << axis << " is negative";
    if (!seen.insert(axis).second)
      return op->emitOpError("mesh axis ") << axis << " is named twice";
  }
  return success();
}

/// Resolves the mesh of `op` and checks its axes against it.
static FailureOr<MeshOp> verifyMeshAndAxes(Operation *op,
                                           FlatSymbolRefAttr meshName,
                                           DenseI64ArrayAttr axes,
                                           SymbolTableCollection &symbolTable) {
  auto mesh = symbolTable.lookupNearestSymbolFrom<MeshOp>(op, meshName);
  if (!mesh)
    return op->emitOpError("refers to unknown mesh ") << meshName;
  if (axes)
    for (int64_t axis : axes.asArrayRef())
      if (axis >= mesh.getNumAxes())
        return op->emitOpError("mesh axis ")
               << axis << " is out of range for mesh " << meshName << " with "
               << mesh.getNumAxes() << " axes";
  return mesh;
}

static LogicalResult verifyDimInRange(Operation *op, StringRef name,
                                      int64_t dim, ShapedType type) {
  if (dim < 0 || dim >= type.getRank())
    return op->emitOpError() << name << " " << dim << " is out of range for a "
                             << (isa<MemRefType>(type) ? "memref" : "tensor")
                             << " of rank " << type.getRank();
  return success();
}

static LogicalResult verifyReduction(Operation *op, ReductionKind kind,
                                     Type elementType) {
  if (!isReducible(kind, elementType))
    return op->emitOpError("cannot reduce elements of type ")
           << elementType << " with '" << stringifyReductionKind(kind)
           << "' (expected a float, or a signless integer of 8 to 64 bits for "
              "sum, max and min)";
  return success();
}

/// Checks that `small` is one of `groupSize` equal parts of `large` along
/// `dim`, all other dimensions and the element type being equal. Dynamic
/// sizes are accepted and checked at run time.
static LogicalResult verifySplitShapes(Operation *op, ShapedType large,
                                       ShapedType small, int64_t dim,
                                       int64_t groupSize, StringRef largeName,
                                       StringRef smallName) {
  if (large.getElementType() != small.getElementType())
    return op->emitOpError("element types differ: ")
           << large.getElementType() << " and " << small.getElementType();
  if (large.getRank() != small.getRank())
    return op->emitOpError() << largeName << " and " << smallName
                             << " ranks differ: " << large.getRank() << " and "
                             << small.getRank();
  for (int64_t d = 0; d < large.getRank(); ++d) {
    int64_t l = large.getDimSize(d), s = small.getDimSize(d);
    if (ShapedType::isDynamic(l) || ShapedType::isDynamic(s))
      continue;
    if (d == dim && l != s * groupSize)
      return op->emitOpError() << largeName << " dimension " << d << " is " << l
                               << ", expected " << smallName << "'s " << s
                               << " times the group size " << groupSize;
    if (d != dim && l != s)
      return op->emitOpError()
             << largeName << " and " << smallName << " differ in dimension "
             << d << ": " << l << " and " << s;
  }
  return success();
}

/// Resolves the mesh of a collective that splits `large` into group-size
/// parts of `small` along `dim`, and checks the shapes against its group.
static LogicalResult
verifySplitAgainstMesh(Operation *op, FlatSymbolRefAttr meshName,
                       DenseI64ArrayAttr axes, SymbolTableCollection &table,
                       ShapedType large, ShapedType small, int64_t dim,
                       StringRef largeName, StringRef smallName) {
  FailureOr<MeshOp> mesh = verifyMeshAndAxes(op, meshName, axes, table);
  if (failed(mesh))
    return failure();
  return verifySplitShapes(op, large, small, dim,
                           zero::getGroupSize(*mesh, axes), largeName,
                           smallName);
}

/// The folded value of a collective that communicates nothing (over a group
/// of one rank, or of a tensor of no elements): its input, when the types
/// allow.
static OpFoldResult foldWithoutCommunication(CollectiveOpInterface op) {
  // Inside zero.async the collective must stay; AwaitOp's canonicalizer
  // removes the pair instead.
  if (isa<AsyncOp>(op->getParentOp()))
    return {};
  if (op.getInput().getType() != op.getResult().getType())
    return {};
  // A tensor of no elements: nothing to send.
  if (op.getInput().getType().getNumElements() == 0)
    return op.getInput();
  MeshOp mesh = op.lookupMesh();
  if (!mesh || op.getGroupSize(mesh) != 1)
    return {};
  return op.getInput();
}

/// What an all-reduce checks without its mesh, in tensor or buffer form.
template <typename OpTy> static LogicalResult verifyAllReduceLike(OpTy op) {
  if (failed(verifyAxesShape(op, op.getAxesAttr())))
    return failure();
  return verifyReduction(op, op.getReduction(),
                         op.getInput().getType().getElementType());
}

/// What a reduce-scatter checks without its mesh, in tensor or buffer form.
template <typename OpTy> static LogicalResult verifyReduceScatterLike(OpTy op) {
  // Axes first, as for every collective, then the dimension, then the
  // reduction.
  if (failed(verifyAxesShape(op, op.getAxesAttr())) ||
      failed(verifyDimInRange(op, "scatter dimension", op.getScatterDim(),
                              op.getInput().getType())))
    return failure();
  return verifyReduction(op, op.getReduction(),
                         op.getInput().getType().getElementType());
}

/// What an all-gather checks without its mesh, in tensor or buffer form.
template <typename OpTy> static LogicalResult verifyAllGatherLike(OpTy op) {
  if (failed(verifyAxesShape(op, op.getAxesAttr())))
    return failure();
  return verifyDimInRange(op, "gather dimension", op.getGatherDim(),
                          op.getInput().getType());
}

//===----------------------------------------------------------------------===//
// MeshOp
//===----------------------------------------------------------------------===//

int64_t MeshOp::getNumRanks() {
  int64_t size = 1;
  for (int64_t extent : getShape())
    size *= extent;
  return size;
}

LogicalResult MeshOp::verify() {
  if (getShape().empty())
    return emitOpError("shape must have at least one axis");
  for (auto [axis, extent] : llvm::enumerate(getShape()))
    if (extent <= 0)
      return emitOpError("axis ")
             << axis << " has size " << extent << "; sizes must be positive";
  return success();
}

//===----------------------------------------------------------------------===//
// ReplicaIndexOp
//===----------------------------------------------------------------------===//

LogicalResult ReplicaIndexOp::verify() {
  return verifyAxesShape(*this, getAxesAttr());
}

LogicalResult
ReplicaIndexOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyMeshAndAxes(*this, getMeshAttr(), getAxesAttr(), symbolTable);
}

OpFoldResult ReplicaIndexOp::fold(FoldAdaptor) {
  MeshOp mesh = lookupMesh(*this, getMeshAttr());
  if (!mesh || zero::getGroupSize(mesh, getAxesAttr()) != 1)
    return {};
  return IntegerAttr::get(IndexType::get(getContext()), 0);
}

//===----------------------------------------------------------------------===//
// AllReduceOp
//===----------------------------------------------------------------------===//

LogicalResult AllReduceOp::verify() { return verifyAllReduceLike(*this); }

LogicalResult AllReduceOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyMeshAndAxes(*this, getMeshAttr(), getAxesAttr(), table);
}

OpFoldResult AllReduceOp::fold(FoldAdaptor) {
  return foldWithoutCommunication(*this);
}

//===----------------------------------------------------------------------===//
// ReduceScatterOp
//===----------------------------------------------------------------------===//

LogicalResult ReduceScatterOp::verify() {
  return verifyReduceScatterLike(*this);
}

LogicalResult ReduceScatterOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifySplitAgainstMesh(*this, getMeshAttr(), getAxesAttr(), table,
                                getInput().getType(), getResult().getType(),
                                getScatterDim(), "input", "result");
}

OpFoldResult ReduceScatterOp::fold(FoldAdaptor) {
  return foldWithoutCommunication(*this);
}

//===----------------------------------------------------------------------===//
// AllGatherOp
//===----------------------------------------------------------------------===//

LogicalResult AllGatherOp::verify() { return verifyAllGatherLike(*this); }

LogicalResult AllGatherOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifySplitAgainstMesh(*this, getMeshAttr(), getAxesAttr(), table,
                                getResult().getType(), getInput().getType(),
                                getGatherDim(), "result", "input");
}

OpFoldResult AllGatherOp::fold(FoldAdaptor) {
  return foldWithoutCommunication(*this);
}

//===----------------------------------------------------------------------===//
// AllToAllOp
//===----------------------------------------------------------------------===//

/// What an all-to-all checks without its mesh, in tensor or buffer form.
template <typename OpTy> static LogicalResult verifyAllToAllLike(OpTy op) {
  if (failed(verifyAxesShape(op, op.getAxesAttr())))
    return failure();
  if (op.getInput().getType().getRank() == 0)
    return op->emitOpError("splits dimension 0, but its input is a scalar");
  return success();
}

/// Checks that dimension 0 of `type` splits into as many parts as the
/// all-to-all's group has ranks.
static LogicalResult verifyAllToAllAgainstMesh(Operation *op,
                                               FlatSymbolRefAttr meshName,
                                               DenseI64ArrayAttr axes,
                                               SymbolTableCollection &table,
                                               ShapedType type) {
  FailureOr<MeshOp> mesh = verifyMeshAndAxes(op, meshName, axes, table);
  if (failed(mesh))
    return failure();
  int64_t groupSize = zero::getGroupSize(*mesh, axes);
  if (type.getDimSize(0) % groupSize != 0)
    return op->emitOpError()
           << "dimension 0 of " << type << " does not split into the group's "
           << groupSize << " parts";
  return success();
}

LogicalResult AllToAllOp::verify() { return verifyAllToAllLike(*this); }

LogicalResult AllToAllOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyAllToAllAgainstMesh(*this, getMeshAttr(), getAxesAttr(), table,
                                   getInput().getType());
}

OpFoldResult AllToAllOp::fold(FoldAdaptor) {
  return foldWithoutCommunication(*this);
}

//===----------------------------------------------------------------------===//
// ShardSliceOp
//===----------------------------------------------------------------------===//

LogicalResult ShardSliceOp::verify() {
  if (failed(verifyAxesShape(*this, getAxesAttr())))
    return failure();
  return verifyDimInRange(*this, "dimension", getDim(), getInput().getType());
}

LogicalResult ShardSliceOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifySplitAgainstMesh(*this, getMeshAttr(), getAxesAttr(), table,
                                getInput().getType(), getResult().getType(),
                                getDim(), "input", "result");
}

OpFoldResult ShardSliceOp::fold(FoldAdaptor) {
  return foldWithoutCommunication(*this);
}

//===----------------------------------------------------------------------===//
// Bufferized collectives
//===----------------------------------------------------------------------===//

template <typename OpTy> static int64_t bufferGroupSize(OpTy op) {
  MeshOp mesh = lookupMesh(op, op.getMeshAttr());
  return mesh ? zero::getGroupSize(mesh, op.getAxesAttr()) : 0;
}

int64_t AllReduceBufferOp::getGroupSize() { return bufferGroupSize(*this); }
int64_t ReduceScatterBufferOp::getGroupSize() { return bufferGroupSize(*this); }
int64_t AllGatherBufferOp::getGroupSize() { return bufferGroupSize(*this); }
int64_t AllToAllBufferOp::getGroupSize() { return bufferGroupSize(*this); }

/// That a buffer collective whose output mirrors its input (all-reduce,
/// all-to-all) has buffers of one shape and element type.
template <typename OpTy> static LogicalResult verifySameBufferShape(OpTy op) {
  MemRefType input = op.getInput().getType(), output = op.getOutput().getType();
  if (input.getShape() != output.getShape() ||
      input.getElementType() != output.getElementType())
    return op.emitOpError("input and output differ in shape or element type: ")
           << input << " and " << output;
  return success();
}

LogicalResult AllReduceBufferOp::verify() {
  if (failed(verifyAllReduceLike(*this)))
    return failure();
  return verifySameBufferShape(*this);
}

LogicalResult
AllReduceBufferOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyMeshAndAxes(*this, getMeshAttr(), getAxesAttr(), table);
}

LogicalResult ReduceScatterBufferOp::verify() {
  return verifyReduceScatterLike(*this);
}

LogicalResult
ReduceScatterBufferOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifySplitAgainstMesh(*this, getMeshAttr(), getAxesAttr(), table,
                                getInput().getType(), getOutput().getType(),
                                getScatterDim(), "input", "output");
}

LogicalResult AllGatherBufferOp::verify() { return verifyAllGatherLike(*this); }

LogicalResult
AllGatherBufferOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifySplitAgainstMesh(*this, getMeshAttr(), getAxesAttr(), table,
                                getOutput().getType(), getInput().getType(),
                                getGatherDim(), "output", "input");
}

LogicalResult AllToAllBufferOp::verify() {
  if (failed(verifyAllToAllLike(*this)))
    return failure();
  return verifySameBufferShape(*this);
}

LogicalResult AllToAllBufferOp::verifySymbolUses(SymbolTableCollection &table) {
  return verifyAllToAllAgainstMesh(*this, getMeshAttr(), getAxesAttr(), table,
                                   getInput().getType());
}

//===----------------------------------------------------------------------===//
// AsyncOp
//===----------------------------------------------------------------------===//

CollectiveOpInterface AsyncOp::getCollective() {
  return dyn_cast<CollectiveOpInterface>(&getBody().front().front());
}

LogicalResult AsyncOp::verify() {
  Block &body = getBody().front();
  if (body.getNumArguments() != 0)
    return emitOpError("body takes no arguments");
  auto yield = dyn_cast<YieldOp>(body.back());
  if (!yield)
    return emitOpError("body must end with 'zero.yield'");
  if (body.getOperations().size() != 2 || !getCollective())
    return emitOpError("body must hold exactly one collective and its "
                       "'zero.yield'");
  if (yield.getValue() != getCollective().getResult())
    return emitOpError("must yield the result of its collective");
  Type valueType = getFuture().getType().getValueType();
  if (yield.getValue().getType() != valueType)
    return emitOpError("yields ") << yield.getValue().getType()
                                  << " but its future holds " << valueType;
  unsigned awaits = llvm::count_if(
      getFuture().getUsers(), [](Operation *u) { return isa<AwaitOp>(u); });
  if (awaits > 1)
    return emitOpError("future is awaited ")
           << awaits << " times; at most once";
  return success();
}

//===----------------------------------------------------------------------===//
// AwaitOp
//===----------------------------------------------------------------------===//

namespace {
/// await(async { c = collective(x) over a group of one }) -> x.
struct AwaitSingleRankGroup : public OpRewritePattern<AwaitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AwaitOp await,
                                PatternRewriter &rewriter) const override {
    auto async = await.getFuture().getDefiningOp<AsyncOp>();
    if (!async)
      return failure();
    CollectiveOpInterface collective = async.getCollective();
    MeshOp mesh = collective.lookupMesh();
    if (!mesh || collective.getGroupSize(mesh) != 1 ||
        collective.getInput().getType() != await.getType())
      return failure();
    rewriter.replaceOp(await, collective.getInput());
    return success();
  }
};
} // namespace

void AwaitOp::build(OpBuilder &builder, OperationState &state, Value future) {
  auto async = future.getDefiningOp<AsyncOp>();
  Value input = async ? async.getCollective().getInput() : Value();
  build(builder, state, cast<FutureType>(future.getType()).getValueType(),
        future, input);
}

LogicalResult AwaitOp::verify() {
  auto async = getFuture().getDefiningOp<AsyncOp>();
  if (!async || !async.getCollective()) {
    if (getInput())
      return emitOpError("reads an input only when its future comes from a "
                         "zero.async");
    return success();
  }
  if (getInput() != async.getCollective().getInput())
    return emitOpError("must read its collective's input (")
           << async.getCollective().getInput()
           << "), which the collective reads until the await";
  return success();
}

namespace {
/// await(ready(x)) -> x.
struct AwaitReady : public OpRewritePattern<AwaitOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AwaitOp await,
                                PatternRewriter &rewriter) const override {
    auto ready = await.getFuture().getDefiningOp<ReadyOp>();
    if (!ready)
      return failure();
    rewriter.replaceOp(await, ready.getValue());
    return success();
  }
};
} // namespace

void AwaitOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                          MLIRContext *context) {
  results.add<AwaitSingleRankGroup, AwaitReady>(context);
}

//===----------------------------------------------------------------------===//
// WaitOp
//===----------------------------------------------------------------------===//

static constexpr llvm::StringLiteral kMemoryAttrName = "zero.memory";

bool zero::isHostArgument(FunctionOpInterface fn, unsigned index) {
  auto memory = fn.getArgAttrOfType<StringAttr>(index, kMemoryAttrName);
  return memory && memory.getValue() == "host";
}

bool zero::hasHostArguments(FunctionOpInterface fn) {
  for (unsigned i = 0; i < fn.getNumArguments(); ++i)
    if (isHostArgument(fn, i))
      return true;
  return false;
}

void zero::setHostArgument(FunctionOpInterface fn, unsigned index, bool host) {
  if (host)
    fn.setArgAttr(index, kMemoryAttrName,
                  StringAttr::get(fn->getContext(), "host"));
  else
    fn.removeArgAttr(index, kMemoryAttrName);
}

bool zero::isHostIterArg(Operation *loop, unsigned position) {
  auto positions =
      loop->getAttrOfType<DenseI64ArrayAttr>(zero::kHostIterArgsAttrName);
  return positions && llvm::is_contained(positions.asArrayRef(),
                                         static_cast<int64_t>(position));
}

void zero::setHostIterArg(Operation *loop, unsigned position, bool host) {
  if (isHostIterArg(loop, position) == host)
    return;
  SmallVector<int64_t> positions;
  if (auto old =
          loop->getAttrOfType<DenseI64ArrayAttr>(zero::kHostIterArgsAttrName))
    llvm::append_range(positions, old.asArrayRef());
  if (host)
    positions.push_back(position);
  else
    llvm::erase(positions, static_cast<int64_t>(position));
  llvm::sort(positions);
  if (positions.empty())
    loop->removeAttr(zero::kHostIterArgsAttrName);
  else
    loop->setAttr(zero::kHostIterArgsAttrName,
                  DenseI64ArrayAttr::get(loop->getContext(), positions));
}

bool zero::isBufferCollective(Operation *op) {
  return isa_and_present<AllReduceBufferOp, ReduceScatterBufferOp,
                         AllGatherBufferOp, AllToAllBufferOp>(op);
}

WaitOp zero::findWaitInBlock(Value request) {
  auto wait = request.hasOneUse()
                  ? dyn_cast<WaitOp>(*request.getUsers().begin())
                  : WaitOp();
  if (!wait || wait->getBlock() != request.getParentBlock())
    return WaitOp();
  return wait;
}

LogicalResult WaitOp::verify() {
  Operation *start = getRequest().getDefiningOp();
  if (!isBufferCollective(start))
    return success();
  if (start->getNumOperands() < 2 || start->getOperand(0) != getInput() ||
      start->getOperand(1) != getOutput())
    return emitOpError("must name the input and output buffers of the "
                       "collective that started the request");
  return success();
}

LogicalResult HostAllocOp::verify() {
  if (!getType().getLayout().isIdentity())
    return emitOpError("must have the identity layout, not ")
           << getType().getLayout();
  return success();
}

bool zero::isContiguousBuffer(MemRefType type) {
  if (!type.hasStaticShape())
    return false;
  return type.getNumElements() == 0 ||
         memref::isStaticShapeAndContiguousRowMajor(type);
}

//===----------------------------------------------------------------------===//
// Block quantization
//===----------------------------------------------------------------------===//

int64_t zero::getNumQuantBlocks(int64_t size, int64_t block) {
  return llvm::divideCeil(size, block);
}

RankedTensorType zero::getQuantScalesType(RankedTensorType floats,
                                          int64_t block) {
  SmallVector<int64_t> shape(floats.getShape());
  shape.back() = getNumQuantBlocks(shape.back(), block);
  return RankedTensorType::get(shape, Float32Type::get(floats.getContext()));
}

RankedTensorType zero::getQuantValuesType(RankedTensorType floats,
                                          int64_t bits) {
  SmallVector<int64_t> shape(floats.getShape());
  if (bits == 4 && !shape.empty())
    shape.back() = llvm::divideCeil(shape.back(), 2);
  return RankedTensorType::get(shape, IntegerType::get(floats.getContext(), 8));
}

int64_t zero::getQuantLevels(int64_t bits) { return (1 << (bits - 1)) - 1; }

StringRef zero::getQuantFormat(int64_t bits) {
  return bits == 4 ? "int4" : "int8";
}

ShardAttr zero::getPerRankLayout(MeshOp mesh, RankedTensorType type) {
  int64_t ranks = 1;
  for (int64_t extent : mesh.getShape())
    ranks *= extent;
  SmallVector<int64_t> allAxes =
      llvm::to_vector(llvm::seq<int64_t>(0, mesh.getShape().size()));
  return ShardAttr::get(type.getContext(),
                        FlatSymbolRefAttr::get(mesh.getSymNameAttr()), allAxes,
                        RankedTensorType::get({ranks, type.getNumElements()},
                                              type.getElementType()),
                        1);
}

StringRef zero::getExchangeFormat(int64_t bits) {
  return bits == kBF16ExchangeBits ? "bf16" : getQuantFormat(bits);
}

double zero::getExchangeHalfStepShare(int64_t bits) {
  return bits == kBF16ExchangeBits ? 1.0 / 256 : 0.5 / getQuantLevels(bits);
}

std::string zero::describeExchangeBound(int64_t bits) {
  if (bits == kBF16ExchangeBits)
    return "|x| / 256";
  return "max|block| / " + std::to_string(2 * getQuantLevels(bits));
}

/// Checks the shapes that `zero.quantize` relates: `values` has the shape of
/// `floats` (for 4 bits, half its last dimension, rounded up), and `scales`
/// has it too but with one element a block in the last dimension; all
/// static, of rank 1 or more. 4-bit blocks are even.
static LogicalResult verifyQuantShapes(Operation *op, RankedTensorType floats,
                                       RankedTensorType values,
                                       RankedTensorType scales, int64_t block,
                                       int64_t bits) {
  if (bits != 8 && bits != 4)
    return op->emitOpError("has ") << bits << " bits a level: 8 or 4 only";
  if (bits == 4 && block % 2)
    return op->emitOpError("has 4-bit levels in blocks of ")
           << block << ": a block must be even, so that no byte holds two "
           << "blocks' levels";
  if (!floats.hasStaticShape() || !values.hasStaticShape() ||
      !scales.hasStaticShape())
    return op->emitOpError("needs static shapes");
  if (floats.getRank() == 0)
    return op->emitOpError("needs a tensor of rank 1 or more: its blocks "
                           "split the last dimension");
  if (RankedTensorType expected = getQuantValuesType(floats, bits);
      values.getShape() != expected.getShape())
    return op->emitOpError("has values of shape ")
           << values << " for floats " << floats << " at " << bits
           << " bits: they must be " << expected;
  ArrayRef<int64_t> scaleShape = getQuantScalesType(floats, block).getShape();
  if (scales.getShape() != scaleShape)
    return op->emitOpError("has scales ")
           << scales << ", but blocks of " << block << " in " << floats
           << " need "
           << RankedTensorType::get(scaleShape, scales.getElementType());
  return success();
}

LogicalResult QuantizeOp::verify() {
  return verifyQuantShapes(*this, getInput().getType(), getValues().getType(),
                           getScales().getType(), getBlock(), getBits());
}

LogicalResult DequantizeOp::verify() {
  return verifyQuantShapes(*this, getResult().getType(), getValues().getType(),
                           getScales().getType(), getBlock(), getBits());
}
