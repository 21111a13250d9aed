// A momentum update with a step size computed at run time and no
// collective: the host only allocates and launches (see gpu-artifacts.test).
// The state is updated in place; the bf16 copy of the new weights is a
// buffer the step allocates.
func.func @step(%w: tensor<1024xf32>, %m: tensor<1024xf32>, %g: tensor<1024xf32>, %lr: f32)
    -> (tensor<1024xf32>, tensor<1024xf32>, tensor<1024xbf16>) {
  %beta = arith.constant dense<0.9> : tensor<1024xf32>
  %lrs = tensor.splat %lr : tensor<1024xf32>
  %mb = arith.mulf %m, %beta : tensor<1024xf32>
  %m2 = arith.addf %mb, %g : tensor<1024xf32>
  %d = arith.mulf %m2, %lrs : tensor<1024xf32>
  %w2 = arith.subf %w, %d : tensor<1024xf32>
  %wb = arith.truncf %w2 : tensor<1024xf32> to tensor<1024xbf16>
  return %w2, %m2, %wb : tensor<1024xf32>, tensor<1024xf32>, tensor<1024xbf16>
}
