// zero-fold-transposes-into-matmuls: a matmul that reads a linalg.transpose
// reads the transpose's input through a transposed indexing map, and the
// transpose (a copy, once bufferized) goes when nothing else reads it.

// RUN: zero-opt %s --split-input-file --zero-fold-transposes-into-matmuls | FileCheck %s

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
