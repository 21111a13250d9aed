// Folds that hold for values that differ per rank: a collective over a group
// of one rank, or of a tensor of no elements, is the identity. Nothing else
// folds.
// RUN: zero-opt %s --split-input-file --canonicalize | FileCheck %s

zero.mesh @single(shape = [1])
zero.mesh @hybrid(shape = [1, 4])

// CHECK-LABEL: func.func @group_of_one
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NOT: zero.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]], %[[X]]
func.func @group_of_one(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = zero.all_reduce %x on @single reduce = sum : tensor<8xf32>
  %1 = zero.all_reduce %x on @hybrid axes = [0] reduce = mean : tensor<8xf32>
  %2 = zero.reduce_scatter %x on @single reduce = sum : tensor<8xf32> -> tensor<8xf32>
  %3 = zero.all_gather %x on @hybrid axes = [0] : tensor<8xf32> -> tensor<8xf32>
  %4 = zero.shard_slice %x on @single : tensor<8xf32> -> tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// Nothing to send: a tensor of no elements, on a group of 4.
zero.mesh @four(shape = [4])
// CHECK-LABEL: func.func @no_elements
// CHECK-SAME: (%[[X:.*]]: tensor<0xf32>, %[[Y:.*]]: tensor<0x3xf32>)
// CHECK-NOT: zero.
// CHECK: return %[[X]], %[[Y]]
func.func @no_elements(%x: tensor<0xf32>, %y: tensor<0x3xf32>) -> (tensor<0xf32>, tensor<0x3xf32>) {
  %0 = zero.all_reduce %x on @four reduce = sum : tensor<0xf32>
  %1 = zero.all_gather %y on @four : tensor<0x3xf32> -> tensor<0x3xf32>
  return %0, %1 : tensor<0xf32>, tensor<0x3xf32>
}

// CHECK-LABEL: func.func @replica_index_of_one
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[I:.*]] = zero.replica_index on @hybrid axes = [1] : index
// CHECK: return %[[C0]], %[[I]]
func.func @replica_index_of_one() -> (index, index) {
  %0 = zero.replica_index on @hybrid axes = [0] : index
  %1 = zero.replica_index on @hybrid axes = [1] : index
  return %0, %1 : index, index
}

// CHECK-LABEL: func.func @await_of_one
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NOT: zero.async
// CHECK: return %[[X]]
func.func @await_of_one(%x: tensor<8xf32>) -> tensor<8xf32> {
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %0 = zero.all_reduce %x on @single reduce = sum : tensor<8xf32>
    zero.yield %0 : tensor<8xf32>
  }
  %v = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %v : tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A group of more than one rank never folds, nor does a gather of a slice:
// the value sliced may differ between ranks.
// CHECK-LABEL: func.func @group_of_four
// CHECK: zero.all_reduce
// CHECK: zero.reduce_scatter
// CHECK: zero.shard_slice
// CHECK: zero.all_gather
// CHECK: zero.async
// CHECK: zero.await
func.func @group_of_four(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<2xf32>, tensor<8xf32>, tensor<8xf32>) {
  %0 = zero.all_reduce %x on @dp reduce = sum : tensor<8xf32>
  %1 = zero.reduce_scatter %x on @dp reduce = sum : tensor<8xf32> -> tensor<2xf32>
  %2 = zero.shard_slice %x on @dp : tensor<8xf32> -> tensor<2xf32>
  %3 = zero.all_gather %2 on @dp : tensor<2xf32> -> tensor<8xf32>
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %4 = zero.all_reduce %x on @dp reduce = max : tensor<8xf32>
    zero.yield %4 : tensor<8xf32>
  }
  %v = zero.await %f reads %x : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %0, %1, %3, %v : tensor<8xf32>, tensor<2xf32>, tensor<8xf32>, tensor<8xf32>
}

// Awaiting a ready future is its value.
// CHECK-LABEL: func.func @await_of_ready
// CHECK-SAME: (%[[X:.*]]: tensor<8xf32>)
// CHECK-NOT: zero.
// CHECK: return %[[X]]
func.func @await_of_ready(%x: tensor<8xf32>) -> tensor<8xf32> {
  %f = zero.ready %x : tensor<8xf32>
  %v = zero.await %f : !zero.future<tensor<8xf32>>
  return %v : tensor<8xf32>
}

// CHECK-LABEL: func.func @unused_collective_is_removed
// CHECK-NOT: zero.
// CHECK: return
func.func @unused_collective_is_removed(%x: tensor<8xf32>) {
  %0 = zero.all_reduce %x on @dp reduce = sum : tensor<8xf32>
  return
}
