//===- RuntimeCalls.h - building calls into zero's runtime ------*- C++ -*-===//
//
// The runtime's compiled-code entry points (zero_rt_*) take plain pointers,
// counts and codes: the helpers here declare them, from the runtime's call
// table, and build those arguments from buffers, for every pass that emits
// runtime calls (collectives, GPU library calls).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_ZEROTORUNTIME_RUNTIMECALLS_H
#define ZERO_CONVERSION_ZEROTORUNTIME_RUNTIMECALLS_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "zero/runtime/zero_runtime.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"

#include <optional>

namespace zero {

/// The runtime's compiled-code functions, one per row of its call table
/// (zero/runtime/zero_rt_calls.def), named by the symbol compiled code calls.
enum class RuntimeFunction {
#define ZERO_RT_FUNCTION(SYMBOL, FUNCTION, RESULT, PARAMETERS) SYMBOL,
#include "zero/runtime/zero_rt_calls.def"
};

/// The symbol compiled code calls for `function`.
llvm::StringRef getRuntimeSymbol(RuntimeFunction function);

/// `function`'s type as compiled code declares it before LLVM lowering:
/// i32, i64, and !llvm.ptr for every pointer.
mlir::FunctionType getRuntimeFunctionType(mlir::MLIRContext *context,
                                          RuntimeFunction function);

/// Whether `function` only reads through its pointer parameter `index`
/// (CPTR in the call table; const in the C declaration).
bool isReadOnlyParameter(RuntimeFunction function, unsigned index);

/// The runtime function whose symbol is `symbol`, if any.
std::optional<RuntimeFunction> lookupRuntimeFunction(llvm::StringRef symbol);

/// The runtime's dtype code for `type` (zero_dtype), or none.
inline std::optional<int32_t> dtypeCode(mlir::Type type) {
  if (type.isF32())
    return ZERO_F32;
  if (type.isBF16())
    return ZERO_BF16;
  if (type.isF16())
    return ZERO_F16;
  if (type.isF64())
    return ZERO_F64;
  if (type.isSignlessInteger(32))
    return ZERO_I32;
  if (type.isSignlessInteger(64))
    return ZERO_I64;
  if (type.isSignlessInteger(8))
    return ZERO_I8;
  return std::nullopt;
}

/// The runtime's code for a reduction (zero_reduction): the dialect's
/// ReductionKind has the same values.
inline int32_t reductionCode(ReductionKind kind) {
  static_assert(static_cast<int32_t>(ReductionKind::Sum) == ZERO_SUM &&
                    static_cast<int32_t>(ReductionKind::Mean) == ZERO_MEAN &&
                    static_cast<int32_t>(ReductionKind::Max) == ZERO_MAX &&
                    static_cast<int32_t>(ReductionKind::Min) == ZERO_MIN,
                "zero.reduction kinds and zero_reduction differ");
  return static_cast<int32_t>(kind);
}

/// Bytes an element of `type` (an integer or float) takes in memory once
/// lowered to LLVM: its store size, rounded up to a power of two (an i1 is
/// one byte).
inline unsigned elementBytes(mlir::Type type) {
  return llvm::PowerOf2Ceil(llvm::divideCeil(type.getIntOrFloatBitWidth(), 8u));
}

/// Declares runtime functions and builds their arguments in one module.
class RuntimeCallBuilder {
public:
  RuntimeCallBuilder(mlir::ModuleOp module) : module(module), symbols(module) {}

  /// Declares `function` as a private function once, with `b` (a pattern's
  /// rewriter, so that a conversion sees the declaration).
  mlir::func::FuncOp declare(mlir::OpBuilder &b, RuntimeFunction function) {
    llvm::StringRef name = getRuntimeSymbol(function);
    if (auto existing = symbols.lookup<mlir::func::FuncOp>(name))
      return existing;
    mlir::OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(module.getBody());
    auto fn = mlir::func::FuncOp::create(
        b, module.getLoc(), name,
        getRuntimeFunctionType(module.getContext(), function));
    fn.setPrivate();
    symbols.insert(fn);
    return fn;
  }

  /// A pointer to the constant group descriptor of `mesh` and `axes`.
  mlir::Value groupPointer(mlir::OpBuilder &b, mlir::Location loc, MeshOp mesh,
                           mlir::DenseI64ArrayAttr axes) {
    llvm::SmallVector<int64_t> groupAxes = getGroupAxes(mesh, axes);
    std::string name = ("__zero_group_" + mesh.getSymName()).str();
    if (axes)
      name += "_axes_" + llvm::join(llvm::map_range(groupAxes,
                                                    [](int64_t a) {
                                                      return std::to_string(a);
                                                    }),
                                    "_");
    llvm::SmallVector<int64_t> descriptor = {mesh.getNumAxes()};
    llvm::append_range(descriptor, mesh.getShape());
    descriptor.push_back(groupAxes.size());
    llvm::append_range(descriptor, groupAxes);
    return constantPointer(
        b, loc, name,
        mlir::DenseIntElementsAttr::get(
            mlir::RankedTensorType::get(
                {static_cast<int64_t>(descriptor.size())}, b.getI64Type()),
            llvm::ArrayRef<int64_t>(descriptor)));
  }

  /// A pointer to the private constant global `name` holding `value`,
  /// declared once per module.
  mlir::Value constantPointer(mlir::OpBuilder &b, mlir::Location loc,
                              llvm::StringRef name,
                              mlir::DenseElementsAttr value) {
    auto type = mlir::MemRefType::get(value.getType().getShape(),
                                      value.getType().getElementType());
    if (!symbols.lookup(name)) {
      mlir::OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(module.getBody());
      auto global = mlir::memref::GlobalOp::create(
          b, module.getLoc(), name, b.getStringAttr("private"), type, value,
          /*constant=*/true, /*alignment=*/nullptr);
      symbols.insert(global);
    }
    return pointerTo(b, loc,
                     mlir::memref::GetGlobalOp::create(b, loc, type, name));
  }

  /// The address of the first element of `buffer` as an !llvm.ptr.
  mlir::Value pointerTo(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::Value buffer) {
    auto type = mlir::cast<mlir::MemRefType>(buffer.getType());
    mlir::Value address =
        mlir::memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
    auto [strides, offset] = type.getStridesAndOffset();
    if (offset != 0) {
      mlir::Value elements;
      if (mlir::ShapedType::isDynamic(offset))
        elements =
            mlir::memref::ExtractStridedMetadataOp::create(b, loc, buffer)
                .getOffset();
      else
        elements = mlir::arith::ConstantIndexOp::create(b, loc, offset);
      unsigned bytes = elementBytes(type.getElementType());
      mlir::Value byteOffset = mlir::arith::MulIOp::create(
          b, loc, elements,
          mlir::arith::ConstantIndexOp::create(b, loc, bytes));
      address = mlir::arith::AddIOp::create(b, loc, address, byteOffset);
    }
    mlir::Value asInt =
        mlir::arith::IndexCastOp::create(b, loc, b.getI64Type(), address);
    return mlir::LLVM::IntToPtrOp::create(b, loc, pointerType(), asInt);
  }

  mlir::Type pointerType() {
    return mlir::LLVM::LLVMPointerType::get(module.getContext());
  }

  /// The buffer of `type` (a static shape and static strides and offset)
  /// whose allocation starts at `base` (an !llvm.ptr): its descriptor
  /// (allocated and aligned pointer, offset, sizes, strides), which the
  /// memref lowering that follows takes through an unrealized cast.
  mlir::Value bufferAt(mlir::OpBuilder &b, mlir::Location loc, mlir::Value base,
                       mlir::MemRefType type) {
    mlir::Type i64 = b.getI64Type();
    int64_t rank = type.getRank();
    llvm::SmallVector<mlir::Type> fields = {pointerType(), pointerType(), i64};
    if (rank > 0) {
      fields.push_back(mlir::LLVM::LLVMArrayType::get(i64, rank));
      fields.push_back(mlir::LLVM::LLVMArrayType::get(i64, rank));
    }
    mlir::Value descriptor = mlir::LLVM::PoisonOp::create(
        b, loc,
        mlir::LLVM::LLVMStructType::getLiteral(module.getContext(), fields));
    auto insert = [&](mlir::Value value, llvm::ArrayRef<int64_t> position) {
      descriptor = mlir::LLVM::InsertValueOp::create(b, loc, descriptor, value,
                                                     position);
    };
    auto constant = [&](int64_t value) -> mlir::Value {
      return mlir::LLVM::ConstantOp::create(b, loc, i64, value);
    };
    auto [strides, offset] = type.getStridesAndOffset();
    insert(base, {0});
    insert(base, {1});
    insert(constant(offset), {2});
    for (int64_t d = 0; d < rank; ++d) {
      insert(constant(type.getDimSize(d)), {3, d});
      insert(constant(strides[d]), {4, d});
    }
    return mlir::UnrealizedConversionCastOp::create(b, loc, type, descriptor)
        .getResult(0);
  }

  /// A pointer to a constant NUL-terminated copy of `text`.
  mlir::Value stringPointer(mlir::OpBuilder &b, mlir::Location loc,
                            llvm::StringRef text) {
    std::string name = "__zero_label_";
    for (char c : text)
      name += llvm::isAlnum(c) ? c : '_';
    llvm::SmallVector<int8_t> bytes(text.begin(), text.end());
    bytes.push_back(0);
    return constantPointer(
        b, loc, name,
        mlir::DenseIntElementsAttr::get(
            mlir::RankedTensorType::get({static_cast<int64_t>(bytes.size())},
                                        b.getI8Type()),
            llvm::ArrayRef<int8_t>(bytes)));
  }

private:
  mlir::ModuleOp module;
  mlir::SymbolTable symbols;
};

} // namespace zero

#endif // ZERO_CONVERSION_ZEROTORUNTIME_RUNTIMECALLS_H
