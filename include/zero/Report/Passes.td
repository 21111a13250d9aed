//===- Passes.td - what zero tells of a program ---------------*- tablegen -*-===//
//
// zero-report: the bytes, state and time of every function's collectives,
// as zero's analyses count them, for a program in zero's ops or in upstream
// shard's.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_REPORT_PASSES_TD
#define ZERO_REPORT_PASSES_TD

include "mlir/Pass/PassBase.td"
include "zero/Dialect/Zero/Transforms/PassOptions.td"

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
    | `zero.all_to_all` | (N-1)/N B |
    | `zero.shard_slice` | 0 |

    Each compressed exchange (a collective that moves a `zero.quantize`'s
    levels: qwZ's all-gather, qgZ's all-to-all) is listed with its format
    (int8), its block, the elements it quantizes, how often it runs, and its
    bound: each element within `max|block| / 254` a contribution (a
    reduce-scatter's sum adds one such term per rank a hop).

    A collective inside an `scf.for` with constant bounds counts once per
    iteration; one inside a loop of unknown trip count, or on a tensor of
    dynamic shape, is counted and its bytes marked unknown. A collective
    wrapped in `zero.async` counts as the collective.

    It also counts the update elements per rank: the elements that
    elementwise ops on tensors compute per call (per iteration inside a loop),
    which sharding divides by N.

    And the model state bytes per rank, in two parts:
    - weights and optimizer state: what a rank holds from one step to the
      next. In a training loop (an outermost `scf.for` with collectives
      inside) that is the values the loop carries, so loop-carried shards
      count 1/N and a deferred bf16 copy counts half; in a single step, the
      tensor arguments other than those only collectives read (the local
      gradients), so state passed as shards (`shard-function-boundary`)
      counts 1/N;
    - reduced gradients: the results of all-reduces (whole) and
      reduce-scatters (a shard) of tensors of rank 1 or more, once each.

    And the cost model's estimate of one call's time on a rank
    (`zero/Analysis/CostModel.h`, parameters from the options below or
    measured by `zero-run --calibrate`): computation runs in program order,
    collectives one at a time on a communication stream, and a synchronous
    collective or the `zero.await` of an asynchronous one stalls computation
    until the collective is done. The stall is the exposed communication;
    the report prints it with the step time, the computation and
    communication alone, and the share of communication hidden. Comparing it
    before and after `zero-schedule-overlap` shows what the schedule hides.

    Given against rewritten: `zero-report{record-given}` prints nothing and
    records the figures of the program as it is in the module attribute
    `zero.report_given`; a later `zero-report` in the same pipeline prints its
    figures with the given ones and their ratio, and removes the attribute.
    Otherwise the IR is not changed.

    ```
    zero-opt --zero-report='format=json' step.mlir
    zero-opt step.mlir --zero-report=record-given --zero-weight-update-sharding --zero-report
    ```
  }];
  let options = !listconcat([
    Option<"format", "format", "::zero::ReportFormat",
           /*default=*/"::zero::ReportFormat::Text", "Output format",
           [{::llvm::cl::values(
             clEnumValN(::zero::ReportFormat::Text, "text", "a table"),
             clEnumValN(::zero::ReportFormat::Json, "json",
                        "the same figures as JSON"))}]>,
    Option<"outputFile", "output", "std::string", /*default=*/"\"-\"",
           "Where to write the report ('-' for stdout)">,
    Option<"recordGiven", "record-given", "bool", /*default=*/"false",
           "Record this program's figures for a later zero-report to compare "
           "against, instead of printing">,
  ], costModelOptions);
  let dependentDialects = ["::zero::ZeroDialect"];
}

#endif // ZERO_REPORT_PASSES_TD
