//===- HalfFloat.h - bf16 and f16 to and from f32, host and device -*- C++
//-*-===//
//
// The conversions of the 16-bit float types, written once for the CPU
// backends (Reduce.cpp) and the cuda-local kernels (cuda/Collectives.cu,
// compiled by nvcc), so that both round the same way bit for bit: round to
// nearest even, NaN kept quiet.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_HALFFLOAT_H
#define ZERO_RUNTIME_HALFFLOAT_H

#include <cmath>
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define ZERO_HOST_DEVICE __host__ __device__
#else
#define ZERO_HOST_DEVICE
#endif

namespace zero::rt::half {

/// The IEEE-754 bits of `value`, and the float of `bits`.
ZERO_HOST_DEVICE inline uint32_t bitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}
ZERO_HOST_DEVICE inline float floatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}
ZERO_HOST_DEVICE inline bool isNan(float value) { return value != value; }

ZERO_HOST_DEVICE inline float bf16ToFloat(uint16_t value) {
  return floatOf(static_cast<uint32_t>(value) << 16);
}

ZERO_HOST_DEVICE inline uint16_t floatToBf16(float value) {
  uint32_t bits = bitsOf(value);
  if (isNan(value))
    return static_cast<uint16_t>((bits >> 16) | 0x40); // stay a quiet NaN
  // Round to nearest, ties to even.
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

ZERO_HOST_DEVICE inline float f16ToFloat(uint16_t h) {
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

ZERO_HOST_DEVICE inline uint16_t floatToF16(float value) {
  uint32_t bits = bitsOf(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  if (isNan(value))
    return static_cast<uint16_t>(sign | 0x7e00);
  float a = floatOf(bits & 0x7fffffffu);
  if (a >= 65520.0f) // rounds to infinity
    return static_cast<uint16_t>(sign | 0x7c00);
  if (a < 6.103515625e-05f) {       // subnormal or zero: scale and round
    float scaled = a * 16777216.0f; // 2^24: units of the smallest subnormal
#ifdef __CUDA_ARCH__
    float rounded = rintf(scaled); // to nearest even, as nearbyint here
#else
    float rounded = std::nearbyint(scaled);
#endif
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(rounded));
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

} // namespace zero::rt::half

#endif // ZERO_RUNTIME_HALFFLOAT_H
