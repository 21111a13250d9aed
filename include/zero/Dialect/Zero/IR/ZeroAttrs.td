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

def Zero_ShardAttr : AttrDef<Zero_Dialect, "Shard"> {
  let mnemonic = "shard";
  let summary = "How a sharded function argument or result maps to its whole "
                "value";
  let description = [{
    Set as `zero.shard` on a function argument or result that
    `zero-shard-weight-update` (option `shard-function-boundary`) turned into
    this rank's shard of a whole tensor of type `whole`. The layout is the one
    every sharded value in zero has: the whole tensor is flattened in
    row-major order, padded at the end to a multiple of the size N of the
    group formed by `axes` of `mesh`, and cut into N equal parts; the rank
    with group index i holds part i, elements [i * S, (i + 1) * S) with
    S = ceil(numElements / N) rounded up to a multiple of `align` (1 unless
    given; the tensor's reduction block, from 16 to 4096 elements, when a
    full reduction reads the shard, so that shard boundaries fall on the
    reduction's blocks: see `zero-order-reductions`). Padding elements hold
    unspecified values.

    A caller (or a checkpoint tool) gives each rank its part of the whole
    value and reassembles a whole result by concatenating the parts in group
    order and dropping the padding.

    ```mlir
    func.func @step(%m: tensor<23xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<7x13xf32>>}, ...)
    func.func @clip(%m: tensor<32xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<7x13xf32>, align = 16>}, ...)
    ```
  }];
  let parameters = (ins "::mlir::FlatSymbolRefAttr":$mesh,
                        ArrayRefParameter<"int64_t">:$axes,
                        "::mlir::RankedTensorType":$whole,
                        DefaultValuedParameter<"int64_t", "1">:$align);
  let assemblyFormat = "`<` $mesh `,` `axes` `=` `[` $axes `]` `,` $whole "
                       "(`,` `align` `=` $align^)? `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// S: the elements of one part of a tensor of `numElements` cut into
    /// `groupSize` parts aligned to `align` elements. The one definition of
    /// a shard's size, for the passes, the runner and the launcher.
    static int64_t getShardElements(int64_t numElements, int64_t groupSize,
                                    int64_t align) {
      int64_t parts = (numElements + groupSize - 1) / groupSize;
      return (parts + align - 1) / align * align;
    }
  }];
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROATTRS_TD
