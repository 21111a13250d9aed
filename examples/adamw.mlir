// AdamW (decoupled weight decay) with bias correction on a weight and a bias,
// with a weight-decay mask: the weight decays, the bias does not.
//   w' = w - lr * (mhat / (sqrt(vhat) + eps) + wd * w)
//   mhat = m' / (1 - b1^t),   vhat = v' / (1 - b2^t)
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %mw: tensor<7x13xf32>,
                %vw: tensor<7x13xf32>, %gw_local: tensor<7x13xf32>,
                %b: tensor<5xf32>, %mb: tensor<5xf32>, %vb: tensor<5xf32>,
                %gb_local: tensor<5xf32>, %t: f32)
    -> (tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>,
        tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
  %one = arith.constant 1.0 : f32
  %b1s = arith.constant 0.9 : f32
  %b2s = arith.constant 0.999 : f32
  %p1 = math.powf %b1s, %t : f32
  %p2 = math.powf %b2s, %t : f32
  %bc1 = arith.subf %one, %p1 : f32
  %bc2 = arith.subf %one, %p2 : f32
  %inv1 = arith.divf %one, %bc1 : f32
  %inv2 = arith.divf %one, %bc2 : f32

  // The weight: decays.
  %inv1w = tensor.splat %inv1 : tensor<7x13xf32>
  %inv2w = tensor.splat %inv2 : tensor<7x13xf32>
  %b1w = arith.constant dense<0.9> : tensor<7x13xf32>
  %c1w = arith.constant dense<0.1> : tensor<7x13xf32>
  %b2w = arith.constant dense<0.999> : tensor<7x13xf32>
  %c2w = arith.constant dense<0.001> : tensor<7x13xf32>
  %epsw = arith.constant dense<1.0e-8> : tensor<7x13xf32>
  %lrw = arith.constant dense<0.001> : tensor<7x13xf32>
  %wdw = arith.constant dense<0.01> : tensor<7x13xf32>
  %gw = zero.all_reduce %gw_local on @dp reduce = mean : tensor<7x13xf32>
  %mw_a = arith.mulf %mw, %b1w : tensor<7x13xf32>
  %mw_b = arith.mulf %gw, %c1w : tensor<7x13xf32>
  %mw2 = arith.addf %mw_a, %mw_b : tensor<7x13xf32>
  %vw_a = arith.mulf %vw, %b2w : tensor<7x13xf32>
  %gw2 = arith.mulf %gw, %gw : tensor<7x13xf32>
  %vw_b = arith.mulf %gw2, %c2w : tensor<7x13xf32>
  %vw2 = arith.addf %vw_a, %vw_b : tensor<7x13xf32>
  %mhw = arith.mulf %mw2, %inv1w : tensor<7x13xf32>
  %vhw = arith.mulf %vw2, %inv2w : tensor<7x13xf32>
  %sw = math.sqrt %vhw : tensor<7x13xf32>
  %denw = arith.addf %sw, %epsw : tensor<7x13xf32>
  %uw = arith.divf %mhw, %denw : tensor<7x13xf32>
  %decay = arith.mulf %w, %wdw : tensor<7x13xf32>
  %uw2 = arith.addf %uw, %decay : tensor<7x13xf32>
  %dw = arith.mulf %uw2, %lrw : tensor<7x13xf32>
  %w2 = arith.subf %w, %dw : tensor<7x13xf32>

  // The bias: masked out of weight decay.
  %inv1b = tensor.splat %inv1 : tensor<5xf32>
  %inv2b = tensor.splat %inv2 : tensor<5xf32>
  %b1b = arith.constant dense<0.9> : tensor<5xf32>
  %c1b = arith.constant dense<0.1> : tensor<5xf32>
  %b2b = arith.constant dense<0.999> : tensor<5xf32>
  %c2b = arith.constant dense<0.001> : tensor<5xf32>
  %epsb = arith.constant dense<1.0e-8> : tensor<5xf32>
  %lrb = arith.constant dense<0.001> : tensor<5xf32>
  %gb = zero.all_reduce %gb_local on @dp reduce = mean : tensor<5xf32>
  %mb_a = arith.mulf %mb, %b1b : tensor<5xf32>
  %mb_b = arith.mulf %gb, %c1b : tensor<5xf32>
  %mb2 = arith.addf %mb_a, %mb_b : tensor<5xf32>
  %vb_a = arith.mulf %vb, %b2b : tensor<5xf32>
  %gb2 = arith.mulf %gb, %gb : tensor<5xf32>
  %vb_b = arith.mulf %gb2, %c2b : tensor<5xf32>
  %vb2 = arith.addf %vb_a, %vb_b : tensor<5xf32>
  %mhb = arith.mulf %mb2, %inv1b : tensor<5xf32>
  %vhb = arith.mulf %vb2, %inv2b : tensor<5xf32>
  %sb = math.sqrt %vhb : tensor<5xf32>
  %denb = arith.addf %sb, %epsb : tensor<5xf32>
  %ub = arith.divf %mhb, %denb : tensor<5xf32>
  %db = arith.mulf %ub, %lrb : tensor<5xf32>
  %b2 = arith.subf %b, %db : tensor<5xf32>
  return %w2, %mw2, %vw2, %b2, %mb2, %vb2
      : tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>,
        tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
}
