//===- Passes.td - conversions into and out of zero -*- tablegen -*-===//

#ifndef ZERO_CONVERSION_PASSES_TD
#define ZERO_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertShardToZero : Pass<"convert-shard-to-zero", "mlir::ModuleOp"> {
  let summary = "Rewrites the upstream shard dialect's grids, collectives "
                "and process indices into zero's";
  let description = [{
    MLIR's own data-parallel flow (`sharding-propagation`, then
    `shard-partition`) turns a one-device program whose batch is annotated
    with `shard.shard` into the replicated training step zero exists for:
    each rank computes on its part of the batch and a `shard.all_reduce`
    sums the weight gradients. This pass makes that program zero's, so that
    `zero-shard-weight-update` shards its update and zero's lowerings run it
    (`zero-weight-update-sharding`, `zero-to-llvm` and `zero-to-nvvm` run it
    first; it changes nothing in a program without shard ops).

    | shard | zero |
    |---|---|
    | `shard.grid @g(shape = 2x4)` | `zero.mesh @g(shape = [2, 4])` |
    | `shard.all_reduce` (sum, average, max, min) | `zero.all_reduce` (sum, mean, max, min) |
    | `shard.all_gather ... gather_axis = d` | `zero.all_gather ... dim = d` |
    | `shard.reduce_scatter ... scatter_axis = d` | `zero.reduce_scatter` |
    | `shard.all_slice ... slice_axis = d` | `zero.shard_slice ... dim = d` |
    | `shard.process_linear_index` | `zero.replica_index` (whole mesh) |
    | `shard.process_multi_index axes = [a, b]` | one `zero.replica_index axes = [a]` per axis |
    | `shard.grid_shape` | `arith.constant`s |

    `grid_axes` become `axes` in the same order (both linearize a rank's
    coordinates in that order); a collective over no axes is a group of one,
    and is replaced by its input. Anything else fails the pass with an error
    on the op that says why, before anything changes: grids of dynamic
    shape, reductions zero's runtime lacks (product, bitwise), collectives it
    does not run (`broadcast`, `all_to_all`, `gather`, `scatter`, `send`,
    `recv`, `shift`, `reduce`, `update_halo`, `neighbors_linear_indices`),
    and sharding annotations that `shard-partition` should have removed.

    ```mlir
    shard.grid @grid(shape = 4)
    %g = shard.all_reduce %gl on @grid grid_axes = [0] : tensor<6x3xf32> -> tensor<6x3xf32>
    // becomes
    zero.mesh @grid(shape = [4])
    %g = zero.all_reduce %gl on @grid axes = [0] reduce = sum : tensor<6x3xf32>
    ```
  }];
  let dependentDialects = ["zero::ZeroDialect", "mlir::arith::ArithDialect"];
}

def ZeroQuantizeToLinalg : Pass<"zero-quantize-to-linalg"> {
  let summary = "Expands block quantization into linalg loop nests";
  let description = [{
    Rewrites `zero.quantize` and `zero.dequantize` (on tensors) into
    `linalg.generic` ops that the lowerings fuse, bufferize and run on the
    host or the GPU like any other loop nest. With `B` the block and the
    last dimension padded with zeros to whole blocks and viewed as
    `(blocks, B)`:

    1. each block's largest magnitude, `max(|x|)` in f32 (a NaN propagates);
    2. the scales, that maximum divided by 127;
    3. each element, `x / scale` rounded to the nearest integer (ties to
       even), clamped to [-127, 127], 0 where it is NaN (a block of zeros),
       converted to i8;

    and for `zero.dequantize`, `i8 * scale` in f32, converted to the
    result's type. The padding is cut off again.

    ```mlir
    %q, %s = zero.quantize %w block = 4 : tensor<1x8xf32> -> tensor<1x8xi8>, tensor<1x2xf32>
    // becomes (abridged)
    %e = tensor.expand_shape %w [[0], [1, 2]] : tensor<1x8xf32> into tensor<1x2x4xf32>
    %m = linalg.generic {iterator_types = ["parallel", "parallel", "reduction"]} ins(%e) outs(%zeros) {
      maximumf(absf(x), acc) }
    %s = linalg.generic ... { divf(m, 127) }
    %q = linalg.generic ... { fptosi(clamp(roundeven(divf(x, s)))) }
    ```

    The lowerings (`zero-to-llvm`, `zero-to-nvvm`) run it before anything
    else touches linalg; it changes nothing in a program without these ops.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect",
                           "mlir::tensor::TensorDialect",
                           "mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def ZeroContiguousCollectiveBuffers
    : Pass<"zero-contiguous-collective-buffers"> {
  let summary = "Stages collectives' buffers that are not contiguous through "
                "dense ones";
  let description = [{
    Runs after bufferization, before `zero-lower-to-runtime` (both
    `zero-to-llvm` and `zero-to-nvvm` run it at the end of bufferization).
    The runtime's collectives take a pointer and an element count, so each
    buffer of `zero.all_reduce_buffer`, `zero.reduce_scatter_buffer`,
    `zero.all_gather_buffer` and `zero.all_to_all_buffer` must be
    contiguous. One that is not, or whose
    layout is known only at run time (a shard that a loop carries has
    `strided<[?], offset: ?>`), is replaced by a new dense buffer: an input is
    copied into it before the collective; an output is copied back from it
    once the collective is done, after the op or after the `zero.wait` of its
    request, where the dense buffers are freed. In `zero-to-nvvm` the copies
    then become kernels (`zero-gpu-copies`); a copy made beside the runtime
    call would run on the host, over device memory.

    A started collective whose request a loop carries out of its block has
    no place to copy its output back: with a buffer that is not contiguous it
    is an error, located at the op.

    ```mlir
    zero.all_gather_buffer %shard, %full on @dp
        : memref<46xf32, strided<[?], offset: ?>>, memref<92xf32>
    // becomes
    %dense = memref.alloc() : memref<46xf32>
    memref.copy %shard, %dense
        : memref<46xf32, strided<[?], offset: ?>> to memref<46xf32>
    zero.all_gather_buffer %dense, %full on @dp
        : memref<46xf32>, memref<92xf32>
    memref.dealloc %dense : memref<46xf32>
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ZeroLowerToRuntime : Pass<"zero-lower-to-runtime", "mlir::ModuleOp"> {
  let summary = "Turns bufferized collectives into calls into zero's runtime";
  let description = [{
    Runs after bufferization. Rewrites

    - `zero.all_reduce_buffer`, `zero.reduce_scatter_buffer`,
      `zero.all_gather_buffer` and `zero.all_to_all_buffer` into calls to
      `zero_rt_all_reduce`, `zero_rt_reduce_scatter`, `zero_rt_all_gather`
      and `zero_rt_all_to_all` (see
      `runtime/include/zero/runtime/zero_runtime.h`): the buffers as
      `!llvm.ptr` at their offset, the element count, the dtype and reduction
      codes, and the group;
    - `zero.replica_index` into a call to `zero_rt_group_index`;

    and then erases the `zero.mesh` symbols. The rewrites are conversion
    patterns (`populateZeroToRuntimePatterns` in
    `zero/Conversion/ZeroToRuntime/ZeroToRuntime.h`) with a type converter
    that gives `!zero.request` the runtime's handle type, `!llvm.ptr`: a
    started collective returns the handle, `zero.wait` becomes `zero_rt_wait`
    on it, and loops carrying requests are converted structurally; the
    dialects they create ops of are registered by
    `registerZeroToRuntimeDialects`. A group is passed as a constant
    `memref.global` holding `{mesh rank, shape..., number of axes, axes...}`,
    one per distinct mesh and axes.

    Every buffer must be contiguous (`zero-contiguous-collective-buffers`
    stages those that are not). A scatter or gather dimension must have only
    unit dimensions before it, so that each rank's part is contiguous; the
    element
    type must be one the runtime has (f32, bf16, f16, f64, i32, i64, i8). Any op
    the pass cannot lower (one of these cases, a collective left in tensor
    form, `zero.async`) is reported with its location and the pass fails.

    ```mlir
    zero.all_reduce_buffer %in, %out on @dp reduce = sum
        : memref<1000xf32>, memref<1000xf32>
    // becomes
    %group = memref.get_global @__zero_group_dp : memref<4xi64>
    ...
    call @zero_rt_all_reduce(%inPtr, %outPtr, %c1000, %c0_f32, %c0_sum, %groupPtr)
        : (!llvm.ptr, !llvm.ptr, i64, i32, i32, !llvm.ptr) -> ()
    ```
  }];
  // Its dependent dialects are the patterns' (registerZeroToRuntimeDialects).
}

def ZeroScfToControlFlow : Pass<"zero-scf-to-cf"> {
  let summary = "Lowers scf to cf as convert-scf-to-cf does, in time linear in "
                "the length of a block";
  let description = [{
    Upstream's `convert-scf-to-cf`, after a linear preparation. Lowering a
    loop splits its block after it, and upstream's conversion lowers the
    first loop of a block first, so every split moves the whole rest of the
    block: quadratic in a training step of thousands of loops in one
    function (a sharded step of 400 tensors: 7.2 s of `zero-to-llvm`'s
    21 s). This pass first ends each function block after every scf op in it
    with a `cf.br` to a new block holding the rest, last op first, so each
    split moves only the ops up to the previous one; the conversion then
    moves nothing but a branch. The extra blocks are straight-line and merge
    back under canonicalization. It lowers round by round, the outermost
    scf ops first: once a loop is lowered its body's blocks are the
    function's, and the next round splits them behind the scf ops they hold
    before lowering those. A training loop's body holds the whole step, and
    with `zero-run`'s run-time checks an `scf.if` per check: lowered in one
    round, every if split the rest of the body (a sharded ResNet-shaped loop
    took `zero-run` 69 s and 3.6 GB, 53 s and 780 MB in rounds).

    It also moves the ops of a function's entry block into a block of their
    own that the entry block branches to. The signature conversion of
    `convert-func-to-llvm` replaces each argument's uses one at a time and
    checks their order against the cast it inserts at the entry block's
    start, renumbering that block each time: with the thousands of
    arguments of a step (weights, gradients, moments) and an entry block of
    tens of thousands of ops, 2.3 s of lowering an 800-tensor step. With the
    uses in another block no order is needed.

    ```mlir
  ^bb0(%args...):
    scf.for ... { A }
    B
    scf.for ... { C }
    D
    // becomes, before the conversion proper
  ^bb0(%args...):
    cf.br ^body
  ^body:
    scf.for ... { A }
    cf.br ^bb1
  ^bb1:
    B
    scf.for ... { C }
    cf.br ^bb2
  ^bb2:
    D
    ```
  }];
  let dependentDialects = ["mlir::cf::ControlFlowDialect",
                           "mlir::arith::ArithDialect"];
}

def ZeroChecksToRuntime : Pass<"zero-checks-to-runtime", "mlir::ModuleOp"> {
  let summary = "Makes the program's run-time checks (cf.assert) calls of "
                "the runtime, which end every rank with the message";
  let description = [{
    `generate-runtime-verification` guards memref accesses, views and casts
    with `cf.assert`: an index outside its buffer, for example, from a
    program whose loop writes past the end of a tensor. Lowered as upstream
    does, a failed assert aborts the process with a signal. This pass makes
    each one a call of the runtime's `zero_rt_check(holds, message)`, which,
    when the condition does not hold, fails the bound rank's world and ends
    the process with status 1 and the message (the op, what failed, its
    location), naming the rank: under mpi and nccl every rank of the job
    ends. The access it guards never happens.

    A check that holds wherever it runs is dropped, since it catches nothing
    and costs compile and run time: most of what
    generate-runtime-verification emits guards the index of a loop that
    counts within its buffer. The pass infers the ranges of the condition's
    operands along their definitions only: upstream's
    `InferIntRangeInterface` for each op, the bounds of `scf.for` (signed)
    and `scf.parallel` for their induction variables, the branch `scf.if`
    takes, and the static layout behind `memref.extract_strided_metadata`
    (through `memref.cast`). A value it cannot follow, such as an index read
    from memory or the rank's offset, keeps its check. On a small GPT-2's
    step (2 blocks, width 64) sharded on 3 ranks, 168 of 2263 checks remain.

    `zero-to-llvm{runtime-checks}` runs both passes after the loops are
    made; `zero-run` lowers with it unless `--runtime-checks=false`.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::func::FuncDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::LLVM::LLVMDialect"];
}

#endif // ZERO_CONVERSION_PASSES_TD
