// zero-offload-to-host on SGD with its gradients' global norm clipped,
// delayed and offloaded at N = 4: all of the host's work goes to the
// rank's host queue and none follows the rank's wait, which comes once, at
// the end. The updates of the weight and the bias are one host nest
// (zero-fuse-independent-loops merges them), queued first. The sum of the
// norm's partial sums, which the next step's clipping reads (host state,
// delayed), waits for their gather and goes to the queue with its two
// copies in, each through a staging buffer that the queue frees. The
// kernels that read the gather are not merged with those that do not, so
// nothing else waits for it.
// RUN: zero-opt %s --zero-weight-update-sharding='shard-function-boundary overlap delay-update offload=optimizer' 2>/dev/null | zero-opt --mlir-disable-threading --zero-to-llvm=gpu-loops --mlir-print-ir-after=zero-offload-to-host -o /dev/null 2>&1 | FileCheck %s

// CHECK: remark: zero-offload-to-host: @step: 2 loop nest(s) on the host, 2 device buffer(s) copied; 4 op(s) on the rank's host queue beside its stream (1 update(s) with their copies, in 1 chunk(s) by the cost model), 3 buffer(s) freed once copied down, 2 host staging buffer(s) freed by the queue, 0 after a wait, 1 wait(s), 0 op(s) moved after one
// CHECK-LABEL: IR Dump After ZeroOffloadToHost
// CHECK: func.func @step
// CHECK: call @zero_rt_host_queue_for
// CHECK: zero.all_gather_buffer
// CHECK: %[[SCALE:.*]] = zero.host_alloc staging : memref<1x1xf32>
// CHECK-NEXT: %[[SUMS:.*]] = zero.host_alloc staging : memref<1xf32>
// CHECK: %[[IN:.*]] = arith.constant 2 : i64
// CHECK-NEXT: %[[OUT:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[CHUNK:.*]] = arith.constant 0 : i64
// CHECK-NEXT: %[[STAGED:.*]] = arith.constant 0 : i64
// CHECK-NEXT: call @zero_rt_host_queue_update(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %[[IN]], %[[OUT]], %[[CHUNK]], %{{.*}}, %[[STAGED]])
// CHECK: memref.dealloc %[[SCALE]] {zero.queued, zero.staging}
// CHECK-NEXT: memref.dealloc %[[SUMS]] {zero.queued, zero.staging}
// CHECK-NOT: zero_rt_parallel_for
// CHECK-NOT: zero_rt_host_queue_wait
// CHECK: call @zero_rt_host_queue_join
// CHECK-NEXT: return
zero.mesh @dp(shape = [4])
func.func @step(%w: tensor<7x13xf32>, %b: tensor<5xf32>,
                %gw_local: tensor<7x13xf32>, %gb_local: tensor<5xf32>)
    -> (tensor<7x13xf32>, tensor<5xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %max_norm = arith.constant 0.5 : f32
  %tiny = arith.constant 1.0e-6 : f32
  %lr_w = arith.constant dense<0.1> : tensor<7x13xf32>
  %lr_b = arith.constant dense<0.1> : tensor<5xf32>
  %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<7x13xf32>
  %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %gw2 = arith.mulf %gw, %gw : tensor<7x13xf32>
  %gw_flat = tensor.collapse_shape %gw2 [[0, 1]] : tensor<7x13xf32> into tensor<91xf32>
  %sw = linalg.reduce ins(%gw_flat : tensor<91xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %gb2 = arith.mulf %gb, %gb : tensor<5xf32>
  %sb = linalg.reduce ins(%gb2 : tensor<5xf32>) outs(%sw : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %sq = tensor.extract %sb[] : tensor<f32>
  %norm = math.sqrt %sq : f32
  %den = arith.addf %norm, %tiny : f32
  %ratio = arith.divf %max_norm, %den : f32
  %scale = arith.minimumf %ratio, %one : f32
  %scale_w = tensor.splat %scale : tensor<7x13xf32>
  %cw = arith.mulf %gw, %scale_w : tensor<7x13xf32>
  %dw = arith.mulf %cw, %lr_w : tensor<7x13xf32>
  %w2 = arith.subf %w, %dw : tensor<7x13xf32>
  %scale_b = tensor.splat %scale : tensor<5xf32>
  %cb = arith.mulf %gb, %scale_b : tensor<5xf32>
  %db = arith.mulf %cb, %lr_b : tensor<5xf32>
  %b2 = arith.subf %b, %db : tensor<5xf32>
  return %w2, %b2 : tensor<7x13xf32>, tensor<5xf32>
}
