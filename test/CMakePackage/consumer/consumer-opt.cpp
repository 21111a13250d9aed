// A third-party tool: registers only what it wants (zero's dialect, func,
// arith and zero's passes) through the public headers, and runs a pipeline.

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/Dialect/Zero/Transforms/Passes.h"
#include "zero/InitZero.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  zero::registerZeroDialect(registry);
  registry.insert<mlir::func::FuncDialect, mlir::arith::ArithDialect>();
  zero::registerZeroPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "zero consumer\n", registry));
}
