// LAMB (layer-wise adaptive moments) for one weight, with bias correction:
//   m' = b1 m + (1 - b1) g,  v' = b2 v + (1 - b2) g^2
//   r  = (m' / (1 - b1^t)) / (sqrt(v' / (1 - b2^t)) + eps) + wd w
//   w' = w - lr * (||w|| / ||r||) * r
// The trust ratio needs two full norms; zero-shard-weight-update turns each
// into a partial sum of squares on the rank's shard plus an all-reduce.
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %m: tensor<7x13xf32>,
                %v: tensor<7x13xf32>, %g_local: tensor<7x13xf32>, %t: f32)
    -> (tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %b1s = arith.constant 0.9 : f32
  %b2s = arith.constant 0.999 : f32
  %lr = arith.constant 0.01 : f32
  %p1 = math.powf %b1s, %t : f32
  %p2 = math.powf %b2s, %t : f32
  %bc1 = arith.subf %one, %p1 : f32
  %bc2 = arith.subf %one, %p2 : f32
  %inv1 = arith.divf %one, %bc1 : f32
  %inv2 = arith.divf %one, %bc2 : f32
  %inv1t = tensor.splat %inv1 : tensor<7x13xf32>
  %inv2t = tensor.splat %inv2 : tensor<7x13xf32>
  %b1 = arith.constant dense<0.9> : tensor<7x13xf32>
  %c1 = arith.constant dense<0.1> : tensor<7x13xf32>
  %b2 = arith.constant dense<0.999> : tensor<7x13xf32>
  %c2 = arith.constant dense<0.001> : tensor<7x13xf32>
  %eps = arith.constant dense<1.0e-6> : tensor<7x13xf32>
  %wd = arith.constant dense<0.01> : tensor<7x13xf32>

  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<7x13xf32>
  %m_a = arith.mulf %m, %b1 : tensor<7x13xf32>
  %m_b = arith.mulf %g, %c1 : tensor<7x13xf32>
  %m2 = arith.addf %m_a, %m_b : tensor<7x13xf32>
  %v_a = arith.mulf %v, %b2 : tensor<7x13xf32>
  %gg = arith.mulf %g, %g : tensor<7x13xf32>
  %v_b = arith.mulf %gg, %c2 : tensor<7x13xf32>
  %v2 = arith.addf %v_a, %v_b : tensor<7x13xf32>
  %mh = arith.mulf %m2, %inv1t : tensor<7x13xf32>
  %vh = arith.mulf %v2, %inv2t : tensor<7x13xf32>
  %root = math.sqrt %vh : tensor<7x13xf32>
  %den = arith.addf %root, %eps : tensor<7x13xf32>
  %adam = arith.divf %mh, %den : tensor<7x13xf32>
  %decay = arith.mulf %w, %wd : tensor<7x13xf32>
  %r = arith.addf %adam, %decay : tensor<7x13xf32>

  // Trust ratio ||w|| / ||r||.
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %ww = arith.mulf %w, %w : tensor<7x13xf32>
  %ww_flat = tensor.collapse_shape %ww [[0, 1]] : tensor<7x13xf32> into tensor<91xf32>
  %sw = linalg.reduce ins(%ww_flat : tensor<91xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %rr = arith.mulf %r, %r : tensor<7x13xf32>
  %rr_flat = tensor.collapse_shape %rr [[0, 1]] : tensor<7x13xf32> into tensor<91xf32>
  %sr = linalg.reduce ins(%rr_flat : tensor<91xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%x: f32, %acc: f32) {
      %s = arith.addf %x, %acc : f32
      linalg.yield %s : f32
    }
  %sw_s = tensor.extract %sw[] : tensor<f32>
  %sr_s = tensor.extract %sr[] : tensor<f32>
  %nw = math.sqrt %sw_s : f32
  %nr = math.sqrt %sr_s : f32
  %trust = arith.divf %nw, %nr : f32
  %step = arith.mulf %lr, %trust : f32
  %step_t = tensor.splat %step : tensor<7x13xf32>
  %d = arith.mulf %r, %step_t : tensor<7x13xf32>
  %w2 = arith.subf %w, %d : tensor<7x13xf32>
  return %w2, %m2, %v2 : tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>
}
