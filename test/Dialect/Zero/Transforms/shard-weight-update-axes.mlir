// The mesh and axes options of zero-shard-weight-update.
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=axes=1 --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=mesh=dp 2>&1 | FileCheck %s --check-prefix=MESH

zero.mesh @nodes(shape = [2, 4])

// A gradient averaged over the whole 2x4 mesh, sharded over axis 1 only:
// reduce-scatter over axis 1, the shard all-reduced over axis 0, the weight
// sliced and gathered over axis 1.
// CHECK-LABEL: func.func @hybrid
// CHECK: %[[RS:.*]] = zero.reduce_scatter %{{.*}} on @nodes axes = [1] reduce = mean : tensor<12xf32> -> tensor<3xf32>
// CHECK: %[[G:.*]] = zero.all_reduce %[[RS]] on @nodes axes = [0] reduce = mean : tensor<3xf32>
// CHECK: %[[WS:.*]] = zero.shard_slice %{{.*}} on @nodes axes = [1] : tensor<12xf32> -> tensor<3xf32>
// CHECK: arith.subf %[[WS]], %[[G]] : tensor<3xf32>
// CHECK: zero.all_gather %{{.*}} on @nodes axes = [1] : tensor<3xf32> -> tensor<12xf32>
// With mesh=dp, gradients on @nodes stay replicated.
// MESH: remark: left replicated: it is on mesh @nodes, not @dp
// MESH-LABEL: func.func @hybrid
// MESH: zero.all_reduce %{{.*}} on @nodes reduce = mean : tensor<10xf32>
func.func @hybrid(%w: tensor<10xf32>, %gl: tensor<10xf32>) -> tensor<10xf32> {
  %g = zero.all_reduce %gl on @nodes reduce = mean : tensor<10xf32>
  %w2 = arith.subf %w, %g : tensor<10xf32>
  return %w2 : tensor<10xf32>
}

// -----

zero.mesh @nodes(shape = [2, 4])

// A gradient reduced over axis 0 only has no axis 1 to shard over.
// CHECK-LABEL: func.func @wrong_axis
// CHECK: zero.all_reduce %{{.*}} on @nodes axes = [0] reduce = sum : tensor<10xf32>
// CHECK-NOT: zero.reduce_scatter
func.func @wrong_axis(%w: tensor<10xf32>, %gl: tensor<10xf32>) -> tensor<10xf32> {
  // expected-remark@+1 {{left replicated: its group does not span mesh axis 1 of the axes option}}
  %g = zero.all_reduce %gl on @nodes axes = [0] reduce = sum : tensor<10xf32>
  %w2 = arith.subf %w, %g : tensor<10xf32>
  return %w2 : tensor<10xf32>
}
