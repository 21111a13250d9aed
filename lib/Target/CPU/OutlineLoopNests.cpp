//===- OutlineLoopNests.cpp - each loop nest a function of its own --------===//
//
// Moves each loop nest that calls nothing but the runtime's checks into a
// private noinline function, so that LLVM optimizes functions of bounded
// size. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"
#include "zero/Target/CPU/Passes.h"
#include "llvm/ADT/SetVector.h"

namespace zero {
#define GEN_PASS_DEF_ZEROOUTLINELOOPNESTS
#include "zero/Target/CPU/Passes.h.inc"
} // namespace zero

using namespace mlir;

namespace {

bool isLoop(Operation *op) {
  return isa<scf::ForOp, scf::ParallelOp, scf::WhileOp>(op);
}

/// Whether `loop` calls nothing but the runtime's checks: moving it moves no
/// collective, matmul or function call out of the body it was scheduled in.
bool callsOnlyChecks(Operation *loop) {
  StringRef check =
      zero::getRuntimeSymbol(zero::RuntimeFunction::zero_rt_check);
  WalkResult result = loop->walk([&](CallOpInterface call) {
    auto callee =
        dyn_cast_if_present<SymbolRefAttr>(call.getCallableForCallee());
    if (callee && callee.getLeafReference() == check)
      return WalkResult::advance();
    return WalkResult::interrupt();
  });
  return !result.wasInterrupted();
}

/// Whether a function's signature can carry `type` down to LLVM.
bool isSignatureType(Type type) {
  return type.isIntOrIndexOrFloat() ||
         isa<VectorType, MemRefType, LLVM::LLVMPointerType>(type);
}

/// What `loop` uses from outside it, split in one walk: the values its
/// function takes as arguments, in the order of first use, and the
/// constants it copies in.
struct Inputs {
  llvm::SetVector<Value> captured;
  llvm::SetVector<Operation *> constants;
};

Inputs inputsOf(Operation *loop) {
  llvm::SetVector<Value> used;
  for (Value operand : loop->getOperands())
    used.insert(operand);
  getUsedValuesDefinedAbove(loop->getRegions(), used);
  Inputs inputs;
  for (Value value : used) {
    Operation *producer = value.getDefiningOp();
    if (producer && producer->hasTrait<OpTrait::ConstantLike>())
      inputs.constants.insert(producer);
    else
      inputs.captured.insert(value);
  }
  return inputs;
}

class Outliner {
public:
  Outliner(ModuleOp module) : symbols(module) {}

  /// Moves the nests of `function`'s body into functions of their own.
  void outlineNestsOf(func::FuncOp function) {
    SmallVector<Operation *> nests;
    collectNests(function.getBody(), nests);
    // The nests' functions follow `function` in the order of its nests.
    Operation *previous = function;
    for (auto [index, nest] : llvm::enumerate(nests))
      if (func::FuncOp made = outline(function, nest, index, previous))
        previous = made;
  }

private:
  /// The nests to move in `region`, outermost first: each loop that calls
  /// only checks, and those inside a loop that calls more; none where the
  /// function is already that one nest (a function this pass made).
  void collectNests(Region &region, SmallVectorImpl<Operation *> &nests) {
    region.walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (!isLoop(op))
        return WalkResult::advance();
      if (!callsOnlyChecks(op))
        return WalkResult::advance();
      if (!isWholeBody(region, op))
        nests.push_back(op);
      return WalkResult::skip();
    });
  }

  /// Whether `nest` is all that `body` does: besides it, only constants
  /// and the terminator.
  static bool isWholeBody(Region &body, Operation *nest) {
    if (nest->getParentRegion() != &body || !body.hasOneBlock())
      return false;
    return llvm::all_of(body.front(), [&](Operation &op) {
      return &op == nest || op.hasTrait<OpTrait::ConstantLike>() ||
             op.hasTrait<OpTrait::IsTerminator>();
    });
  }

  /// Moves `nest`, the `index`th of `parent`, into a function placed after
  /// `after`; returns that function, or none where the nest stays.
  func::FuncOp outline(func::FuncOp parent, Operation *nest, size_t index,
                       Operation *after) {
    Inputs inputs = inputsOf(nest);
    const llvm::SetVector<Value> &captured = inputs.captured;
    auto unfit = llvm::find_if(captured, [](Value value) {
      return !isSignatureType(value.getType());
    });
    if (unfit != captured.end()) {
      mlir::emitRemark(nest->getLoc(), "zero-outline-loop-nests: left in @")
          << parent.getSymName() << ": it uses a value of type "
          << unfit->getType() << ", which no function signature lowers to LLVM";
      return {};
    }
    auto unfitResult = llvm::find_if(nest->getResultTypes(), [](Type type) {
      return !isSignatureType(type);
    });
    if (unfitResult != nest->getResultTypes().end()) {
      mlir::emitRemark(nest->getLoc(), "zero-outline-loop-nests: left in @")
          << parent.getSymName() << ": it returns a value of type "
          << *unfitResult << ", which no function signature lowers to LLVM";
      return {};
    }

    MLIRContext *context = nest->getContext();
    Location loc = nest->getLoc();
    SmallVector<Type> argumentTypes;
    for (Value value : captured)
      argumentTypes.push_back(value.getType());
    auto type = FunctionType::get(context, argumentTypes,
                                  llvm::to_vector(nest->getResultTypes()));
    OpBuilder builder(context);
    builder.setInsertionPointAfter(after);
    auto function = func::FuncOp::create(
        builder, loc, (parent.getSymName() + "_nest" + Twine(index)).str(),
        type);
    function.setPrivate();
    function->setAttr("passthrough",
                      builder.getArrayAttr(builder.getStringAttr("noinline")));
    symbols.insert(function);

    Block *body = function.addEntryBlock();
    builder.setInsertionPointToStart(body);
    IRMapping mapping;
    for (auto [value, argument] : llvm::zip(captured, body->getArguments()))
      mapping.map(value, argument);
    for (Operation *constant : inputs.constants)
      builder.clone(*constant, mapping);
    Operation *copy = builder.clone(*nest, mapping);
    func::ReturnOp::create(builder, loc, copy->getResults());

    builder.setInsertionPoint(nest);
    auto call =
        func::CallOp::create(builder, loc, function, llvm::to_vector(captured));
    nest->replaceAllUsesWith(call.getResults());
    nest->erase();
    return function;
  }

  SymbolTable symbols;
};

struct ZeroOutlineLoopNestsPass
    : public zero::impl::ZeroOutlineLoopNestsBase<ZeroOutlineLoopNestsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> functions;
    for (auto function : module.getOps<func::FuncOp>())
      if (!function.isExternal())
        functions.push_back(function);
    Outliner outliner(module);
    for (func::FuncOp function : functions)
      outliner.outlineNestsOf(function);
  }
};

} // namespace
