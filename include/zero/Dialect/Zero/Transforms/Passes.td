//===- Passes.td - zero passes -----------------------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ZeroReport : Pass<"zero-report", "mlir::ModuleOp"> {
  let summary = "Reports per-rank communication of every function";
  let description = [{
    For each function, counts the collectives and the bytes each rank sends
    per call, by collective kind, with the ring algorithm's factors for a group
    of N ranks and a tensor of B bytes:

    | collective | bytes sent per rank |
    |---|---|
    | `zero.all_reduce` | 2 (N-1)/N B |
    | `zero.reduce_scatter` | (N-1)/N B, B the input |
    | `zero.all_gather` | (N-1)/N B, B the result |
    | `zero.shard_slice` | 0 |

    A collective inside an `scf.for` with constant bounds counts once per
    iteration; one inside a loop of unknown trip count, or on a tensor of
    dynamic shape, is counted and its bytes marked unknown. A collective
    wrapped in `zero.async` counts as the collective. The IR is not changed.

    ```
    zero-opt --zero-report='format=json' step.mlir
    ```
  }];
  let options = [
    Option<"format", "format", "std::string", /*default=*/"\"text\"",
           "Output format: 'text' or 'json'">,
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report ('-' for stdout)">,
  ];
  let dependentDialects = ["::zero::ZeroDialect"];
}

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD
