// zero-split-deallocs: a bufferization.dealloc listing buffers of known
// provenance becomes one dealloc per fresh allocation (none for one that a
// retained value keeps), plus one for the older buffers retaining only what
// they can alias; a dealloc with an operand of unknown provenance is left
// alone.

// RUN: zero-opt %s --split-input-file --zero-split-deallocs | FileCheck %s

// Two fresh allocations and an argument's buffer. The view of %a is
// returned: %a is not freed and the view's ownership is %a's condition;
// %b is freed alone; the argument stays in a dealloc retaining only the
// argument.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[ARG:.*]]: memref<8xf32>, %[[OWN:.*]]: i1)
// CHECK-DAG: %[[TRUE:.*]] = arith.constant true
// CHECK-DAG: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK-DAG: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[BASE_B:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[B]]
// CHECK: %[[BASE_ARG:.*]], %{{.*}}, %{{.*}}, %{{.*}} = memref.extract_strided_metadata %[[ARG]]
// CHECK-NOT: bufferization.dealloc (%{{.*}}, %{{.*}}
// CHECK: bufferization.dealloc (%[[BASE_B]] : memref<f32>) if (%[[TRUE]])
// CHECK-NEXT: %[[OLD:.*]] = bufferization.dealloc (%[[BASE_ARG]] : memref<f32>) if (%[[OWN]]) retain (%[[ARG]] : memref<8xf32>)
// CHECK-NEXT: return %{{.*}}, %[[ARG]], %[[TRUE]], %[[OLD]]
func.func @step(%arg: memref<8xf32>, %own: i1) -> (memref<2x4xf32>, memref<8xf32>, i1, i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %view = memref.expand_shape %a [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
  %base_a, %o0, %s0, %t0 = memref.extract_strided_metadata %a : memref<8xf32> -> memref<f32>, index, index, index
  %base_b, %o1, %s1, %t1 = memref.extract_strided_metadata %b : memref<8xf32> -> memref<f32>, index, index, index
  %base_arg, %o2, %s2, %t2 = memref.extract_strided_metadata %arg : memref<8xf32> -> memref<f32>, index, index, index
  %r:2 = bufferization.dealloc (%base_a, %base_b, %base_arg : memref<f32>, memref<f32>, memref<f32>) if (%true, %true, %own) retain (%view, %arg : memref<2x4xf32>, memref<8xf32>)
  return %view, %arg, %r#0, %r#1 : memref<2x4xf32>, memref<8xf32>, i1, i1
}

// -----

// Two views of one allocation with their own conditions: freed once, if
// either owns it. A retained value of no listed allocation is not owned.
// CHECK-LABEL: func.func @two_views
// CHECK-SAME: (%[[C0:.*]]: i1, %[[C1:.*]]: i1)
// CHECK: %[[EITHER:.*]] = arith.ori %[[C0]], %[[C1]] : i1
// CHECK: bufferization.dealloc (%{{.*}} : memref<8xf32>) if (%[[EITHER]])
// CHECK-NOT: bufferization.dealloc
// CHECK: %[[FALSE:.*]] = arith.constant false
// CHECK: return %[[FALSE]]
func.func @two_views(%c0: i1, %c1: i1) -> i1 {
  %a = memref.alloc() : memref<8xf32>
  %other = memref.alloc() : memref<4xf32>
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  %r = bufferization.dealloc (%a, %v : memref<8xf32>, memref<4xf32, strided<[1]>>) if (%c0, %c1) retain (%other : memref<4xf32>)
  return %r : i1
}

// -----

// In a loop's body the carried buffer is older than the body's allocations:
// the temporary is freed alone, the new carried buffer passes its ownership
// to the next iteration, and the old one is freed without retained values
// (nothing fresh can be a view of it).
// CHECK-LABEL: func.func @loop_body
// CHECK: scf.for %{{.*}} iter_args(%[[CARRIED:.*]] = %{{.*}}, %[[OWNED:.*]] = %{{.*}})
// CHECK: %[[TRUE:.*]] = arith.constant true
// CHECK: %[[TMP:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[NEXT:.*]] = memref.alloc() : memref<8xf32>
// CHECK: bufferization.dealloc (%[[TMP]] : memref<8xf32>) if (%[[TRUE]])
// CHECK-NEXT: bufferization.dealloc (%[[CARRIED]] : memref<8xf32>) if (%[[OWNED]])
// CHECK-NEXT: scf.yield %[[NEXT]], %[[TRUE]]
func.func @loop_body(%init: memref<8xf32>, %n: index) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %false = arith.constant false
  %out:2 = scf.for %i = %c0 to %n step %c1 iter_args(%carried = %init, %owned = %false) -> (memref<8xf32>, i1) {
    %true = arith.constant true
    %tmp = memref.alloc() : memref<8xf32>
    %next = memref.alloc() : memref<8xf32>
    memref.copy %carried, %next : memref<8xf32> to memref<8xf32>
    %r = bufferization.dealloc (%tmp, %next, %carried : memref<8xf32>, memref<8xf32>, memref<8xf32>) if (%true, %true, %owned) retain (%next : memref<8xf32>)
    scf.yield %next, %r : memref<8xf32>, i1
  }
  return %out#0 : memref<8xf32>
}

// -----

// An scf.if that yields an outer buffer or memory it allocates (ownership's
// "the buffer if owned, else a clone") holds only those: its result goes
// with that buffer's allocation, in a dealloc of their own (the result may
// be the same buffer or another), and a fresh buffer beside them is freed
// on its own.
// CHECK-LABEL: func.func @owned_or_clone
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[B:.*]] = scf.if
// CHECK: bufferization.dealloc (%[[A]], %[[B]] : memref<8xf32>, memref<8xf32>) if (%{{.*}}, %{{.*}}){{$}}
// CHECK-NEXT: bufferization.dealloc (%[[T]] : memref<8xf32>) if (%{{.*}}){{$}}
// CHECK-NEXT: return
func.func @owned_or_clone(%c: i1) {
  %true = arith.constant true
  %a = memref.alloc() : memref<8xf32>
  %t = memref.alloc() : memref<8xf32>
  %b = scf.if %c -> memref<8xf32> {
    scf.yield %a : memref<8xf32>
  } else {
    %n = bufferization.clone %a : memref<8xf32> to memref<8xf32>
    scf.yield %n : memref<8xf32>
  }
  bufferization.dealloc (%a, %t, %b : memref<8xf32>, memref<8xf32>, memref<8xf32>) if (%true, %true, %c)
  return
}

// -----

// A loop whose body yields its iteration argument, or memory it allocates,
// returns only its init's buffer or that memory: the result goes with the
// init's allocation, retaining the result, and the ownership of the result
// comes from that dealloc. A buffer that only a linalg op and loads touch is
// fresh and alone.
// CHECK-LABEL: func.func @loop_of_inits
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[L:.*]]:2 = scf.for
// CHECK: %[[R:.*]] = bufferization.dealloc (%[[A]], %[[L]]#0 : memref<8xf32>, memref<8xf32>) if (%{{.*}}, %{{.*}}) retain (%[[L]]#0 : memref<8xf32>)
// CHECK-NEXT: bufferization.dealloc (%[[T]] : memref<8xf32>) if (%{{.*}}){{$}}
// CHECK-NEXT: return %[[R]]
func.func @loop_of_inits(%n: index, %f: f32) -> i1 {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  %t = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%t : memref<8xf32>)
  %l:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %a) -> (memref<8xf32>, memref<8xf32>) {
    %v = memref.load %t[%c0] : memref<8xf32>
    memref.store %v, %x[%c0] : memref<8xf32>
    %new = memref.alloc() : memref<8xf32>
    scf.yield %x, %new : memref<8xf32>, memref<8xf32>
  }
  %r = bufferization.dealloc (%a, %t, %l#0 : memref<8xf32>, memref<8xf32>, memref<8xf32>) if (%true, %true, %true) retain (%l#0 : memref<8xf32>)
  return %r : i1
}

// -----

// A loop whose body yields one iteration argument at another's position
// may return any of its inits: its result's provenance is unknown, and the
// allocations that go into it stay in one dealloc with it; one that does
// not is freed on its own.
// CHECK-LABEL: func.func @loop_swaps
// CHECK: %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[B:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[T:.*]] = memref.alloc() : memref<8xf32>
// CHECK: %[[L:.*]]:2 = scf.for
// CHECK: bufferization.dealloc (%[[T]] : memref<8xf32>) if (%{{.*}}){{$}}
// CHECK-NEXT: bufferization.dealloc (%[[L]]#0, %[[A]], %[[B]] : memref<8xf32>, memref<8xf32>, memref<8xf32>) if (%{{.*}}, %{{.*}}, %{{.*}}){{$}}
func.func @loop_swaps(%n: index) {
  %true = arith.constant true
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<8xf32>
  %b = memref.alloc() : memref<8xf32>
  %t = memref.alloc() : memref<8xf32>
  %l:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %b) -> (memref<8xf32>, memref<8xf32>) {
    scf.yield %y, %x : memref<8xf32>, memref<8xf32>
  }
  bufferization.dealloc (%a, %b, %t, %l#0 : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) if (%true, %true, %true, %true)
  return
}

// -----

// Only arguments' buffers: nothing to decide here.
// CHECK-LABEL: func.func @only_older
// CHECK: %[[R:.*]] = bufferization.dealloc (%{{.*}} : memref<8xf32>) if (%{{.*}}) retain (%{{.*}} : memref<8xf32>)
// CHECK: return %[[R]]
func.func @only_older(%arg: memref<8xf32>, %other: memref<8xf32>, %c: i1) -> i1 {
  %r = bufferization.dealloc (%arg : memref<8xf32>) if (%c) retain (%other : memref<8xf32>)
  return %r : i1
}
