// Mixed precision: bf16 gradients are all-reduced in bf16, widened to f32 and
// applied to fp32 master weights with momentum; the model's bf16 weights are
// the rounded master weights.
zero.mesh @dp(shape = [4])

func.func @step(%master: tensor<7x13xf32>, %m: tensor<7x13xf32>,
                %g_local: tensor<7x13xbf16>)
    -> (tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xbf16>) {
  %beta = arith.constant dense<0.9> : tensor<7x13xf32>
  %lr = arith.constant dense<0.01> : tensor<7x13xf32>
  %g16 = zero.all_reduce %g_local on @dp reduce = sum : tensor<7x13xbf16>
  %g = arith.extf %g16 : tensor<7x13xbf16> to tensor<7x13xf32>
  %m_decay = arith.mulf %m, %beta : tensor<7x13xf32>
  %m2 = arith.addf %m_decay, %g : tensor<7x13xf32>
  %d = arith.mulf %m2, %lr : tensor<7x13xf32>
  %master2 = arith.subf %master, %d : tensor<7x13xf32>
  %model = arith.truncf %master2 : tensor<7x13xf32> to tensor<7x13xbf16>
  return %master2, %m2, %model
      : tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xbf16>
}
