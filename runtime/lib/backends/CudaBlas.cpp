//===- CudaBlas.cpp - matmuls on cuBLAS, loaded at run time ---------------===//
//
// zero_rt_gpu_matmul, which zero-gemm-calls emits for linalg.matmul:
// cublasGemmEx on the calling rank's stream (the one its kernels run on), so
// it runs after the kernels before it and before those after it. cuBLAS is
// opened with dlopen on the first matmul, like the driver: the runtime links
// no CUDA library.
//
//===----------------------------------------------------------------------===//

#include "backends/CudaDriver.h"
#include "zero/runtime/zero_runtime.h"

#include <mutex>
#include <string>

using namespace zero::rt::cuda;

namespace {
// The few cuBLAS types and constants used, as cublas_api.h and
// library_types.h define them.
using cublasStatus_t = int;
using cublasHandle_t = struct cublasContext *;
constexpr cublasStatus_t CUBLAS_STATUS_SUCCESS = 0;
constexpr int CUBLAS_OP_N = 0, CUBLAS_OP_T = 1;
constexpr int CUBLAS_GEMM_DEFAULT = -1;
constexpr int CUBLAS_COMPUTE_32F = 68;
constexpr int CUBLAS_COMPUTE_64F = 70;
constexpr int CUDA_R_32F = 0, CUDA_R_64F = 1, CUDA_R_16F = 2, CUDA_R_16BF = 14;

struct Blas {
  std::string error; // why there is no cuBLAS; empty when there is
  cublasStatus_t (*create)(cublasHandle_t *);
  cublasStatus_t (*setStream)(cublasHandle_t, CUstream);
  cublasStatus_t (*setWorkspace)(cublasHandle_t, void *, size_t);
  cublasStatus_t (*gemmEx)(cublasHandle_t, int, int, int, int, int,
                           const void *, const void *, int, int, const void *,
                           int, int, const void *, void *, int, int, int, int);
  const char *(*statusString)(cublasStatus_t);
};

Blas &blas() {
  static Blas instance;
  static std::once_flag once;
  std::call_once(once, [] {
    void *library = openFirstLibrary(
        {"libcublas.so.13", "libcublas.so.12", "libcublas.so"});
    if (!library) {
      instance.error = "cuBLAS (libcublas.so.13 or .12) cannot be loaded";
      return;
    }
    if (!bindSymbol(library, "cublasCreate_v2", instance.create) ||
        !bindSymbol(library, "cublasSetStream_v2", instance.setStream) ||
        !bindSymbol(library, "cublasSetWorkspace_v2", instance.setWorkspace) ||
        !bindSymbol(library, "cublasGemmEx", instance.gemmEx) ||
        !bindSymbol(library, "cublasGetStatusString", instance.statusString))
      instance.error = "cuBLAS lacks a function zero needs (too old?)";
  });
  return instance;
}

/// The CUDA type of a runtime dtype code, or -1.
int cudaType(int32_t dtype) {
  switch (dtype) {
  case ZERO_F32:
    return CUDA_R_32F;
  case ZERO_F64:
    return CUDA_R_64F;
  case ZERO_F16:
    return CUDA_R_16F;
  case ZERO_BF16:
    return CUDA_R_16BF;
  default:
    return -1;
  }
}

/// cuBLAS's recommended workspace on Hopper (and more than enough before).
constexpr size_t kWorkspaceBytes = 32u << 20;

/// The calling thread's (a rank's) cuBLAS handle, with a workspace of its
/// own: cuBLAS picks its GEMM implementations by the workspace it has, and
/// with several streams at once sharing its default one (N ranks on one
/// GPU) the choice, and so the order of a sum, could change from run to run.
/// Null, with the error recorded, when it cannot be made.
cublasHandle_t threadHandle(const Blas &library) {
  static thread_local cublasHandle_t handle = nullptr;
  if (handle)
    return handle;
  const Driver *d = driver("cublasSetWorkspace");
  if (!d)
    return nullptr;
  cublasHandle_t made = nullptr;
  if (cublasStatus_t s = library.create(&made)) {
    recordError("cublasCreate: " + std::string(library.statusString(s)));
    return nullptr;
  }
  void *workspace = nullptr;
  if (CUresult r = d->cuMemAlloc(&workspace, kWorkspaceBytes)) {
    recordError(errorMessage(r, "cuMemAlloc of cuBLAS's workspace (" +
                                    std::to_string(kWorkspaceBytes >> 20) +
                                    " MiB)"));
    return nullptr;
  }
  if (cublasStatus_t s =
          library.setWorkspace(made, workspace, kWorkspaceBytes)) {
    recordError("cublasSetWorkspace: " + std::string(library.statusString(s)));
    return nullptr;
  }
  return handle = made;
}

} // namespace

extern "C" void zero_rt_gpu_matmul(int32_t inputDtype, int32_t outputDtype,
                                   int64_t m, int64_t n, int64_t k,
                                   const void *a, int64_t lda,
                                   int32_t transposeA, const void *b,
                                   int64_t ldb, int32_t transposeB, void *c,
                                   int64_t ldc) {
  std::string what = "cublasGemmEx (" + std::to_string(m) + "x" +
                     std::to_string(n) + "x" + std::to_string(k) + ")";
  // After a failure the world ends: later work would run on bad data.
  if (zero_bound_rank() && zero_gpu_error())
    return;
  Blas &library = blas();
  if (!library.error.empty())
    return recordError(what + ": " + library.error);
  CUstream stream = threadStream();
  if (!stream)
    return; // the reason is recorded
  if (m == 0 || n == 0)
    return;
  const int64_t limit = 2147483647;
  if (m > limit || n > limit || k > limit || lda > limit || ldb > limit ||
      ldc > limit)
    return recordError(what + ": a dimension exceeds cuBLAS's 32-bit sizes");
  int typeIn = cudaType(inputDtype), typeOut = cudaType(outputDtype);
  if (typeIn < 0 || typeOut < 0)
    return recordError(what + ": no GEMM for dtypes " +
                       std::to_string(inputDtype) + " -> " +
                       std::to_string(outputDtype));
  cublasHandle_t handle = threadHandle(library);
  if (!handle)
    return; // the reason is recorded
  if (cublasStatus_t s = library.setStream(handle, stream))
    return recordError("cublasSetStream: " +
                       std::string(library.statusString(s)));
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap
  // the operands. A row-major operand read column-major is its transpose,
  // so one stored as op(X) is CUBLAS_OP_N and one stored transposed
  // CUBLAS_OP_T. beta = 1: the matmul accumulates into C.
  float one = 1.0f;
  double oneDouble = 1.0;
  bool f64 = typeOut == CUDA_R_64F;
  const void *scale = f64 ? static_cast<const void *>(&oneDouble)
                          : static_cast<const void *>(&one);
  noteLaunch(what);
  TracedRegion traced(stream, what);
  cublasStatus_t s = library.gemmEx(
      handle, transposeB ? CUBLAS_OP_T : CUBLAS_OP_N,
      transposeA ? CUBLAS_OP_T : CUBLAS_OP_N, int(n), int(m), int(k), scale, b,
      typeIn, int(ldb), a, typeIn, int(lda), scale, c, typeOut, int(ldc),
      f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
  if (s != CUBLAS_STATUS_SUCCESS)
    recordError(what + ": " + library.statusString(s));
}
