//===- ZeroInterfaces.td - zero op interfaces --------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROINTERFACES_TD
#define ZERO_DIALECT_ZERO_IR_ZEROINTERFACES_TD

include "mlir/IR/OpBase.td"

def Zero_CollectiveOpInterface : OpInterface<"CollectiveOpInterface"> {
  let cppNamespace = "::zero";
  let description = [{
    An operation over a group of ranks of a `zero.mesh`: one tensor operand,
    one tensor result, a mesh and the mesh axes that form the group. Passes
    (bucketing, scheduling, lowering, the report) treat every collective
    through this interface.
  }];
  let methods = [
    InterfaceMethod<"The mesh the group is drawn from.",
      "::mlir::FlatSymbolRefAttr", "getMeshAttr">,
    InterfaceMethod<[{The mesh axes forming the group, or null for all axes.}],
      "::mlir::DenseI64ArrayAttr", "getAxesAttr">,
    InterfaceMethod<"The tensor every rank contributes.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getInput">,
    InterfaceMethod<"The tensor every rank receives.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getResult">,
    InterfaceMethod<[{
        Whether the operation moves data between ranks (`zero.shard_slice`
        does not: it only selects this rank's part).}],
      "bool", "communicates", (ins), [{}], [{ return true; }]>,
  ];
  let extraClassDeclaration = [{
    /// The mesh axes forming the group, all of them when none are named.
    ::llvm::SmallVector<int64_t> getGroupAxes(::zero::MeshOp mesh);
    /// The number of ranks in each group.
    int64_t getGroupSize(::zero::MeshOp mesh);
    /// The mesh named by the op, or null when there is none in scope.
    ::zero::MeshOp lookupMesh();
  }];

}

#endif // ZERO_DIALECT_ZERO_IR_ZEROINTERFACES_TD
