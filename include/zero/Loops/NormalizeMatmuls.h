//===- NormalizeMatmuls.h - matmuls in one form ------------------*- C++
//-*-===//
//
// The patterns of zero-normalize-matmuls, for a pipeline that embeds them,
// and the recognizer of a matmul's generic form that zero-gemm-calls shares.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LOOPS_NORMALIZEMATMULS_H
#define ZERO_LOOPS_NORMALIZEMATMULS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

#include <optional>

namespace zero {

/// A linalg.matmul's indexing maps, over its loops (d0, d1, d2) = (m, n, k),
/// when `op` is the generic form of one (linalg-generalize-named-ops writes
/// it so, and front ends emit it): two inputs and one output, two parallel
/// loops and one reduction in any order, A read at (m, k) or (k, m), B at
/// (k, n) or (n, k), C at (m, n), and a body that adds the product of its
/// inputs (each widened by arith.extf or not) to its output and does nothing
/// else. None otherwise.
std::optional<llvm::SmallVector<mlir::AffineMap>>
matmulMapsOf(mlir::linalg::GenericOp op);

/// Whether `map`, over a matmul's loops, reads its operand as (d`rows`,
/// d`columns`) (false) or transposed, as (d`columns`, d`rows`) (true); none
/// when it does neither (a broadcast, or not a projected permutation).
std::optional<bool> readsTransposed(mlir::AffineMap map, unsigned rows,
                                    unsigned columns);

/// `op` replaced by the linalg.matmul it is (matmulMapsOf), on tensors or
/// on buffers; failure, with `op` unchanged, when it is not one.
mlir::FailureOr<mlir::linalg::MatmulOp>
specializeMatmul(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op);

/// Generic matmuls as linalg.matmul, and transposes a matmul reads folded
/// into its indexing maps.
void populateNormalizeMatmulsPatterns(mlir::RewritePatternSet &patterns);

} // namespace zero

#endif // ZERO_LOOPS_NORMALIZEMATMULS_H
