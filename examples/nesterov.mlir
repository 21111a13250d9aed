// SGD with Nesterov momentum (PyTorch's form):
//   m' = mu * m + g,   w' = w - lr * (g + mu * m')
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %m: tensor<7x13xf32>,
                %g_local: tensor<7x13xf32>)
    -> (tensor<7x13xf32>, tensor<7x13xf32>) {
  %mu = arith.constant dense<0.9> : tensor<7x13xf32>
  %lr = arith.constant dense<0.05> : tensor<7x13xf32>
  %g = zero.all_reduce %g_local on @dp reduce = sum : tensor<7x13xf32>
  %m_decay = arith.mulf %m, %mu : tensor<7x13xf32>
  %m2 = arith.addf %m_decay, %g : tensor<7x13xf32>
  %look = arith.mulf %m2, %mu : tensor<7x13xf32>
  %dir = arith.addf %g, %look : tensor<7x13xf32>
  %d = arith.mulf %dir, %lr : tensor<7x13xf32>
  %w2 = arith.subf %w, %d : tensor<7x13xf32>
  return %w2, %m2 : tensor<7x13xf32>, tensor<7x13xf32>
}
