//===- HostArray.h - dense arrays on the host, and .npy files ---*- C++ -*-===//

#ifndef ZERO_EXECUTION_HOSTARRAY_H
#define ZERO_EXECUTION_HOSTARRAY_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::exec {

/// A dense row-major array: the value of one argument or result of a program
/// on one rank. A scalar has an empty shape.
struct HostArray {
  mlir::Type elementType;
  llvm::SmallVector<int64_t> shape;
  std::vector<char> bytes;

  int64_t getNumElements() const;
  /// Bytes per element in memory (i1 is a byte).
  static int64_t getElementBytes(mlir::Type type);
};

/// Writes `array` as a .npy file (format 1.0). bf16 is written as two-byte
/// void elements ('|V2'), which NumPy loads as raw 16-bit values.
llvm::Error writeNpy(llvm::StringRef path, const HostArray &array);
/// Reads a .npy file into `array`, whose element type and shape must match
/// what the file holds (checked, with an error naming the file).
llvm::Error readNpy(llvm::StringRef path, HostArray &array);

/// How far apart two arrays of the same type and shape are.
struct Difference {
  int64_t differing = 0;
  /// Largest distance in units in the last place (floats) or absolute value
  /// (integers). NaN against NaN counts as equal, NaN against a number as
  /// infinitely far.
  uint64_t maxUlp = 0;
  int64_t firstIndex = -1;
};
Difference compare(const HostArray &a, const HostArray &b);

} // namespace zero::exec

#endif // ZERO_EXECUTION_HOSTARRAY_H
