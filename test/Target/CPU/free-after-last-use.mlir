// zero-free-after-last-use: the unconditional dealloc of a buffer allocated
// in its block moves to just after the last op of the block that uses the
// buffer or a view of it; it stays where a use may keep the buffer longer.

// RUN: zero-opt %s --split-input-file --allow-unregistered-dialect \
// RUN:   --zero-free-after-last-use | FileCheck %s

// Two temporaries, each read once: each is freed right after its read, so
// the second is allocated after the first is gone. Uses through a view and
// in a nested region count at the op of the block that holds them.
// CHECK-LABEL: func.func @temporaries
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[VIEW:.*]] = memref.expand_shape %[[A]]
// CHECK: memref.copy %[[VIEW]], %{{.*}}
// CHECK-NEXT: %[[TRUE:.*]] = arith.constant true
// CHECK-NEXT: bufferization.dealloc (%[[A]] : memref<8xf32>) if (%[[TRUE]])
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: scf.for
// CHECK: memref.load %[[B]]
// CHECK: }
// CHECK-NEXT: %[[TRUE2:.*]] = arith.constant true
// CHECK-NEXT: bufferization.dealloc (%[[B]] : memref<8xf32>) if (%[[TRUE2]])
// CHECK: "test.rest"
// CHECK-NOT: bufferization.dealloc
// CHECK: return
func.func @temporaries(%out: memref<2x4xf32>, %acc: memref<f32>) {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<8xf32>
  %view = memref.expand_shape %a [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  memref.copy %view, %out : memref<2x4xf32> to memref<2x4xf32>
  %b = memref.alloc() : memref<8xf32>
  scf.for %i = %c0 to %c8 step %c1 {
    %x = memref.load %b[%i] : memref<8xf32>
    memref.store %x, %acc[] : memref<f32>
  }
  "test.rest"() : () -> ()
  bufferization.dealloc (%a : memref<8xf32>) if (%true)
  bufferization.dealloc (%b : memref<8xf32>) if (%true)
  return
}

// -----

// A collective that only starts (its request result) may still use the
// buffer until its wait, which names it: the dealloc follows the wait
// (a gather in flight frees its buffer once its members are copied out).
// CHECK-LABEL: func.func @started_collective
// CHECK: zero.wait
// CHECK-NEXT: arith.constant true
// CHECK-NEXT: bufferization.dealloc
// CHECK-NEXT: "test.rest"
zero.mesh @dp(shape = [2])
func.func @started_collective(%g: memref<8xf32>) {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  %r = zero.all_reduce_buffer %g, %a on @dp reduce = sum : memref<8xf32>, memref<8xf32> -> !zero.request
  zero.wait %r, %g, %a : memref<8xf32>, memref<8xf32>
  "test.rest"() : () -> ()
  bufferization.dealloc (%a : memref<8xf32>) if (%true)
  return
}

// -----

// Negative: the request goes on beyond the block's waits (here to an op
// that might wait for it later): the dealloc stays.
// CHECK-LABEL: func.func @request_passed_on
// CHECK: "test.keep"
// CHECK-NEXT: "test.rest"
// CHECK-NEXT: bufferization.dealloc
zero.mesh @dp(shape = [2])
func.func @request_passed_on(%g: memref<8xf32>) {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  %r = zero.all_reduce_buffer %g, %a on @dp reduce = sum : memref<8xf32>, memref<8xf32> -> !zero.request
  "test.keep"(%r) : (!zero.request) -> ()
  "test.rest"() : () -> ()
  bufferization.dealloc (%a : memref<8xf32>) if (%true)
  return
}

// -----

// A conditional dealloc, one that retains values, and one of a buffer that
// is not allocated in its block stay where ownership put them.
// CHECK-LABEL: func.func @not_moved
// CHECK: "test.rest"
// CHECK-NEXT: bufferization.dealloc (%{{.*}} : memref<8xf32>) if (%{{.*}})
// CHECK-NEXT: bufferization.dealloc (%{{.*}} : memref<8xf32>) if (%{{.*}}) retain
// CHECK-NEXT: bufferization.dealloc (%{{.*}} : memref<8xf32>) if (%{{.*}})
// CHECK-NEXT: return
func.func @not_moved(%arg: memref<8xf32>, %own: i1) -> (memref<8xf32>, i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  memref.copy %a, %arg : memref<8xf32> to memref<8xf32>
  memref.copy %b, %arg : memref<8xf32> to memref<8xf32>
  "test.rest"() : () -> ()
  bufferization.dealloc (%a : memref<8xf32>) if (%own)
  %r = bufferization.dealloc (%b : memref<8xf32>) if (%true) retain (%arg : memref<8xf32>)
  bufferization.dealloc (%arg : memref<8xf32>) if (%true)
  return %arg, %r : memref<8xf32>, i1
}

// -----

// A buffer whose address is taken, or that an op returns (here a call), may
// be read after that op: the dealloc stays.
// CHECK-LABEL: func.func @escapes
// CHECK: "test.rest"
// CHECK-NEXT: bufferization.dealloc
// CHECK-NEXT: bufferization.dealloc
// CHECK-NEXT: return
func.func private @keep(memref<8xf32>) -> memref<8xf32>
func.func @escapes() -> index {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<8xf32> -> index
  %b = memref.alloc() : memref<8xf32>
  %k = func.call @keep(%b) : (memref<8xf32>) -> memref<8xf32>
  "test.rest"() : () -> ()
  bufferization.dealloc (%a : memref<8xf32>) if (%true)
  bufferization.dealloc (%b : memref<8xf32>) if (%true)
  return %p : index
}
