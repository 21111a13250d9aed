// SGD with dynamic loss scaling, as in mixed-precision training: backward
// ran on the loss times `scale`, so the step unscales the gradient, checks
// that every element is finite (a full `and` reduction), applies the update
// only when all are, and halves the scale when one is not:
//   ok = all(isfinite(g)),  w' = ok ? w - lr * g / scale : w,
//   scale' = ok ? scale : scale / 2
// zero-shard-weight-update turns the check into a partial `and` on each
// rank's shard plus an all-reduce of the partial results.
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %g_scaled_local: tensor<7x13xf32>,
                %scale: f32) -> (tensor<7x13xf32>, f32) {
  %true = arith.constant true
  %one = arith.constant 1.0 : f32
  %half = arith.constant 0.5 : f32
  %lr = arith.constant dense<0.1> : tensor<7x13xf32>
  %g = zero.all_reduce %g_scaled_local on @dp reduce = sum : tensor<7x13xf32>

  %finite = math.isfinite %g : tensor<7x13xf32>
  %e = tensor.empty() : tensor<i1>
  %init = linalg.fill ins(%true : i1) outs(%e : tensor<i1>) -> tensor<i1>
  %all = linalg.reduce ins(%finite : tensor<7x13xi1>) outs(%init : tensor<i1>) dimensions = [0, 1]
    (%x: i1, %acc: i1) {
      %both = arith.andi %x, %acc : i1
      linalg.yield %both : i1
    }
  %ok = tensor.extract %all[] : tensor<i1>

  %inv = arith.divf %one, %scale : f32
  %inv_t = tensor.splat %inv : tensor<7x13xf32>
  %unscaled = arith.mulf %g, %inv_t : tensor<7x13xf32>
  %d = arith.mulf %unscaled, %lr : tensor<7x13xf32>
  %updated = arith.subf %w, %d : tensor<7x13xf32>
  %ok_t = tensor.splat %ok : tensor<7x13xi1>
  %w2 = arith.select %ok_t, %updated, %w : tensor<7x13xi1>, tensor<7x13xf32>
  %halved = arith.mulf %scale, %half : f32
  %scale2 = arith.select %ok, %scale, %halved : f32
  return %w2, %scale2 : tensor<7x13xf32>, f32
}
