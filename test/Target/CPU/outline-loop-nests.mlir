// zero-outline-loop-nests: each loop nest that calls nothing but the
// runtime's checks moves, whole, into a private noinline function called
// where it was; the values it uses become arguments, its constants are
// copied in, its results are the function's. Loops that call more stay, and
// the nests inside them move.

// RUN: zero-opt %s --split-input-file --allow-unregistered-dialect \
// RUN:   --zero-outline-loop-nests --verify-diagnostics | FileCheck %s

// Two nests of a step: each becomes a function of its own, in the order of
// the step, its arguments in the order of first use. The bounds stay constants in the function; the 2-D nest moves
// whole, its inner loop with it. A nest's result (an iteration argument) is
// the call's.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[W:.*]]: memref<4x8xf32>, %[[G:.*]]: memref<4x8xf32>, %[[S:.*]]: f32)
// CHECK-NOT: scf.for
// CHECK: call @step_nest0(%[[G]], %[[S]], %[[W]]) : (memref<4x8xf32>, f32, memref<4x8xf32>) -> ()
// CHECK-NEXT: %[[SUM:.*]] = call @step_nest1(%[[W]]) : (memref<4x8xf32>) -> f32
// CHECK-NEXT: return %[[SUM]] : f32
// CHECK: func.func private @step_nest0(%[[G0:.*]]: memref<4x8xf32>, %[[S0:.*]]: f32, %[[W0:.*]]: memref<4x8xf32>)
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C8:.*]] = arith.constant 8 : index
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C4]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %[[C8]]
// CHECK: memref.load %[[G0]]
// CHECK: arith.mulf %{{.*}}, %[[S0]]
// CHECK: memref.store %{{.*}}, %[[W0]]
// CHECK: return
// CHECK: func.func private @step_nest1(%{{.*}}: memref<4x8xf32>) -> f32
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args
// CHECK: return %[[R]] : f32
func.func @step(%w: memref<4x8xf32>, %g: memref<4x8xf32>, %s: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %c4 step %c1 {
    scf.for %j = %c0 to %c8 step %c1 {
      %x = memref.load %g[%i, %j] : memref<4x8xf32>
      %y = arith.mulf %x, %s : f32
      memref.store %y, %w[%i, %j] : memref<4x8xf32>
    }
  }
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %zero) -> f32 {
    %x = memref.load %w[%i, %c0] : memref<4x8xf32>
    %a = arith.addf %acc, %x : f32
    scf.yield %a : f32
  }
  return %sum : f32
}

// -----

// A training loop that makes a collective's runtime call stays, and the
// nest inside it moves; a nest that calls only the runtime's checks moves
// with its checks. Parallel loops and while loops are nests too.
// CHECK-LABEL: func.func @train
// CHECK: scf.for
// CHECK: call @train_nest0
// CHECK: call @zero_rt_all_reduce
// CHECK: }
// CHECK: call @train_nest1
// CHECK: call @train_nest2
// CHECK: return
// CHECK: func.func private @train_nest0
// CHECK: scf.parallel
// CHECK: func.func private @train_nest1
// CHECK: scf.for
// CHECK: call @zero_rt_check
// CHECK: func.func private @train_nest2
// CHECK: scf.while
func.func private @zero_rt_all_reduce(!llvm.ptr, i64)
func.func private @zero_rt_check(i32, !llvm.ptr)
func.func @train(%w: memref<16xf32>, %p: !llvm.ptr, %n: i64, %ok: i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c16 = arith.constant 16 : index
  scf.for %step = %c0 to %c3 step %c1 {
    scf.parallel (%i) = (%c0) to (%c16) step (%c1) {
      %x = memref.load %w[%i] : memref<16xf32>
      %y = arith.addf %x, %x : f32
      memref.store %y, %w[%i] : memref<16xf32>
    }
    func.call @zero_rt_all_reduce(%p, %n) : (!llvm.ptr, i64) -> ()
  }
  scf.for %i = %c0 to %c16 step %c1 {
    func.call @zero_rt_check(%ok, %p) : (i32, !llvm.ptr) -> ()
    %x = memref.load %w[%i] : memref<16xf32>
    memref.store %x, %w[%i] : memref<16xf32>
  }
  %r = scf.while (%i = %c0) : (index) -> index {
    %more = arith.cmpi slt, %i, %c16 : index
    scf.condition(%more) %i : index
  } do {
  ^bb0(%i: index):
    %next = arith.addi %i, %c1 : index
    scf.yield %next : index
  }
  return
}

// -----

// Functions the pass made are left as they are: running it again changes
// nothing.
// CHECK-LABEL: func.func @again
// CHECK-NEXT: call @again_nest0
// CHECK: func.func private @again_nest0
// CHECK-NEXT: arith.constant
// CHECK: scf.for
// CHECK-NOT: call
// CHECK: return
// CHECK-NOT: @again_nest0_nest0
func.func @again(%w: memref<16xf32>) {
  call @again_nest0(%w) : (memref<16xf32>) -> ()
  return
}
func.func private @again_nest0(%w: memref<16xf32>) attributes {passthrough = ["noinline"]} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  scf.for %i = %c0 to %c16 step %c1 {
    %x = memref.load %w[%i] : memref<16xf32>
    memref.store %x, %w[%i] : memref<16xf32>
  }
  return
}

// -----

// A nest that uses a value no signature lowers (here a tensor) stays, with
// a remark; a loop that calls a function that is not the runtime's check
// stays, and so does everything in it that calls it.
// CHECK-LABEL: func.func @unfit
// CHECK: scf.for
// CHECK: tensor.extract
// CHECK: scf.for
// CHECK: call @helper
// CHECK-NOT: call @unfit_nest
// CHECK: return
func.func private @helper(f32)
func.func @unfit(%t: tensor<16xf32>, %w: memref<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c16 = arith.constant 16 : index
  // expected-remark @below {{zero-outline-loop-nests: left in @unfit: it uses a value of type 'tensor<16xf32>', which no function signature lowers to LLVM}}
  scf.for %i = %c0 to %c16 step %c1 {
    %x = tensor.extract %t[%i] : tensor<16xf32>
    memref.store %x, %w[%i] : memref<16xf32>
  }
  scf.for %i = %c0 to %c16 step %c1 {
    scf.for %j = %c0 to %c16 step %c1 {
      %x = memref.load %w[%j] : memref<16xf32>
      func.call @helper(%x) : (f32) -> ()
    }
  }
  return
}
