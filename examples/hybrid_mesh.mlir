// Hybrid data parallelism on a 2x4 mesh: gradients are averaged inside each
// group of 4 (mesh axis 1, say the GPUs of a node) and not across axis 0.
// Sharding follows the all-reduce's group: 1/4 per rank, replicated twice.
zero.mesh @nodes(shape = [2, 4])

func.func @step(%w: tensor<7x13xf32>, %m: tensor<7x13xf32>,
                %g_local: tensor<7x13xf32>)
    -> (tensor<7x13xf32>, tensor<7x13xf32>) {
  %beta = arith.constant dense<0.9> : tensor<7x13xf32>
  %lr = arith.constant dense<0.01> : tensor<7x13xf32>
  %g = zero.all_reduce %g_local on @nodes axes = [1] reduce = mean
      : tensor<7x13xf32>
  %m_decay = arith.mulf %m, %beta : tensor<7x13xf32>
  %m2 = arith.addf %m_decay, %g : tensor<7x13xf32>
  %d = arith.mulf %m2, %lr : tensor<7x13xf32>
  %w2 = arith.subf %w, %d : tensor<7x13xf32>
  return %w2, %m2 : tensor<7x13xf32>, tensor<7x13xf32>
}
