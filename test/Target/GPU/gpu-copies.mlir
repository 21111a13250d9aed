// zero-gpu-copies: copies between buffers become linalg.copy (kernels, in
// zero-to-nvvm); copies from a global (host memory), of 0-d buffers and of a
// contiguous range from a device buffer down into host memory stay, and so
// does a copy to or from an unranked buffer, with a remark.

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

// -----

// A copy from a device buffer into host memory (an argument that
// zero-offload-state placed there) crosses the link: it stays a copy,
// which zero-gpu-buffer-placement makes the runtime's on the rank's
// stream. As a loop nest it would write host memory, and
// zero-offload-to-host would run it on the host from a pinned copy of the
// device buffer. A copy up from host memory becomes a kernel, which reads
// the host memory across the link; so does a copy down into a view of host
// memory that is not one contiguous range.
// CHECK-LABEL: func.func @down_the_link
// CHECK-SAME: (%[[W:.*]]: memref<4x6xf32> {zero.memory = "host"}, %[[D:.*]]: memref<24xf32>, %[[E:.*]]: memref<4x3xf32>)
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[W]]
// CHECK: memref.copy %[[D]], %[[FLAT]] : memref<24xf32> to memref<24xf32>
// CHECK: linalg.copy ins(%[[FLAT]] : memref<24xf32>) outs(%[[D]] : memref<24xf32>)
// CHECK: %[[HALF:.*]] = memref.subview %[[W]][0, 0] [4, 3] [1, 1]
// CHECK: linalg.copy ins(%[[E]] : memref<4x3xf32>) outs(%[[HALF]] : memref<4x3xf32, strided<[6, 1]>>)
// CHECK-NOT: memref.copy
func.func @down_the_link(%w: memref<4x6xf32> {zero.memory = "host"}, %d: memref<24xf32>, %e: memref<4x3xf32>) {
  %flat = memref.collapse_shape %w [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  memref.copy %d, %flat : memref<24xf32> to memref<24xf32>
  memref.copy %flat, %d : memref<24xf32> to memref<24xf32>
  %half = memref.subview %w[0, 0] [4, 3] [1, 1] : memref<4x6xf32> to memref<4x3xf32, strided<[6, 1]>>
  memref.copy %e, %half : memref<4x3xf32> to memref<4x3xf32, strided<[6, 1]>>
  return
}
