// A step with no state: its one result, a mean of every rank's gradient's
// sum, is the next value of no argument.
zero.mesh @dp(shape = [2])
func.func @step(%g: tensor<6xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.reduce ins(%g : tensor<6xf32>) outs(%acc : tensor<f32>) dimensions = [0]
    (%a: f32, %b: f32) {
      %t = arith.addf %a, %b : f32
      linalg.yield %t : f32
    }
  %m = zero.all_reduce %s on @dp reduce = mean : tensor<f32>
  return %m : tensor<f32>
}
