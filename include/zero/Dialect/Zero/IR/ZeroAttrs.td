//===- ZeroAttrs.td - zero attributes ----------------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD
#define ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD

include "zero/Dialect/Zero/IR/ZeroDialect.td"
include "mlir/IR/EnumAttr.td"

def Zero_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a reducing collective combines the ranks' values", [
      I32EnumAttrCase<"Sum", 0, "sum">,
      I32EnumAttrCase<"Mean", 1, "mean">,
      I32EnumAttrCase<"Max", 2, "max">,
      I32EnumAttrCase<"Min", 3, "min">
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::zero";
}

def Zero_ReductionKindAttr : EnumAttr<Zero_Dialect, Zero_ReductionKind,
                                      "reduction"> {
  let summary = "Reduction applied across the ranks of a group";
  let description = [{
    `sum` adds the ranks' values, `mean` adds them and divides by the group
    size (floating-point element types only), `max` and `min` take the largest
    and smallest value (signed comparison for integers; for floats, a NaN on
    any rank gives NaN).

    Reductions combine ranks in group-index order 0..N-1 for every element, so
    `zero.all_reduce` and `zero.reduce_scatter` of the same data agree bit for
    bit.
  }];
  let assemblyFormat = "$value";
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD
