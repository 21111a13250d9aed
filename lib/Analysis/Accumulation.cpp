//===- Accumulation.cpp - loops that sum micro-batches --------------------===//

#include "zero/Analysis/Accumulation.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

using namespace mlir;

std::optional<std::pair<Value, Value>>
zero::getElementwiseSummands(Operation *op) {
  if (!op)
    return std::nullopt;
  if (isa<arith::AddFOp, arith::AddIOp>(op))
    return std::make_pair(op->getOperand(0), op->getOperand(1));
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !linalgOp.hasPureTensorSemantics() ||
      linalgOp.getNumDpsInputs() != 2 || linalgOp.getNumDpsInits() != 1 ||
      linalgOp.getNumParallelLoops() != linalgOp.getNumLoops() ||
      !llvm::all_of(linalgOp.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return std::nullopt;
  Block &body = op->getRegion(0).front();
  if (body.getOperations().size() != 2)
    return std::nullopt;
  Operation *sum = body.getTerminator()->getOperand(0).getDefiningOp();
  if (!sum || !isa<arith::AddFOp, arith::AddIOp>(sum))
    return std::nullopt;
  Value x = body.getArgument(0), y = body.getArgument(1);
  if (!((sum->getOperand(0) == x && sum->getOperand(1) == y) ||
        (sum->getOperand(0) == y && sum->getOperand(1) == x)))
    return std::nullopt;
  return std::make_pair(linalgOp.getDpsInputs()[0], linalgOp.getDpsInputs()[1]);
}

bool zero::isAccumulationLoop(scf::ForOp loop) {
  if (loop.getNumRegionIterArgs() == 0)
    return false;
  Operation *yield = loop.getBody()->getTerminator();
  for (auto [carried, yielded] :
       llvm::zip(loop.getRegionIterArgs(), yield->getOperands())) {
    std::optional<std::pair<Value, Value>> summands =
        getElementwiseSummands(yielded.getDefiningOp());
    if (!summands ||
        (summands->first != carried && summands->second != carried))
      return false;
  }
  return true;
}
