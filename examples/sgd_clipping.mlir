// SGD with global-norm gradient clipping across both parameters:
//   n = sqrt(sum(gw^2) + sum(gb^2)),  s = min(1, c / (n + 1e-6)),
//   w' = w - lr * s * gw,  b' = b - lr * s * gb
// The norm is a full reduction over every gradient; zero-shard-weight-update
// turns it into partial sums of squares on each rank's shard plus an
// all-reduce of the partials (one per gradient, chained through the init).
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %b: tensor<5xf32>,
                %gw_local: tensor<7x13xf32>, %gb_local: tensor<5xf32>)
    -> (tensor<7x13xf32>, tensor<5xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %max_norm = arith.constant 0.5 : f32
  %tiny = arith.constant 1.0e-6 : f32
  %lr_w = arith.constant dense<0.1> : tensor<7x13xf32>
  %lr_b = arith.constant dense<0.1> : tensor<5xf32>
  %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<7x13xf32>
  %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>

  // Squared norms of both gradients.
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %gw2 = arith.mulf %gw, %gw : tensor<7x13xf32>
  %gw_flat = tensor.collapse_shape %gw2 [[0, 1]] : tensor<7x13xf32> into tensor<91xf32>
  %sw = linalg.reduce ins(%gw_flat : tensor<91xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %gb2 = arith.mulf %gb, %gb : tensor<5xf32>
  %sb = linalg.reduce ins(%gb2 : tensor<5xf32>) outs(%sw : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %sq = tensor.extract %sb[] : tensor<f32>
  %norm = math.sqrt %sq : f32
  %den = arith.addf %norm, %tiny : f32
  %ratio = arith.divf %max_norm, %den : f32
  %scale = arith.minimumf %ratio, %one : f32

  %scale_w = tensor.splat %scale : tensor<7x13xf32>
  %cw = arith.mulf %gw, %scale_w : tensor<7x13xf32>
  %dw = arith.mulf %cw, %lr_w : tensor<7x13xf32>
  %w2 = arith.subf %w, %dw : tensor<7x13xf32>
  %scale_b = tensor.splat %scale : tensor<5xf32>
  %cb = arith.mulf %gb, %scale_b : tensor<5xf32>
  %db = arith.mulf %cb, %lr_b : tensor<5xf32>
  %b2 = arith.subf %b, %db : tensor<5xf32>
  return %w2, %b2 : tensor<7x13xf32>, tensor<5xf32>
}
