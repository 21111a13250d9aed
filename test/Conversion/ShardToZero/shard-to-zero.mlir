// convert-shard-to-zero: upstream shard-partition's grids, collectives and
// process indices as zero's ops; what zero cannot run fails with an error on
// the op, and nothing changes.

// RUN: zero-opt %s --split-input-file --convert-shard-to-zero --verify-diagnostics | FileCheck %s

// CHECK: zero.mesh @grid(shape = [2, 4])
// CHECK-NOT: shard.
// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.*]]: tensor<8x6xf32>, %[[I:.*]]: tensor<8xi32>)
// CHECK: %[[S:.*]] = zero.all_reduce %[[X]] on @grid axes = [1] reduce = sum : tensor<8x6xf32>
// CHECK: %[[A:.*]] = zero.all_reduce %[[S]] on @grid axes = [0, 1] reduce = mean : tensor<8x6xf32>
// CHECK: %[[M:.*]] = zero.all_reduce %[[I]] on @grid axes = [0] reduce = max : tensor<8xi32>
// CHECK: %[[G:.*]] = zero.all_gather %[[A]] on @grid axes = [1] dim = 1 : tensor<8x6xf32> -> tensor<8x24xf32>
// CHECK: %[[R:.*]] = zero.reduce_scatter %[[G]] on @grid axes = [1] reduce = sum dim = 1 : tensor<8x24xf32> -> tensor<8x6xf32>
// CHECK: %[[SL:.*]] = zero.shard_slice %[[R]] on @grid axes = [0] : tensor<8x6xf32> -> tensor<4x6xf32>
// CHECK: return %[[SL]], %[[X]], %[[M]]
shard.grid @grid(shape = 2x4)
func.func @collectives(%x: tensor<8x6xf32>, %i: tensor<8xi32>) -> (tensor<4x6xf32>, tensor<8x6xf32>, tensor<8xi32>) {
  %s = shard.all_reduce %x on @grid grid_axes = [1] : tensor<8x6xf32> -> tensor<8x6xf32>
  %a = shard.all_reduce %s on @grid grid_axes = [0, 1] reduction = average : tensor<8x6xf32> -> tensor<8x6xf32>
  %m = shard.all_reduce %i on @grid grid_axes = [0] reduction = max : tensor<8xi32> -> tensor<8xi32>
  %g = shard.all_gather %a on @grid grid_axes = [1] gather_axis = 1 : tensor<8x6xf32> -> tensor<8x24xf32>
  %r = shard.reduce_scatter %g on @grid grid_axes = [1] scatter_axis = 1 : tensor<8x24xf32> -> tensor<8x6xf32>
  %sl = shard.all_slice %r on @grid grid_axes = [0] slice_axis = 0 : tensor<8x6xf32> -> tensor<4x6xf32>
  // Over no axes: a group of one, the input itself.
  %none = shard.all_reduce %x on @grid : tensor<8x6xf32> -> tensor<8x6xf32>
  return %sl, %none, %m : tensor<4x6xf32>, tensor<8x6xf32>, tensor<8xi32>
}

// -----

// CHECK-LABEL: func.func @indices
// CHECK: %[[L:.*]] = zero.replica_index on @grid : index
// CHECK: %[[A0:.*]] = zero.replica_index on @grid axes = [0] : index
// CHECK: %[[A1:.*]] = zero.replica_index on @grid axes = [1] : index
// CHECK: %[[B1:.*]] = zero.replica_index on @grid axes = [1] : index
// CHECK-DAG: %[[C2:.*]] = arith.constant 2 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: return %[[L]], %[[A0]], %[[A1]], %[[B1]], %[[C2]], %[[C4]], %[[C4]]
shard.grid @grid(shape = 2x4)
func.func @indices() -> (index, index, index, index, index, index, index) {
  %l = shard.process_linear_index on @grid : index
  %a:2 = shard.process_multi_index on @grid : index, index
  %b = shard.process_multi_index on @grid axes = [1] : index
  %s:2 = shard.grid_shape @grid : index, index
  %t = shard.grid_shape @grid axes = [1] : index
  return %l, %a#0, %a#1, %b, %s#0, %s#1, %t : index, index, index, index, index, index, index
}

// -----

// What zero's runtime does not run: an error on each op, before anything
// changes.
shard.grid @grid(shape = 4)
func.func @unsupported(%x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  // expected-error @+1 {{cannot convert 'shard.all_reduce' to zero: zero reduces by sum, average, max or min, not product}}
  %p = shard.all_reduce %x on @grid grid_axes = [0] reduction = product : tensor<8xf32> -> tensor<8xf32>
  // expected-error @+1 {{cannot convert 'shard.broadcast' to zero: zero's runtime has no such collective; it runs shard.all_reduce, all_gather, reduce_scatter and all_slice}}
  %b = shard.broadcast %x on @grid grid_axes = [0] root = [0] : (tensor<8xf32>) -> tensor<8xf32>
  return %p, %b : tensor<8xf32>, tensor<8xf32>
}

// -----

// expected-error @+1 {{cannot convert 'shard.grid' to zero: its shape is not static; zero's meshes are}}
shard.grid @grid(shape = ?x4)

// -----

// Sharding annotations: the program was not partitioned.
shard.grid @grid(shape = 4)
func.func @annotated(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{cannot convert 'shard.sharding' to zero: it is a sharding annotation: run sharding-propagation and shard-partition first}}
  %s = shard.sharding @grid split_axes = [[0]] : !shard.sharding
  // expected-error @+1 {{cannot convert 'shard.shard' to zero: it is a sharding annotation}}
  %y = shard.shard %x to %s : tensor<8xf32>
  return %y : tensor<8xf32>
}

// -----

// A program without shard ops is left as it is.
// CHECK: zero.mesh @dp(shape = [4])
// CHECK-LABEL: func.func @zero_only
// CHECK-NEXT: zero.all_reduce
zero.mesh @dp(shape = [4])
func.func @zero_only(%x: tensor<8xf32>) -> tensor<8xf32> {
  %y = zero.all_reduce %x on @dp reduce = sum : tensor<8xf32>
  return %y : tensor<8xf32>
}
