//===- HostMatmul.cpp - the GEMM call, on the host ------------------------===//
//
// zero_rt_host_matmul: the call zero-gemm-calls{gemm=host} emits when the
// GPU pipeline's loop structure runs on the CPU (zero-to-llvm{gpu-loops}). It
// computes what cuBLAS's GEMM with beta = 1 computes (either operand stored
// transposed), in the order of operations of a GPU GEMM: each dot product
// accumulates from zero with fused multiply-adds (in f32 for f32, bf16 and f16
// inputs, in f64 for f64), and is then added to C once (to zero, C unread,
// where the caller says so: accumulate 0, in place of a C filled with zeros
// for the GEMM to add to; cuBLAS's beta = 1 adds 1 * 0, the same bits). A
// matmul's loop nest
// rounds each product and adds it to C in turn, so a matmul that one program
// calls and another leaves as a loop nest differ in the last bits here, as they
// do on the GPU: the CPU check sees what the GPU check would.
//
// Each element's sum runs in k's order, so the work is cut only across the
// elements of C: the f32 path packs A's rows and each panel of B's columns
// into contiguous f32, computes a block of C's rows by a panel at a time
// with the block's sums in vector registers (a lane a column of C, the
// vector width the host's: AVX-512 or AVX2 with FMA, chosen at run time),
// and splits the panels across the rank's share of the host's threads. The
// lanes are separate sums, so the result is the same on every host and for
// every number of threads.
//
//===----------------------------------------------------------------------===//

#include "backends/Backend.h"
#include "core/Reduce.h"
#include "zero/runtime/zero_runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define ZERO_HOST_GEMM_X86 1
#endif

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

/// C += op(A) op(B) in f64 (C's old value taken as zero unless
/// `accumulate`), a row of C at a time: the row's dot products accumulate
/// over k in `sums` (in k's order, every column at once), then are added to
/// the row of C.
void gemmF64(int64_t m, int64_t n, int64_t k, Operand a, Operand b, void *c,
             int64_t ldc, bool accumulate) {
  std::vector<double> sums(n);
  for (int64_t i = 0; i < m; ++i) {
    std::fill(sums.begin(), sums.end(), 0.0);
    for (int64_t p = 0; p < k; ++p) {
      double x = loadElement(ZERO_F64, a.data, a.offset(i, p));
      for (int64_t j = 0; j < n; ++j)
        sums[j] =
            std::fma(x, loadElement(ZERO_F64, b.data, b.offset(p, j)), sums[j]);
    }
    for (int64_t j = 0; j < n; ++j)
      storeElement(ZERO_F64, c, i * ldc + j,
                   (accumulate ? loadElement(ZERO_F64, c, i * ldc + j) : 0.0) +
                       sums[j]);
  }
}

/// to[x * toStride] = element x of the `count` contiguous elements at
/// `from` (f32, bf16 or f16), as f32: one row or column of an operand, its
/// type's conversion chosen once.
void widenRun(zero_dtype dtype, const void *from, int64_t count, float *to,
              int64_t toStride) {
  if (dtype == ZERO_F32) {
    const float *source = static_cast<const float *>(from);
    for (int64_t x = 0; x < count; ++x)
      to[x * toStride] = source[x];
    return;
  }
  const uint16_t *source = static_cast<const uint16_t *>(from);
  for (int64_t x = 0; x < count; ++x)
    to[x * toStride] =
        dtype == ZERO_BF16 ? bf16ToFloat(source[x]) : f16ToFloat(source[x]);
}

/// Columns of C a panel holds: two AVX-512 vectors, four AVX2 ones.
constexpr int64_t kPanel = 32;
/// Rows of C a block holds, at most.
constexpr int64_t kMaxBlock = 4;

/// sums[r][j] = sum over p < k, in p's order, of a[r * k + p] * panel[p *
/// kPanel + j] by fused multiply-adds from zero, for r < rows. Each lane of
/// a vector is one (r, j): its own sum.
using Kernel = void (*)(const float *a, int64_t rows, int64_t k,
                        const float *panel, float (*sums)[kPanel]);

void kernelPortable(const float *a, int64_t rows, int64_t k, const float *panel,
                    float (*sums)[kPanel]) {
  for (int64_t r = 0; r < rows; ++r) {
    float *row = sums[r];
    std::fill(row, row + kPanel, 0.0f);
    for (int64_t p = 0; p < k; ++p) {
      float x = a[r * k + p];
      for (int64_t j = 0; j < kPanel; ++j)
        row[j] = std::fma(x, panel[p * kPanel + j], row[j]);
    }
  }
}

#ifdef ZERO_HOST_GEMM_X86
__attribute__((target("avx512f"))) void kernelAvx512(const float *a,
                                                     int64_t rows, int64_t k,
                                                     const float *panel,
                                                     float (*sums)[kPanel]) {
  __m512 acc[kMaxBlock][2];
  for (int64_t r = 0; r < kMaxBlock; ++r)
    acc[r][0] = acc[r][1] = _mm512_setzero_ps();
  // Rows past `rows` read row 0 again: their sums are not stored.
  const float *rowsOf[kMaxBlock];
  for (int64_t r = 0; r < kMaxBlock; ++r)
    rowsOf[r] = a + (r < rows ? r : 0) * k;
  for (int64_t p = 0; p < k; ++p) {
    __m512 low = _mm512_loadu_ps(panel + p * kPanel);
    __m512 high = _mm512_loadu_ps(panel + p * kPanel + 16);
    for (int64_t r = 0; r < kMaxBlock; ++r) {
      __m512 x = _mm512_set1_ps(rowsOf[r][p]);
      acc[r][0] = _mm512_fmadd_ps(x, low, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(x, high, acc[r][1]);
    }
  }
  for (int64_t r = 0; r < rows; ++r) {
    _mm512_storeu_ps(sums[r], acc[r][0]);
    _mm512_storeu_ps(sums[r] + 16, acc[r][1]);
  }
}

/// C[r * ldc + x] += sums[r][x] for r < rows and a whole panel's columns, in
/// f32 (C's old value taken as zero unless `accumulate`): what addToC does a
/// lane at a time.
__attribute__((target("avx512f"))) void
addPanelAvx512(float *c, int64_t ldc, int64_t rows, const float (*sums)[kPanel],
               bool accumulate) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t x = 0; x < kPanel; x += 16) {
      float *at = c + r * ldc + x;
      __m512 old = accumulate ? _mm512_loadu_ps(at) : _mm512_setzero_ps();
      _mm512_storeu_ps(at, _mm512_add_ps(old, _mm512_loadu_ps(sums[r] + x)));
    }
}

/// Two rows at a time: four vectors a row fill eight of AVX2's sixteen
/// registers with sums.
__attribute__((target("avx2,fma"))) void kernelAvx2(const float *a,
                                                    int64_t rows, int64_t k,
                                                    const float *panel,
                                                    float (*sums)[kPanel]) {
  for (int64_t first = 0; first < rows; first += 2) {
    int64_t second = first + 1 < rows ? first + 1 : first;
    __m256 acc[2][4];
    for (auto &row : acc)
      for (__m256 &v : row)
        v = _mm256_setzero_ps();
    for (int64_t p = 0; p < k; ++p) {
      __m256 x0 = _mm256_set1_ps(a[first * k + p]);
      __m256 x1 = _mm256_set1_ps(a[second * k + p]);
      for (int64_t v = 0; v < 4; ++v) {
        __m256 column = _mm256_loadu_ps(panel + p * kPanel + 8 * v);
        acc[0][v] = _mm256_fmadd_ps(x0, column, acc[0][v]);
        acc[1][v] = _mm256_fmadd_ps(x1, column, acc[1][v]);
      }
    }
    for (int64_t v = 0; v < 4; ++v) {
      _mm256_storeu_ps(sums[first] + 8 * v, acc[0][v]);
      if (second != first)
        _mm256_storeu_ps(sums[second] + 8 * v, acc[1][v]);
    }
  }
}
#endif

/// dst[p * dstStride + x] = src[x * ld + p] for x, p < 16: a 16 x 16 block
/// of f32 transposed in registers (four rounds of shuffles), for a panel of
/// B stored transposed, which the scalar loop packs an element at a time.
// GCC 12's unpack intrinsics start from _mm512_undefined_ps, which it then
// warns is uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
__attribute__((target("avx512f"))) void
transpose16x16(const float *src, int64_t ld, float *dst, int64_t dstStride) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i)
    r[i] = _mm512_loadu_ps(src + i * ld);
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 16; i += 4) {
    r[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0x88);
    t[i + 4] = _mm512_shuffle_f32x4(r[i], r[i + 4], 0xdd);
    t[i + 8] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0x88);
    t[i + 12] = _mm512_shuffle_f32x4(r[i + 8], r[i + 12], 0xdd);
  }
  for (int i = 0; i < 8; ++i) {
    r[i] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0x88);
    r[i + 8] = _mm512_shuffle_f32x4(t[i], t[i + 8], 0xdd);
  }
  for (int i = 0; i < 16; ++i)
    _mm512_storeu_ps(dst + i * dstStride, r[i]);
}
#pragma GCC diagnostic pop

/// The widest kernel this host runs, or a narrower one that
/// ZERO_HOST_GEMM_ISA names (avx2, portable), for tests: all give the same
/// bits.
Kernel hostKernel() {
  const char *isa = std::getenv("ZERO_HOST_GEMM_ISA");
  std::string wanted = isa ? isa : "avx512";
  if (wanted == "portable")
    return kernelPortable;
#ifdef ZERO_HOST_GEMM_X86
  __builtin_cpu_init();
  if (wanted == "avx512" && __builtin_cpu_supports("avx512f"))
    return kernelAvx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return kernelAvx2;
#endif
  return kernelPortable;
}

/// The f32-accumulating GEMM (f32, bf16 and f16 inputs), its panels split
/// across threads.
struct PanelGemm {
  zero_dtype inputs, output;
  int64_t m, n, k;
  Operand b;
  void *c;
  int64_t ldc;
  std::vector<float> a; // op(A), m x k, row-major
  Kernel kernel;
  /// Whether C's old value is added to (else it is taken as zero, unread).
  bool accumulate;

  /// Columns [j, j + kPanel) of op(B), k x kPanel, zero past n, read
  /// along B's storage: a row of op(B) where B is stored as it is, a
  /// column where it is stored transposed (a row of what is stored).
  void packPanel(int64_t j, float *panel) const {
    int64_t width = std::min(kPanel, n - j);
    size_t bytes = dtypeSize(inputs);
    const char *base = static_cast<const char *>(b.data);
    if (width < kPanel)
      std::fill(panel, panel + k * kPanel, 0.0f);
    if (b.transposed) {
      int64_t p = 0;
#ifdef ZERO_HOST_GEMM_X86
      // Whole 16 x 16 blocks of an f32 panel in registers, the rest below.
      if (inputs == ZERO_F32 && width == kPanel && kernel == kernelAvx512)
        for (; p + 16 <= k; p += 16)
          for (int64_t x = 0; x < kPanel; x += 16)
            transpose16x16(static_cast<const float *>(b.data) +
                               b.offset(p, j + x),
                           b.ld, panel + p * kPanel + x, kPanel);
#endif
      for (int64_t x = 0; x < width; ++x)
        widenRun(inputs, base + b.offset(p, j + x) * bytes, k - p,
                 panel + p * kPanel + x, kPanel);
      return;
    }
    for (int64_t p = 0; p < k; ++p)
      widenRun(inputs, base + b.offset(p, j) * bytes, width, panel + p * kPanel,
               1);
  }

  /// C[i, j + x] += sums[i][x] for the block's rows and the panel's columns
  /// (C's old value taken as zero unless `accumulate`).
  void addToC(int64_t i, int64_t rows, int64_t j,
              const float (*sums)[kPanel]) const {
    int64_t width = std::min(kPanel, n - j);
#ifdef ZERO_HOST_GEMM_X86
    if (output == ZERO_F32 && width == kPanel && kernel == kernelAvx512)
      return addPanelAvx512(static_cast<float *>(c) + i * ldc + j, ldc, rows,
                            sums, accumulate);
#endif
    for (int64_t r = 0; r < rows; ++r) {
      int64_t at = (i + r) * ldc + j;
      if (output == ZERO_F32) {
        float *row = static_cast<float *>(c) + at;
        for (int64_t x = 0; x < width; ++x)
          row[x] = (accumulate ? row[x] : 0.0f) + sums[r][x];
        continue;
      }
      // A bf16 or f16 C, widened exactly, the sum rounded once.
      for (int64_t x = 0; x < width; ++x)
        storeElement(output, c, at + x,
                     (accumulate
                          ? static_cast<float>(loadElement(output, c, at + x))
                          : 0.0f) +
                         sums[r][x]);
    }
  }

  void runPanels(int64_t first, int64_t last) const {
    std::vector<float> panel(k * kPanel);
    float sums[kMaxBlock][kPanel];
    for (int64_t index = first; index < last; ++index) {
      int64_t j = index * kPanel;
      packPanel(j, panel.data());
      for (int64_t i = 0; i < m; i += kMaxBlock) {
        int64_t rows = std::min(kMaxBlock, m - i);
        kernel(a.data() + i * k, rows, k, panel.data(), sums);
        addToC(i, rows, j, sums);
      }
    }
  }

  static void task(void *context, int64_t first, int64_t last) {
    static_cast<const PanelGemm *>(context)->runPanels(first, last);
  }
};

void gemmByPanels(zero_dtype inputs, zero_dtype output, int64_t m, int64_t n,
                  int64_t k, Operand a, Operand b, void *c, int64_t ldc,
                  bool accumulate) {
  PanelGemm gemm{inputs, output,       m,         n, k, b, c, ldc,
                 {},     hostKernel(), accumulate};
  gemm.a.resize(m * k);
  size_t bytes = dtypeSize(inputs);
  const char *base = static_cast<const char *>(a.data);
  // Along A's storage: a row of op(A), or a column where A is transposed.
  if (a.transposed)
    for (int64_t p = 0; p < k; ++p)
      widenRun(inputs, base + a.offset(0, p) * bytes, m, gemm.a.data() + p, k);
  else
    for (int64_t i = 0; i < m; ++i)
      widenRun(inputs, base + a.offset(i, 0) * bytes, k, gemm.a.data() + i * k,
               1);
  int64_t panels = (n + kPanel - 1) / kPanel;
  // parallelFor's grain, the elements a panel counts as: its multiply-adds
  // over a vector's 16 lanes, so that a GEMM of fewer than 4096 vector
  // multiply-adds a thread stays on the calling thread.
  int64_t grain = std::max<int64_t>(1, m * k * kPanel / 16);
  parallelFor(&PanelGemm::task, &gemm, 0, panels, grain);
}

bool isFloat(int32_t dtype) {
  return dtype == ZERO_F32 || dtype == ZERO_F64 || dtype == ZERO_BF16 ||
         dtype == ZERO_F16;
}

} // namespace

extern "C" void zero_rt_host_matmul(int32_t inputDtype, int32_t outputDtype,
                                    int64_t m, int64_t n, int64_t k,
                                    const void *a, int64_t lda,
                                    int32_t transposeA, const void *b,
                                    int64_t ldb, int32_t transposeB, void *c,
                                    int64_t ldc, int32_t accumulate) {
  // The types zero-gemm-calls emits the call for (cuBLAS's).
  bool same = inputDtype == outputDtype && isFloat(inputDtype);
  bool halfIntoFloat = (inputDtype == ZERO_BF16 || inputDtype == ZERO_F16) &&
                       outputDtype == ZERO_F32;
  if (!same && !halfIntoFloat)
    return zero::rt::failCaller(
        "zero_rt_host_matmul (" + std::to_string(m) + "x" + std::to_string(n) +
        "x" + std::to_string(k) + "): no GEMM for dtypes " +
        std::to_string(inputDtype) + " -> " + std::to_string(outputDtype));
  if (m <= 0 || n <= 0)
    return;
  auto inputs = static_cast<zero_dtype>(inputDtype);
  auto output = static_cast<zero_dtype>(outputDtype);
  Operand left{a, lda, transposeA != 0}, right{b, ldb, transposeB != 0};
  if (output == ZERO_F64)
    gemmF64(m, n, k, left, right, c, ldc, accumulate != 0);
  else
    gemmByPanels(inputs, output, m, n, k, left, right, c, ldc, accumulate != 0);
}
