//===- DeferAllGather.cpp - carry weights as shards across iterations -----===//
//
// In a training loop sharded by zero-shard-weight-update, each iteration
// gathers the new weights right after the update and carries them whole to
// the next iteration. This pass carries the shard instead and the gathered
// copy beside it, in bf16 when the forward pass reads only a bf16 rounding of
// the weights, so that the gather can overlap the next iteration's forward
// pass. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "Boundary.h"
#include "Layout.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/LoopLikeInterface.h"
#include "zero/Analysis/WeightUpdate.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/Loops/ReductionOrder.h"

namespace zero {
#define GEN_PASS_DEF_ZERODEFERALLGATHER
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// One loop-carried weight whose next value the loop body gathers whole from
/// the shard the update computed.
struct DeferredWeight {
  /// The iteration argument: whole before, the shard after the rewrite.
  BlockArgument arg;
  RankedTensorType whole;
  /// The updated shard the body gathers, and the layout of that gather.
  Value newShard;
  GroupPartition layout;
  /// The slice of `arg` the update reads, replaced by the carried shard.
  SmallVector<ShardSliceOp> slices;
  /// The other uses of `arg`: the forward and backward passes.
  SmallVector<OpOperand *> readers;
  /// The element type the copy for the readers is gathered in (with
  /// gather-dtype=int8, the one it is dequantized into).
  Type gatherElement;
  /// With shard-function-boundary, the return operand through which the
  /// loop's last shard leaves the function as it is; null when the weight
  /// enters and leaves whole.
  OpOperand *returned = nullptr;
};

/// `value` peeled of a reshape to the whole shape and of dropped padding:
/// the all-gather that zero-shard-weight-update's gatherWhole made, or null.
AllGatherOp matchGatheredWhole(Value value, RankedTensorType whole) {
  if (auto expand = value.getDefiningOp<tensor::ExpandShapeOp>())
    value = expand.getSrc();
  if (auto slice = value.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (!slice.hasUnitStride() || !slice.hasZeroOffset() ||
        slice.getType().getNumElements() != whole.getNumElements())
      return nullptr;
    value = slice.getSource();
  }
  auto gather = value.getDefiningOp<AllGatherOp>();
  if (!gather || gather.getInput().getType().getRank() != 1 ||
      gather.getType().getNumElements() < whole.getNumElements() ||
      gather.getType().getElementType() != whole.getElementType() ||
      gather.getGatherDim() != 0)
    return nullptr;
  auto flat = dyn_cast<RankedTensorType>(value.getType());
  if (!flat || flat.getRank() != 1)
    return nullptr;
  return gather;
}

/// The shard_slice that a use of the whole weight feeds through its
/// flattening and padding (each used once), when it cuts the same layout.
ShardSliceOp matchSlice(OpOperand &use, AllGatherOp gather) {
  Operation *op = use.getOwner();
  auto next = [](Operation *op) -> Operation * {
    return op->hasOneUse() ? *op->getUsers().begin() : nullptr;
  };
  if (op && isa<tensor::CollapseShapeOp>(op))
    op = next(op);
  if (op && isa<tensor::PadOp>(op))
    op = next(op);
  auto slice = dyn_cast_or_null<ShardSliceOp>(op);
  if (!slice || slice.getMeshAttr() != gather.getMeshAttr() ||
      slice.getAxesAttr() != gather.getAxesAttr() ||
      slice.getType() != gather.getInput().getType() ||
      slice.getInput().getType() != gather.getType())
    return nullptr;
  return slice;
}

struct ZeroDeferAllGatherPass
    : public zero::impl::ZeroDeferAllGatherBase<ZeroDeferAllGatherPass> {
  using Base::Base;

  /// Whether the copies travel as int8 blocks with their scales.
  bool quantizes() const {
    return gatherDtype == GatherDtype::Int8 || gatherDtype == GatherDtype::Int4;
  }
  /// Bits a level of the quantized copy.
  int64_t bits() const { return gatherDtype == GatherDtype::Int4 ? 4 : 8; }
  /// The option's spelling, for remarks.
  std::string option() const {
    return ("gather-dtype=" + getQuantFormat(bits())).str();
  }

  /// The forced gather element type, null for auto and int8 (whose copy is
  /// dequantized into the type the readers read).
  Type forcedGatherType() {
    Builder b(&getContext());
    switch (gatherDtype) {
    case GatherDtype::Auto:
    case GatherDtype::Int8:
    case GatherDtype::Int4:
      return Type();
    case GatherDtype::BF16:
      return b.getBF16Type();
    case GatherDtype::F16:
      return b.getF16Type();
    case GatherDtype::F32:
      return b.getF32Type();
    }
    llvm_unreachable("unknown gather-dtype");
  }

  /// What the readers consume: the element type of the one truncation they
  /// all go through (a bf16 model copy), or the weight's own.
  static Type readElement(const DeferredWeight &weight) {
    Type common;
    for (OpOperand *reader : weight.readers) {
      Type element = truncatedElement(reader);
      if (!element || (common && common != element))
        return weight.whole.getElementType();
      common = element;
    }
    return common ? common : weight.whole.getElementType();
  }

  /// The weights of `loop` whose new value is gathered from an update shard.
  SmallVector<DeferredWeight> findWeights(scf::ForOp loop, Type forced) {
    SmallVector<DeferredWeight> weights;
    auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
    for (BlockArgument arg : loop.getRegionIterArgs()) {
      auto whole = dyn_cast<RankedTensorType>(arg.getType());
      if (!whole || !whole.hasStaticShape() ||
          !isa<FloatType>(whole.getElementType()))
        continue;
      Value next = yield.getOperand(arg.getArgNumber() - 1);
      AllGatherOp gather = matchGatheredWhole(next, whole);
      if (!gather)
        continue;
      MeshOp mesh = lookupMesh(gather, gather.getMeshAttr());
      if (!mesh)
        continue;
      int64_t groupSize = getGroupSize(mesh, gather.getAxesAttr());
      // Aligned to a full reduction's blocks when the update had one.
      int64_t block = getReductionBlock(whole.getNumElements());
      int64_t aligned =
          ShardAttr::getShardElements(whole.getNumElements(), groupSize, block);
      bool isAligned = gather.getType().getNumElements() == aligned * groupSize;
      GroupPartition layout(gather.getMeshAttr(), gather.getAxesAttr(),
                            whole.getNumElements(), groupSize,
                            isAligned ? block : 1);
      if (layout.paddedElements != gather.getType().getNumElements())
        continue;
      DeferredWeight weight{arg, whole, gather.getInput(), layout, {}, {}, {}};
      for (OpOperand &use : arg.getUses()) {
        if (ShardSliceOp slice = matchSlice(use, gather))
          weight.slices.push_back(slice);
        else
          weight.readers.push_back(&use);
      }
      weight.gatherElement = forced ? forced : readElement(weight);
      weights.push_back(std::move(weight));
    }
    return weights;
  }

  /// `value` converted to element type `element` (truncated or extended).
  static Value convert(OpBuilder &b, Location loc, Value value, Type element) {
    auto type = cast<RankedTensorType>(value.getType());
    if (type.getElementType() == element)
      return value;
    auto to = type.clone(element);
    if (element.getIntOrFloatBitWidth() <
        type.getElementType().getIntOrFloatBitWidth())
      return arith::TruncFOp::create(b, loc, to, value);
    return arith::ExtFOp::create(b, loc, to, value);
  }

  /// Erases `slice` and the flattening and padding that only fed it: they
  /// read the whole weight, which the loop no longer carries.
  static void eraseSliceChain(ShardSliceOp slice) {
    Operation *op = slice;
    while (op && op->use_empty()) {
      Operation *producer = op->getOperand(0).getDefiningOp();
      op->erase();
      op = isa_and_nonnull<tensor::PadOp, tensor::CollapseShapeOp>(producer)
               ? producer
               : nullptr;
    }
  }

  /// Erases the whole-weight gather the loop no longer yields (matched by
  /// matchGatheredWhole: reshape, unpadding slice, all-gather) where nothing
  /// else reads it.
  static void eraseDeadGather(Value whole) {
    Operation *op = whole.getDefiningOp();
    while (op && op->use_empty()) {
      Operation *producer =
          isa<AllGatherOp>(op) ? nullptr : op->getOperand(0).getDefiningOp();
      op->erase();
      op = producer;
    }
  }

  /// With shard-function-boundary, marks each weight of `loop` that can
  /// enter and leave its function as the shard itself (findCarriedReturn),
  /// and says why of each that cannot.
  void findBoundaries(scf::ForOp loop, SmallVector<DeferredWeight> &weights,
                      llvm::DenseMap<Operation *, std::string> &fixed) {
    auto func = dyn_cast<func::FuncOp>(loop->getParentOp());
    if (!shardFunctionBoundary || !func)
      return;
    auto [it, inserted] = fixed.try_emplace(func);
    if (inserted) {
      it->second = whySignatureFixed(func, getOperation());
      if (!it->second.empty())
        mlir::emitRemark(func.getLoc(),
                         "zero-defer-all-gather: the weights its training "
                         "loop carries enter and leave whole, not sharded at "
                         "the function boundary: the function ")
            << it->second;
    }
    if (!it->second.empty())
      return;
    for (DeferredWeight &weight : weights) {
      std::string why;
      weight.returned = findCarriedReturn(loop, weight.arg, why);
      if (!weight.returned)
        mlir::emitRemark(loop.getLoc(), "zero-defer-all-gather: the ")
            << weight.whole << " weight carried as iter_arg "
            << weight.arg.getArgNumber() - loop.getNumInductionVars()
            << " enters and leaves the function whole, sliced before the "
               "loop and gathered after it: "
            << why;
    }
  }

  /// The function's argument that `loop` starts `weight` from becomes its
  /// shard (startFromShard), and the result the function returns it
  /// through, the last shard. Returns the first iteration's copy, gathered
  /// from the shard.
  Value enterAsShard(OpBuilder &before, scf::ForOp loop,
                     DeferredWeight &weight) {
    BlockArgument argument = startFromShard(loop, weight.arg, weight.returned,
                                            weight.layout, weight.whole);
    Location loc = loop.getLoc();
    Value part = convert(before, loc, argument, weight.gatherElement);
    return gatherWhole(before, loc, part, weight.layout,
                       weight.whole.clone(weight.gatherElement));
  }

  /// Carries each weight of `loop` as a shard plus its gathered copy.
  void defer(scf::ForOp loop, SmallVector<DeferredWeight> &weights) {
    Location loc = loop.getLoc();
    OpBuilder before(loop);
    SmallVector<Value> copies;
    for (DeferredWeight &weight : weights) {
      OpOperand *init = loop.getTiedLoopInit(weight.arg);
      Value whole = init->get();
      if (weight.returned) {
        copies.push_back(enterAsShard(before, loop, weight));
      } else {
        // The first iteration's copy: the whole initial weight, converted
        // here (no gather: every rank has it).
        copies.push_back(convert(before, loc, whole, weight.gatherElement));
        init->set(sliceShard(before, loc, whole, weight.layout));
      }
      weight.arg.setType(init->get().getType());
      loop.getTiedLoopResult(weight.arg).setType(weight.arg.getType());
      auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
      Value gathered = yield.getOperand(weight.arg.getArgNumber() - 1);
      yield->setOperand(weight.arg.getArgNumber() - 1, weight.newShard);
      eraseDeadGather(gathered);
      for (ShardSliceOp slice : weight.slices) {
        slice.getResult().replaceAllUsesWith(weight.arg);
        eraseSliceChain(slice);
      }
    }

    // The next iteration's copy, gathered at the end of this one.
    IRRewriter rewriter(loop.getContext());
    rewriter.setInsertionPoint(loop);
    auto newYields = [&](OpBuilder &b, Location yieldLoc,
                         ArrayRef<BlockArgument>) {
      SmallVector<Value> gathered;
      for (DeferredWeight &weight : weights) {
        RankedTensorType copy = weight.whole.clone(weight.gatherElement);
        if (quantizes()) {
          gathered.push_back(gatherWholeQuantized(b, yieldLoc, weight.newShard,
                                                  weight.layout, copy,
                                                  quantizeBlock, bits()));
          continue;
        }
        Value part =
            convert(b, yieldLoc, weight.newShard, weight.gatherElement);
        gathered.push_back(gatherWhole(b, yieldLoc, part, weight.layout, copy));
      }
      return gathered;
    };
    // The old loop's block (and its arguments) goes with the replacement:
    // keep where each weight's argument is.
    SmallVector<unsigned> argIndices =
        llvm::map_to_vector(weights, [](DeferredWeight &weight) {
          return weight.arg.getArgNumber() - 1;
        });
    auto replaced = cast<LoopLikeOpInterface>(loop.getOperation())
                        .replaceWithAdditionalYields(
                            rewriter, copies,
                            /*replaceInitOperandUsesInLoop=*/false, newYields);
    auto newLoop = cast<scf::ForOp>(replaced->getOperation());
    ArrayRef<BlockArgument> copyArgs =
        newLoop.getRegionIterArgs().take_back(weights.size());

    for (auto [weight, copy, argIndex] :
         llvm::zip(weights, copyArgs, argIndices)) {
      // The readers take the carried copy: a truncation to its type is the
      // copy itself; anything else gets it converted back once.
      Value converted;
      for (OpOperand *reader : weight.readers) {
        Operation *rounding = reader->getOwner();
        if (truncatedElement(reader) &&
            rounding->getResult(0).getType() == copy.getType()) {
          rounding->getResult(0).replaceAllUsesWith(copy);
          rounding->erase();
          continue;
        }
        if (!converted) {
          OpBuilder top = OpBuilder::atBlockBegin(newLoop.getBody());
          converted = convert(top, loc, copy, weight.whole.getElementType());
        }
        reader->set(converted);
      }
      // At the function boundary the caller takes the last shard.
      if (weight.returned)
        continue;
      // After the loop, the whole weight for the caller, exact: the last
      // copy when it was gathered in full precision (also right when the
      // loop runs no iteration: then it is the initial weight), else (a
      // narrower or quantized copy) the last shard gathered once more.
      OpResult shard =
          newLoop.getTiedLoopResult(newLoop.getRegionIterArgs()[argIndex]);
      SmallVector<OpOperand *> uses =
          llvm::to_vector(llvm::make_pointer_range(shard.getUses()));
      Value whole = newLoop.getTiedLoopResult(copy);
      if (quantizes() || whole.getType() != weight.whole) {
        OpBuilder after(newLoop->getContext());
        after.setInsertionPointAfter(newLoop);
        whole = gatherWhole(after, loc, shard, weight.layout, weight.whole);
      }
      for (OpOperand *use : uses)
        use->set(whole);
    }
  }

  /// What a per-use gather's copy reaches through reshapes and slices: a
  /// terminator means the whole weight leaves (a result, a carried value),
  /// which must stay exact.
  static bool copyLeaves(Value value) {
    for (Operation *user : value.getUsers()) {
      if (user->hasTrait<OpTrait::IsTerminator>())
        return true;
      if (isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
              tensor::CollapseShapeOp>(user) &&
          copyLeaves(user->getResult(0)))
        return true;
    }
    return false;
  }

  /// Stage 3's gathers, one before each op that reads a weight (marked
  /// `zero.for_use` by zero-shard-weight-update), sent in int8 or int4
  /// blocks: the op reads the dequantized copy; the shard, which the update
  /// reads, stays exact. Returns the functions where one was.
  DenseSet<Operation *> quantizePerUseGathers() {
    DenseSet<Operation *> functions;
    SmallVector<AllGatherOp> gathers;
    getOperation().walk([&](AllGatherOp gather) {
      if (gather->hasAttr("zero.for_use"))
        gathers.push_back(gather);
    });
    for (AllGatherOp gather : gathers) {
      RankedTensorType type = gather.getType();
      if (!isa<FloatType>(type.getElementType()) || type.getRank() != 1 ||
          gather.getGatherDim() != 0) {
        mlir::emitRemark(gather.getLoc(),
                         "zero-defer-all-gather: left exact: stage 3's "
                         "gather for this use moves ")
            << type << " along dimension " << gather.getGatherDim()
            << "; only 1-D float shards gathered along dimension 0 are "
               "quantized";
        continue;
      }
      if (copyLeaves(gather.getResult())) {
        mlir::emitRemark(gather.getLoc(),
                         "zero-defer-all-gather: left exact: stage 3's "
                         "gather for this use hands the whole weight on "
                         "(a result or a carried value), which ")
            << option() << " would round";
        continue;
      }
      OpBuilder b(gather);
      Value copy = gatherQuantized(b, gather.getLoc(), gather.getInput(),
                                   gather.getMeshAttr(), gather.getAxesAttr(),
                                   type.getNumElements(), type.getElementType(),
                                   quantizeBlock, bits());
      mlir::emitRemark(gather.getLoc(),
                       "zero-defer-all-gather: stage 3's gather for this "
                       "use in ")
          << getQuantFormat(bits()) << " blocks of " << int64_t(quantizeBlock)
          << " (" << option() << "): the op reads a copy within max|block|/"
          << 2 * getQuantLevels(bits())
          << " of the weight, which changes results; the shard stays exact";
      functions.insert(gather->getParentOfType<FunctionOpInterface>());
      gather.replaceAllUsesWith(copy);
      gather.erase();
    }
    return functions;
  }

  void runOnOperation() override {
    if (quantizes() && quantizeBlock <= 0) {
      getOperation().emitError("quantize-block must be positive, not ")
          << int64_t(quantizeBlock);
      return signalPassFailure();
    }
    if (bits() == 4 && quantizeBlock % 2 != 0) {
      getOperation().emitError("quantize-block must be even with ")
          << option() << " (two levels a byte), not " << int64_t(quantizeBlock);
      return signalPassFailure();
    }
    Type forced = forcedGatherType();
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    // Functions where a loop's gather was deferred.
    DenseSet<Operation *> deferredIn;
    // Why each function's signature may not change (empty: it may).
    llvm::DenseMap<Operation *, std::string> fixed;
    for (scf::ForOp loop : loops) {
      SmallVector<DeferredWeight> weights = findWeights(loop, forced);
      if (weights.empty())
        continue;
      deferredIn.insert(loop->getParentOfType<FunctionOpInterface>());
      findBoundaries(loop, weights, fixed);
      for (DeferredWeight &weight : weights)
        if (quantizes())
          mlir::emitRemark(loop.getLoc(), "gathering a ")
              << weight.whole << " weight in " << getQuantFormat(bits())
              << " blocks of " << int64_t(quantizeBlock) << " (" << option()
              << "): the forward pass reads a copy within max|block|/"
              << 2 * getQuantLevels(bits())
              << " of the weight, which changes results; the carried shard "
                 "stays exact";
        else if (weight.gatherElement != readElement(weight))
          mlir::emitRemark(loop.getLoc(), "gathering a ")
              << weight.whole << " weight in " << weight.gatherElement
              << " (gather-dtype): the forward pass reads a rounded copy, "
                 "which changes results";
      auto func = dyn_cast<func::FuncOp>(loop->getParentOp());
      defer(loop, weights);
      if (llvm::any_of(weights, [](const DeferredWeight &weight) {
            return weight.returned;
          }))
        updateFunctionType(func);
    }
    // Asked to compress, and a function's gathers are not: say so rather
    // than let the user believe they moved int8.
    if (!quantizes())
      return;
    for (Operation *function : quantizePerUseGathers())
      deferredIn.insert(function);
    getOperation().walk([&](FunctionOpInterface function) {
      if (!function.isExternal() && !deferredIn.contains(function))
        mlir::emitRemark(function.getLoc(), "zero-defer-all-gather: ")
            << option()
            << " compresses nothing in this function: no training loop "
               "(scf.for) in it all-gathers an updated weight shard for its "
               "next iteration, and no op reads a weight through stage 3's "
               "gather (a single step of stage 1 or 2 has none; a group of "
               "one rank gathers nothing)";
    });
  }
};

} // namespace
