// Plain SGD on two parameters: a 7x13 weight (91 elements, which no mesh of
// 2, 3, 4 or 8 divides) and a 5-element bias. One replica's step: the local
// gradients are all-reduced (mean) and every rank applies w - lr * g.
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %b: tensor<5xf32>,
                %gw_local: tensor<7x13xf32>, %gb_local: tensor<5xf32>)
    -> (tensor<7x13xf32>, tensor<5xf32>) {
  %lr_w = arith.constant dense<0.1> : tensor<7x13xf32>
  %lr_b = arith.constant dense<0.1> : tensor<5xf32>
  %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<7x13xf32>
  %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>
  %dw = arith.mulf %gw, %lr_w : tensor<7x13xf32>
  %w2 = arith.subf %w, %dw : tensor<7x13xf32>
  %db = arith.mulf %gb, %lr_b : tensor<5xf32>
  %b2 = arith.subf %b, %db : tensor<5xf32>
  return %w2, %b2 : tensor<7x13xf32>, tensor<5xf32>
}
