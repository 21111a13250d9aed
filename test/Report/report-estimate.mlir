// zero-report's cost-model estimate, before and after zero-schedule-overlap.
// Two 64x64x64 matmuls cost 2*64^3 FLOP / 50 GFLOP/s = 10.5 us each; the
// reduce-scatter of 4096 f32 on 4 ranks sends 3/4 * 16384 B: 20 us latency
// + 12288 B / 10 GB/s = 21.2 us; the update, 1024 elements / 2 G/s = 0.5 us.
// RUN: zero-opt %s --zero-report -o /dev/null | FileCheck %s --check-prefix=SYNC
// RUN: zero-opt %s --zero-schedule-overlap --zero-report -o /dev/null | FileCheck %s --check-prefix=OVERLAP
// RUN: zero-opt %s --zero-report='latency-us=0 bandwidth-gbps=1 gflops=100' -o /dev/null | FileCheck %s --check-prefix=PARAMS
// RUN: zero-opt %s --zero-schedule-overlap --zero-report=format=json -o /dev/null | FileCheck %s --check-prefix=JSON
// RUN: not zero-opt %s --zero-report=gflops=-1 -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Synchronous: everything adds up and all communication is exposed.
// SYNC-LABEL: zero-report: @backward
// SYNC: estimated time per call: 42.7 us (computation 21.5 us, communication 21.2 us)
// SYNC-NEXT: exposed communication: 21.2 us, 0% of communication hidden

// Scheduled: the reduce-scatter starts after the first matmul and runs
// during the second, so 10.5 of its 21.2 us are hidden.
// OVERLAP-LABEL: zero-report: @backward
// OVERLAP: estimated time per call: 32.2 us (computation 21.5 us, communication 21.2 us)
// OVERLAP-NEXT: exposed communication: 10.7 us, 49% of communication hidden

// 12288 B / 1 GB/s, no latency; 5.2 us per matmul.
// PARAMS: estimated time per call: 23.3 us (computation 11.0 us, communication 12.3 us)

// JSON: "estimate": {
// JSON-NEXT: "communication_seconds": 2.12287{{[0-9]*}}e-05,
// JSON-NEXT: "compute_seconds": 2.14835{{[0-9]*}}e-05,
// JSON-NEXT: "exposed_seconds": 1.07430{{[0-9]*}}e-05,
// JSON-NEXT: "hidden_share": 0.49{{[0-9]*}},
// JSON-NEXT: "step_seconds": 3.22265{{[0-9]*}}e-05

// BAD: error: zero-report: the cost model's rates must be positive and its latency not negative

zero.mesh @dp(shape = [4])

func.func @backward(%x: tensor<64x64xf32>, %gy: tensor<64x64xf32>, %ws: tensor<1024xf32>) -> (tensor<1024xf32>, tensor<64x64xf32>) {
  %e = tensor.empty() : tensor<64x64xf32>
  %gw = linalg.matmul ins(%x, %gy : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  %flat = tensor.collapse_shape %gw [[0, 1]] : tensor<64x64xf32> into tensor<4096xf32>
  %s = zero.reduce_scatter %flat on @dp reduce = mean : tensor<4096xf32> -> tensor<1024xf32>
  %w2 = arith.subf %ws, %s : tensor<1024xf32>
  %gx = linalg.matmul ins(%gy, %x : tensor<64x64xf32>, tensor<64x64xf32>) outs(%e : tensor<64x64xf32>) -> tensor<64x64xf32>
  return %w2, %gx : tensor<1024xf32>, tensor<64x64xf32>
}
