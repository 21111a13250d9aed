//===- PipelinePass.h - a pipeline as a pass --------------------*- C++ -*-===//
//
// Each of zero's pipelines is a pass that runs its passes as a dynamic
// pipeline, so that its options are declared once in ODS, and a function
// that appends the same passes to a pass manager. Both go through one
// template that reads the options from the options struct or from the pass
// itself, whose option members have the same names.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LIB_PIPELINES_PIPELINEPASS_H
#define ZERO_LIB_PIPELINES_PIPELINEPASS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace zero {

/// A pass that runs the passes `appendPasses` appends, as a dynamic
/// pipeline on its module.
template <typename Base> struct PipelinePass : public Base {
  using Base::Base;

  virtual void appendPasses(mlir::OpPassManager &pm) const = 0;
  /// Fails, with an error at the module, on options that do not go
  /// together.
  virtual mlir::LogicalResult checkOptions() { return mlir::success(); }

  mlir::OpPassManager pipeline() const {
    mlir::OpPassManager pm(mlir::ModuleOp::getOperationName());
    appendPasses(pm);
    return pm;
  }
  void getDependentDialects(mlir::DialectRegistry &registry) const override {
    pipeline().getDependentDialects(registry);
  }
  void runOnOperation() override {
    if (mlir::failed(checkOptions()))
      return this->signalPassFailure();
    mlir::OpPassManager pm = pipeline();
    if (mlir::failed(this->runPipeline(pm, this->getOperation())))
      this->signalPassFailure();
  }
};

} // namespace zero

#endif // ZERO_LIB_PIPELINES_PIPELINEPASS_H
