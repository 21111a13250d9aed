// zero-to-nvvm: each parallel loop nest a kernel, compiled for sm_90 and
// embedded; collectives are runtime calls and the host's buffers are managed
// memory. PTX (gpu-format=isa) needs no CUDA toolkit; a cubin needs ptxas.
// RUN: zero-opt %s --zero-to-nvvm='gpu-format=isa' | FileCheck %s
// RUN: zero-opt %s --zero-weight-update-sharding --zero-to-nvvm='gpu-format=isa' | FileCheck %s --check-prefix=SHARDED
// RUN: zero-opt %s --zero-to-nvvm='gpu-format=isa chip=sm_80 features=+ptx70' | FileCheck %s --check-prefix=SM80
// RUN: zero-opt %zero_src/examples/adamw.mlir --zero-weight-update-sharding=shard-function-boundary --zero-to-nvvm='gpu-format=isa' | FileCheck %s --check-prefix=BUCKET
// The same update in linalg form (one generic per op; fused and generalized)
// compiles to the same one fused kernel after the reduce-scatter.
// RUN: zero-opt %zero_src/examples/adamw.mlir --convert-elementwise-to-linalg | zero-opt --zero-weight-update-sharding=shard-function-boundary --zero-to-nvvm='gpu-format=isa' | FileCheck %s --check-prefix=BUCKET
// RUN: zero-opt %zero_src/examples/adamw.mlir --convert-elementwise-to-linalg --linalg-fuse-elementwise-ops --linalg-generalize-named-ops | zero-opt --zero-weight-update-sharding=shard-function-boundary --zero-to-nvvm='gpu-format=isa' | FileCheck %s --check-prefix=BUCKET
// mixed_precision's bf16 weight, offloaded: the host task rounds the new
// fp32 master to bf16 with integer arithmetic, as a CPU artifact does, not
// with LLVM's bf16 truncation, whose host lowering calls a function
// (__truncsfbf2) that Debian 12's libgcc lacks. On the device the kernel
// keeps the GPU's own conversion.
// RUN: zero-opt %zero_src/examples/mixed_precision.mlir --zero-weight-update-sharding='shard-function-boundary offload=optimizer' --zero-to-nvvm='gpu-format=isa cublas=false' 2>/dev/null | FileCheck %s --check-prefix=HOSTBF16
// RUN: zero-opt %zero_src/examples/mixed_precision.mlir --zero-weight-update-sharding=shard-function-boundary --zero-to-nvvm='gpu-format=isa cublas=false' | FileCheck %s --check-prefix=DEVICEBF16
// HOSTBF16-NOT: llvm.fptrunc {{.*}} to bf16
// HOSTBF16: llvm.func @step_host0(
// HOSTBF16: llvm.lshr
// HOSTBF16: llvm.trunc {{.*}} : i32 to i16
// HOSTBF16-NOT: llvm.fptrunc {{.*}} to bf16
// DEVICEBF16: cvt.rn.bf16.f32
// The MLP's six matmuls call cuBLAS through the runtime (cublas=false:
// loop nests, kernels of their own).
// RUN: zero-opt %zero_src/examples/mlp_training.mlir --zero-to-nvvm='gpu-format=isa' | FileCheck %s --check-prefix=CUBLAS
// RUN: zero-opt %zero_src/examples/mlp_training.mlir --zero-to-nvvm='gpu-format=isa cublas=false' | FileCheck %s --check-prefix=NOCUBLAS
// CUBLAS-COUNT-6: llvm.call @zero_rt_gpu_matmul(
// CUBLAS-NOT: llvm.call @zero_rt_gpu_matmul(
// NOCUBLAS-NOT: zero_rt_gpu_matmul
// Square roots are rounded as on the CPU (zero-gpu-ieee-sqrt), not
// libdevice's approximate ones.
// RUN: zero-opt %zero_src/examples/adagrad.mlir --zero-to-nvvm='gpu-format=isa' | FileCheck %s --check-prefix=SQRT
// SQRT: sqrt.rn.f32
// SQRT-NOT: sqrt.approx

// The gradient is all-reduced in place and the weight updated in place
// (donated to the result): the step allocates nothing.
// CHECK-LABEL: llvm.func @step(
// CHECK-NOT: zero_rt_gpu_alloc
// CHECK: llvm.call @zero_rt_all_reduce
// CHECK: gpu.launch_func <{{[^>]*}}> @step_kernel::@step_kernel blocks in ({{.*}}) threads in ({{.*}}) : i64 args(
// CHECK-NOT: gpu.launch_func
// CHECK-NOT: zero_rt_gpu_free
// CHECK: llvm.return
// CHECK: gpu.binary @step_kernel {{.*}}#gpu.object<#nvvm.target<O = 3, chip = "sm_90", features = "+ptx80">
// CHECK-SAME: .target sm_90

// After sharding: a reduce-scatter, the update kernel on the shard, an
// all-gather.
// SHARDED-LABEL: llvm.func @step(
// SHARDED: llvm.call @zero_rt_reduce_scatter
// SHARDED: gpu.launch_func
// SHARDED: llvm.call @zero_rt_all_gather

// The example's bucket holds a weight (23 elements a shard) and a bias (2),
// whose updates differ (the bias does not decay): after the reduce-scatter,
// both are one kernel (zero-fuse-elementwise makes each update one loop
// nest, zero-fuse-independent-loops merges the two).
// BUCKET-LABEL: llvm.func @step(
// BUCKET: llvm.call @zero_rt_reduce_scatter
// BUCKET: gpu.launch_func
// BUCKET-NOT: gpu.launch_func
// BUCKET: llvm.return

// SM80: chip = "sm_80"
// SM80-SAME: .target sm_80

zero.mesh @dp(shape = [4])
func.func @step(%w: tensor<1024xf32>, %g_local: tensor<1024xf32>)
    -> tensor<1024xf32> {
  %lr = arith.constant dense<0.1> : tensor<1024xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<1024xf32>
  %d = arith.mulf %g, %lr : tensor<1024xf32>
  %w2 = arith.subf %w, %d : tensor<1024xf32>
  return %w2 : tensor<1024xf32>
}

// AdamW's whole update of the shard (both moments and the weight, from the
// reduce-scattered gradient) is one kernel (zero-fuse-elementwise), the
// first after the reduce-scatter. The kernels after it fill the gather's
// bucket and copy the new shards into it, and after the gather one kernel
// copies the three weights out (zero-fuse-independent-loops merges the three
// copies): copies between buffers are kernels too (zero-gpu-copies), so the
// host copies nothing. The collectives run on the device, ordered on the
// rank's stream, so the host waits for the stream once, before it returns
// (zero-gpu-defer-host-waits).
// SHARDED-LABEL: llvm.func @adamw(
// SHARDED-NOT: {{llvm.intr.memcpy|mgpuStreamSynchronize}}
// SHARDED: llvm.call @zero_rt_reduce_scatter
// SHARDED-NOT: {{llvm.intr.memcpy|gpu.launch_func|mgpuStreamSynchronize}}
// SHARDED: gpu.launch_func <{{[^>]*}}> @adamw_kernel::@adamw_kernel
// SHARDED-NOT: {{llvm.intr.memcpy|mgpuStreamSynchronize}}
// SHARDED: gpu.launch_func <{{[^>]*}}> @adamw_kernel_2::@adamw_kernel
// SHARDED-NOT: {{llvm.intr.memcpy|mgpuStreamSynchronize}}
// SHARDED: llvm.call @zero_rt_all_gather
// SHARDED-NOT: {{llvm.intr.memcpy|gpu.launch_func|mgpuStreamSynchronize}}
// SHARDED: gpu.launch_func <{{[^>]*}}> @adamw_kernel_3::@adamw_kernel
// SHARDED-NOT: {{llvm.intr.memcpy|gpu.launch_func}}
// SHARDED: llvm.call @mgpuStreamSynchronize
// SHARDED-NOT: {{llvm.intr.memcpy|gpu.launch_func|mgpuStreamSynchronize}}
// SHARDED: llvm.return
func.func @adamw(%w: tensor<1024xf32>, %m: tensor<1024xf32>, %v: tensor<1024xf32>, %g_local: tensor<1024xf32>)
    -> (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>) {
  %b1 = arith.constant dense<0.9> : tensor<1024xf32>
  %c1 = arith.constant dense<0.1> : tensor<1024xf32>
  %b2 = arith.constant dense<0.999> : tensor<1024xf32>
  %c2 = arith.constant dense<0.001> : tensor<1024xf32>
  %eps = arith.constant dense<1.0e-8> : tensor<1024xf32>
  %lr = arith.constant dense<0.001> : tensor<1024xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<1024xf32>
  %ma = arith.mulf %m, %b1 : tensor<1024xf32>
  %mb = arith.mulf %g, %c1 : tensor<1024xf32>
  %m2 = arith.addf %ma, %mb : tensor<1024xf32>
  %va = arith.mulf %v, %b2 : tensor<1024xf32>
  %gg = arith.mulf %g, %g : tensor<1024xf32>
  %vb = arith.mulf %gg, %c2 : tensor<1024xf32>
  %v2 = arith.addf %va, %vb : tensor<1024xf32>
  %s = math.sqrt %v2 : tensor<1024xf32>
  %den = arith.addf %s, %eps : tensor<1024xf32>
  %u = arith.divf %m2, %den : tensor<1024xf32>
  %d = arith.mulf %u, %lr : tensor<1024xf32>
  %w2 = arith.subf %w, %d : tensor<1024xf32>
  return %w2, %m2, %v2 : tensor<1024xf32>, tensor<1024xf32>, tensor<1024xf32>
}

// A norm runs on the device, in zero's one order (zero-order-reductions):
// the fill of the 64 partials, the partials of 64 blocks of 64 elements
// (the squares fused in, a thread a block) and their combine with the
// initial value (one thread) are kernels, and the host has no loop of its
// own. The initial value, a constant, folds into the combine kernel as an
// argument, so every buffer is device memory and the host waits for the
// stream only before it returns (zero-gpu-defer-host-waits).
// CHECK-LABEL: llvm.func @norm(
// CHECK-NOT: llvm.cond_br
// CHECK: gpu.launch_func <{{[^>]*}}> @norm_kernel::@norm_kernel
// CHECK-NOT: {{llvm.cond_br|mgpuStreamSynchronize}}
// CHECK: gpu.launch_func <{{[^>]*}}> @norm_kernel_0::@norm_kernel
// CHECK-NOT: {{llvm.cond_br|mgpuStreamSynchronize}}
// CHECK: gpu.launch_func <{{[^>]*}}> @norm_kernel_1::@norm_kernel
// CHECK-NOT: {{llvm.cond_br|gpu.launch_func}}
// CHECK: llvm.call @mgpuStreamSynchronize
// CHECK: llvm.return
func.func @norm(%x: tensor<4096xf32>) -> tensor<f32> {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %sq = arith.mulf %x, %x : tensor<4096xf32>
  %n = linalg.reduce ins(%sq : tensor<4096xf32>) outs(%zero : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %n : tensor<f32>
}
