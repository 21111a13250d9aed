//===- ReductionOrder.h - the one order of every full reduction -*- C++ -*-===//
//
// MLIR does not fix the order in which a reduction combines its elements, so
// a floating-point sum may give different bits depending on how it is
// lowered and over how many ranks it is sharded. zero fixes one order for
// every full reduction (a linalg.reduce of every dimension into a 0-d
// value), on every pipeline and for every number of ranks:
//
//   1. the input, flattened in row-major order, is cut into blocks of
//      getReductionBlock(size) elements in index order (the last one padded
//      with the combiner's identity, which changes no value);
//   2. each block is combined in index order, starting from the identity,
//      into one partial result;
//   3. the init and then the partials, in index order, are combined left to
//      right.
//
// A chain of reductions (a global norm summed parameter by parameter) is a
// chain of inits, so it is combined in program order too. Sharded over N
// ranks, shard boundaries fall on block boundaries: each rank computes its
// blocks' partials, an all-gather gives every rank all of them, and step 3
// runs on every rank: the same bits as the program as given, for every N.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LOOPS_REDUCTIONORDER_H
#define ZERO_LOOPS_REDUCTIONORDER_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace zero {

/// The largest block. The partials that a sharded reduction all-gathers
/// are at most 1/kReductionBlock of the reduced elements, plus at most 64
/// for a tensor under 64 blocks of it. The budget is 0.1% of a step's
/// bytes: LAMB at BERT-base size on 8 ranks, two norms a tensor in f32
/// partials beside a reduce-scatter of f32 gradients, sends 0.08% with
/// 4096 (0.25% with 1024). Larger blocks cost alignment: a shard is padded
/// by up to B - 1 elements.
constexpr int64_t kReductionBlock = 4096;

/// The block of a full reduction of `elements` elements: the power of two
/// that cuts it into at most 64 blocks, from 16 to kReductionBlock
/// elements. A function of the tensor alone, never of the ranks, so that
/// every N gives the same bits. A shard is aligned to it, so small tensors
/// get small blocks: a shard of a 768-element bias on 8 ranks is padded to
/// 128 elements, not 4096.
inline int64_t getReductionBlock(int64_t elements) {
  int64_t block = 16;
  while (block < kReductionBlock && block * 64 < elements)
    block *= 2;
  return block;
}

/// The number of blocks, and so of partial results, of a full reduction of
/// `elements` elements.
inline int64_t countBlocks(int64_t elements) {
  int64_t block = getReductionBlock(elements);
  return std::max<int64_t>(1, (elements + block - 1) / block);
}

/// The partial results of the blocks of `block` elements of the 1-D `flat`
/// (padded here with `identity` to whole blocks), each combined in index
/// order by the combiner of `like`: a tensor of ceil(size / block)
/// elements. A
/// `linalg.generic` whose outer loop (blocks) is parallel and inner loop
/// (a block's elements) a reduction: on the GPU, one thread a block.
mlir::Value reduceBlocks(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::linalg::ReduceOp like, mlir::Value flat,
                         mlir::TypedAttr identity, int64_t block);

/// `init` (0-d) combined with each of the 1-D `partials` in index order by
/// the combiner of `like`, into a new 0-d tensor (one `linalg.generic` of a
/// single parallel iteration, one thread on the GPU). The result never
/// aliases `init`: a chain of reductions is a chain of small, separate
/// buffers, not one buffer written in place through the whole program.
mlir::Value combineInOrder(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::linalg::ReduceOp like, mlir::Value partials,
                           mlir::Value init);

/// A full reduction written as a `linalg.generic` (every iterator a
/// reduction, every input read at its element, a 0-d init, a body
/// `yield combine(f(inputs), out)` with `f` not reading `out`), as
/// `linalg-fuse-elementwise-ops` makes of a norm's squares and sum, or
/// `linalg-generalize-named-ops` of a `linalg.reduce`, rewritten into the
/// form zero orders and shards: a parallel `linalg.generic` computing `f`
/// (none when `f` is one input itself), then a `linalg.reduce` with the
/// combiner. Fails, changing nothing, on any other op.
mlir::FailureOr<mlir::linalg::ReduceOp>
splitFullReduction(mlir::OpBuilder &b, mlir::linalg::GenericOp generic);

/// splitFullReduction on every generic in `root` it applies to.
void splitFullReductions(mlir::Operation *root);

} // namespace zero

#endif // ZERO_LOOPS_REDUCTIONORDER_H
