//===- RuntimeCalls.cpp - the runtime's call table, in MLIR types ---------===//

#include "zero/Conversion/ZeroToRuntime/RuntimeCalls.h"

using namespace mlir;

namespace {

enum class Kind { Void, I32, I64, Ptr, ReadOnlyPtr };

struct Row {
  const char *symbol;
  Kind result;
  llvm::SmallVector<Kind, 12> parameters;
};

// The table's kinds, for its rows below.
constexpr Kind VOID = Kind::Void, I32 = Kind::I32, I64 = Kind::I64,
               PTR = Kind::Ptr, CPTR = Kind::ReadOnlyPtr;

const Row &rowOf(zero::RuntimeFunction function) {
  static const Row rows[] = {
#define ZERO_RT_PARAMETERS(...) {__VA_ARGS__}
#define ZERO_RT_FUNCTION(SYMBOL, FUNCTION, RESULT, PARAMETERS)                 \
  {#SYMBOL, RESULT, ZERO_RT_PARAMETERS PARAMETERS},
#include "zero/runtime/zero_rt_calls.def"
#undef ZERO_RT_PARAMETERS
  };
  return rows[static_cast<size_t>(function)];
}

Type typeOf(MLIRContext *context, Kind kind) {
  switch (kind) {
  case Kind::I32:
    return IntegerType::get(context, 32);
  case Kind::I64:
    return IntegerType::get(context, 64);
  case Kind::Ptr:
  case Kind::ReadOnlyPtr:
  case Kind::Void:
    break;
  }
  return LLVM::LLVMPointerType::get(context);
}

} // namespace

llvm::StringRef zero::getRuntimeSymbol(RuntimeFunction function) {
  return rowOf(function).symbol;
}

FunctionType zero::getRuntimeFunctionType(MLIRContext *context,
                                          RuntimeFunction function) {
  const Row &row = rowOf(function);
  SmallVector<Type> inputs, results;
  for (Kind kind : row.parameters)
    inputs.push_back(typeOf(context, kind));
  if (row.result != Kind::Void)
    results.push_back(typeOf(context, row.result));
  return FunctionType::get(context, inputs, results);
}

bool zero::isReadOnlyParameter(RuntimeFunction function, unsigned index) {
  const Row &row = rowOf(function);
  return index < row.parameters.size() &&
         row.parameters[index] == Kind::ReadOnlyPtr;
}

std::optional<zero::RuntimeFunction>
zero::lookupRuntimeFunction(llvm::StringRef symbol) {
  static const llvm::StringMap<RuntimeFunction> bySymbol = [] {
    llvm::StringMap<RuntimeFunction> map;
#define ZERO_RT_FUNCTION(SYMBOL, FUNCTION, RESULT, PARAMETERS)                 \
  map[#SYMBOL] = RuntimeFunction::SYMBOL;
#include "zero/runtime/zero_rt_calls.def"
    return map;
  }();
  auto found = bySymbol.find(symbol);
  if (found == bySymbol.end())
    return std::nullopt;
  return found->second;
}
