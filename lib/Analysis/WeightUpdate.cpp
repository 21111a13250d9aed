//===- WeightUpdate.cpp - find the update code of a gradient --------------===//

#include "zero/Analysis/WeightUpdate.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace zero;

bool zero::isSplatConstant(Value value) {
  DenseElementsAttr attr;
  return matchPattern(value, m_Constant(&attr)) && attr.isSplat();
}

/// Whether `op` computes each element of its results from the same element
/// of its operands, all of one shape, with no other effect.
static bool isElementwiseOnShape(Operation *op, ArrayRef<int64_t> shape) {
  if (!op->hasTrait<OpTrait::Elementwise>() || op->getNumRegions() != 0 ||
      !isMemoryEffectFree(op))
    return false;
  auto hasShape = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    return tensor && tensor.getShape() == shape;
  };
  return llvm::all_of(op->getOperandTypes(), hasShape) &&
         llvm::all_of(op->getResultTypes(), hasShape);
}

FailureOr<WeightUpdate> zero::findWeightUpdate(AllReduceOp gradient,
                                               std::string &whyNot) {
  llvm::raw_string_ostream why(whyNot);
  WeightUpdate update;
  update.gradient = gradient;
  Block *block = gradient->getBlock();
  ArrayRef<int64_t> shape = gradient.getType().getShape();

  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist{gradient.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (user->getBlock() != block) {
        why << "the gradient reaches '" << user->getName()
            << "' in another block";
        return failure();
      }
      if (user->hasTrait<OpTrait::IsTerminator>()) {
        update.outputs.push_back(&use);
        continue;
      }
      if (!isElementwiseOnShape(user, shape)) {
        why << "the gradient is used by '" << user->getName()
            << "', which is not elementwise update code";
        return failure();
      }
      if (ops.insert(user))
        llvm::append_range(worklist, user->getResults());
    }
  }
  if (ops.empty()) {
    why << "no update code uses the gradient";
    return failure();
  }

  // Elementwise producers that only the update uses (the momentum decay
  // m * beta, which does not depend on the gradient) belong to it too, so
  // that all update work runs on the shard.
  auto onlyFeedsUpdate = [&](Operation *producer) {
    return producer && producer->getBlock() == block &&
           isElementwiseOnShape(producer, shape) &&
           llvm::all_of(producer->getUsers(),
                        [&](Operation *user) { return ops.contains(user); });
  };
  for (bool grew = true; grew;) {
    grew = false;
    for (unsigned i = 0; i < ops.size(); ++i)
      for (Value operand : ops[i]->getOperands()) {
        Operation *producer = operand.getDefiningOp();
        if (!ops.contains(producer) && onlyFeedsUpdate(producer))
          grew |= ops.insert(producer);
      }
  }

  update.ops = ops.takeVector();
  llvm::sort(update.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  llvm::SmallPtrSet<Operation *, 16> inUpdate(update.ops.begin(),
                                              update.ops.end());
  for (Operation *op : update.ops)
    for (Value operand : op->getOperands())
      if (operand != gradient.getResult() &&
          !inUpdate.contains(operand.getDefiningOp()) &&
          !isSplatConstant(operand))
        update.inputs.insert(operand);
  return update;
}
