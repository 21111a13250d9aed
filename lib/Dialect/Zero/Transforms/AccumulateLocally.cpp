//===- AccumulateLocally.cpp - one reduction per accumulated step ---------===//
//
// Moves the all-reduce of a micro-batch gradient out of the loop that sums
// the micro-batches: the loop sums local gradients, and their sum is reduced
// once (Passes.td has the numerical contract).
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "zero/Analysis/Accumulation.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

namespace zero {
#define GEN_PASS_DEF_ZEROACCUMULATELOCALLY
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// An all-reduce whose result one loop iteration adds to a carried sum.
struct Accumulation {
  AllReduceOp reduce;
  Operation *add;
  /// The carried sum's index among the loop's iter_args.
  unsigned index;
};

/// The carried value `add` adds `reduced` to, when it is one of `loop`'s
/// region iter_args.
BlockArgument carriedOperand(Operation *add, Value reduced, scf::ForOp loop) {
  std::optional<std::pair<Value, Value>> summands = getElementwiseSummands(add);
  if (!summands)
    return nullptr;
  Value other = summands->first == reduced ? summands->second : summands->first;
  auto arg = dyn_cast<BlockArgument>(other);
  if (!arg || arg.getOwner() != loop.getBody() ||
      arg.getArgNumber() < loop.getNumInductionVars())
    return nullptr;
  return arg;
}

/// Whether every use of `value` is in `op`.
bool onlyUsedBy(Value value, Operation *op) {
  return llvm::all_of(value.getUsers(),
                      [&](Operation *user) { return user == op; });
}

/// Why `reduce`, in `loop`'s body, cannot be reduced after the loop, or ""
/// when it can (`accumulation` then says how); std::nullopt when it is not
/// an accumulation at all (its result is not added to a carried value).
std::optional<std::string> checkAccumulation(AllReduceOp reduce,
                                             scf::ForOp loop,
                                             Accumulation &accumulation) {
  Value reduced = reduce.getResult();
  if (reduced.use_empty())
    return std::nullopt;
  Operation *add = *reduced.getUsers().begin();
  if (!onlyUsedBy(reduced, add) || add->getBlock() != loop.getBody() ||
      add->getNumResults() != 1)
    return std::nullopt;
  BlockArgument carried = carriedOperand(add, reduced, loop);
  if (!carried)
    return std::nullopt;
  unsigned index = carried.getArgNumber() - loop.getNumInductionVars();
  if (reduce.getReduction() != ReductionKind::Sum &&
      reduce.getReduction() != ReductionKind::Mean)
    return std::string("its reduction is ") +
           stringifyReductionKind(reduce.getReduction()).str() +
           ", which a sum does not commute with";
  if (!onlyUsedBy(carried, add))
    return "the loop reads the partial sum (iter_arg #" +
           std::to_string(index) + ") other than to add to it";
  Value sum = add->getResult(0);
  auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
  if (!sum.hasOneUse() || *sum.getUsers().begin() != yield ||
      yield.getOperand(index) != sum)
    return "the sum is used in the loop, or yielded other than as the next "
           "value of iter_arg #" +
           std::to_string(index);
  auto type = cast<RankedTensorType>(reduced.getType());
  if (!type.hasStaticShape())
    return std::string("its tensor has a dynamic shape");
  accumulation = {reduce, add, index};
  return std::string();
}

/// Whether `value` is a constant tensor of zeros (+0.0 for floats).
bool isZeros(Value value) {
  return matchPattern(value, m_PosZeroFloat()) || matchPattern(value, m_Zero());
}

/// Sums local values in the loop and reduces the sum after it.
void reduceAfterLoop(scf::ForOp loop, const Accumulation &accumulation) {
  AllReduceOp reduce = accumulation.reduce;
  Location loc = reduce.getLoc();
  auto type = cast<RankedTensorType>(reduce.getType());
  OpOperand &initOperand = loop.getInitArgsMutable()[accumulation.index];
  Value init = initOperand.get();

  OpBuilder b(loop);
  bool startsAtZero = isZeros(init);
  if (!startsAtZero)
    initOperand.set(arith::ConstantOp::create(b, loc, b.getZeroAttr(type)));
  // The loop adds the local value where it added the reduced one.
  reduce.getResult().replaceAllUsesWith(reduce.getInput());

  b.setInsertionPointAfter(loop);
  Value local = loop.getResult(accumulation.index);
  auto reduced =
      AllReduceOp::create(b, loc, local, reduce.getMeshAttr(),
                          reduce.getAxesAttr(), reduce.getReductionAttr());
  Value sum = reduced.getResult();
  if (!startsAtZero)
    sum = isa<FloatType>(type.getElementType())
              ? arith::AddFOp::create(b, loc, init, sum).getResult()
              : arith::AddIOp::create(b, loc, init, sum).getResult();
  local.replaceAllUsesExcept(sum, reduced);
  reduce.erase();
}

struct ZeroAccumulateLocallyPass
    : public zero::impl::ZeroAccumulateLocallyBase<ZeroAccumulateLocallyPass> {
  void runOnOperation() override {
    SmallVector<std::pair<scf::ForOp, Accumulation>> moves;
    bool anyCandidate = false;
    getOperation().walk([&](AllReduceOp reduce) {
      auto loop = dyn_cast<scf::ForOp>(reduce->getParentOp());
      if (!loop)
        return;
      Accumulation accumulation;
      std::optional<std::string> why =
          checkAccumulation(reduce, loop, accumulation);
      if (!why)
        return;
      anyCandidate = true;
      if (!why->empty()) {
        mlir::emitRemark(reduce.getLoc())
            << "accumulation left as is, one reduction per "
               "iteration: "
            << *why;
        return;
      }
      moves.push_back({loop, accumulation});
    });
    for (auto &[loop, accumulation] : moves) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      reduceAfterLoop(loop, accumulation);
      InFlightDiagnostic remark = mlir::emitRemark(loop.getLoc())
                                  << "accumulated gradient (iter_arg #"
                                  << accumulation.index
                                  << ") reduced once after the loop";
      if (trips)
        remark << ", instead of once in each of " << trips->getZExtValue()
               << " iterations";
    }
    if (!anyCandidate)
      mlir::emitRemark(getOperation().getLoc())
          << "zero-accumulate-locally: no all-reduce whose result a loop adds "
             "to a value it carries";
  }
};

} // namespace
