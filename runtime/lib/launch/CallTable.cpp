//===- CallTable.cpp - zero_rt_calls.def against zero_runtime.h -----------===//
//
// Each row of the compiled-code API's table must describe its C function:
// the compiler declares the function from the row, so a row that differs
// from the declaration would make compiled code pass the wrong arguments.
// The check is at compile time; this file has no code.
//
//===----------------------------------------------------------------------===//

#include "zero/runtime/zero_runtime.h"

#include <cstdint>

namespace {

// The table's kinds, as types, so that a row is a function type.
struct VOID {};
struct I32 {};
struct I64 {};
struct PTR {};
struct CPTR {};

template <typename Kind, typename T> constexpr bool isKind = false;
template <> constexpr bool isKind<VOID, void> = true;
template <> constexpr bool isKind<I32, int32_t> = true;
template <> constexpr bool isKind<I64, int64_t> = true;
template <typename T> constexpr bool isKind<PTR, T *> = true;
template <typename T> constexpr bool isKind<CPTR, const T *> = true;

template <typename KindResult, typename... KindParams, typename Result,
          typename... Params>
constexpr bool matches(KindResult (*)(KindParams...), Result (*)(Params...)) {
  if constexpr (sizeof...(KindParams) != sizeof...(Params))
    return false;
  else
    return isKind<KindResult, Result> && (isKind<KindParams, Params> && ...);
}

#define ZERO_RT_FUNCTION(SYMBOL, FUNCTION, RESULT, PARAMETERS)                 \
  static_assert(matches(static_cast<RESULT(*) PARAMETERS>(nullptr),            \
                        &FUNCTION),                                            \
                #FUNCTION " is not declared as its row of zero_rt_calls.def");
#include "zero/runtime/zero_rt_calls.def"

} // namespace
