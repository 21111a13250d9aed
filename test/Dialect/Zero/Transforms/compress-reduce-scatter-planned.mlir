// zero-compress-reduce-scatter{only-where-faster} (reduce-dtype=auto): a
// reduce-scatter is compressed only where the cost model gives the
// compressed exchange less time. Slow bytes and fast arithmetic: compressed.
// Bytes at memory speed and slow arithmetic: left exact. Both say why.
// RUN: zero-opt %s --zero-compress-reduce-scatter='quantize-block=512 only-where-faster bandwidth-gbps=0.1 gflops=1000 gelements-per-s=100' 2>&1 | FileCheck %s --check-prefix=SLOW
// RUN: zero-opt %s --zero-compress-reduce-scatter='quantize-block=512 only-where-faster bandwidth-gbps=100 gflops=1 gelements-per-s=1' 2>&1 | FileCheck %s --check-prefix=FAST
// RUN: not zero-opt %s --zero-compress-reduce-scatter='only-where-faster bandwidth-gbps=0' 2>&1 | FileCheck %s --check-prefix=BAD

// SLOW: remark: zero-compress-reduce-scatter: exchanged as int8 blocks of 512 over 4 ranks; each element is within the sum of max|block| / 254 of its contributions, not exact (cost model: {{[0-9.]+}} us against {{[0-9.]+}} us exact)
// SLOW-LABEL: func.func @step
// SLOW: zero.all_to_all
// SLOW-NOT: zero.reduce_scatter

// FAST: remark: zero-compress-reduce-scatter: left exact: the cost model gives {{[0-9.]+}} us exact against {{[0-9.]+}} us compressed in int8 blocks of 512
// FAST-LABEL: func.func @step
// FAST-NOT: zero.quantize
// FAST-NOT: zero.all_to_all
// FAST: zero.reduce_scatter
// FAST-NOT: zero.all_to_all

// BAD: error: zero-compress-reduce-scatter: the cost model's rates must be positive

zero.mesh @dp(shape = [4])

func.func @step(%g: tensor<65536xf32>) -> tensor<16384xf32> {
  %gs = zero.reduce_scatter %g on @dp reduce = sum : tensor<65536xf32> -> tensor<16384xf32>
  return %gs : tensor<16384xf32>
}
