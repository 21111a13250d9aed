// Mixed-precision training loop: a two-layer MLP whose forward and backward
// passes run on bf16 copies of fp32 master weights (matmuls take bf16 and
// accumulate in f32), for 10 steps of momentum SGD on the gradients averaged
// across ranks. Only bf16 roundings of the weights reach the forward pass, so
// zero-defer-all-gather gathers the new weights in bf16: half the bytes of
// the fp32 gather, and the same results bit for bit.
zero.mesh @dp(shape = [4])

func.func @train(%w1: tensor<6x20xf32>, %w2: tensor<20x3xf32>,
                 %m1: tensor<6x20xf32>, %m2: tensor<20x3xf32>,
                 %x: tensor<8x6xf32>, %w_star: tensor<6x3xf32>)
    -> (tensor<6x20xf32>, tensor<20x3xf32>, tensor<6x20xf32>,
        tensor<20x3xf32>, tensor<10xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c10 = arith.constant 10 : index
  %zero = arith.constant 0.0 : f32
  %n = arith.constant 24.0 : f32
  %zeros_h = arith.constant dense<0.0> : tensor<8x20xf32>
  %grad_scale = arith.constant dense<0.083333336> : tensor<8x3xf32>
  %beta1 = arith.constant dense<0.9> : tensor<6x20xf32>
  %beta2 = arith.constant dense<0.9> : tensor<20x3xf32>
  %lr1 = arith.constant dense<0.05> : tensor<6x20xf32>
  %lr2 = arith.constant dense<0.05> : tensor<20x3xf32>

  %xb = arith.truncf %x : tensor<8x6xf32> to tensor<8x6xbf16>
  %e_y = tensor.empty() : tensor<8x3xf32>
  %f_y = linalg.fill ins(%zero : f32) outs(%e_y : tensor<8x3xf32>) -> tensor<8x3xf32>
  %y = linalg.matmul ins(%x, %w_star : tensor<8x6xf32>, tensor<6x3xf32>)
                     outs(%f_y : tensor<8x3xf32>) -> tensor<8x3xf32>
  %e_l = tensor.empty() : tensor<10xf32>
  %losses0 = linalg.fill ins(%zero : f32) outs(%e_l : tensor<10xf32>) -> tensor<10xf32>

  %r:5 = scf.for %i = %c0 to %c10 step %c1
      iter_args(%a = %w1, %b = %w2, %ma = %m1, %mb = %m2, %losses = %losses0)
      -> (tensor<6x20xf32>, tensor<20x3xf32>, tensor<6x20xf32>,
          tensor<20x3xf32>, tensor<10xf32>) {
    // The model's weights: bf16 roundings of the master weights.
    %ab = arith.truncf %a : tensor<6x20xf32> to tensor<6x20xbf16>
    %bb = arith.truncf %b : tensor<20x3xf32> to tensor<20x3xbf16>

    // Forward: h = relu(x a), p = h b.
    %e_h = tensor.empty() : tensor<8x20xf32>
    %f_h = linalg.fill ins(%zero : f32) outs(%e_h : tensor<8x20xf32>) -> tensor<8x20xf32>
    %h0 = linalg.matmul ins(%xb, %ab : tensor<8x6xbf16>, tensor<6x20xbf16>)
                        outs(%f_h : tensor<8x20xf32>) -> tensor<8x20xf32>
    %h = arith.maximumf %h0, %zeros_h : tensor<8x20xf32>
    %hb = arith.truncf %h : tensor<8x20xf32> to tensor<8x20xbf16>
    %p = linalg.matmul ins(%hb, %bb : tensor<8x20xbf16>, tensor<20x3xbf16>)
                       outs(%f_y : tensor<8x3xf32>) -> tensor<8x3xf32>

    // Loss: mean of (p - y)^2 over all ranks' batches.
    %diff = arith.subf %p, %y : tensor<8x3xf32>
    %sq = arith.mulf %diff, %diff : tensor<8x3xf32>
    %flat = tensor.collapse_shape %sq [[0, 1]] : tensor<8x3xf32> into tensor<24xf32>
    %e_s = tensor.empty() : tensor<f32>
    %f_s = linalg.fill ins(%zero : f32) outs(%e_s : tensor<f32>) -> tensor<f32>
    %sum = linalg.reduce ins(%flat : tensor<24xf32>) outs(%f_s : tensor<f32>)
        dimensions = [0]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    %global = zero.all_reduce %sum on @dp reduce = mean : tensor<f32>
    %total = tensor.extract %global[] : tensor<f32>
    %loss = arith.divf %total, %n : f32
    %losses2 = tensor.insert %loss into %losses[%i] : tensor<10xf32>

    // Backward, in bf16 inputs with f32 accumulation.
    %dp = arith.mulf %diff, %grad_scale : tensor<8x3xf32>
    %dpb = arith.truncf %dp : tensor<8x3xf32> to tensor<8x3xbf16>
    %e_ht = tensor.empty() : tensor<20x8xbf16>
    %ht = linalg.transpose ins(%hb : tensor<8x20xbf16>)
                           outs(%e_ht : tensor<20x8xbf16>) permutation = [1, 0]
    %e_db = tensor.empty() : tensor<20x3xf32>
    %f_db = linalg.fill ins(%zero : f32) outs(%e_db : tensor<20x3xf32>) -> tensor<20x3xf32>
    %db_local = linalg.matmul ins(%ht, %dpb : tensor<20x8xbf16>, tensor<8x3xbf16>)
                              outs(%f_db : tensor<20x3xf32>) -> tensor<20x3xf32>
    %e_bt = tensor.empty() : tensor<3x20xbf16>
    %bt = linalg.transpose ins(%bb : tensor<20x3xbf16>)
                           outs(%e_bt : tensor<3x20xbf16>) permutation = [1, 0]
    %dh0 = linalg.matmul ins(%dpb, %bt : tensor<8x3xbf16>, tensor<3x20xbf16>)
                         outs(%f_h : tensor<8x20xf32>) -> tensor<8x20xf32>
    %active = arith.cmpf ogt, %h0, %zeros_h : tensor<8x20xf32>
    %dh = arith.select %active, %dh0, %zeros_h : tensor<8x20xi1>, tensor<8x20xf32>
    %dhb = arith.truncf %dh : tensor<8x20xf32> to tensor<8x20xbf16>
    %e_xt = tensor.empty() : tensor<6x8xbf16>
    %xt = linalg.transpose ins(%xb : tensor<8x6xbf16>)
                           outs(%e_xt : tensor<6x8xbf16>) permutation = [1, 0]
    %e_da = tensor.empty() : tensor<6x20xf32>
    %f_da = linalg.fill ins(%zero : f32) outs(%e_da : tensor<6x20xf32>) -> tensor<6x20xf32>
    %da_local = linalg.matmul ins(%xt, %dhb : tensor<6x8xbf16>, tensor<8x20xbf16>)
                              outs(%f_da : tensor<6x20xf32>) -> tensor<6x20xf32>

    // Momentum SGD on the fp32 master weights.
    %da = zero.all_reduce %da_local on @dp reduce = mean : tensor<6x20xf32>
    %db = zero.all_reduce %db_local on @dp reduce = mean : tensor<20x3xf32>
    %ma_decay = arith.mulf %ma, %beta1 : tensor<6x20xf32>
    %ma2 = arith.addf %ma_decay, %da : tensor<6x20xf32>
    %ua = arith.mulf %ma2, %lr1 : tensor<6x20xf32>
    %a2 = arith.subf %a, %ua : tensor<6x20xf32>
    %mb_decay = arith.mulf %mb, %beta2 : tensor<20x3xf32>
    %mb2 = arith.addf %mb_decay, %db : tensor<20x3xf32>
    %ub = arith.mulf %mb2, %lr2 : tensor<20x3xf32>
    %b2 = arith.subf %b, %ub : tensor<20x3xf32>
    scf.yield %a2, %b2, %ma2, %mb2, %losses2
        : tensor<6x20xf32>, tensor<20x3xf32>, tensor<6x20xf32>,
          tensor<20x3xf32>, tensor<10xf32>
  }
  return %r#0, %r#1, %r#2, %r#3, %r#4
      : tensor<6x20xf32>, tensor<20x3xf32>, tensor<6x20xf32>,
        tensor<20x3xf32>, tensor<10xf32>
}
