// zero-unshare-inits: each destination of a destination-style op gets its
// own empty (or filled) tensor where CSE made several ops share one; other
// uses, and definitions in another block, are left alone.

// RUN: zero-opt %s --split-input-file --zero-unshare-inits | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// A norm chain's steps all wrote into one CSE'd empty tensor: the first
// keeps it, the second gets its own.
// CHECK-LABEL: func.func @shared_empty
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: %[[A:.*]] = linalg.generic {{.*}} outs(%[[E]] : tensor<4xf32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<4xf32>
// CHECK: linalg.generic {{.*}} ins(%[[A]] : tensor<4xf32>) outs(%[[E2]] : tensor<4xf32>)
func.func @shared_empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.mulf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %in : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %b : tensor<4xf32>
}

// -----

// Reductions accumulating into one CSE'd zero-filled tensor: the second gets
// a fill of an empty tensor of its own.
// CHECK-LABEL: func.func @shared_fill
// CHECK: %[[ZERO:.*]] = arith.constant 0.0
// CHECK: %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.*}} : tensor<f32>)
// CHECK: linalg.reduce ins(%{{.*}} : tensor<4xf32>) outs(%[[F]] : tensor<f32>)
// CHECK: %[[E2:.*]] = tensor.empty() : tensor<f32>
// CHECK: %[[F2:.*]] = linalg.fill ins(%[[ZERO]] : f32) outs(%[[E2]] : tensor<f32>)
// CHECK: linalg.reduce ins(%{{.*}} : tensor<8xf32>) outs(%[[F2]] : tensor<f32>)
func.func @shared_fill(%x: tensor<4xf32>, %y: tensor<8xf32>) -> (tensor<f32>, tensor<f32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %a = linalg.reduce ins(%x : tensor<4xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  %b = linalg.reduce ins(%y : tensor<8xf32>) outs(%f : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %a, %b : tensor<f32>, tensor<f32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// One destination use beside reads: nothing shared to undo. An empty tensor
// defined outside a loop stays shared by the loop's body (a copy there would
// allocate in every iteration).
// CHECK-LABEL: func.func @left_alone
// CHECK-COUNT-1: tensor.empty
// CHECK-NOT: tensor.empty
func.func @left_alone(%x: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<4xf32>
  %a = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%e : tensor<4xf32>) outs(%x : tensor<4xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> tensor<4xf32> {
    %s = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel"]} ins(%acc : tensor<4xf32>) outs(%e : tensor<4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %t = arith.addf %in, %in : f32
      linalg.yield %t : f32
    } -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %a, %r : tensor<4xf32>, tensor<4xf32>
}
