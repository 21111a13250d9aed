// RUN: zero-opt %s --zero-weight-update-sharding='defer-all-gather bucket-bytes=0' | FileCheck %s

// defer-all-gather runs zero-defer-all-gather after the sharding: the weight
// read by the forward pass only as bf16 is carried as a shard and gathered in
// bf16.
zero.mesh @dp(shape = [4])

// CHECK-LABEL: func.func @loop
// CHECK: scf.for {{.*}} -> (tensor<3xf32>, tensor<10xbf16>)
// CHECK: zero.all_gather %{{.*}} on @dp : tensor<3xbf16> -> tensor<12xbf16>
func.func @loop(%w0: tensor<10xf32>, %x: tensor<10xbf16>) -> tensor<10xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %lr = arith.constant dense<0.1> : tensor<10xf32>
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%w = %w0) -> (tensor<10xf32>) {
    %wb = arith.truncf %w : tensor<10xf32> to tensor<10xbf16>
    %yb = arith.mulf %wb, %x : tensor<10xbf16>
    %gl = arith.extf %yb : tensor<10xbf16> to tensor<10xf32>
    %g = zero.all_reduce %gl on @dp reduce = mean : tensor<10xf32>
    %d = arith.mulf %g, %lr : tensor<10xf32>
    %w2 = arith.subf %w, %d : tensor<10xf32>
    scf.yield %w2 : tensor<10xf32>
  }
  return %r : tensor<10xf32>
}
