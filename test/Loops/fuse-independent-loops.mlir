// zero-fuse-independent-loops: consecutive parallel loops that touch disjoint
// buffers become one 1-D loop (one kernel on the GPU) that picks its member
// by a tree of scf.if on the linear index; loops that share a buffer, and
// loops separated by a collective, a call or an op that touches their
// buffers, stay apart.

// RUN: zero-opt %s --split-input-file --zero-fuse-independent-loops --canonicalize | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-fuse-independent-loops='max-buffers=3' | FileCheck %s --check-prefix=LIMIT

// A bucket's two updates (shapes 23 and 2x3): one loop of 29 iterations; the
// second member's 2-D indices are delinearized row-major. The allocations
// between them do not stop the merge.
// CHECK-LABEL: func.func @two_updates
// CHECK-SAME: (%[[W:[^:]*]]: memref<23xf32>, %[[B:[^:]*]]: memref<2x3xf32>)
// CHECK-DAG: %[[C23:.*]] = arith.constant 23 : index
// CHECK-DAG: %[[C29:.*]] = arith.constant 29 : index
// CHECK: %[[OW:.*]] = memref.alloc() : memref<23xf32>
// CHECK: %[[OB:.*]] = memref.alloc() : memref<2x3xf32>
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%[[C29]])
// CHECK:   %[[FIRST:.*]] = arith.cmpi ult, %[[I]], %[[C23]]
// CHECK:   scf.if %[[FIRST]] {
// CHECK:     memref.load %[[W]][%[[I]]]
// CHECK:     memref.store %{{.*}}, %[[OW]][%[[I]]]
// CHECK:   } else {
// CHECK:     %[[J:.*]] = arith.subi %[[I]], %[[C23]] : index
// CHECK:     %[[COL:.*]] = arith.remui %[[J]], %{{.*}} : index
// CHECK:     %[[ROW:.*]] = arith.divui %[[J]], %{{.*}} : index
// CHECK:     memref.load %[[B]][%[[ROW]], %[[COL]]]
// CHECK:     memref.store %{{.*}}, %[[OB]][%[[ROW]], %[[COL]]]
// CHECK:   }
// CHECK-NOT: scf.parallel
// CHECK: return %[[OW]], %[[OB]]
func.func @two_updates(%w: memref<23xf32>, %b: memref<2x3xf32>)
    -> (memref<23xf32>, memref<2x3xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c23 = arith.constant 23 : index
  %s = arith.constant 0.5 : f32
  %ow = memref.alloc() : memref<23xf32>
  scf.parallel (%i) = (%c0) to (%c23) step (%c1) {
    %x = memref.load %w[%i] : memref<23xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %ow[%i] : memref<23xf32>
    scf.reduce
  }
  %ob = memref.alloc() : memref<2x3xf32>
  scf.parallel (%i, %j) = (%c0, %c0) to (%c2, %c3) step (%c1, %c1) {
    %x = memref.load %b[%i, %j] : memref<2x3xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %ob[%i, %j] : memref<2x3xf32>
    scf.reduce
  }
  return %ow, %ob : memref<23xf32>, memref<2x3xf32>
}

// -----

// Three members: a balanced tree (the first test splits off the first
// member, the second the next). Lower bounds and steps other than 0 and 1
// map back: the third member runs i = 4, 6, 8.
// CHECK-LABEL: func.func @three
// CHECK: scf.parallel (%[[I:.*]]) = (%{{.*}}) to (%c15)
// CHECK:   arith.cmpi ult, %[[I]], %c4
// CHECK:   scf.if
// CHECK:     memref.store {{.*}} %arg0
// CHECK:   } else {
// CHECK:     arith.cmpi ult, %[[I]], %c12
// CHECK:     scf.if
// CHECK:       memref.store {{.*}} %arg1
// CHECK:     } else {
// CHECK:       %[[K:.*]] = arith.subi %[[I]], %c12
// CHECK:       %[[S:.*]] = arith.muli %[[K]], %c2
// CHECK:       %[[X:.*]] = arith.addi %[[S]], %c4
// CHECK:       memref.store {{.*}} %arg2[%[[X]]]
// CHECK-NOT: scf.parallel
func.func @three(%a: memref<4xf32>, %b: memref<8xf32>, %c: memref<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %c9 = arith.constant 9 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %z, %a[%i] : memref<4xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %b[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c4) to (%c9) step (%c2) {
    memref.store %z, %c[%i] : memref<10xf32>
    scf.reduce
  }
  return
}

// -----

// Inside a training loop the carried buffers are block arguments; a loop
// writing a fresh allocation is still independent of one reading them.
// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK-COUNT-1: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: scf.yield
func.func @in_loop(%w0: memref<8xf32>, %v0: memref<4xf32>, %n: index)
    -> (memref<8xf32>, memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %r:2 = scf.for %k = %c0 to %n step %c1 iter_args(%w = %w0, %v = %v0)
      -> (memref<8xf32>, memref<4xf32>) {
    %w2 = memref.alloc() : memref<8xf32>
    scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
      %x = memref.load %w[%i] : memref<8xf32>
      memref.store %x, %w2[%i] : memref<8xf32>
      scf.reduce
    }
    %v2 = memref.alloc() : memref<4xf32>
    scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
      %x = memref.load %v[%i] : memref<4xf32>
      memref.store %x, %v2[%i] : memref<4xf32>
      scf.reduce
    }
    scf.yield %w2, %v2 : memref<8xf32>, memref<4xf32>
  }
  return %r#0, %r#1 : memref<8xf32>, memref<4xf32>
}

// -----

// Not merged: a training loop between them reads the first loop's buffer
// through its iteration argument (initially a view of that allocation), so
// the first loop cannot move past it. (A block argument defined after an
// allocation may be a view of it; one defined before, as in @in_loop, not.)
// CHECK-LABEL: func.func @carried_allocation
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.parallel
func.func @carried_allocation(%src: memref<8xf32>, %n: index) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %a = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %src[%i] : memref<8xf32>
    memref.store %x, %a[%i] : memref<8xf32>
    scf.reduce
  }
  %r = scf.for %k = %c0 to %n step %c1 iter_args(%w = %a) -> (memref<8xf32>) {
    %s = memref.load %w[%c0] : memref<8xf32>
    memref.store %s, %w[%c1] : memref<8xf32>
    scf.yield %w : memref<8xf32>
  }
  %b = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %r[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
    scf.reduce
  }
  return %b : memref<8xf32>
}

// -----

// Not merged: the second loop reads what the first writes (through a view).
// CHECK-LABEL: func.func @dependent
// CHECK-COUNT-2: scf.parallel
func.func @dependent(%a: memref<8xf32>, %out: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %t = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %t[%i] : memref<8xf32>
    scf.reduce
  }
  %view = memref.subview %t[4] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 4>>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %x = memref.load %view[%i] : memref<4xf32, strided<[1], offset: 4>>
    memref.store %x, %out[%i] : memref<4xf32>
    scf.reduce
  }
  memref.dealloc %t : memref<8xf32>
  return
}

// -----

// Not merged: both write one buffer (the second overwrites part of what the
// first wrote, so their order matters).
// CHECK-LABEL: func.func @write_write
// CHECK-COUNT-2: scf.parallel
func.func @write_write(%a: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %o = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %a[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %o, %a[%i] : memref<8xf32>
    scf.reduce
  }
  return
}

// -----

// Not merged: a collective between them (it would move the first loop past
// the collective), and an op between them that reads the first loop's
// output.
// CHECK-LABEL: func.func @barriers
// CHECK-COUNT-3: scf.parallel
// CHECK-NOT: scf.parallel
// CHECK: return
zero.mesh @dp(shape = [2])
func.func @barriers(%a: memref<8xf32>, %b: memref<8xf32>, %g: memref<8xf32>,
                    %r: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %a[%i] : memref<8xf32>
    scf.reduce
  }
  zero.all_reduce_buffer %g, %r on @dp reduce = sum : memref<8xf32>, memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %b[%i] : memref<8xf32>
    scf.reduce
  }
  %x = memref.load %b[%c0] : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %x, %a[%i] : memref<8xf32>
    scf.reduce
  }
  return %x : f32
}

// -----

// A loop that reads what a gather brought (a bucket member's copy out of
// the gathered weights) and one that does not (the forward pass's first
// loop) stay apart: merged, the second would wait for the gather, which
// waits for the update (on the host's queue when it is offloaded). A loop
// whose output only such loops read (a sum's zero) counts as one of them
// and merges with them.
// CHECK-LABEL: func.func @waits_for_gather
// CHECK-SAME: (%[[SHARD:[^:]*]]: memref<4xf32>, %[[X:[^:]*]]: memref<8xf32>)
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK-DAG: %[[C12:.*]] = arith.constant 12 : index
// CHECK: zero.all_gather_buffer %[[SHARD]], %[[ALL:[^ ]*]]
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C12]])
// CHECK:   memref.load %[[ALL]]
// CHECK:   memref.store %cst, %{{.*}}
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C8]])
// CHECK:   memref.load %[[X]]
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C4]])
// CHECK:   memref.load %[[ALL]]
// CHECK-NOT: scf.parallel
// CHECK: return
zero.mesh @dp(shape = [2])
func.func @waits_for_gather(%shard: memref<4xf32>, %x: memref<8xf32>)
    -> (memref<8xf32>, memref<4xf32>, memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  %all = memref.alloc() : memref<8xf32>
  zero.all_gather_buffer %shard, %all on @dp : memref<4xf32>, memref<8xf32>
  %member = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %all[%i] : memref<8xf32>
    memref.store %v, %member[%i] : memref<8xf32>
    scf.reduce
  }
  %sum = memref.alloc() : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %z, %sum[%i] : memref<4xf32>
    scf.reduce
  }
  %forward = memref.alloc() : memref<8xf32>
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %v = memref.load %x[%i] : memref<8xf32>
    memref.store %v, %forward[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    %v = memref.load %all[%i] : memref<8xf32>
    %s = memref.load %sum[%i] : memref<4xf32>
    %t = arith.addf %v, %s : f32
    memref.store %t, %sum[%i] : memref<4xf32>
    scf.reduce
  }
  return %member, %sum, %forward : memref<8xf32>, memref<4xf32>, memref<8xf32>
}

// -----

// Not merged: a loop with a reduction (a result) stays apart.
// CHECK-LABEL: func.func @reduction
// CHECK-COUNT-2: scf.parallel
func.func @reduction(%a: memref<8xf32>, %b: memref<8xf32>) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %z = arith.constant 0.0 : f32
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    memref.store %z, %a[%i] : memref<8xf32>
    scf.reduce
  }
  %s = scf.parallel (%i) = (%c0) to (%c8) step (%c1) init (%z) -> f32 {
    %x = memref.load %b[%i] : memref<8xf32>
    scf.reduce(%x : f32) {
    ^bb0(%l: f32, %r: f32):
      %sum = arith.addf %l, %r : f32
      scf.reduce.return %sum : f32
    }
  }
  return %s : f32
}

// -----

// max-buffers: a merged loop (a kernel) takes at most this many buffers from
// outside; with 3, the first two loops (a, b, c) merge and the third (d, e)
// starts a new run.
// LIMIT-LABEL: func.func @limit
// LIMIT-COUNT-2: scf.parallel
// LIMIT-NOT: scf.parallel
func.func @limit(%a: memref<8xf32>, %b: memref<8xf32>, %c: memref<8xf32>,
                 %d: memref<8xf32>, %e: memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %b[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %c[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %d[%i] : memref<8xf32>
    scf.reduce
  }
  scf.parallel (%i) = (%c0) to (%c8) step (%c1) {
    %x = memref.load %a[%i] : memref<8xf32>
    memref.store %x, %e[%i] : memref<8xf32>
    scf.reduce
  }
  return
}
