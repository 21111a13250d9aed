// zero-normalize-matmuls: a matmul's generic form becomes a linalg.matmul;
// a matmul that reads a linalg.transpose reads the transpose's input
// through a transposed indexing map, and the transpose (a copy, once
// bufferized) goes when nothing else reads it.

// RUN: zero-opt %s --split-input-file --zero-normalize-matmuls | FileCheck %s

// A linear layer's forward, x W^T, in bf16 into f32: B read transposed.
// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<16x8xbf16>, %[[Z:.*]]: tensor<4x16xf32>)
// CHECK-NOT: linalg.transpose
// CHECK: %[[Y:.*]] = linalg.matmul indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]] ins(%[[X]], %[[W]] : tensor<4x8xbf16>, tensor<16x8xbf16>) outs(%[[Z]] : tensor<4x16xf32>)
// CHECK: return %[[Y]]
func.func @forward(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<8x16xbf16>
  %t = linalg.transpose ins(%w : tensor<16x8xbf16>) outs(%e : tensor<8x16xbf16>) permutation = [1, 0]
  %y = linalg.matmul ins(%x, %t : tensor<4x8xbf16>, tensor<8x16xbf16>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// A weight's gradient, dy^T x: A read transposed.
// CHECK-DAG: #[[$KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: (%[[DY:.*]]: tensor<4x16xf32>, %[[X:.*]]: tensor<4x8xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul indexing_maps = [#[[$KM]], #[[$KN]], #{{.*}}] ins(%[[DY]], %[[X]] : tensor<4x16xf32>, tensor<4x8xf32>)
func.func @weight_gradient(%dy: tensor<4x16xf32>, %x: tensor<4x8xf32>, %g: tensor<16x8xf32>) -> tensor<16x8xf32> {
  %e = tensor.empty() : tensor<16x4xf32>
  %t = linalg.transpose ins(%dy : tensor<4x16xf32>) outs(%e : tensor<16x4xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%t, %x : tensor<16x4xf32>, tensor<4x8xf32>) outs(%g : tensor<16x8xf32>) -> tensor<16x8xf32>
  return %r : tensor<16x8xf32>
}

// -----

// Both inputs transposed; the transpose of A is also returned, so it stays,
// and the matmul reads its input all the same.
// CHECK-DAG: #[[$KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @both
// CHECK-SAME: (%[[A:.*]]: tensor<3x2xf32>, %[[B:.*]]: tensor<5x3xf32>
// CHECK: %[[AT:.*]] = linalg.transpose ins(%[[A]]
// CHECK-NOT: linalg.transpose
// CHECK: %[[R:.*]] = linalg.matmul indexing_maps = [#[[$KM]], #[[$NK]], #{{.*}}] ins(%[[A]], %[[B]] : tensor<3x2xf32>, tensor<5x3xf32>)
// CHECK: return %[[R]], %[[AT]]
func.func @both(%a: tensor<3x2xf32>, %b: tensor<5x3xf32>, %c: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x3xf32>) {
  %ea = tensor.empty() : tensor<2x3xf32>
  %at = linalg.transpose ins(%a : tensor<3x2xf32>) outs(%ea : tensor<2x3xf32>) permutation = [1, 0]
  %eb = tensor.empty() : tensor<3x5xf32>
  %bt = linalg.transpose ins(%b : tensor<5x3xf32>) outs(%eb : tensor<3x5xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%at, %bt : tensor<2x3xf32>, tensor<3x5xf32>) outs(%c : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %r, %at : tensor<2x5xf32>, tensor<2x3xf32>
}

// -----

// A transpose read by a matmul that already reads that operand transposed:
// the two cancel, and the matmul has the default maps again.
// CHECK-LABEL: func.func @cancels
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<8x16xf32>
// CHECK-NOT: linalg.transpose
// CHECK: linalg.matmul ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<8x16xf32>)
func.func @cancels(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>, %z: tensor<4x16xf32>) -> tensor<4x16xf32> {
  %e = tensor.empty() : tensor<16x8xf32>
  %t = linalg.transpose ins(%w : tensor<8x16xf32>) outs(%e : tensor<16x8xf32>) permutation = [1, 0]
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                      affine_map<(d0, d1, d2) -> (d1, d2)>,
                                      affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %t : tensor<4x8xf32>, tensor<16x8xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// Left alone: a transpose that is the matmul's accumulator (only inputs are
// read through maps), and a matmul on buffers (the transposed buffer may be
// written between the two).
// CHECK-LABEL: func.func @left_alone
// CHECK: %[[T:.*]] = linalg.transpose
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<4x8xf32>, tensor<8x4xf32>) outs(%[[T]] : tensor<4x4xf32>)
// CHECK: linalg.transpose ins(%{{.*}} : memref<4x8xf32>)
// CHECK: linalg.matmul ins(%{{.*}}, %{{.*}} : memref<4x8xf32>, memref<8x4xf32>)
func.func @left_alone(%x: tensor<4x8xf32>, %w: tensor<8x4xf32>, %c: tensor<4x4xf32>,
                      %xb: memref<4x8xf32>, %tb: memref<8x4xf32>, %cb: memref<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %t = linalg.transpose ins(%c : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) permutation = [1, 0]
  %r = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x4xf32>) outs(%t : tensor<4x4xf32>) -> tensor<4x4xf32>
  linalg.transpose ins(%xb : memref<4x8xf32>) outs(%tb : memref<8x4xf32>) permutation = [1, 0]
  linalg.matmul ins(%xb, %tb : memref<4x8xf32>, memref<8x4xf32>) outs(%cb : memref<4x4xf32>)
  return %r : tensor<4x4xf32>
}

// -----

// Generic matmuls become linalg.matmul with the same maps, renamed to the
// matmul's loops: here x W^T in bf16 into f32 (its inputs widened in its
// body), loops in (k, m, n) order, the product's operands either way round,
// and the sum's.
// CHECK-DAG: #[[$MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[$NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[$MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @generic_forms
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xbf16>, %[[W:.*]]: tensor<16x8xbf16>, %[[Y:.*]]: tensor<4x16xf32>, %[[A:.*]]: tensor<4x8xf32>, %[[B:.*]]: tensor<8x16xf32>, %[[C:.*]]: tensor<4x16xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[R0:.*]] = linalg.matmul indexing_maps = [#[[$MK]], #[[$NK]], #[[$MN]]] ins(%[[X]], %[[W]] : tensor<4x8xbf16>, tensor<16x8xbf16>) outs(%[[Y]] : tensor<4x16xf32>)
// CHECK: %[[R1:.*]] = linalg.matmul ins(%[[A]], %[[B]] : tensor<4x8xf32>, tensor<8x16xf32>) outs(%[[C]] : tensor<4x16xf32>)
// CHECK: return %[[R0]], %[[R1]]
func.func @generic_forms(%x: tensor<4x8xbf16>, %w: tensor<16x8xbf16>, %y: tensor<4x16xf32>,
                         %a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>) {
  %r0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                         affine_map<(d0, d1, d2) -> (d1, d2)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : tensor<4x8xbf16>, tensor<16x8xbf16>) outs(%y : tensor<4x16xf32>) {
  ^bb0(%in: bf16, %in_0: bf16, %out: f32):
    %0 = arith.extf %in : bf16 to f32
    %1 = arith.extf %in_0 : bf16 to f32
    %2 = arith.mulf %0, %1 : f32
    %3 = arith.addf %out, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<4x16xf32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(k, m, n) -> (m, k)>,
                                         affine_map<(k, m, n) -> (k, n)>,
                                         affine_map<(k, m, n) -> (m, n)>],
                        iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in_0, %in : f32
    %1 = arith.addf %0, %out : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  return %r0, %r1 : tensor<4x16xf32>, tensor<4x16xf32>
}

// -----

// Left generic: a body that does more than add the product (a ReLU fused
// in), one that subtracts it, and a broadcast operand (not a matmul's map).
// CHECK-LABEL: func.func @not_matmuls
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: linalg.matmul
func.func @not_matmuls(%a: tensor<4x8xf32>, %b: tensor<8x16xf32>, %c: tensor<4x16xf32>, %v: tensor<8xf32>)
    -> (tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %r0 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.maximumf %in, %zero : f32
    %1 = arith.mulf %0, %in_0 : f32
    %2 = arith.addf %out, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<4x16xf32>
  %r1 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.subf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  %r2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>,
                                         affine_map<(d0, d1, d2) -> (d2, d1)>,
                                         affine_map<(d0, d1, d2) -> (d0, d1)>],
                        iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%v, %b : tensor<8xf32>, tensor<8x16xf32>) outs(%c : tensor<4x16xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %0 = arith.mulf %in, %in_0 : f32
    %1 = arith.addf %out, %0 : f32
    linalg.yield %1 : f32
  } -> tensor<4x16xf32>
  return %r0, %r1, %r2 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<4x16xf32>
}
