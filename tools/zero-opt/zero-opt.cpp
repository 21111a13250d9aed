//===- zero-opt.cpp - the zero optimizer driver ---------------------------===//
//
// mlir-opt with the zero dialect, the upstream dialects of a training
// program and zero's passes.
//
//===----------------------------------------------------------------------===//

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "zero/InitZero.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  zero::registerAllDialects(registry);
  zero::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "zero optimizer driver\n", registry));
}
