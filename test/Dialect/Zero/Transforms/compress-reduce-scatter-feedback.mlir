// zero-compress-reduce-scatter{error-feedback}: each rank keeps what its
// compressed exchange lost (the residual, f32, in the layout of the rows it
// quantizes) and adds it to what it sends next. A step function takes and
// returns the residual as per-rank state (a #zero.shard with one row a
// rank) that starts at zero; a training loop carries it from zeros. Where
// neither can hold it, the exchange is compressed without feedback and a
// remark says why.
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512 error-feedback' --verify-diagnostics | FileCheck %s
// RUN: not zero-opt %s --split-input-file --zero-weight-update-sharding='error-feedback' 2>&1 | FileCheck %s --check-prefix=EXACT

// EXACT: error: zero-weight-update-sharding: error-feedback keeps what a compressed reduce-scatter loses; give reduce-dtype=int8, int4, bf16 or auto with it

zero.mesh @dp(shape = [4])

// The residual comes in as an argument and goes out as the result that is
// its next value; a non-finite loss restarts from zero.
// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[G:.*]]: tensor<4096xf32>, %[[R:.*]]: tensor<4096xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<4x4096xf32>>, zero.starts_at_zero})
// CHECK-SAME: -> (tensor<1024xf32>, tensor<4096xf32> {zero.shard = #zero.shard<@dp, axes = [0], tensor<4x4096xf32>>, zero.state_of = 1 : i64})
// CHECK: %[[ROWS:.*]] = tensor.expand_shape %[[G]] {{\[\[}}0, 1]] output_shape [4, 1024]
// CHECK: %[[RROWS:.*]] = tensor.expand_shape %[[R]] {{\[\[}}0, 1]] output_shape [4, 1024]
// CHECK: %[[SENT:.*]] = arith.addf %[[ROWS]], %[[RROWS]] : tensor<4x1024xf32>
// CHECK: %[[Q:.*]], %[[S:.*]] = zero.quantize %[[SENT]] block = 512
// CHECK: %[[MINE:.*]] = zero.dequantize %[[Q]], %[[S]] block = 512
// CHECK: %[[LOST:.*]] = arith.subf %[[SENT]], %[[MINE]] : tensor<4x1024xf32>
// CHECK: %[[ABS:.*]] = math.absf %[[LOST]]
// CHECK: %[[FINITE:.*]] = arith.cmpf olt, %[[ABS]]
// CHECK: %[[KEPT:.*]] = arith.select %[[FINITE]], %[[LOST]]
// CHECK: %[[NEXT:.*]] = tensor.collapse_shape %[[KEPT]] {{\[\[}}0, 1]] : tensor<4x1024xf32> into tensor<4096xf32>
// CHECK: zero.all_to_all %[[Q]] on @dp axes = [0] : tensor<4x1024xi8>
// CHECK: zero.all_to_all %[[S]] on @dp axes = [0] : tensor<4x2xf32>
// CHECK: %[[SUM:.*]] = linalg.reduce
// CHECK: return %[[SUM]], %[[NEXT]] : tensor<1024xf32>, tensor<4096xf32>
func.func @step(%g: tensor<4096xf32>) -> tensor<1024xf32> {
  // expected-remark @+1 {{with error feedback: what a rank's exchange loses is sent in its next one (1 residual(s), 4096 f32 elements a rank, taken and returned by @step, from zeros)}}
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<4096xf32> -> tensor<1024xf32>
  return %gs : tensor<1024xf32>
}

// -----

zero.mesh @m(shape = [2, 4])

// Two hops, a residual each: the whole input's rows (moved to put axis 1
// first) and the first hop's partial sums; a bf16 gradient is widened to
// f32 before its residual is added.
// CHECK-LABEL: func.func @two_hops
// CHECK-SAME: %[[R1:[^:]*]]: tensor<48xf32> {zero.shard = #zero.shard<@m, axes = [0, 1], tensor<8x48xf32>>, zero.starts_at_zero}
// CHECK-SAME: %[[R2:[^:]*]]: tensor<12xf32> {zero.shard = #zero.shard<@m, axes = [0, 1], tensor<8x12xf32>>, zero.starts_at_zero}
// CHECK-SAME: zero.state_of = 1
// CHECK-SAME: zero.state_of = 2
// CHECK: %[[WIDE:.*]] = arith.extf %{{.*}} : tensor<4x2x6xbf16> to tensor<4x2x6xf32>
// CHECK: %[[E1:.*]] = tensor.expand_shape %[[R1]] {{.*}} output_shape [4, 2, 6]
// CHECK: arith.addf %[[WIDE]], %[[E1]] : tensor<4x2x6xf32>
// CHECK: %[[NEXT1:.*]] = tensor.collapse_shape %{{.*}} : tensor<4x2x6xf32> into tensor<48xf32>
// CHECK: zero.all_to_all %{{.*}} on @m axes = [1] : tensor<4x2x6xi8>
// CHECK: %[[E2:.*]] = tensor.expand_shape %[[R2]] {{.*}} output_shape [2, 6]
// CHECK: arith.addf %{{.*}}, %[[E2]] : tensor<2x6xf32>
// CHECK: %[[NEXT2:.*]] = tensor.collapse_shape %{{.*}} : tensor<2x6xf32> into tensor<12xf32>
// CHECK: zero.all_to_all %{{.*}} on @m axes = [0] : tensor<2x6xi8>
// CHECK: return %{{.*}}, %[[NEXT1]], %[[NEXT2]] : tensor<2x3xbf16>, tensor<48xf32>, tensor<12xf32>
func.func @two_hops(%g: tensor<16x3xbf16>) -> tensor<2x3xbf16> {
  // expected-remark @+1 {{(2 residual(s), 60 f32 elements a rank, taken and returned by @two_hops, from zeros)}}
  %gs = zero.reduce_scatter %g on @m reduce = mean : tensor<16x3xbf16> -> tensor<2x3xbf16>
  return %gs : tensor<2x3xbf16>
}

// -----

zero.mesh @dp(shape = [4])

// In a training loop nest the residual is carried round both loops from
// zeros made before the outer one; the function keeps its signature.
// CHECK-LABEL: func.func @loops
// CHECK-SAME: (%{{.*}}: tensor<4096xf32>, %{{.*}}: tensor<1024xf32>) -> tensor<1024xf32>
// CHECK: %[[ZEROS:.*]] = linalg.fill {zero.starts_at_zero} ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4096xf32>)
// CHECK: %[[OUTER:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[RO:.*]] = %[[ZEROS]]) -> (tensor<1024xf32>, tensor<4096xf32>)
// CHECK: %[[INNER:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %[[RI:.*]] = %[[RO]]) -> (tensor<1024xf32>, tensor<4096xf32>)
// CHECK: tensor.expand_shape %[[RI]]
// CHECK: %[[NEXT:.*]] = tensor.collapse_shape %{{.*}} : tensor<4x1024xf32> into tensor<4096xf32>
// CHECK: scf.yield %{{.*}}, %[[NEXT]] : tensor<1024xf32>, tensor<4096xf32>
// CHECK: scf.yield %[[INNER]]#0, %[[INNER]]#1 : tensor<1024xf32>, tensor<4096xf32>
// CHECK: return %[[OUTER]]#0 : tensor<1024xf32>
func.func @loops(%g: tensor<4096xf32>, %w: tensor<1024xf32>) -> tensor<1024xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%a = %w) -> tensor<1024xf32> {
    %s = scf.for %j = %c0 to %c4 step %c1 iter_args(%b = %a) -> tensor<1024xf32> {
      // expected-remark @+1 {{carried by the loop from zeros}}
      %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<4096xf32> -> tensor<1024xf32>
      %n = arith.subf %b, %gs : tensor<1024xf32>
      scf.yield %n : tensor<1024xf32>
    }
    scf.yield %s : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}

// -----

zero.mesh @dp(shape = [4])

// A function the module calls cannot grow its signature, and an scf.if
// cannot carry anything from one step to the next: both are compressed
// without feedback, and the remark says why.
// CHECK-LABEL: func.func private @called
// CHECK-SAME: (%{{.*}}: tensor<4096xf32>) -> tensor<1024xf32>
// CHECK-NOT: zero.starts_at_zero
func.func private @called(%g: tensor<4096xf32>) -> tensor<1024xf32> {
  // expected-remark @+1 {{; without error feedback: @called is called in the module, so it cannot take and return the residual as state}}
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<4096xf32> -> tensor<1024xf32>
  return %gs : tensor<1024xf32>
}

// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%{{.*}}: tensor<4096xf32>, %{{.*}}: i1) -> tensor<1024xf32>
func.func @caller(%g: tensor<4096xf32>, %c: i1) -> tensor<1024xf32> {
  %r = scf.if %c -> tensor<1024xf32> {
    // expected-remark @+1 {{; without error feedback: it sits in scf.if, which cannot carry a residual from one step to the next}}
    %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<4096xf32> -> tensor<1024xf32>
    scf.yield %gs : tensor<1024xf32>
  } else {
    %x = func.call @called(%g) : (tensor<4096xf32>) -> tensor<1024xf32>
    scf.yield %x : tensor<1024xf32>
  }
  return %r : tensor<1024xf32>
}
