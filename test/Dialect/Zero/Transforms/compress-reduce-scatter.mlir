// zero-compress-reduce-scatter (ZeRO++'s qgZ): a reduce-scatter of floats
// becomes int8 blocks exchanged all-to-all, dequantized and summed in f32 by
// each rank in group order; on a group of two mesh axes, in two hops (the
// inner axis first). What it cannot compress it leaves exact, with a remark
// that says why.
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512' --verify-diagnostics | FileCheck %s
// RUN: not zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=0' 2>&1 | FileCheck %s --check-prefix=BLOCK
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512 bits=4' 2>&1 | FileCheck %s --check-prefix=INT4
// RUN: not zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=511 bits=4' 2>&1 | FileCheck %s --check-prefix=ODD
// RUN: not zero-opt %s --split-input-file --zero-compress-reduce-scatter='bits=6' 2>&1 | FileCheck %s --check-prefix=BITS

// BLOCK: error: zero-compress-reduce-scatter: quantize-block must be positive, not 0
// ODD: error: zero-compress-reduce-scatter: int4 levels go two a byte, so quantize-block must be even, not 511
// BITS: error: zero-compress-reduce-scatter: bits must be 8, 4 or 16 (bf16), not 6

// int4 (qgZ's 4 bits): two levels a byte, half the levels' bytes, and a
// bound of max|block| / 14 a contribution.
// INT4: remark: zero-compress-reduce-scatter: exchanged as int4 blocks of 512 over 4 ranks; each element is within the sum of max|block| / 14 of its contributions
// INT4-LABEL: func.func @one_axis
// INT4: %[[Q:.*]], %[[S:.*]] = zero.quantize %{{.*}} block = 512 bits = 4 : tensor<4x1024xf32> -> tensor<4x512xi8>, tensor<4x2xf32>
// INT4: %[[QT:.*]] = zero.all_to_all %[[Q]] on @dp axes = [0] : tensor<4x512xi8>
// INT4: %[[ST:.*]] = zero.all_to_all %[[S]] on @dp axes = [0] : tensor<4x2xf32>
// INT4: zero.dequantize %[[QT]], %[[ST]] block = 512 bits = 4 : tensor<4x512xi8>, tensor<4x2xf32> -> tensor<4x1024xf32>

zero.mesh @dp(shape = [4])

// The gradient as [N, S] rows, one per destination; blocks of 512 within a
// row, so no block spans two ranks' parts.
// CHECK-LABEL: func.func @one_axis
// CHECK-SAME: (%[[G:.*]]: tensor<4096xf32>)
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[G]] {{\[\[}}0, 1]] output_shape [4, 1024] : tensor<4096xf32> into tensor<4x1024xf32>
// CHECK: %[[Q:.*]], %[[S:.*]] = zero.quantize %[[ROWS]] block = 512 : tensor<4x1024xf32> -> tensor<4x1024xi8>, tensor<4x2xf32>
// CHECK: %[[QT:.*]] = zero.all_to_all %[[Q]] on @dp axes = [0] : tensor<4x1024xi8>
// CHECK: %[[ST:.*]] = zero.all_to_all %[[S]] on @dp axes = [0] : tensor<4x2xf32>
// CHECK: %[[D:.*]] = zero.dequantize %[[QT]], %[[ST]] block = 512 : tensor<4x1024xi8>, tensor<4x2xf32> -> tensor<4x1024xf32>
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[SUM:.*]] = linalg.reduce { arith.addf } ins(%[[D]] : tensor<4x1024xf32>) outs(%[[ZERO]] : tensor<1024xf32>) dimensions = [0]
// CHECK-NOT: zero.reduce_scatter
// CHECK: return %[[SUM]] : tensor<1024xf32>
func.func @one_axis(%g: tensor<4096xf32>) -> tensor<1024xf32> {
  // expected-remark @+1 {{zero-compress-reduce-scatter: exchanged as int8 blocks of 512 over 4 ranks}}
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<4096xf32> -> tensor<1024xf32>
  return %gs : tensor<1024xf32>
}

// -----

zero.mesh @m(shape = [2, 4])

// Two hops on a 2x4 mesh: the rows for axis 1 moved to the front and
// exchanged along it, their sums quantized again and exchanged along axis 0;
// a mean divides the sum by 8 and a bf16 gradient is rounded at the end.
// CHECK-LABEL: func.func @two_axes_mean
// CHECK: tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<16x3xbf16> into tensor<48xbf16>
// CHECK: tensor.expand_shape %{{.*}} output_shape [2, 4, 6] : tensor<48xbf16> into tensor<2x4x6xbf16>
// CHECK: linalg.transpose {{.*}} permutation = [1, 0, 2]
// CHECK: zero.quantize %{{.*}} block = 512 : tensor<4x2x6xbf16> -> tensor<4x2x6xi8>, tensor<4x2x1xf32>
// CHECK: zero.all_to_all %{{.*}} on @m axes = [1] : tensor<4x2x6xi8>
// CHECK: zero.all_to_all %{{.*}} on @m axes = [1] : tensor<4x2x1xf32>
// CHECK: %[[HOP1:.*]] = linalg.reduce {{.*}} dimensions = [0]
// CHECK: zero.quantize %[[HOP1]] block = 512 : tensor<2x6xf32> -> tensor<2x6xi8>, tensor<2x1xf32>
// CHECK: zero.all_to_all %{{.*}} on @m axes = [0] : tensor<2x6xi8>
// CHECK: zero.all_to_all %{{.*}} on @m axes = [0] : tensor<2x1xf32>
// CHECK: %[[HOP2:.*]] = linalg.reduce {{.*}} dimensions = [0]
// CHECK: %[[N:.*]] = arith.constant dense<8.000000e+00> : tensor<6xf32>
// CHECK: %[[MEAN:.*]] = arith.divf %[[HOP2]], %[[N]] : tensor<6xf32>
// CHECK: %[[B:.*]] = arith.truncf %[[MEAN]] : tensor<6xf32> to tensor<6xbf16>
// CHECK: tensor.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xbf16> into tensor<2x3xbf16>
func.func @two_axes_mean(%g: tensor<16x3xbf16>) -> tensor<2x3xbf16> {
  // expected-remark @+1 {{exchanged as int8 blocks of 512 over 8 ranks}}
  %gs = zero.reduce_scatter %g on @m reduce = mean : tensor<16x3xbf16> -> tensor<2x3xbf16>
  return %gs : tensor<2x3xbf16>
}

// -----

zero.mesh @m(shape = [2, 4])
zero.mesh @one(shape = [1])

// Left exact, each with its reason.
// CHECK-LABEL: func.func @left_exact
// CHECK-COUNT-5: zero.reduce_scatter
// CHECK-NOT: zero.all_to_all
func.func @left_exact(%f: tensor<8xf32>, %d: tensor<8xf64>, %i: tensor<8xi32>,
                      %w: tensor<2x8xf32>)
    -> (tensor<1xf32>, tensor<1xf64>, tensor<1xi32>, tensor<2x1xf32>, tensor<8xf32>) {
  // expected-remark @+1 {{left exact: it reduces by max, which compression would not bound (sum and mean are)}}
  %0 = zero.reduce_scatter %f on @m reduce = max : tensor<8xf32> -> tensor<1xf32>
  // expected-remark @+1 {{left exact: its elements are f64: only f32, bf16 and f16 gradients are compressed}}
  %1 = zero.reduce_scatter %d on @m reduce = sum : tensor<8xf64> -> tensor<1xf64>
  // expected-remark @+1 {{left exact: its elements are i32}}
  %2 = zero.reduce_scatter %i on @m reduce = sum : tensor<8xi32> -> tensor<1xi32>
  // expected-remark @+1 {{left exact: it splits dimension 1; only a split of dimension 0 has contiguous parts}}
  %3 = zero.reduce_scatter %w on @m reduce = sum dim = 1 : tensor<2x8xf32> -> tensor<2x1xf32>
  // expected-remark @+1 {{left exact: its group has one rank: nothing to send}}
  %4 = zero.reduce_scatter %f on @one reduce = sum : tensor<8xf32> -> tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<1xf32>, tensor<1xf64>, tensor<1xi32>, tensor<2x1xf32>, tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// Nothing to compress: a remark says so.
// CHECK-LABEL: func.func @nothing
// expected-remark @+1 {{zero-compress-reduce-scatter: no zero.reduce_scatter to compress}}
func.func @nothing(%g: tensor<8xf32>) -> tensor<8xf32> {
  %a = zero.all_reduce %g on @dp reduce = sum : tensor<8xf32>
  return %a : tensor<8xf32>
}
