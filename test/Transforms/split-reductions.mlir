// zero-split-reductions: a reduction into a 0-d value (its input flattened
// to 1-D) becomes B partial results over a [K, B] view (padded with the
// combiner's identity) and a combine of the partials with the original
// initial value.

// RUN: zero-opt %s --split-input-file --zero-split-reductions | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-split-reductions 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: zero-opt %s --split-input-file --zero-split-reductions=max-parts=4 | FileCheck %s --check-prefix=FOUR
// RUN: not zero-opt %s --zero-split-reductions=max-parts=0 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: zero-split-reductions: max-parts must be positive, got 0

// 91 elements: B = 16 partials of K = 6 (sqrt(91) rounded up to a power of
// two), 5 elements of padding with -0.0, the additive identity. Partial b
// combines column b of the [6, 16] view; the parallel loop (over b) is the
// outer one, so that one GPU kernel computes all partials.
// CHECK-DAG: #[[COLUMNS:.*]] = affine_map<(d0, d1) -> (d1, d0)>
// CHECK-DAG: #[[PARTIAL:.*]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @sum_of_squares
// CHECK-SAME: (%[[X:[^:]*]]: tensor<91xf32>)
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[NEG:.*]] = arith.constant -0.000000e+00 : f32
// CHECK: %[[P:.*]] = tensor.pad %[[X]] low[0] high[5]
// CHECK: tensor.yield %[[NEG]]
// CHECK: %[[G:.*]] = tensor.expand_shape %[[P]] {{\[\[}}0, 1]] output_shape [6, 16]
// CHECK: %[[F:.*]] = linalg.fill ins(%[[NEG]] : f32) outs(%{{.*}} : tensor<16xf32>)
// CHECK: %[[PART:.*]] = linalg.generic {indexing_maps = [#[[COLUMNS]], #[[PARTIAL]]], iterator_types = ["parallel", "reduction"]} ins(%[[G]] : tensor<6x16xf32>) outs(%[[F]] : tensor<16xf32>)
// CHECK: arith.addf
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[PART]] {{\[\[}}0, 1]] output_shape [1, 16]
// CHECK: %[[INIT:.*]] = tensor.expand_shape %{{.*}} [] output_shape [1] : tensor<f32> into tensor<1xf32>
// CHECK: %[[TOT:.*]] = linalg.reduce ins(%[[ROW]] : tensor<1x16xf32>) outs(%[[INIT]] : tensor<1xf32>) dimensions = [1]
// CHECK: %[[R:.*]] = tensor.collapse_shape %[[TOT]] [] : tensor<1xf32> into tensor<f32>
// CHECK: return %[[R]]
// FOUR-LABEL: func.func @sum_of_squares
// FOUR: tensor.pad %{{.*}} low[0] high[1]
// FOUR: output_shape [23, 4]
func.func @sum_of_squares(%x: tensor<91xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.reduce ins(%x : tensor<91xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<f32>
}

// -----

// An inf check (any over i1): no padding needed for 64 elements (8 x 8);
// the identity of ori is false.
// CHECK-LABEL: func.func @any
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK-NOT: tensor.pad
// CHECK: output_shape [8, 8]
// CHECK: linalg.fill ins(%[[FALSE]] : i1)
// CHECK: arith.ori
func.func @any(%x: tensor<64xi1>, %init: tensor<i1>) -> tensor<i1> {
  %n = linalg.reduce ins(%x : tensor<64xi1>) outs(%init : tensor<i1>) dimensions = [0]
    (%in: i1, %acc: i1) {
      %s = arith.ori %in, %acc : i1
      linalg.yield %s : i1
    }
  return %n : tensor<i1>
}

// -----

// A maximum: the identity is -inf.
// CHECK-LABEL: func.func @max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: arith.maximumf
func.func @max(%x: tensor<10xf32>, %init: tensor<f32>) -> tensor<f32> {
  %n = linalg.reduce ins(%x : tensor<10xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.maximumf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<f32>
}

// -----

// A reduction over every dimension of a 2-D tensor (loss scaling's check
// that every gradient is finite) is one over its 91 elements in row-major
// order: flattened, then split as above, padded with `true`, the identity
// of `and`.
// CHECK-LABEL: func.func @all_finite
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %{{.*}} {{\[\[}}0, 1]] : tensor<7x13xi1> into tensor<91xi1>
// CHECK: tensor.pad %[[FLAT]] low[0] high[5]
// CHECK: tensor.yield %[[TRUE]] : i1
// CHECK: linalg.generic
// CHECK-SAME: ins(%{{.*}} : tensor<6x16xi1>) outs(%{{.*}} : tensor<16xi1>)
// CHECK: arith.andi
// CHECK: linalg.reduce ins(%{{.*}} : tensor<1x16xi1>) outs(%{{.*}} : tensor<1xi1>) dimensions = [1]
func.func @all_finite(%x: tensor<7x13xi1>, %init: tensor<i1>) -> tensor<i1> {
  %all = linalg.reduce ins(%x : tensor<7x13xi1>) outs(%init : tensor<i1>) dimensions = [0, 1]
    (%in: i1, %acc: i1) {
      %both = arith.andi %in, %acc : i1
      linalg.yield %both : i1
    }
  return %all : tensor<i1>
}

// -----

// A combiner the pass does not know (a sum of squares inside the combiner)
// is left alone, with a remark; so is a reduction that keeps a dimension.
// REMARK: remark: not split: its combiner is not one known associative operation
// CHECK-LABEL: func.func @unknown_combiner
// CHECK: linalg.reduce ins(%{{.*}} : tensor<10xf32>)
// CHECK-NOT: linalg.reduce
func.func @unknown_combiner(%x: tensor<10xf32>, %init: tensor<f32>) -> tensor<f32> {
  %n = linalg.reduce ins(%x : tensor<10xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %sq = arith.mulf %in, %in : f32
      %s = arith.addf %sq, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<f32>
}

// CHECK-LABEL: func.func @rows
// CHECK: linalg.reduce ins(%{{.*}} : tensor<4x8xf32>)
// CHECK-NOT: linalg.reduce
func.func @rows(%x: tensor<4x8xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %n = linalg.reduce ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<4xf32>
}
