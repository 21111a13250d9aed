// zero-mark-state-results: each result that is the next value of an
// argument is marked `zero.state_of` on the program as the lowering gets it,
// before anything folds; a result already marked keeps its mark, and one
// that is no argument's next value gets none.

// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-mark-state-results))' | FileCheck %s
// The lowering's donation then writes AdamW's first moment into its
// argument: on one rank the all-reduce folds away during fusion, after
// which the moment's next value is as near to the gradient as to the
// moment, and without the mark it went to a buffer of its own.
// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(zero-mark-state-results, convert-elementwise-to-linalg, zero-fuse-elementwise, zero-donate-state))' 2>&1 | FileCheck %s --check-prefix=DONATED
// RUN: zero-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(convert-elementwise-to-linalg, zero-fuse-elementwise, zero-donate-state))' 2>&1 | FileCheck %s --check-prefix=UNMARKED

zero.mesh @one(shape = [1])

// CHECK-LABEL: func.func @first_moment
// CHECK-SAME: -> (tensor<4xf32> {zero.state_of = 0 : i64})
// DONATED-NOT: keeps a buffer of its own
// DONATED-LABEL: func.func @first_moment
// DONATED-SAME: (%[[M:.*]]: tensor<4xf32> {zero.aliasing_output = 0 : i64}, %{{.*}}: tensor<4xf32>)
// DONATED: outs(%[[M]] : tensor<4xf32>)
// UNMARKED-LABEL: func.func @first_moment
// UNMARKED-NOT: zero.aliasing_output
// UNMARKED: outs(%{{.*}} : tensor<4xf32>)
func.func @first_moment(%m: tensor<4xf32>, %g: tensor<4xf32>) -> tensor<4xf32> {
  %b1 = arith.constant dense<0.9> : tensor<4xf32>
  %c1 = arith.constant dense<0.1> : tensor<4xf32>
  %r = zero.all_reduce %g on @one reduce = mean : tensor<4xf32>
  %a = arith.mulf %m, %b1 : tensor<4xf32>
  %b = arith.mulf %r, %c1 : tensor<4xf32>
  %n = arith.addf %a, %b : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// A mark already made (by the sharding pipeline) stays; a loss, the next
// value of no argument (none is a scalar), gets none.
// CHECK-LABEL: func.func @marked
// CHECK-SAME: -> (tensor<4xf32> {zero.state_of = 1 : i64}, f32)
func.func @marked(%w: tensor<4xf32>, %v: tensor<4xf32>)
    -> (tensor<4xf32> {zero.state_of = 1 : i64}, f32) {
  %c0 = arith.constant 0 : index
  %n = arith.addf %w, %v : tensor<4xf32>
  %x = tensor.extract %n[%c0] : tensor<4xf32>
  %loss = arith.mulf %x, %x : f32
  return %n, %loss : tensor<4xf32>, f32
}
