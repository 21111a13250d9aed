//===- FoldTransposes.h - transposes read by matmuls as indexing maps -*- C++
//-*-===//
//
// The patterns of zero-fold-transposes-into-matmuls, for a pipeline that
// embeds them: a linalg.matmul that reads a linalg.transpose reads the
// transpose's input through a transposed indexing map instead.
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_LOOPS_FOLDTRANSPOSES_H
#define ZERO_LOOPS_FOLDTRANSPOSES_H

#include "mlir/IR/PatternMatch.h"

namespace zero {

void populateFoldTransposesIntoMatmulsPatterns(
    mlir::RewritePatternSet &patterns);

} // namespace zero

#endif // ZERO_LOOPS_FOLDTRANSPOSES_H
