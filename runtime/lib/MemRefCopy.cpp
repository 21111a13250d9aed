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
  std::vector<int64_t> index(rank, 0);
  for (int64_t e = 0; e < count; ++e) {
    int64_t a = src.offset, b = dst.offset;
    for (int64_t d = 0; d < rank; ++d) {
      a += index[d] * src.strides[d];
      b += index[d] * dst.strides[d];
    }
    std::memcpy(dst.aligned + b * elementBytes, src.aligned + a * elementBytes,
                elementBytes);
    for (int64_t d = rank; d-- > 0 && ++index[d] == src.sizes[d];)
      index[d] = 0;
  }
}
