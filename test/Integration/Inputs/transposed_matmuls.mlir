// A linear layer's forward and backward with each transpose a
// linalg.transpose that a matmul reads: zero-normalize-matmuls
// folds all three into the matmuls' indexing maps.
func.func @layer(%x: tensor<3x5xbf16>, %w: tensor<7x5xbf16>,
                 %dy: tensor<3x7xf32>, %xf: tensor<3x5xf32>,
                 %a: tensor<5x2xf32>, %b: tensor<6x5xf32>)
    -> (tensor<3x7xf32>, tensor<7x5xf32>, tensor<2x6xf32>) {
  %zero = arith.constant 0.0 : f32
  // y = x W^T
  %wte = tensor.empty() : tensor<5x7xbf16>
  %wt = linalg.transpose ins(%w : tensor<7x5xbf16>) outs(%wte : tensor<5x7xbf16>) permutation = [1, 0]
  %ye = tensor.empty() : tensor<3x7xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<3x7xf32>) -> tensor<3x7xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<3x5xbf16>, tensor<5x7xbf16>) outs(%yz : tensor<3x7xf32>) -> tensor<3x7xf32>
  // dW = dy^T x
  %dyte = tensor.empty() : tensor<7x3xf32>
  %dyt = linalg.transpose ins(%dy : tensor<3x7xf32>) outs(%dyte : tensor<7x3xf32>) permutation = [1, 0]
  %ge = tensor.empty() : tensor<7x5xf32>
  %gz = linalg.fill ins(%zero : f32) outs(%ge : tensor<7x5xf32>) -> tensor<7x5xf32>
  %g = linalg.matmul ins(%dyt, %xf : tensor<7x3xf32>, tensor<3x5xf32>) outs(%gz : tensor<7x5xf32>) -> tensor<7x5xf32>
  // a^T b^T
  %ate = tensor.empty() : tensor<2x5xf32>
  %at = linalg.transpose ins(%a : tensor<5x2xf32>) outs(%ate : tensor<2x5xf32>) permutation = [1, 0]
  %bte = tensor.empty() : tensor<5x6xf32>
  %bt = linalg.transpose ins(%b : tensor<6x5xf32>) outs(%bte : tensor<5x6xf32>) permutation = [1, 0]
  %ce = tensor.empty() : tensor<2x6xf32>
  %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<2x6xf32>) -> tensor<2x6xf32>
  %c = linalg.matmul ins(%at, %bt : tensor<2x5xf32>, tensor<5x6xf32>) outs(%cz : tensor<2x6xf32>) -> tensor<2x6xf32>
  return %y, %g, %c : tensor<3x7xf32>, tensor<7x5xf32>, tensor<2x6xf32>
}
