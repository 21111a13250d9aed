// zero-defer-all-gather{gather-dtype=int8|int4} on stage 3 (qwZ at each
// use): each gather zero-shard-weight-update{stage=3} made before an op that
// reads a weight (`zero.for_use`) sends the shard as int8 (or int4) blocks
// and dequantizes them into the copy the op reads; the shard, which the
// update reads, stays exact. A gather whose copy leaves whole (a result, a
// carried value) stays exact, with a remark.
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update='stage=3 shard-function-boundary' --zero-defer-all-gather='gather-dtype=int8 quantize-block=2' --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update='stage=3 shard-function-boundary' --zero-defer-all-gather='gather-dtype=int4 quantize-block=2' 2>&1 | FileCheck %s --check-prefix=INT4
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update='shard-function-boundary' --zero-defer-all-gather='gather-dtype=int8 quantize-block=2' 2>&1 | FileCheck %s --check-prefix=STAGE2

// INT4: remark: zero-defer-all-gather: stage 3's gather for this use in int4 blocks of 2 (gather-dtype=int4): the op reads a copy within max|block|/14 of the weight
// INT4: zero.quantize %{{.*}} block = 2 bits = 4 : tensor<1x2xf32> -> tensor<1x1xi8>, tensor<1x1xf32>

// Stage 2 has no per-use gathers: a single step compresses nothing, and
// says so.
// STAGE2: remark: zero-defer-all-gather: gather-dtype=int8 compresses nothing in this function: no training loop (scf.for) in it all-gathers an updated weight shard for its next iteration, and no op reads a weight through stage 3's gather
// STAGE2-NOT: zero.quantize

zero.mesh @dp(shape = [4])

// The forward pass's read goes through the quantized gather; the update
// reads the exact shard.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[W:.*]]: tensor<2xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<8xf32>>}, %[[G:.*]]: tensor<8xf32>, %[[X:.*]]: tensor<8xf32>)
// CHECK: %[[ROW:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1]] output_shape [1, 2] : tensor<2xf32> into tensor<1x2xf32>
// CHECK: %[[Q:.*]], %[[S:.*]] = zero.quantize %[[ROW]] block = 2 : tensor<1x2xf32> -> tensor<1x2xi8>, tensor<1x1xf32>
// CHECK: %[[QG:.*]] = zero.all_gather %[[Q]] on @dp : tensor<1x2xi8> -> tensor<4x2xi8>
// CHECK: %[[SG:.*]] = zero.all_gather %[[S]] on @dp : tensor<1x1xf32> -> tensor<4x1xf32>
// CHECK: %[[D:.*]] = zero.dequantize %[[QG]], %[[SG]] block = 2 : tensor<4x2xi8>, tensor<4x1xf32> -> tensor<4x2xf32>
// CHECK: %[[COPY:.*]] = tensor.collapse_shape %[[D]] {{\[\[}}0, 1]] : tensor<4x2xf32> into tensor<8xf32>
// CHECK: %[[Y:.*]] = arith.mulf %[[COPY]], %[[X]] : tensor<8xf32>
// CHECK: %[[GS:.*]] = zero.reduce_scatter %[[G]]
// CHECK: %[[W2:.*]] = arith.subf %[[W]], %{{.*}} : tensor<2xf32>
// CHECK: return %[[W2]], %[[Y]]
func.func @step(%w: tensor<8xf32>, %gl: tensor<8xf32>, %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %lr = arith.constant dense<0.25> : tensor<8xf32>
  // expected-remark @+1 {{zero-defer-all-gather: stage 3's gather for this use in int8 blocks of 2 (gather-dtype=int8): the op reads a copy within max|block|/254 of the weight, which changes results; the shard stays exact}}
  %y = arith.mulf %w, %x : tensor<8xf32>
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<8xf32>
  %d = arith.mulf %g, %lr : tensor<8xf32>
  %w2 = arith.subf %w, %d : tensor<8xf32>
  return %w2, %y : tensor<8xf32>, tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The step also returns the weight it was given, whole: that gather hands
// the weight on, and stays exact.
// CHECK-LABEL: func.func @returns_the_weight
// CHECK: zero.quantize
// CHECK: %[[WHOLE:.*]] = zero.all_gather %{{.*}} on @dp {zero.for_use = 0 : i64} : tensor<2xf32> -> tensor<8xf32>
// CHECK: return %{{.*}}, %{{.*}}, %[[WHOLE]]
func.func @returns_the_weight(%w: tensor<8xf32>, %gl: tensor<8xf32>, %x: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) {
  %lr = arith.constant dense<0.25> : tensor<8xf32>
  // expected-remark @+1 {{stage 3's gather for this use in int8 blocks of 2}}
  %y = arith.mulf %w, %x : tensor<8xf32>
  %g = zero.all_reduce %gl on @dp reduce = mean : tensor<8xf32>
  %d = arith.mulf %g, %lr : tensor<8xf32>
  %w2 = arith.subf %w, %d : tensor<8xf32>
  // expected-remark @+1 {{zero-defer-all-gather: left exact: stage 3's gather for this use hands the whole weight on (a result or a carried value), which gather-dtype=int8 would round}}
  return %w2, %y, %w : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A per-use gather of integers (written by hand here) is not quantized.
// CHECK-LABEL: func.func @integers
// CHECK: zero.all_gather %{{.*}} on @dp {zero.for_use = 0 : i64} : tensor<2xi32> -> tensor<8xi32>
// CHECK-NOT: zero.quantize
// expected-remark @+1 {{gather-dtype=int8 compresses nothing in this function}}
func.func @integers(%w: tensor<2xi32>, %x: tensor<8xi32>) -> tensor<8xi32> {
  // expected-remark @+1 {{zero-defer-all-gather: left exact: stage 3's gather for this use moves 'tensor<8xi32>' along dimension 0; only 1-D float shards gathered along dimension 0 are quantized}}
  %g = zero.all_gather %w on @dp {zero.for_use = 0 : i64} : tensor<2xi32> -> tensor<8xi32>
  %y = arith.muli %g, %x : tensor<8xi32>
  return %y : tensor<8xi32>
}
