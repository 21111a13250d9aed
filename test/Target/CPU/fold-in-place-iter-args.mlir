// zero-fold-in-place-iter-args: once bufferized, the iteration arguments a
// loop yields unchanged (carried in place) go, and zero.host_iter_args
// follows the arguments that remain.
// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-fold-in-place-iter-args))' | FileCheck %s

// The momentum (position 0) is carried in place in its host argument's
// buffer, and a device value (position 1) in its own: both go. The buffer
// in host memory that the body makes anew each step (position 2) is at
// position 0 afterwards; the value that carries the last step's (position
// 3), on the device, at position 1.
// CHECK-LABEL: func.func @host_marks_follow
// CHECK-SAME: (%[[M:[^:]+]]: memref<8xf32> {zero.memory = "host"}, %[[W:[^:]+]]: memref<8xf32>, %[[B:[^:]+]]: memref<8xf32>)
// CHECK: %[[R:.*]]:2 = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[X:.*]] = %[[B]], %[[Y:.*]] = %[[B]]) -> (memref<8xf32>, memref<8xf32>) {
// CHECK: memref.copy %[[M]], %[[W]]
// CHECK: memref.copy %[[X]], %[[M]]
// CHECK: scf.yield %{{.*}}, %[[X]] : memref<8xf32>, memref<8xf32>
// CHECK: } {zero.host_iter_args = array<i64: 0>}
// CHECK: return %[[M]], %[[W]], %[[R]]#0, %[[R]]#1
func.func @host_marks_follow(%m: memref<8xf32> {zero.memory = "host"}, %w: memref<8xf32>,
                             %b: memref<8xf32>)
    -> (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r:4 = scf.for %i = %c0 to %c3 step %c1 iter_args(%lm = %m, %lw = %w, %lb = %b, %lc = %b)
      -> (memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) {
    memref.copy %lm, %lw : memref<8xf32> to memref<8xf32>
    memref.copy %lb, %lm : memref<8xf32> to memref<8xf32>
    %new = memref.alloc() : memref<8xf32>
    scf.yield %lm, %lw, %new, %lb : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>
  } {zero.host_iter_args = array<i64: 0, 2>}
  return %r#0, %r#1, %r#2, %r#3 : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>
}

// -----

// Nothing carried in place: the loop is left as it is.
// CHECK-LABEL: func.func @nothing_in_place
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (memref<8xf32>) {
// CHECK: } {zero.host_iter_args = array<i64: 0>}
func.func @nothing_in_place(%b: memref<8xf32>) -> memref<8xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%lb = %b) -> (memref<8xf32>) {
    %new = memref.alloc() : memref<8xf32>
    memref.copy %lb, %new : memref<8xf32> to memref<8xf32>
    scf.yield %new : memref<8xf32>
  } {zero.host_iter_args = array<i64: 0>}
  return %r : memref<8xf32>
}

// -----

// A value copied into its iteration argument through a reshaped view
// yields the view reshaped back: the same buffer, carried in place.
// CHECK-LABEL: func.func @reshaped_back
// CHECK-SAME: (%[[W:[^:]+]]: memref<2x4xf32> {zero.memory = "host"}, %[[G:[^:]+]]: memref<8xf32>)
// CHECK: scf.for
// CHECK-NOT: iter_args
// CHECK: %[[FLAT:.*]] = memref.collapse_shape %[[W]]
// CHECK: memref.copy %[[G]], %[[FLAT]]
// CHECK-NOT: zero.host_iter_args
// CHECK: return %[[W]]
func.func @reshaped_back(%w: memref<2x4xf32> {zero.memory = "host"}, %g: memref<8xf32>) -> memref<2x4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%lw = %w) -> (memref<2x4xf32>) {
    %flat = memref.collapse_shape %lw [[0, 1]] : memref<2x4xf32> into memref<8xf32>
    memref.copy %g, %flat : memref<8xf32> to memref<8xf32>
    %back = memref.expand_shape %flat [[0, 1]] output_shape [2, 4] : memref<8xf32> into memref<2x4xf32>
    scf.yield %back : memref<2x4xf32>
  } {zero.host_iter_args = array<i64: 0>}
  return %r : memref<2x4xf32>
}
