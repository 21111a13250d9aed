//===- Reduce.cpp - elementwise reductions over dtypes --------------------===//

#include "Reduce.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

using namespace zero::rt;

/// The IEEE-754 bits of `value`, and the float of `bits` (std::bit_cast is
/// C++20).
static uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
static float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

float zero::rt::bf16ToFloat(uint16_t value) {
  return floatOf(static_cast<uint32_t>(value) << 16);
}

uint16_t zero::rt::floatToBf16(float value) {
  uint32_t bits = bitsOf(value);
  if (std::isnan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // stay a quiet NaN
  // Round to nearest, ties to even.
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

float zero::rt::f16ToFloat(uint16_t h) {
  uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else { // subnormal: normalize
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      bits = sign | (exp << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return floatOf(bits);
}

uint16_t zero::rt::floatToF16(float value) {
  uint32_t bits = bitsOf(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  if (std::isnan(value))
    return static_cast<uint16_t>(sign | 0x7e00);
  float a = std::fabs(value);
  if (a >= 65520.0f) // rounds to infinity
    return static_cast<uint16_t>(sign | 0x7c00);
  if (a < 6.103515625e-05f) {       // subnormal or zero: scale and round
    float scaled = a * 16777216.0f; // 2^24: units of the smallest subnormal
    return static_cast<uint16_t>(sign |
                                 static_cast<uint32_t>(std::nearbyint(scaled)));
  }
  uint32_t abits = bits & 0x7fffffffu;
  uint32_t exp = (abits >> 23) - 127 + 15;
  uint32_t mant = abits & 0x7fffff;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
    ++h; // carries into the exponent correctly
  return static_cast<uint16_t>(sign | h);
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

template <typename Access, typename Acc>
void reduceRangeImpl(zero_reduction reduction, const void *const *ins,
                     int32_t n, int64_t inOffset, void *out, int64_t outOffset,
                     int64_t len) {
  // Blocks keep the accumulator in cache; computing the whole block before
  // storing lets `out` alias an input.
  constexpr int64_t kBlock = 4096;
  Acc acc[kBlock];
  for (int64_t base = 0; base < len; base += kBlock) {
    int64_t m = len - base < kBlock ? len - base : kBlock;
    for (int64_t e = 0; e < m; ++e)
      acc[e] = Access::load(ins[0], inOffset + base + e);
    for (int32_t r = 1; r < n; ++r)
      for (int64_t e = 0; e < m; ++e)
        acc[e] = combine<Acc>(reduction, acc[e],
                              Access::load(ins[r], inOffset + base + e));
    if (reduction == ZERO_MEAN)
      if constexpr (!std::is_integral_v<Acc>)
        for (int64_t e = 0; e < m; ++e)
          acc[e] = acc[e] / static_cast<Acc>(n);
    for (int64_t e = 0; e < m; ++e)
      Access::store(out, outOffset + base + e, acc[e]);
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
