// RUN: zero-opt %s --split-input-file --zero-shard-weight-update=shard-function-boundary --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update="shard-function-boundary stage=3" 2>/dev/null | FileCheck %s --check-prefix=STAGE3
// RUN: zero-opt %s --split-input-file --zero-shard-weight-update="shard-function-boundary stage=3" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK3

// Momentum SGD as one step with the state passed in and out as shards. m'
// reads only m, so it pairs with m; w' reads w and m', and gets w once m is
// taken. The learning-rate tensor is only read: it stays whole and is sliced
// inside.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @momentum
// CHECK-SAME: (%[[W:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>},
// CHECK-SAME: %[[M:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>},
// CHECK-SAME: %[[LR:[^:]+]]: tensor<10xf32>, %[[G:[^:]+]]: tensor<10xf32>)
// CHECK-SAME: -> (tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>, zero.state_of = 0 : i64}, tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>})
// CHECK: %[[GS:.*]] = zero.reduce_scatter
// CHECK: %[[M1:.*]] = arith.mulf %[[M]], %{{.*}} : tensor<3xf32>
// CHECK: %[[M2:.*]] = arith.addf %[[M1]], %[[GS]] : tensor<3xf32>
// CHECK: %[[LRS:.*]] = zero.shard_slice %{{.*}} on @dp : tensor<12xf32> -> tensor<3xf32>
// CHECK: %[[D:.*]] = arith.mulf %[[M2]], %[[LRS]] : tensor<3xf32>
// CHECK: %[[W2:.*]] = arith.subf %[[W]], %[[D]] : tensor<3xf32>
// CHECK-NOT: zero.all_gather
// CHECK: return %[[W2]], %[[M2]] : tensor<3xf32>, tensor<3xf32>
func.func @momentum(%w: tensor<10xf32>, %m: tensor<10xf32>, %lr: tensor<10xf32>,
                    %g_local: tensor<10xf32>) -> (tensor<10xf32>, tensor<10xf32>) {
  %beta = arith.constant dense<0.9> : tensor<10xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<10xf32>
  %m1 = arith.mulf %m, %beta : tensor<10xf32>
  %m2 = arith.addf %m1, %g : tensor<10xf32>
  %d = arith.mulf %m2, %lr : tensor<10xf32>
  %w2 = arith.subf %w, %d : tensor<10xf32>
  return %w2, %m2 : tensor<10xf32>, tensor<10xf32>
}

// -----

// A weight the step also reads outside the update (a forward pass) stays
// whole below stage 3; at stage 3 it is a shard too, gathered for that use.
// The bf16 copy has no bf16 argument to pair with: it is gathered whole.
zero.mesh @dp(shape = [2, 4])

// CHECK-LABEL: func.func @forward_reads_weight
// CHECK-SAME: (%[[W:[^:]+]]: tensor<2x5xf32>, %[[X:[^:]+]]: tensor<2x5xf32>)
// CHECK-SAME: -> (tensor<2x5xf32> {zero.state_of = 0 : i64}, tensor<2x5xbf16>)
// CHECK: zero.shard_slice
// STAGE3-LABEL: func.func @forward_reads_weight
// STAGE3-SAME: (%[[W:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [1], tensor<2x5xf32>>}, %[[X:[^:]+]]: tensor<2x5xf32>)
// STAGE3-SAME: -> (tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [1], tensor<2x5xf32>>, zero.state_of = 0 : i64}, tensor<2x5xbf16>)
// STAGE3: %[[WW:.*]] = zero.all_gather %[[W]] on @dp axes = [1] {zero.for_use = 0 : i64} : tensor<3xf32> -> tensor<12xf32>
// STAGE3: %[[GS:.*]] = zero.reduce_scatter
// STAGE3: %[[W2:.*]] = arith.subf %[[W]], %[[GS]] : tensor<3xf32>
// STAGE3: %[[T:.*]] = arith.truncf %[[W2]] : tensor<3xf32> to tensor<3xbf16>
// STAGE3: zero.all_gather %[[T]] on @dp axes = [1] : tensor<3xbf16> -> tensor<12xbf16>
// STAGE3: return %[[W2]], %{{.*}} : tensor<3xf32>, tensor<2x5xbf16>
func.func @forward_reads_weight(%w: tensor<2x5xf32>, %x: tensor<2x5xf32>)
    -> (tensor<2x5xf32>, tensor<2x5xbf16>) {
  %gl = arith.mulf %w, %x : tensor<2x5xf32>
  %g = zero.all_reduce %gl on @dp axes = [1] reduce = sum : tensor<2x5xf32>
  %w2 = arith.subf %w, %g : tensor<2x5xf32>
  // The bf16 copy has no previous value among the arguments: at stage 3 it
  // leaves whole, and the pass says so.
  // REMARK3: boundary.mlir:[[@LINE+1]]:12: remark: stage 3: result #1 is returned whole, so the caller holds it whole between steps: it pairs with no argument that the update reads
  %model = arith.truncf %w2 : tensor<2x5xf32> to tensor<2x5xbf16>
  return %w2, %model : tensor<2x5xf32>, tensor<2x5xbf16>
}

// -----

// Two results that each read both arguments of their type: no pairing is
// sure, so both stay whole (sliced on entry, gathered on exit).
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @ambiguous
// CHECK-SAME: (%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT: zero.shard =
// CHECK: zero.all_gather
// REMARK3: boundary.mlir:[[@LINE+7]]:9: remark: stage 3: result #0 is returned whole, so the caller holds it whole between steps: 2 arguments of its type are equally near it in the update's data flow
// REMARK3: boundary.mlir:[[@LINE+7]]:9: remark: stage 3: result #1 is returned whole
// REMARK3: boundary.mlir:[[@LINE+1]]:1: remark: stage 3 is stage 2 for 1 weight update(s) here
func.func @ambiguous(%a: tensor<8xf32>, %b: tensor<8xf32>, %gl: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8xf32>
  %s = arith.addf %a, %b : tensor<8xf32>
  %a2 = arith.subf %s, %g : tensor<8xf32>
  %b2 = arith.addf %s, %g : tensor<8xf32>
  return %a2, %b2 : tensor<8xf32>, tensor<8xf32>
}

// -----

// A step that is called in the module keeps its signature: its callers pass
// whole tensors.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func private @called
// CHECK-SAME: (%{{.*}}: tensor<8xf32>, %{{.*}}: tensor<8xf32>) -> (tensor<8xf32> {zero.state_of = 0 : i64})
// CHECK: zero.reduce_scatter
// CHECK: zero.all_gather
// expected-remark @+3 {{state not sharded at the function boundary: the function is called in the module}}
// REMARK3: boundary.mlir:[[@LINE+2]]:1: remark: state not sharded at the function boundary: the function is called in the module
// REMARK3: boundary.mlir:[[@LINE+1]]:1: remark: stage 3 is stage 2 for 1 weight update(s) here
func.func private @called(%w: tensor<8xf32>, %gl: tensor<8xf32>) -> tensor<8xf32> {
  %g = zero.all_reduce %gl on @dp reduce = sum : tensor<8xf32>
  %w2 = arith.subf %w, %g : tensor<8xf32>
  return %w2 : tensor<8xf32>
}

func.func @caller(%w: tensor<8xf32>, %gl: tensor<8xf32>) -> tensor<8xf32> {
  %r = func.call @called(%w, %gl) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  return %r : tensor<8xf32>
}
