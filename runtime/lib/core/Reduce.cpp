//===- Reduce.cpp - elementwise reductions over dtypes --------------------===//

#include "core/Reduce.h"
#include "core/HalfFloat.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace zero::rt;

float zero::rt::bf16ToFloat(uint16_t value) { return half::bf16ToFloat(value); }
uint16_t zero::rt::floatToBf16(float value) { return half::floatToBf16(value); }
float zero::rt::f16ToFloat(uint16_t value) { return half::f16ToFloat(value); }
uint16_t zero::rt::floatToF16(float value) { return half::floatToF16(value); }

void zero::rt::storeElement(zero_dtype dtype, void *data, int64_t i,
                            double value) {
  switch (dtype) {
  case ZERO_F32:
    static_cast<float *>(data)[i] = static_cast<float>(value);
    break;
  case ZERO_BF16:
    static_cast<uint16_t *>(data)[i] =
        half::floatToBf16(static_cast<float>(value));
    break;
  case ZERO_F16:
    static_cast<uint16_t *>(data)[i] =
        half::floatToF16(static_cast<float>(value));
    break;
  case ZERO_F64:
    static_cast<double *>(data)[i] = value;
    break;
  case ZERO_I32:
    static_cast<int32_t *>(data)[i] = static_cast<int32_t>(value);
    break;
  case ZERO_I64:
    static_cast<int64_t *>(data)[i] = static_cast<int64_t>(value);
    break;
  case ZERO_I8:
    static_cast<int8_t *>(data)[i] = static_cast<int8_t>(value);
    break;
  }
}

double zero::rt::loadElement(zero_dtype dtype, const void *data, int64_t i) {
  switch (dtype) {
  case ZERO_F32:
    return static_cast<const float *>(data)[i];
  case ZERO_BF16:
    return half::bf16ToFloat(static_cast<const uint16_t *>(data)[i]);
  case ZERO_F16:
    return half::f16ToFloat(static_cast<const uint16_t *>(data)[i]);
  case ZERO_F64:
    return static_cast<const double *>(data)[i];
  case ZERO_I32:
    return static_cast<const int32_t *>(data)[i];
  case ZERO_I64:
    return static_cast<double>(static_cast<const int64_t *>(data)[i]);
  case ZERO_I8:
    return static_cast<const int8_t *>(data)[i];
  }
  return 0;
}

namespace {

template <typename Acc> Acc combine(zero_reduction reduction, Acc acc, Acc x) {
  switch (reduction) {
  case ZERO_SUM:
  case ZERO_MEAN:
    if constexpr (std::is_integral_v<Acc>) {
      using U = std::make_unsigned_t<Acc>;
      return static_cast<Acc>(static_cast<U>(acc) + static_cast<U>(x));
    } else {
      return acc + x;
    }
  case ZERO_MAX:
    if constexpr (!std::is_integral_v<Acc>)
      if (std::isnan(acc) || std::isnan(x))
        return std::numeric_limits<Acc>::quiet_NaN();
    return x > acc ? x : acc;
  case ZERO_MIN:
    if constexpr (!std::is_integral_v<Acc>)
      if (std::isnan(acc) || std::isnan(x))
        return std::numeric_limits<Acc>::quiet_NaN();
    return x < acc ? x : acc;
  }
  return acc;
}

/// Element access for a storage type T computed in Acc.
template <typename T, typename Acc> struct Plain {
  static Acc load(const void *p, int64_t i) {
    return static_cast<Acc>(static_cast<const T *>(p)[i]);
  }
  static void store(void *p, int64_t i, Acc v) {
    static_cast<T *>(p)[i] = static_cast<T>(v);
  }
};
struct Bf16 {
  static float load(const void *p, int64_t i) {
    return bf16ToFloat(static_cast<const uint16_t *>(p)[i]);
  }
  static void store(void *p, int64_t i, float v) {
    static_cast<uint16_t *>(p)[i] = floatToBf16(v);
  }
};
struct F16 {
  static float load(const void *p, int64_t i) {
    return f16ToFloat(static_cast<const uint16_t *>(p)[i]);
  }
  static void store(void *p, int64_t i, float v) {
    static_cast<uint16_t *>(p)[i] = floatToF16(v);
  }
};

/// Reduces `len` elements over `Inputs` inputs (0: `n`, known only at run
/// time). Blocks of 64 elements keep the accumulator in registers and local
/// to the function, so that the loops vectorize without alias checks and
/// stream each input once, and computing a block before storing it lets
/// `out` alias an input. With the count of inputs and the reduction fixed,
/// the inner loops have no branch, and a mean over a power of two divides
/// by multiplying (exactly the same result).
template <int Inputs, zero_reduction Reduction, typename Access, typename Acc>
void reduceBlocks(const void *const *ins, int32_t n, int64_t inOffset,
                  void *out, int64_t outOffset, int64_t len) {
  constexpr int64_t kBlock = 64;
  const int32_t count = Inputs ? Inputs : n;
  auto reduceBlock = [&](int64_t base, int64_t m) {
    Acc acc[kBlock];
    for (int64_t e = 0; e < m; ++e)
      acc[e] = Access::load(ins[0], inOffset + base + e);
    for (int32_t r = 1; r < count; ++r)
      for (int64_t e = 0; e < m; ++e)
        acc[e] = combine<Acc>(Reduction, acc[e],
                              Access::load(ins[r], inOffset + base + e));
    if constexpr (Reduction == ZERO_MEAN && !std::is_integral_v<Acc>)
      for (int64_t e = 0; e < m; ++e)
        acc[e] = acc[e] / static_cast<Acc>(count);
    for (int64_t e = 0; e < m; ++e)
      Access::store(out, outOffset + base + e, acc[e]);
  };
  int64_t base = 0;
  for (; base + kBlock <= len; base += kBlock)
    reduceBlock(base, kBlock);
  if (base < len)
    reduceBlock(base, len - base);
}

/// The reduction over `n` inputs with `n` a constant where it is small.
template <zero_reduction Reduction, typename Access, typename Acc>
void reduceOver(const void *const *ins, int32_t n, int64_t inOffset, void *out,
                int64_t outOffset, int64_t len) {
  switch (n) {
  case 2:
    return reduceBlocks<2, Reduction, Access, Acc>(ins, n, inOffset, out,
                                                   outOffset, len);
  case 3:
    return reduceBlocks<3, Reduction, Access, Acc>(ins, n, inOffset, out,
                                                   outOffset, len);
  case 4:
    return reduceBlocks<4, Reduction, Access, Acc>(ins, n, inOffset, out,
                                                   outOffset, len);
  case 8:
    return reduceBlocks<8, Reduction, Access, Acc>(ins, n, inOffset, out,
                                                   outOffset, len);
  default:
    return reduceBlocks<0, Reduction, Access, Acc>(ins, n, inOffset, out,
                                                   outOffset, len);
  }
}

template <typename Access, typename Acc>
void reduceRangeImpl(zero_reduction reduction, const void *const *ins,
                     int32_t n, int64_t inOffset, void *out, int64_t outOffset,
                     int64_t len) {
  switch (reduction) {
  case ZERO_SUM:
    return reduceOver<ZERO_SUM, Access, Acc>(ins, n, inOffset, out, outOffset,
                                             len);
  case ZERO_MEAN:
    return reduceOver<ZERO_MEAN, Access, Acc>(ins, n, inOffset, out, outOffset,
                                              len);
  case ZERO_MAX:
    return reduceOver<ZERO_MAX, Access, Acc>(ins, n, inOffset, out, outOffset,
                                             len);
  case ZERO_MIN:
    return reduceOver<ZERO_MIN, Access, Acc>(ins, n, inOffset, out, outOffset,
                                             len);
  }
}

template <typename Fn> void dispatch(zero_dtype dtype, Fn &&fn) {
  switch (dtype) {
  case ZERO_F32:
    return fn(Plain<float, float>{}, float{});
  case ZERO_F64:
    return fn(Plain<double, double>{}, double{});
  case ZERO_I32:
    return fn(Plain<int32_t, int32_t>{}, int32_t{});
  case ZERO_I64:
    return fn(Plain<int64_t, int64_t>{}, int64_t{});
  case ZERO_I8:
    return fn(Plain<int8_t, int8_t>{}, int8_t{});
  case ZERO_BF16:
    return fn(Bf16{}, float{});
  case ZERO_F16:
    return fn(F16{}, float{});
  }
}

} // namespace

void zero::rt::reduceRange(zero_dtype dtype, zero_reduction reduction,
                           const void *const *ins, int32_t n, int64_t inOffset,
                           void *out, int64_t outOffset, int64_t len) {
  dispatch(dtype, [&](auto access, auto acc) {
    using Access = decltype(access);
    using Acc = decltype(acc);
    reduceRangeImpl<Access, Acc>(reduction, ins, n, inOffset, out, outOffset,
                                 len);
  });
}

void zero::rt::reducePair(zero_dtype dtype, zero_reduction reduction,
                          const void *in, void *inout, int64_t len) {
  zero_reduction pairwise = reduction == ZERO_MEAN ? ZERO_SUM : reduction;
  dispatch(dtype, [&](auto access, auto acc) {
    using Access = decltype(access);
    using Acc = decltype(acc);
    for (int64_t e = 0; e < len; ++e)
      Access::store(
          inout, e,
          combine<Acc>(pairwise, Access::load(inout, e), Access::load(in, e)));
  });
}

void zero::rt::divideInPlace(zero_dtype dtype, void *data, int64_t len,
                             int32_t divisor) {
  dispatch(dtype, [&](auto access, auto acc) {
    using Access = decltype(access);
    using Acc = decltype(acc);
    if constexpr (!std::is_integral_v<Acc>)
      for (int64_t e = 0; e < len; ++e)
        Access::store(data, e,
                      Access::load(data, e) / static_cast<Acc>(divisor));
  });
}
