// A scale layer's step: y = x * w, w broadcast over the batch's rows; the
// gradient y * x summed over the rows (a reduction over the first
// dimension), plus a 3-D tensor summed over its first and last dimensions;
// the sum all-reduced (mean) and an SGD update. The mesh's size is set by
// the test.
zero.mesh @dp(shape = [4])
func.func @step(%w: tensor<6xf32>, %x: tensor<5x6xf32>, %z: tensor<3x6x7xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %wbe = tensor.empty() : tensor<5x6xf32>
  %wb = linalg.broadcast ins(%w : tensor<6xf32>) outs(%wbe : tensor<5x6xf32>) dimensions = [0]
  %y = arith.mulf %x, %wb : tensor<5x6xf32>
  %dw = arith.mulf %y, %x : tensor<5x6xf32>
  %zero = arith.constant 0.0 : f32
  %acce = tensor.empty() : tensor<6xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acce : tensor<6xf32>) -> tensor<6xf32>
  %g = linalg.reduce ins(%dw : tensor<5x6xf32>) outs(%acc : tensor<6xf32>) dimensions = [0]
    (%a: f32, %s: f32) {
      %t = arith.addf %a, %s : f32
      linalg.yield %t : f32
    }
  %acc2e = tensor.empty() : tensor<6xf32>
  %acc2 = linalg.fill ins(%zero : f32) outs(%acc2e : tensor<6xf32>) -> tensor<6xf32>
  %h = linalg.reduce ins(%z : tensor<3x6x7xf32>) outs(%acc2 : tensor<6xf32>) dimensions = [0, 2]
    (%a: f32, %s: f32) {
      %t = arith.addf %a, %s : f32
      linalg.yield %t : f32
    }
  %gh = arith.addf %g, %h : tensor<6xf32>
  %gm = zero.all_reduce %gh on @dp reduce = mean : tensor<6xf32>
  %lr = arith.constant dense<0.1> : tensor<6xf32>
  %step = arith.mulf %lr, %gm : tensor<6xf32>
  %w1 = arith.subf %w, %step : tensor<6xf32>
  return %w1, %h : tensor<6xf32>, tensor<6xf32>
}
