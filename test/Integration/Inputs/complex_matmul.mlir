// A matmul of complex numbers, built from and taken apart into f32 parts.
// a = [[1+2i, 3-i], [i, 2]], b = [[2, i], [1+i, -1]].
func.func @step() -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %are = arith.constant dense<[[1.0, 3.0], [0.0, 2.0]]> : tensor<2x2xf32>
  %aim = arith.constant dense<[[2.0, -1.0], [1.0, 0.0]]> : tensor<2x2xf32>
  %bre = arith.constant dense<[[2.0, 0.0], [1.0, -1.0]]> : tensor<2x2xf32>
  %bim = arith.constant dense<[[0.0, 1.0], [1.0, 0.0]]> : tensor<2x2xf32>
  %a = call @make(%are, %aim) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xcomplex<f32>>
  %b = call @make(%bre, %bim) : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xcomplex<f32>>
  %zero = complex.constant [0.0 : f32, 0.0 : f32] : complex<f32>
  %e = tensor.empty() : tensor<2x2xcomplex<f32>>
  %z = linalg.fill ins(%zero : complex<f32>) outs(%e : tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  %c = linalg.matmul ins(%a, %b : tensor<2x2xcomplex<f32>>, tensor<2x2xcomplex<f32>>) outs(%z : tensor<2x2xcomplex<f32>>) -> tensor<2x2xcomplex<f32>>
  %er = tensor.empty() : tensor<2x2xf32>
  %re, %im = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%c : tensor<2x2xcomplex<f32>>) outs(%er, %er : tensor<2x2xf32>, tensor<2x2xf32>) {
  ^bb0(%v: complex<f32>, %o0: f32, %o1: f32):
    %r = complex.re %v : complex<f32>
    %i = complex.im %v : complex<f32>
    linalg.yield %r, %i : f32, f32
  } -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return %re, %im : tensor<2x2xf32>, tensor<2x2xf32>
}

func.func private @make(%re: tensor<2x2xf32>, %im: tensor<2x2xf32>) -> tensor<2x2xcomplex<f32>> {
  %e = tensor.empty() : tensor<2x2xcomplex<f32>>
  %c = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} ins(%re, %im : tensor<2x2xf32>, tensor<2x2xf32>) outs(%e : tensor<2x2xcomplex<f32>>) {
  ^bb0(%r: f32, %i: f32, %o: complex<f32>):
    %v = complex.create %r, %i : complex<f32>
    linalg.yield %v : complex<f32>
  } -> tensor<2x2xcomplex<f32>>
  return %c : tensor<2x2xcomplex<f32>>
}
