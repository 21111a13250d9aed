//===- Elements.h - the elements of the runtime's dtypes ---------*- C++
//-*-===//
//
// Names, sizes and values of the elements a collective moves (zero_dtype),
// and the names of the collectives: what a tool needs that fills a
// backend's buffers and checks or prints its results, without the runtime's
// internals.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_RUNTIME_ELEMENTS_H
#define ZERO_RUNTIME_ELEMENTS_H

#include "zero/runtime/zero_runtime.h"

#include <cstddef>
#include <cstdint>

namespace zero::rt {

/// The dtype codes are 0 to kNumDtypes - 1 (zero_dtype).
constexpr int kNumDtypes = ZERO_I8 + 1;

/// "f32", "bf16", ...
const char *dtypeName(zero_dtype dtype);
/// Bytes of one element.
size_t dtypeSize(zero_dtype dtype);
/// Whether `dtype` is an integer type (whose mean is not exact).
bool isIntegerDtype(zero_dtype dtype);

/// "all_reduce", "reduce_scatter", ...
const char *kindName(zero_collective_kind kind);
/// Whether `kind` reduces (all-reduce, reduce-scatter): its reduction code
/// is then meaningful.
bool kindReduces(zero_collective_kind kind);

/// Element `i` of a buffer of `dtype`, as a double (exact for every dtype
/// but i64 beyond 2^53).
double loadElement(zero_dtype dtype, const void *data, int64_t i);
/// Stores `value` as element `i` of a buffer of `dtype`: rounded to nearest
/// even for the float types, truncated for the integers.
void storeElement(zero_dtype dtype, void *data, int64_t i, double value);

} // namespace zero::rt

#endif // ZERO_RUNTIME_ELEMENTS_H
