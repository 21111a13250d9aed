//===- StateResults.cpp - which results are the next state ----------------===//

#include "zero/Analysis/StateResults.h"
#include "llvm/ADT/SmallPtrSet.h"

using namespace mlir;

SmallVector<zero::StateSource>
zero::findStateSources(Value value, function_ref<bool(Value)> accept,
                       function_ref<bool(Operation *)> follow) {
  SmallVector<StateSource> found;
  llvm::SmallPtrSet<Value, 32> seen{value};
  SmallVector<Value> level{value};
  for (int64_t distance = 0; !level.empty(); ++distance) {
    SmallVector<Value> next;
    for (Value source : level) {
      if (accept(source))
        found.push_back({distance, source});
      Operation *producer = source.getDefiningOp();
      if (!producer || !follow(producer))
        continue;
      for (Value operand : producer->getOperands())
        if (seen.insert(operand).second)
          next.push_back(operand);
    }
    level = std::move(next);
  }
  return found;
}

SmallVector<std::pair<size_t, Value>>
zero::pairNearestSources(ArrayRef<SmallVector<StateSource>> sources) {
  SmallVector<std::pair<size_t, Value>> pairs;
  SmallVector<bool> paired(sources.size());
  llvm::SmallPtrSet<Value, 16> taken;
  for (bool pairedAny = true; pairedAny;) {
    pairedAny = false;
    for (auto [index, candidates] : llvm::enumerate(sources)) {
      if (paired[index])
        continue;
      auto open = llvm::make_filter_range(
          candidates, [&](const auto &c) { return !taken.contains(c.value); });
      if (open.empty())
        continue;
      int64_t nearest = (*open.begin()).distance;
      if (llvm::count_if(
              open, [&](const auto &c) { return c.distance == nearest; }) != 1)
        continue;
      Value source = (*open.begin()).value;
      pairs.push_back({index, source});
      taken.insert(source);
      paired[index] = true;
      pairedAny = true;
    }
  }
  return pairs;
}

SmallVector<std::optional<unsigned>> zero::findStateResults(func::FuncOp fn) {
  SmallVector<std::optional<unsigned>> pairs(fn.getNumResults());
  if (fn.isExternal())
    return pairs;
  Block &entry = fn.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(entry.getTerminator());
  if (!ret)
    return pairs;
  SmallVector<SmallVector<StateSource>> sources;
  for (Value result : ret.getOperands())
    sources.push_back(findStateSources(
        result,
        [&](Value value) {
          auto arg = dyn_cast<BlockArgument>(value);
          return arg && arg.getOwner() == &entry &&
                 arg.getType() == result.getType();
        },
        [](Operation *) { return true; }));
  for (auto [index, source] : pairNearestSources(sources))
    pairs[index] = cast<BlockArgument>(source).getArgNumber();
  return pairs;
}
