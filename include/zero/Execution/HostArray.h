//===- HostArray.h - dense arrays on the host, and .npy files ---*- C++ -*-===//

#ifndef ZERO_EXECUTION_HOSTARRAY_H
#define ZERO_EXECUTION_HOSTARRAY_H

#include "mlir/IR/Types.h"
#include "zero/runtime/Array.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::exec {
namespace rt = ::zero::rt;

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

/// The runtime's name of an element type ("f32", "bf16", "index", ...), as
/// in artifact descriptions; empty for a type a launcher cannot pass.
std::string getDtypeName(mlir::Type type);
/// `array` as the runtime's array (a copy).
rt::Array toRuntimeArray(const HostArray &array);

/// How far apart two arrays of the same type and shape are (the runtime's
/// comparison, which zero-launch uses too).
using Difference = rt::Difference;
Difference compare(const HostArray &a, const HostArray &b);

} // namespace zero::exec

#endif // ZERO_EXECUTION_HOSTARRAY_H
