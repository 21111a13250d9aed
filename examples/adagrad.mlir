// Adagrad: s' = s + g^2,  w' = w - lr * g / (sqrt(s') + eps)
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %s: tensor<7x13xf32>,
                %g_local: tensor<7x13xf32>)
    -> (tensor<7x13xf32>, tensor<7x13xf32>) {
  %lr = arith.constant dense<0.01> : tensor<7x13xf32>
  %eps = arith.constant dense<1.0e-10> : tensor<7x13xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<7x13xf32>
  %gg = arith.mulf %g, %g : tensor<7x13xf32>
  %s2 = arith.addf %s, %gg : tensor<7x13xf32>
  %root = math.sqrt %s2 : tensor<7x13xf32>
  %den = arith.addf %root, %eps : tensor<7x13xf32>
  %q = arith.divf %g, %den : tensor<7x13xf32>
  %d = arith.mulf %q, %lr : tensor<7x13xf32>
  %w2 = arith.subf %w, %d : tensor<7x13xf32>
  return %w2, %s2 : tensor<7x13xf32>, tensor<7x13xf32>
}
