// RUN: zero-opt %s --zero-contiguous-collective-buffers --split-input-file --verify-diagnostics | FileCheck %s

// An input that is not contiguous is copied into a dense buffer before the
// collective, an output copied back from one after it; both are freed there.

zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @strided
func.func @strided(%in: memref<4x4xf32, strided<[8, 1]>>,
                   %out: memref<4x4xf32, strided<[8, 1]>>) {
  // CHECK: %[[IN:.*]] = memref.alloc() : memref<4x4xf32>
  // CHECK: memref.copy %arg0, %[[IN]]
  // CHECK: %[[OUT:.*]] = memref.alloc() : memref<4x4xf32>
  // CHECK: zero.all_reduce_buffer %[[IN]], %[[OUT]] on @dp reduce = sum : memref<4x4xf32>, memref<4x4xf32>
  // CHECK-NEXT: memref.copy %[[OUT]], %arg1
  // CHECK-NEXT: memref.dealloc %[[IN]]
  // CHECK-NEXT: memref.dealloc %[[OUT]]
  zero.all_reduce_buffer %in, %out on @dp reduce = sum
      : memref<4x4xf32, strided<[8, 1]>>, memref<4x4xf32, strided<[8, 1]>>
  return
}

// -----

// A loop-carried shard's layout is known only at run time: it is staged too.
// An in-place collective keeps one staged buffer.

zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @dynamic_layout
func.func @dynamic_layout(%shard: memref<46xf32, strided<[?], offset: ?>>,
                          %full: memref<92xf32>) {
  // CHECK: %[[S:.*]] = memref.alloc() : memref<46xf32>
  // CHECK-NEXT: memref.copy %arg0, %[[S]]
  // CHECK-NEXT: zero.all_gather_buffer %[[S]], %arg1 on @dp : memref<46xf32>, memref<92xf32>
  // CHECK-NEXT: memref.dealloc %[[S]]
  zero.all_gather_buffer %shard, %full on @dp
      : memref<46xf32, strided<[?], offset: ?>>, memref<92xf32>
  // CHECK: %[[B:.*]] = memref.alloc() : memref<46xf32>
  // CHECK-NEXT: memref.copy %arg0, %[[B]]
  // CHECK-NEXT: zero.all_reduce_buffer %[[B]], %[[B]] on @dp reduce = sum
  // CHECK-NEXT: memref.copy %[[B]], %arg0
  // CHECK-NEXT: memref.dealloc %[[B]]
  // CHECK-NOT: memref.dealloc
  zero.all_reduce_buffer %shard, %shard on @dp reduce = sum
      : memref<46xf32, strided<[?], offset: ?>>, memref<46xf32, strided<[?], offset: ?>>
  return
}

// -----

// A started collective is done at its zero.wait: the output is copied back
// and the buffers freed after the wait, which names the staged buffers.

zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @started
func.func @started(%g: memref<8xf32>, %big: memref<4x2xf32>) {
  %out = memref.subview %big[0, 0] [4, 1] [1, 1] : memref<4x2xf32> to memref<4xf32, strided<[2]>>
  // CHECK: %[[OUT:.*]] = memref.alloc() : memref<4xf32>
  // CHECK-NEXT: %[[R:.*]] = zero.reduce_scatter_buffer %arg0, %[[OUT]]
  // CHECK: arith.addf
  // CHECK-NEXT: zero.wait %[[R]], %arg0, %[[OUT]] : memref<8xf32>, memref<4xf32>
  // CHECK-NEXT: memref.copy %[[OUT]], %{{.*}} : memref<4xf32> to memref<4xf32, strided<[2]>>
  // CHECK-NEXT: memref.dealloc %[[OUT]]
  %r = zero.reduce_scatter_buffer %g, %out on @dp reduce = sum
      : memref<8xf32>, memref<4xf32, strided<[2]>> -> !zero.request
  %c = arith.constant 1.0 : f32
  %x = arith.addf %c, %c : f32
  zero.wait %r, %g, %out : memref<8xf32>, memref<4xf32, strided<[2]>>
  return
}

// -----

// Contiguous buffers stay as they are.

zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @contiguous
func.func @contiguous(%in: memref<64xf32, strided<[1], offset: 8>>, %out: memref<64xf32>) {
  // CHECK-NOT: memref.alloc
  // CHECK-NOT: memref.copy
  // CHECK: zero.all_reduce_buffer %arg0, %arg1
  zero.all_reduce_buffer %in, %out on @dp reduce = sum
      : memref<64xf32, strided<[1], offset: 8>>, memref<64xf32>
  return
}

// -----

zero.mesh @dp(shape = [2])

// A request that a loop carries is waited for in another iteration: there is
// no place to copy a staged output back.
func.func @carried_strided(%in: memref<4xf32>, %big: memref<8x2xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %out = memref.subview %big[0, 0] [8, 1] [1, 1] : memref<8x2xf32> to memref<8xf32, strided<[2]>>
  %none = zero.completed_request
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%q = %none) -> (!zero.request) {
    zero.wait %q, %in, %out : memref<4xf32>, memref<8xf32, strided<[2]>>
    // expected-error @+1 {{cannot be staged through contiguous buffers: its request is not waited for in its block (a loop carries it)}}
    %q2 = zero.all_gather_buffer %in, %out on @dp : memref<4xf32>, memref<8xf32, strided<[2]>> -> !zero.request
    scf.yield %q2 : !zero.request
  }
  zero.wait %r, %in, %out : memref<4xf32>, memref<8xf32, strided<[2]>>
  return
}

// -----

zero.mesh @dp(shape = [2])

// A buffer without elements is not staged.
// CHECK-LABEL: func.func @no_elements
// CHECK-NOT: memref.alloc
// CHECK: zero.reduce_scatter_buffer %arg0, %arg1
func.func @no_elements(%g: memref<4x0xf32>, %s: memref<2x0xf32>) {
  zero.reduce_scatter_buffer %g, %s on @dp reduce = sum : memref<4x0xf32>, memref<2x0xf32>
  return
}
