//===- ZeroDialect.cpp - the zero dialect ---------------------------------===//

#include "zero/Dialect/Zero/IR/ZeroDialect.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "zero/Dialect/Zero/IR/ZeroOps.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace zero;

#include "zero/Dialect/Zero/IR/ZeroDialect.cpp.inc"
#include "zero/Dialect/Zero/IR/ZeroEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroAttrs.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "zero/Dialect/Zero/IR/ZeroTypes.cpp.inc"

void ZeroDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "zero/Dialect/Zero/IR/ZeroOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "zero/Dialect/Zero/IR/ZeroAttrs.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "zero/Dialect/Zero/IR/ZeroTypes.cpp.inc"
      >();
}

Operation *ZeroDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                            Type type, Location loc) {
  // Folds produce index constants (zero.replica_index on a group of one).
  if (auto typed = dyn_cast<TypedAttr>(value))
    if (arith::ConstantOp::isBuildableWith(typed, type))
      return arith::ConstantOp::create(builder, loc, type, typed);
  return nullptr;
}

LogicalResult FutureType::verify(function_ref<InFlightDiagnostic()> emitError,
                                 Type valueType) {
  if (!isa<RankedTensorType>(valueType))
    return emitError() << "future value must be a ranked tensor, got "
                       << valueType;
  return success();
}

LogicalResult ShardAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                FlatSymbolRefAttr mesh, ArrayRef<int64_t> axes,
                                RankedTensorType whole, int64_t align) {
  if (axes.empty())
    return emitError() << "a shard names the mesh axes of its group";
  if (llvm::any_of(axes, [](int64_t axis) { return axis < 0; }))
    return emitError() << "mesh axes must not be negative";
  if (!whole.hasStaticShape())
    return emitError() << "the whole type must have a static shape, got "
                       << whole;
  if (align < 1)
    return emitError() << "the alignment must be positive, got " << align;
  return success();
}
