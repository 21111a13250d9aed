//===- PackedCall.h - call a compiled entry function -------------*- C++
//-*-===//
//
// A compiled zero program's entry function is called through its packed
// form, `void entry(void **args)`, the convention of MLIR's ExecutionEngine
// (`invokePacked`) that zero-compile's artifacts export too: args[i] points at
// argument i's LLVM-level values, each tensor a memref descriptor (allocated
// and aligned pointer, offset, sizes, strides) spread over its fields, and
// the last entry points at the storage of the return value (one value, or a
// struct of them). PackedCall builds that list for dense buffers and reads
// results back as dense arrays; zero-run and zero-launch both use it.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_PACKEDCALL_H
#define ZERO_RUNTIME_PACKEDCALL_H

#include "zero/runtime/Array.h"

#include <cstdint>
#include <string>
#include <vector>

namespace zero::rt {

/// The type of an argument or result: a ranked tensor (a buffer at the
/// machine level) or a scalar.
struct ValueType {
  std::string dtype;
  std::vector<int64_t> shape;
  bool isTensor = true;

  int64_t getNumElements() const;
  /// "tensor<7x13xf32>" or "f32".
  std::string str() const;
};

class PackedCall {
public:
  PackedCall(std::vector<ValueType> argTypes,
             std::vector<ValueType> resultTypes);

  /// The packed argument list for these inputs: per argument, a tensor's
  /// dense row-major buffer or a pointer to a scalar's value. Valid until
  /// the next call of pack().
  std::vector<void *> &pack(const std::vector<void *> &inputs);

  /// Copies `bytes` from a result's buffer to host memory (a GPU program's
  /// device memory needs a copy call; host and managed memory, memcpy).
  using ReadFn = void (*)(void *host, const void *buffer, size_t bytes);

  /// After the call: the buffer that result `i` (a tensor) was returned in,
  /// which the caller frees unless it is one of its inputs. Copies the result
  /// into `out` as a dense array when `out` is not null, reading the buffer
  /// with `read` (null: memcpy); a scalar result is only copied (and null
  /// returned).
  void *unpackResult(size_t i, Array *out, ReadFn read = nullptr) const;

  /// After the call: where tensor result `i`'s first element lies when its
  /// elements are dense and row-major (so that it can be passed on as an
  /// argument as it is), else null.
  void *denseResultData(size_t i) const;

private:
  std::vector<ValueType> argTypes, resultTypes;
  std::vector<size_t> resultOffsets;
  std::vector<uint64_t> slots, result;
  std::vector<void *> args;
};

} // namespace zero::rt

#endif // ZERO_RUNTIME_PACKEDCALL_H
