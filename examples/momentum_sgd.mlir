// One replica's training step: the gradient is all-reduced across the 8 data
// parallel ranks, then every rank applies momentum SGD to the whole weight.
// This is the program zero starts from: plain arith on tensors, no annotation
// saying which part is the optimizer.
zero.mesh @dp(shape = [8])

func.func @step(%w: tensor<1000x512xf32>, %m: tensor<1000x512xf32>,
                %g_local: tensor<1000x512xf32>)
    -> (tensor<1000x512xf32>, tensor<1000x512xf32>) {
  %beta = arith.constant dense<0.9> : tensor<1000x512xf32>
  %lr = arith.constant dense<0.01> : tensor<1000x512xf32>
  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<1000x512xf32>
  // Momentum SGD, written out.
  %m1 = arith.mulf %m, %beta : tensor<1000x512xf32>
  %m2 = arith.addf %m1, %g : tensor<1000x512xf32>
  %d = arith.mulf %m2, %lr : tensor<1000x512xf32>
  %w2 = arith.subf %w, %d : tensor<1000x512xf32>
  return %w2, %m2 : tensor<1000x512xf32>, tensor<1000x512xf32>
}
