//===- Passes.h - zero passes -----------------------------------*- C++ -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H

#include "mlir/Pass/Pass.h"

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace zero {

/// The element type of the copy zero-defer-all-gather gathers (gather-dtype).
enum class GatherDtype { Auto, BF16, F16, F32, Int8, Int4 };

/// What the gradients' reduce-scatter sends (reduce-dtype).
enum class ReduceDtype { Exact, Int8, Int4, BF16, Auto };

/// Which training state lives in host memory beside a GPU (offload).
enum class Offload { None, Optimizer, Params };

/// How much of the offloadable state stays on the device
/// (offload-device-share): a share of its bytes from 0 to 1, or `auto`, the
/// share the cost model says makes the step shortest.
struct DeviceShare {
  bool automatic = false;
  double share = 0;
};
llvm::raw_ostream &operator<<(llvm::raw_ostream &os, const DeviceShare &value);

/// What zero-verify-collectives does with a collective it cannot prove
/// (mode).
enum class VerifyMode { Error, Warn };

#define GEN_PASS_DECL
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "zero/Dialect/Zero/Transforms/Passes.h.inc"

} // namespace zero

namespace llvm::cl {
/// Parses offload-device-share: `auto`, or a number from 0 to 1.
template <>
class parser<zero::DeviceShare> : public basic_parser<zero::DeviceShare> {
public:
  parser(Option &option) : basic_parser(option) {}
  bool parse(Option &option, StringRef argName, StringRef arg,
             zero::DeviceShare &value);
  StringRef getValueName() const override { return "auto|share"; }
  void printOptionDiff(const Option &option, const zero::DeviceShare &value,
                       const OptionValue<zero::DeviceShare> &defaultValue,
                       size_t globalWidth) const;
  void anchor() override;
};
} // namespace llvm::cl

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_H
