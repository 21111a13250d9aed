//===- Boundary.cpp - state passed as shards at the function boundary -----===//

#include "Boundary.h"
#include "mlir/IR/SymbolTable.h"

using namespace mlir;
using namespace zero;

std::string zero::whySignatureFixed(func::FuncOp func, Operation *module) {
  if (!func.getBody().hasOneBlock())
    return "has more than one block";
  if (!SymbolTable::symbolKnownUseEmpty(func, module))
    return "is called in the module";
  return "";
}

OpOperand *zero::findCarriedReturn(scf::ForOp loop, BlockArgument iterArg,
                                   std::string &why) {
  auto func = dyn_cast<func::FuncOp>(loop->getParentOp());
  if (!func) {
    why = "the loop is not in the function's body";
    return nullptr;
  }
  auto argument = dyn_cast<BlockArgument>(loop.getTiedLoopInit(iterArg)->get());
  if (!argument || argument.getOwner() != &func.getBody().front()) {
    why = "the loop does not start it from an argument of the function";
    return nullptr;
  }
  OpResult result = loop.getTiedLoopResult(iterArg);
  if (!result.hasOneUse() ||
      !isa<func::ReturnOp>(result.use_begin()->getOwner())) {
    why = "the function does not return the loop's result as it is";
    return nullptr;
  }
  return &*result.use_begin();
}

void zero::markShardBoundary(func::FuncOp func, unsigned argument,
                             unsigned result, const GroupPartition &layout,
                             RankedTensorType whole) {
  MeshOp mesh = lookupMesh(func, layout.mesh);
  auto attr =
      ShardAttr::get(func.getContext(), layout.mesh,
                     getGroupAxes(mesh, layout.axes), whole, layout.alignment);
  func.getArgument(argument).setType(layout.shardType(whole.getElementType()));
  func.setArgAttr(argument, "zero.shard", attr);
  func.setResultAttr(result, "zero.shard", attr);
}

BlockArgument zero::startFromShard(scf::ForOp loop, BlockArgument iterArg,
                                   OpOperand *returned,
                                   const GroupPartition &layout,
                                   RankedTensorType whole) {
  OpOperand *init = loop.getTiedLoopInit(iterArg);
  auto argument = cast<BlockArgument>(init->get());
  auto func = cast<func::FuncOp>(loop->getParentOp());
  SmallVector<OpOperand *> others;
  for (OpOperand &use : argument.getUses())
    if (&use != init)
      others.push_back(&use);
  markShardBoundary(func, argument.getArgNumber(), returned->getOperandNumber(),
                    layout, whole);
  iterArg.setType(argument.getType());
  loop.getTiedLoopResult(iterArg).setType(argument.getType());
  if (!others.empty()) {
    OpBuilder top = OpBuilder::atBlockBegin(&func.getBody().front());
    Value full = gatherWhole(top, func.getLoc(), argument, layout, whole);
    for (OpOperand *use : others)
      use->set(full);
  }
  return argument;
}

void zero::updateFunctionType(func::FuncOp func) {
  Operation *ret = func.getBody().front().getTerminator();
  func.setFunctionType(FunctionType::get(
      func.getContext(), func.getBody().front().getArgumentTypes(),
      ret->getOperandTypes()));
}
