//===- UnshareInits.cpp - one destination value per op --------------------===//
//
// Copies shared empty and filled destination tensors so that One-Shot
// Bufferize's conflict analysis stays linear. See Passes.td for the
// contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"
#include "zero/Target/CPU/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROUNSHAREINITS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

/// Whether `value`'s definition is cheap to repeat for each use: an empty
/// tensor, or an empty tensor filled with a scalar.
bool isRepeatableInit(Value value) {
  if (value.getDefiningOp<tensor::EmptyOp>())
    return true;
  auto fill = value.getDefiningOp<linalg::FillOp>();
  return fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
}

/// A copy of `value`'s definition (and of the empty tensor a fill writes)
/// at `b`'s insertion point.
Value repeatInit(OpBuilder &b, Value value) {
  Operation *def = value.getDefiningOp();
  IRMapping mapping;
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    Value empty = fill.getOutputs()[0];
    mapping.map(empty, b.clone(*empty.getDefiningOp())->getResult(0));
  }
  return b.clone(*def, mapping)
      ->getResult(cast<OpResult>(value).getResultNumber());
}

struct ZeroUnshareInitsPass
    : public zero::impl::ZeroUnshareInitsBase<ZeroUnshareInitsPass> {
  void runOnOperation() override {
    SmallVector<DestinationStyleOpInterface> ops;
    getOperation()->walk(
        [&](DestinationStyleOpInterface op) { ops.push_back(op); });
    // The shared values whose first destination use has been seen.
    llvm::DenseSet<Value> claimed;
    for (DestinationStyleOpInterface op : ops) {
      for (OpOperand &init : op.getDpsInitsMutable()) {
        Value value = init.get();
        if (!isa<RankedTensorType>(value.getType()) ||
            !isRepeatableInit(value) || value.hasOneUse() ||
            value.getDefiningOp()->getBlock() != op->getBlock())
          continue;
        if (claimed.insert(value).second)
          continue; // The first destination keeps the original.
        OpBuilder b(op);
        init.set(repeatInit(b, value));
      }
    }
  }
};

} // namespace
