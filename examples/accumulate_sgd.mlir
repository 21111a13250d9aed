// SGD with gradient accumulation: a step sees 4 micro-batches. Each
// micro-batch's local gradients are all-reduced (mean over the ranks) and
// summed in the loop; the sum, scaled by lr / 4, updates the 7x13 weight and
// the 5-element bias. Sharded as written, that is one reduce-scatter per
// micro-batch; zero-weight-update-sharding{accumulate-locally} sums the
// local gradients and reduces once per step (zero-accumulate-locally).
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %b: tensor<5xf32>,
                %gw_micro: tensor<4x7x13xf32>, %gb_micro: tensor<4x5xf32>)
    -> (tensor<7x13xf32>, tensor<5xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %zw = arith.constant dense<0.0> : tensor<7x13xf32>
  %zb = arith.constant dense<0.0> : tensor<5xf32>
  %sums:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%aw = %zw, %ab = %zb)
      -> (tensor<7x13xf32>, tensor<5xf32>) {
    %gw_local = tensor.extract_slice %gw_micro[%i, 0, 0] [1, 7, 13] [1, 1, 1]
        : tensor<4x7x13xf32> to tensor<7x13xf32>
    %gb_local = tensor.extract_slice %gb_micro[%i, 0] [1, 5] [1, 1]
        : tensor<4x5xf32> to tensor<5xf32>
    %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<7x13xf32>
    %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>
    %aw2 = arith.addf %aw, %gw : tensor<7x13xf32>
    %ab2 = arith.addf %ab, %gb : tensor<5xf32>
    scf.yield %aw2, %ab2 : tensor<7x13xf32>, tensor<5xf32>
  }
  %lr_w = arith.constant dense<0.025> : tensor<7x13xf32>
  %lr_b = arith.constant dense<0.025> : tensor<5xf32>
  %dw = arith.mulf %sums#0, %lr_w : tensor<7x13xf32>
  %w2 = arith.subf %w, %dw : tensor<7x13xf32>
  %db = arith.mulf %sums#1, %lr_b : tensor<5xf32>
  %b2 = arith.subf %b, %db : tensor<5xf32>
  return %w2, %b2 : tensor<7x13xf32>, tensor<5xf32>
}
