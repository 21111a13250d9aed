//===- QuantizeToLinalg.h - block quantization to linalg --------*- C++ -*-===//
//
// Patterns that expand `zero.quantize` and `zero.dequantize` into linalg on
// tensors, for an embedder's own pipeline (the pass is
// `zero-quantize-to-linalg`).
//
//===----------------------------------------------------------------------===//

#ifndef ZERO_CONVERSION_QUANTIZETOLINALG_QUANTIZETOLINALG_H
#define ZERO_CONVERSION_QUANTIZETOLINALG_QUANTIZETOLINALG_H

#include "mlir/IR/PatternMatch.h"

namespace zero {

/// `zero.quantize` to a `linalg.generic` that takes each block's largest
/// magnitude, one that divides it by 127 into the scales, and one that
/// rounds each element to int8; `zero.dequantize` to one `linalg.generic`
/// that multiplies. The last dimension is padded to whole blocks (with
/// zeros, which change no block's largest magnitude) and viewed as
/// (blocks, block) when it is not a multiple of the block. Creates ops of
/// linalg, tensor, arith and math.
void populateQuantizeToLinalgPatterns(mlir::RewritePatternSet &patterns);

} // namespace zero

#endif // ZERO_CONVERSION_QUANTIZETOLINALG_QUANTIZETOLINALG_H
