//===- Tensors.cpp - tensors of any rank as 1-D tensors and back ----------===//

#include "zero/Utils/Tensors.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

/// The reassociation that collapses all `rank` dimensions into one (none for
/// a 0-d tensor).
static SmallVector<ReassociationIndices> collapseAll(int64_t rank) {
  if (rank == 0)
    return {};
  return {llvm::to_vector(llvm::seq<int64_t>(0, rank))};
}

Value zero::flatten(OpBuilder &b, Location loc, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 0)
    return tensor::ExpandShapeOp::create(b, loc, flat, value, collapseAll(0));
  return tensor::CollapseShapeOp::create(b, loc, value,
                                         collapseAll(type.getRank()));
}

Value zero::unflatten(OpBuilder &b, Location loc, Value flat,
                      RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return tensor::CollapseShapeOp::create(b, loc, type, flat, collapseAll(0));
  return tensor::ExpandShapeOp::create(b, loc, type, flat,
                                       collapseAll(type.getRank()));
}

