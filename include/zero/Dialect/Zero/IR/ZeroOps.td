//===- ZeroOps.td - zero operations ------------------------*- tablegen -*-===//

#ifndef ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
#define ZERO_DIALECT_ZERO_IR_ZEROOPS_TD

include "zero/Dialect/Zero/IR/ZeroDialect.td"
include "zero/Dialect/Zero/IR/ZeroAttrs.td"
include "zero/Dialect/Zero/IR/ZeroTypes.td"
include "zero/Dialect/Zero/IR/ZeroInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Mesh
//===----------------------------------------------------------------------===//

def Zero_MeshOp : Zero_Op<"mesh", [Symbol]> {
  let summary = "Names a grid of ranks";
  let description = [{
    Declares a named n-dimensional grid of ranks. `shape` gives the number of
    ranks along each axis; their product is the number of ranks the program
    runs on. A 1-D mesh is plain data parallelism; an n-D mesh expresses hybrid
    sharding (shard along one axis, for instance inside a node, and replicate
    along another, across nodes).

    A rank's coordinates are its linear rank in row-major order over `shape`.

    ```mlir
    zero.mesh @dp(shape = [8])
    zero.mesh @hybrid(shape = [2, 4])
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, DenseI64ArrayAttr:$shape);
  let assemblyFormat = "$sym_name `(` `shape` `=` $shape `)` attr-dict";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of mesh axes.
    int64_t getNumAxes() { return getShape().size(); }
    /// The number of ranks in the whole mesh.
    int64_t getNumRanks();
  }];
}

//===----------------------------------------------------------------------===//
// Replica index
//===----------------------------------------------------------------------===//

def Zero_ReplicaIndexOp : Zero_Op<"replica_index", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "This rank's index within its group";
  let description = [{
    Returns this rank's group index: its coordinates on the named mesh axes
    (all axes when none are named), linearized row-major. The value differs
    per rank; it is in `[0, group size)`.

    ```mlir
    %r = zero.replica_index on @dp : index
    %inner = zero.replica_index on @hybrid axes = [1] : index
    ```

    On a group of size 1 it folds to the constant 0.
  }];
  let arguments = (ins FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs Index:$result);
  let assemblyFormat = [{
    `on` $mesh (`axes` `=` $axes^)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

class Zero_CollectiveOp<string mnemonic, list<Trait> traits = []>
    : Zero_Op<mnemonic, !listconcat(traits, [
        Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
        Zero_CollectiveOpInterface])> {
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Zero_AllReduceOp : Zero_CollectiveOp<"all_reduce",
                                         [SameOperandsAndResultType]> {
  let summary = "Reduces a tensor across a group; every rank gets the result";
  let description = [{
    Every rank of the group contributes `input`; every rank receives the
    elementwise reduction of all contributions, combined in group-index order.
    The result has the input's type.

    ```mlir
    %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<1000x512xf32>
    %n = zero.all_reduce %partial on @hybrid axes = [1] reduce = max : tensor<f32>
    ```

    Element types: integers (signless, 8 to 64 bits) and floats; `mean` only
    for floats. On a group of size 1, or for a tensor of no elements, it folds
    to its input.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       Zero_ReductionKindAttr:$reduction);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? `reduce` `=` custom<ReductionKind>($reduction) attr-dict
    `:` type($result)
  }];
}

def Zero_ReduceScatterOp : Zero_CollectiveOp<"reduce_scatter"> {
  let summary = "Reduces across a group; each rank keeps its part";
  let description = [{
    Reduces `input` across the group as `zero.all_reduce` does, then splits the
    reduced tensor along `dim` into as many equal parts as there are ranks in
    the group; the rank with group index `i` receives part `i`. The input's
    size along `dim` must be the group size times the result's; every other
    dimension and the element type are unchanged.

    ```mlir
    %gs = zero.reduce_scatter %g on @dp reduce = sum
        : tensor<512000xf32> -> tensor<64000xf32>
    %rows = zero.reduce_scatter %g on @dp reduce = mean dim = 1
        : tensor<4x64xf32> -> tensor<4x8xf32>
    ```

    On a group of size 1 (or, when the result has the input's type, for a
    tensor of no elements) it folds to its input.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       Zero_ReductionKindAttr:$reduction,
                       DefaultValuedAttr<I64Attr, "0">:$scatter_dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? `reduce` `=` custom<ReductionKind>($reduction)
    (`dim` `=` $scatter_dim^)? attr-dict `:` type($input) `->` type($result)
  }];
}

def Zero_AllGatherOp : Zero_CollectiveOp<"all_gather"> {
  let summary = "Concatenates the ranks' tensors; every rank gets the whole";
  let description = [{
    Every rank of the group contributes `input`; every rank receives the
    contributions concatenated along `dim` in group-index order. The result's
    size along `dim` is the group size times the input's; every other
    dimension and the element type are unchanged. It is the inverse of
    `zero.shard_slice` for a value that every rank holds alike.

    ```mlir
    %w = zero.all_gather %ws on @dp : tensor<64000xf32> -> tensor<512000xf32>
    ```

    On a group of size 1 (or, when the result has the input's type, for a
    tensor of no elements) it folds to its input.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedAttr<I64Attr, "0">:$gather_dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? (`dim` `=` $gather_dim^)? attr-dict
    `:` type($input) `->` type($result)
  }];
}

def Zero_AllToAllOp : Zero_CollectiveOp<"all_to_all",
                                         [SameOperandsAndResultType]> {
  let summary = "Each rank sends part j of its tensor to rank j";
  let description = [{
    Splits `input` along dimension 0 into as many equal parts as there are
    ranks in the group and sends part `j` to the rank with group index `j`.
    Part `i` of every rank's result is the part the rank with group index
    `i` sent it. The result has the input's type; dimension 0 must be a
    multiple of the group size, so that each part is contiguous.

    It is what a compressed reduce-scatter moves (ZeRO++'s qgZ,
    `zero-compress-reduce-scatter`): each rank sends every other rank that
    rank's part of its gradient, quantized, and sums what it receives itself.

    ```mlir
    %parts = zero.all_to_all %q on @dp : tensor<8x4096xi8>
    ```

    On a group of size 1, or for a tensor of no elements, it folds to its
    input.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? attr-dict `:` type($result)
  }];
}

def Zero_ShardSliceOp : Zero_CollectiveOp<"shard_slice"> {
  let summary = "This rank's part of a tensor, without communication";
  let description = [{
    Splits `input` along `dim` into as many equal parts as there are ranks in
    the group and returns part `i` on the rank with group index `i`. Nothing
    crosses ranks. Sizes follow `zero.reduce_scatter`.

    ```mlir
    %ws = zero.shard_slice %w on @dp : tensor<512000xf32> -> tensor<64000xf32>
    ```

    On a group of size 1 (or, when the result has the input's type, for a
    tensor of no elements) it folds to its input.
  }];
  let arguments = (ins AnyRankedTensor:$input, FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedAttr<I64Attr, "0">:$dim);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `on` $mesh (`axes` `=` $axes^)? (`dim` `=` $dim^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let extraClassDeclaration = [{
    bool communicates() { return false; }
  }];
}

//===----------------------------------------------------------------------===//
// Bufferized collectives
//===----------------------------------------------------------------------===//

// With a `!zero.request` result, a buffer collective only starts: it may
// still read its input and write its output until the `zero.wait` of the
// request, and nothing else may touch them in between.
class Zero_BufferCollectiveOp<string mnemonic, list<Trait> traits = []>
    : Zero_Op<mnemonic, !listconcat(traits, [
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of ranks in this collective's group, or 0 when the mesh is
    /// unknown.
    int64_t getGroupSize();
  }];
}

def Zero_AllReduceBufferOp : Zero_BufferCollectiveOp<"all_reduce_buffer"> {
  let summary = "All-reduce from one buffer into another";
  let description = [{
    The destination-passing form of `zero.all_reduce` that bufferization
    produces: reads `input`, writes the reduction into `output` (same shape
    and element type; they may be the same buffer). `zero-lower-to-runtime`
    turns it into a runtime call.

    ```mlir
    zero.all_reduce_buffer %g, %out on @dp reduce = sum
        : memref<1000xf32>, memref<1000xf32>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$input,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$output,
                       FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       Zero_ReductionKindAttr:$reduction);
  let results = (outs Optional<Zero_RequestType>:$request);
  let assemblyFormat = [{
    $input `,` $output `on` $mesh (`axes` `=` $axes^)? `reduce` `=` custom<ReductionKind>($reduction)
    attr-dict `:` type($input) `,` type($output) (`->` type($request)^)?
  }];
}

def Zero_ReduceScatterBufferOp
    : Zero_BufferCollectiveOp<"reduce_scatter_buffer"> {
  let summary = "Reduce-scatter from one buffer into another";
  let description = [{
    The destination-passing form of `zero.reduce_scatter`: reads `input`,
    writes this rank's part of the reduction into `output`.

    ```mlir
    zero.reduce_scatter_buffer %g, %gs on @dp reduce = sum
        : memref<1024xf32>, memref<128xf32>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$input,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$output,
                       FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       Zero_ReductionKindAttr:$reduction,
                       DefaultValuedAttr<I64Attr, "0">:$scatter_dim);
  let results = (outs Optional<Zero_RequestType>:$request);
  let assemblyFormat = [{
    $input `,` $output `on` $mesh (`axes` `=` $axes^)? `reduce` `=` custom<ReductionKind>($reduction)
    (`dim` `=` $scatter_dim^)? attr-dict `:` type($input) `,` type($output)
    (`->` type($request)^)?
  }];
}

def Zero_AllGatherBufferOp : Zero_BufferCollectiveOp<"all_gather_buffer"> {
  let summary = "All-gather from one buffer into another";
  let description = [{
    The destination-passing form of `zero.all_gather`: reads `input`, writes
    every rank's part, concatenated in group-index order, into `output`.

    ```mlir
    zero.all_gather_buffer %ws, %w on @dp : memref<128xf32>, memref<1024xf32>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$input,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$output,
                       FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes,
                       DefaultValuedAttr<I64Attr, "0">:$gather_dim);
  let results = (outs Optional<Zero_RequestType>:$request);
  let assemblyFormat = [{
    $input `,` $output `on` $mesh (`axes` `=` $axes^)? (`dim` `=` $gather_dim^)?
    attr-dict `:` type($input) `,` type($output) (`->` type($request)^)?
  }];
}

def Zero_AllToAllBufferOp : Zero_BufferCollectiveOp<"all_to_all_buffer"> {
  let summary = "All-to-all from one buffer into another";
  let description = [{
    The destination-passing form of `zero.all_to_all`: reads `input`, writes
    the part each rank sent this one, in group-index order, into `output`
    (same shape and element type, a different buffer).

    ```mlir
    zero.all_to_all_buffer %q, %parts on @dp
        : memref<8x4096xi8>, memref<8x4096xi8>
    ```
  }];
  let arguments = (ins Arg<AnyStaticShapeMemRef, "", [MemRead]>:$input,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$output,
                       FlatSymbolRefAttr:$mesh,
                       OptionalAttr<DenseI64ArrayAttr>:$axes);
  let results = (outs Optional<Zero_RequestType>:$request);
  let assemblyFormat = [{
    $input `,` $output `on` $mesh (`axes` `=` $axes^)?
    attr-dict `:` type($input) `,` type($output) (`->` type($request)^)?
  }];
}

def Zero_WaitOp : Zero_Op<"wait"> {
  let summary = "Waits for a started buffer collective";
  let description = [{
    Blocks until the buffer collective that returned `request` has completed.
    It names the collective's buffers: until the wait, the collective reads
    `input` and writes `output`, so nothing may write the one or touch the
    other before it, and neither may be freed. Bufferizing a `zero.async` and
    its `zero.await` produces the pair; `zero-lower-to-runtime` turns them
    into `zero_rt_*_start` and `zero_rt_wait`.

    ```mlir
    %out = memref.alloc() : memref<128xf32>
    %r = zero.reduce_scatter_buffer %g, %out on @dp reduce = sum
        : memref<1024xf32>, memref<128xf32> -> !zero.request
    // ... computation that touches neither %g nor %out ...
    zero.wait %r, %g, %out : memref<1024xf32>, memref<128xf32>
    ```
  }];
  let arguments = (ins Zero_RequestType:$request,
                       Arg<AnyStaticShapeMemRef, "", [MemRead]>:$input,
                       Arg<AnyStaticShapeMemRef, "", [MemWrite]>:$output);
  let assemblyFormat = [{
    $request `,` $input `,` $output attr-dict `:` type($input) `,` type($output)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Asynchrony
//===----------------------------------------------------------------------===//

def Zero_AsyncOp : Zero_Op<"async", [SingleBlock, RecursiveMemoryEffects]> {
  let summary = "Starts one collective and yields a future of its result";
  let description = [{
    The body holds exactly one collective and a `zero.yield` of its result.
    The collective's operand is defined outside the body; the collective does
    not fold inside it (see `zero.await` for the group of size 1).
    The collective starts where `zero.async` stands and its value becomes
    available at the `zero.await` of the future. Between the two, computation
    that does not need the value may run while the collective is in flight.

    ```mlir
    %f = zero.async : !zero.future<tensor<64000xf32>> {
      %s = zero.reduce_scatter %g on @dp reduce = sum
          : tensor<512000xf32> -> tensor<64000xf32>
      zero.yield %s : tensor<64000xf32>
    }
    // ... computation that overlaps the reduce-scatter ...
    %gs = zero.await %f reads %g
        : !zero.future<tensor<64000xf32>>, tensor<512000xf32>
    ```

    Bufferization turns the pair into a buffer collective that returns a
    `!zero.request` and a `zero.wait`. The future may also be yielded by the
    body of an `scf.for` and awaited in the next iteration (and after the
    loop): `zero-expand-loop-futures` gives such a collective buffers that
    live across iterations. It is not stored, passed to a function, or
    returned.
  }];
  let results = (outs Zero_FutureType:$future);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "attr-dict `:` qualified(type($future)) $body";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The collective this op starts.
    CollectiveOpInterface getCollective();
  }];
}

def Zero_YieldOp : Zero_Op<"yield", [
    Pure, Terminator, HasParent<"AsyncOp">]> {
  let summary = "Ends a zero.async body with the collective's result";
  let description = [{
    Returns the result of the collective in a `zero.async` body; its type is
    the value type of the future.
  }];
  let arguments = (ins AnyRankedTensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Zero_AwaitOp : Zero_Op<"await", [
    Pure,
    TypesMatchWith<"result type is the future's value type", "future",
                   "result",
                   "::llvm::cast<::zero::FutureType>($_self).getValueType()">
  ]> {
  let summary = "Waits for a future and returns its value";
  let description = [{
    Blocks until the collective started by the `zero.async` that produced
    `future` has completed, and returns its result. A future is awaited at
    most once.

    When the future comes from a `zero.async` of the same block, `input` is
    the collective's input, which the collective reads until it completes:
    naming it here makes the await a reader of it, so that bufferization
    neither reuses nor frees its buffer while the collective is in flight.
    The verifier checks that it is the collective's input; the builder that
    takes only the future fills it in. A future carried by a loop (a block
    argument) or made by `zero.ready` is awaited without `reads`: the
    collective's input is out of reach, and `zero-expand-loop-futures` gives
    it a buffer of its own.

    Awaiting a collective over a group of size 1 canonicalizes to the
    collective's input (the `zero.async` then has no use and goes away);
    awaiting a `zero.ready` future, to its value.

    ```mlir
    %v = zero.await %f reads %g
        : !zero.future<tensor<64000xf32>>, tensor<512000xf32>
    // a future carried round a loop
    %w = zero.await %carried : !zero.future<tensor<4096xbf16>>
    ```
  }];
  let arguments = (ins Zero_FutureType:$future,
                       Optional<AnyRankedTensor>:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $future (`reads` $input^)? attr-dict `:` qualified(type($future))
    (`,` type($input)^)?
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$future)>
  ];
  let hasCanonicalizer = 1;
  let hasVerifier = 1;
}

def Zero_ReadyOp : Zero_Op<"ready", [
    Pure,
    TypesMatchWith<"future holds the value's type", "value", "future",
                   "::zero::FutureType::get($_self.getContext(), $_self)">
  ]> {
  let summary = "A future that is already complete";
  let description = [{
    A future whose value is `value`, with nothing in flight: awaiting it
    returns `value`. It starts a loop that carries a future round its back
    edge (see `zero-schedule-overlap`): the first iteration awaits the value
    the loop started with, each later one the collective that the iteration
    before started.

    ```mlir
    %f0 = zero.ready %w0 : tensor<288xbf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value);
  let results = (outs Zero_FutureType:$future);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def Zero_CompletedRequestOp : Zero_Op<"completed_request", [Pure]> {
  let summary = "A request with nothing in flight";
  let description = [{
    Waiting on this request returns at once. `zero-expand-loop-futures` makes
    it the first request of a loop whose iterations each wait for the
    collective the iteration before started; `zero-lower-to-runtime` makes
    it a null handle, which `zero_rt_wait` accepts.

    ```mlir
    %none = zero.completed_request
    ```
  }];
  let results = (outs Zero_RequestType:$request);
  let assemblyFormat = "attr-dict";
}

//===----------------------------------------------------------------------===//
// Block quantization
//===----------------------------------------------------------------------===//

def Zero_QuantizeOp : Zero_Op<"quantize", [Pure]> {
  let summary = "Block-quantizes floats to int8 or int4 levels with one f32 "
                "scale a block";
  let description = [{
    Splits the last dimension of `input` into blocks of `block` elements
    (the last block of a row may be shorter) and quantizes each block
    symmetrically to `bits` bits (8, the default, or 4) with one f32 scale,
    where L, the largest level, is 127 for 8 bits and 7 for 4:

    - `scale = max|x| / L` over the block (NaN if the block holds one);
    - `q = clamp(roundeven(x / scale), -L, L)`, and 0 where `scale` is 0
      or `x / scale` is NaN.

    With 8 bits `values` has the input's shape, a level an `i8`. With 4 bits
    two levels share a byte, element `2k` in its low half and `2k + 1` in
    its high half (two's complement), so the last dimension of `values`
    holds `ceil(size / 2)` bytes; `block` must then be even, so that no
    byte holds two blocks' levels. `scales` has the input's shape, but with
    `ceil(size / block)` elements in the last dimension. `zero.dequantize`
    inverts it within `max|block| / (2 L)` an element (`max|block| / 254`
    for 8 bits, `max|block| / 14` for 4; plus float rounding, below
    `max|block| * 2^-20`): the half step of L levels each side of zero. A
    block with an infinity or a NaN dequantizes to NaN.

    It is what a compressed collective sends (ZeRO++'s qwZ: the weights'
    all-gather in int8 with a scale a block; qgZ: the gradients' exchange
    in int8 or int4): `zero-quantize-to-linalg` lowers it to loop nests,
    which fuse with their neighbours.

    ```mlir
    %q, %s = zero.quantize %w block = 4096
        : tensor<1x65536xf32> -> tensor<1x65536xi8>, tensor<1x16xf32>
    %q4, %s4 = zero.quantize %w block = 4096 bits = 4
        : tensor<1x65536xf32> -> tensor<1x32768xi8>, tensor<1x16xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[AnyFloat]>:$input,
                       ConfinedAttr<I64Attr, [IntPositive]>:$block,
                       DefaultValuedAttr<I64Attr, "8">:$bits);
  let results = (outs RankedTensorOf<[I8]>:$values,
                      RankedTensorOf<[F32]>:$scales);
  let builders = [
    // The result types that `input` (rank 1 or more), `block` and `bits`
    // give.
    OpBuilder<(ins "::mlir::Value":$input, "int64_t":$block,
                   CArg<"int64_t", "8">:$bits), [{
      auto floats = ::llvm::cast<::mlir::RankedTensorType>(input.getType());
      build($_builder, $_state, ::zero::getQuantValuesType(floats, bits),
            ::zero::getQuantScalesType(floats, block), input, block, bits);
    }]>
  ];
  let assemblyFormat = [{
    $input `block` `=` $block (`bits` `=` $bits^)? attr-dict `:`
    type($input) `->` type($values) `,` type($scales)
  }];
  let hasVerifier = 1;
}

def Zero_DequantizeOp : Zero_Op<"dequantize", [Pure]> {
  let summary = "Int8 or int4 levels and their block scales back to floats";
  let description = [{
    The inverse of `zero.quantize`: element `i` of the last dimension is
    its level (for 4 bits, the half of byte `i / 2` that holds it, sign
    extended) times `scales[..., i / block]`, computed in f32 and then
    converted to the result's element type. The shapes are those
    `zero.quantize` gives for the result's type, `block` and `bits`.

    ```mlir
    %w = zero.dequantize %q, %s block = 4096
        : tensor<4x65536xi8>, tensor<4x16xf32> -> tensor<4x65536xf32>
    ```
  }];
  let arguments = (ins RankedTensorOf<[I8]>:$values,
                       RankedTensorOf<[F32]>:$scales,
                       ConfinedAttr<I64Attr, [IntPositive]>:$block,
                       DefaultValuedAttr<I64Attr, "8">:$bits);
  let results = (outs RankedTensorOf<[AnyFloat]>:$result);
  let assemblyFormat = [{
    $values `,` $scales `block` `=` $block (`bits` `=` $bits^)? attr-dict `:`
    type($values) `,` type($scales) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Host memory beside a GPU
//===----------------------------------------------------------------------===//

def Zero_HostAllocOp : Zero_Op<"host_alloc"> {
  let summary = "A buffer in host memory, beside a GPU";
  let description = [{
    Allocates a buffer that the host's code reads and writes: in a program
    lowered for a GPU, pinned host memory that the device may also reach
    (`zero_rt_gpu_alloc_host`, CUDA's `cuMemHostAlloc`), so that copies to
    and from the device run at the link's speed; on the CPU, including the
    GPU's CPU replica (`zero-run --gpu-loops`), the runtime's host pool.
    `zero-offload-to-host` makes these for an offloaded update: the
    temporaries of its host loops, and the host copies of the device
    buffers they read or write. `memref.dealloc` frees it.

    `staging` marks a buffer that only the rank's host queue uses and that
    the queue frees (its `memref.dealloc` is marked `zero.queued` and
    `zero.staging`): an update's gradient shard copied down, its new weight
    copied up. It comes from `zero_rt_host_alloc_staging` (on a GPU
    `zero_rt_gpu_alloc_staging`), which bounds the bytes of such buffers a
    rank holds (`ZERO_STAGING_BYTES`), and goes back by
    `zero_rt_host_queue_free_staging`.

    The buffer has a static shape and the identity layout.

    ```mlir
    %staged = zero.host_alloc staging : memref<4096xf32>
    memref.copy %gradient_shard, %staged : memref<4096xf32> to memref<4096xf32>
    ```
  }];
  let arguments = (ins UnitAttr:$staging);
  let results = (outs Res<AnyStaticShapeMemRef, "",
                          [MemAlloc<DefaultResource>]>:$memref);
  let assemblyFormat = "(`staging` $staging^)? attr-dict `:` type($memref)";
  let hasVerifier = 1;
}

#endif // ZERO_DIALECT_ZERO_IR_ZEROOPS_TD
