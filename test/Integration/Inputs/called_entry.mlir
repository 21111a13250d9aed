// An artifact's entry that another function of the program calls:
// zero-compile --entry=step keeps @step for @twice, which calls it.
zero.mesh @dp(shape = [2])

func.func @step(%w: tensor<7x13xf32>, %g_local: tensor<7x13xf32>)
    -> tensor<7x13xf32> {
  %lr = arith.constant dense<0.1> : tensor<7x13xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<7x13xf32>
  %d = arith.mulf %g, %lr : tensor<7x13xf32>
  %w2 = arith.subf %w, %d : tensor<7x13xf32>
  return %w2 : tensor<7x13xf32>
}

func.func @twice(%w: tensor<7x13xf32>, %g_local: tensor<7x13xf32>)
    -> tensor<7x13xf32> {
  %w1 = func.call @step(%w, %g_local)
      : (tensor<7x13xf32>, tensor<7x13xf32>) -> tensor<7x13xf32>
  %w2 = func.call @step(%w1, %g_local)
      : (tensor<7x13xf32>, tensor<7x13xf32>) -> tensor<7x13xf32>
  return %w2 : tensor<7x13xf32>
}
