// A training loop of 5 steps of momentum SGD. Each step's local gradient
// comes from the current weight and this rank's data (g = w * x, a stand-in
// for a backward pass), so the weight is needed whole every step; the
// momentum only feeds the update, so zero-shard-weight-update keeps it as a
// loop-carried shard and gathers it once, after the loop.
zero.mesh @dp(shape = [4])

func.func @train(%w0: tensor<7x13xf32>, %m0: tensor<7x13xf32>,
                 %x: tensor<7x13xf32>)
    -> (tensor<7x13xf32>, tensor<7x13xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c5 = arith.constant 5 : index
  %beta = arith.constant dense<0.9> : tensor<7x13xf32>
  %lr = arith.constant dense<0.05> : tensor<7x13xf32>
  %r:2 = scf.for %i = %c0 to %c5 step %c1 iter_args(%w = %w0, %m = %m0)
      -> (tensor<7x13xf32>, tensor<7x13xf32>) {
    %g_local = arith.mulf %w, %x : tensor<7x13xf32>
    %g = zero.all_reduce %g_local on @dp reduce = mean : tensor<7x13xf32>
    %m_decay = arith.mulf %m, %beta : tensor<7x13xf32>
    %m2 = arith.addf %m_decay, %g : tensor<7x13xf32>
    %d = arith.mulf %m2, %lr : tensor<7x13xf32>
    %w2 = arith.subf %w, %d : tensor<7x13xf32>
    scf.yield %w2, %m2 : tensor<7x13xf32>, tensor<7x13xf32>
  }
  return %r#0, %r#1 : tensor<7x13xf32>, tensor<7x13xf32>
}
