//===- HostMatmul.cpp - the GEMM call, on the host ------------------------===//
//
// zero_rt_host_matmul: the call zero-gemm-calls{gemm=host} emits when the
// GPU pipeline's loop structure runs on the CPU (zero-to-llvm{gpu-loops}).
// It computes what cuBLAS's GEMM with beta = 1 computes (either operand
// stored transposed), in the order of
// operations of a GPU GEMM: each dot product accumulates from zero with
// fused multiply-adds (in f32 for f32, bf16 and f16 inputs, in f64 for f64),
// and is then added to C once. The loop nest of a linalg.matmul rounds each
// product and adds it to C in turn, so a matmul that one program calls and
// another leaves as a loop nest differ in the last bits here, as they do on
// the GPU: the CPU check sees what the GPU check would.
//
//===----------------------------------------------------------------------===//

#include "core/Reduce.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace zero::rt;

namespace {

/// One operand of the GEMM as stored: element (row, column) of op(X) is at
/// row * ld + column, or at column * ld + row where X is stored transposed.
struct Operand {
  const void *data;
  int64_t ld;
  bool transposed;

  int64_t offset(int64_t row, int64_t column) const {
    return transposed ? column * ld + row : row * ld + column;
  }
};

/// C += op(A) op(B), a row of C at a time: the row's dot products
/// accumulate over k in `sums` (in k's order, every column at once), then
/// are added to the row of C. Where the operands are stored does not change
/// the order of operations.
template <typename Acc>
void gemm(zero_dtype inputs, zero_dtype output, int64_t m, int64_t n, int64_t k,
          Operand a, Operand b, void *c, int64_t ldc) {
  std::vector<Acc> sums(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(sums.begin(), sums.end(), Acc(0));
    for (int64_t p = 0; p < k; ++p) {
      auto x = static_cast<Acc>(loadElement(inputs, a.data, a.offset(i, p)));
      for (int64_t j = 0; j < n; ++j)
        sums[j] = std::fma(
            x, static_cast<Acc>(loadElement(inputs, b.data, b.offset(p, j))),
            sums[j]);
    }
    for (int64_t j = 0; j < n; ++j) {
      auto before = static_cast<Acc>(loadElement(output, c, i * ldc + j));
      storeElement(output, c, i * ldc + j, before + sums[j]);
    }
  }
}

bool isFloat(int32_t dtype) {
  return dtype == ZERO_F32 || dtype == ZERO_F64 || dtype == ZERO_BF16 ||
         dtype == ZERO_F16;
}

/// Fails the bound rank's world (or, with no rank bound, the process): the
/// compiled code that called cannot go on.
void fail(const std::string &message) {
  if (zero_rank *rank = zero_bound_rank())
    return zero_rank_fail(rank, message.c_str());
  std::fprintf(stderr, "zero: error: %s\n", message.c_str());
  std::exit(1);
}

} // namespace

extern "C" void zero_rt_host_matmul(int32_t inputDtype, int32_t outputDtype,
                                    int64_t m, int64_t n, int64_t k,
                                    const void *a, int64_t lda,
                                    int32_t transposeA, const void *b,
                                    int64_t ldb, int32_t transposeB, void *c,
                                    int64_t ldc) {
  // The types zero-gemm-calls emits the call for (cuBLAS's).
  bool same = inputDtype == outputDtype && isFloat(inputDtype);
  bool halfIntoFloat = (inputDtype == ZERO_BF16 || inputDtype == ZERO_F16) &&
                       outputDtype == ZERO_F32;
  if (!same && !halfIntoFloat)
    return fail("zero_rt_host_matmul (" + std::to_string(m) + "x" +
                std::to_string(n) + "x" + std::to_string(k) +
                "): no GEMM for dtypes " + std::to_string(inputDtype) + " -> " +
                std::to_string(outputDtype));
  auto inputs = static_cast<zero_dtype>(inputDtype);
  auto output = static_cast<zero_dtype>(outputDtype);
  Operand left{a, lda, transposeA != 0}, right{b, ldb, transposeB != 0};
  if (output == ZERO_F64)
    gemm<double>(inputs, output, m, n, k, left, right, c, ldc);
  else
    gemm<float>(inputs, output, m, n, k, left, right, c, ldc);
}
