//===- Passes.td - zero passes -----------------------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD
#define ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

include "zero/Dialect/Zero/Transforms/PassOptions.td"

def ZeroAccumulateLocally : Pass<"zero-accumulate-locally",
                                 "mlir::ModuleOp"> {
  let summary = "Reduces accumulated micro-batch gradients once per step, "
                "not once per micro-batch";
  let description = [{
    Gradient accumulation written the plain way reduces each micro-batch's
    gradient and sums the reduced gradients in an `scf.for`; sharded, that is
    one reduce-scatter per micro-batch. This pass sums each rank's local
    gradients in the loop instead and reduces the sum once after it, like
    PyTorch DDP's `no_sync` on every micro-batch but the last:

    ```mlir
    // before
    %sum = scf.for %i = %c0 to %k step %c1 iter_args(%a = %init) -> (tensor<1024xf32>) {
      %g = ... micro-batch %i's local gradient ...
      %r = zero.all_reduce %g on @dp reduce = mean : tensor<1024xf32>
      %a2 = arith.addf %a, %r : tensor<1024xf32>
      scf.yield %a2 : tensor<1024xf32>
    }
    // after
    %zero = arith.constant dense<0.0> : tensor<1024xf32>
    %local = scf.for %i = %c0 to %k step %c1 iter_args(%a = %zero) -> (tensor<1024xf32>) {
      %g = ...
      %a2 = arith.addf %a, %g : tensor<1024xf32>
      scf.yield %a2 : tensor<1024xf32>
    }
    %r = zero.all_reduce %local on @dp reduce = mean : tensor<1024xf32>
    %sum = arith.addf %init, %r : tensor<1024xf32>   // omitted when %init is zeros
    ```

    It applies to a sum or mean all-reduce in the loop's body whose only
    user is an elementwise add (`arith.addf` or `arith.addi` on tensors,
    `linalg.add`, or a `linalg.generic` that adds its two inputs, as
    `convert-elementwise-to-linalg` writes it) of one of the loop's carried
    values, where the carried value has no other user and the sum is yielded
    in its place and used nowhere else: the loop carries nothing but the
    sum, so no one sees a partial one. A candidate that misses one of these
    is left alone with a remark that says which; a module with no candidate
    gets one remark.

    Numerical contract. The reduced sum is the same sum of the same K x N
    terms (K micro-batches, N ranks), in another order: sum over ranks of
    the sum over micro-batches, instead of sum over micro-batches of the sum
    over ranks (and a mean divides once instead of K times). Integer sums
    are unchanged. A float sum reassociated is exact in real arithmetic and
    differs by rounding only: each result element is within
    (K + N) * u * sum of |terms| of the original (u the unit roundoff, 2^-24
    for f32, 2^-8 for bf16), and when the terms do not cancel, within K + N
    units in the last place. `test/Integration/accumulate.test` checks that
    bound against the program as given, at N = 1, 2, 3, 4, 8 and on a 2x4
    mesh. Off by default in `zero-weight-update-sharding`
    (`accumulate-locally`), as `no_sync` is opt-in.
  }];
  let dependentDialects = ["::zero::ZeroDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroShardWeightUpdate : Pass<"zero-shard-weight-update",
                                 "mlir::ModuleOp"> {
  let summary = "Shards weight updates and their full reductions across the "
                "replicas";
  let description = [{
    Finds each `zero.all_reduce` whose result flows only through elementwise
    update code (ops with the `Elementwise` trait and no side effects, such as
    arith and math on tensors) into values that leave the block (operands of
    `func.return`, `scf.yield`, ...), and rewrites it so that each rank updates
    only its 1/N of the elements:

    1. the gradient is flattened, padded to a multiple of the group size N and
       reduce-scattered (`zero.reduce_scatter`, same reduction and group)
       instead of all-reduced;
    2. every other full-shape tensor the update reads (weights, optimizer
       state) is flattened, padded and cut to this rank's shard
       (`zero.shard_slice`); splat constants become splats of the shard shape;
    3. the same update ops run on the shard;
    4. each value the update produces is all-gathered (`zero.all_gather`),
       unpadded and reshaped back before it leaves the block.

    Every element is computed by the same ops from the same inputs as before,
    so the result is identical; padding elements are computed and dropped.

    ```mlir
    // before
    %g = zero.all_reduce %gl on @dp reduce = sum : tensor<10xf32>
    %w2 = arith.subf %w, %g : tensor<10xf32>
    return %w2 : tensor<10xf32>
    // after, on @dp(shape = [4])
    %gp = tensor.pad %gl low[0] high[2] { ... } : tensor<10xf32> to tensor<12xf32>
    %gs = zero.reduce_scatter %gp on @dp reduce = sum : tensor<12xf32> -> tensor<3xf32>
    %wp = tensor.pad %w low[0] high[2] { ... } : tensor<10xf32> to tensor<12xf32>
    %ws = zero.shard_slice %wp on @dp : tensor<12xf32> -> tensor<3xf32>
    %w2s = arith.subf %ws, %gs : tensor<3xf32>
    %w2p = zero.all_gather %w2s on @dp : tensor<3xf32> -> tensor<12xf32>
    %w2 = tensor.extract_slice %w2p[0] [10] [1] : tensor<12xf32> to tensor<10xf32>
    return %w2 : tensor<10xf32>
    ```

    Full reductions: a `linalg.reduce` over every dimension of a sharded
    value (or of its `tensor.collapse_shape` to one dimension) into a 0-d
    init, whose body is one associative combiner of known identity (see
    `zero-order-reductions`), is sharded as well: the norms of LAMB's trust
    ratio, a global gradient norm for clipping, an inf check for loss
    scaling. It is computed in zero's one order for full reductions, the one
    `zero-order-reductions` lowers the program as given in, so the result is
    the same bits as given, for every group size:

    1. the shards of the update are aligned to the tensor's reduction block
       B (16 to 4096 elements; `#zero.shard`'s `align`), so a shard holds
       whole blocks;
    2. each rank combines each of its blocks in index order, with the
       padding elements masked to the identity first (element i of the
       shard is real when its group index times the shard size plus i is
       below the element count), so padding never changes a result;
    3. a `zero.all_gather` gives every rank every block's partial, in group
       order (`i1` travels as `i32`: the runtime moves no `i1`); the blocks
       past the real elements are dropped;
    4. every rank combines the original init and then the partials in index
       order.

    Never a backend's all-reduce, whose order is its own (NCCL's is not
    fixed). The partials cost at most 1/4096 of the reduced elements, plus
    at most 64 for a tensor under 256K elements, and `zero-combine-collectives`
    packs them without gaps (a chunk under its alignment is not aligned):
    the budget is 0.1% of a step's bytes, and LAMB at BERT-base size on 8
    ranks sends 0.08% (`zero-gen-step --model bert --optimizer lamb
    --mesh 8`, `zero-report`). The alignment costs at most B - 1 padding
    elements per tensor and rank. Every rank gets the same
    replicated 0-d value, which the rest of the program reads as before. A
    full reduction of values the update reads anyway (`||w||`, through
    elementwise ops and flattenings only) is sharded with the update, so the
    whole weight is never read. `test/Integration/{lamb,sgd-clipping,
    real-models}.test` and the random programs of `unittests/Execution`
    check bit-identity.

    An all-reduce of a 0-d tensor is a statistic (a loss, a norm), not a
    gradient: it is not considered, and nothing is said of it.

    A gradient is left replicated, with a remark saying why, when: its shape
    is not static; it has no elements; its group has one rank; it is smaller
    than `min-bytes`; or any of its users (transitively, through the update)
    is not update code in the same block (a gradient also used outside the
    update, a reduction along only some dimensions or with a combiner of no
    known identity, an op in a nested region).

    Training loops: when the update sits in an `scf.for` and a loop-carried
    value is read only by the update and produced again by it (optimizer
    state such as a momentum, or a weight nothing else in the loop reads), it
    becomes a loop-carried shard: sliced once before the loop, gathered once
    after it. Its padding then carries computed values from one iteration to
    the next, which no real element reads, since the update is elementwise.
    A weight that the loop's forward pass reads is gathered every iteration
    (below stage 3; `zero-defer-all-gather` then carries it as a shard too).

    Single-step functions: by default the signature does not change:
    optimizer state enters and leaves whole, so it is sliced on entry and
    gathered on exit. With `shard-function-boundary`, an argument that only
    the update reads and the result that returns its next value become this
    rank's shard instead, each marked with `zero.shard = #zero.shard<...>`
    (the mesh, group axes and whole type: see the attribute). A result is
    paired with an argument of its type that it depends on through the
    update; results with one such argument are paired first (`m'` reads only
    `m`, so `w'`, which reads `w` and `m'`, gets `w`), and a result left with
    several stays whole. A function that is called in the module, or has
    more than one block, keeps its signature (a remark says so).

    Training loops with `shard-function-boundary`: a loop-carried shard
    whose loop (in the function's body) starts it from an argument of the
    function, and whose final value the function returns as it is, is the
    shard at the boundary too: the argument and that result become shards
    (`#zero.shard`), the loop starts from the argument and the function
    returns the loop's result, so no rank holds the whole state before or
    after the loop, and nothing is gathered after it. Whatever else reads the
    argument gets it whole, gathered once at the function's start. Carried state that does
    not qualify (the loop starts it from a constant; the function also reads
    its final value) is sliced before the loop and gathered after it, with a
    remark on the loop saying why.

    Mesh and axes (`mesh`, `axes`): by default every gradient is sharded
    over its whole all-reduce group. `mesh=dp` shards only the gradients of
    mesh `@dp` (others stay replicated, with a remark). `axes=1` shards over
    mesh axis 1 only and replicates across the other axes of the group
    (hybrid sharding, e.g. shard inside a node, replicate across nodes): the
    gradient is reduce-scattered over axis 1 and the shard all-reduced over
    the rest; the update, the state and the gathers use axis 1. The two-level
    sum adds in another order than the all-reduce over the whole group, so a
    floating-point sum may round differently by an ulp or so; max and min
    are exact. A gradient whose group does not span the axes stays
    replicated, with a remark.

    ZeRO stages (`stage`):
    - 1: optimizer state only. The gradient is all-reduced as given and each
      rank slices its shard of the result; the update runs on the shard.
    - 2 (default): also the gradient: reduce-scatter instead of all-reduce,
      so no rank holds the whole reduced gradient.
    - 3: also the weights. A loop-carried weight (or, with
      `shard-function-boundary`, a weight argument) that the forward or
      backward pass reads stays a shard as well, and every use outside the
      update gets the whole weight all-gathered just before it, so nothing
      holds it between uses. These gathers carry distinct `zero.for_use`
      numbers so that CSE does not merge them back into one whole weight
      alive from the forward to the backward pass. A copy of the weights
      that the update makes and the loop carries (a bf16 model copy beside
      fp32 master weights, which the update does not read) is a carried
      shard too, gathered in its own type before each use. In a single-step
      function without `shard-function-boundary` the weights enter whole and
      stage 3 is stage 2: a remark on the function says so. With it, a
      returned copy that pairs with no argument leaves whole, and a remark
      on the op that makes it says why.

    All stages compute every element with the same ops on the same inputs,
    so the results are those of the program as given.
  }];
  let options = shardWeightUpdateOptions;
  let dependentDialects = ["::zero::ZeroDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def ZeroDeferAllGather : Pass<"zero-defer-all-gather", "mlir::ModuleOp"> {
  let summary = "Carries sharded weights across training-loop iterations and "
                "gathers them for the next iteration, in bf16 where exact";
  let description = [{
    Runs after `zero-shard-weight-update` on a training loop (`scf.for`)
    whose weights it left loop-carried whole: each iteration slices the
    weight for the update and all-gathers the new shard right after it. This
    pass carries the fp32 shard round the loop instead, and beside it the
    gathered copy that the forward and backward passes read:

    1. before the loop, the weight is sliced once, and the first iteration's
       copy is the whole initial weight, converted locally (every rank has
       it: no gather);
    2. in the body, the update reads the carried shard; the other readers
       read the carried copy;
    3. at the end of the body, the new shard is converted to the gather type
       and all-gathered: the next iteration's copy. The scheduler can start
       it there and await it where the next iteration first reads it;
    4. after the loop, the caller gets the last copy where it was gathered
       in the weight's own type; else (a bf16 copy) the last shard is
       gathered once more in full precision.

    With `shard-function-boundary` (as in `zero-shard-weight-update`), a
    weight that the loop starts from an argument of its function, and whose
    final value the function returns as it is, enters and leaves as the
    shard itself: the argument and that result become shards
    (`#zero.shard`), the loop starts from the argument, the first
    iteration's copy is the argument's shard converted to the gather type
    and gathered (rounding commutes with gathering: the same bits as
    rounding the whole weight), and the function returns the last shard.
    A weight that does not qualify keeps steps 1 and 4, with a remark saying
    why, as does every weight of a function whose signature may not change
    (called in the module, or of more than one block).

    The gather type (`gather-dtype`): with `auto`, when every reader of the
    weight is an `arith.truncf` to one type (the bf16 copy of fp32 master
    weights), the gather moves that type: rounding commutes with gathering,
    so the truncated copy is the same bit for bit, for half the bytes. Else
    the weight's own type. Naming a type (`bf16`, `f16`, `f32`) forces it:
    readers that need more precision then read a rounded copy extended back,
    which changes results; a remark says so.

    Compressed (`gather-dtype=int8`, ZeRO++'s qwZ, or `gather-dtype=int4`,
    two levels a byte with an even `quantize-block`): the new shard is
    quantized (`zero.quantize`, blocks of `quantize-block` elements of this
    rank's shard, one f32 scale each), the levels and the scales are
    all-gathered, and each rank dequantizes them into the type the readers
    read. Each element of the copy is then within `max|block| / 254` of the
    weight (int4: `/ 14`; see `zero.quantize`); the carried fp32 shard, which the update
    reads, stays exact, so no error accumulates in the weights or the
    optimizer state, and the caller gets the last shard gathered exactly.
    The first iteration reads the initial weight itself. A gather moves
    `(1 + 4 / B) / 4` of the f32 bytes for blocks of `B` that divide the
    shard (int4: `(1/2 + 4 / B) / 4`). This changes what the forward pass computes: a remark says so,
    and it is off unless asked for.

    Stage 3 (`zero-shard-weight-update{stage=3}`) gathers a weight before
    each op that reads it (`zero.all_gather` marked `zero.for_use`); with
    `gather-dtype=int8` or `int4` each such gather sends the shard the same
    way, and the op reads the dequantized copy, within the same bound; the
    shard, which the update reads, stays exact. A per-use gather whose copy
    leaves whole (returned, carried by a loop) stays exact, with a remark.
    The sharding pipelines run this pass for stage 3 when `gather-dtype` is
    int8 or int4. A function where `gather-dtype=int8` compresses nothing
    (no loop of it defers a gather, no op reads a weight through stage 3's
    gather) gets a remark that says so.

    ```mlir
    // before (after zero-shard-weight-update)
    scf.for ... iter_args(%w = %w0) -> (tensor<10xf32>) {
      %wb = arith.truncf %w : tensor<10xf32> to tensor<10xbf16>
      ... forward and backward read %wb ...
      %ws = zero.shard_slice %wp on @dp : tensor<12xf32> -> tensor<3xf32>
      %ws2 = arith.subf %ws, %gs : tensor<3xf32>
      %wn = zero.all_gather %ws2 on @dp : tensor<3xf32> -> tensor<12xf32>
      ... unpad %wn to %w2 ...
      scf.yield %w2 : tensor<10xf32>
    }
    // after
    %c0 = arith.truncf %w0 : tensor<10xf32> to tensor<10xbf16>
    scf.for ... iter_args(%ws = %s0, %wb = %c0) -> (tensor<3xf32>, tensor<10xbf16>) {
      ... forward and backward read %wb ...
      %ws2 = arith.subf %ws, %gs : tensor<3xf32>
      %t = arith.truncf %ws2 : tensor<3xf32> to tensor<3xbf16>
      %n = zero.all_gather %t on @dp : tensor<3xbf16> -> tensor<12xbf16>
      ... unpad %n to %wb2 ...
      scf.yield %ws2, %wb2 : tensor<3xf32>, tensor<10xbf16>
    }
    ... all_gather the last shard in f32 for the caller ...
    ```

    With a narrower copy, the last iteration's gather is not read (peeling
    the last iteration would save it, at the cost of a copy of the body).
    Loops whose weights
    are not gathered this way (stage 3, where each use gathers; weights that
    no gradient updates) are not deferred.
  }];
  let options = !listconcat(deferAllGatherOptions, quantizeBlockOptions,
                            shardFunctionBoundaryOptions);
  let dependentDialects = ["::zero::ZeroDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroCompressReduceScatter : Pass<"zero-compress-reduce-scatter",
                                     "mlir::ModuleOp"> {
  let summary = "Exchanges the gradients' reduce-scatter as int8, int4 or "
                "bf16, all-to-all, summed in f32 by each rank (ZeRO++'s "
                "qgZ), planned per bucket within an error budget";
  let description = [{
    Rewrites each `zero.reduce_scatter` (sum or mean, of floats, split along
    dimension 0) so that it moves int8 (`bits=8`, the default) or int4
    (`bits=4`, two levels a byte; `quantize-block` even) blocks, or bf16
    (`bits=16`: each element rounded to nearest even, no scales), instead
    of its element type:

    1. the input, as `[N, S]` (N the group size, S the part each rank
       keeps), is quantized row by row (`zero.quantize`, blocks of
       `quantize-block` elements, one f32 scale each; a block never spans
       two ranks' parts);
    2. the levels and the scales go `zero.all_to_all`: each rank receives
       every rank's part of its own shard;
    3. each rank dequantizes them to f32 and sums the N rows in group
       order (rank 0 first, as the exact collective does), divides by N
       for a mean, and converts to the element type.

    On a group over several mesh axes it goes in hops, the innermost axis
    first (within a node, then across nodes): the partial sums of one hop
    are quantized again for the next, so each hop moves int8 (or int4).

    **Bound.** Each element of the result is within `sum_j max|b_j| / 254`
    (int8; `/ 14` for int4) of the exact sum, `b_j` being the block of rank
    j's contribution that holds the element, plus float rounding: the half
    step of 127 (7) levels of each contribution (`zero.quantize`); in bf16
    within `sum_j |x_j| / 256`, bf16's unit roundoff of each contribution. Over hops, each hop adds its own
    term, with the partial sums of the hop before as its contributions. A
    mean's bound is the sum's divided by N. A block with an infinity or a
    NaN gives NaN.

    **Bytes.** An all-to-all sends `(N - 1) / N` of its buffer, as a ring
    reduce-scatter does, so a rank sends `(1 + 4 / B) / 4` of the f32
    bytes for blocks of `B` that divide S (int8: 0.25 at large blocks), and
    `(1/2 + 4 / B) / 4` for int4 (0.125).

    It changes what the update computes: a remark at each rewritten
    collective says so, and the pipelines run it only with
    `reduce-dtype=int8` or `int4`. Collectives it cannot compress stay exact, with a
    remark that says why: a max or min, integers or f64, a split along
    another dimension, a group of one rank (nothing to send). A module with
    no reduce-scatter at all gets a remark at each function.

    **Error feedback** (`error-feedback`, the pipelines' option of that
    name). Each rank keeps what its exchange lost, the *residual* `r` (f32,
    in the layout of the rows a hop quantizes, one per hop), and sends
    `x + r` in the next step; what it keeps then is `x + r - deq(q(x + r))`,
    the very values the receivers summed, so over T steps the results add
    up to the exact sum less the last residuals: the error of a sum of
    steps stays within one step's bound (the contributions being gradient
    plus residual, a factor 2L / (2L - 1) over it), where without feedback
    it can grow with every step (1-bit Adam's and EF-SGD's compensation).
    A residual element that is not finite (its block held an infinity or a
    NaN) starts again from zero. The residual is state:

    - in a training loop (`scf.for`, nested ones too) it is carried round
      the loops from zeros made before the outermost;
    - in a step function's body, the function takes and returns it: a new
      argument, a shard (`#zero.shard` over every mesh axis, a row a rank)
      marked `zero.starts_at_zero`, which a launcher starts at zero, and a
      new result marked `zero.state_of` that argument, so `--steps`,
      checkpoints and `zero-reshard` (which starts it at zero again on
      another world) keep it;
    - anywhere else (an `scf.if`, a function the module calls) the exchange
      is compressed without feedback, and the remark says why.

    It costs a rank one f32 element of state for each element it sends
    (the whole gradient for one hop), and a dequantization, a subtraction
    and an addition a step.

    **Planned** (`only-where-faster`, the pipelines' `reduce-dtype=auto`):
    each reduce-scatter is compressed only where the cost model (its
    options; `zero-run --calibrate` measures them) gives the compressed
    exchange less time than the exact one: the exact collective costs its
    latency plus its bytes over the bandwidth; the compressed one, each of
    its all-to-alls the same, plus its quantization, dequantization and
    sums, element by element, at the elementwise rate. A remark gives both
    estimates either way. Between threads (a collective at memory speed)
    it keeps the exact one; where bytes are slow it compresses. A planned
    exchange whose sum feeds a full reduction (a norm for clipping, LAMB's
    trust ratio, a sum) or an inf check (`math.isinf`, `isnan`, an
    unordered compare), through elementwise ops, reshapes and slices, stays
    exact, with a remark that names that op.

    **Error budget** (`reduce-error-budget=E`, with `only-where-faster`):
    a per-bucket plan. A format qualifies for a reduce-scatter when its
    bound over the exchange's hops, as a share of the largest magnitude of
    each contribution's block, is within E: `hops / 256` for bf16,
    `hops / 254` for int8, `hops / 14` for int4. Of those, the one the cost
    model gives the least time goes, if it beats the exact collective; the
    remark lists each estimate. With none within E the exchange stays
    exact, and says so. Without a budget the plan weighs only `bits`'
    format.

    ```mlir
    %gs = zero.reduce_scatter %g on @dp reduce = sum
        : tensor<4096xf32> -> tensor<1024xf32>
    // becomes (quantize-block=512)
    %rows = tensor.expand_shape %g [[0, 1]] output_shape [4, 1024]
        : tensor<4096xf32> into tensor<4x1024xf32>
    %q, %s = zero.quantize %rows block = 512
        : tensor<4x1024xf32> -> tensor<4x1024xi8>, tensor<4x2xf32>
    %qt = zero.all_to_all %q on @dp : tensor<4x1024xi8>
    %st = zero.all_to_all %s on @dp : tensor<4x2xf32>
    %d = zero.dequantize %qt, %st block = 512
        : tensor<4x1024xi8>, tensor<4x2xf32> -> tensor<4x1024xf32>
    %sum = linalg.reduce ins(%d : tensor<4x1024xf32>) ... dimensions = [0]
    ```
  }];
  let options = !listconcat(quantizeBlockOptions,
                            compressReduceScatterOwnOptions,
                            reduceErrorBudgetOptions, errorFeedbackOptions,
                            costModelOptions);
  let dependentDialects = ["::zero::ZeroDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def ZeroCombineCollectives : Pass<"zero-combine-collectives",
                                  "mlir::ModuleOp"> {
  let summary = "Buckets small collectives of one kind into one exchange";
  let description = [{
    Every collective pays a latency; a training step with hundreds of small
    parameters (biases, norms) pays hundreds. This pass packs collectives of
    one block that do the same exchange (same op, element type, mesh, axes
    and reduction; reduce-scatters and all-gathers on 1-D tensors, the flat
    shards `zero-shard-weight-update` makes) into buckets of at most
    `bucket-bytes`, and exchanges each bucket once:

    - `zero.all_reduce`: the members, flattened, are laid side by side in one
      1-D `tensor.concat` at offsets aligned to `alignment` bytes (zeros in
      the gaps), all-reduced, and cut back out. A member smaller than
      `alignment` follows the one before without a gap: a gap would cost
      more than the alignment gains (a norm's block partials are a few
      elements a tensor).
    - `zero.reduce_scatter`: the buffer is `[N, chunk]`, row r holding part r
      of every member at the member's offset, so after the reduce-scatter
      each rank keeps exactly the parts it would keep of each member alone.
    - `zero.all_gather`: each rank's parts are laid into its chunk; the
      gathered `[N, chunk]` is cut into the members' columns.

    Each element is reduced by the same ranks in the same order as before,
    so results are bit-identical; only the number of exchanges changes.

    Buckets fill as DDP fills them: in the order the members' inputs become
    ready (the last op each depends on), not the order they are written. A
    collective joins the open bucket of its kind when it fits and no
    dependence runs between it and the bucket, directly or through other
    buckets (the block is a dependence graph and each bucket one node of it;
    joining must not make a cycle). Otherwise the bucket closes and the
    collective opens the next. The block is then put in a topological order
    of that graph that keeps every op where it was, except that a bucket
    goes right after the point where its last member's input is ready, and
    what uses a member's result (a norm term written right after its
    gradient's all-reduce) waits for the bucket. Ops with memory effects
    keep their order among themselves. Computation never moves ahead of the
    bucket, so what computes later members' inputs stays behind it for
    `zero-schedule-overlap` to overlap.

    A member stays alone when packing it costs more time than the latency
    it saves: copying its elements into the bucket and its result out
    (twice its elements at the cost model's `gelements-per-s`) against one
    collective's `latency-us`. With the defaults (20 us, 2 G elements/s)
    that is any member of more than 20,000 elements: a gradient of a million
    elements is exchanged where it lies, and the biases and norms are
    packed. A member larger than `bucket-bytes` stays alone too; collectives inside
    `zero.async`, on dynamic shapes, or on multi-dimensional tensors for
    reduce-scatter and all-gather are not combined.

    Packing is one `tensor.concat`, not a chain of `tensor.insert_slice`s
    into one tensor: One-Shot Bufferize's analysis walks such a chain back
    from each read, which made lowering grow with the cube of a bucket's
    members.

    The combined collective records its layout, so that a checkpoint writer
    can map the flat buffer back to its members:

    ```mlir
    %r = zero.reduce_scatter %flat on @dp reduce = mean
        {zero.bucket = {id = 0 : i64, offsets = array<i64: 0, 64>,
                        sizes = array<i64: 23, 2>,
                        types = [tensor<23xf32>, tensor<2xf32>]}}
        : tensor<264xf32> -> tensor<66xf32>
    ```

    `offsets` and `sizes` are in elements of one rank's chunk; `types` are
    the members' result types, in order.
  }];
  let options = combineCollectivesOptions;
  let dependentDialects = ["::zero::ZeroDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect"];
}

def ZeroScheduleOverlap : Pass<"zero-schedule-overlap", "mlir::ModuleOp"> {
  let summary = "Starts collectives early and awaits them late, so that "
                "communication overlaps computation";
  let description = [{
    Wraps each communicating collective in `zero.async` / `zero.await`,
    within its block. First, the side-effect-free ops that consume a
    collective's result, directly or through each other, sink to just before
    their first use: the update of a shard written right after its
    reduce-scatter moves to where the new weight is needed (the loop's yield),
    so the rest of the backward pass becomes the reduce-scatter's window. An
    op with memory effects stays, and what it reads stays above it. Then:

    - the start goes right after the op that defines the collective's input
      (the block's start when the input comes from outside): a gradient's
      reduce-scatter starts as soon as backward has produced the gradient;
    - the await goes right before the first op that uses the result (or the
      op of this block that holds that use): a weight's all-gather is
      prefetched ahead of the layer that needs it.

    Several collectives that start at the same place are issued in the order
    they are needed: the runtime runs one rank's collectives one at a time in
    issue order, so the one awaited first goes first.

    A collective whose result the function only returns, through views (a
    step at the function boundary gathers its new weights so, each used
    only by the next step; a delayed update returns its gradient shards),
    is awaited where a collective issued after it completes instead: the
    await of one started later, or one left synchronous, whichever comes
    first. Done in issue order, it is complete by then, so the await costs
    no wait; awaited before the return, every such result would be held
    until then, all at once (`zero-donate-state` copies a gathered weight
    into its argument just after its await, and the gathered buffer is
    freed there). Where the cost model only expects it done earlier, it is
    not awaited earlier: a wrong guess would stall the computation. Such
    an all-gather of a result marked `zero.state_of` an argument starts no
    earlier than the last read of that argument (the old weight) before its
    use: started beside it, it could not be gathered into the argument's
    buffer. A delayed update (`zero-delay-update`) makes the new shards at
    the step's start; their gathers then start after the forward and
    backward's last reads, and run behind the rest.

    An all-gather's result is memory the rank holds from start to await;
    `max-in-flight-bytes` caps what all started-but-unused gathers hold
    together (like FSDP's limit on all-gathers in flight). A gather that
    would exceed the cap starts later, once enough earlier ones are used;
    one larger than the cap by itself starts just before its use.

    A collective with no computation between its earliest start and its
    first use (by the cost model) stays synchronous: there is nothing to
    overlap. Collectives already in `zero.async`, and those on a group of one
    rank, are left alone.

    The cost model (a latency plus bytes over bandwidth per collective, with
    the ring algorithm's factors; FLOPs or elements over a rate for
    computation; see `zero-report` for its estimate of exposed
    communication) takes the options below. Results do not change: only
    where the collectives start and end.

    ```mlir
    // before
    %gw = ... backward: the weight's gradient ...
    %gx = ... backward: the rest ...
    %s = zero.reduce_scatter %gw on @dp reduce = mean : tensor<1024xf32> -> tensor<256xf32>
    %w2 = arith.subf %ws, %s : tensor<256xf32>
    // after
    %gw = ...
    %f = zero.async : !zero.future<tensor<256xf32>> {
      %s = zero.reduce_scatter %gw on @dp reduce = mean : tensor<1024xf32> -> tensor<256xf32>
      zero.yield %s : tensor<256xf32>
    }
    %gx = ... runs while the reduce-scatter is in flight ...
    %s = zero.await %f reads %gw : !zero.future<tensor<256xf32>>, tensor<1024xf32>
    %w2 = arith.subf %ws, %s : tensor<256xf32>
    ```

    Across a loop's back edge (done first, innermost loops first): a
    collective in an `scf.for` body whose result reaches the next iteration
    only through the loop, unpacked by static reshapes and slices into
    loop-carried copies (the all-gather of `zero-defer-all-gather`, bucketed
    or not), starts right after the last op that reads those copies in its
    iteration and is awaited right before the first op that reads them in
    the next. The loop carries its future instead of the copies: the first
    iteration awaits a `zero.ready` future of the initial copies, packed as
    the collective lays them out (the unpacking run backwards, padding
    zero); after the loop, the last future is awaited and unpacked. Its
    window is the rest of one iteration and the start of the next, so the
    gather of the weights a layer needs runs behind the layers before it.
    The copies are held across the back edge either way, so the in-flight
    cap does not apply. A collective that reaches the loop's yield but cannot
    be carried (its result also used in the body, overlapping copies, a view
    of a copy yielded) gets a remark and is scheduled within its block.

    A collective that stays synchronous says why in a remark: nothing is
    computed between the definition of its input and its first use (a
    bucket placed where its last member is ready and used right away), or
    starting it earlier would hold more gathered weights than
    `max-in-flight-bytes`.
    `zero-expand-loop-futures` gives the carried collective its buffers.

    ```mlir
    // after zero-defer-all-gather
    scf.for ... iter_args(%s = %s0, %w = %w0) -> (tensor<4xf32>, tensor<16xf32>) {
      ... forward and backward read %w ...
      %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
      scf.yield %s2, %g : tensor<4xf32>, tensor<16xf32>
    }
    // after
    %f0 = zero.ready %w0 : tensor<16xf32>
    %r:2 = scf.for ... iter_args(%s = %s0, %f = %f0)
        -> (tensor<4xf32>, !zero.future<tensor<16xf32>>) {
      ... computation that does not read the weight ...
      %w = zero.await %f : !zero.future<tensor<16xf32>>
      ... forward and backward read %w ...
      %f2 = zero.async : !zero.future<tensor<16xf32>> {
        %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
        zero.yield %g : tensor<16xf32>
      }
      scf.yield %s2, %f2 : tensor<4xf32>, !zero.future<tensor<16xf32>>
    }
    %w_last = zero.await %r#1 : !zero.future<tensor<16xf32>>
    ```
  }];
  let options = scheduleOverlapOptions;
  let dependentDialects = ["::zero::ZeroDialect"];
}

def ZeroExpandLoopFutures : Pass<"zero-expand-loop-futures",
                                 "mlir::ModuleOp"> {
  let summary = "Gives each future that a loop carries buffers that live "
                "across iterations";
  let description = [{
    Runs before One-Shot Bufferize (in `zero-to-llvm` and `zero-to-nvvm`). A
    future carried round an `scf.for` (see `zero-schedule-overlap`) is
    started by one iteration and awaited by the next: its collective reads
    and writes buffers that no single iteration owns. This pass gives them
    to the loop's parent block and makes the rest explicit:

    - before the loop, one buffer for the collective's input and one for its
      result; the loop's first value (`zero.ready`, or a `zero.async` before
      the loop) is copied into the one or started from the other;
    - the loop carries a `!zero.request` instead of the future, starting
      with `zero.completed_request` when the first value is ready;
    - the await in the body becomes a `zero.wait` and a read-only view
      (`bufferization.to_tensor ... restrict`) of the result buffer;
    - the `zero.async` the body yields becomes a copy of the collective's
      input into the input buffer and the collective's buffer form started
      on the two buffers;
    - after the loop, a `zero.wait` (always: the buffers must not be freed
      with a collective in flight) and, for the await there, a view.

    The result buffer is overwritten by each iteration's collective, so
    everything that reads the awaited value (or a view of it) must come
    before the iteration's `zero.async`; the input is copied, so what
    produced it may be reused at once. A loop-carried future the pass
    cannot place (a body that reads the value after starting the next
    collective, or yields a view of it; a future not made by `zero.async`
    or `zero.ready`, or awaited twice) is an error at that op. An await of a
    `zero.ready` future outside a loop becomes its value.

    ```mlir
    // before
    %f0 = zero.ready %w0 : tensor<16xf32>
    %r:2 = scf.for ... iter_args(%s = %s0, %f = %f0)
        -> (tensor<4xf32>, !zero.future<tensor<16xf32>>) {
      %w = zero.await %f : !zero.future<tensor<16xf32>>
      ... reads %w, computes the new shard %s2 ...
      %f2 = zero.async : !zero.future<tensor<16xf32>> {
        %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
        zero.yield %g : tensor<16xf32>
      }
      scf.yield %s2, %f2 : tensor<4xf32>, !zero.future<tensor<16xf32>>
    }
    %wl = zero.await %r#1 : !zero.future<tensor<16xf32>>
    // after
    %in = memref.alloc() : memref<4xf32>
    %out = memref.alloc() : memref<16xf32>
    memref.copy %w0buffer, %out : memref<16xf32> to memref<16xf32>
    %none = zero.completed_request
    %r:2 = scf.for ... iter_args(%s = %s0, %q = %none)
        -> (tensor<4xf32>, !zero.request) {
      zero.wait %q, %in, %out : memref<4xf32>, memref<16xf32>
      %w = bufferization.to_tensor %out restrict : memref<16xf32> to tensor<16xf32>
      ...
      memref.copy %s2buffer, %in : memref<4xf32> to memref<4xf32>
      %q2 = zero.all_gather_buffer %in, %out on @dp
          : memref<4xf32>, memref<16xf32> -> !zero.request
      scf.yield %s2, %q2 : tensor<4xf32>, !zero.request
    }
    zero.wait %r#1, %in, %out : memref<4xf32>, memref<16xf32>
    %wl = bufferization.to_tensor %out restrict : memref<16xf32> to tensor<16xf32>
    ```
  }];
  let dependentDialects = ["::zero::ZeroDialect",
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def ZeroVerifyCollectives : Pass<"zero-verify-collectives",
                                 "mlir::ModuleOp"> {
  let summary = "Proves that every rank issues every collective alike";
  let description = [{
    A collective completes only when every rank of its group issues it, in
    the same order and with the same shape. A rank that skips one (an
    `scf.if` on this rank's gradient being finite, say) hangs the others; one
    that issues another shape corrupts them. Runtimes find this when it
    happens (zero's agreement check, PyTorch's `TORCH_DISTRIBUTED_DEBUG`);
    this pass proves before the run that it cannot happen, or fails at the
    collective and says why.

    It finds, for every value, the mesh axes along which it can differ
    between ranks (`zero/Analysis/Uniformity.h`), then checks each
    collective (zero's, their buffer forms, and upstream `shard`'s):

    - the control it runs under: no enclosing `scf.if`, `scf.index_switch`
      or CFG branch (`cf.cond_br`, `cf.switch`, up to the branch's immediate
      post-dominator) may decide on a value that differs, and no enclosing
      `scf.for`, `scf.forall`, `scf.parallel` or `scf.while` may have a trip
      count that differs; a function's control is that of its calls;
    - its shape: a dynamic size may not differ between ranks (an entry
      function's argument has the same shape on every rank, equal batches
      making equal gradients, unless it is marked `zero.per_rank`);
    - its group is its mesh and axes, attributes: the same on every rank.

    Where values differ between ranks:

    - this rank's index (`zero.replica_index`, `shard.process_linear_index`,
      `shard.process_multi_index`), and each rank's part of a tensor
      (`zero.reduce_scatter`, `zero.shard_slice`, `shard.reduce_scatter`,
      `shard.all_slice`, ...), along the group's axes;
    - arguments of public functions, by this rule:
      1. an argument with `zero.shard` is each rank's part: it differs along
         the shard's axes;
      2. an argument marked `zero.per_rank` differs;
      3. an argument marked `zero.replicated` does not;
      4. otherwise an argument differs when it is the input of a collective
         that reduces (`zero.all_reduce`, `zero.reduce_scatter`,
         `shard.all_reduce`, ...), seen through casts, reshapes, widening,
         padding or insertion into a bucket; or when it reaches such an
         input other than through the result of a collective and is not
         state the function returns (the next value of a weight or a
         moment, as `zero-launch --steps` pairs them, reached as data, not
         only as a branch's condition). That is a local gradient or this
         rank's data, which is what the reduction is for. Weights, optimizer
         state, step counts and learning rates are the same on every rank,
         as data parallelism keeps them;
    - the results of an op on values that differ; an `scf.if`'s results and
      a loop's carried values when its condition or trip count differs; a
      CFG block's arguments after a branch that differs;
    - memory: a value written to a buffer makes every load differ.

    An all-reduce, an all-gather or a broadcast gives every member of its
    group the same value: its result differs only along the axes its group
    does not span.

    The error names the collective, the op that decides whether it runs,
    and the source of the variance, with a note at each op between them:

    ```
    step.mlir:9:10: error: 'zero.all_reduce' op is not issued alike on every
    rank: it runs only where the scf.if at step.mlir:8:5 takes its branch,
    and that condition differs between ranks: argument 1 of @step, which
    differs between ranks: it flows into the zero.all_reduce at
    step.mlir:9:10 (a local gradient, or this rank's data) and is not state
    @step returns; ... -> linalg.generic -> tensor.extract -> arith.cmpf
    ```

    When every collective is proven the pass sets the module attribute
    `zero.collectives_uniform`; `zero-compile` writes it into the artifact's
    description, and the launcher then skips the runtime's per-collective
    agreement exchange (the timeout stays). `mode=warn` reports what it
    cannot prove as warnings and leaves the program running under the
    runtime's check: `zero-to-llvm` and `zero-to-nvvm` run it so.
    `zero-weight-update-sharding` runs it (`mode=error`) before its
    rewrites and after them, so that zero's own rewrites are checked too.

    ```
    zero-opt --zero-verify-collectives step.mlir
    zero-opt --zero-verify-collectives=mode=warn partitioned.mlir
    ```
  }];
  let options = [
    Option<"mode", "mode", "::zero::VerifyMode",
           /*default=*/"::zero::VerifyMode::Error",
           "What a collective that cannot be proven is",
           [{::llvm::cl::values(
             clEnumValN(::zero::VerifyMode::Error, "error",
                        "an error: the pass fails"),
             clEnumValN(::zero::VerifyMode::Warn, "warn",
                        "a warning: the program runs under the runtime's "
                        "agreement check"))}]>,
  ];
}

def ZeroDelayUpdate : Pass<"zero-delay-update", "mlir::ModuleOp"> {
  let summary = "Updates a step's state from the previous step's gradients "
                "(ZeRO-Offload's delayed parameter update)";
  let description = [{
    Makes each step function's update read what the step before computed
    from its data, so that nothing in the update waits for this step's
    backward pass or its reduce-scatters: with `offload`, the host's
    update of step t - 1's gradients runs during step t's forward and
    backward (ZeRO-Offload's delayed parameter update). It changes what is
    computed, so no pipeline runs it unless asked (`delay-update`).

    The contract, for a step function (one whose results are the next
    values of some of its arguments, its state):

    - the state is the model's: not what starts at zero (an error-feedback
      residual, which its exchange updates from this step's gradients, as
      it does undelayed);
    - the update is the ops that compute the state's next values from it
      (`zero-offload-state`'s update steps), and the ops before them that
      only they read, down to the collectives that bring the step's data
      (a gather of a delayed shard joins, so that the shard is kept; so
      does an elementwise linalg op, the linalg form of an elementwise op
      on tensors, so that a step in linalg form keeps what the same step
      in arith form keeps: the gradient shard, not Adam's (1 - b1) g and
      (1 - b2) g^2 beside it);
    - what the update reads that the step computes from its data (a value
      that depends on an argument that is a tensor of rank 1 or more and
      not state: the batch, a gradient given as an argument) is delayed:
      the reduced gradients, a clipping coefficient. Each becomes a new
      argument (a scalar as a tensor of one element) that starts at zero
      (`zero.starts_at_zero`) and each step returns its own value as that
      argument's next (`zero.state_of`), laid out one row a rank;
    - hyperparameters (scalars and 0-d tensors, and what is computed from
      them alone, such as a bias correction from the step count) and the
      state itself are read as of the step that runs the update;
    - a flag, a new argument that starts at zero and that each step sets to
      1, keeps each of the model's state results at its argument in the
      first step (a select where the update makes the new value, element
      for element, from a view of the old, directly or through elementwise
      ops of its shape (a moment's `b1 * m`), such as a weight's or a
      moment's shard before its gather, or before its bucket's
      concatenation where it is gathered in a bucket, so that it joins the
      update's loop rather than being a pass of its own over the gathered
      whole; else at the result):
      step 0 updates nothing, and step t >= 1 applies step t - 1's
      gradients with step t's hyperparameters to the state as step t got
      it. The forward and backward pass of step t read the weights
      step t - 1 returned (which carry the gradients of step t - 2).

    So for a step that takes its gradients as arguments, T delayed steps
    give the state that T - 1 steps as given give on the first T - 1
    gradients (`DelayUpdateTest`, with ZeRO's stages 1 to 3, the deferred
    gather, the overlap and int8 exchanges with error feedback too); for a
    step with its forward and
    backward, two delayed steps give the state of one step as given. A
    checkpoint saves the delayed values and the flag, and a resumed run
    is bit-identical; `zero-reshard` starts them at zero on another world,
    so the first step after a reshard updates nothing.

    A function it cannot rewrite gets a remark that says why, and is left
    as it is: one with no state, several blocks, or callers in the module;
    one whose update reads nothing computed from the step's data, or whose
    update sits in a region (state carried by a training loop).

    ```mlir
    func.func @step(%w: tensor<8xf32>, %m: tensor<8xf32>, %g: tensor<8xf32>)
      %r = zero.all_reduce %g on @dp reduce = mean : tensor<8xf32>
      %m2 = arith.addf %m, %r ...
    // becomes
    func.func @step(%w: ..., %m: ..., %g: ...,
                    %r_prev: tensor<8xf32> {zero.starts_at_zero, ...},
                    %applied: tensor<1xf32> {zero.starts_at_zero, ...})
      %r = zero.all_reduce %g on @dp reduce = mean : tensor<8xf32>
      %m2 = arith.addf %m, %r_prev ...
      %m_next = arith.select %applies, %m2, %m ...
      return ..., %m_next, ..., %r, %one
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroOffloadState : Pass<"zero-offload-state", "mlir::ModuleOp"> {
  let summary = "Marks the training state that lives in pinned host memory "
                "beside a GPU (ZeRO-Offload)";
  let description = [{
    Chooses which of a step's state arguments an offloaded GPU program keeps
    in host memory, where its update then runs (`zero-offload-to-host` in
    the GPU lowering does that), and marks each with the argument attribute
    `zero.memory = "host"`:

    - `offload=optimizer`: each state argument (one that a result of the
      step is the next value of) that only the update reads: its uses,
      through views, pads and slices, are elementwise ops, sums of what
      they read (a norm, whole or as the partial sums a sharded norm
      gathers: a reduction loop whose inputs each index every loop, or only
      the loops its output keeps), collectives and the return. AdamW's and
      LAMB's moments qualify (LAMB's trust ratio reads them through its
      norms); a
      weight the forward pass reads (a matmul or a matrix-vector product,
      which contracts it with another operand; a convolution; a transpose
      feeding one) does not, and stays on the device. A weight that the
      model reads only through another copy qualifies, as ZeRO-Offload
      keeps its fp32 masters: a copy the step returns as state of its own,
      or a rounded copy the forward pass takes (`arith.truncf` to bf16, or
      the same in linalg form), which the device then reads in its place.
    - `offload=params`: every state argument, the weights included.
    - `offload=none` marks nothing.

    `offload-device-share=F` keeps a share F of those arguments' bytes on
    the device after all: the ones whose update can start last, each
    ranked by the last op outside its update that the update reads (its
    gradient's reduce-scatter, say), taken from the last while they fit in
    F. The host's update of the last-reduced gradients would follow the
    backward pass with the device idle; on the device it takes a fraction
    of that time (Twin-Flow's split of the update, chosen by when the
    gradients arrive).

    `offload-device-share=auto` lets the cost model choose: the updates
    that share ops (AdamW's one loop over the moments and the master weight)
    go together, ordered by when each can start in the simulated step
    (`zero-schedule-overlap`'s model, with this pass's cost-model options);
    as the runtime runs them (`HostQueueModel`, CostModel.h, which
    `zero-offload-to-host`'s choice of chunks plays too), the rank starts
    each offloaded update's copies down (what it reads from the device)
    when it is ready, one after another on a copy stream of its own, and
    the host's queue runs the updates in that order, each pipelined in the
    chunks that make it shortest: a chunk's loop once that chunk is down
    and the chunk before is done (the bytes a fused loop moves at the
    host's bandwidth, `host-gbps`, which `zero-run --calibrate` measures,
    20 by default; and `chunk-overhead-us` a chunk), then its copies up
    (what the device reads of it) while the next chunk's loop runs, over
    the link (`link-gbps`; 50 GB/s by default, PCIe Gen5 x16's, each
    direction), the next update once the last is up; while the device's
    step loses those updates' time. Of the choices "keep
    the k that start last", it takes the one whose estimated step
    (the later of the device's and the queue's ends) is shortest, the
    fewest kept among equals, and its remark gives the estimates.

    State that a training loop (`scf.for`) carries from step to step (an
    argument the loop starts from, whose last value the function returns)
    qualifies where the loop's body reads what it carries only as the
    update does, and what follows the loop reads its result so too: the
    argument is marked, and so is the loop, with the positions of the
    iter_args that carry it in host memory (`zero.host_iter_args`, which
    `zero-offload-to-host` reads to place the loop's buffers there). Under
    `offload=params` an argument the forward pass reads goes to host memory
    all the same, but the loop carries it on the device. A mixed-precision
    loop's fp32 masters qualify where the loop carries their shards
    (`zero-defer-all-gather`): the shard goes round the loop in host
    memory, where the update writes it, and its bf16 rounding goes up to
    be gathered into the copy the next step's forward pass reads, which
    the loop carries on the device. A loop that carries a master whole and
    rounds it in every step (one rank, or no `defer-all-gather`) keeps it
    on the device, with a remark: the device would read all of it across
    the link each step.

    A function with no state arguments gets a remark that says why nothing
    moved; so does each state argument that stays on the device under
    `offload=optimizer`, naming the op that reads it (an `scf.while` that
    carries it: offload follows what a loop carries through an `scf.for`'s
    iter_args only), and each loop that carries state in host memory. The
    numbers do not change: the same loops run, on the host instead of the
    device, with the same arithmetic (see `zero-offload-to-host`).

    `zero-weight-update-sharding{offload=optimizer}` runs it last; a CPU
    lowering (`zero-to-llvm` without `gpu-loops`) refuses a program it
    marked.

    ```mlir
    func.func @step(%w: tensor<23xf32>, %m: tensor<23xf32>, ...)
    // becomes
    func.func @step(%w: tensor<23xf32>, %m: tensor<23xf32> {zero.memory = "host"}, ...)
    ```
  }];
  let options = !listconcat(offloadOptions, costModelOptions);
}

#endif // ZERO_DIALECT_ZERO_TRANSFORMS_PASSES_TD
