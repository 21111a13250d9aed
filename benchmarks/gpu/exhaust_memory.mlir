// A step that needs more GPU memory than any GPU has: a 2^34 x 4 f32
// intermediate (256 GiB) that every rank allocates. check.sh runs it to
// show that exhausted device memory ends every rank with a message naming
// the allocation, and hangs none.
zero.mesh @dp(shape = [4])

func.func @step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %empty = tensor.empty() : tensor<17179869184x4xf32>
  %wide = linalg.broadcast ins(%x : tensor<4xf32>)
                           outs(%empty : tensor<17179869184x4xf32>)
                           dimensions = [0]
  %zero = arith.constant 0.0 : f32
  %init = tensor.empty() : tensor<4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%init : tensor<4xf32>) -> tensor<4xf32>
  %sum = linalg.reduce ins(%wide : tensor<17179869184x4xf32>)
                       outs(%acc : tensor<4xf32>) dimensions = [0]
    (%in: f32, %out: f32) {
      %s = arith.addf %in, %out : f32
      linalg.yield %s : f32
    }
  %all = zero.all_reduce %sum on @dp reduce = sum : tensor<4xf32>
  return %all : tensor<4xf32>
}
