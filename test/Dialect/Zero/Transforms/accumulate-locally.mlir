// zero-accumulate-locally: a loop that adds each iteration's reduced
// gradient to a sum it carries sums the local gradients instead, and the sum
// is reduced once after the loop. Candidates it leaves alone get a remark.
// RUN: zero-opt %s --split-input-file --zero-accumulate-locally --verify-diagnostics --mlir-print-op-on-diagnostic=false | FileCheck %s

zero.mesh @dp(shape = [4])

// The sum starts at zeros: the reduced sum is the loop's result.
// CHECK-LABEL: func.func @from_zeros
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<16xf32>
// CHECK: %[[LOCAL:.*]] = scf.for {{.*}} iter_args(%[[A:.*]] = %[[ZERO]])
// CHECK-NOT: zero.all_reduce
// CHECK: %[[G:.*]] = tensor.extract_slice
// CHECK: %[[S:.*]] = arith.addf %[[A]], %[[G]] : tensor<16xf32>
// CHECK: scf.yield %[[S]]
// CHECK: %[[R:.*]] = zero.all_reduce %[[LOCAL]] on @dp reduce = mean : tensor<16xf32>
// CHECK: return %[[R]]
func.func @from_zeros(%micro: tensor<8x16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  // expected-remark @+1 {{accumulated gradient (iter_arg #0) reduced once after the loop, instead of once in each of 8 iterations}}
  %sum = scf.for %i = %c0 to %c8 step %c1 iter_args(%a = %zero) -> tensor<16xf32> {
    %g = tensor.extract_slice %micro[%i, 0] [1, 16] [1, 1] : tensor<8x16xf32> to tensor<16xf32>
    %r = zero.all_reduce %g on @dp reduce = mean : tensor<16xf32>
    %a2 = arith.addf %a, %r : tensor<16xf32>
    scf.yield %a2 : tensor<16xf32>
  }
  return %sum : tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [2, 4])

// A sum that starts elsewhere is added after the reduction; the group (axes)
// and the reduction stay; integers too; a loop of unknown trip count.
// CHECK-LABEL: func.func @from_a_value
// CHECK: scf.for
// CHECK: arith.addi %{{.*}}, %{{.*}} : tensor<6xi32>
// CHECK: %[[R:.*]] = zero.all_reduce %{{.*}} on @dp axes = [1] reduce = sum : tensor<6xi32>
// CHECK: %[[SUM:.*]] = arith.addi %arg1, %[[R]] : tensor<6xi32>
// CHECK: return %[[SUM]]
func.func @from_a_value(%g: tensor<6xi32>, %start: tensor<6xi32>, %n: index) -> tensor<6xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-remark @+1 {{accumulated gradient (iter_arg #0) reduced once after the loop}}
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%a = %start) -> tensor<6xi32> {
    %r = zero.all_reduce %g on @dp axes = [1] reduce = sum : tensor<6xi32>
    %a2 = arith.addi %r, %a : tensor<6xi32>
    scf.yield %a2 : tensor<6xi32>
  }
  return %sum : tensor<6xi32>
}

// -----

zero.mesh @dp(shape = [4])

// The linalg form of the add, as convert-elementwise-to-linalg writes it:
// the carried sum is both an input and the init.
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @linalg_add
// CHECK: scf.for
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[G:.*]] : tensor<16xf32>, tensor<16xf32>)
// CHECK-NOT: zero.all_reduce
// CHECK: scf.yield
// CHECK: zero.all_reduce %{{.*}} on @dp reduce = sum
func.func @linalg_add(%micro: tensor<4x16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zero = arith.constant dense<0.0> : tensor<16xf32>
  // expected-remark @+1 {{accumulated gradient (iter_arg #0) reduced once after the loop, instead of once in each of 4 iterations}}
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %zero) -> tensor<16xf32> {
    %g = tensor.extract_slice %micro[%i, 0] [1, 16] [1, 1] : tensor<4x16xf32> to tensor<16xf32>
    %r = zero.all_reduce %g on @dp reduce = sum : tensor<16xf32>
    %a2 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
        ins(%a, %r : tensor<16xf32>, tensor<16xf32>) outs(%a : tensor<16xf32>) {
    ^bb0(%x: f32, %y: f32, %out: f32):
      %s = arith.addf %x, %y : f32
      linalg.yield %s : f32
    } -> tensor<16xf32>
    scf.yield %a2 : tensor<16xf32>
  }
  return %sum : tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A max does not commute with the sum.
// CHECK-LABEL: func.func @max_reduction
// CHECK: scf.for
// CHECK: zero.all_reduce %{{.*}} reduce = max
func.func @max_reduction(%g: tensor<16xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %sum = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init) -> tensor<16xf32> {
    // expected-remark @+1 {{accumulation left as is, one reduction per iteration: its reduction is max, which a sum does not commute with}}
    %r = zero.all_reduce %g on @dp reduce = max : tensor<16xf32>
    %a2 = arith.addf %a, %r : tensor<16xf32>
    scf.yield %a2 : tensor<16xf32>
  }
  return %sum : tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The loop reads the partial sum (a running norm, say).
// CHECK-LABEL: func.func @partial_sum_read
// CHECK: scf.for
// CHECK: zero.all_reduce
func.func @partial_sum_read(%g: tensor<16xf32>, %init: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %sum:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init, %m = %init) -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-remark @+1 {{accumulation left as is, one reduction per iteration: the loop reads the partial sum (iter_arg #0) other than to add to it}}
    %r = zero.all_reduce %g on @dp reduce = sum : tensor<16xf32>
    %a2 = arith.addf %a, %r : tensor<16xf32>
    %m2 = arith.maximumf %m, %a : tensor<16xf32>
    scf.yield %a2, %m2 : tensor<16xf32>, tensor<16xf32>
  }
  return %sum#0, %sum#1 : tensor<16xf32>, tensor<16xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The new sum is used in the loop besides being carried.
// CHECK-LABEL: func.func @sum_used_in_loop
// CHECK: scf.for
// CHECK: zero.all_reduce
func.func @sum_used_in_loop(%g: tensor<16xf32>, %init: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %sum:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %init, %m = %init) -> (tensor<16xf32>, tensor<16xf32>) {
    // expected-remark @+1 {{accumulation left as is, one reduction per iteration: the sum is used in the loop, or yielded other than as the next value of iter_arg #0}}
    %r = zero.all_reduce %g on @dp reduce = sum : tensor<16xf32>
    %a2 = arith.addf %a, %r : tensor<16xf32>
    %m2 = arith.maximumf %m, %a2 : tensor<16xf32>
    scf.yield %a2, %m2 : tensor<16xf32>, tensor<16xf32>
  }
  return %sum#0, %sum#1 : tensor<16xf32>, tensor<16xf32>
}

// -----

// A training loop whose all-reduce feeds the update, not a sum: nothing to
// move, and the module says so once.
// CHECK-LABEL: func.func @training_loop
// CHECK: scf.for
// CHECK: zero.all_reduce
// expected-remark @below {{zero-accumulate-locally: no all-reduce whose result a loop adds to a value it carries}}
module {
  zero.mesh @dp2(shape = [4])
  func.func @training_loop(%w: tensor<16xf32>, %g: tensor<16xf32>) -> tensor<16xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %lr = arith.constant dense<0.1> : tensor<16xf32>
    %out = scf.for %i = %c0 to %c4 step %c1 iter_args(%v = %w) -> tensor<16xf32> {
      %r = zero.all_reduce %g on @dp2 reduce = mean : tensor<16xf32>
      %d = arith.mulf %r, %lr : tensor<16xf32>
      %v2 = arith.subf %v, %d : tensor<16xf32>
      scf.yield %v2 : tensor<16xf32>
    }
    return %out : tensor<16xf32>
  }
}
