// zero-gpu-copies: copies between buffers become linalg.copy (kernels, in
// zero-to-nvvm); copies from a global (host memory) and of 0-d buffers stay,
// and so does a copy to or from an unranked buffer, with a remark.

// RUN: zero-opt %s --split-input-file --zero-gpu-copies --verify-diagnostics | FileCheck %s

memref.global "private" constant @ones : memref<4xf32> = dense<1.0>

// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[A:.*]]: memref<23xf32>, %[[B:.*]]: memref<66xf32>, %[[S:.*]]: memref<f32>, %[[T:.*]]: memref<f32>)
// CHECK: %[[VIEW:.*]] = memref.subview %[[B]][40] [23] [1]
// CHECK: linalg.copy ins(%[[A]] : memref<23xf32>) outs(%[[VIEW]] : memref<23xf32, strided<[1], offset: 40>>)
// CHECK: %[[G:.*]] = memref.get_global @ones
// CHECK: memref.copy %[[G]], %{{.*}} : memref<4xf32> to memref<4xf32, strided<[1]>>
// CHECK: memref.copy %[[S]], %[[T]] : memref<f32> to memref<f32>
// CHECK-NOT: linalg.copy
func.func @copies(%a: memref<23xf32>, %b: memref<66xf32>, %s: memref<f32>, %t: memref<f32>) {
  %view = memref.subview %b[40] [23] [1] : memref<66xf32> to memref<23xf32, strided<[1], offset: 40>>
  memref.copy %a, %view : memref<23xf32> to memref<23xf32, strided<[1], offset: 40>>
  %g = memref.get_global @ones : memref<4xf32>
  %head = memref.subview %b[0] [4] [1] : memref<66xf32> to memref<4xf32, strided<[1]>>
  memref.copy %g, %head : memref<4xf32> to memref<4xf32, strided<[1]>>
  memref.copy %s, %t : memref<f32> to memref<f32>
  return
}

// -----

// CHECK-LABEL: func.func @unranked
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<4xf32> to memref<*xf32>
// CHECK-NOT: linalg.copy
func.func @unranked(%x: memref<4xf32>, %y: memref<*xf32>) {
  // expected-remark @below {{copy to or from an unranked buffer stays a host copy over managed memory}}
  memref.copy %x, %y : memref<4xf32> to memref<*xf32>
  return
}
