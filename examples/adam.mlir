// Adam with bias correction, for step %t (a scalar: 1, 2, ...):
//   m' = b1 m + (1 - b1) g,   v' = b2 v + (1 - b2) g^2
//   w' = w - lr * sqrt(1 - b2^t) / (1 - b1^t) * m' / (sqrt(v') + eps)
// The step size is computed once as a scalar and broadcast with tensor.splat.
zero.mesh @dp(shape = [4])

func.func @step(%w: tensor<7x13xf32>, %m: tensor<7x13xf32>,
                %v: tensor<7x13xf32>, %g_local: tensor<7x13xf32>, %t: f32)
    -> (tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>) {
  %one = arith.constant 1.0 : f32
  %b1s = arith.constant 0.9 : f32
  %b2s = arith.constant 0.999 : f32
  %lrs = arith.constant 0.001 : f32
  %p1 = math.powf %b1s, %t : f32
  %p2 = math.powf %b2s, %t : f32
  %bc1 = arith.subf %one, %p1 : f32
  %bc2 = arith.subf %one, %p2 : f32
  %sq = math.sqrt %bc2 : f32
  %ratio = arith.divf %sq, %bc1 : f32
  %step_size = arith.mulf %lrs, %ratio : f32
  %alpha = tensor.splat %step_size : tensor<7x13xf32>

  %b1 = arith.constant dense<0.9> : tensor<7x13xf32>
  %c1 = arith.constant dense<0.1> : tensor<7x13xf32>
  %b2 = arith.constant dense<0.999> : tensor<7x13xf32>
  %c2 = arith.constant dense<0.001> : tensor<7x13xf32>
  %eps = arith.constant dense<1.0e-8> : tensor<7x13xf32>

  %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<7x13xf32>
  %m_a = arith.mulf %m, %b1 : tensor<7x13xf32>
  %m_b = arith.mulf %g, %c1 : tensor<7x13xf32>
  %m2 = arith.addf %m_a, %m_b : tensor<7x13xf32>
  %v_a = arith.mulf %v, %b2 : tensor<7x13xf32>
  %gg = arith.mulf %g, %g : tensor<7x13xf32>
  %v_b = arith.mulf %gg, %c2 : tensor<7x13xf32>
  %v2 = arith.addf %v_a, %v_b : tensor<7x13xf32>
  %den0 = math.sqrt %v2 : tensor<7x13xf32>
  %den = arith.addf %den0, %eps : tensor<7x13xf32>
  %u = arith.divf %m2, %den : tensor<7x13xf32>
  %d = arith.mulf %u, %alpha : tensor<7x13xf32>
  %w2 = arith.subf %w, %d : tensor<7x13xf32>
  return %w2, %m2, %v2 : tensor<7x13xf32>, tensor<7x13xf32>, tensor<7x13xf32>
}
