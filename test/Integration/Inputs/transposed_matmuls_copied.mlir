// transposed_matmuls.mlir with each transpose a copy (a linalg.generic that
// zero-normalize-matmuls does not read through): the matmuls
// read transposed copies, as they did before the fold.
func.func @layer(%x: tensor<3x5xbf16>, %w: tensor<7x5xbf16>,
                 %dy: tensor<3x7xf32>, %xf: tensor<3x5xf32>,
                 %a: tensor<5x2xf32>, %b: tensor<6x5xf32>)
    -> (tensor<3x7xf32>, tensor<7x5xf32>, tensor<2x6xf32>) {
  %zero = arith.constant 0.0 : f32
  // y = x W^T
  %wte = tensor.empty() : tensor<5x7xbf16>
  %wt = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%w : tensor<7x5xbf16>) outs(%wte : tensor<5x7xbf16>) {
  ^bb0(%in: bf16, %out: bf16):
    linalg.yield %in : bf16
  } -> tensor<5x7xbf16>
  %ye = tensor.empty() : tensor<3x7xf32>
  %yz = linalg.fill ins(%zero : f32) outs(%ye : tensor<3x7xf32>) -> tensor<3x7xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<3x5xbf16>, tensor<5x7xbf16>) outs(%yz : tensor<3x7xf32>) -> tensor<3x7xf32>
  // dW = dy^T x
  %dyte = tensor.empty() : tensor<7x3xf32>
  %dyt = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%dy : tensor<3x7xf32>) outs(%dyte : tensor<7x3xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<7x3xf32>
  %ge = tensor.empty() : tensor<7x5xf32>
  %gz = linalg.fill ins(%zero : f32) outs(%ge : tensor<7x5xf32>) -> tensor<7x5xf32>
  %g = linalg.matmul ins(%dyt, %xf : tensor<7x3xf32>, tensor<3x5xf32>) outs(%gz : tensor<7x5xf32>) -> tensor<7x5xf32>
  // a^T b^T
  %ate = tensor.empty() : tensor<2x5xf32>
  %at = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<5x2xf32>) outs(%ate : tensor<2x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<2x5xf32>
  %bte = tensor.empty() : tensor<5x6xf32>
  %bt = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<6x5xf32>) outs(%bte : tensor<5x6xf32>) {
  ^bb0(%in: f32, %out: f32):
    linalg.yield %in : f32
  } -> tensor<5x6xf32>
  %ce = tensor.empty() : tensor<2x6xf32>
  %cz = linalg.fill ins(%zero : f32) outs(%ce : tensor<2x6xf32>) -> tensor<2x6xf32>
  %c = linalg.matmul ins(%at, %bt : tensor<2x5xf32>, tensor<5x6xf32>) outs(%cz : tensor<2x6xf32>) -> tensor<2x6xf32>
  return %y, %g, %c : tensor<3x7xf32>, tensor<7x5xf32>, tensor<2x6xf32>
}
