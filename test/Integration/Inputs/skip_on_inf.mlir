// A step that skips the update when this rank's gradient is not finite, and
// checks it before the all-reduce: a rank whose gradient has an inf skips
// the all-reduce that the others wait in.
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<1024xf32>, %g_local: tensor<1024xf32>) -> tensor<1024xf32> {
  %zero = arith.constant 0.0 : f32
  %lr = arith.constant dense<0.01> : tensor<1024xf32>
  %init = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%g_local : tensor<1024xf32>) outs(%acc : tensor<f32>) dimensions = [0]
    (%x: f32, %s: f32) {
      %t = arith.addf %x, %s : f32
      linalg.yield %t : f32
    }
  %total = tensor.extract %sum[] : tensor<f32>
  %ok = math.isfinite %total : f32
  %w2 = scf.if %ok -> tensor<1024xf32> {
    %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<1024xf32>
    %d = arith.mulf %g, %lr : tensor<1024xf32>
    %w3 = arith.subf %w, %d : tensor<1024xf32>
    scf.yield %w3 : tensor<1024xf32>
  } else {
    scf.yield %w : tensor<1024xf32>
  }
  return %w2 : tensor<1024xf32>
}
