// A training loop that carries a bf16 model copy beside its fp32 master
// weights: the forward and backward passes read only the copy, and the
// update makes the next copy from the new master weights. At ZeRO stage 3
// the copy is a loop-carried shard too, gathered in bf16 where it is used.
zero.mesh @dp(shape = [4])

func.func @train(%w: tensor<8x6xf32>, %wb: tensor<8x6xbf16>,
                 %m: tensor<8x6xf32>, %x: tensor<4x8xbf16>)
    -> (tensor<8x6xf32>, tensor<8x6xbf16>, tensor<8x6xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %zero = arith.constant 0.0 : f32
  %beta = arith.constant dense<0.9> : tensor<8x6xf32>
  %lr = arith.constant dense<0.01> : tensor<8x6xf32>
  %r:3 = scf.for %i = %c0 to %c5 step %c1
      iter_args(%a = %w, %ab = %wb, %ma = %m)
      -> (tensor<8x6xf32>, tensor<8x6xbf16>, tensor<8x6xf32>) {
    // Forward on the bf16 copy: y = x ab.
    %e_y = tensor.empty() : tensor<4x6xf32>
    %f_y = linalg.fill ins(%zero : f32) outs(%e_y : tensor<4x6xf32>) -> tensor<4x6xf32>
    %y = linalg.matmul ins(%x, %ab : tensor<4x8xbf16>, tensor<8x6xbf16>)
                       outs(%f_y : tensor<4x6xf32>) -> tensor<4x6xf32>
    // Backward of 0.5 |y|^2: g = x^T y.
    %xf = arith.extf %x : tensor<4x8xbf16> to tensor<4x8xf32>
    %e_t = tensor.empty() : tensor<8x4xf32>
    %xt = linalg.transpose ins(%xf : tensor<4x8xf32>) outs(%e_t : tensor<8x4xf32>)
                           permutation = [1, 0]
    %e_g = tensor.empty() : tensor<8x6xf32>
    %f_g = linalg.fill ins(%zero : f32) outs(%e_g : tensor<8x6xf32>) -> tensor<8x6xf32>
    %g = linalg.matmul ins(%xt, %y : tensor<8x4xf32>, tensor<4x6xf32>)
                       outs(%f_g : tensor<8x6xf32>) -> tensor<8x6xf32>
    %gr = zero.all_reduce %g on @dp reduce = mean : tensor<8x6xf32>
    // Momentum SGD on the master weights; the next copy from them.
    %mb = arith.mulf %beta, %ma : tensor<8x6xf32>
    %mn = arith.addf %mb, %gr : tensor<8x6xf32>
    %u = arith.mulf %lr, %mn : tensor<8x6xf32>
    %an = arith.subf %a, %u : tensor<8x6xf32>
    %abn = arith.truncf %an : tensor<8x6xf32> to tensor<8x6xbf16>
    scf.yield %an, %abn, %mn : tensor<8x6xf32>, tensor<8x6xbf16>, tensor<8x6xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<8x6xf32>, tensor<8x6xbf16>, tensor<8x6xf32>
}
