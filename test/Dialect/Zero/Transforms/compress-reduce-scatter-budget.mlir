// zero-compress-reduce-scatter{only-where-faster reduce-error-budget=E}
// (the pipelines' reduce-dtype=auto with reduce-error-budget): a planner.
// For each reduce-scatter it keeps the formats whose bound, over its hops,
// is within E as a share of the largest magnitude of each contribution's
// block (bf16 1/256, int8 1/254, int4 1/14 a hop), estimates each with the
// cost model, and sends the fastest, or leaves it exact when that is
// faster, when no format is within E, or when its sum feeds a full
// reduction (a norm) or an inf check. Each remark gives the estimates.
// Slow bytes, fast arithmetic: fewer bytes are faster.
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512 only-where-faster reduce-error-budget=0.1 bandwidth-gbps=0.1 gflops=1000 gelements-per-s=100' --verify-diagnostics | FileCheck %s
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512 only-where-faster reduce-error-budget=0.005 bandwidth-gbps=0.1 gflops=1000 gelements-per-s=100' 2>&1 | FileCheck %s --check-prefix=INT8
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512 only-where-faster reduce-error-budget=0.00392 bandwidth-gbps=0.1 gflops=1000 gelements-per-s=100' 2>&1 | FileCheck %s --check-prefix=BF16
// RUN: zero-opt %s --split-input-file --zero-compress-reduce-scatter='quantize-block=512 only-where-faster reduce-error-budget=0.003 bandwidth-gbps=0.1 gflops=1000 gelements-per-s=100' 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not zero-opt %s --split-input-file --zero-compress-reduce-scatter='reduce-error-budget=0.1' 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// RUN: not zero-opt %s --split-input-file --zero-weight-update-sharding='reduce-dtype=int8 reduce-error-budget=0.1' 2>&1 | FileCheck %s --check-prefix=PIPELINE

// UNPLANNED: error: zero-compress-reduce-scatter: reduce-error-budget (1.000000e-01) plans each exchange's format with only-where-faster (reduce-dtype=auto), and is not negative
// PIPELINE: error: zero-weight-update-sharding: reduce-error-budget plans each reduce-scatter's format; give reduce-dtype=auto with it

// Within 0.005 int4 is out (1/14); int8 (1/254) and bf16 (1/256) are in,
// and int8 sends fewer bytes.
// INT8: remark: zero-compress-reduce-scatter: exchanged as int8 blocks of 512 over 4 ranks; {{.*}}; planned within reduce-error-budget=0.005: bf16 {{[0-9.]+}} us, int8 blocks of 512 {{[0-9.]+}} us{{$}}
// Within 0.00392 only bf16 is in.
// BF16: remark: zero-compress-reduce-scatter: exchanged as bf16 over 4 ranks; each element is within the sum of |x| / 256 of its contributions, not exact (cost model: {{[0-9.]+}} us against {{[0-9.]+}} us exact); planned within reduce-error-budget=0.00392: bf16 {{[0-9.]+}} us{{$}}
// BF16-LABEL: func.func @step
// BF16: %[[B:.*]] = arith.truncf %{{.*}} : tensor<4x16384xf32> to tensor<4x16384xbf16>
// BF16: %[[X:.*]] = zero.all_to_all %[[B]] on @dp axes = [0] : tensor<4x16384xbf16>
// BF16: %[[W:.*]] = arith.extf %[[X]] : tensor<4x16384xbf16> to tensor<4x16384xf32>
// BF16: linalg.reduce { arith.addf } ins(%[[W]] : tensor<4x16384xf32>)
// Within 0.003, none.
// NONE: remark: zero-compress-reduce-scatter: left exact: no format is within reduce-error-budget=0.003 over 1 hop(s)

zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @step
// CHECK: zero.quantize %{{.*}} block = 512 bits = 4
// CHECK-NOT: zero.reduce_scatter
func.func @step(%g: tensor<65536xf32>) -> tensor<16384xf32> {
  // expected-remark @+1 {{zero-compress-reduce-scatter: exchanged as int4 blocks of 512 over 4 ranks; each element is within the sum of max|block| / 14 of its contributions, not exact}}
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<65536xf32> -> tensor<16384xf32>
  return %gs : tensor<16384xf32>
}

// -----

zero.mesh @dp(shape = [4])

// The sum feeds a norm (a sum of squares): the plan keeps it exact.
// CHECK-LABEL: func.func @norm
// CHECK: zero.reduce_scatter
// CHECK-NOT: zero.all_to_all
func.func @norm(%g: tensor<65536xf32>) -> (tensor<16384xf32>, tensor<f32>) {
  // expected-remark @+1 {{zero-compress-reduce-scatter: left exact: its sum feeds a full reduction, a norm or a sum (linalg.reduce at}}
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<65536xf32> -> tensor<16384xf32>
  %sq = arith.mulf %gs, %gs : tensor<16384xf32>
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %n = linalg.reduce { arith.addf } ins(%sq : tensor<16384xf32>) outs(%i : tensor<f32>) dimensions = [0]
  return %gs, %n : tensor<16384xf32>, tensor<f32>
}

// -----

zero.mesh @dp(shape = [4])

// An inf check (an unordered compare, true for a NaN) keeps it exact too.
// CHECK-LABEL: func.func @inf_check
// CHECK: zero.reduce_scatter
func.func @inf_check(%g: tensor<65536xf32>) -> (tensor<16384xf32>, tensor<16384xi1>) {
  // expected-remark @+1 {{left exact: its sum feeds an inf check (arith.cmpf at}}
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<65536xf32> -> tensor<16384xf32>
  %d = arith.subf %gs, %gs : tensor<16384xf32>
  %bad = arith.cmpf uno, %d, %d : tensor<16384xf32>
  return %gs, %bad : tensor<16384xf32>, tensor<16384xi1>
}

// -----

zero.mesh @m(shape = [2, 4])

// Two hops double each format's bound: within 0.1, int4's 2/14 is out.
// CHECK-LABEL: func.func @two_hops
// CHECK: zero.quantize %{{.*}} block = 512 :
// CHECK-NOT: bits = 4
func.func @two_hops(%g: tensor<65536xf32>) -> tensor<8192xf32> {
  // expected-remark @+1 {{exchanged as int8 blocks of 512 over 8 ranks}}
  %gs = zero.reduce_scatter %g on @m reduce = sum : tensor<65536xf32> -> tensor<8192xf32>
  return %gs : tensor<8192xf32>
}
