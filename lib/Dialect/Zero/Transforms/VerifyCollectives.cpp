//===- VerifyCollectives.cpp - every rank issues every collective alike ---===//
//
// Checks each collective against the uniformity analysis: the control it
// runs under and its dynamic sizes must be the same on every rank. A
// collective that is not proven gets a diagnostic that walks from the
// deciding value back to where its variance starts.
//
//===----------------------------------------------------------------------===//

#include "zero/Analysis/Uniformity.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"

namespace zero {
#define GEN_PASS_DEF_ZEROVERIFYCOLLECTIVES
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"
} // namespace zero

using namespace mlir;
using namespace zero;

namespace {

/// What a link of a chain is: its op's name, or where an argument belongs.
std::string describeLink(Value value) {
  if (Operation *producer = value.getDefiningOp())
    return producer->getName().getStringRef().str();
  auto arg = cast<BlockArgument>(value);
  std::string text = "argument " + std::to_string(arg.getArgNumber()) + " of ";
  Operation *owner = arg.getOwner()->getParentOp();
  if (!owner)
    return text + "a block";
  auto fn = dyn_cast<func::FuncOp>(owner);
  if (!fn)
    return text + "a region of " + owner->getName().getStringRef().str();
  if (arg.getOwner()->isEntryBlock())
    return text + "@" + fn.getSymName().str();
  return text + "a block of @" + fn.getSymName().str();
}

/// Why the control that `control` decides differs, in words.
std::string describeControl(const VaryingControl &control) {
  Operation *decider = control.decider;
  std::string at = formatLocation(decider->getLoc());
  std::string name = decider->getName().getStringRef().str();
  if (isa<scf::ForOp, scf::ForallOp, scf::ParallelOp>(decider))
    return "it runs in the " + name + " at " + at +
           ", whose trip count differs between ranks";
  if (isa<scf::WhileOp>(decider))
    return "it runs in the " + name + " at " + at +
           ", whose condition to go on differs between ranks";
  return "it runs only where the " + name + " at " + at +
         " takes its branch, and that condition differs between ranks";
}

/// The source of `value`'s variance and the ops from there to it, in one
/// line; a note at each link.
std::string explain(const Uniformity &uniformity, Value value,
                    InFlightDiagnostic &diag) {
  SmallVector<Value> chain = uniformity.getChain(value);
  std::string source = uniformity.describeSource(chain.back());
  std::string path;
  for (Value link : llvm::reverse(ArrayRef(chain).drop_back()))
    path += (path.empty() ? "" : " -> ") + describeLink(link);
  for (auto [i, link] : llvm::enumerate(chain)) {
    Diagnostic &note = diag.attachNote(link.getLoc());
    if (i + 1 == chain.size())
      note << "where it starts: " << source;
    else
      note << (i == 0 ? "differs between ranks: " : "which comes from: ")
           << describeLink(link);
  }
  if (path.empty())
    return source;
  return source + "; then " + path;
}

struct ZeroVerifyCollectivesPass
    : public zero::impl::ZeroVerifyCollectivesBase<ZeroVerifyCollectivesPass> {
  using ZeroVerifyCollectivesBase::ZeroVerifyCollectivesBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    Uniformity uniformity(module);
    bool proven = true;
    module.walk([&](Operation *op) {
      if (isRankCollective(op) && !verify(op, uniformity))
        proven = false;
    });
    if (proven)
      module->setAttr(kCollectivesUniformAttrName,
                      UnitAttr::get(module.getContext()));
    else
      module->removeAttr(kCollectivesUniformAttrName);
    if (!proven && mode == VerifyMode::Error)
      signalPassFailure();
  }

  /// Reports `op` as not proven: `why` it may not be issued alike, then
  /// where the varying `value` comes from.
  void report(Operation *op, const Uniformity &uniformity, StringRef why,
              Value value) {
    // A warning names the op's location, without MLIR's print of the op: a
    // print costs a walk of the module, once per warning.
    InFlightDiagnostic diag = mode == VerifyMode::Error
                                  ? op->emitError()
                                  : mlir::emitWarning(op->getLoc());
    diag << "'" << op->getName()
         << "' op is not issued alike on every rank: " << why << ": ";
    diag << explain(uniformity, value, diag);
    if (mode == VerifyMode::Warn)
      diag << " (the runtime keeps checking that ranks agree)";
  }

  bool verify(Operation *op, const Uniformity &uniformity) {
    if (std::optional<VaryingControl> control =
            uniformity.getVaryingControl(op)) {
      report(op, uniformity, describeControl(*control), control->condition);
      return false;
    }
    for (Value operand : op->getOperands())
      if (Value size = uniformity.getVaryingShapeSource(operand)) {
        std::string why;
        llvm::raw_string_ostream os(why);
        os << "the shape of operand '" << operand.getType()
           << "' differs between ranks";
        report(op, uniformity, why, size);
        return false;
      }
    return true;
  }
};

} // namespace
