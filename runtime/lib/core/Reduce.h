//===- Reduce.h - elementwise reductions over dtypes ------------*- C++ -*-===//
//
// The arithmetic of the reducing collectives, shared by every CPU backend.
// Inputs are combined in the order given (rank order 0..n-1 for the local
// backend), accumulating in the element type for f32, f64 and integers
// (integers wrap) and in f32 for bf16 and f16, which are rounded once at the
// end. The same element is always computed by the same sequence of
// operations, so all-reduce and reduce-scatter agree bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_REDUCE_H
#define ZERO_RUNTIME_REDUCE_H

#include "zero/runtime/Elements.h"
#include "zero/runtime/zero_runtime.h"

#include <cstdint>

namespace zero::rt {

/// out[outOffset + e] = reduce_{r=0..n-1} ins[r][inOffset + e] for e < len.
/// `mean` divides the sum by n. `out` may alias any input.
void reduceRange(zero_dtype dtype, zero_reduction reduction,
                 const void *const *ins, int32_t n, int64_t inOffset, void *out,
                 int64_t outOffset, int64_t len);

/// inout[e] = reduce(inout[e], in[e]) for one pair, as MPI user ops need.
void reducePair(zero_dtype dtype, zero_reduction reduction, const void *in,
                void *inout, int64_t len);

/// data[e] /= divisor, for finishing a mean computed as a sum.
void divideInPlace(zero_dtype dtype, void *data, int64_t len, int32_t divisor);

float bf16ToFloat(uint16_t value);
uint16_t floatToBf16(float value);
float f16ToFloat(uint16_t value);
uint16_t floatToF16(float value);

} // namespace zero::rt

#endif // ZERO_RUNTIME_REDUCE_H
