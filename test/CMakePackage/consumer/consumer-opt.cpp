// A third-party tool: registers only what it wants (zero's dialect, the
// dialects zero's lowering makes, zero's passes and zero-report) through the
// public headers, and runs a pipeline.
// Its own pass reuses zero's conversion patterns in its own conversion, as a
// compiler team lowering to zero's runtime would.

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "zero/Conversion/ZeroToRuntime/ZeroToRuntime.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/InitZero.h"
#include "zero/Report/Passes.h"

namespace {

/// zero's collectives to runtime calls inside the consumer's own
/// conversion.
struct ConsumerLowerCollectives
    : public mlir::PassWrapper<ConsumerLowerCollectives,
                               mlir::OperationPass<mlir::ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(ConsumerLowerCollectives)
  llvm::StringRef getArgument() const override {
    return "consumer-lower-collectives";
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    zero::registerZeroToRuntimeDialects(registry);
  }
  void runOnOperation() override {
    mlir::ModuleOp module = getOperation();
    if (failed(zero::checkLowerableToRuntime(module)))
      return signalPassFailure();
    zero::RuntimeTypeConverter typeConverter(&getContext());
    mlir::ConversionTarget target(getContext());
    zero::configureZeroToRuntimeTarget(target, typeConverter);
    mlir::RewritePatternSet patterns(&getContext());
    zero::populateZeroToRuntimePatterns(typeConverter, patterns);
    if (failed(
            mlir::applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    zero::eraseMeshes(module);
  }
};

} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  zero::registerZeroDialect(registry);
  zero::registerZeroToRuntimeDialects(registry);
  zero::registerZeroPasses();
  zero::registerZeroReportPasses();
  mlir::PassRegistration<ConsumerLowerCollectives>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "zero consumer\n", registry));
}
