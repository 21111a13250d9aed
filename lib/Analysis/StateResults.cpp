//===- StateResults.cpp - which results are the next state ----------------===//

#include "zero/Analysis/StateResults.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

namespace {

/// A result and the arguments of its type by distance, nearest first.
struct Candidates {
  SmallVector<std::pair<int64_t, unsigned>> byDistance;
  bool paired = false;
};

/// The arguments of `result`'s type that flow into it, each with its
/// distance in ops, found breadth-first backward (nearest first). All are
/// kept: when the nearest are paired with other results, the next nearest
/// may pair.
Candidates findCandidates(func::FuncOp fn, Value result) {
  Candidates found;
  Block &entry = fn.getBody().front();
  llvm::SmallPtrSet<Value, 32> seen{result};
  SmallVector<Value> level{result};
  for (int64_t distance = 0; !level.empty(); ++distance) {
    SmallVector<Value> next;
    for (Value value : level) {
      auto arg = dyn_cast<BlockArgument>(value);
      if (arg && arg.getOwner() == &entry && arg.getType() == result.getType())
        found.byDistance.push_back({distance, arg.getArgNumber()});
      Operation *producer = value.getDefiningOp();
      if (!producer)
        continue;
      for (Value operand : producer->getOperands())
        if (seen.insert(operand).second)
          next.push_back(operand);
    }
    level = std::move(next);
  }
  return found;
}

} // namespace

SmallVector<std::optional<unsigned>> zero::findStateResults(func::FuncOp fn) {
  SmallVector<std::optional<unsigned>> pairs(fn.getNumResults());
  if (fn.isExternal())
    return pairs;
  auto ret = dyn_cast<func::ReturnOp>(fn.getBody().front().getTerminator());
  if (!ret)
    return pairs;
  SmallVector<Candidates> results;
  for (Value value : ret.getOperands())
    results.push_back(findCandidates(fn, value));
  llvm::SmallDenseSet<unsigned, 16> taken;
  for (bool pairedAny = true; pairedAny;) {
    pairedAny = false;
    for (auto [index, result] : llvm::enumerate(results)) {
      if (result.paired)
        continue;
      auto open = llvm::make_filter_range(result.byDistance, [&](auto &c) {
        return !taken.contains(c.second);
      });
      if (open.empty())
        continue;
      int64_t nearest = (*open.begin()).first;
      if (llvm::count_if(open, [&](auto &c) { return c.first == nearest; }) !=
          1)
        continue;
      unsigned arg = (*open.begin()).second;
      pairs[index] = arg;
      taken.insert(arg);
      result.paired = true;
      pairedAny = true;
    }
  }
  return pairs;
}
