// zero-expand-loop-futures: a future that an scf.for carries gets an input
// and a result buffer before the loop; the loop carries the request; each
// await becomes a zero.wait and a read-only view of the result buffer, each
// start a copy into the input buffer and the collective's buffer form.

// RUN: zero-opt %s --split-input-file --zero-expand-loop-futures | FileCheck %s

zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @ready_first
// CHECK-SAME: (%[[W0:[^:]*]]: tensor<16xf32>, %[[S0:[^:]*]]: tensor<4xf32>)
// CHECK: %[[IN:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc() : memref<16xf32>
// CHECK-NEXT: %[[W0B:.*]] = bufferization.to_buffer %[[W0]] read_only
// CHECK-NEXT: memref.copy %[[W0B]], %[[OUT]]
// CHECK-NEXT: %[[NONE:.*]] = zero.completed_request
// CHECK-NEXT: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[S:.*]] = %[[S0]], %[[Q:.*]] = %[[NONE]]) -> (tensor<4xf32>, !zero.request) {
// CHECK-NEXT: zero.wait %[[Q]], %[[IN]], %[[OUT]] : memref<4xf32>, memref<16xf32>
// CHECK-NEXT: %[[W:.*]] = bufferization.to_tensor %[[OUT]] restrict : memref<16xf32> to tensor<16xf32>
// CHECK-NEXT: %[[E:.*]] = tensor.extract_slice %[[W]][0] [4] [1]
// CHECK-NEXT: %[[S2:.*]] = arith.addf %[[S]], %[[E]]
// CHECK-NEXT: %[[S2B:.*]] = bufferization.to_buffer %[[S2]] read_only
// CHECK-NEXT: memref.copy %[[S2B]], %[[IN]]
// CHECK-NEXT: %[[Q2:.*]] = zero.all_gather_buffer %[[IN]], %[[OUT]] on @dp : memref<4xf32>, memref<16xf32> -> !zero.request
// CHECK-NEXT: scf.yield %[[S2]], %[[Q2]] : tensor<4xf32>, !zero.request
// CHECK: zero.wait %[[R]]#1, %[[IN]], %[[OUT]]
// CHECK-NEXT: %[[WL:.*]] = bufferization.to_tensor %[[OUT]] restrict
// CHECK-NEXT: return %[[WL]]
func.func @ready_first(%w0: tensor<16xf32>, %s0: tensor<4xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f0 = zero.ready %w0 : tensor<16xf32>
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%s = %s0, %f = %f0) -> (tensor<4xf32>, !zero.future<tensor<16xf32>>) {
    %w = zero.await %f : !zero.future<tensor<16xf32>>
    %e = tensor.extract_slice %w[0] [4] [1] : tensor<16xf32> to tensor<4xf32>
    %s2 = arith.addf %s, %e : tensor<4xf32>
    %f2 = zero.async : !zero.future<tensor<16xf32>> {
      %g = zero.all_gather %s2 on @dp : tensor<4xf32> -> tensor<16xf32>
      zero.yield %g : tensor<16xf32>
    }
    scf.yield %s2, %f2 : tensor<4xf32>, !zero.future<tensor<16xf32>>
  }
  %wl = zero.await %r#1 : !zero.future<tensor<16xf32>>
  return %wl : tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The first value started before the loop; the body never reads it and no
// one awaits the last: the body waits before starting the next, and the
// last is waited for after the loop all the same (its buffers are freed
// after).
// CHECK-LABEL: func.func @started_first
// CHECK: %[[IN:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: %[[XB:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-NEXT: memref.copy %[[XB]], %[[IN]]
// CHECK-NEXT: %[[Q0:.*]] = zero.all_reduce_buffer %[[IN]], %[[OUT]] on @dp reduce = sum : memref<8xf32>, memref<8xf32> -> !zero.request
// CHECK-NEXT: %[[R:.*]] = scf.for {{.*}} iter_args(%[[Q:.*]] = %[[Q0]]) -> (!zero.request) {
// CHECK-NEXT: zero.wait %[[Q]], %[[IN]], %[[OUT]]
// CHECK-NEXT: %[[XB2:.*]] = bufferization.to_buffer %arg0 read_only
// CHECK-NEXT: memref.copy %[[XB2]], %[[IN]]
// CHECK-NEXT: zero.all_reduce_buffer %[[IN]], %[[OUT]]
// CHECK: zero.wait %[[R]], %[[IN]], %[[OUT]]
// CHECK-NEXT: return
func.func @started_first(%x: tensor<8xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %f0 = zero.async : !zero.future<tensor<8xf32>> {
    %a = zero.all_reduce %x on @dp reduce = sum : tensor<8xf32>
    zero.yield %a : tensor<8xf32>
  }
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%f = %f0) -> (!zero.future<tensor<8xf32>>) {
    %f2 = zero.async : !zero.future<tensor<8xf32>> {
      %a = zero.all_reduce %x on @dp reduce = sum : tensor<8xf32>
      zero.yield %a : tensor<8xf32>
    }
    scf.yield %f2 : !zero.future<tensor<8xf32>>
  }
  return
}

// -----

// Awaiting a ready future outside a loop is its value.
// CHECK-LABEL: func.func @ready_outside
// CHECK-NEXT: return %arg0
func.func @ready_outside(%x: tensor<8xf32>) -> tensor<8xf32> {
  %f = zero.ready %x : tensor<8xf32>
  %v = zero.await %f : !zero.future<tensor<8xf32>>
  return %v : tensor<8xf32>
}

