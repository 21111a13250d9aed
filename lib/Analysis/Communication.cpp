//===- Communication.cpp - bytes moved by collectives ---------------------===//

#include "zero/Analysis/Communication.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zero;

std::optional<int64_t> zero::getTensorBytes(RankedTensorType type) {
  if (!type.hasStaticShape())
    return std::nullopt;
  Type element = type.getElementType();
  if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  return type.getNumElements() * (element.getIntOrFloatBitWidth() / 8);
}

std::optional<int64_t> zero::getBytesSentPerRank(CollectiveOpInterface op,
                                                 int64_t groupSize) {
  if (!op.communicates())
    return 0;
  std::optional<int64_t> inBytes = getTensorBytes(op.getInput().getType());
  std::optional<int64_t> outBytes = getTensorBytes(op.getResult().getType());
  if (!inBytes || !outBytes)
    return std::nullopt;
  // Each rank sends (N-1) of the N chunks of the full buffer once per phase.
  int64_t full = llvm::TypeSwitch<Operation *, int64_t>(op)
                     .Case<AllReduceOp>([&](auto) { return 2 * *inBytes; })
                     .Case<ReduceScatterOp>([&](auto) { return *inBytes; })
                     .Case<AllGatherOp>([&](auto) { return *outBytes; })
                     .Case<AllToAllOp>([&](auto) { return *inBytes; })
                     .Default([&](auto) { return *inBytes; });
  return full / groupSize * (groupSize - 1) +
         full % groupSize * (groupSize - 1) / groupSize;
}

std::optional<int64_t> zero::getExecutionCount(Operation *op) {
  int64_t count = 1;
  for (Operation *parent = op->getParentOp();
       parent && !isa<FunctionOpInterface>(parent);
       parent = parent->getParentOp()) {
    auto loop = dyn_cast<LoopLikeOpInterface>(parent);
    if (!loop)
      continue;
    std::optional<APInt> trips = loop.getStaticTripCount();
    if (!trips)
      return std::nullopt;
    count *= trips->getSExtValue();
  }
  return count;
}
