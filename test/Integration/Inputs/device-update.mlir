// A momentum update with a step size computed at run time and no
// collective: the host only allocates and launches (see gpu-artifacts.test).
func.func @step(%w: tensor<1024xf32>, %m: tensor<1024xf32>, %g: tensor<1024xf32>, %lr: f32)
    -> (tensor<1024xf32>, tensor<1024xf32>) {
  %beta = arith.constant dense<0.9> : tensor<1024xf32>
  %lrs = tensor.splat %lr : tensor<1024xf32>
  %mb = arith.mulf %m, %beta : tensor<1024xf32>
  %m2 = arith.addf %mb, %g : tensor<1024xf32>
  %d = arith.mulf %m2, %lrs : tensor<1024xf32>
  %w2 = arith.subf %w, %d : tensor<1024xf32>
  return %w2, %m2 : tensor<1024xf32>, tensor<1024xf32>
}
