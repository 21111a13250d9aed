//===- Passes.td - the host's lowering passes -*- tablegen -*-===//

#ifndef ZERO_TARGET_CPU_PASSES_TD
#define ZERO_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def ZeroUnshareInits : Pass<"zero-unshare-inits"> {
  let summary = "Gives each destination operand its own empty or filled "
                "tensor before One-Shot Bufferize";
  let description = [{
    Runs right before `one-shot-bufferize` (both pipelines run it). CSE
    merges identical `tensor.empty` ops and the `linalg.fill`s of them, so
    in a training step one value can be the destination (`outs`) of hundreds
    of ops: every block-partial reduction of one shape, every step of a norm
    chain. One-Shot Bufferize then checks each of those writes for conflicts
    against every other use of the shared value: quadratic, most of
    bufferizing a 800-tensor step. It would give each a buffer of its own
    anyway, since the values written are all live at once.

    This pass undoes the sharing where it costs nothing: each destination
    operand of a destination-style op whose value is a `tensor.empty`, or a
    `linalg.fill` of one, defined in the same block and used elsewhere too,
    gets a copy of that definition right before the op. The first such
    destination in the block keeps the original.

    ```mlir
    %e = tensor.empty() : tensor<1xf32>
    %a = linalg.generic ... outs(%e : tensor<1xf32>)
    %b = linalg.generic ... outs(%e : tensor<1xf32>)
    // becomes
    %e = tensor.empty() : tensor<1xf32>
    %a = linalg.generic ... outs(%e : tensor<1xf32>)
    %e2 = tensor.empty() : tensor<1xf32>
    %b = linalg.generic ... outs(%e2 : tensor<1xf32>)
    ```
  }];
}

def ZeroMarkStateResults
    : Pass<"zero-mark-state-results", "mlir::func::FuncOp"> {
  let summary = "Marks each result that is the next value of an argument "
                "(`zero.state_of`) on the program as the lowering gets it";
  let description = [{
    Runs early in `zero-to-llvm` and `zero-to-nvvm`, before anything folds.
    `zero/Analysis/StateResults` pairs each result of a step with the
    argument it is the next value of, the nearest by the ops between them;
    the launcher feeds each such result back as its argument, and
    `zero-donate-state` (later, once the loops are fused) writes it into
    that argument's buffer. But the lowering folds what tells some pairs
    apart: on a mesh of one rank a gradient's all-reduce is the identity
    and folds away, and AdamW's new first moment, `b1 * m + (1 - b1) * g`,
    is then as near to the gradient's argument as to the moment's. The
    pair was lost, and the moment went to a new buffer each step, which
    costs the update a write-allocate read of a fifth stream of memory.

    This pass marks the pairs on the program as given, as the artifact's
    description takes them for the launcher: each result paired with an
    argument gets `zero.state_of = <argument>`; a result already marked (by
    the sharding pipeline) keeps its mark, and one that is no argument's
    next value gets none.

    ```mlir
    func.func @step(%m: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
      %r = zero.all_reduce %g on @one reduce = mean : tensor<4xf32>
      %a = arith.mulf %m, %b1 : tensor<4xf32>
      %b = arith.mulf %r, %c : tensor<4xf32>
      %n = arith.addf %a, %b : tensor<4xf32>
      return %n : tensor<4xf32>
    }
    // becomes
    func.func @step(%m: tensor<4xf32>, %g: tensor<4xf32>)
        -> (tensor<4xf32> {zero.state_of = 0 : i64}) { ... }
    ```
  }];
}

def ZeroDonateState : Pass<"zero-donate-state", "mlir::func::FuncOp"> {
  let summary = "Writes each state result into its argument's tensor, so "
                "that One-Shot Bufferize can update the state in place";
  let description = [{
    A training step returns the next value of its state (weights, optimizer
    moments), and a launcher feeds that result back as the argument in the
    next step (the description's `state_of`, found by
    `zero/Analysis/StateResults`). Bufferized as written, each such result
    is a fresh buffer every step: the step maps new memory for its whole
    state and the launcher frees the old. This pass donates the argument to
    its result, as XLA's input-output aliasing and JAX's buffer donation do:
    the op that makes the result (a destination-style linalg op whose
    destination it does not read, such as a fused update) takes the
    argument as its destination, and the argument is marked
    `zero.aliasing_output = i` (the result it is donated to). Such an op
    may make the result through reshapes (`tensor.collapse_shape`,
    `tensor.expand_shape`): a delayed update's step-0 guard picks each
    small weight's and moment's next value in the `[N][chunk]` shape of its
    bucket, collapsed to the weight's shape. The op then takes the argument
    reshaped back to its own shape as its destination.

    One-Shot Bufferize then writes the result into the argument's buffer
    when that is safe (function arguments are writable), and copies the
    argument first where something reads its old value after the update;
    `zero-return-donated-buffers` makes the function return that buffer.
    A caller of the lowered function must not read a donated argument's
    buffer after the call (zero's launchers pass state they replace with
    the result, or copies).

    A sharded step's new weight is a slice of what the all-gather made (a
    padded gather's first part, or the weight's part of a gathered bucket),
    or the whole result of a gather of the weight alone (one too large for
    a bucket), perhaps reshaped; the gather may be in flight
    (`zero-schedule-overlap`: a `zero.async`, whose `zero.await` gives the
    result). Bufferized as it stands, the slice would
    be copied into a buffer of its own to be returned, and the gather
    writes one: a second copy of the weights at the step's end, and a fresh
    buffer every step. The slice or the gather's result is instead copied
    into its argument (`bufferization.materialize_in_destination` into the
    argument seen in its shape), which is donated; once bufferized,
    `zero-forward-collective-outputs` has a gather so copied write into the
    argument itself. Such a gather of a weight alone moves to just after
    its shard is made and the old weight last read (in the function's
    block), rather than wait before the return: its shard is then freed
    after it rather than held to the step's end. A slice is copied into its
    argument just after the latest of its own definition and the last read
    of the old weight in the function's block, for the same reason: copied
    before the return, the members of a bucketed gather would hold every
    bucket's gathered buffer until the step's end at once. A gather in
    flight is copied just after its await so too (the views that cut a
    bucket's members out move up to it), and where the old weight is read
    after a weight's gather starts but before its await (a tied weight read
    again), the `zero.async` moves down past that read (where the weight is
    in device memory): started while the old weight is read, the gather
    needs a buffer of its own; started after, it writes into the argument. Such a gather
    (and the views that cut its members out) first moves down past the
    reads of its members' old values that precede its result's first other
    use, as a weight gathered alone does, and what makes its input follows
    it down where no state of the function lives in host memory; where some
    does, that stays, since an offloaded update runs on the host queue
    beside the forward and backward (the input is 1/N of the gathered
    bytes). A delayed update
    (`zero-delay-update`) makes the new shard before the forward and
    backward read the old weight; its gather moves down past those reads
    (where the weight is in device memory), so that the step does not hold
    the new weights beside the old, and what makes the gather's input (the
    update, its other results' step-0 guards, the view of the old shard it
    alone reads) moves down to just before it, so that the step does not
    hold the new shard through the forward and backward either. Only ops
    without effects move, and no collective; where one that would have to
    move cannot, the gather moves alone. A weight that lives in
    host memory (`offload=params`) is copied into its argument so too:
    `zero-offload-to-host` runs the gather in a device buffer of its own
    and copies it back into the argument once done, freeing the device
    buffer there, so that the step holds no device copy of the weights
    until its end and allocates no pinned memory for the new ones. A
    delayed update's gradient shard (`zero-delay-update`: a
    reduce-scatter's result, or a slice of one, is the next value of the
    argument the update reads) is copied into its argument too, after the
    update's read of the old value, where the argument is in device
    memory (reduced in flight too: the await of a `zero.async`); where it
    lives in host memory the queue's update may still read the old value
    there, so the shard is left for
    `zero-offload-to-host`, which sends it down on the rank's host queue
    into pinned memory of its own; where a loop
    starts from the argument or a view of it (a training
    loop that carries a moment's shard, updating it in place), it is left
    too: One-Shot Bufferize would copy the whole argument before the loop.

    A training loop (`scf.for` in the function's body) carries its values
    in place: where the linalg op in the body that makes a value's next
    iteration does not read its destination, and nothing reads the old value
    after that op (an optimizer's fused update of a weight and its moments),
    the op takes the iteration argument as its destination, so the loop
    needs no second buffer for the value; a next value that is a slice of
    something else the body made (a carried weight's copy, its part of a
    gathered bucket), or a gather's whole result, is copied into the iteration argument at the end of
    the iteration, after every read of the old one, as a sharded step's
    new weight is into its argument. A state result that is such a
    loop's result, from a loop that starts the value from the result's
    argument, is donated: the loop then updates the argument's buffer
    itself (with `shard-function-boundary`, the shard the function takes).
    A value a loop carries in host memory (`zero.host_iter_args`) is carried
    in place only where the loop starts it from (a view of) an argument in
    host memory: `zero-fold-in-place-iter-args` removes the iteration
    arguments carried in place once bufferized, keeping the positions of
    `zero.host_iter_args` in step, and a buffer that no iteration argument
    names must be in host memory already.

    A state result that no destination-style op makes (a collective's, a
    loop's that is not carried in place or starts from another value) is
    left as it is, with a remark saying why.

    ```mlir
    func.func @step(%w: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
      %e = tensor.empty() : tensor<8xf32>
      %w2 = linalg.generic ... ins(%w, %g : ...) outs(%e : tensor<8xf32>)
      return %w2 : tensor<8xf32>
    }
    // becomes
    func.func @step(%w: tensor<8xf32> {zero.aliasing_output = 0 : i64},
                    %g: tensor<8xf32>) -> tensor<8xf32> {
      %w2 = linalg.generic ... ins(%w, %g : ...) outs(%w : tensor<8xf32>)
      return %w2 : tensor<8xf32>
    }
    ```
  }];
  let dependentDialects = ["mlir::bufferization::BufferizationDialect",
                           "mlir::tensor::TensorDialect"];
}

def ZeroCanonicalizeDeallocsLast
    : Pass<"zero-canonicalize-deallocs-last", "mlir::func::FuncOp"> {
  let summary = "The canonicalizer, with each bufferization.dealloc "
                "canonicalized once, after everything else";
  let description = [{
    Runs right after `ownership-based-buffer-deallocation`, in place of
    upstream's `canonicalize` there (both pipelines run it). Ownership ends
    a step's block with one `bufferization.dealloc` listing every buffer it
    owns, each with a condition, and retaining every buffer it returns: for
    a 400-tensor step, 8,500 operands. The greedy driver revisits an op
    whenever one of its operands changes, and each visit of that dealloc
    reads all its operands; canonicalizing the conditions' constants and
    the returned buffers' `scf.if`s changes thousands of them, so upstream's
    canonicalizer took time quadratic in the step (0.4 s at 200 tensors,
    1.7 s at 400).

    This pass applies the same patterns (every loaded dialect's and op's
    canonicalization patterns, and folding) first to every other op of the
    function, then to the deallocs, each dealloc visited again only when a
    pattern rewrote it. It does not simplify regions (dead block arguments,
    identical blocks); the canonicalizers later in the pipeline do.
    `RemoveDuplicateSuccessorInputUses` is left out, as in zero's other
    canonicalizers.

    ```mlir
    %r = scf.if %false -> (memref<8xf32>) {
      scf.yield %arg0 : memref<8xf32>
    } else {
      %c = bufferization.clone %arg0 : memref<8xf32> to memref<8xf32>
      scf.yield %c : memref<8xf32>
    }
    bufferization.dealloc (%a, %a : ...) if (%true, %true) retain (%r : ...)
    // becomes
    %c = bufferization.clone %arg0 : memref<8xf32> to memref<8xf32>
    bufferization.dealloc (%a : ...) if (%true) retain (%c : ...)
    ```
  }];
}

def ZeroFoldInPlaceIterArgs
    : Pass<"zero-fold-in-place-iter-args", "mlir::func::FuncOp"> {
  let summary = "Removes the iteration arguments a bufferized loop carries "
                "in place, keeping zero.host_iter_args in step";
  let description = [{
    Runs right after One-Shot Bufferize (both pipelines run it). A value a
    training loop carries in place (`zero-donate-state`) is, once
    bufferized, an iteration argument that the body yields unchanged: its
    buffer is the one the loop starts from. This pass removes each such
    argument, the body and the loop's users reading the buffer the loop
    starts from, as upstream's canonicalizer does; unlike it, it keeps the
    positions in `zero.host_iter_args` (zero-offload-state's marks of what
    the loop carries in host memory, by position) in step with the
    arguments that remain. A value carried in place in host memory needs no
    mark: the loop starts it from (a view of) an argument of the function
    that is in host memory (`zero.memory = "host"`).

    ```mlir
    %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%m = %m0, %b = %b0)
        -> (memref<8xf32>, memref<8xf32>) {
      ... writes %m ...
      scf.yield %m, %b2 : memref<8xf32>, memref<8xf32>
    } {zero.host_iter_args = array<i64: 1>}
    // becomes
    %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %b0) -> (memref<8xf32>) {
      ... writes %m0 ...
      scf.yield %b2 : memref<8xf32>
    } {zero.host_iter_args = array<i64: 0>}
    ```
  }];
}

def ZeroForwardCollectiveOutputs
    : Pass<"zero-forward-collective-outputs", "mlir::func::FuncOp"> {
  let summary = "Has a collective write straight into the buffer its fresh "
                "output is only copied into";
  let description = [{
    Runs right after One-Shot Bufferize (both pipelines run it). A
    collective writes its result into a buffer of its own
    (`memref.alloc`). Where the only reader of that buffer is a
    `memref.copy` of all of it (perhaps reshaped) into another buffer, the
    collective can write there itself: a sharded step's new weight,
    all-gathered on its own and copied into its argument's buffer
    (`zero-donate-state`), is then gathered into the argument, and the step
    holds no second copy of the weights. This is the destination NCCL's
    all-gather is given by its caller, and the one FSDP gathers a parameter
    into.

    The collective writes the target earlier than the copy did: from its
    start to its wait (or where it stands, when it is not split). So the
    rewrite is made only where nothing in between reads, writes or views
    the target's buffer (by any op of the block or nested in one), no
    collective's wait later in the block names it (a collective started
    earlier that may still read it), the collective does not read it, both
    are in one block, and the buffers have the identity layout (the copy's
    reshapes undone on the target give back the output's type). Views of
    the target made between the two (an argument reshaped just before the
    copy) are made again before the collective. Elsewhere nothing changes.

    ```mlir
    %out = memref.alloc() : memref<1536xf32>
    zero.all_gather_buffer %shard, %out on @dp
        : memref<768xf32>, memref<1536xf32>
    %view = memref.expand_shape %out [[0, 1]] output_shape [2, 768]
        : memref<1536xf32> into memref<2x768xf32>
    memref.copy %view, %w : memref<2x768xf32> to memref<2x768xf32>
    // becomes
    %flat = memref.collapse_shape %w [[0, 1]]
        : memref<2x768xf32> into memref<1536xf32>
    zero.all_gather_buffer %shard, %flat on @dp
        : memref<768xf32>, memref<1536xf32>
    ```

    Then an all-gather gathers in place, as NCCL's does when its input is
    the rank's own part of its output, where its input is a fresh buffer
    that one elementwise linalg op (identity maps, parallel loops, the
    buffer's old values unread) writes, and that op reads this rank's part
    of the gather's output (`memref.subview` at `zero.replica_index * count`
    on the gather's mesh and axes): a weight's shard updated into the new
    shard. The op then writes over that part, each element after reading
    it, and the gather reads it there, so the step holds no buffer for the
    new shard and no rank copies its own part (the runtime skips it;
    MPI_IN_PLACE under MPI). It is done only where nothing between the op
    and the gather uses the buffer, no later wait but the gather's own
    names it, and the op touches no other view of it; a gather that only
    starts (`zero-schedule-overlap`'s, its wait in the same block) gathers
    in place too where nothing between its start and its wait uses the
    buffer. A remark at the gather names what stands in the way. Under offload the op becomes a host loop on the rank's
    queue (`zero-offload-to-host`) that copies the part down and the new
    part up into the weight; the queue's schedule keeps that copy after the
    device's reads of the old weight, and the gather after the queue's
    work.

    ```mlir
    %part = memref.subview %flat[%offset] [768] [1] : ...
    %new = memref.alloc() : memref<768xf32>
    linalg.generic ... ins(%part, %m, %g : ...) outs(%new : ...)
    zero.all_gather_buffer %new, %flat on @dp
    // becomes
    linalg.generic ... ins(%part, %m, %g : ...) outs(%part : ...)
    zero.all_gather_buffer %part, %flat on @dp
        : memref<768xf32, strided<[1], offset: ?>>, memref<1536xf32>
    ```
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def ZeroReturnDonatedBuffers
    : Pass<"zero-return-donated-buffers", "mlir::func::FuncOp"> {
  let summary = "Returns a donated argument's buffer itself, not the copy "
                "that deallocation makes of it";
  let description = [{
    Runs right after `ownership-based-buffer-deallocation` (both pipelines
    run it). A function never owns its arguments' buffers, so ownership
    makes a `bufferization.clone` of any argument buffer the function
    returns: the caller must be able to free what it gets. For an argument
    donated to that result (`zero.aliasing_output`, by `zero-donate-state`)
    the caller hands the buffer over, so the clone is dropped and the
    argument's buffer returned: the state is updated in place, with no
    allocation and no copy.

    A donated result that One-Shot Bufferize wrote to a buffer of its own
    (because the argument's old value is read after the update) is left as
    it is, with a remark.

    ```mlir
    %c = bufferization.clone %arg0 : memref<8xf32> to memref<8xf32>
    bufferization.dealloc (%tmp : memref<8xf32>) if (%true) retain (%c : ...)
    return %c : memref<8xf32>
    // becomes
    bufferization.dealloc (%tmp : memref<8xf32>) if (%true) retain (%arg0 : ...)
    return %arg0 : memref<8xf32>
    ```
  }];
}

def ZeroSplitDeallocs : Pass<"zero-split-deallocs"> {
  let summary = "Splits each bufferization.dealloc by provenance, in time "
                "linear in its operands";
  let description = [{
    Runs between `ownership-based-buffer-deallocation` and upstream's
    `buffer-deallocation-simplification` (both pipelines run it). Ownership
    places one `bufferization.dealloc` at the end of each block, listing
    every buffer the block owns and retaining every buffer it returns or
    yields; in a training step that is thousands of each. The simplification
    pass asks its alias analysis about every pair: quadratic, half of
    lowering a 400-tensor step.

    This pass answers most of those questions by provenance. Each operand is
    followed through view-like ops (`expand_shape`, `extract_strided_metadata`,
    `subview`, ...) to its origin. An origin that an op directly in the
    dealloc's block allocates is *fresh*: distinct from every other
    allocation and from all memory that existed when the block began (its
    arguments, anything defined outside it). Each fresh allocation among the
    deallocated buffers gets its own `bufferization.dealloc` without
    retained values, unless a retained value has the same origin: then it is
    not freed, and that retained value's updated ownership is its condition.
    The buffers of older origin stay in one dealloc that retains only the
    retained values of older origin, which no fresh allocation can alias.

    Two region ops of ownership's own output are followed too, since they
    make no new alias: an `scf.for` whose body yields at each position its
    iteration argument there or memory it allocates (yielded nowhere else),
    and whose iteration arguments do not escape the body, returns at each
    position its init's buffer or memory of its own; an `scf.if` whose
    branches yield one outer buffer or memory they allocate ("the buffer if
    owned, else a clone") returns that buffer or its own memory. Such a
    result goes with its init's (or outer buffer's) allocation, in a
    dealloc of their own that retains the retained values of that
    allocation: the result may be the same buffer or another.

    An operand whose origin is some other op in the block (a call's result,
    another loop's) may alias anything that escapes into it. A fresh
    allocation that does not (only views of it, loads, stores, linalg ops
    and deallocs use it, or it passes only into the loops and ifs above) is
    still freed on its own; the rest stay in one dealloc, retaining every
    retained value but those of the allocations split off.

    ```mlir
    %r:2 = bufferization.dealloc (%base_a, %base_b, %arg_base : ...)
             if (%true, %true, %own) retain (%view_of_a, %arg : ...)
    // becomes
    bufferization.dealloc (%base_b : memref<f32>) if (%true)
    %r1 = bufferization.dealloc (%arg_base : memref<f32>) if (%own) retain (%arg : ...)
    // uses of %r#0 become %true (ownership of a passes to %view_of_a)
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def ZeroFreeAfterLastUse : Pass<"zero-free-after-last-use"> {
  let summary = "Frees each temporary right after its last use, not at the "
                "end of its block";
  let description = [{
    Runs after `zero-split-deallocs` and `buffer-deallocation-simplification`
    (both pipelines run it). Ownership-based deallocation frees every buffer
    at the end of the block that owns it, so all the temporaries of a
    straight-line training step (each bucket's reduced gradient, each
    packed bucket) are alive at once at its end: the step's peak memory is
    the sum of them, where it could be the largest.

    A `bufferization.dealloc` of one buffer, unconditionally (`if (true)`),
    retaining nothing, whose buffer an op in the same block allocates, moves
    to just after the last op of the block that uses the buffer or a view of
    it (a use in a nested region counts at the op of this block that holds
    it). A collective that only starts (it returns a `!zero.request`) uses
    the buffer until its wait: where the request's one use is a `zero.wait`
    of the same block that names the buffer too, that wait is its later
    use, and the buffer (a gradient sent by a reduce-scatter in flight, a
    gathered bucket once its members are copied out) is freed after it. It
    stays where it is when a use could keep the buffer beyond that op: an
    op that is not a view yet returns a buffer, a request that goes
    anywhere but such a wait,
    or any other value that is not a plain number (a `zero.async`, a loop
    or a call that returns buffers), takes the buffer's address, or passes
    it on (a terminator).

    ```mlir
    %a = memref.alloc() : memref<8xf32>
    linalg.generic ... outs(%a : memref<8xf32>)
    "use"(%a) : (memref<8xf32>) -> ()
    ... // the rest of the step
    bufferization.dealloc (%a : memref<8xf32>) if (%true)
    // becomes
    "use"(%a) : (memref<8xf32>) -> ()
    bufferization.dealloc (%a : memref<8xf32>) if (%true)
    ... // the rest of the step
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::bufferization::BufferizationDialect"];
}

def ZeroExpandTruncF : Pass<"zero-expand-truncf"> {
  let summary = "Writes f64-to-bf16 truncations as ones the host can run";
  let description = [{
    Runs in the host half of `zero-to-llvm` and `zero-to-nvvm`, before
    `arith-expand-ops`. LLVM lowers `arith.truncf` from f64 to bf16 to a call
    of `__truncdfbf2`, which neither the JIT nor an artifact's runtime
    provides ("Symbols not found: [ __truncdfbf2 ]"). This pass rewrites it
    as a truncation to f32 rounded to odd (rounded to nearest, stepped
    toward zero where that went away from it, its last bit set when
    inexact) followed by f32 to bf16 rounded to nearest even, which
    `arith-expand-ops` lowers. Rounding to odd first keeps a double rounding
    correct: the result is the f64 value rounded to nearest even bf16, NaN
    and infinities included. Scalars, vectors and tensors alike.

    ```mlir
    %b = arith.truncf %x : f64 to bf16
    // becomes
    %n = arith.truncf %x : f64 to f32
    ... (round to odd: extf, absf, cmpf, bitcast, subi, ori, select)
    %b = arith.truncf %odd : f32 to bf16
    ```
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def ZeroHostParallelLoops
    : Pass<"zero-host-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Splits each large elementwise loop nest across the rank's "
                "share of the host's cores";
  let description = [{
    Runs in `zero-to-llvm` after bufferization, before linalg ops become
    loops. An optimizer update is elementwise and waits on memory, and one
    thread of a core does not draw a socket's bandwidth. Each linalg op on
    buffers whose loops are all parallel, of static sizes, with at least
    `min-elements` iterations, becomes one loop, run as a task by the
    runtime's `zero_rt_parallel_for` (HostTasks.h: the body a function over
    a range of iterations, the values it uses passed through a context of
    64-bit slots). Where every operand is a dense buffer read at its
    element (each indexing map the identity, or a 0-d value), the op is
    first made one over flat views of its buffers (`memref.collapse_shape`),
    so that the loop is over every element with no index to split: a 3x3
    convolution's weight has an innermost loop of 3, which kept its update
    scalar. Otherwise the loop is over the nest's outer loops, collapsed, each
    iteration running the innermost loop whole, when they make at least 64
    iterations and the innermost 16: the innermost loop stays contiguous
    and vectorizes; else over every element (the whole nest
    collapsed, each index split again per element). The runtime cuts the
    loop into chunks of at least `ZERO_HOST_CHUNK` (4096) elements for the
    calling rank's
    share of the cores: the host's cores over the ranks that share it, or
    `ZERO_HOST_THREADS`. With one share (several ranks on few cores, or a
    loop of one chunk) the task runs on the calling thread.

    Consecutive such ops that are independent of one another (none writes
    a buffer another reads or writes, each buffer known by its origin, an
    entry's arguments being distinct buffers as zero's launchers pass them)
    and have only ops that touch no memory between them (views, index
    arithmetic) run as one task: a step's updates of its many tensors. The
    task's iterations are those of the largest op's loop, P, and a range
    [begin, end) of them runs iterations [n * begin / P, n * end / P) of
    each loop of n, one loop after another, so each thread runs its part
    of every update and waits once, not once for each large tensor (50
    waits a step for GPT-2 small's AdamW, each paying a worker's wake-up
    and the slower thread's lag). Such a
    run is split when its ops together have at least `min-elements`
    iterations, so that small ones (biases, norms' weights) run across the
    cores with the large.

    Each element is computed by the same operations as before: results do
    not change. Reductions, matmuls and ops of dynamic size stay as they
    are. A task takes the values its loop uses through a context of 64-bit
    slots: numbers, and buffers of static shape as their address, with
    their offset and strides where those are dynamic (a view at the rank's
    shard, a buffer a loop carries); an op that uses any other value stays
    a loop on one thread, with a remark naming its type.

    ```mlir
    linalg.generic {iterator_types = ["parallel", "parallel"]}
        ins(%m, %g : memref<768x2304xf32>, memref<768x2304xf32>)
        outs(%m : memref<768x2304xf32>) { ... }
    // becomes
    call @zero_rt_parallel_for(%task, %context, %c768, %c2304) : ...
    func.func private @step_host0(%context: !llvm.ptr, %begin: i64, %end: i64)
        attributes {zero.host_task} {
      // %m and %g from the context; rows [begin, end), each a loop over
      // its 2304 elements
    }
    ```
  }];
  let options = [
    Option<"minElements", "min-elements", "int64_t", /*default=*/"16384",
           "The fewest iterations an op, or a run of independent ops, is "
           "split for (0: none)">,
  ];
  let dependentDialects = [
    "mlir::scf::SCFDialect", "mlir::LLVM::LLVMDialect",
    "mlir::func::FuncDialect", "mlir::arith::ArithDialect",
    "mlir::memref::MemRefDialect"
  ];
}

def ZeroOutlineLoopNests : Pass<"zero-outline-loop-nests", "mlir::ModuleOp"> {
  let summary = "Moves each loop nest of a function into a function of its "
                "own, so that LLVM sees functions of bounded size";
  let description = [{
    Runs in `zero-to-llvm` once the loops are made and the collectives are
    runtime calls, before `zero-scf-to-cf`. A training step is one function
    holding every loop of the forward, the backward and the update:
    thousands in a real model. LLVM's loop passes (loop rotation, scalar
    evolution's per-loop caches) cost more per loop the more loops a
    function holds, so compiling such a step grows faster than the program
    does. Each nest in its own function keeps every function LLVM optimizes
    small, and the step's compile time linear in its number of loops.

    A loop nest (`scf.for`, `scf.parallel`, `scf.while`) that calls nothing
    but the runtime's checks (`zero_rt_check`) moves, whole, into a private
    function marked `noinline` (LLVM's inliner would otherwise put a
    function called once straight back), called where the nest was. The
    values it uses from outside become the function's arguments, except
    constants, which are copied in so that LLVM still sees constant bounds;
    the nest's results are the function's results. A loop that calls
    anything else (a collective, a matmul of the runtime, a function) stays,
    and the nests in its body move. A nest that uses or makes a value no
    function signature lowers to LLVM (only integers, indices, floats,
    vectors, memrefs and LLVM pointers do) stays where it is, with a
    remark.

    ```mlir
    func.func @step(%w: memref<64xf32>, %g: memref<64xf32>) {
      %c0 = arith.constant 0 : index
      %c64 = arith.constant 64 : index
      %c1 = arith.constant 1 : index
      scf.for %i = %c0 to %c64 step %c1 { ... %w, %g ... }
      return
    }
    // becomes
    func.func @step(%w: memref<64xf32>, %g: memref<64xf32>) {
      call @step_nest0(%w, %g) : (memref<64xf32>, memref<64xf32>) -> ()
      return
    }
    func.func private @step_nest0(%w: memref<64xf32>, %g: memref<64xf32>)
        attributes {passthrough = ["noinline"]} {
      %c0 = arith.constant 0 : index
      ...
      scf.for %i = %c0 to %c64 step %c1 { ... %w, %g ... }
      return
    }
    ```
  }];
  let dependentDialects = ["mlir::func::FuncDialect"];
}

#endif // ZERO_TARGET_CPU_PASSES_TD
