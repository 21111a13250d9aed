// A step whose forward pass reads the weight elementwise (y = w * x) and
// whose SGD update reads the mean gradient: with stage 3, the read goes
// through a gather of the weight's shard.
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<1000xf32>, %g_local: tensor<1000xf32>,
                %x: tensor<1000xf32>) -> (tensor<1000xf32>, tensor<1000xf32>) {
  %lr = arith.constant dense<0.25> : tensor<1000xf32>
  %y = arith.mulf %w, %x : tensor<1000xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<1000xf32>
  %d = arith.mulf %g, %lr : tensor<1000xf32>
  %w2 = arith.subf %w, %d : tensor<1000xf32>
  return %w2, %y : tensor<1000xf32>, tensor<1000xf32>
}
