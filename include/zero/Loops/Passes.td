//===- Passes.td - loop-structure passes -*- tablegen -*-===//

#ifndef ZERO_LOOPS_PASSES_TD
#define ZERO_LOOPS_PASSES_TD

include "mlir/Pass/PassBase.td"

def ZeroNormalizeMatmuls : Pass<"zero-normalize-matmuls"> {
  let summary = "Puts every matmul in one form: a linalg.matmul that reads "
                "each operand as stored";
  let description = [{
    Runs on linalg on tensors, in `zero-to-llvm` and `zero-to-nvvm` before
    any other loop transform. A matmul reaches the lowering spelled several
    ways, and this pass gives them one form:

    - **Generic matmuls become `linalg.matmul`.** A `linalg.generic` with
      two inputs and one output, two parallel loops and one reduction in any
      order, A read at (m, k) or (k, m), B at (k, n) or (n, k), C at (m, n),
      whose body adds the product of its inputs (each widened by
      `arith.extf` or not) to its output and does nothing else, is the
      generic form of a matmul (`linalg-generalize-named-ops` writes it so,
      and front ends emit it). It becomes the `linalg.matmul` with the same
      operands and indexing maps, so that elementwise fusion does not fuse
      its neighbours into it and `zero-gemm-calls` calls the GEMM for it as
      for a named one: the two forms of a program give the same bits.
      (Upstream's `linalg-specialize-generic-ops` builds invalid ops for the
      transposed forms.)
    - **Transposes fold into the matmul's indexing maps.** A linear layer's
      forward is x W^T and its weight's gradient dy^T x; programs
      (zero-gen-step's, and those front ends emit for a linear layer) spell
      the transpose as a `linalg.transpose` that a `linalg.matmul` reads.
      Bufferized, that is a transposed copy of the weight (in a
      mixed-precision step, of its bf16 copy), and a pass over memory to
      write it. The matmul reads the transpose's input instead, through its
      indexing map composed with the permutation (the transpose-A and
      transpose-B forms of `linalg.matmul`'s `indexing_maps`); the transpose
      is erased when nothing else reads it. On the GPU `zero-gemm-calls`
      passes such an operand to cuBLAS as stored, with its transpose flag;
      on the CPU, to the runtime's GEMM.

    Every element of every result is the same products summed in the same
    order, so results do not change. Ops on buffers are left alone (a
    transposed buffer may be written between the transpose and the matmul).
    The patterns are `zero::populateNormalizeMatmulsPatterns`
    (`zero/Loops/NormalizeMatmuls.h`), for a pipeline that embeds them.

    ```mlir
    %t = linalg.transpose ins(%w : tensor<16x8xbf16>)
        outs(%e : tensor<8x16xbf16>) permutation = [1, 0]
    %y = linalg.matmul ins(%x, %t : tensor<4x8xbf16>, tensor<8x16xbf16>)
        outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
    // becomes
    %y = linalg.matmul indexing_maps = [
          affine_map<(d0, d1, d2) -> (d0, d2)>,
          affine_map<(d0, d1, d2) -> (d1, d2)>,
          affine_map<(d0, d1, d2) -> (d0, d1)>]
        ins(%x, %w : tensor<4x8xbf16>, tensor<16x8xbf16>)
        outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ZeroFuseElementwise : Pass<"zero-fuse-elementwise"> {
  let summary = "Fuses each web of elementwise loop nests into one, also "
                "where a result has several uses";
  let description = [{
    Runs on linalg on tensors, after `convert-elementwise-to-linalg` (in
    `zero-to-llvm` and `zero-to-nvvm`). Like upstream's
    `linalg-fuse-elementwise-ops`, it fuses an elementwise `linalg.generic`
    into the one that consumes its result, and folds reshapes into loop
    nests, here only into elementwise ones: a reshape folded into a matmul
    (a convolution's weight collapsed to rows x features) makes it a
    contraction over several dimensions, which `zero-gemm-calls` cannot
    call a GEMM for. Unlike it, a producer whose result has other uses fuses too, when
    all of them come after the consumer in its block: the fused op returns
    the producer's result as well, and replaces the producer. An optimizer's
    update is such a web (the new moments are read by the weight's update and
    also returned; the new weight by its bf16 copy and also returned), so
    each bucket's update becomes one loop nest that reads each input once and
    writes each output once: one pass over memory on the CPU, one kernel on
    the GPU. A producer used before the consumer is left alone, so nothing is
    computed twice. A `tensor.splat` of a scalar computed at run time (Adam's
    bias corrections) that a loop nest reads becomes that scalar inside it,
    rather than a tensor written by a loop nest of its own. Each element sees
    the same operations in the same order, so results do not change.

    ```mlir
    // before: three loop nests
    %m2 = linalg.generic ... ins(%m, %g) ... // b1 * m + (1 - b1) * g
    %v2 = linalg.generic ... ins(%v, %g) ... // b2 * v + (1 - b2) * g * g
    %w2 = linalg.generic ... ins(%w, %m2, %v2) ...
    return %w2, %m2, %v2
    // after: one, with three results
    %r:3 = linalg.generic ... ins(%w, %m, %v, %g) ...
    return %r#0, %r#1, %r#2
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def ZeroOrderReductions : Pass<"zero-order-reductions"> {
  let summary = "Lowers every full reduction in zero's one order, the same on "
                "every pipeline and for every number of ranks";
  let description = [{
    MLIR does not fix the order in which a reduction combines its elements,
    so a floating-point sum (a gradient norm for clipping, LAMB's norms) may
    give different bits on the CPU and the GPU, and after sharding, for each
    number of ranks. zero fixes one order
    (`zero/Loops/ReductionOrder.h`), and this pass, in
    `zero-to-llvm` and `zero-to-nvvm` (on linalg on tensors, before
    `zero-fuse-elementwise`), lowers every full reduction of the program in
    it. `zero-shard-weight-update` shards full reductions in the same order,
    so a sharded program gives the program as given's bits, for every N.

    A full reduction is a `linalg.reduce` of every dimension of its single
    input into a 0-d init, whose combiner is one associative operation of
    its two arguments whose identity zero knows (addf, mulf, maximumf,
    minimumf; addi, muli, andi, ori, xori, maxsi, minsi, maxui, minui). The
    input, flattened in row-major order, is cut into blocks of B elements in
    index order, B the power of two from 16 to 4096 that makes at most 64
    blocks (4096 for tensors over 256K elements; a function of the tensor's
    size alone), the last block padded with the identity (-0.0 for a sum,
    which changes no value); a `linalg.generic` whose outer loop, over
    blocks, is parallel combines each block in index order from the identity
    (on the GPU, one thread a block); a second one, a parallel loop of one
    iteration around a sequential one, combines the init and then the
    partials in index order, into a new tensor. A chain of reductions, each
    into the last one's result, is thus a chain of separate 0-d buffers,
    which bufferization analyses in linear time, not one buffer it must
    follow through the whole program.

    A full reduction of dynamic shape, or with another combiner, keeps the
    order its lowering gives, with a remark. Other reductions (along some
    dimensions) are not full reductions and are left alone.

    ```mlir
    %n = linalg.reduce ins(%x : tensor<100000xf32>) outs(%acc : tensor<f32>)
        dimensions = [0] (%in: f32, %a: f32) { ... addf ... }
    // becomes (B = 1024: 98 blocks, 352 padding elements)
    %p = tensor.pad %x low[0] high[352] { ... -0.0 ... } : tensor<100000xf32> to tensor<100352xf32>
    %g = tensor.expand_shape %p [[0, 1]] output_shape [98, 1024]
    %partials = linalg.generic {indexing_maps = [(b, e) -> (b, e), (b, e) -> (b)],
        iterator_types = ["parallel", "reduction"]}
        ins(%g : tensor<98x1024xf32>) outs(%identities : tensor<98xf32>) ...
    %total = linalg.generic {indexing_maps = [(i, k) -> (i, k), (i, k) -> (i), (i, k) -> (i)],
        iterator_types = ["parallel", "reduction"]}
        ins(%row, %acc1 : tensor<1x98xf32>, tensor<1xf32>) outs(%fresh : tensor<1xf32>) {
      // the accumulator is %acc1 when k == 0, then the output
    }
    %n = tensor.collapse_shape %total [] : tensor<1xf32> into tensor<f32>
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ZeroFuseIndependentLoops : Pass<"zero-fuse-independent-loops"> {
  let summary = "Merges consecutive independent parallel loops into one, so "
                "that one kernel updates a bucket's parameters";
  let description = [{
    Horizontal fusion. Runs in `zero-to-nvvm` on buffers, after
    `convert-linalg-to-parallel-loops` and before the loops are tiled and
    mapped to the GPU. After `zero-fuse-elementwise` each parameter's update
    is one loop nest, but the parameters of a bucket have different shapes,
    so their updates stay separate loops, one kernel each. This pass merges
    a run of `scf.parallel` loops in a block into one 1-D loop over the sum
    of their iteration counts; the body finds the member an iteration
    belongs to by a balanced tree of `scf.if` on the linear index (depth
    log2 of the members) and runs that member's body at its own indices,
    delinearized row-major. Each element sees the same operations as
    before, so results do not change; one launch does the work of many.

    Loops merge when they touch disjoint buffers: no member writes a buffer
    that another member reads or writes. The merged loop takes the place of
    the last member, so every earlier member moves down past the ops
    between; an op in between that touches a member's buffers (reads what
    it writes, or writes what it reads or writes) ends the run, as does any
    op of the zero dialect (moving computation past an await would undo
    `zero-schedule-overlap`), a call, or an op whose memory effects are
    unknown. The members of a run either all wait for a gather of the
    block or none does: a loop waits when it reads what a gather wrote or
    what a loop that waits wrote, or when all that reads what it writes
    waits (a sum's zero before its terms). A merged loop starts once all of
    its inputs are there, so a loop that needs no gather would wait for
    another's: under `delay-update`, the forward pass's first loop for the
    gather of the next step's weights, which waits for the update, on the
    host's queue when it is offloaded. Buffers alias as One-Shot Bufferize
    assumes: the function's
    arguments do not alias one another, and views alias what they view. A
    buffer the program allocates shares memory with no argument, no global
    and no value defined before it was allocated; a value of unknown origin
    defined after it (a loop's iteration argument that starts as the
    allocation, a loop's result) may be a view of it. Loops with reductions
    (results) and loops already mapped to the GPU are left alone.

    ```mlir
    // before: two loops, two kernels
    scf.parallel (%i) = (%c0) to (%c23) step (%c1) { ... %w[%i] ... }
    scf.parallel (%i) = (%c0) to (%c2) step (%c1) { ... %b[%i] ... }
    // after: one
    scf.parallel (%i) = (%c0) to (%c25) step (%c1) {
      %first = arith.cmpi ult, %i, %c23 : index
      scf.if %first { ... %w[%i] ... }
      else { %j = arith.subi %i, %c23 : index  ... %b[%j] ... }
    }
    ```
  }];
  let options = [
    Option<"maxBuffers", "max-buffers", "int64_t", /*default=*/"48",
           "Most buffers (defined outside the loops) one merged loop may use: "
           "each is a kernel argument, and kernel arguments are limited to "
           "4 KiB">,
  ];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

#endif // ZERO_LOOPS_PASSES_TD
