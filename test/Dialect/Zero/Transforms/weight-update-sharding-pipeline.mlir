// RUN: zero-opt %s --zero-weight-update-sharding | FileCheck %s
// RUN: zero-opt %s --zero-weight-update-sharding='bucket-bytes=0' | FileCheck %s --check-prefix=UNBUCKETED
// RUN: zero-opt %s --zero-weight-update-sharding='min-bytes=64' | FileCheck %s --check-prefix=LARGE-ONLY
// RUN: zero-opt %s --zero-weight-update-sharding='stage=1 bucket-bytes=0' | FileCheck %s --check-prefix=STAGE1
// RUN: zero-opt %s --zero-weight-update-sharding='shard-function-boundary bucket-bytes=0' | FileCheck %s --check-prefix=BOUNDARY

// SGD on two parameters, 4 ranks: the registered pipeline shards both
// updates, then buckets the two reduce-scatters and the two all-gathers.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @step
// CHECK-NOT: zero.all_reduce
// CHECK: zero.reduce_scatter {{.*}}zero.bucket = {id = 0 : i64, offsets = array<i64: 0, 25>, sizes = array<i64: 25, 2>{{.*}} : tensor<108xf32> -> tensor<27xf32>
// CHECK-NOT: zero.reduce_scatter
// CHECK: zero.all_gather {{.*}}zero.bucket = {id = 1 : i64{{.*}} : tensor<27xf32> -> tensor<108xf32>
// CHECK-NOT: zero.all_gather
// UNBUCKETED-COUNT-2: zero.reduce_scatter
// UNBUCKETED-NOT: zero.bucket
// The 5-element bias (20 bytes) stays replicated under min-bytes=64.
// LARGE-ONLY: zero.reduce_scatter {{.*}} : tensor<100xf32> -> tensor<25xf32>
// LARGE-ONLY: zero.all_reduce {{.*}} : tensor<5xf32>
// STAGE1-COUNT-2: zero.all_reduce
// STAGE1-NOT: zero.reduce_scatter
// BOUNDARY: func.func @step(%{{.*}}: tensor<25xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10x10xf32>>}, %{{.*}}: tensor<2xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<5xf32>>}
func.func @step(%w: tensor<10x10xf32>, %b: tensor<5xf32>,
                %gw_local: tensor<10x10xf32>, %gb_local: tensor<5xf32>)
    -> (tensor<10x10xf32>, tensor<5xf32>) {
  %lr_w = arith.constant dense<0.1> : tensor<10x10xf32>
  %lr_b = arith.constant dense<0.1> : tensor<5xf32>
  %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<10x10xf32>
  %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>
  %dw = arith.mulf %gw, %lr_w : tensor<10x10xf32>
  %w2 = arith.subf %w, %dw : tensor<10x10xf32>
  %db = arith.mulf %gb, %lr_b : tensor<5xf32>
  %b2 = arith.subf %b, %db : tensor<5xf32>
  return %w2, %b2 : tensor<10x10xf32>, tensor<5xf32>
}

