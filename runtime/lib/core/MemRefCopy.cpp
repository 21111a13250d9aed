//===- MemRefCopy.cpp - copy between strided buffers ----------------------===//
//
// What compiled code calls for `memref.copy` between buffers of different
// layouts, for launchers that are not MLIR's ExecutionEngine (whose C runner
// utilities provide the same function).
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/zero_runtime.h"

#include <cstring>
#include <vector>

namespace {
struct UnrankedMemRef {
  int64_t rank;
  void *descriptor;
};
struct Strided {
  char *aligned;
  int64_t offset;
  const int64_t *sizes, *strides;
};

Strided view(const UnrankedMemRef &memref) {
  auto *words = static_cast<int64_t *>(memref.descriptor);
  return {reinterpret_cast<char *>(words[1]), words[2], words + 3,
          words + 3 + memref.rank};
}
} // namespace

void zero_rt_memref_copy(int64_t elementBytes, void *source, void *target) {
  const auto &from = *static_cast<UnrankedMemRef *>(source);
  const auto &to = *static_cast<UnrankedMemRef *>(target);
  Strided src = view(from), dst = view(to);
  int64_t rank = from.rank;
  int64_t count = 1;
  for (int64_t d = 0; d < rank; ++d)
    count *= src.sizes[d];
  if (count == 0)
    return;
  // The innermost dimensions that are dense in both buffers are copied as
  // one run each (a bucket's member is a few rows of a million elements):
  // element by element, the copy would cost far more than the bytes.
  int64_t inner = rank, run = 1;
  while (inner > 0 && src.strides[inner - 1] == run &&
         dst.strides[inner - 1] == run) {
    --inner;
    run *= src.sizes[inner];
  }
  std::vector<int64_t> index(inner, 0);
  for (int64_t e = 0; e < count; e += run) {
    int64_t a = src.offset, b = dst.offset;
    for (int64_t d = 0; d < inner; ++d) {
      a += index[d] * src.strides[d];
      b += index[d] * dst.strides[d];
    }
    std::memcpy(dst.aligned + b * elementBytes, src.aligned + a * elementBytes,
                run * elementBytes);
    for (int64_t d = inner; d-- > 0 && ++index[d] == src.sizes[d];)
      index[d] = 0;
  }
}
