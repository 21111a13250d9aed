// RUN: zero-opt %s --split-input-file --zero-combine-collectives=alignment=8 --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-combine-collectives | FileCheck %s --check-prefix=DEFAULT
// RUN: zero-opt %s --split-input-file --zero-combine-collectives=alignment=4 | FileCheck %s --check-prefix=PACKED
// RUN: zero-opt %s --split-input-file --zero-combine-collectives=bucket-bytes=64 | FileCheck %s --check-prefix=SMALL
// RUN: not zero-opt %s --split-input-file --zero-combine-collectives=alignment=0 2>&1 | FileCheck %s --check-prefix=BADALIGN

// BADALIGN: error: zero-combine-collectives: alignment must be positive, got 0

// Two reduce-scatters on 4 ranks: row r of the [4, chunk] buffer holds part
// r of each member, the second at 24 elements (aligned to 8 bytes, 2 f32).
// At the default alignment (256 bytes) both members are smaller than it and
// follow each other without a gap: a gap would cost more than it gains.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @reduce_scatters
// CHECK-SAME: (%[[A:.*]]: tensor<92xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK: %[[A2:.*]] = tensor.expand_shape %[[A]] {{\[\[}}0, 1]] output_shape [4, 23] : tensor<92xf32> into tensor<4x23xf32>
// CHECK: %[[B2:.*]] = tensor.expand_shape %[[B]] {{\[\[}}0, 1]] output_shape [4, 2] : tensor<8xf32> into tensor<4x2xf32>
// CHECK: %[[GAP:.*]] = arith.constant dense<0.000000e+00> : tensor<4x1xf32>
// CHECK: %[[BUF:.*]] = tensor.concat dim(1) %[[A2]], %[[GAP]], %[[B2]] : (tensor<4x23xf32>, tensor<4x1xf32>, tensor<4x2xf32>) -> tensor<4x26xf32>
// CHECK: %[[FLAT:.*]] = tensor.collapse_shape %[[BUF]] {{\[\[}}0, 1]] : tensor<4x26xf32> into tensor<104xf32>
// CHECK: %[[RS:.*]] = zero.reduce_scatter %[[FLAT]] on @dp reduce = mean {zero.bucket = {id = 0 : i64, offsets = array<i64: 0, 24>, sizes = array<i64: 23, 2>, types = [tensor<23xf32>, tensor<2xf32>]}} : tensor<104xf32> -> tensor<26xf32>
// CHECK: %[[AS:.*]] = tensor.extract_slice %[[RS]][0] [23] [1]
// CHECK: %[[BS:.*]] = tensor.extract_slice %[[RS]][24] [2] [1]
// CHECK-NOT: zero.reduce_scatter
// CHECK: return %[[AS]], %[[BS]]
// DEFAULT-LABEL: func.func @reduce_scatters
// DEFAULT: zero.reduce_scatter {{.*}}offsets = array<i64: 0, 23>{{.*}} : tensor<100xf32> -> tensor<25xf32>
// PACKED-LABEL: func.func @reduce_scatters
// PACKED: zero.reduce_scatter {{.*}}offsets = array<i64: 0, 23>{{.*}} : tensor<100xf32> -> tensor<25xf32>
// SMALL-LABEL: func.func @reduce_scatters
// SMALL-COUNT-2: zero.reduce_scatter
func.func @reduce_scatters(%a: tensor<92xf32>, %b: tensor<8xf32>) -> (tensor<23xf32>, tensor<2xf32>) {
  %as = zero.reduce_scatter %a on @dp reduce = mean : tensor<92xf32> -> tensor<23xf32>
  %bs = zero.reduce_scatter %b on @dp reduce = mean : tensor<8xf32> -> tensor<2xf32>
  return %as, %bs : tensor<23xf32>, tensor<2xf32>
}

// -----

// All-gathers: each rank's parts go into its chunk; the gathered [N, chunk]
// is cut into the members' columns.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @all_gathers
// CHECK-SAME: (%[[A:.*]]: tensor<23xf32>, %[[B:.*]]: tensor<2xf32>)
// CHECK: %[[GAP:.*]] = arith.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK: %[[BUF:.*]] = tensor.concat dim(0) %[[A]], %[[GAP]], %[[B]] : (tensor<23xf32>, tensor<1xf32>, tensor<2xf32>) -> tensor<26xf32>
// CHECK: %[[AG:.*]] = zero.all_gather %[[BUF]] on @dp {zero.bucket = {{.*}}} : tensor<26xf32> -> tensor<104xf32>
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[AG]] {{\[\[}}0, 1]] output_shape [4, 26]
// CHECK: %[[AP:.*]] = tensor.extract_slice %[[ROWS]][0, 0] [4, 23] [1, 1]
// CHECK: %[[AF:.*]] = tensor.collapse_shape %[[AP]] {{\[\[}}0, 1]] : tensor<4x23xf32> into tensor<92xf32>
// CHECK: %[[BP:.*]] = tensor.extract_slice %[[ROWS]][0, 24] [4, 2] [1, 1]
// CHECK: %[[BF:.*]] = tensor.collapse_shape %[[BP]] {{\[\[}}0, 1]] : tensor<4x2xf32> into tensor<8xf32>
// CHECK: return %[[AF]], %[[BF]]
func.func @all_gathers(%a: tensor<23xf32>, %b: tensor<2xf32>) -> (tensor<92xf32>, tensor<8xf32>) {
  %af = zero.all_gather %a on @dp : tensor<23xf32> -> tensor<92xf32>
  %bf = zero.all_gather %b on @dp : tensor<2xf32> -> tensor<8xf32>
  return %af, %bf : tensor<92xf32>, tensor<8xf32>
}

// -----

// All-reduces of any shape, scalars included (partial norms), flattened into
// one buffer. The third input is computed after the first two collectives:
// the bucket starts when its last member's input is ready.
zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @all_reduces
// CHECK: %[[Y:.*]] = arith.mulf
// CHECK: tensor.concat
// CHECK: zero.all_reduce %{{.*}} on @dp reduce = sum {zero.bucket = {id = 0 : i64, offsets = array<i64: 0, 6, 7>, sizes = array<i64: 6, 1, 1>, types = [tensor<2x3xf32>, tensor<f32>, tensor<f32>]}} : tensor<8xf32>
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
// CHECK: tensor.collapse_shape %{{.*}} [] : tensor<1xf32> into tensor<f32>
// CHECK-NOT: zero.all_reduce
func.func @all_reduces(%a: tensor<2x3xf32>, %x: tensor<f32>, %y: tensor<f32>) -> (tensor<2x3xf32>, tensor<f32>, tensor<f32>) {
  %ar = zero.all_reduce %a on @dp reduce = sum : tensor<2x3xf32>
  %xr = zero.all_reduce %x on @dp reduce = sum : tensor<f32>
  %y2 = arith.mulf %y, %y : tensor<f32>
  %yr = zero.all_reduce %y2 on @dp reduce = sum : tensor<f32>
  return %ar, %xr, %yr : tensor<2x3xf32>, tensor<f32>, tensor<f32>
}

// -----

// Not combined: different reductions, element types, groups; a collective
// whose input depends on another's result; a multi-dimensional
// reduce-scatter; one inside zero.async.
zero.mesh @dp(shape = [4])
zero.mesh @other(shape = [4])

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: zero.bucket
// CHECK: return
func.func @left_alone(%a: tensor<8xf32>, %b: tensor<8xi32>, %c: tensor<4x8xf32>) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<8xf32>) {
  %sum = zero.all_reduce %a on @dp reduce = sum : tensor<8xf32>
  %max = zero.all_reduce %a on @dp reduce = max : tensor<8xf32>
  %int = zero.all_reduce %b on @dp reduce = sum : tensor<8xi32>
  %elsewhere = zero.all_reduce %a on @other reduce = min : tensor<8xf32>
  %twice = zero.all_reduce %sum on @dp reduce = sum : tensor<8xf32>
  %rows = zero.reduce_scatter %c on @dp reduce = sum : tensor<4x8xf32> -> tensor<1x8xf32>
  %f = zero.async : !zero.future<tensor<8xf32>> {
    %r = zero.all_reduce %a on @other reduce = min : tensor<8xf32>
    zero.yield %r : tensor<8xf32>
  }
  %later = zero.await %f reads %a : !zero.future<tensor<8xf32>>, tensor<8xf32>
  return %sum, %max, %int, %elsewhere, %twice, %rows, %later : tensor<8xf32>, tensor<8xf32>, tensor<8xi32>, tensor<8xf32>, tensor<8xf32>, tensor<1x8xf32>, tensor<8xf32>
}

// -----

// A collective inside a loop body combines with its siblings there, not
// with those outside.
zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @in_loop
// CHECK: scf.for
// CHECK: zero.all_reduce {{.*}}zero.bucket = {id = 0
// CHECK: scf.yield
// CHECK: zero.all_reduce
// CHECK-NOT: zero.bucket
// CHECK: return
func.func @in_loop(%a: tensor<4xf32>, %b: tensor<4xf32>, %n: index) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r:2 = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a, %y = %b) -> (tensor<4xf32>, tensor<4xf32>) {
    %x2 = zero.all_reduce %x on @dp reduce = sum : tensor<4xf32>
    %y2 = zero.all_reduce %y on @dp reduce = sum : tensor<4xf32>
    scf.yield %x2, %y2 : tensor<4xf32>, tensor<4xf32>
  }
  %z = zero.all_reduce %a on @dp reduce = sum : tensor<4xf32>
  return %r#0, %r#1, %z : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Global-norm clipping as users write it: each gradient's norm term right
// after its all-reduce. The bucket goes where its last member is ready (both
// inputs are arguments: at the start), and the first gradient's norm term,
// which used to sit between the two, waits for the bucket.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @interleaved_norm
// CHECK: %[[AR:.*]] = zero.all_reduce {{.*}}zero.bucket = {id = 0
// CHECK-NOT: zero.all_reduce
// CHECK: %[[G0:.*]] = tensor.extract_slice %[[AR]][0] [8] [1]
// CHECK: %[[G1:.*]] = tensor.extract_slice %[[AR]][8] [8] [1]
// CHECK: %[[S0:.*]] = arith.mulf %[[G0]], %[[G0]]
// CHECK: %[[A0:.*]] = linalg.reduce ins(%[[S0]]
// CHECK: %[[S1:.*]] = arith.mulf %[[G1]], %[[G1]]
// CHECK: linalg.reduce ins(%[[S1]] : tensor<8xf32>) outs(%[[A0]]
// CHECK: return
func.func @interleaved_norm(%w0: tensor<8xf32>, %g0l: tensor<8xf32>, %w1: tensor<8xf32>, %g1l: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc0 = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %g0 = zero.all_reduce %g0l on @dp reduce = mean : tensor<8xf32>
  %s0 = arith.mulf %g0, %g0 : tensor<8xf32>
  %a0 = linalg.reduce ins(%s0 : tensor<8xf32>) outs(%acc0 : tensor<f32>) dimensions = [0]
    (%x: f32, %y: f32) { %s = arith.addf %x, %y : f32
      linalg.yield %s : f32 }
  %g1 = zero.all_reduce %g1l on @dp reduce = mean : tensor<8xf32>
  %s1 = arith.mulf %g1, %g1 : tensor<8xf32>
  %a1 = linalg.reduce ins(%s1 : tensor<8xf32>) outs(%a0 : tensor<f32>) dimensions = [0]
    (%x: f32, %y: f32) { %s = arith.addf %x, %y : f32
      linalg.yield %s : f32 }
  %n = tensor.extract %a1[] : tensor<f32>
  %ns = tensor.splat %n : tensor<8xf32>
  %u0 = arith.mulf %g0, %ns : tensor<8xf32>
  %w0n = arith.subf %w0, %u0 : tensor<8xf32>
  %u1 = arith.mulf %g1, %ns : tensor<8xf32>
  %w1n = arith.subf %w1, %u1 : tensor<8xf32>
  return %w0n, %w1n : tensor<8xf32>, tensor<8xf32>
}

// -----

// Buckets fill in the order the gradients become ready, not the order the
// collectives are written: %late is computed last, so the 64-byte bucket
// takes %b and %a (ready at the start) and %late goes alone. The computation
// of %late stays where it was, after %work.
zero.mesh @dp(shape = [2])

// SMALL-LABEL: func.func @ready_order
// SMALL: %[[BUCKET:.*]] = zero.all_reduce {{.*}}offsets = array<i64: 0, 4>, sizes = array<i64: 4, 4>
// SMALL: %[[WORK:.*]] = arith.mulf %{{.*}}, %{{.*}} : tensor<16xf32>
// SMALL: %[[LATE:.*]] = arith.addf %[[WORK]]
// SMALL: zero.all_reduce %[[LATE]] on @dp reduce = sum : tensor<16xf32>
// SMALL: return
func.func @ready_order(%a: tensor<4xf32>, %b: tensor<4xf32>, %x: tensor<16xf32>) -> (tensor<16xf32>, tensor<4xf32>, tensor<4xf32>) {
  %work = arith.mulf %x, %x : tensor<16xf32>
  %late = arith.addf %work, %x : tensor<16xf32>
  %lr = zero.all_reduce %late on @dp reduce = sum : tensor<16xf32>
  %ar = zero.all_reduce %a on @dp reduce = sum : tensor<4xf32>
  %br = zero.all_reduce %b on @dp reduce = sum : tensor<4xf32>
  return %lr, %ar, %br : tensor<16xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Two kinds of exchange whose members depend on each other crosswise: the
// second reduce-scatter needs the first all-reduce's result, and the second
// all-reduce the first reduce-scatter's. Bucketing both pairs would make each
// bucket wait for the other. In the order of readiness, the reduce-scatters
// combine first; the second all-reduce, which now depends on the first
// through that bucket, stays alone.
zero.mesh @dp(shape = [2])

// CHECK-LABEL: func.func @crosswise
// CHECK: %[[AR:.*]] = zero.all_reduce %{{.*}} on @dp reduce = sum : tensor<4xf32>
// CHECK: zero.reduce_scatter {{.*}}zero.bucket
// CHECK-NOT: zero.reduce_scatter
// CHECK: zero.all_reduce %{{.*}} on @dp reduce = sum : tensor<4xf32>
// CHECK-NOT: zero.bucket
// CHECK: return
func.func @crosswise(%a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>) {
  %ar = zero.all_reduce %a on @dp reduce = sum : tensor<4xf32>
  %rs = zero.reduce_scatter %b on @dp reduce = sum : tensor<4xf32> -> tensor<2xf32>
  %rs2 = zero.reduce_scatter %ar on @dp reduce = sum : tensor<4xf32> -> tensor<2xf32>
  %pad = tensor.pad %rs low[0] high[2] {
  ^bb0(%i: index):
    %z = arith.constant 0.0 : f32
    tensor.yield %z : f32
  } : tensor<2xf32> to tensor<4xf32>
  %ar2 = zero.all_reduce %pad on @dp reduce = sum : tensor<4xf32>
  return %rs2, %ar, %ar2, %rs : tensor<2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A tensor of no elements has no part in a bucket (its offset would lie
// past the bucket's end): it stays alone, the others are combined.
// CHECK-LABEL: func.func @no_elements
// CHECK: zero.all_reduce %{{.*}} on @dp reduce = sum {zero.bucket = {{.*}} : tensor<16xf32>
// CHECK: zero.all_reduce %{{.*}} on @dp reduce = sum : tensor<0xf32>
// CHECK-NOT: zero.all_reduce
func.func @no_elements(%a: tensor<8xf32>, %e: tensor<0xf32>, %b: tensor<8xf32>) -> (tensor<8xf32>, tensor<0xf32>, tensor<8xf32>) {
  %ra = zero.all_reduce %a on @dp reduce = sum : tensor<8xf32>
  %re = zero.all_reduce %e on @dp reduce = sum : tensor<0xf32>
  %rb = zero.all_reduce %b on @dp reduce = sum : tensor<8xf32>
  return %ra, %re, %rb : tensor<8xf32>, tensor<0xf32>, tensor<8xf32>
}
