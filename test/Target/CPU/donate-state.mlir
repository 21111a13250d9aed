// zero-donate-state: a state result (the next value of an argument) is made
// in its argument's tensor, and the argument is marked donated to it; a
// result that no destination-style op makes is left alone with a remark.

// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-donate-state))' --verify-diagnostics | FileCheck %s

#id = affine_map<(d0) -> (d0)>

// The fused update of w and m writes into w and m (each result paired by
// its own payload: m2 is nearer m than g); g is no state.
// CHECK-LABEL: func.func @sgd_momentum
// CHECK-SAME: (%[[W:.*]]: tensor<8xf32> {zero.aliasing_output = 0 : i64}, %[[M:.*]]: tensor<8xf32> {zero.aliasing_output = 1 : i64}, %[[G:.*]]: tensor<8xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[W]], %[[M]], %[[G]] : {{.*}}) outs(%[[W]], %[[M]] : tensor<8xf32>, tensor<8xf32>)
func.func @sgd_momentum(%w: tensor<8xf32>, %m: tensor<8xf32>, %g: tensor<8xf32>)
    -> (tensor<8xf32>, tensor<8xf32>) {
  %e0 = tensor.empty() : tensor<8xf32>
  %e1 = tensor.empty() : tensor<8xf32>
  %r:2 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %m, %g : tensor<8xf32>, tensor<8xf32>, tensor<8xf32>)
      outs(%e0, %e1 : tensor<8xf32>, tensor<8xf32>) {
  ^bb0(%wi: f32, %mi: f32, %gi: f32, %o0: f32, %o1: f32):
    %gs = arith.mulf %gi, %gi : f32
    %m2 = arith.addf %mi, %gs : f32
    %w2 = arith.subf %wi, %m2 : f32
    linalg.yield %w2, %m2 : f32, f32
  } -> (tensor<8xf32>, tensor<8xf32>)
  return %r#0, %r#1 : tensor<8xf32>, tensor<8xf32>
}

// -----

#id = affine_map<(d0) -> (d0)>

// A result made by an op that reads its destination (an accumulation) is
// not made in the argument.
// CHECK-LABEL: func.func @reads_destination
// CHECK-NOT: zero.aliasing_output
// CHECK: outs(%{{.*}} : tensor<8xf32>)
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: the op that makes it reads its destination}}
func.func @reads_destination(%w: tensor<8xf32>, %g: tensor<8xf32>) -> tensor<8xf32> {
  %c = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<8xf32>
  %f = linalg.fill ins(%c : f32) outs(%e : tensor<8xf32>) -> tensor<8xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %g : tensor<8xf32>, tensor<8xf32>) outs(%f : tensor<8xf32>) {
  ^bb0(%wi: f32, %gi: f32, %o: f32):
    %d = arith.mulf %gi, %o : f32
    %w2 = arith.subf %wi, %d : f32
    linalg.yield %w2 : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// A state result that a collective makes keeps its buffer, with the reason.
zero.mesh @dp(shape = [2])
// CHECK-LABEL: func.func @collective_result
// CHECK-NOT: zero.aliasing_output
// expected-remark @+1 {{zero-donate-state: result 0 (the next value of argument 0) keeps a buffer of its own: it is made by 'zero.all_reduce', not by a linalg op with a destination}}
func.func @collective_result(%w: tensor<8xf32>) -> tensor<8xf32> {
  %r = zero.all_reduce %w on @dp reduce = sum : tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// No state, nothing to do.
// CHECK-LABEL: func.func @no_state
// CHECK-NOT: zero.aliasing_output
func.func @no_state(%x: tensor<8xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  return %e : tensor<4xf32>
}
