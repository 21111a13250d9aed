//===- Collectives.cu - the cuda-local backend's kernels ------------------===//
//
// The data movement of a collective among ranks that share one GPU, as
// kernels over every member's buffer at once (one launch per collective):
//   all-reduce:     out_k[e] = reduce_r in_r[e]                   for every k
//   reduce-scatter: out_k[e - k*part] = reduce_r in_r[e],  k = e / part
//   all-gather:     out_k[r*count + e] = in_r[e]                  for every k
// The arithmetic is the CPU backends' (Reduce.cpp), operation for operation:
// ranks combined in order 0..n-1, bf16 and f16 accumulated in f32 and
// rounded once (by the same code, HalfFloat.h), the mean
// divided at the end. So cuda-local agrees bit for bit with the local
// backend. Each thread reads every input of its element before it writes
// any output, so an output may alias its own rank's input.
//
// Compiled by nvcc into a fatbin that the runtime embeds and loads with
// cuModuleLoadData: the runtime links no CUDA library.
//
//===----------------------------------------------------------------------===//

#include "../../core/HalfFloat.h"

#include <cstdint>
#include <type_traits>

namespace {

constexpr int kMaxMembers = 64;

struct Buffers {
  const void *ins[kMaxMembers];
  void *outs[kMaxMembers];
  int64_t count;     // elements of each input
  int32_t n;         // members
  int32_t reduction; // 0 sum, 1 mean, 2 max, 3 min (zero_reduction)
};

using zero::rt::half::bf16ToFloat;
using zero::rt::half::f16ToFloat;
using zero::rt::half::floatToBf16;
using zero::rt::half::floatToF16;

template <typename T, typename Acc> struct Plain {
  __device__ static Acc load(const void *p, int64_t i) {
    return static_cast<Acc>(static_cast<const T *>(p)[i]);
  }
  __device__ static void store(void *p, int64_t i, Acc v) {
    static_cast<T *>(p)[i] = static_cast<T>(v);
  }
};
struct Bf16 {
  __device__ static float load(const void *p, int64_t i) {
    return bf16ToFloat(static_cast<const uint16_t *>(p)[i]);
  }
  __device__ static void store(void *p, int64_t i, float v) {
    static_cast<uint16_t *>(p)[i] = floatToBf16(v);
  }
};
struct F16 {
  __device__ static float load(const void *p, int64_t i) {
    return f16ToFloat(static_cast<const uint16_t *>(p)[i]);
  }
  __device__ static void store(void *p, int64_t i, float v) {
    static_cast<uint16_t *>(p)[i] = floatToF16(v);
  }
};

// Rounded operations (__fadd_rn, __dadd_rn, ...) so that nvcc cannot fuse
// or reorder them: the CPU's order, bit for bit.
__device__ float add(float a, float b) { return __fadd_rn(a, b); }
__device__ double add(double a, double b) { return __dadd_rn(a, b); }
__device__ int32_t add(int32_t a, int32_t b) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) +
                              static_cast<uint32_t>(b));
}
__device__ int64_t add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) +
                              static_cast<uint64_t>(b));
}
__device__ float divide(float a, int32_t n) {
  return __fdiv_rn(a, static_cast<float>(n));
}
__device__ double divide(double a, int32_t n) {
  return __ddiv_rn(a, static_cast<double>(n));
}
__device__ int32_t divide(int32_t a, int32_t) { return a; }
__device__ int64_t divide(int64_t a, int32_t) { return a; }

// The quiet NaN the CPU's std::numeric_limits gives (CUDA's NAN has other
// bits).
__device__ float quietNan(float) { return __uint_as_float(0x7fc00000u); }
__device__ double quietNan(double) {
  return __longlong_as_double(0x7ff8000000000000ll);
}

template <typename Acc>
__device__ Acc combine(int32_t reduction, Acc acc, Acc x) {
  if (reduction == 0 || reduction == 1)
    return add(acc, x);
  if constexpr (std::is_floating_point_v<Acc>)
    if (isnan(acc) || isnan(x))
      return quietNan(acc);
  if (reduction == 2)
    return x > acc ? x : acc;
  return x < acc ? x : acc;
}

template <typename Access, typename Acc>
__device__ Acc reduceElement(const Buffers &b, int64_t e) {
  Acc acc = Access::load(b.ins[0], e);
  for (int32_t r = 1; r < b.n; ++r)
    acc = combine<Acc>(b.reduction, acc, Access::load(b.ins[r], e));
  if (b.reduction == 1)
    acc = divide(acc, b.n);
  return acc;
}

__device__ int64_t firstIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ int64_t stride() {
  return static_cast<int64_t>(gridDim.x) * blockDim.x;
}

template <typename Access, typename Acc>
__device__ void allReduce(const Buffers &b) {
  for (int64_t e = firstIndex(); e < b.count; e += stride()) {
    Acc value = reduceElement<Access, Acc>(b, e);
    for (int32_t k = 0; k < b.n; ++k)
      Access::store(b.outs[k], e, value);
  }
}

template <typename Access, typename Acc>
__device__ void reduceScatter(const Buffers &b) {
  int64_t part = b.count / b.n;
  for (int64_t e = firstIndex(); e < b.count; e += stride()) {
    int64_t k = e / part;
    Access::store(b.outs[k], e - k * part, reduceElement<Access, Acc>(b, e));
  }
}

template <typename T> __device__ void allGather(const Buffers &b) {
  int64_t total = b.count * b.n;
  for (int64_t i = firstIndex(); i < total; i += stride()) {
    int64_t r = i / b.count;
    T value = static_cast<const T *>(b.ins[r])[i - r * b.count];
    for (int32_t k = 0; k < b.n; ++k)
      static_cast<T *>(b.outs[k])[i] = value;
  }
}

using F32 = Plain<float, float>;
using F64 = Plain<double, double>;
using I32 = Plain<int32_t, int32_t>;
using I64 = Plain<int64_t, int64_t>;
using I8 = Plain<int8_t, int8_t>;

} // namespace

// One entry point per collective and storage type; the runtime looks them
// up by these names (zero_<kind>_<dtype>).
#define ZERO_REDUCING(dtype, Access, Acc)                                      \
  extern "C" __global__ void zero_all_reduce_##dtype(Buffers b) {              \
    allReduce<Access, Acc>(b);                                                 \
  }                                                                            \
  extern "C" __global__ void zero_reduce_scatter_##dtype(Buffers b) {          \
    reduceScatter<Access, Acc>(b);                                             \
  }
ZERO_REDUCING(f32, F32, float)
ZERO_REDUCING(f64, F64, double)
ZERO_REDUCING(i32, I32, int32_t)
ZERO_REDUCING(i64, I64, int64_t)
ZERO_REDUCING(bf16, Bf16, float)
ZERO_REDUCING(f16, F16, float)
ZERO_REDUCING(i8, I8, int8_t)

// A gather moves bits: one kernel per element size.
extern "C" __global__ void zero_all_gather_1(Buffers b) {
  allGather<uint8_t>(b);
}
extern "C" __global__ void zero_all_gather_2(Buffers b) {
  allGather<uint16_t>(b);
}
extern "C" __global__ void zero_all_gather_4(Buffers b) {
  allGather<uint32_t>(b);
}
extern "C" __global__ void zero_all_gather_8(Buffers b) {
  allGather<uint64_t>(b);
}
