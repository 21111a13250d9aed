//===- Buffers.cpp - what bufferization will make of zero's values --------===//

#include "Buffers.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace zero;

/// Whether a result of `user` may share the buffer of its operand.
static bool mayShareBuffer(Operation *user) {
  return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp,
             tensor::ExtractSliceOp, tensor::CastOp, tensor::ReshapeOp,
             tensor::BitcastOp, ShardSliceOp>(user) ||
         user->getNumRegions() > 0 ||
         !(isMemoryEffectFree(user) || isa<linalg::LinalgOp>(user));
}

SetVector<Operation *> zero::findBufferReaders(ValueRange roots, Block &block) {
  SetVector<Operation *> readers;
  SmallVector<Value> worklist(roots.begin(), roots.end());
  DenseSet<Value> seen;
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    if (!seen.insert(value).second)
      continue;
    for (Operation *user : value.getUsers()) {
      if (Operation *inBlock = block.findAncestorOpInBlock(*user))
        readers.insert(inBlock);
      if (mayShareBuffer(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  return readers;
}

MemRefType zero::getDenseBufferType(Type tensor) {
  auto type = cast<RankedTensorType>(tensor);
  return MemRefType::get(type.getShape(), type.getElementType());
}

Operation *zero::createBufferCollective(OpBuilder &b,
                                        CollectiveOpInterface collective,
                                        Type request, Value input,
                                        Value output) {
  Location loc = collective.getLoc();
  Operation *bufferOp;
  if (auto op = dyn_cast<AllReduceOp>(collective.getOperation()))
    bufferOp = AllReduceBufferOp::create(b, loc, request, input, output,
                                         op.getMeshAttr(), op.getAxesAttr(),
                                         op.getReductionAttr());
  else if (auto op = dyn_cast<ReduceScatterOp>(collective.getOperation()))
    bufferOp = ReduceScatterBufferOp::create(
        b, loc, request, input, output, op.getMeshAttr(), op.getAxesAttr(),
        op.getReductionAttr(), op.getScatterDimAttr());
  else if (auto op = dyn_cast<AllGatherOp>(collective.getOperation()))
    bufferOp = AllGatherBufferOp::create(b, loc, request, input, output,
                                         op.getMeshAttr(), op.getAxesAttr(),
                                         op.getGatherDimAttr());
  else if (auto op = dyn_cast<AllToAllOp>(collective.getOperation()))
    bufferOp = AllToAllBufferOp::create(b, loc, request, input, output,
                                        op.getMeshAttr(), op.getAxesAttr());
  else
    return nullptr;
  for (NamedAttribute attr : collective->getDiscardableAttrs())
    bufferOp->setAttr(attr.getName(), attr.getValue());
  return bufferOp;
}
