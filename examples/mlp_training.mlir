// A two-layer MLP trained for 20 steps of SGD inside one scf.for: forward and
// backward with linalg.matmul on each rank's own batch (x is per-rank data;
// the targets are x @ w_star), gradients averaged across ranks with
// zero.all_reduce, and each step's global mean loss recorded in %losses.
zero.mesh @dp(shape = [4])

func.func @train(%w1: tensor<4x16xf32>, %w2: tensor<16x2xf32>,
                 %x: tensor<8x4xf32>, %w_star: tensor<4x2xf32>)
    -> (tensor<4x16xf32>, tensor<16x2xf32>, tensor<20xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c20 = arith.constant 20 : index
  %zero = arith.constant 0.0 : f32
  %sixteen = arith.constant 16.0 : f32
  %zeros_h = arith.constant dense<0.0> : tensor<8x16xf32>
  %grad_scale = arith.constant dense<0.125> : tensor<8x2xf32>
  %lr1 = arith.constant dense<0.1> : tensor<4x16xf32>
  %lr2 = arith.constant dense<0.1> : tensor<16x2xf32>

  %e_y = tensor.empty() : tensor<8x2xf32>
  %f_y = linalg.fill ins(%zero : f32) outs(%e_y : tensor<8x2xf32>) -> tensor<8x2xf32>
  %y = linalg.matmul ins(%x, %w_star : tensor<8x4xf32>, tensor<4x2xf32>)
                     outs(%f_y : tensor<8x2xf32>) -> tensor<8x2xf32>
  %e_l = tensor.empty() : tensor<20xf32>
  %losses0 = linalg.fill ins(%zero : f32) outs(%e_l : tensor<20xf32>) -> tensor<20xf32>

  %r:3 = scf.for %i = %c0 to %c20 step %c1
      iter_args(%a = %w1, %b = %w2, %losses = %losses0)
      -> (tensor<4x16xf32>, tensor<16x2xf32>, tensor<20xf32>) {
    // Forward: h = relu(x a), p = h b.
    %e_h = tensor.empty() : tensor<8x16xf32>
    %f_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h0 = linalg.matmul ins(%x, %a : tensor<8x4xf32>, tensor<4x16xf32>)
                        outs(%f_h : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h = arith.maximumf %h0, %zeros_h : tensor<8x16xf32>
    %e_p = tensor.empty() : tensor<8x2xf32>
    %f_p = linalg.fill ins(%zero : f32) outs(%e_p : tensor<8x2xf32>) -> tensor<8x2xf32>
    %p = linalg.matmul ins(%h, %b : tensor<8x16xf32>, tensor<16x2xf32>)
                       outs(%f_p : tensor<8x2xf32>) -> tensor<8x2xf32>

    // Loss: mean of (p - y)^2 here, then across ranks.
    %diff = arith.subf %p, %y : tensor<8x2xf32>
    %sq = arith.mulf %diff, %diff : tensor<8x2xf32>
    %flat = tensor.collapse_shape %sq [[0, 1]] : tensor<8x2xf32> into tensor<16xf32>
    %e_s = tensor.empty() : tensor<f32>
    %f_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%flat : tensor<16xf32>) outs(%f_s : tensor<f32>)
        dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    %global = zero.all_reduce %sum on @dp reduce = mean : tensor<f32>
    %total = tensor.extract %global[] : tensor<f32>
    %loss = arith.divf %total, %sixteen : f32
    %losses2 = tensor.insert %loss into %losses[%i] : tensor<20xf32>

    // Backward: dp = 2 (p - y) / 16; db = h^T dp; dh = dp b^T where h > 0;
    // da = x^T dh.
    %dp = arith.mulf %diff, %grad_scale : tensor<8x2xf32>
    %e_ht = tensor.empty() : tensor<16x8xf32>
    %ht = linalg.transpose ins(%h : tensor<8x16xf32>)
                           outs(%e_ht : tensor<16x8xf32>) permutation = [1, 0]
    %e_db = tensor.empty() : tensor<16x2xf32>
    %f_db = linalg.fill ins(%zero : f32) outs(%e_db : tensor<16x2xf32>) -> tensor<16x2xf32>
    %db_local = linalg.matmul ins(%ht, %dp : tensor<16x8xf32>, tensor<8x2xf32>)
                              outs(%f_db : tensor<16x2xf32>) -> tensor<16x2xf32>
    %e_bt = tensor.empty() : tensor<2x16xf32>
    %bt = linalg.transpose ins(%b : tensor<16x2xf32>)
                           outs(%e_bt : tensor<2x16xf32>) permutation = [1, 0]
    %dh0 = linalg.matmul ins(%dp, %bt : tensor<8x2xf32>, tensor<2x16xf32>)
                         outs(%f_h : tensor<8x16xf32>) -> tensor<8x16xf32>
    %active = arith.cmpf ogt, %h0, %zeros_h : tensor<8x16xf32>
    %dh = arith.select %active, %dh0, %zeros_h : tensor<8x16xi1>, tensor<8x16xf32>
    %e_xt = tensor.empty() : tensor<4x8xf32>
    %xt = linalg.transpose ins(%x : tensor<8x4xf32>)
                           outs(%e_xt : tensor<4x8xf32>) permutation = [1, 0]
    %e_da = tensor.empty() : tensor<4x16xf32>
    %f_da = linalg.fill ins(%zero : f32) outs(%e_da : tensor<4x16xf32>) -> tensor<4x16xf32>
    %da_local = linalg.matmul ins(%xt, %dh : tensor<4x8xf32>, tensor<8x16xf32>)
                              outs(%f_da : tensor<4x16xf32>) -> tensor<4x16xf32>

    // SGD on the averaged gradients.
    %da = zero.all_reduce %da_local on @dp reduce = mean : tensor<4x16xf32>
    %db = zero.all_reduce %db_local on @dp reduce = mean : tensor<16x2xf32>
    %ua = arith.mulf %da, %lr1 : tensor<4x16xf32>
    %a2 = arith.subf %a, %ua : tensor<4x16xf32>
    %ub = arith.mulf %db, %lr2 : tensor<16x2xf32>
    %b2 = arith.subf %b, %ub : tensor<16x2xf32>
    scf.yield %a2, %b2, %losses2 : tensor<4x16xf32>, tensor<16x2xf32>, tensor<20xf32>
  }
  return %r#0, %r#1, %r#2 : tensor<4x16xf32>, tensor<16x2xf32>, tensor<20xf32>
}
