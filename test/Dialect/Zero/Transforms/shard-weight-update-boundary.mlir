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

// -----

// A training loop: the state the loop carries enters and leaves the
// function as the shard itself. The loop starts from the argument's shard,
// and the function returns the loop's, so no rank holds the whole momentum
// (or, at stage 3, the whole weight) before or after the loop. Below stage 3
// the forward pass reads the whole weight: it is gathered every iteration,
// and enters and leaves whole.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @loop
// CHECK-SAME: (%[[W:[^:]+]]: tensor<10xf32>, %[[M:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>}, %[[X:[^:]+]]: tensor<10xf32>)
// CHECK-SAME: -> (tensor<10xf32> {zero.state_of = 0 : i64}, tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>, zero.state_of = 1 : i64})
// CHECK-NOT: zero.shard_slice %[[M]]
// CHECK: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[LW:.*]] = %[[W]], %[[LM:.*]] = %[[M]]) -> (tensor<10xf32>, tensor<3xf32>)
// CHECK: %[[GS:.*]] = zero.reduce_scatter
// CHECK: arith.mulf %[[LM]], %{{.*}} : tensor<3xf32>
// CHECK: zero.all_gather
// CHECK: scf.yield
// CHECK-NOT: zero.all_gather
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<10xf32>, tensor<3xf32>
// STAGE3-LABEL: func.func @loop
// STAGE3-SAME: (%[[W:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>}, %[[M:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>}, %[[X:[^:]+]]: tensor<10xf32>)
// STAGE3: %[[R:.*]]:2 = scf.for {{.*}} iter_args(%[[LW:.*]] = %[[W]], %[[LM:.*]] = %[[M]]) -> (tensor<3xf32>, tensor<3xf32>)
// STAGE3: zero.all_gather %[[LW]] on @dp {zero.for_use = 0 : i64} : tensor<3xf32> -> tensor<12xf32>
// STAGE3: scf.yield
// STAGE3-NOT: zero.all_gather
// STAGE3: return %[[R]]#0, %[[R]]#1 : tensor<3xf32>, tensor<3xf32>
func.func @loop(%w0: tensor<10xf32>, %m0: tensor<10xf32>, %x: tensor<10xf32>)
    -> (tensor<10xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %beta = arith.constant dense<0.9> : tensor<10xf32>
  %r:2 = scf.for %i = %c0 to %c5 step %c1 iter_args(%w = %w0, %m = %m0)
      -> (tensor<10xf32>, tensor<10xf32>) {
    %gl = arith.mulf %w, %x : tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %m1 = arith.mulf %m, %beta : tensor<10xf32>
    %m2 = arith.addf %m1, %g : tensor<10xf32>
    %w2 = arith.subf %w, %m2 : tensor<10xf32>
    scf.yield %w2, %m2 : tensor<10xf32>, tensor<10xf32>
  }
  return %r#0, %r#1 : tensor<10xf32>, tensor<10xf32>
}

// -----

// Carried state that cannot be the shard at the boundary enters and leaves
// whole, sliced before the loop and gathered after it, and a remark on the
// loop says why: a momentum the loop starts from zeros (no argument to
// take its shard), and one whose final value the function also reads after
// the loop.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @loop_state_stays_whole
// CHECK-SAME: (%{{.*}}: tensor<10xf32>, %[[M:[^:]+]]: tensor<10xf32>, %{{.*}}: tensor<10xf32>)
// CHECK-SAME: -> (tensor<10xf32> {zero.state_of = 0 : i64}, tensor<10xf32> {zero.state_of = 1 : i64}, tensor<10xf32>)
// CHECK: zero.shard_slice
// CHECK: zero.shard_slice
// CHECK: scf.for
// CHECK: scf.yield
// CHECK: zero.all_gather
// CHECK: zero.all_gather
// REMARK3: boundary.mlir:[[@LINE+12]]:10: remark: iter_arg 1 enters and leaves the function whole, sliced before the loop and gathered after it: the loop does not start it from an argument of the function
// REMARK3: boundary.mlir:[[@LINE+11]]:10: remark: iter_arg 2 enters and leaves the function whole, sliced before the loop and gathered after it: the function does not return the loop's result as it is
func.func @loop_state_stays_whole(%w0: tensor<10xf32>, %n0: tensor<10xf32>,
                                  %x: tensor<10xf32>)
    -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant dense<0.0> : tensor<10xf32>
  %beta = arith.constant dense<0.9> : tensor<10xf32>
  // expected-remark @+2 {{iter_arg 1 enters and leaves the function whole, sliced before the loop and gathered after it: the loop does not start it from an argument of the function}}
  // expected-remark @+1 {{iter_arg 2 enters and leaves the function whole, sliced before the loop and gathered after it: the function does not return the loop's result as it is}}
  %r:3 = scf.for %i = %c0 to %c5 step %c1 iter_args(%w = %w0, %m = %zero, %n = %n0)
      -> (tensor<10xf32>, tensor<10xf32>, tensor<10xf32>) {
    %gl = arith.mulf %w, %x : tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %m1 = arith.mulf %m, %beta : tensor<10xf32>
    %m2 = arith.addf %m1, %g : tensor<10xf32>
    %n2 = arith.mulf %n, %m2 : tensor<10xf32>
    %w2 = arith.subf %w, %n2 : tensor<10xf32>
    scf.yield %w2, %m2, %n2 : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
  }
  %sum = arith.addf %r#2, %r#1 : tensor<10xf32>
  return %r#0, %r#2, %sum : tensor<10xf32>, tensor<10xf32>, tensor<10xf32>
}

// -----

// At stage 3 the weight enters as its shard; the function also reads the
// whole weight before the loop, so that read gets it gathered once at the
// function's start.
zero.mesh @dp(shape = [4])

// STAGE3-LABEL: func.func @loop_argument_read_before
// STAGE3-SAME: (%[[W:[^:]+]]: tensor<3xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<10xf32>>}, %[[X:[^:]+]]: tensor<10xf32>)
// STAGE3-NEXT: %[[ALL:.*]] = zero.all_gather %[[W]] on @dp : tensor<3xf32> -> tensor<12xf32>
// STAGE3-NEXT: %[[WHOLE:.*]] = tensor.extract_slice %[[ALL]][0] [10] [1]
// STAGE3: %[[BEFORE:.*]] = arith.mulf %[[WHOLE]], %[[X]] : tensor<10xf32>
// STAGE3: %[[R:.*]] = scf.for {{.*}} iter_args(%{{.*}} = %[[W]]) -> (tensor<3xf32>)
// STAGE3: return %[[R]], %[[BEFORE]] : tensor<3xf32>, tensor<10xf32>
func.func @loop_argument_read_before(%w0: tensor<10xf32>, %x: tensor<10xf32>)
    -> (tensor<10xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %before = arith.mulf %w0, %x : tensor<10xf32>
  %r = scf.for %i = %c0 to %c5 step %c1 iter_args(%w = %w0) -> (tensor<10xf32>) {
    %gl = arith.mulf %w, %x : tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %w2 = arith.subf %w, %g : tensor<10xf32>
    scf.yield %w2 : tensor<10xf32>
  }
  return %r, %before : tensor<10xf32>, tensor<10xf32>
}
